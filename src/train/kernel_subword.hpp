// Subword (fastText) training: a word's input vector is the mean of its input
// rows (its own and its character n-grams', KernelShared::subwords), and the
// gradient of that mean reaches every one of its rows whole, unscaled (fastText's
// update for unsupervised models).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel_batched.hpp"
#include "kernels.hpp"

namespace posvec::detail {

// One combined block (kernel_batched.hpp's CombinedBlock, `block.ids` holding
// vocabulary ids) in fastText's orientation: each distinct centre word's mean is
// formed once into scratch, weightedBlock() trains the scratch rows against the
// output rows of every context word in the centres' windows and of the shared
// negatives, then each scratch row's change is added to every row of its word.
// Returns the loss; adds the (centre, context) pairs to `predictions`. With 16-bit
// `weights` both matrices hold 16-bit values (cast to float*): the sums are float32
// on rows widened exactly, and every changed row is rounded back stochastically
// from one stream of bits seeded by one draw of state.rng per block.
double subwordBlock(float* input, float* output, std::size_t dim, const SubwordRows& rows,
                    const CombinedBlock& block, float alpha, const Sigmoid& sigmoid,
                    ThreadState& state, BatchedPath path, std::int64_t& predictions,
                    WeightType weights = WeightType::Fp32);

// Each word's rows for config's n-gram settings: word i's own row i, then
// ngramRows(word, minn, maxn, bucket, words.size()) (posvec/subwords.hpp).
SubwordRows subwordRowsOf(const std::vector<std::string>& words, const TrainConfig& config,
                          int threads);

// The mean of word w's rows into out[0..dim), from float32 or 16-bit rows.
void composeWord(const float* input, std::size_t dim, const SubwordRows& rows, std::int32_t w,
                 float* out);
void composeWord(const std::uint16_t* input, std::size_t dim, const SubwordRows& rows,
                 std::int32_t w, float* out, WeightType type);

// Skip-gram (combined blocks as the batched kernel trains them) or CBOW (the mean
// of every row of every context word predicts the centre, fastText's cbow), both
// with negative sampling, over composed vectors.
std::unique_ptr<TrainKernel> makeSubwordKernel(const TrainConfig& config,
                                               const KernelShared& shared,
                                               BatchedPath path = BatchedPath::Auto);

}  // namespace posvec::detail
