// posvec._posvec: the compiled half of the Python package. It wraps the library
// with as little policy as possible (the gensim-shaped API lives in the pure-Python
// package beside it): matrices cross as NumPy arrays over the C++ memory, long
// calls release the GIL, and every posvec::Error becomes a Python exception.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/eval.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "posvec/posvec.hpp"

namespace py = pybind11;

namespace posvec::python {
namespace {

// ---- errors ------------------------------------------------------------------

// The message with the settings it names (Error::mentions) as the package's
// keywords spell them ("lower the minimum count" -> "lower min_count").
std::string spelled(const Error& e) {
  return e.spelled([](const std::string& setting) -> std::string {
    const Spelling* s = settingSpelling(setting);
    if (!s) return "";
    return std::string(s->keywordInText.empty() ? s->keyword : s->keywordInText);
  });
}

// Python types of two kinds of FormatError, so both the posvec habit (except
// ValueError) and gensim's (except EOFError / UnicodeDecodeError) catch them.
PyObject* truncatedFileError = nullptr;
PyObject* invalidUtf8Error = nullptr;
PyObject* emptyVocabularyError = nullptr;

void translateErrors(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const IoError& e) {
    // The library's messages say which case it is; Python code tests the type.
    const std::string msg = spelled(e);
    if (msg.find("no such file") != std::string::npos)
      PyErr_SetString(PyExc_FileNotFoundError, msg.c_str());
    else if (msg.find("it is a directory") != std::string::npos)
      PyErr_SetString(PyExc_IsADirectoryError, msg.c_str());
    else
      PyErr_SetString(PyExc_OSError, msg.c_str());
  } catch (const FormatError& e) {
    const std::string msg = spelled(e);
    PyObject* type = PyExc_ValueError;
    if (msg.find("not valid UTF-8") != std::string::npos)
      type = invalidUtf8Error;
    else if (msg.find("truncated") != std::string::npos ||
             msg.find("file ends") != std::string::npos)
      type = truncatedFileError;
    PyErr_SetString(type, msg.c_str());
  } catch (const InputError& e) {
    // No vocabulary to train: gensim raises RuntimeError there, posvec ValueError.
    const std::string msg = spelled(e);
    const bool empty = msg.find("contains no words") != std::string::npos ||
                       msg.find("no word occurs at least") != std::string::npos;
    PyErr_SetString(empty ? emptyVocabularyError : PyExc_ValueError, msg.c_str());
  } catch (const Error& e) {
    // Configuration errors: the value handed in is unusable.
    PyErr_SetString(PyExc_ValueError, spelled(e).c_str());
  }
}

void bindErrors(py::module_& m) {
  // Defined in Python: UnicodeDecodeError's constructor wants the undecodable
  // bytes, which a message from the library does not carry.
  py::exec(R"(
class TruncatedFileError(EOFError, ValueError):
    """A vector or model file ends before its header says it should."""


class EmptyVocabularyError(RuntimeError, ValueError):
    """No word of the corpus is left to train (none, or none reaches the minimum count)."""


class InvalidUtf8Error(UnicodeDecodeError):
    """A word is not valid UTF-8 (unicode_errors='strict')."""

    def __init__(self, message):
        super().__init__("utf-8", b"", 0, 1, message)
        self.message = message

    def __str__(self):
        return self.message
)",
           m.attr("__dict__"));
  truncatedFileError = m.attr("TruncatedFileError").ptr();
  invalidUtf8Error = m.attr("InvalidUtf8Error").ptr();
  emptyVocabularyError = m.attr("EmptyVocabularyError").ptr();
  // Owned for the life of the process, as the translator that raises them.
  Py_INCREF(truncatedFileError);
  Py_INCREF(invalidUtf8Error);
  Py_INCREF(emptyVocabularyError);
  py::register_exception_translator(&translateErrors);
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
      if (!py::isinstance<py::iterable>(item))
        throw py::type_error("sentences must be lists of tokens, not " +
                             std::string(py::str(item.get_type().attr("__name__"))));
      sentence.clear();
      for (py::handle token : item) {
        if (!py::isinstance<py::str>(token))
          throw py::type_error("a sentence's tokens must be strings, not " +
                               std::string(py::str(token.get_type().attr("__name__"))) +
                               " (a generator inside the corpus? give lists of tokens)");
        sentence.push_back(token.cast<std::string>());
      }
      sink(std::move(sentence));
      sentence = Sentence();
    }
  };
}

