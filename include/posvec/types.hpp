// Basic value types shared by every stage.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

namespace posvec {

// Row-major so that a word's vector (a row) is contiguous.
using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One sentence as UTF-8 tokens.
using Sentence = std::vector<std::string>;

using WordId = std::int32_t;

}  // namespace posvec
