// posvec._posvec's binding of rotary scaling and ALiBi (rope.hpp): frequencies
// from a config.json (a path or its text), the distance profile and ALiBi's
// slopes and biases, as float64 NumPy arrays.
#include "posvec/rope.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace posvec::python {

namespace {

py::array_t<double> array(const std::vector<double>& v) {
  py::array_t<double> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::tuple frequencies(RopeConfig c, std::optional<std::int64_t> seqLen, const std::string& hf) {
  if (seqLen) c.seqLen = *seqLen;
  c.hfVersion = parseHfRules(hf);
  const RopeFrequencies f = ropeFrequencies(c);
  return py::make_tuple(ropeTypeName(f.type), f.dim, array(f.invFreq), f.attentionFactor);
}

}  // namespace

void bindRope(py::module_& m) {
  py::class_<RopeConfig>(m, "RopeConfig");
  m.def(
      "rope_frequencies_file",
      [](const std::string& path, std::optional<std::int64_t> seqLen, const std::string& hf) {
        return frequencies(readRopeConfig(path), seqLen, hf);
      },
      py::arg("path"), py::arg("seq_len") = py::none(), py::arg("hf_version") = "5");
  m.def(
      "rope_frequencies_json",
      [](const std::string& text, const std::string& source, std::optional<std::int64_t> seqLen,
         const std::string& hf) { return frequencies(parseRopeConfig(text, source), seqLen, hf); },
      py::arg("text"), py::arg("source"), py::arg("seq_len") = py::none(),
      py::arg("hf_version") = "5");
  // A parsed configuration, for attention(): from a path or from JSON text.
  m.def(
      "rope_config",
      [](std::optional<std::string> path, std::optional<std::string> text, const std::string& hf) {
        RopeConfig c =
            path ? readRopeConfig(*path) : parseRopeConfig(text.value_or("{}"), "config");
        c.hfVersion = parseHfRules(hf);
        return c;
      },
      py::arg("path"), py::arg("text"), py::arg("hf_version") = "5");
  m.def(
      "rope_profile",
      [](const std::vector<double>& invFreq, const std::vector<double>& distances) {
        const auto p = ropeProfile(invFreq, distances);
        std::vector<double> cosines, bounds;
        for (const auto& pt : p) {
          cosines.push_back(pt.meanCos);
          bounds.push_back(pt.bound);
        }
        return py::make_tuple(array(cosines), array(bounds));
      },
      py::arg("inv_freq"), py::arg("distances"));
  m.def(
      "alibi_slopes", [](std::size_t heads) { return array(alibiSlopes(heads)); },
      py::arg("heads"));
  m.def(
      "alibi_bias",
      [](double slope, std::size_t length, bool causal) {
        const MatrixD b = alibiBias(slope, length, causal);
        py::array_t<double> a({static_cast<py::ssize_t>(length), static_cast<py::ssize_t>(length)});
        std::copy(b.data(), b.data() + b.size(), a.mutable_data());
        return a;
      },
      py::arg("slope"), py::arg("length"), py::arg("causal") = false);
}

}  // namespace posvec::python