// posvec's model and vector files hold no word with whitespace in it (the six
// ASCII bytes of src/base/ascii_space.hpp: word2vec's separators), and neither may
// a vocabulary, or the model it grows could no longer be saved or even wrapped. A
// Python token can hold any; refused here, before the vocabulary takes it.
void refuseWhitespace(const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    if (w.find_first_of(" \t\n\v\f\r") == std::string::npos) continue;
    std::string shown;  // as Python's repr shows it
    for (const char c : w) {
      static constexpr std::pair<char, const char*> kEscapes[] = {
          {'\t', "\\t"},   {'\n', "\\n"}, {'\r', "\\r"}, {'\v', "\\x0b"},
          {'\f', "\\x0c"}, {'\'', "\\'"}, {'\\', "\\\\"}};
      const auto* e = std::find_if(std::begin(kEscapes), std::end(kEscapes),
                                   [c](const auto& x) { return x.first == c; });
      if (e != std::end(kEscapes))
        shown += e->second;
      else
        shown += c;
    }
    throw InputError("the word '" + shown +
                     "' contains whitespace, which no word of a posvec model may hold (its "
                     "files separate words by whitespace); split it into tokens or replace the "
                     "whitespace (e.g. with '_') in the corpus");
  }
}

// The observer the Python side sees: progress and epoch callbacks under the GIL,
// and a check for signals (Ctrl-C) at every progress report, so an interrupt
// stops training mid-epoch within a fraction of a second.
TrainObserver observerFrom(py::object progress, py::object epochEnd, py::object log,
                           py::object counted) {
  TrainObserver o;
  // The corpus as counted (sentences and the tokens of the vocabulary's words),
  // after the vocabulary is checked: before any training.
  o.vocabulary = [counted](const Vocabulary& v, std::int64_t sentences) {
    refuseWhitespace(v.words());
    if (counted.is_none()) return;
    py::gil_scoped_acquire gil;
    py::dict d;
    d["words"] = v.size();
    d["tokens"] = v.totalCount();
    d["sentences"] = sentences;
    counted(d);
  };
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
    d["predictions"] = r.predictions;
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

// The vectors of `words` in a model trained with subwords, as fastText composes
// them: the mean of the word's own row (when it is in the vocabulary) and its
// n-gram rows; zeros for a word with neither.
py::array_t<float> subwordVectors(const Model& m, const std::vector<std::string>& words) {
  const TrainConfig c = m.config();
  if (!c.subwords) throw ConfigError("the model was trained on whole words only: it has no n-grams");
  const auto dim = static_cast<std::size_t>(m.state.input.cols());
  py::array_t<float> out({static_cast<py::ssize_t>(words.size()), static_cast<py::ssize_t>(dim)});
  float* p = out.mutable_data();
  py::gil_scoped_release nogil;
  std::unordered_map<std::string_view, std::int64_t> index;
  for (std::size_t i = 0; i < m.state.words.size(); ++i)
    index.emplace(m.state.words[i], static_cast<std::int64_t>(i));
  const auto nwords = static_cast<std::int64_t>(m.state.words.size());
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::vector<std::int64_t> rows = ngramRows(words[i], c.minn, c.maxn, c.bucket, nwords);
    if (auto it = index.find(words[i]); it != index.end()) rows.insert(rows.begin(), it->second);
    Eigen::RowVectorXf sum = Eigen::RowVectorXf::Zero(static_cast<Eigen::Index>(dim));
    Eigen::RowVectorXf row(static_cast<Eigen::Index>(dim));
    for (std::int64_t r : rows) {  // 16-bit weights: each row widened
      readWeightRow(m.state, m.state.input, static_cast<Eigen::Index>(r), row.data());
      sum += row;
    }
    if (!rows.empty()) sum *= 1.0f / static_cast<float>(rows.size());
    std::memcpy(p + i * dim, sum.data(), sizeof(float) * dim);
  }
  return out;
}

// The Word2Vec options (gensim's names) as a TrainConfig, validated: each keyword of
// the training settings' table (kTrainSettings) that the dict holds, None keeping
// the library's default. posvec.FastText passes min_n: subword training.
TrainConfig configFrom(const py::dict& options) {
  TrainConfig c;
  forEachSetting(kTrainSettings, [&](const auto& row) {
    using T = std::remove_cvref_t<decltype(c.*(row.member))>;
    const std::string keyword(row.spelled.keyword);
    if (keyword.empty() || !options.contains(keyword)) return;
    const py::object value = options[keyword.c_str()];
    if (value.is_none()) return;
    T& field = c.*(row.member);
    if constexpr (std::is_enum_v<T>) {
      if (row.keywordSwitch) {
        const auto other = row.choices[0].value == row.keywordValue ? row.choices[1].value
                                                                    : row.choices[0].value;
        field = value.cast<int>() ? row.keywordValue : other;
        return;
      }
      const auto name = value.cast<std::string>();
      if (!readSetting(row, name, c)) {
        std::string names;
        for (std::size_t i = 0; i < row.choices.size(); ++i)
          names += (i == 0 ? "" : i + 1 == row.choices.size() ? " or " : ", ") +
                   std::string(row.choices[i].name);
        throw ConfigError("unknown " + keyword + " '" + name + "' (choose " + names + ")");
      }
    } else {
      field = value.cast<T>();
    }
  });
  c.subwords = options.contains("min_n");
  c.validate();
  return c;
}

