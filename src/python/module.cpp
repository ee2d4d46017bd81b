// posvec._posvec: the compiled half of the Python package. It wraps the library
// with as little policy as possible (the gensim-shaped API lives in the pure-Python
// package beside it): matrices cross as NumPy arrays over the C++ memory, long
// calls release the GIL, and every posvec::Error becomes a Python exception.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "posvec/posvec.hpp"

namespace py = pybind11;

namespace posvec::python {
namespace {

// ---- errors ------------------------------------------------------------------

void translateErrors(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const IoError& e) {
    // The library's messages say which case it is; Python code tests the type.
    const std::string msg = e.what();
    if (msg.find("no such file") != std::string::npos)
      PyErr_SetString(PyExc_FileNotFoundError, e.what());
    else if (msg.find("it is a directory") != std::string::npos)
      PyErr_SetString(PyExc_IsADirectoryError, e.what());
    else
      PyErr_SetString(PyExc_OSError, e.what());
  } catch (const Error& e) {
    // Format, input and configuration errors: the value handed in is unusable.
    PyErr_SetString(PyExc_ValueError, e.what());
  }
}

// ---- arrays --------------------------------------------------------------------

// A NumPy view of `data` that keeps `owner` alive (no copy).
template <typename T>
py::array_t<T> view(const T* data, std::vector<py::ssize_t> shape, py::handle owner,
                    bool writeable) {
  py::array_t<T> a(shape, data, owner);
  if (!writeable)
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

// Moves a heap matrix into a capsule and returns a NumPy array over it.
template <typename M>
py::array_t<typename M::Scalar> adopt(M&& m, std::vector<py::ssize_t> shape) {
  auto* heap = new M(std::move(m));
  py::capsule owner(heap, [](void* p) { delete static_cast<M*>(p); });
  return py::array_t<typename M::Scalar>(shape, heap->data(), owner);
}

MatrixF matrixFromArray(const py::array_t<float, py::array::c_style | py::array::forcecast>& a) {
  if (a.ndim() != 2) throw InputError("expected a 2-D array (words x dimensions)");
  MatrixF m(a.shape(0), a.shape(1));
  if (m.size()) std::memcpy(m.data(), a.data(), sizeof(float) * static_cast<std::size_t>(m.size()));
  return m;
}

// ---- training ------------------------------------------------------------------

// Sentences from any Python iterable of token lists, read once (GIL held only
// while Python code runs).
CorpusSource::Generator generatorFrom(py::object iterable) {
  return [iterable](const SentenceSink& sink) {
    py::gil_scoped_acquire gil;
    Sentence sentence;
    for (py::handle item : iterable) {
      if (py::isinstance<py::str>(item))
        throw py::type_error(
            "sentences must be lists of tokens, not strings (use posvec.tokenize for raw text)");
      sentence.clear();
      for (py::handle token : item) sentence.push_back(token.cast<std::string>());
      sink(std::move(sentence));
      sentence = Sentence();
    }
  };
}

// The observer the Python side sees: progress and epoch callbacks under the GIL,
// and a check for signals (Ctrl-C) at every progress report, so an interrupt
// stops training mid-epoch within a fraction of a second.
TrainObserver observerFrom(py::object progress, py::object epochEnd, py::object log) {
  TrainObserver o;
  o.progress = [progress](const TrainProgress& p) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (progress.is_none()) return;
    py::dict d;
    d["epoch"] = p.epoch;
    d["epochs"] = p.epochs;
    d["fraction"] = p.fraction;
    d["words_per_second"] = p.wordsPerSecond;
    d["alpha"] = p.alpha;
    d["loss"] = p.loss;
    d["eta_seconds"] = p.etaSeconds;
    d["words_processed"] = p.wordsProcessed;
    progress(d);
  };
  o.epochEnd = [epochEnd](const EpochReport& r) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (epochEnd.is_none()) return;
    py::dict d;
    d["epoch"] = r.epoch;
    d["loss"] = r.loss;
    d["words"] = r.words;
    d["seconds"] = r.seconds;
    epochEnd(d);
  };
  o.log = [log](const std::string& line) {
    py::gil_scoped_acquire gil;
    if (!log.is_none()) log(line);
  };
  o.stopRequested = [] {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    return false;
  };
  return o;
}

