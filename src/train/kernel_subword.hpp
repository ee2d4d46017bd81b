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

// One centre word's window as fastText's skip-gram trains it: the centre's composed
// vector (its mean, in hidden[0..dim)) predicts each of the m contexts in turn, each
// against its own `negative` noise words negatives[j * negative .. (j + 1) * negative)
// (one equal to its context is skipped); every output row is updated at once, and
// after each pair the composed vector moves as composing it again from rows that
// took the pair's gradient would move it (the gradient, times sum c^2 / length for
// rows listed c times), so each pair sees the ones before it as in fastText. The window's summed gradient is added,
// whole, to each of the centre's rows at the end (hidden[dim..2 dim) holds it and
// grad[0..dim) each pair's). Returns the loss.
double subwordWindow(float* input, float* output, std::size_t dim, const SubwordRows& rows,
                     std::int32_t centre, const std::int32_t* contexts, std::size_t m,
                     const std::int32_t* negatives, std::size_t negative, float alpha,
                     const Sigmoid& sigmoid, float* hidden, float* grad);

// The blocked update (no longer what training runs: its scores, all from the values
// before the block, cost SimLex-999 and unknown words their quality; see
// docs/benchmarks.md). One combined block (kernel_batched.hpp's CombinedBlock, `block.ids` holding
// vocabulary ids) with composed input vectors: each distinct context word's mean
// is formed once into scratch, combinedBlock() trains the scratch rows and the
// block's output rows (gathered too, so one local id names both), then each
// scratch row's change is added to every row of its word and each output row's
// change to its row. Returns the loss; adds the pairs to `predictions`.
double subwordBlock(float* input, float* output, std::size_t dim, const SubwordRows& rows,
                    const CombinedBlock& block, float alpha, const Sigmoid& sigmoid,
                    ThreadState& state, BatchedPath path, std::int64_t& predictions);

// Each word's rows for config's n-gram settings: word i's own row i, then
// ngramRows(word, minn, maxn, bucket, words.size()) (posvec/subwords.hpp).
SubwordRows subwordRowsOf(const std::vector<std::string>& words, const TrainConfig& config,
                          int threads);

// The mean of word w's rows into out[0..dim).
void composeWord(const float* input, std::size_t dim, const SubwordRows& rows, std::int32_t w,
                 float* out);

// Skip-gram (subwordWindow for each centre word, fastText's skipgram) or CBOW (the
// mean of every row of every context word predicts the centre, fastText's cbow),
// both with negative sampling, over composed vectors.
std::unique_ptr<TrainKernel> makeSubwordKernel(const TrainConfig& config,
                                               const KernelShared& shared);

}  // namespace posvec::detail
