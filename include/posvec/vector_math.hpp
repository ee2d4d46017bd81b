/// \file
/// Small vector mathematics shared by the stages (embeddings, positional,
/// evaluation, analysis), so none of them depends on another for it.
#pragma once

#include <cstddef>

namespace posvec {

/// Cosine similarity of two n-vectors, accumulated in double; 0 when either
/// vector is all zeros. Both pointers must address `n` values; no allocation.
double cosine(const float* a, const float* b, std::size_t n);
/// cosine() of two float64 n-vectors, accumulated in double; 0 when either is all zeros.
double cosine(const double* a, const double* b, std::size_t n);

}  // namespace posvec