// A TrainConfig as the Python keywords spell it (the subword keywords for subword
// models only).
py::dict configDict(const TrainConfig& c) {
  py::dict d;
  forEachSetting(kTrainSettings, [&](const auto& row) {
    using T = std::remove_cvref_t<decltype(c.*(row.member))>;
    if (row.spelled.keyword.empty() || (row.applies == trainsSubwords && !c.subwords)) return;
    const std::string keyword(row.spelled.keyword);
    if constexpr (std::is_enum_v<T>) {
      if (row.keywordSwitch)
        d[keyword.c_str()] = c.*(row.member) == row.keywordValue ? 1 : 0;
      else
        d[keyword.c_str()] = settingText(row, c);
    } else {
      d[keyword.c_str()] = c.*(row.member);
    }
  });
  return d;
}

// The training settings' table as the Python package sees it: a dict per keyword
// (default as Python writes it, the meaning, the command line's flag).
py::list trainSettings() {
  py::list out;
  const TrainConfig defaults;
  forEachSetting(kTrainSettings, [&](const auto& row) {
    using T = std::remove_cvref_t<decltype(defaults.*(row.member))>;
    if (row.spelled.keyword.empty()) return;
    py::dict d;
    d["keyword"] = std::string(row.spelled.keyword);
    d["key"] = std::string(row.key);
    d["meaning"] = std::string(row.setting.meaning);
    d["flag"] = std::string(row.spelled.flag);
    std::string text(row.keywordDefault);
    if (text.empty()) {
      if constexpr (std::is_enum_v<T>) {
        text = row.keywordSwitch ? (defaults.*(row.member) == row.keywordValue ? "1" : "0")
                                 : "'" + settingText(row, defaults) + "'";
      } else if constexpr (std::is_same_v<T, bool>) {
        text = defaults.*(row.member) ? "True" : "False";
      } else {
        text = settingText(row, defaults);
      }
    }
    d["default"] = text;
    out.append(d);
  });
  return out;
}

// ---- bindings, one function per part of the API ----------------------------------

void bindEmbeddings(py::module_& m) {
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
}

