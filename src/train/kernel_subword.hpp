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

// subwordWindow on 16-bit rows (`type` Bf16 or Fp16; the model's packed matrices):
// the centre's rows and each output row widened exactly, the arithmetic in float32,
// each output row rounded back stochastically after its pair and each of the
// centre's rows after the window's gradient is added (in that order, the bits from
// `bits`). `wide` holds dim floats of scratch. BatchedPath::Portable keeps to the
// portable loops; the AVX-512 ones round with the same bits.
double subwordWindow16(std::uint16_t* input, std::uint16_t* output, std::size_t dim,
                       const SubwordRows& rows, std::int32_t centre, const std::int32_t* contexts,
                       std::size_t m, const std::int32_t* negatives, std::size_t negative,
                       float alpha, const Sigmoid& sigmoid, WeightType type, float* hidden,
                       float* grad, float* wide, RoundingBits& bits, BatchedPath path);

// Each word's rows for config's n-gram settings: word i's own row i, then
// ngramRows(word, minn, maxn, bucket, words.size()) (posvec/subwords.hpp).
SubwordRows subwordRowsOf(const std::vector<std::string>& words, const TrainConfig& config,
                          int threads);

// The mean of word w's rows into out[0..dim), from float32 or 16-bit rows.
void composeWord(const float* input, std::size_t dim, const SubwordRows& rows, std::int32_t w,
                 float* out);
void composeWord(const std::uint16_t* input, std::size_t dim, const SubwordRows& rows,
                 std::int32_t w, float* out, WeightType type);

// Skip-gram (subwordWindow for each centre word, fastText's skipgram) or CBOW (the
// mean of every row of every context word predicts the centre, fastText's cbow),
// both with negative sampling, over composed vectors.
std::unique_ptr<TrainKernel> makeSubwordKernel(const TrainConfig& config,
                                               const KernelShared& shared);

}  // namespace posvec::detail
