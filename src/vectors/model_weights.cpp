// Packing a model's matrices into 16 bits and back, in place (model_state.hpp).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "formats_detail.hpp"
#include "half.hpp"
#include "posvec/error.hpp"
#include "posvec/model_state.hpp"

namespace posvec {

namespace {

std::uint16_t* halves(MatrixF& m) { return reinterpret_cast<std::uint16_t*>(m.data()); }
const std::uint16_t* halves(const MatrixF& m) {
  return reinterpret_cast<const std::uint16_t*>(m.data());
}

// The whole pages of the buffer's unused second half go back to the system; they
// read as zero and are allocated again when written (unpacking).
void releaseSecondHalf(MatrixF& m) {
#if defined(__linux__)
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page <= 0 || m.size() == 0) return;
  const auto p = static_cast<std::uintptr_t>(page);
  const auto begin = reinterpret_cast<std::uintptr_t>(halves(m) + m.size());
  const auto end = reinterpret_cast<std::uintptr_t>(m.data() + m.size());
  const std::uintptr_t from = (begin + p - 1) / p * p, to = end / p * p;
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
#else
  (void)m;
#endif
}

// Float i (4 bytes at 4i) becomes half i (2 bytes at 2i): forwards, every write
// lands on floats already read.
void pack(MatrixF& m, PackedWeights to) {
  float* f = m.data();
  std::uint16_t* h = halves(m);
  const auto n = static_cast<std::size_t>(m.size());
  for (std::size_t i = 0; i < n; ++i) {
    const float x = f[i];
    h[i] = to == PackedWeights::Bf16 ? detail::floatToBf16(x) : detail::floatToFp16(x);
  }
  releaseSecondHalf(m);
}

// Backwards: float i covers halves 2i and 2i + 1, both at or after half i.
void unpack(MatrixF& m, PackedWeights from) {
  float* f = m.data();
  const std::uint16_t* h = halves(m);
  for (auto i = static_cast<std::size_t>(m.size()); i-- > 0;) {
    const std::uint16_t x = h[i];
    f[i] = from == PackedWeights::Bf16 ? detail::bf16ToFloat(x) : detail::fp16ToFloat(x);
  }
}

}  // namespace

void detail::requirePlaced(const ModelState& model, const std::string& use) {
  if (model.unplacedRows)
    throw ConfigError("cannot " + use +
                      ": the model's input rows are not placed yet (trained with deferred "
                      "rows, to be written as they are); placeRows(model) completes it");
}

void detail::writeUnplacedRows(std::ostream& out, const ModelState& model) {
  const auto rows = static_cast<std::uint64_t>(model.input.rows());
  const auto cols = static_cast<std::uint64_t>(std::max<Eigen::Index>(model.input.cols(), 1));
  const std::uint64_t chunk = std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / cols);
  std::vector<float> values(chunk * cols);
  for (std::uint64_t r = 0; r < rows; r += chunk) {
    const std::uint64_t n = std::min(chunk, rows - r);
    model.unplacedRows->rowsAsFloat(model.input, static_cast<std::int64_t>(r),
                                    static_cast<std::int64_t>(n), values.data(), 0);
    writeFloats(out, values.data(), n * cols);
  }
}

void unpackWeights(ModelState& model) {
  detail::requirePlaced(model, "convert the model's weights");
  if (model.packed == PackedWeights::None) return;
  unpack(model.input, model.packed);
  unpack(model.output, model.packed);
  model.packed = PackedWeights::None;
}

void packWeights(ModelState& model, PackedWeights to) {
  if (model.packed == to) return;
  detail::requirePlaced(model, "convert the model's weights");
  unpackWeights(model);
  if (to == PackedWeights::None) return;
  pack(model.input, to);
  pack(model.output, to);
  model.packed = to;
}

void readWeightRow(const ModelState& model, const MatrixF& matrix, Eigen::Index r, float* out) {
  const auto cols = static_cast<std::size_t>(matrix.cols());
  const std::size_t first = static_cast<std::size_t>(r) * cols;
  if (model.packed == PackedWeights::None) {
    for (std::size_t j = 0; j < cols; ++j) out[j] = matrix.data()[first + j];
    return;
  }
  const std::uint16_t* h = halves(matrix) + first;
  for (std::size_t j = 0; j < cols; ++j)
    out[j] = model.packed == PackedWeights::Bf16 ? detail::bf16ToFloat(h[j])
                                                 : detail::fp16ToFloat(h[j]);
}

}  // namespace posvec
