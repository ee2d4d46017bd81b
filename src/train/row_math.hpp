// The two row operations every training kernel's scalar loops use, written once so
// the compiler vectorises them the same way everywhere.
#pragma once

#include <cstddef>

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

}  // namespace posvec::detail
