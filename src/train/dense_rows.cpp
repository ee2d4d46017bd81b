#include "dense_rows.hpp"

#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "half.hpp"
#include "huge_pages.hpp"
#include "posvec/error.hpp"

namespace posvec::detail {

void drawStoredRow(void* to, std::size_t dim, std::uint64_t seed, std::uint64_t r,
                   PackedWeights packed) {
  if (packed == PackedWeights::None) {
    initInputRow(static_cast<float*>(to), dim, seed, r);
    return;
  }
  thread_local std::vector<float> row;
  row.resize(dim);
  initInputRow(row.data(), dim, seed, r);
  auto* h = static_cast<std::uint16_t*>(to);
  for (std::size_t j = 0; j < dim; ++j)
    h[j] = packed == PackedWeights::Bf16 ? floatToBf16(row[j]) : floatToFp16(row[j]);
}

DenseRows::DenseRows(SubwordRows& rows, std::size_t modelRows, std::size_t dim,
                     PackedWeights packed)
    : dim_(dim),
      packed_(packed),
      rowBytes_(dim * (packed == PackedWeights::None ? sizeof(float) : sizeof(std::uint16_t))) {
  // Positions in the order the lists name rows: words are most frequent first.
  position_.assign(modelRows, -1);
  for (std::int32_t& r : rows.rows) {
    std::int32_t& at = position_[static_cast<std::size_t>(r)];
    if (at < 0) {
      at = static_cast<std::int32_t>(source_.size());
      source_.push_back(r);
    }
    r = at;
  }
}

void DenseRows::gather(const MatrixF& input, std::int64_t undrawnFrom, std::uint64_t seed,
                       int threads) {
  undrawnFrom_ = undrawnFrom;
  seed_ = seed;
  threads_ = std::max(1, threads);
  // Sized in float32 rows: 16-bit rows fill the first half of as many.
  const auto cols = std::max<Eigen::Index>(input.cols(), 1);
  const std::size_t perRow = static_cast<std::size_t>(cols) * sizeof(float);
  const auto rows =
      static_cast<Eigen::Index>((source_.size() * rowBytes_ + perRow - 1) / perRow);
  dense_.resize(rows, cols);
  adviseHugePages(dense_);  // before the first touch
  const auto* from = reinterpret_cast<const char*>(input.data());
  auto* to = reinterpret_cast<char*>(dense_.data());
  const auto n = static_cast<std::int64_t>(source_.size());
#pragma omp parallel for num_threads(std::max(1, threads)) schedule(static)
  for (std::int64_t p = 0; p < n; ++p) {
    const std::int64_t r = source_[static_cast<std::size_t>(p)];
    char* row = to + static_cast<std::size_t>(p) * rowBytes_;
    if (undrawnFrom >= 0 && r >= undrawnFrom)
      drawStoredRow(row, dim_, seed, static_cast<std::uint64_t>(r), packed_);
    else
      std::memcpy(row, from + static_cast<std::size_t>(r) * rowBytes_, rowBytes_);
  }
}

void DenseRows::scatter(MatrixF& input, int threads, bool release) {
  const auto* from = reinterpret_cast<const char*>(dense_.data());
  auto* to = reinterpret_cast<char*>(input.data());
  const auto n = static_cast<std::int64_t>(source_.size());
  threads = std::max(1, threads);
  // In pieces of about 16 MiB, each piece's whole pages given back once copied.
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const auto piece = static_cast<std::int64_t>(std::max<std::size_t>(1, (16u << 20) / rowBytes_));
  for (std::int64_t lo = 0; lo < n; lo += piece) {
    const std::int64_t hi = std::min(n, lo + piece);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t p = lo; p < hi; ++p)
      std::memcpy(to + static_cast<std::size_t>(source_[static_cast<std::size_t>(p)]) * rowBytes_,
                  from + static_cast<std::size_t>(p) * rowBytes_, rowBytes_);
    if (release) {
      const auto begin = reinterpret_cast<std::uintptr_t>(from) + static_cast<std::size_t>(lo) * rowBytes_;
      const auto end = reinterpret_cast<std::uintptr_t>(from) + static_cast<std::size_t>(hi) * rowBytes_;
      const std::uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
      if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
    }
  }
  if (release) dense_ = MatrixF();
  if (undrawnFrom_ < 0) return;
  // The rows no word uses, drawn now.
  std::vector<char> used(static_cast<std::size_t>(input.rows()), 0);
  for (const std::int32_t r : source_) used[static_cast<std::size_t>(r)] = 1;
  drawRows(input, undrawnFrom_, seed_, packed_, threads, &used);
  undrawnFrom_ = -1;
}

DenseRows& DenseRows::of(UnplacedRows& rows) {
  auto* dense = dynamic_cast<DenseRows*>(&rows);
  if (!dense) throw ConfigError("the model's unplaced rows are not the trainer's gathered rows");
  return *dense;
}

