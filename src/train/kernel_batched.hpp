// Batched skip-gram negative sampling (Ji et al. 2016, "Parallelizing Word2Vec in
// Shared and Distributed Memory"): all context words of one centre word share one
// set of negatives, so a window is three small matrix products (scores, then the
// two gradients) instead of 2·m·(K+1) vector operations, and every row involved
// is read and written once per window instead of once per (context, target) pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "half.hpp"
#include "kernels.hpp"

namespace posvec {
class KernelProbe;
}

namespace posvec::detail {

// Which inner loops run: Auto picks AVX-512 when the library was compiled for it
// (the tests compare the two).
enum class BatchedPath { Auto, Portable, Avx512 };
// True when this build contains the AVX-512 loops (compiled with -march supporting it).
bool batchedAvx512Compiled();

// One window: the m context rows of `input` (row-major, `dim` columns) against the
// n target rows of `output`. targets[0] is the positive (label 1), the others
// negatives (label 0); a negative equal to targets[0] is skipped, as the classic
// kernel skips it. Every score and gradient comes from the values before this
// update (the classic kernel updates an output row before the next pair reads
// it); a row listed twice receives the sum of its gradients. Returns the loss
// (sum of -log sigma(+-score) over the m x n' predictions).
double batchedWindow(float* input, float* output, std::size_t dim, const std::int32_t* contexts,
                     std::size_t m, const std::int32_t* targets, std::size_t n, float alpha,
                     const Sigmoid& sigmoid, ThreadState& state,
                     BatchedPath path = BatchedPath::Auto,
                     WeightType weights = WeightType::Fp32);

// 16-bit weights (WeightType Bf16 or Fp16): `input` and `output` above then hold
// 16-bit values (cast to float*), and every block's new values are written back
// with stochastic rounding, one draw of state.rng per block seeding one RoundingBits
// stream (half.hpp). bfloat16 on the AVX-512 path of a CPU with AVX-512 BF16 is
// updated in place (batchedBf16DotProducts). Otherwise each block's rows are
// widened to float32 scratch, updated there and narrowed back, taking the stream in
// turn (contexts first, then targets). widenRow converts dim values exactly;
// narrowRow rounds them stochastically with the next bits of `bits` (stepped once
// per 32 values), or of a fresh RoundingBits(seed).
void widenRow(const std::uint16_t* src, float* dst, std::size_t dim, WeightType type,
              BatchedPath path = BatchedPath::Auto);
void narrowRow(const float* src, std::uint16_t* dst, std::size_t dim, WeightType type,
               RoundingBits& bits, BatchedPath path = BatchedPath::Auto);
void narrowRow(const float* src, std::uint16_t* dst, std::size_t dim, WeightType type,
               std::uint32_t seed, BatchedPath path = BatchedPath::Auto);
// True when this build updates bfloat16 weights in place with AVX-512 BF16 dot
// products (the AVX-512 path): the gradient coefficients are then rounded to
// bfloat16 before they multiply, every product and sum stays float32.
bool batchedBf16DotProducts();

// Context combining (Rengasamy et al. 2017, "Optimizing Word2Vec Performance on
// Multicore Systems"): `count` consecutive centre words of one sentence form one
// block. The rows are every distinct word their windows reach and the columns the
// distinct centres plus `negativeCount` noise words shared by the whole block, so
// a block of B centres reads about B + 2·window input and B + negatives output
// rows where B windows read B·(2·window + 1 + negative).
struct CombinedBlock {
  const std::int32_t* ids;  // the sentence
  std::size_t length;
  std::size_t first, count;      // centres [first, first + count)
  const std::int32_t* reach;     // count reaches, each >= 1 (the shrunk window)
  const std::int32_t* negatives; // negativeCount noise words
  std::size_t negativeCount;
  // Each (context, centre) pair is trained as a positive and against every shared
  // negative with this weight (the configured negatives per pair / negativeCount,
  // so the expected gradient is word2vec's); a negative equal to the pair's centre
  // is skipped for that pair.
  float negativeWeight;
};
// One block's update, all scores from the values before it (as batchedWindow).
// Adds the number of (context, centre) pairs to `predictions`; returns the loss
// (weighted as the gradients are).
double combinedBlock(float* input, float* output, std::size_t dim, const CombinedBlock& block,
                     float alpha, const Sigmoid& sigmoid, ThreadState& state,
                     BatchedPath path, std::int64_t& predictions);

// The skip-gram negative-sampling kernel built on batchedWindow, with the classic
// kernel's window shrinking and noise distribution.
std::unique_ptr<TrainKernel> makeBatchedSkipGram(const TrainConfig& config,
                                                 const KernelShared& shared,
                                                 BatchedPath path = BatchedPath::Auto);
// The same kernel with `probe` shown every block before its arithmetic
// (posvec/kernel_probe.hpp): a separate instantiation, so the one above pays nothing.
std::unique_ptr<TrainKernel> makeBatchedSkipGram(const TrainConfig& config,
                                                 const KernelShared& shared, KernelProbe& probe);

}  // namespace posvec::detail