void bindModel(py::module_& m) {
  py::class_<Model, std::shared_ptr<Model>>(m, "Model")
      .def_static(
          "train",
          [](py::object sentences, std::optional<std::string> corpusFile, bool pretokenized,
             const py::dict& options, py::object progress, py::object epochEnd, py::object log,
             py::object counted) {
            const TrainConfig c = configFrom(options);
            const CorpusSource corpus = corpusFrom(
                sentences, corpusFile, pretokenized, options["lowercase"].cast<bool>(),
                options["punctuation"].cast<bool>(), options["locale"].cast<std::string>());
            const TrainObserver observer = observerFrom(progress, epochEnd, log, counted);
            auto model = std::make_shared<Model>();
            py::gil_scoped_release nogil;
            model->state = train(corpus, c, observer);
            return model;
          },
          py::arg("sentences"), py::arg("corpus_file"), py::arg("pretokenized"), py::arg("options"),
          py::arg("progress"), py::arg("epoch_end"), py::arg("log"), py::arg("counted") = py::none())
      .def(
          "resume",
          [](Model& m, py::object sentences, std::optional<std::string> corpusFile,
             bool pretokenized, int epochs, bool lowercase, bool punctuation, std::string locale,
             py::object progress, py::object epochEnd, py::object log, py::object counted) {
            const CorpusSource corpus =
                corpusFrom(sentences, corpusFile, pretokenized, lowercase, punctuation, locale);
            const TrainObserver observer = observerFrom(progress, epochEnd, log, counted);
            py::gil_scoped_release nogil;
            resumeTraining(m.state, corpus, epochs, observer);
          },
          py::arg("sentences"), py::arg("corpus_file"), py::arg("pretokenized"), py::arg("epochs"),
          py::arg("lowercase"), py::arg("punctuation"), py::arg("locale"), py::arg("progress"),
          py::arg("epoch_end"), py::arg("log"), py::arg("counted") = py::none())
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
      .def_property_readonly("config", [](const Model& m) { return configDict(m.config()); })
      .def_property_readonly(
          "output",
          [](const Model& m) {
            // A copy: growing the vocabulary or resuming reallocates the matrix.
            py::array_t<float> out({static_cast<py::ssize_t>(m.state.output.rows()),
                                    static_cast<py::ssize_t>(m.state.output.cols())});
            // 16-bit weights: the model stays packed; its rows come out as float32.
            for (Eigen::Index r = 0; r < m.state.output.rows(); ++r)
              readWeightRow(m.state, m.state.output, r,
                            out.mutable_data() + r * m.state.output.cols());
            return out;
          })
      // Subword models (posvec.FastText): fastText's .bin, and vectors from n-gram rows.
      .def(
          "save_facebook_model",
          [](const Model& m, const std::string& path) {
            py::gil_scoped_release nogil;
            saveFastTextModel(m.state, path);
          },
          py::arg("path"))
      .def("subword_vectors", &subwordVectors, py::arg("words"))
      .def_property_readonly(
          "input",
          [](const Model& m) {
            // A copy, as output: resuming may reallocate the matrix (16-bit weights:
            // widened row by row).
            py::array_t<float> out({static_cast<py::ssize_t>(m.state.input.rows()),
                                    static_cast<py::ssize_t>(m.state.input.cols())});
            for (Eigen::Index r = 0; r < m.state.input.rows(); ++r)
              readWeightRow(m.state, m.state.input, r, out.mutable_data() + r * m.state.input.cols());
            return out;
          })
      .def_property_readonly("words", [](const Model& m) { return m.state.words; })
      .def_property_readonly("counts", [](const Model& m) { return m.state.counts; })
      // A model with this vocabulary and no training (build_vocab).
      .def_static(
          "from_vocabulary",
          [](std::vector<std::string> words, std::vector<std::int64_t> counts,
             const py::dict& options) {
            const TrainConfig c = configFrom(options);
            refuseWhitespace(words);
            const Vocabulary vocabulary(std::move(words), std::move(counts));
            auto model = std::make_shared<Model>();
            py::gil_scoped_release nogil;
            model->state = initialModel(vocabulary, c);
            return model;
          },
          py::arg("words"), py::arg("counts"), py::arg("options"))
      // build_vocab(update=True): adds counts to known words, appends the others.
      .def(
          "extend_vocabulary",
          [](Model& m, const std::vector<std::string>& words,
             const std::vector<std::int64_t>& counts) {
            refuseWhitespace(words);  // the library would take them: checked before it runs
            py::gil_scoped_release nogil;
            return extendVocabulary(m.state, words, counts);
          },
          py::arg("words"), py::arg("counts"));
}

void bindTokenizer(py::module_& m) {
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
}

void bindPositional(py::module_& m) {
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
        // Rows are read by id below: an id past the vocabulary would read past the matrix.
        for (const auto& seq : ids)
          for (const WordId id : seq)
            if (id < -1 || (id >= 0 && static_cast<std::size_t>(id) >= e.size()))
              throw py::index_error("word id " + std::to_string(id) + " is out of range for " +
                                    std::to_string(e.size()) +
                                    " words (ids are 0 to words - 1, or -1 for an unknown word)");
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
}

}  // namespace

void bindStudy(py::module_& m);  // study.cpp
void bindRope(py::module_& m);   // rope.cpp
void bindAttention(py::module_& m);  // attention.cpp
void bindPhrases(py::module_& m);    // phrases.cpp
void bindFastText(py::module_& m);  // fasttext.cpp

}  // namespace posvec::python

// ---- the module ------------------------------------------------------------------

PYBIND11_MODULE(_posvec, m) {
  using namespace posvec::python;
  m.doc() = "posvec's compiled core; use the posvec package, not this module.";
  bindErrors(m);
  bindEmbeddings(m);
  bindModel(m);
  bindTokenizer(m);
  bindPositional(m);
  m.def("upper_case", &posvec::upperCase, py::arg("text"));
  m.def("train_settings", &trainSettings,
        "The training settings: keyword, key, meaning, command-line flag and default (as "
        "Python text) of each");
  bindStudy(m);
  bindRope(m);
  bindAttention(m);
  bindPhrases(m);
  bindFastText(m);
  m.def(
      "detect_format",
      [](const std::string& path) { return posvec::formatName(posvec::detectFormat(path)); },
      py::arg("path"), py::call_guard<py::gil_scoped_release>());
}
