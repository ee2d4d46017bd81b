// Batched skip-gram negative sampling (Ji et al. 2016, "Parallelizing Word2Vec in
// Shared and Distributed Memory"): all context words of one centre word share one
// set of negatives, so a window is three small matrix products (scores, then the
// two gradients) instead of 2·m·(K+1) vector operations, and every row involved
// is read and written once per window instead of once per (context, target) pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>
#endif

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
                     BatchedPath path = BatchedPath::Auto, WeightType weights = WeightType::Fp32);

// 16-bit weights (WeightType Bf16 or Fp16): `input` and `output` above then hold
// 16-bit values (cast to float*), and every block's new values are written back
// with stochastic rounding, one draw of state.rng per block seeding one RoundingBits
// stream (half.hpp). bfloat16 on the AVX-512 path of a CPU with AVX-512 BF16 is
// updated in place (batchedBf16InPlace). Otherwise each block's rows are
// widened to float32 scratch, updated there and narrowed back, taking the stream in
// turn (contexts first, then targets). widenRow converts dim values exactly;
// narrowRow rounds them stochastically with the next bits of `bits` (stepped once
// per 32 values), or of a fresh RoundingBits(seed).
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
// RoundingBits on every lane at once: steps the 16 xorshift lanes (the next block
// of 32 values).
inline void stepRoundingLanes(__m512i& lanes) {
  lanes = _mm512_xor_si512(lanes, _mm512_slli_epi32(lanes, 13));
  lanes = _mm512_xor_si512(lanes, _mm512_srli_epi32(lanes, 17));
  lanes = _mm512_xor_si512(lanes, _mm512_slli_epi32(lanes, 5));
}
// The lanes of the next 32 values when `left` remain.
inline __mmask32 tailMask32(std::size_t left) {
  return left >= 32 ? __mmask32(0xFFFFFFFFu) : static_cast<__mmask32>((1u << left) - 1);
}
// 32 values (x0's, then x1's) rounded stochastically to bfloat16 with the current
// bits of `lanes` (floatToBf16Stochastic: value p < 16 takes the low 16 bits of
// lane p, value 16 + p its high 16 bits), packed in order.
inline __m512i roundBf16Stochastic(__m512 x0, __m512 x1, __m512i lanes) {
  // Word 2k + 1 of (first, second): the upper halves of both vectors' 32 lanes.
  const __m512i upper =
      _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29, 27,
                       25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  const __m512i r0 = _mm512_and_si512(lanes, _mm512_set1_epi32(0xFFFF));
  const __m512i r1 = _mm512_srli_epi32(lanes, 16);
  return _mm512_permutex2var_epi16(_mm512_add_epi32(_mm512_castps_si512(x0), r0), upper,
                                   _mm512_add_epi32(_mm512_castps_si512(x1), r1));
}
#endif

void widenRow(const std::uint16_t* src, float* dst, std::size_t dim, WeightType type,
              BatchedPath path = BatchedPath::Auto);
void narrowRow(const float* src, std::uint16_t* dst, std::size_t dim, WeightType type,
               RoundingBits& bits, BatchedPath path = BatchedPath::Auto);
void narrowRow(const float* src, std::uint16_t* dst, std::size_t dim, WeightType type,
               std::uint32_t seed, BatchedPath path = BatchedPath::Auto);
// True when this build updates bfloat16 weights in place (the AVX-512 path of a CPU
// with AVX-512 BF16): the scores are AVX-512 BF16 dot products of the 16-bit rows,
// the update one of Bf16Update's two kernels.
bool batchedBf16InPlace();
// The update kernel Bf16Update::Auto runs on this CPU: Pairs on AMD, whose cores run
// a 512-bit AVX-512 BF16 dot product in about the time of one 512-bit FMA (so pairs
// halve the update's arithmetic), Halves elsewhere (on Intel's a dot product costs
// about two FMAs, so pairing saves nothing and its shuffles come on top; measured in
// docs/design/16-bit-weights.md).
// TrainConfig::bf16Update other than Auto overrides it (the CLI fills it from the
// environment variable POSVEC_BF16_UPDATE).
Bf16Update batchedBf16Update();

// Context combining (Rengasamy et al. 2017, "Optimizing Word2Vec Performance on
// Multicore Systems"): `count` consecutive centre words of one sentence form one
// block. The rows are every distinct word their windows reach and the columns the
// distinct centres plus `negativeCount` noise words shared by the whole block, so
// a block of B centres reads about B + 2·window input and B + negatives output
// rows where B windows read B·(2·window + 1 + negative).
struct CombinedBlock {
  const std::int32_t* ids;  // the sentence
  std::size_t length;
  std::size_t first, count;       // centres [first, first + count)
  const std::int32_t* reach;      // count reaches, each >= 1 (the shrunk window)
  const std::int32_t* negatives;  // negativeCount noise words
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
                     float alpha, const Sigmoid& sigmoid, ThreadState& state, BatchedPath path,
                     std::int64_t& predictions);

// The skip-gram negative-sampling kernel built on batchedWindow, with the classic
// kernel's window shrinking and noise distribution.
std::unique_ptr<TrainKernel> makeBatchedSkipGram(const TrainConfig& config,
                                                 const KernelShared& shared,
                                                 BatchedPath path = BatchedPath::Auto);
// The same kernel with `probe` shown every block before its arithmetic
// (kernel_probe.hpp): a separate instantiation, so the one above pays nothing.
std::unique_ptr<TrainKernel> makeBatchedSkipGram(const TrainConfig& config,
                                                 const KernelShared& shared, KernelProbe& probe);

}  // namespace posvec::detail
