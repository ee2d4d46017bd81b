// posvec._posvec's binding of the attention stage (attention.hpp): the maps and
// outputs of scaled dot-product attention over caller-given rows, with rotary (a
// model's configuration or the plain rule), ALiBi or no positions, as float64 NumPy.
#include "posvec/attention.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "posvec/error.hpp"
#include "posvec/positional.hpp"
#include "posvec/rope.hpp"

namespace py = pybind11;

namespace posvec::python {

namespace {

using Rows = py::array_t<double, py::array::c_style | py::array::forcecast>;

py::array_t<double> matrix(const MatrixD& m) {
  py::array_t<double> a({static_cast<py::ssize_t>(m.rows()), static_cast<py::ssize_t>(m.cols())});
  std::copy(m.data(), m.data() + m.size(), a.mutable_data());
  return a;
}

}  // namespace

void bindAttention(py::module_& m) {
  m.def(
      "attention",
      [](const Rows& x, std::size_t heads, std::size_t headDim, bool causal,
         const std::string& positional, std::optional<RopeConfig> rope, const std::string& layout,
         double base, std::int64_t start) {
        if (x.ndim() != 2)
          throw InputError("x must be a matrix of rows (tokens x d_model), got " +
                           std::to_string(x.ndim()) + " dimensions");
        AttentionOptions o;
        o.heads = heads;
        o.headDim = headDim;
        o.causal = causal;
        o.positional = parsePositionMode(positional);
        if (o.positional == PositionMode::Additive)
          throw ConfigError(
              "positional='additive' adds the encodings to the rows: give posvec.encode()'s "
              "rows with positional='none'");
        o.rotaryEncoding = parseEncoding(layout);
        o.rotaryBase = base;
        const auto T = static_cast<std::size_t>(x.shape(0));
        const auto d = static_cast<std::size_t>(x.shape(1));
        if (rope) {
          if (o.positional != PositionMode::Rotary)
            throw ConfigError("rope_config needs positional='rotary'");
          rope->headDim = o.resolvedHeadDim(d);  // the configuration's rule at these heads
          o.rope = *rope;
        }
        MatrixD rows(static_cast<Eigen::Index>(T), static_cast<Eigen::Index>(d));
        std::copy(x.data(), x.data() + x.size(), rows.data());
        AttentionResult r;
        {
          py::gil_scoped_release release;
          const Attention att(d, o);
          r = att.compute(rows, start);
        }
        py::array_t<double> w({static_cast<py::ssize_t>(r.weights.size()),
                               static_cast<py::ssize_t>(T), static_cast<py::ssize_t>(T)});
        double* out = w.mutable_data();
        for (const MatrixD& h : r.weights) out = std::copy(h.data(), h.data() + h.size(), out);
        return py::make_tuple(w, matrix(r.output));
      },
      py::arg("x"), py::arg("heads"), py::arg("head_dim"), py::arg("causal"),
      py::arg("positional"), py::arg("rope"), py::arg("layout"), py::arg("base"),
      py::arg("start"));
}

}  // namespace posvec::python
