// posvec._posvec's binding of fastText models (subwords.hpp): a `.bin` read into a
// SubwordModel, its composed vocabulary as Embeddings (the Python KeyedVectors'
// matrix), any word's vector from its character n-grams, and the input matrix as
// a read-only NumPy view (no copy).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

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
      .def_property_readonly("words", &SubwordModel::words)
      .def_property_readonly("counts", &SubwordModel::counts)
      .def_property_readonly("dim", &SubwordModel::dim)
      .def_property_readonly("minn", &SubwordModel::minn)
      .def_property_readonly("maxn", &SubwordModel::maxn)
      .def_property_readonly("bucket", &SubwordModel::bucket)
      // The vocabulary's vectors as fastText composes them; a new matrix, moved
      // into the Embeddings whose NumPy view the KeyedVectors hand out.
      .def(
          "word_vectors",
          [](const SubwordModel& s) {
            py::gil_scoped_release nogil;
            return std::make_shared<Embeddings>(s.wordVectors());
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