CorpusSource corpusFrom(py::object sentences, std::optional<std::string> corpusFile,
                        bool pretokenized, bool lowercase, bool punctuation, std::string locale) {
  if (corpusFile) {
    TokenizerOptions t;
    t.lowercase = lowercase;
    t.keepPunctuation = punctuation;
    t.locale = std::move(locale);
    return CorpusSource::fromFiles({*corpusFile}, pretokenized, t);
  }
  return CorpusSource::fromGenerator(generatorFrom(std::move(sentences)));
}

struct Model {
  ModelState state;
  TrainConfig config() const { return TrainConfig::deserialize(state.config); }
};

}  // namespace

void bindStudy(py::module_& m);  // study.cpp

}  // namespace posvec::python

// ---- the module ------------------------------------------------------------------

PYBIND11_MODULE(_posvec, m) {
  using namespace posvec;
  using namespace posvec::python;
  m.doc() = "posvec's compiled core; use the posvec package, not this module.";
  py::register_exception_translator(&translateErrors);

  py::class_<Embeddings, std::shared_ptr<Embeddings>>(m, "Embeddings")
      .def(py::init([](std::vector<std::string> words,
                       py::array_t<float, py::array::c_style | py::array::forcecast> vectors,
                       std::vector<std::int64_t> counts) {
             return std::make_shared<Embeddings>(std::move(words), matrixFromArray(vectors),
                                                 std::move(counts));
           }),
           py::arg("words"), py::arg("vectors"), py::arg("counts") = std::vector<std::int64_t>{})
      .def_static(
          "load",
          [](const std::string& path) {
            py::gil_scoped_release nogil;
            return std::make_shared<Embeddings>(loadVectors(path));
          },
          py::arg("path"))
      // With load_word2vec_format's options; also says which format was read. The
      // matrix is moved, never copied, into the object NumPy's view keeps alive.
      .def_static(
          "load_detected",
          [](const std::string& path, const std::string& unicodeErrors, std::uint64_t limit,
             bool noHeader) {
            LoadOptions o;
            o.unicodeErrors = parseUnicodeErrors(unicodeErrors);
            o.limit = limit;
            o.noHeader = noHeader;
            VectorFormat found = VectorFormat::Auto;
            std::shared_ptr<Embeddings> e;
            {
              py::gil_scoped_release nogil;
              e = std::make_shared<Embeddings>(loadVectors(path, o, &found));
            }
            return py::make_tuple(e, formatName(found));
          },
          py::arg("path"), py::arg("unicode_errors"), py::arg("limit"), py::arg("no_header"))
      .def(
          "save",
          [](const Embeddings& e, const std::string& path, const std::string& format) {
            const VectorFormat f = parseVectorFormat(format);
            py::gil_scoped_release nogil;
            saveVectors(e, path, f);
          },
          py::arg("path"), py::arg("format"))
      .def_property_readonly("words", &Embeddings::words)
      .def_property_readonly("counts", &Embeddings::counts)
      .def_property_readonly("dim", &Embeddings::dim)
      .def("__len__", &Embeddings::size)
      .def_property_readonly(
          "vectors",
          [](py::object self) {
            const auto& e = self.cast<const Embeddings&>();
            return view(e.vectors().data(),
                        {static_cast<py::ssize_t>(e.size()), static_cast<py::ssize_t>(e.dim())},
                        self, false);
          })
      .def("find",
           [](const Embeddings& e, const std::string& w) -> std::optional<WordId> {
             return e.find(w);
           })
      .def("similarity", &Embeddings::similarity, py::call_guard<py::gil_scoped_release>())
      .def(
          "nearest_to",
          [](const Embeddings& e, py::array_t<float, py::array::c_style | py::array::forcecast> q,
             std::size_t k, std::vector<WordId> exclude, std::size_t limit) {
            if (q.ndim() != 1) throw InputError("the query must be a 1-D vector");
            Eigen::RowVectorXf query(q.shape(0));
            std::memcpy(query.data(), q.data(),
                        sizeof(float) * static_cast<std::size_t>(q.shape(0)));
            std::vector<Neighbour> found;
            {
              py::gil_scoped_release nogil;
              found = e.nearestTo(query, k, exclude, limit);
            }
            py::list out;
            for (const auto& n : found) out.append(py::make_tuple(n.word, n.similarity));
            return out;
          },
          py::arg("query"), py::arg("k"), py::arg("exclude"), py::arg("limit"))
      .def(
          "evaluate_analogies",
          [](const Embeddings& e, const std::string& path, std::size_t restrict,
             bool caseInsensitive) {
            EvalOptions o;
            o.restrictVocab = restrict;
            o.caseInsensitive = caseInsensitive;
            std::vector<std::pair<std::size_t, bool>> answered;
            o.answered = [&](std::size_t line, bool ok) { answered.emplace_back(line, ok); };
            AnalogyResult r;
            {
              py::gil_scoped_release nogil;
              r = evaluateAnalogies(e, path, o);
            }
            py::list sections;
            for (const auto& s : r.sections) sections.append(s.name);
            py::dict d;
            d["sections"] = sections;
            d["answered"] = answered;
            d["questions"] = r.questions;
            d["skipped"] = r.total.skipped;
            d["correct"] = r.total.correct;
            d["incorrect"] = r.total.incorrect;
            d["oov_percent"] = r.oovPercent();
            return d;
          },
          py::arg("path"), py::arg("restrict_vocab"), py::arg("case_insensitive"))
      .def(
          "evaluate_word_pairs",
          [](const Embeddings& e, const std::string& path, std::size_t restrict,
             bool caseInsensitive) {
            EvalOptions o;
            o.restrictVocab = restrict;
            o.caseInsensitive = caseInsensitive;
            WordPairResult r;
            {
              py::gil_scoped_release nogil;
              r = evaluateWordPairs(e, path, o);
            }
            py::dict d;
            d["pearson"] = r.pearson;
            d["spearman"] = r.spearman;
            d["pairs"] = r.pairs;
            d["oov"] = r.oov;
            d["oov_percent"] = r.oovPercent();
            return d;
          },
          py::arg("path"), py::arg("restrict_vocab"), py::arg("case_insensitive"));

  py::class_<Model, std::shared_ptr<Model>>(m, "Model")
      .def_static(
          "train",
          [](py::object sentences, std::optional<std::string> corpusFile, bool pretokenized,
             const py::dict& options, py::object progress, py::object epochEnd, py::object log) {
            TrainConfig c;
            c.dim = options["vector_size"].cast<std::size_t>();
            c.window = options["window"].cast<int>();
            c.minCount = options["min_count"].cast<std::int64_t>();
            c.architecture =
                options["sg"].cast<int>() ? Architecture::SkipGram : Architecture::Cbow;
            c.loss = options["hs"].cast<int>() ? Loss::HierarchicalSoftmax : Loss::NegativeSampling;
            c.negative = options["negative"].cast<int>();
            c.sample = options["sample"].cast<double>();
            c.alpha = options["alpha"].cast<double>();
            c.minAlpha = options["min_alpha"].cast<double>();
            c.epochs = options["epochs"].cast<int>();
            c.threads = options["workers"].cast<int>();
            c.seed = options["seed"].cast<std::uint64_t>();
            c.maxVocab = options["max_final_vocab"].cast<std::size_t>();
            const auto kernel = options["kernel"].cast<std::string>();
            if (kernel != "batched" && kernel != "classic")
              throw ConfigError("unknown kernel '" + kernel + "' (choose batched or classic)");
            c.kernel = kernel == "batched" ? Kernel::Batched : Kernel::Classic;
            // None: the library's defaults.
            if (!options["combine"].is_none()) c.combine = options["combine"].cast<int>();
            if (!options["block_negatives"].is_none())
              c.blockNegatives = options["block_negatives"].cast<int>();
            c.validate();
            const CorpusSource corpus = corpusFrom(
                sentences, corpusFile, pretokenized, options["lowercase"].cast<bool>(),
                options["punctuation"].cast<bool>(), options["locale"].cast<std::string>());
            const TrainObserver observer = observerFrom(progress, epochEnd, log);
            auto model = std::make_shared<Model>();
            py::gil_scoped_release nogil;
            model->state = train(corpus, c, observer);
            return model;
          },
          py::arg("sentences"), py::arg("corpus_file"), py::arg("pretokenized"), py::arg("options"),
          py::arg("progress"), py::arg("epoch_end"), py::arg("log"))
      .def(
          "resume",
          [](Model& m, py::object sentences, std::optional<std::string> corpusFile,
             bool pretokenized, int epochs, bool lowercase, bool punctuation, std::string locale,
             py::object progress, py::object epochEnd, py::object log) {
            const CorpusSource corpus =
                corpusFrom(sentences, corpusFile, pretokenized, lowercase, punctuation, locale);
            const TrainObserver observer = observerFrom(progress, epochEnd, log);
            py::gil_scoped_release nogil;
            resumeTraining(m.state, corpus, epochs, observer);
          },
          py::arg("sentences"), py::arg("corpus_file"), py::arg("pretokenized"), py::arg("epochs"),
          py::arg("lowercase"), py::arg("punctuation"), py::arg("locale"), py::arg("progress"),
          py::arg("epoch_end"), py::arg("log"))
      .def_static(
          "load",
          [](const std::string& path) {
            auto model = std::make_shared<Model>();
            py::gil_scoped_release nogil;
            model->state = loadModel(path);
            return model;
          },
          py::arg("path"))
      .def(
          "save",
          [](const Model& m, const std::string& path) {
            py::gil_scoped_release nogil;
            saveModel(m.state, path);
          },
          py::arg("path"))
      .def("embeddings",
           [](const Model& m) {
             py::gil_scoped_release nogil;
             return std::make_shared<Embeddings>(embeddingsOf(m.state));
           })
      .def_property_readonly("losses", [](const Model& m) { return m.state.epochLosses; })
      .def_property_readonly("epochs_done", [](const Model& m) { return m.state.epochsDone; })
      .def_property_readonly("config", [](const Model& m) {
        const TrainConfig c = m.config();
        py::dict d;
        d["vector_size"] = c.dim;
        d["window"] = c.window;
        d["min_count"] = c.minCount;
        d["sg"] = c.architecture == Architecture::SkipGram ? 1 : 0;
        d["hs"] = c.loss == Loss::HierarchicalSoftmax ? 1 : 0;
        d["negative"] = c.negative;
        d["sample"] = c.sample;
        d["alpha"] = c.alpha;
        d["min_alpha"] = c.minAlpha;
        d["epochs"] = c.epochs;
        d["workers"] = c.threads;
        d["seed"] = c.seed;
        d["max_final_vocab"] = c.maxVocab;
        d["kernel"] = c.kernel == Kernel::Batched ? "batched" : "classic";
        d["combine"] = c.combine;
        d["block_negatives"] = c.blockNegatives;
        return d;
      });

  // ---- tokenizer ----
  m.def(
      "tokenize",
      [](const std::string& text, bool lowercase, bool punctuation, const std::string& locale) {
        TokenizerOptions o;
        o.lowercase = lowercase;
        o.keepPunctuation = punctuation;
        o.locale = locale;
        py::gil_scoped_release nogil;
        return Tokenizer(o).tokenize(text);
      },
      py::arg("text"), py::arg("lowercase"), py::arg("punctuation"), py::arg("locale"));
  // Streams a file: `sink(batch)` receives lists of sentences, in order, under the
  // GIL; tokenizing itself runs without it.
  m.def(
      "tokenize_file",
      [](const std::string& path, bool lowercase, bool punctuation, const std::string& locale,
         bool pretokenized, std::size_t batch, py::function sink) {
        TokenizerOptions o;
        o.lowercase = lowercase;
        o.keepPunctuation = punctuation;
        o.locale = locale;
        o.mode = pretokenized ? TokenizerOptions::Mode::Whitespace : TokenizerOptions::Mode::Icu;
        std::vector<Sentence> pending;
        auto flush = [&] {
          py::gil_scoped_acquire gil;
          if (PyErr_CheckSignals() != 0) throw py::error_already_set();
          py::list l = py::cast(pending);
          pending.clear();
          sink(l);
        };
        py::gil_scoped_release nogil;
        Tokenizer(o).tokenizeFile(path, [&](Sentence&& s) {
          pending.push_back(std::move(s));
          if (pending.size() >= batch) flush();
        });
        if (!pending.empty()) flush();
      },
      py::arg("path"), py::arg("lowercase"), py::arg("punctuation"), py::arg("locale"),
      py::arg("pretokenized"), py::arg("batch"), py::arg("sink"));

  // ---- positional encodings ----
  m.def(
      "positional_encoding",
      [](std::int64_t length, std::size_t dim, const std::string& encoding, double base,
         std::int64_t start, bool float64) -> py::array {
        PositionalOptions o;
        o.dim = dim;
        o.base = base;
        o.encoding = parseEncoding(encoding);
        o.validate();
        if (length < 1)
          throw ConfigError("length must be at least 1 (got " + std::to_string(length) + ")");
        // Every size first: the encoder's tables are not built for a matrix that cannot fit.
        checkPositionalMemory(o, start, static_cast<std::size_t>(length),
                              float64 ? sizeof(double) : sizeof(float));
        const PositionalEncoder enc(o);
        const std::vector<py::ssize_t> shape{length, static_cast<py::ssize_t>(dim)};
        if (float64) {
          MatrixD mat;
          {
            py::gil_scoped_release nogil;
            mat = enc.matrix(start, static_cast<std::size_t>(length));
          }
          return adopt(std::move(mat), shape);
        }
        MatrixF mat;
        {
          py::gil_scoped_release nogil;
          mat = enc.matrixFloat(start, static_cast<std::size_t>(length));
        }
        return adopt(std::move(mat), shape);
      },
      py::arg("length"), py::arg("dim"), py::arg("encoding"), py::arg("base"), py::arg("start"),
      py::arg("float64"));
  m.def(
      "relative_shift",
      [](std::int64_t k, std::size_t dim, const std::string& encoding, double base) {
        PositionalOptions o;
        o.dim = dim;
        o.base = base;
        o.encoding = parseEncoding(encoding);
        o.validate();
        checkPositionalMemory(o, 0, dim, sizeof(double));  // the dim x dim rotation, first
        MatrixD mat = PositionalEncoder(o).relativeShift(k);
        return adopt(std::move(mat),
                     {static_cast<py::ssize_t>(dim), static_cast<py::ssize_t>(dim)});
      },
      py::arg("k"), py::arg("dim"), py::arg("encoding"), py::arg("base"));
  // Rows (batch, length, dim) of e·scale + PE[start + t]; `ids` holds each sentence's
  // word ids, -1 for an unknown word: a zero embedding, or with `unknown_mean` the
  // shared row of lookUpTokens' UnknownWords::Token (the mean vector), as the CLI does.
  m.def(
      "encode_ids",
      [](const Embeddings& e, const std::vector<std::vector<WordId>>& ids,
         const std::string& encoding, double base, const std::string& scale, std::int64_t start,
         bool float64, bool unknownMean) -> py::array {
        PositionalOptions o;
        o.dim = e.dim();
        o.base = base;
        o.encoding = parseEncoding(encoding);
        if (o.dim % 2 != 0)
          throw ConfigError("the vectors have " + std::to_string(o.dim) +
                            " dimensions; the position encoding needs an even d_model");
        o.validate();
        const Scale s = Scale::parse(scale);
        std::vector<MatrixD> encoded;
        {
          py::gil_scoped_release nogil;
          const PositionalEncoder enc(o);
          std::vector<MatrixF> batch;
          Eigen::RowVectorXf unknown;
          if (unknownMean) unknown = unknownTokenRow(e);
          for (const auto& seq : ids) {
            MatrixF rows = MatrixF::Zero(static_cast<Eigen::Index>(seq.size()),
                                         static_cast<Eigen::Index>(o.dim));
            for (std::size_t t = 0; t < seq.size(); ++t)
              if (seq[t] >= 0)
                rows.row(static_cast<Eigen::Index>(t)) = e.vectors().row(seq[t]);
              else if (unknownMean)
                rows.row(static_cast<Eigen::Index>(t)) = unknown;
            batch.push_back(std::move(rows));
          }
          encoded = enc.encodeBatch(batch, start, s, false);
        }
        const auto n = static_cast<py::ssize_t>(encoded.size());
        const py::ssize_t len = encoded.empty() ? 0 : encoded[0].rows();
        const auto d = static_cast<py::ssize_t>(o.dim);
        auto fill = [&](auto* out) {
          for (std::size_t b = 0; b < encoded.size(); ++b)
            for (py::ssize_t i = 0; i < len * d; ++i)
              out[static_cast<py::ssize_t>(b) * len * d + i] =
                  static_cast<std::remove_pointer_t<decltype(out)>>(encoded[b].data()[i]);
        };
        if (float64) {
          py::array_t<double> out({n, len, d});
          fill(out.mutable_data());
          return out;
        }
        py::array_t<float> out({n, len, d});
        fill(out.mutable_data());
        return out;
      },
      py::arg("embeddings"), py::arg("ids"), py::arg("encoding"), py::arg("base"), py::arg("scale"),
      py::arg("start"), py::arg("float64"), py::arg("unknown_mean") = false);

  m.def("upper_case", &upperCase, py::arg("text"));
  bindStudy(m);
  m.def(
      "detect_format", [](const std::string& path) { return formatName(detectFormat(path)); },
      py::arg("path"), py::call_guard<py::gil_scoped_release>());
}
