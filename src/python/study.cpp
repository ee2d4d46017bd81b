// posvec._posvec's binding of the study stage (study.hpp): runStudy with its
// options from a dict, progress to a Python callable, results kept in C++ and
// shown through the report's own table, JSON and SVG figures.
#include "posvec/study.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "posvec/report.hpp"

namespace py = pybind11;

namespace posvec::python {

void bindStudy(py::module_& m) {
  py::class_<StudyResults, std::shared_ptr<StudyResults>>(m, "StudyResults")
      .def("summary_json", [](const StudyResults& r) { return summaryJson(r); })
      .def("results_json", [](const StudyResults& r) { return resultsJson(r); })
      .def("table", [](const StudyResults& r) { return studyTable(r); })
      .def("figures",
           [](const StudyResults& r) {
             std::vector<Figure> figures;
             {
               py::gil_scoped_release nogil;
               figures = studyFigures(r);
             }
             py::list out;
             for (const auto& f : figures)
               out.append(py::make_tuple(f.file, f.title, f.caption, f.svg));
             return out;
           })
      .def("report_html",
           [](const StudyResults& r) {
             py::gil_scoped_release nogil;
             return reportHtml(r, studyFigures(r));
           })
      .def(
          "write_report",
          [](const StudyResults& r, const std::string& dir) {
            py::gil_scoped_release nogil;
            writeReport(r, dir);
          },
          py::arg("directory"));

  m.def(
      "run_study",
      [](const py::dict& o, py::object progress) {
        StudyOptions s;
        // The rows with a keyword and a plain value, from their table; the placed
        // words, encodings and scale have their own forms.
        forEachSetting(kStudySettings, [&](const auto& row) {
          using T = std::remove_cvref_t<decltype(s.*(row.member))>;
          if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>) {
            const std::string keyword(row.spelled.keyword);
            if (!keyword.empty() && o.contains(keyword))
              s.*(row.member) = o[keyword.c_str()].template cast<T>();
          }
        });
        s.pairs.clear();
        for (const auto& [word, position] :
             o["pairs"].cast<std::vector<std::pair<std::string, std::int64_t>>>())
          s.pairs.push_back({word, position});
        s.encodings.clear();
        for (const auto& name : o["encodings"].cast<std::vector<std::string>>())
          s.encodings.push_back(parseEncoding(name));
        s.scale = Scale::parse(o["scale"].cast<std::string>());
        s.validate();
        StudyObserver observer;
        observer.progress = [progress](const StudyProgress& p) {
          py::gil_scoped_acquire gil;
          if (PyErr_CheckSignals() != 0) throw py::error_already_set();
          if (progress.is_none()) return;
          static const char* names[] = {"reading corpus", "training", "trained", "training sweep",
                                        "writing report"};
          py::dict d;
          d["stage"] = names[static_cast<int>(p.stage)];
          d["finished"] = p.finished;
          d["path"] = p.path;
          d["tokens"] = p.tokens;
          d["model"] = p.model;
          d["fraction"] = p.training.fraction;
          d["epoch"] = p.training.epoch;
          d["epochs"] = p.stage == StudyProgress::Stage::Trained ? p.epochs : p.training.epochs;
          d["loss"] = p.training.loss;
          d["seconds"] = p.seconds;
          progress(d);
        };
        auto results = std::make_shared<StudyResults>();
        py::gil_scoped_release nogil;
        *results = runStudy(s, observer);
        return results;
      },
      py::arg("options"), py::arg("progress"));
}

}  // namespace posvec::python
