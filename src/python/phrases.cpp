// posvec._posvec's binding of phrase detection (phrases.hpp): a Phrases model that
// counts sentences, scores candidates, rewrites sentences, freezes, and reads and writes
// its table. The gensim-shaped classes are in posvec/phrases.py.
#include "posvec/phrases.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "posvec/error.hpp"

namespace py = pybind11;

namespace posvec::python {

void bindPhrases(py::module_& m) {
  py::class_<Phrases>(m, "PhrasesModel")
      .def(py::init([](std::int64_t minCount, double threshold, std::int64_t maxVocab,
                       const std::string& delimiter, const std::string& scoring,
                       std::vector<std::string> connectors) {
             PhraseOptions o;
             o.minCount = minCount;
             o.threshold = threshold;
             o.maxVocab = maxVocab;
             o.delimiter = delimiter;
             if (scoring != "default" && scoring != "npmi")
               throw ConfigError("scoring must be 'default' or 'npmi', got '" + scoring + "'");
             o.scoring = scoring == "npmi" ? PhraseScoring::Npmi : PhraseScoring::Default;
             o.connectorWords = std::move(connectors);
             return Phrases(std::move(o));
           }),
           py::arg("min_count"), py::arg("threshold"), py::arg("max_vocab_size"),
           py::arg("delimiter"), py::arg("scoring"), py::arg("connector_words"))
      .def("add_sentence", &Phrases::addSentence, py::arg("sentence"))
      .def(
          "score",
          [](const Phrases& p, const std::string& a, const std::string& b,
             const std::vector<std::string>& between) -> std::optional<py::tuple> {
            const auto f = p.score(a, b, between);
            if (!f) return std::nullopt;
            return py::make_tuple(f->phrase, f->score);
          },
          py::arg("a"), py::arg("b"), py::arg("between"))
      .def("apply", &Phrases::apply, py::arg("sentence"))
      .def("export_phrases",
           [](const Phrases& p) {
             std::vector<std::pair<std::string, double>> out;
             for (const FoundPhrase& f : p.exportPhrases()) out.emplace_back(f.phrase, f.score);
             return out;
           })
      .def("freeze", &Phrases::freeze)
      .def(
          "save_table", [](const Phrases& p, const std::string& path) { savePhraseTable(path, p); },
          py::arg("path"))
      .def_static("read_table", &readPhraseTable, py::arg("path"))
      .def("count", &Phrases::count, py::arg("token"))
      .def_property_readonly("frozen", &Phrases::isFrozen)
      .def_property_readonly("vocabulary_size", &Phrases::vocabularySize)
      .def_property_readonly("corpus_word_count", &Phrases::corpusWords)
      .def_property_readonly("min_count", [](const Phrases& p) { return p.options().minCount; })
      .def_property_readonly("threshold", [](const Phrases& p) { return p.options().threshold; })
      .def_property_readonly("delimiter", [](const Phrases& p) { return p.options().delimiter; })
      .def_property_readonly("scoring",
                             [](const Phrases& p) {
                               // Its row's name for it (a table posvec phrases saved may hold
                               // word2phrase's rule).
                               std::string name;
                               forEachSetting(kPhraseSettings, [&](const auto& row) {
                                 if (row.key == "scoring") name = settingText(row, p.options());
                               });
                               return name;
                             })
      .def_property_readonly("connector_words",
                             [](const Phrases& p) { return p.options().connectorWords; })
      .def_property_readonly("max_vocab_size",
                             [](const Phrases& p) { return p.options().maxVocab; });
  m.def("english_connector_words", &englishConnectorWords);
}

}  // namespace posvec::python
