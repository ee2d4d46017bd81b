// The kernel probes of train_kernel's `memory` and `cache` modes
// (src/train/kernel_probe.hpp), which time the two halves of the batched kernel's
// blocks apart. Neither trains the model: its matrices are left as they were.
// The kernel tests check them too (tests/kernel_batched_test.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernel_probe.hpp"

namespace posvec::bench {

// `memory`: every block reads and writes its rows once (x + 0 is x) and computes
// nothing (the loss is 0): what the row traffic, the prefetches and the set-up
// cost without the arithmetic.
class RowTrafficProbe final : public KernelProbe {
 public:
  bool beforeUpdate(KernelBlock& b) override {
    for (std::size_t u = 0; u < b.contextCount; ++u) touch(b.contexts[u], b.dim, b.valueBytes);
    for (std::size_t v = 0; v < b.targetCount; ++v) touch(b.targets[v], b.dim, b.valueBytes);
    return false;
  }

 private:
  static void touch(float* row, std::size_t dim, std::size_t valueBytes) {
    if (valueBytes == 2) {
      // bfloat16 rows: their bytes as floats (pairs of values), read and written by
      // the x + 0 below, which the compiler must keep (an integer x | 0 it drops);
      // an odd last value by itself.
      touch(row, dim / 2, 4);
      if (dim % 2) {
        volatile std::uint16_t* last = reinterpret_cast<std::uint16_t*>(row) + dim - 1;
        *last = *last;
      }
      return;
    }
#pragma omp simd
    for (std::size_t j = 0; j < dim; ++j) row[j] += 0.0f;
  }
};

// `cache`: every block computes as training does, on the same draws and the same
// shape, but on the rows of a small per-thread model that stays in cache, and
// nothing is prefetched: what the set-up and the arithmetic cost without waiting
// for rows. Row r of either matrix becomes row r mod kRows of the stand-in (200 KiB
// at dim 100, 1 MiB at dim 512). Started as the trainer starts its matrices (input
// rows as initialInputRow gives them, output zero), it trains as such a model
// would, with scores in the tables' range. Two rows of a block can share a
// stand-in row; the arithmetic is the same.
class InCacheProbe final : public KernelProbe {
 public:
  static constexpr std::size_t kRows = 256;

  bool prefetches() const override { return false; }

  bool beforeUpdate(KernelBlock& b) override {
    std::vector<float>& rows = standIn(b.dim);
    if (b.valueBytes == 2) {  // bfloat16 rows: the stand-in rows' values in bfloat16
      std::vector<std::uint16_t>& half = standInBf16(rows, id_);
      auto at = [&](std::size_t r) { return reinterpret_cast<float*>(half.data() + r * b.dim); };
      for (std::size_t u = 0; u < b.contextCount; ++u)
        b.contexts[u] = at(static_cast<std::size_t>(b.contextIds[u]) % kRows);
      for (std::size_t v = 0; v < b.targetCount; ++v)
        b.targets[v] = at(kRows + static_cast<std::size_t>(b.targetIds[v]) % kRows);
      return true;
    }
    for (std::size_t u = 0; u < b.contextCount; ++u)
      b.contexts[u] = rows.data() + static_cast<std::size_t>(b.contextIds[u]) % kRows * b.dim;
    for (std::size_t v = 0; v < b.targetCount; ++v)
      b.targets[v] =
          rows.data() + (kRows + static_cast<std::size_t>(b.targetIds[v]) % kRows) * b.dim;
    return true;
  }
  // The calling thread's stand-in rows in bfloat16 for the probe `owner` (each
  // value's upper 16 bits, made once from `rows`).
  static std::vector<std::uint16_t>& standInBf16(const std::vector<float>& rows,
                                                 std::uint64_t owner) {
    thread_local std::vector<std::uint16_t> half;
    thread_local std::uint64_t madeFor = 0;
    if (madeFor != owner || half.size() != rows.size()) {
      madeFor = owner;
      half.resize(rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, &rows[i], 4);
        half[i] = static_cast<std::uint16_t>(bits >> 16);
      }
    }
    return half;
  }

  // The calling thread's stand-in model for this probe: kRows input rows, then
  // kRows output rows.
  // This probe's bfloat16 stand-in rows on the calling thread (after a bfloat16 run).
  std::vector<std::uint16_t>& standInBf16(std::size_t dim) const {
    return standInBf16(standIn(dim), id_);
  }
  std::vector<float>& standIn(std::size_t dim) const {
    thread_local std::vector<float> rows;
    thread_local std::uint64_t owner = 0;
    if (owner != id_ || rows.size() != 2 * kRows * dim) {
      owner = id_;
      rows.assign(2 * kRows * dim, 0.0f);
      for (std::size_t r = 0; r < kRows; ++r) initialInputRow(rows.data() + r * dim, dim, 1, r);
    }
    return rows;
  }

 private:
  static std::uint64_t nextId() {
    static std::atomic<std::uint64_t> last{0};
    return ++last;
  }
  std::uint64_t id_ = nextId();
};

}  // namespace posvec::bench