const DenseRows& DenseRows::of(const UnplacedRows& rows) {
  return of(const_cast<UnplacedRows&>(rows));
}

void DenseRows::toPositions(SubwordRows& rows) const {
  for (std::int32_t& r : rows.rows) r = position_[static_cast<std::size_t>(r)];
}

void DenseRows::rowsAsFloat(const MatrixF& input, std::int64_t first, std::int64_t n, float* out,
                            int threads) const {
  const auto* dense = reinterpret_cast<const char*>(dense_.data());
  const auto* model = reinterpret_cast<const char*>(input.data());
#pragma omp parallel num_threads(threads > 0 ? threads : threads_)
  {
    std::vector<std::uint16_t> drawn(packed_ == PackedWeights::None ? 0 : dim_);
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t r = first + i;
      float* to = out + static_cast<std::size_t>(i) * dim_;
      const std::int32_t at = position_[static_cast<std::size_t>(r)];
      const bool undrawn = at < 0 && undrawnFrom_ >= 0 && r >= undrawnFrom_;
      if (undrawn && packed_ == PackedWeights::None) {
        initInputRow(to, dim_, seed_, static_cast<std::uint64_t>(r));
        continue;
      }
      const char* row = at >= 0 ? dense + static_cast<std::size_t>(at) * rowBytes_
                                : model + static_cast<std::size_t>(r) * rowBytes_;
      if (undrawn) {
        drawStoredRow(drawn.data(), dim_, seed_, static_cast<std::uint64_t>(r), packed_);
        row = reinterpret_cast<const char*>(drawn.data());
      }
      if (packed_ == PackedWeights::None) {
        std::memcpy(to, row, rowBytes_);
        continue;
      }
      const auto* h = reinterpret_cast<const std::uint16_t*>(row);
      for (std::size_t j = 0; j < dim_; ++j)
        to[j] = packed_ == PackedWeights::Bf16 ? bf16ToFloat(h[j]) : fp16ToFloat(h[j]);
    }
  }
}

std::size_t DenseRows::distinctRows(const SubwordRows& rows, std::size_t modelRows) {
  std::vector<char> seen(modelRows, 0);
  std::size_t n = 0;
  for (const std::int32_t r : rows.rows) {
    n += seen[static_cast<std::size_t>(r)] == 0;
    seen[static_cast<std::size_t>(r)] = 1;
  }
  return n;
}

bool DenseRows::pays(std::size_t used, std::size_t modelRows, std::size_t rowBytes) {
  if (modelRows == 0 || rowBytes == 0) return false;
  const double share = static_cast<double>(used) / static_cast<double>(modelRows);
  const double perPage = static_cast<double>(::sysconf(_SC_PAGESIZE)) / static_cast<double>(rowBytes);
  return std::pow(1.0 - share, std::max(1.0, perPage)) >= share;
}

void drawRows(MatrixF& input, std::int64_t from, std::uint64_t seed, PackedWeights packed,
              int threads, const std::vector<char>* skip) {
  const auto dim = static_cast<std::size_t>(input.cols());
  const std::size_t rowBytes =
      dim * (packed == PackedWeights::None ? sizeof(float) : sizeof(std::uint16_t));
  auto* to = reinterpret_cast<char*>(input.data());
  const std::int64_t rows = input.rows() - from;
  if (rows <= 0) return;
  // Each thread a contiguous range, its pages faulted in with one call.
#pragma omp parallel num_threads(std::max(1, threads))
  {
    const std::int64_t t = omp_get_thread_num(), k = omp_get_num_threads();
    const std::int64_t lo = from + rows * t / k, hi = from + rows * (t + 1) / k;
    populatePages(to + static_cast<std::size_t>(lo) * rowBytes,
                  static_cast<std::size_t>(hi - lo) * rowBytes);
    for (std::int64_t r = lo; r < hi; ++r)
      if (!skip || !(*skip)[static_cast<std::size_t>(r)])
        drawStoredRow(to + static_cast<std::size_t>(r) * rowBytes, dim, seed,
                      static_cast<std::uint64_t>(r), packed);
  }
}

bool DenseRows::finite() const {
  const std::size_t values = source_.size() * dim_;
  if (packed_ == PackedWeights::None) {
    const float* p = dense_.data();
    float sum = 0;  // x - x: 0 for a finite x, NaN otherwise
#pragma omp simd reduction(+ : sum)
    for (std::size_t i = 0; i < values; ++i) sum += p[i] - p[i];
    return sum == 0;
  }
  // A 16-bit value is infinite or NaN when its exponent bits are all ones.
  const std::uint16_t exponent = packed_ == PackedWeights::Bf16 ? 0x7F80 : 0x7C00;
  const auto* h = reinterpret_cast<const std::uint16_t*>(dense_.data());
  std::uint16_t bad = 0;
  for (std::size_t i = 0; i < values; ++i) bad |= ((h[i] & exponent) == exponent) ? 1 : 0;
  return bad == 0;
}

}  // namespace posvec::detail
