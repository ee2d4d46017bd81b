// The row operations every training kernel's scalar loops use, written once so the
// compiler vectorises them the same way everywhere, and the kernels' row prefetch.
#pragma once

#include <cstddef>
#include <cstdint>

namespace posvec::detail {

// a · b over n floats.
inline float rowDot(const float* __restrict a, const float* __restrict b, std::size_t n) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// y += a * x over n floats.
inline void rowAxpy(float a, const float* __restrict x, float* __restrict y, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// Where prefetchLines brings a row: IntoL2 (prefetcht1) for rows a window or more
// ahead, more of them than L1 holds beside the current window's; ForWrite
// (prefetchw, into L1) for rows a few steps ahead in the loop that updates them.
enum class Prefetch { IntoL2, ForWrite };

// Every cache line of [p, p + bytes): a row whose start is not on a line boundary
// (dim 300: 1,200-byte rows) ends in one more line than bytes / 64 steps from its
// start reach, and that last line would be the row's miss.
inline void prefetchLines(const void* p, std::size_t bytes, Prefetch how) {
  auto line = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{63};
  const auto end = reinterpret_cast<std::uintptr_t>(p) + bytes;
  for (; line < end; line += 64)
    if (how == Prefetch::ForWrite)
      __builtin_prefetch(reinterpret_cast<const void*>(line), 1, 3);
    else
      __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 2);
}

}  // namespace posvec::detail
