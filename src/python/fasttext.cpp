// posvec._posvec's binding of fastText models (subwords.hpp): a `.bin` read into a
// SubwordModel, its composed vocabulary as Embeddings (the Python KeyedVectors'
// matrix), any word's vector from its character n-grams, and the input matrix as
// a read-only NumPy view (no copy).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "posvec/error.hpp"
#include "posvec/subwords.hpp"

namespace py = pybind11;

namespace posvec::python {

namespace {

// A read-only NumPy view of rows [first, first + rows) of `m`, keeping `owner` alive.
py::array_t<float> rowsView(const MatrixF& m, Eigen::Index first, Eigen::Index rows,
                            py::handle owner) {
  py::array_t<float> a({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(m.cols())},
                       m.data() + first * m.cols(), owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

// fastText stores a word's bytes as its corpus had them, UTF-8 or not, and Python
// keys must be str: a word that is not UTF-8 gets gensim's key for it, its bytes
// decoded with errors="backslashreplace" (b"caf\xe9" -> "caf\\xe9"), so the
// vocabulary reads as gensim's load_facebook_model reads it. The model keeps the
// bytes: its vectors and n-grams, and the file save() writes, are fastText's.
struct PythonWords {
  std::vector<std::string> words;     // the keys, in row order
  std::vector<std::size_t> replaced;  // rows whose key is not their bytes
};

// Called with the GIL held (Python's codec decides what is UTF-8, as for every str).
PythonWords pythonWords(const std::vector<std::string>& words) {
  PythonWords out;
  out.words.reserve(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const bool ascii = std::all_of(w.begin(), w.end(), [](char c) { return (c & 0x80) == 0; });
    if (!ascii) {
      const auto n = static_cast<py::ssize_t>(w.size());
      if (PyObject* strict = PyUnicode_DecodeUTF8(w.data(), n, "strict")) {
        Py_DECREF(strict);
      } else {
        PyErr_Clear();
        py::str key =
            py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(w.data(), n, "backslashreplace"));
        if (!key) throw py::error_already_set();
        out.words.push_back(key.cast<std::string>());
        out.replaced.push_back(i);
        continue;
      }
    }
    out.words.push_back(w);
  }
  if (!out.replaced.empty()) {
    // A key made so may be another word's bytes ("caf\\xe9" itself): one key, two rows.
    std::unordered_map<std::string_view, std::size_t> index;
    for (std::size_t i = 0; i < words.size(); ++i) index.emplace(words[i], i);
    for (const std::size_t i : out.replaced)
      if (const auto it = index.find(out.words[i]); it != index.end())
        throw FormatError(
            "word " + std::to_string(i) + " is not UTF-8 and reads as '" + out.words[i] +
            "' (errors='backslashreplace', as gensim reads it), the same key as word " +
            std::to_string(it->second) +
            ": train it again on the corpus converted to UTF-8 (e.g. by iconv)");
  }
  return out;
}

}  // namespace

void bindFastText(py::module_& m) {
  py::class_<SubwordModel, std::shared_ptr<SubwordModel>>(m, "SubwordModel")
      .def_static(
          "load",
          [](const std::string& path) {
            py::gil_scoped_release nogil;
            return std::make_shared<SubwordModel>(SubwordModel::load(path));
          },
          py::arg("path"))
      .def_static("is_fasttext_file", &SubwordModel::isFastTextFile, py::arg("path"))
      .def_property_readonly("words",
                             [](const SubwordModel& s) { return pythonWords(s.words()).words; })
      // The words that are not UTF-8: (row, their bytes, the key they read as).
      .def_property_readonly(
          "undecodable",
          [](const SubwordModel& s) {
            const PythonWords keys = pythonWords(s.words());
            py::list out;
            for (const std::size_t i : keys.replaced)
              out.append(py::make_tuple(i, py::bytes(s.words()[i]), keys.words[i]));
            return out;
          })
      .def_property_readonly("counts", &SubwordModel::counts)
      .def_property_readonly("dim", &SubwordModel::dim)
      .def_property_readonly("minn", &SubwordModel::minn)
      .def_property_readonly("maxn", &SubwordModel::maxn)
      .def_property_readonly("bucket", &SubwordModel::bucket)
      // The vocabulary's vectors as fastText composes them; a new matrix, moved
      // into the Embeddings whose NumPy view the KeyedVectors hand out.
      .def("word_vectors",
           [](const SubwordModel& s) {
             PythonWords keys = pythonWords(s.words());
             py::gil_scoped_release nogil;
             Embeddings e = s.wordVectors();
             if (keys.replaced.empty()) return std::make_shared<Embeddings>(std::move(e));
             // Rare (a corpus that was not UTF-8): the matrix is copied under the keys.
             return std::make_shared<Embeddings>(std::move(keys.words), e.vectors(), e.counts());
           })
      .def(
          "vectors",
          [](const SubwordModel& s, const std::vector<std::string>& words) {
            py::array_t<float> out({static_cast<py::ssize_t>(words.size()),
                                    static_cast<py::ssize_t>(s.dim())});
            float* p = out.mutable_data();
            {
              py::gil_scoped_release nogil;
              for (std::size_t i = 0; i < words.size(); ++i) {
                const Eigen::RowVectorXf v = s.vector(words[i]);
                std::memcpy(p + i * s.dim(), v.data(), sizeof(float) * s.dim());
              }
            }
            return out;
          },
          py::arg("words"))
      .def(
          "save",
          [](const SubwordModel& s, const std::string& path) {
            py::gil_scoped_release nogil;
            s.save(path);
          },
          py::arg("path"))
      // The training settings the file records, with gensim's names.
      .def_property_readonly("args",
                             [](const SubwordModel& s) {
                               const FastTextArgs& a = s.args();
                               py::dict d;
                               d["window"] = a.ws;
                               d["epochs"] = a.epoch;
                               d["min_count"] = a.minCount;
                               d["negative"] = a.neg;
                               d["hs"] = a.loss == FastTextLoss::HierarchicalSoftmax ? 1 : 0;
                               d["sg"] = a.model == FastTextModel::SkipGram ? 1 : 0;
                               d["sample"] = a.t;
                               return d;
                             })
      .def("rows", &SubwordModel::rows, py::arg("word"))
      .def("find",
           [](const SubwordModel& s, const std::string& w) -> std::optional<WordId> {
             return s.find(w);
           })
      // The input matrix's word rows and bucket rows (gensim's vectors_vocab and
      // vectors_ngrams), read-only views of the model's memory.
      .def_property_readonly("vectors_vocab",
                             [](py::object self) {
                               const auto& s = self.cast<const SubwordModel&>();
                               return rowsView(s.input(), 0,
                                               static_cast<Eigen::Index>(s.words().size()), self);
                             })
      .def_property_readonly("vectors_ngrams", [](py::object self) {
        const auto& s = self.cast<const SubwordModel&>();
        const auto n = static_cast<Eigen::Index>(s.words().size());
        return rowsView(s.input(), n, s.input().rows() - n, self);
      });
  m.def("character_ngrams", &characterNgrams, py::arg("word"), py::arg("minn"), py::arg("maxn"));
  m.def("subword_hash", [](const py::bytes& b) { return subwordHash(std::string(b)); },
        py::arg("data"));
}

}  // namespace posvec::python
