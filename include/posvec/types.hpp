/// \file
/// Basic value types shared by every stage.
///
/// Eigen's alignment is part of posvec's ABI: a matrix the library allocated is
/// freed by the caller's code, and Eigen allocates and frees differently for each
/// alignment (a program built without -march=native against the AVX-512 library
/// crashed with a double free). The library is built with 64 bytes; a program
/// gets the same here, whatever its flags, or an error if it asked for another.
/// Include posvec headers before Eigen, or compile with
/// `-DEIGEN_MAX_ALIGN_BYTES=64 -DEIGEN_MAX_STATIC_ALIGN_BYTES=64` (what the CMake
/// target posvec::posvec and `pkg-config --cflags posvec` add).
#pragma once

#if defined(EIGEN_WORLD_VERSION)
// Eigen came first: it already chose its alignment, which must be posvec's.
#if EIGEN_MAX_ALIGN_BYTES != 64 || EIGEN_MAX_STATIC_ALIGN_BYTES != 64
#error \
    "posvec needs Eigen's alignment at 64 bytes: compile with -DEIGEN_MAX_ALIGN_BYTES=64 -DEIGEN_MAX_STATIC_ALIGN_BYTES=64 (pkg-config --cflags posvec, or link the CMake target posvec::posvec)"
#endif
#else
#if !defined(EIGEN_MAX_ALIGN_BYTES)
/// Eigen's heap alignment in bytes, fixed at the library's 64 (see types.hpp).
#define EIGEN_MAX_ALIGN_BYTES 64
#elif EIGEN_MAX_ALIGN_BYTES != 64
#error "posvec needs EIGEN_MAX_ALIGN_BYTES=64 (the library's Eigen alignment)"
#endif
#if !defined(EIGEN_MAX_STATIC_ALIGN_BYTES)
/// Eigen's alignment of fixed-size objects in bytes, fixed at the library's 64.
#define EIGEN_MAX_STATIC_ALIGN_BYTES 64
#elif EIGEN_MAX_STATIC_ALIGN_BYTES != 64
#error "posvec needs EIGEN_MAX_STATIC_ALIGN_BYTES=64 (the library's Eigen alignment)"
#endif
#endif
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

namespace posvec {

/// A dynamic float32 matrix, row-major so that a word's vector (a row) is
/// contiguous: word vectors (vocabulary × dimension) and training weights.
using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
/// The float64 counterpart of MatrixF: position encodings, attention inputs and maps.
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// One sentence as UTF-8 tokens.
using Sentence = std::vector<std::string>;

/// Index of a word in a Vocabulary or Embeddings (its row): 0 is the most frequent
/// word; -1 means "absent" where a function says so.
using WordId = std::int32_t;

}  // namespace posvec
