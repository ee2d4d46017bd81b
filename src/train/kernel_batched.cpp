#include "kernel_batched.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "half.hpp"
#include "kernel_probe.hpp"
#include "posvec/error.hpp"
#include "row_math.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

// Where this differs from the classic kernel (word2vec.c's skip-gram), and why
// quality holds:
// - Negatives: one set of K noise words per centre word, shared by all its
//   context words, instead of K fresh words per (context, centre) pair. Each
//   context still sees K negatives from the same unigram^0.75 distribution, so
//   every pair's gradient has the same expectation; only the correlation between
//   pairs of one window changes (Ji et al. report equal accuracy).
// - Update timing: the whole window's scores and gradients come from the rows as
//   they were before the window; classic updates an output row after each pair,
//   so the next pair of the window sees it changed. With alpha <= 0.025 the rows
//   move by O(alpha) per window, the same staleness Hogwild threads have anyway.
// - Unchanged: window shrinking (one uniform draw per centre word), subsampling
//   and the learning-rate schedule (in the trainer), the noise sampler, the
//   sigmoid/softplus tables (the measured cost is memory, not the sigmoid), the
//   loss reported per (context, centre) prediction.
// A word repeated inside a window (a context twice, a negative twice) is one row
// with its gradient multiplied by the repeat count: the sum the pairwise updates
// would apply, without two writes to one row racing inside the window.

namespace posvec::detail {

bool batchedAvx512Compiled() {
#if defined(__AVX512F__)
  return true;
#else
  return false;
#endif
}

bool batchedBf16InPlace() {
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  return true;
#else
  return false;
#endif
}

Bf16Update batchedBf16Update() {
  static const Bf16Update chosen =
      __builtin_cpu_is("amd") ? Bf16Update::Pairs : Bf16Update::Halves;
  return chosen;
}

namespace {

// Floats per chunk of the portable update: the accumulators of one chunk stay in
// registers (two zmm, four ymm) while the products sweep the window's rows.
constexpr std::size_t kChunk = 32;
// Distinct contexts the AVX-512 update keeps in registers (2 x 12 + 2 of 32 zmm).
constexpr std::size_t kMaxRegisterRows = 12;

// Index of `id` in rows[0..k), appended when new. Linear, but a block's work is
// O(m·n·dim) anyway (an AVX-512 compare of 16 rows at a time measured slower on
// windows of a dozen rows).
std::size_t rowOf(std::int32_t id, std::int32_t* rows, std::size_t& k) {
  std::size_t j = 0;
  while (j < k && rows[j] != id) ++j;
  if (j == k) rows[k++] = id;
  return j;
}

// Distinct ids of `ids` into rows[], their multiplicities into weights[]; ids equal
// to `skip` are dropped.
std::size_t uniqueRows(const std::int32_t* ids, std::size_t n, std::int32_t skip,
                       std::int32_t* rows, std::int32_t* weights) {
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (ids[i] == skip) continue;
    const std::size_t before = k, j = rowOf(ids[i], rows, k);
    weights[j] = k > before ? 1 : weights[j] + 1;
  }
  return k;
}

// One cell's loss (added to `loss`) and gradient coefficient, in the scalar
// functions: weight pos as a positive prediction, neg as a negative one. The
// AVX-512 loop computes the same per lane, term by term.
inline float lossAndGradient(float s, float pos, float neg, float alpha, const Sigmoid& sig,
                             double& loss) {
  loss += static_cast<double>(pos * sig.softplus(-s) + neg * sig.softplus(s));
  const float sigma = sig.sigmoid(s);
  return (1.0f - sigma) * alpha * pos + (0.0f - sigma) * alpha * neg;
}

// The window after deduplication: M context rows, N target rows (target 0 the
// positive), row pointers and the gradient coefficients G (M x N, alpha folded in).
struct Block {
  std::size_t dim, m, n;
  float* const* ctx;  // M row pointers into input
  float* const* tgt;  // N row pointers into output
  const float* g;     // M x N
  float* told;        // N x kChunk scratch (portable path)
  float* old;         // N x dim scratch (AVX-512 path, windows of many distinct contexts)
};

// Columns [j0, j0 + W) of the update: T_v += sum_u G_uv C_u and C_u += sum_v G_uv T_v,
// both from the old values (T's old chunk is kept in `told`).
template <std::size_t W>
void updateChunk(const Block& b, std::size_t j0, std::size_t w) {
  const std::size_t width = W ? W : w;
  for (std::size_t v = 0; v < b.n; ++v) std::memcpy(b.told + v * kChunk, b.tgt[v] + j0, width * 4);
  for (std::size_t v = 0; v < b.n; ++v) {
    float acc[kChunk];
    const float* t0 = b.told + v * kChunk;
#pragma omp simd
    for (std::size_t k = 0; k < width; ++k) acc[k] = t0[k];
    for (std::size_t u = 0; u < b.m; ++u) {
      const float g = b.g[u * b.n + v];
      const float* c = b.ctx[u] + j0;
#pragma omp simd
      for (std::size_t k = 0; k < width; ++k) acc[k] += g * c[k];
    }
    float* t = b.tgt[v] + j0;
#pragma omp simd
    for (std::size_t k = 0; k < width; ++k) t[k] = acc[k];
  }
  for (std::size_t u = 0; u < b.m; ++u) {
    float acc[kChunk];
    float* c = b.ctx[u] + j0;
#pragma omp simd
    for (std::size_t k = 0; k < width; ++k) acc[k] = c[k];
    for (std::size_t v = 0; v < b.n; ++v) {
      const float g = b.g[u * b.n + v];
      const float* t0 = b.told + v * kChunk;
#pragma omp simd
      for (std::size_t k = 0; k < width; ++k) acc[k] += g * t0[k];
    }
#pragma omp simd
    for (std::size_t k = 0; k < width; ++k) c[k] = acc[k];
  }
}

void scoresPortable(const Block& b, float* s) {
  for (std::size_t u = 0; u < b.m; ++u)
    for (std::size_t v = 0; v < b.n; ++v) s[u * b.n + v] = rowDot(b.ctx[u], b.tgt[v], b.dim);
}

void updatePortable(const Block& b) {
  std::size_t j = 0;
  for (; j + kChunk <= b.dim; j += kChunk) updateChunk<kChunk>(b, j, kChunk);
  if (j < b.dim) updateChunk<0>(b, j, b.dim - j);
}

#if defined(__AVX512F__)
// _mm512_shuffle_f32x4 with every lane kept (GCC 12's unmasked form reads an
// "undefined" value and warns).
template <int Imm>
inline __m512 shuffle128(__m512 a, __m512 b) {
  return _mm512_maskz_shuffle_f32x4(0xFFFF, a, b, Imm);
}

// The sixteen sums of x[0..16), in the order [x0 x2 x4 x6 | x1 x3 x5 x7 | x8 x10 x12 x14 |
// x9 x11 x13 x15] (128-bit lanes). Each vector is summed by the same tree: lane i with
// lane i + 8, then neighbours, then pairs of pairs, then the two halves
// ((z0 + z1) + (z2 + z3)) + ((z4 + z5) + (z6 + z7)); the sixteen reductions share their
// shuffles, about 3 instructions a sum.
inline __m512 reduce16(const __m512 (&x)[16]) {
  __m512 l1[8], l2[4], l3[2];
  for (int i = 0; i < 8; ++i)  // lanes 0-7: x[2i] folded, 8-15: x[2i + 1] folded
    l1[i] = _mm512_add_ps(shuffle128<0x44>(x[2 * i], x[2 * i + 1]),
                          shuffle128<0xEE>(x[2 * i], x[2 * i + 1]));
  for (int i = 0; i < 4; ++i)  // neighbours
    l2[i] = _mm512_add_ps(_mm512_shuffle_ps(l1[2 * i], l1[2 * i + 1], 0x88),
                          _mm512_shuffle_ps(l1[2 * i], l1[2 * i + 1], 0xDD));
  for (int i = 0; i < 2; ++i)  // pairs of pairs
    l3[i] = _mm512_add_ps(_mm512_shuffle_ps(l2[2 * i], l2[2 * i + 1], 0x88),
                          _mm512_shuffle_ps(l2[2 * i], l2[2 * i + 1], 0xDD));
  return _mm512_add_ps(shuffle128<0x88>(l3[0], l3[1]),  // the two halves
                       shuffle128<0xDD>(l3[0], l3[1]));
}

// How the score tiles read rows: float32 rows take 16 values a step into float32
// FMAs; bfloat16 rows (the in-place kernel) 32 values a step into AVX-512 BF16 dot
// products of pairs (products exact in float32, sums in float32). Either way the
// sixteen lanes of an accumulator sum to the dot product.
struct Fp32Rows {
  using Row = float;
  using Vec = __m512;
  static constexpr std::size_t kStep = 16;
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static Vec loadTail(std::size_t count, const float* p) {
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1), p);
  }
  static __m512 madd(__m512 acc, Vec a, Vec b) { return _mm512_fmadd_ps(a, b, acc); }
};

#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
inline __m512bh asBf16(__m512i x) { return (__m512bh)x; }  // NOLINT: a vector cast

struct Bf16Rows {
  using Row = std::uint16_t;
  using Vec = __m512i;
  static constexpr std::size_t kStep = 32;
  static Vec load(const std::uint16_t* p) { return _mm512_loadu_si512(p); }
  static Vec loadTail(std::size_t count, const std::uint16_t* p) {
    return _mm512_maskz_loadu_epi16(static_cast<__mmask32>((std::uint64_t{1} << count) - 1), p);
  }
  static __m512 madd(__m512 acc, Vec a, Vec b) {
    return _mm512_dpbf16_ps(acc, asBf16(a), asBf16(b));
  }
};
#endif

// Rows of one block as the score tiles read them: m context rows, n target rows.
template <typename L>
struct TileRows {
  typename L::Row* const* ctx;
  typename L::Row* const* tgt;
  std::size_t dim, m, n;
};

// Scores of U <= 4 contexts against V <= 4 targets: each loaded chunk feeds V
// (context) or U (target) multiply-adds, so a block's rows are read about n / 4
// times instead of n times.
template <typename L, int U, int V>
void scoreTile(const TileRows<L>& b, float* s, std::size_t u, std::size_t v) {
  const std::size_t full = b.dim / L::kStep * L::kStep, tail = b.dim - full;
  const typename L::Row* c[4];
  const typename L::Row* t[4];
  for (int k = 0; k < 4; ++k) {
    c[k] = b.ctx[u + static_cast<std::size_t>(std::min(k, U - 1))];
    t[k] = b.tgt[v + static_cast<std::size_t>(std::min(k, V - 1))];
  }
  // Accumulators as separate variables: an array of them (indexed in loops) GCC 12
  // keeps in registers but also stores to the stack at every step. a<k><i> is
  // target k against context i; tiles smaller than 4 x 4 leave the rest zero.
  __m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00,
         a12 = a00, a13 = a00, a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00,
         a32 = a00, a33 = a00;
#define POSVEC_TILE_STEP(LOAD)                                                      \
  {                                                                                 \
    typename L::Vec c0 = LOAD(c[0] + j), c1 = LOAD(c[1] + j), c2 = LOAD(c[2] + j),  \
                    c3 = LOAD(c[3] + j);                                            \
    /* Opaque to GCC 12, which would load each again for every FMA (load-bound). */ \
    asm("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3));                               \
    POSVEC_TILE_ROW(0, LOAD)                                                        \
    POSVEC_TILE_ROW(1, LOAD)                                                        \
    POSVEC_TILE_ROW(2, LOAD)                                                        \
    POSVEC_TILE_ROW(3, LOAD)                                                        \
  }
#define POSVEC_TILE_ROW(k, LOAD)                             \
  if constexpr (V > k) {                                     \
    typename L::Vec tv = LOAD(t[k] + j);                     \
    asm("" : "+v"(tv));                                      \
    a##k##0 = L::madd(a##k##0, c0, tv);                      \
    if constexpr (U > 1) a##k##1 = L::madd(a##k##1, c1, tv); \
    if constexpr (U > 2) a##k##2 = L::madd(a##k##2, c2, tv); \
    if constexpr (U > 3) a##k##3 = L::madd(a##k##3, c3, tv); \
  }
#define POSVEC_FULL(p) L::load(p)
#define POSVEC_TAIL(p) L::loadTail(tail, p)
  std::size_t j = 0;
  for (; j < full; j += L::kStep) POSVEC_TILE_STEP(POSVEC_FULL)
  if (tail) POSVEC_TILE_STEP(POSVEC_TAIL)
#undef POSVEC_TAIL
#undef POSVEC_FULL
#undef POSVEC_TILE_ROW
#undef POSVEC_TILE_STEP
  // Ordered so that 128-bit lane i holds context i's four scores.
  const __m512 x[16] = {a00, a01, a10, a11, a20, a21, a30, a31,
                        a02, a03, a12, a13, a22, a23, a32, a33};
  const __m512 sums = reduce16(x);
  const __mmask8 cols = static_cast<__mmask8>((1u << V) - 1);
  float* row = s + u * b.n + v;
  _mm_mask_storeu_ps(row, cols, _mm512_maskz_extractf32x4_ps(0xF, sums, 0));
  if constexpr (U > 1)
    _mm_mask_storeu_ps(row + b.n, cols, _mm512_maskz_extractf32x4_ps(0xF, sums, 1));
  if constexpr (U > 2)
    _mm_mask_storeu_ps(row + 2 * b.n, cols, _mm512_maskz_extractf32x4_ps(0xF, sums, 2));
  if constexpr (U > 3)
    _mm_mask_storeu_ps(row + 3 * b.n, cols, _mm512_maskz_extractf32x4_ps(0xF, sums, 3));
}

template <typename L, int U>
void scoreRows(const TileRows<L>& b, float* s, std::size_t u) {
  std::size_t v = 0;
  for (; v + 4 <= b.n; v += 4) scoreTile<L, U, 4>(b, s, u, v);
  switch (b.n - v) {
    case 3:
      scoreTile<L, U, 3>(b, s, u, v);
      break;
    case 2:
      scoreTile<L, U, 2>(b, s, u, v);
      break;
    case 1:
      scoreTile<L, U, 1>(b, s, u, v);
      break;
    default:
      break;
  }
}

// The M x N scores of a block into s.
template <typename L>
void scoresTiled(const TileRows<L>& b, float* s) {
  std::size_t u = 0;
  for (; u + 4 <= b.m; u += 4) scoreRows<L, 4>(b, s, u);
  switch (b.m - u) {
    case 3:
      scoreRows<L, 3>(b, s, u);
      break;
    case 2:
      scoreRows<L, 2>(b, s, u);
      break;
    case 1:
      scoreRows<L, 1>(b, s, u);
      break;
    default:
      break;
  }
}

void scoresAvx512(const Block& b, float* s) {
  scoresTiled(TileRows<Fp32Rows>{b.ctx, b.tgt, b.dim, b.m, b.n}, s);
}

// The update for contexts [u0, u0 + M), with their chunks and gradients in
// registers: per 16-float column every row is loaded once and stored once
// (2M + 2 zmm live). Windows with more distinct contexts than fit run in groups:
// T in memory then already holds the earlier groups' updates, so the first group
// saves T's old values (`b.old`, N x dim) and later groups read them from there.
enum class Group { Only, First, Later };

template <int M>
void updateAvx512(const Block& b, std::size_t u0, Group group) {
  float* const* ctx = b.ctx + u0;
  for (std::size_t j = 0; j < b.dim; j += 16) {
    const std::size_t left = b.dim - j;
    const __mmask16 mask =
        left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
    __m512 c[M], dc[M];
    for (int u = 0; u < M; ++u) {
      c[u] = _mm512_maskz_loadu_ps(mask, ctx[u] + j);
      dc[u] = _mm512_setzero_ps();
    }
    for (std::size_t v = 0; v < b.n; ++v) {
      float* tp = b.tgt[v] + j;
      float* old = b.old + v * b.dim + j;
      const __m512 now = _mm512_maskz_loadu_ps(mask, tp);
      const __m512 t = group == Group::Later ? _mm512_maskz_loadu_ps(mask, old) : now;
      if (group == Group::First) _mm512_mask_storeu_ps(old, mask, now);
      // Two partial sums halve the dependency chain through the target's chunk.
      __m512 acc0 = now, acc1 = _mm512_setzero_ps();
      for (int u = 0; u < M; ++u) {
        const __m512 g = _mm512_set1_ps(b.g[(u0 + static_cast<std::size_t>(u)) * b.n + v]);
        if (u & 1)
          acc1 = _mm512_fmadd_ps(g, c[u], acc1);
        else
          acc0 = _mm512_fmadd_ps(g, c[u], acc0);
        dc[u] = _mm512_fmadd_ps(g, t, dc[u]);
      }
      _mm512_mask_storeu_ps(tp, mask, _mm512_add_ps(acc0, acc1));
    }
    for (int u = 0; u < M; ++u) _mm512_mask_storeu_ps(ctx[u] + j, mask, _mm512_add_ps(c[u], dc[u]));
  }
}

#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define POSVEC_FUSED_BF16 1
// bfloat16 weights without the float32 scratch: the block's rows are read in
// place and the scores are AVX-512 BF16 dot products (each product of two bfloat16
// values exact in float32, summed in float32). Two update kernels follow
// (Bf16Update): "pairs" multiplies with AVX-512 BF16 dot products too, "halves"
// widens the rows' values and multiplies with float32 FMAs. Either writes each
// updated chunk back rounded stochastically.
struct Block16 {
  std::size_t dim, m, n;
  std::uint16_t* const* ctx;  // M bfloat16 row pointers into input
  std::uint16_t* const* tgt;  // N bfloat16 row pointers into output
  const float* g;             // M x N
  float* now;                 // N x pad32(dim): T's float32 values between groups
  std::uint32_t* pairs;       // gradientPairs' scratch for one group (pairs kernel)
};

// The stride of Block16::now: dim rounded up to whole 32-value chunks.
inline std::size_t pad32(std::size_t dim) { return (dim + 31) / 32 * 32; }

// Random bits for stochastic rounding of two 16-value chunks at a time: each step
// of the 16 xorshift32 lanes gives its low halves to one chunk and its high halves
// to the other (a pair of targets, a pair of contexts), with no branch between.
struct ChunkBits {
  __m512i lanes;
  void step() {
    lanes = _mm512_xor_si512(lanes, _mm512_slli_epi32(lanes, 13));
    lanes = _mm512_xor_si512(lanes, _mm512_srli_epi32(lanes, 17));
    lanes = _mm512_xor_si512(lanes, _mm512_slli_epi32(lanes, 5));
  }
  __m512i low() const { return _mm512_and_si512(lanes, _mm512_set1_epi32(0xFFFF)); }
  __m512i high() const { return _mm512_srli_epi32(lanes, 16); }
};

// Either kernel updates the contexts [u0, u0 + M) of a block, with their chunks and
// sums in registers. A block of several groups keeps T's running float32 values
// (`now`) in scratch and writes T's rows only in its last group, so each row is
// rounded once a block and every group reads T's old values from the rows.
enum class Group16 { Only, First, Middle, Last };

// x rounded stochastically to bfloat16 with r's low 16 bits (floatToBf16Stochastic).
inline void storeBf16(std::uint16_t* p, __mmask16 mask, __m512 x, __m512i r) {
  const __m512i h = _mm512_srli_epi32(_mm512_add_epi32(_mm512_castps_si512(x), r), 16);
  _mm256_mask_storeu_epi16(p, mask, _mm512_cvtepi32_epi16(h));
}

// The pairs kernel: updateAvx512 on bfloat16 rows, with the products as AVX-512
// BF16 dot products of pairs: a target's chunk adds (c_u, c_u+1) . (g_uv, g_u+1,v)
// per pair of contexts and a context's chunk (t_v, t_v+1) . (g_uv, g_u,v+1) per pair
// of targets, 16 values a chunk, the gradient coefficients rounded to bfloat16 (to
// nearest) and every sum in float32: half the multiply-add instructions of float32's
// update, plus the shuffles that pair the rows.

// Lanes i of a and b as pairs (a_i, b_i), i = 0..15: 32 bfloat16 values.
inline __m512i interleave16(__m256i a, __m256i b) {
  const __m512i pairs = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40,
                                         8, 39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  return _mm512_permutex2var_epi16(_mm512_castsi256_si512(a), pairs, _mm512_castsi256_si512(b));
}

inline __m512 widenBf16(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// Gradient pairs of one group of M contexts: gt[p * nq2 + v] = (g_2p,v, g_2p+1,v) and
// gc[u * nq + q] = (g_u,2q, g_u,2q+1), bfloat16 in the low and high halves, a missing
// partner (odd M or N) zero. nq2 = 2 nq columns, so a pair of targets reads gt[.. v]
// and gt[.. v + 1] alike.
void gradientPairs(const float* g, std::size_t n, std::size_t m, std::uint32_t* gt,
                   std::uint32_t* gc) {
  const std::size_t nq = (n + 1) / 2;
  const __m512i lowHigh =
      _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                       21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  for (std::size_t p = 0; 2 * p < m; ++p) {
    const float* lo = g + 2 * p * n;
    const float* hi = lo + n;
    const bool partner = 2 * p + 1 < m;
    for (std::size_t v = 0; v < 2 * nq; v += 16) {
      const std::size_t left = n > v ? n - v : 0;
      const auto live = left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
      const __m512 a = _mm512_maskz_loadu_ps(live, lo + v);
      const __m512 b = partner ? _mm512_maskz_loadu_ps(live, hi + v) : _mm512_setzero_ps();
      const __m512i both = (__m512i)_mm512_cvtne2ps_pbh(b, a);  // NOLINT: a vector cast
      const std::size_t out = std::min<std::size_t>(16, 2 * nq - v);
      _mm512_mask_storeu_epi32(gt + p * 2 * nq + v, static_cast<__mmask16>((1u << out) - 1),
                               _mm512_permutexvar_epi16(lowHigh, both));
    }
  }
  for (std::size_t u = 0; u < m; ++u)
    for (std::size_t q = 0; q < nq; q += 16) {
      const std::size_t left = n - 2 * q;
      // 32 values of row u from column 2q, the missing partner of an odd N zero.
      const auto live = left >= 32 ? __mmask32(0xFFFFFFFFu)
                                   : static_cast<__mmask32>((std::uint64_t{1} << left) - 1);
      const float* row = g + u * n + 2 * q;
      const __m512 a = _mm512_maskz_loadu_ps(static_cast<__mmask16>(live), row);
      const __m512 b = _mm512_maskz_loadu_ps(static_cast<__mmask16>(live >> 16), row + 16);
      const std::size_t out = std::min<std::size_t>(16, nq - q);
      _mm512_mask_storeu_epi32(gc + u * nq + q, static_cast<__mmask16>((1u << out) - 1),
                               (__m512i)_mm512_cvtne2ps_pbh(b, a));  // NOLINT: a vector cast
    }
}

template <int M>
void updateBf16Pairs(const Block16& b, std::size_t u0, Group16 group, ChunkBits& bits) {
  constexpr int P = (M + 1) / 2;
  // Locals, not b's fields: the 16-bit stores may alias anything, and would make
  // the compiler reload every field (and the bits) after each of them.
  std::uint16_t* const* ctx = b.ctx + u0;
  std::uint16_t* const* tgt = b.tgt;
  const std::size_t dim = b.dim, n = b.n, nq = (n + 1) / 2, stride = pad32(dim);
  float* const nowBase = b.now;
  std::uint32_t* const gt = b.pairs;
  std::uint32_t* const gc = gt + static_cast<std::size_t>(P) * 2 * nq;
  gradientPairs(b.g + u0 * n, n, M, gt, gc);
  ChunkBits r = bits;
  const bool load16 = group == Group16::Only || group == Group16::First;
  const bool store16 = group == Group16::Only || group == Group16::Last;
  for (std::size_t j = 0; j < dim; j += 16) {
    const std::size_t left = dim - j;
    const __mmask16 mask =
        left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
    __m512i cp[P];
    __m512 dc[M];
    for (int p = 0; p < P; ++p) {
      const __m256i lo = _mm256_maskz_loadu_epi16(mask, ctx[2 * p] + j);
      const __m256i hi = 2 * p + 1 < M ? _mm256_maskz_loadu_epi16(mask, ctx[2 * p + 1] + j)
                                       : _mm256_setzero_si256();
      cp[p] = interleave16(lo, hi);
      // The contexts' new values start from their old ones (exact), already loaded.
      dc[2 * p] = widenBf16(lo);
      if (2 * p + 1 < M) dc[2 * p + 1] = widenBf16(hi);
    }
    for (std::size_t q = 0; q < nq; ++q) {
      const std::size_t v = 2 * q;
      const bool second = v + 1 < n;
      // T's old values: its rows are written by the last group only.
      const __m256i h0 = _mm256_maskz_loadu_epi16(mask, tgt[v] + j);
      const __m256i h1 =
          second ? _mm256_maskz_loadu_epi16(mask, tgt[v + 1] + j) : _mm256_setzero_si256();
      __m512 now0, now1;
      if (load16) {
        now0 = widenBf16(h0);
        now1 = widenBf16(h1);
      } else {
        now0 = _mm512_maskz_loadu_ps(mask, nowBase + v * stride + j);
        now1 = second ? _mm512_maskz_loadu_ps(mask, nowBase + (v + 1) * stride + j)
                      : _mm512_setzero_ps();
      }
      const __m512bh tp = asBf16(interleave16(h0, h1));
      for (int p = 0; p < P; ++p) {
        const std::uint32_t* pg = gt + static_cast<std::size_t>(p) * 2 * nq + v;
        now0 = _mm512_dpbf16_ps(now0, asBf16(cp[p]),
                                asBf16(_mm512_set1_epi32(static_cast<int>(pg[0]))));
        now1 = _mm512_dpbf16_ps(now1, asBf16(cp[p]),
                                asBf16(_mm512_set1_epi32(static_cast<int>(pg[1]))));
      }
      for (int u = 0; u < M; ++u)
        dc[u] = _mm512_dpbf16_ps(
            dc[u], tp,
            asBf16(_mm512_set1_epi32(static_cast<int>(gc[static_cast<std::size_t>(u) * nq + q]))));
      if (store16) {
        r.step();
        storeBf16(tgt[v] + j, mask, now0, r.low());
        if (second) storeBf16(tgt[v + 1] + j, mask, now1, r.high());
      } else {
        _mm512_mask_storeu_ps(nowBase + v * stride + j, mask, now0);
        if (second) _mm512_mask_storeu_ps(nowBase + (v + 1) * stride + j, mask, now1);
      }
    }
    for (int p = 0; p < P; ++p) {
      r.step();
      storeBf16(ctx[2 * p] + j, mask, dc[2 * p], r.low());
      if (2 * p + 1 < M) storeBf16(ctx[2 * p + 1] + j, mask, dc[2 * p + 1], r.high());
    }
  }
  bits = r;
}

// A 32-bit lane of 32 bfloat16 values holds value 2i in its low half and 2i + 1 in
// its high half. Half 0 (the even values) and half 1 (the odd ones) as float32,
// exactly: a shift or a mask, no shuffle across lanes. The update is elementwise,
// so the order its lanes hold the values in does not matter.
template <int H>
inline __m512 halfOf(__m512i x) {
  if constexpr (H == 0) return _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
  return _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
}

// x rounded stochastically to bfloat16 with r's low 16 bits (floatToBf16Stochastic)
// and stored as half H of the 32 values at p: the words `words` selects (a chunk's
// live words, 0x5555... for half 0, 0xAAAA... for half 1).
template <int H>
inline void storeHalf(std::uint16_t* p, __mmask32 words, __m512 x, __m512i r) {
  const __m512i rounded = _mm512_add_epi32(_mm512_castps_si512(x), r);
  _mm512_mask_storeu_epi16(p, words, H == 0 ? _mm512_srli_epi32(rounded, 16) : rounded);
}

// The halves kernel: updateAvx512 on bfloat16 rows, one half of every 32-value
// chunk at a time (half 0 of every chunk, then half 1, so that no chunk is read
// back right after its masked store): per half the rows' 16 values are loaded,
// widened exactly, updated with float32 FMAs and stored rounded, the arithmetic of
// float32's update with no shuffle.

template <int M, int H>
void updateBf16Half(const Block16& b, std::size_t u0, Group16 group, ChunkBits& r) {
  // Locals, not b's fields: the 16-bit stores may alias anything, and would make
  // the compiler reload every field (and the bits) after each of them.
  std::uint16_t* const* ctx = b.ctx + u0;
  std::uint16_t* const* tgt = b.tgt;
  const std::size_t dim = b.dim, n = b.n, stride = pad32(dim);
  const float* const g = b.g + u0 * n;
  float* const nowBase = b.now;
  const bool load16 = group == Group16::Only || group == Group16::First;
  const bool store16 = group == Group16::Only || group == Group16::Last;
  const __mmask32 half = H == 0 ? __mmask32(0x55555555u) : __mmask32(0xAAAAAAAAu);
  for (std::size_t j = 0; j < dim; j += 32) {
    const std::size_t left = dim - j;
    const __mmask32 live = left >= 32 ? __mmask32(0xFFFFFFFFu)
                                      : static_cast<__mmask32>((std::uint64_t{1} << left) - 1);
    const __mmask32 words = live & half;
    __m512 c[M], dc[M];
    for (int u = 0; u < M; ++u) {
      c[u] = halfOf<H>(_mm512_maskz_loadu_epi16(live, ctx[u] + j));
      dc[u] = _mm512_setzero_ps();
    }
    for (std::size_t v = 0; v < n; ++v) {
      // T's old values: its rows are written by the last group only.
      const __m512 t = halfOf<H>(_mm512_maskz_loadu_epi16(live, tgt[v] + j));
      // T's running values in scratch, which a block of one group has none of.
      float* const nowp = load16 && store16 ? nullptr : nowBase + v * stride + j + 16 * H;
      // Two partial sums halve the dependency chain through the target's chunk.
      __m512 acc0 = load16 ? t : _mm512_loadu_ps(nowp), acc1 = _mm512_setzero_ps();
      for (int u = 0; u < M; ++u) {
        const __m512 gv = _mm512_set1_ps(g[static_cast<std::size_t>(u) * n + v]);
        if (u & 1)
          acc1 = _mm512_fmadd_ps(gv, c[u], acc1);
        else
          acc0 = _mm512_fmadd_ps(gv, c[u], acc0);
        dc[u] = _mm512_fmadd_ps(gv, t, dc[u]);
      }
      const __m512 now = _mm512_add_ps(acc0, acc1);
      if (store16) {
        if ((v & 1) == 0) r.step();
        storeHalf<H>(tgt[v] + j, words, now, (v & 1) == 0 ? r.low() : r.high());
      } else {
        _mm512_storeu_ps(nowp, now);
      }
    }
    for (int u = 0; u < M; ++u) {
      if ((u & 1) == 0) r.step();
      storeHalf<H>(ctx[u] + j, words, _mm512_add_ps(c[u], dc[u]),
                   (u & 1) == 0 ? r.low() : r.high());
    }
  }
}

template <int M>
void updateBf16Halves(const Block16& b, std::size_t u0, Group16 group, ChunkBits& bits) {
  ChunkBits r = bits;
  updateBf16Half<M, 0>(b, u0, group, r);
  updateBf16Half<M, 1>(b, u0, group, r);
  bits = r;
}

template <template <int> class Kernel, std::size_t... I>
void updateBf16Groups(const Block16& b, ChunkBits& bits, std::index_sequence<I...>) {
  using Fn = void (*)(const Block16&, std::size_t, Group16, ChunkBits&);
  static constexpr Fn table[] = {&Kernel<static_cast<int>(I) + 1>::run...};
  if (b.m <= kMaxRegisterRows) return table[b.m - 1](b, 0, Group16::Only, bits);
  const std::size_t groups = (b.m + kMaxRegisterRows - 1) / kMaxRegisterRows;
  const std::size_t size = (b.m + groups - 1) / groups;
  for (std::size_t u0 = 0; u0 < b.m; u0 += size) {
    const Group16 group = u0 == 0            ? Group16::First
                          : u0 + size >= b.m ? Group16::Last
                                             : Group16::Middle;
    table[std::min(size, b.m - u0) - 1](b, u0, group, bits);
  }
}

template <int M>
struct PairsKernel {
  static void run(const Block16& b, std::size_t u0, Group16 g, ChunkBits& r) {
    updateBf16Pairs<M>(b, u0, g, r);
  }
};
template <int M>
struct HalvesKernel {
  static void run(const Block16& b, std::size_t u0, Group16 g, ChunkBits& r) {
    updateBf16Halves<M>(b, u0, g, r);
  }
};
#endif

// Loss and gradient coefficients of the k scores in g, 16 at a time: the table
// lookups as gathers, the same interpolation as Sigmoid's scalar functions. Lanes
// outside (-kMax, kMax) (and NaN) take the scalar functions, which handle them.
// Cell i has weight pos[i] as a positive prediction and neg[i] as a negative one:
// g[i] becomes (1 - sigma(s)) * alpha * pos[i] + (0 - sigma(s)) * alpha * neg[i];
// returns pos * softplus(-s) + neg * softplus(s) summed (the loss), accumulated
// in double as the scalar loop does. With one weight zero each term is exactly
// the single-label formula (the other adds a signed zero).
double lossAndGradientsAvx512(float* g, const float* pos, const float* neg, std::size_t k,
                              float alpha, const Sigmoid& sig) {
  const float* sigT = sig.sigmoidPairs();
  const float* spT = sig.softplusPairs();
  const __m512 kmax = _mm512_set1_ps(Sigmoid::kMax), scale = _mm512_set1_ps(Sigmoid::scale());
  const __m512 one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps(), va = _mm512_set1_ps(alpha);
  const __m512 absMask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
  __m512d acc = _mm512_setzero_pd();
  double scalarLoss = 0;
  // Index of x's table cell and the fraction inside it (x in range).
  auto cell = [&](__m512 x, __m512i& i, __m512& f) {
    const __m512 t = _mm512_mul_ps(_mm512_add_ps(x, kmax), scale);
    i = _mm512_cvttps_epi32(t);
    f = _mm512_sub_ps(t, _mm512_cvtepi32_ps(i));
  };
  // Both ends of every lane's cell: two 64-bit gathers of (value, next) pairs, then
  // the even floats are the cells' starts and the odd ones their ends.
  const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odds = _mm512_add_epi32(evens, _mm512_set1_epi32(1));
  auto lookup = [&](const float* pairs, __m512i i, __m512 f) {
    const auto* p = reinterpret_cast<const double*>(pairs);
    const __m512 lo = _mm512_castpd_ps(_mm512_i32gather_pd(_mm512_castsi512_si256(i), p, 8));
    const __m512 hi = _mm512_castpd_ps(_mm512_i32gather_pd(_mm512_extracti64x4_epi64(i, 1), p, 8));
    const __m512 a = _mm512_permutex2var_ps(lo, evens, hi);
    const __m512 b = _mm512_permutex2var_ps(lo, odds, hi);
    return _mm512_fmadd_ps(f, _mm512_sub_ps(b, a), a);
  };
  for (std::size_t j = 0; j < k; j += 16) {
    const std::size_t left = k - j;
    const __mmask16 live =
        left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
    const __m512 s0 = _mm512_maskz_loadu_ps(live, g + j);
    const __m512 wp = _mm512_maskz_loadu_ps(live, pos + j);
    const __m512 wn = _mm512_maskz_loadu_ps(live, neg + j);
    const __mmask16 in =
        _mm512_mask_cmp_ps_mask(live, _mm512_and_ps(s0, absMask), kmax, _CMP_LT_OQ);
    const __m512 s = _mm512_maskz_mov_ps(in, s0);  // out-of-range lanes look up cell 0..
    __m512i is, ix;
    __m512 fs, fx;
    cell(s, is, fs);
    // The loss of a positive is softplus(-s), of a negative softplus(s). Almost every
    // cell is one or the other, so one lookup serves both, of -s where the cell is a
    // positive; the other weight is zero there, and zero times the other lane's value
    // adds the +0 the exact term would. Only a column that is a centre and a shared
    // negative at once has cells with both.
    const __mmask16 positive = _mm512_cmp_ps_mask(wp, zero, _CMP_NEQ_OQ);
    const __mmask16 negative = _mm512_cmp_ps_mask(wn, zero, _CMP_NEQ_OQ);
    cell(_mm512_mask_sub_ps(s, positive, zero, s), ix, fx);
    const __m512 sigma = lookup(sigT, is, fs);
    const __m512 spPos = lookup(spT, ix, fx);
    const __m512 spNeg = (positive & negative & in) ? lookup(spT, is, fs) : spPos;
    const __m512 grad =
        _mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(_mm512_sub_ps(one, sigma), va), wp),
                      _mm512_mul_ps(_mm512_mul_ps(_mm512_sub_ps(zero, sigma), va), wn));
    _mm512_mask_storeu_ps(g + j, in, grad);
    const __m512 l = _mm512_maskz_add_ps(in, _mm512_mul_ps(wp, spPos), _mm512_mul_ps(wn, spNeg));
    acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm512_castps512_ps256(l)));
    acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm256_castpd_ps(
                                 _mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(l), 1))));
    // ..and get the scalar functions here.
    for (__mmask16 out = static_cast<__mmask16>(live & ~in); out; out &= out - 1) {
      const std::size_t q = j + static_cast<std::size_t>(__builtin_ctz(out));
      g[q] = lossAndGradient(g[q], pos[q], neg[q], alpha, sig, scalarLoss);
    }
  }
  // _mm512_reduce_add_pd's sums in its order, with masked extracts (GCC 12 warns
  // that the unmasked one reads an "undefined" value once this is inlined twice).
  const __m256d half = _mm256_add_pd(_mm512_maskz_extractf64x4_pd(0xF, acc, 1),
                                     _mm512_maskz_extractf64x4_pd(0xF, acc, 0));
  const __m128d quarter =
      _mm_add_pd(_mm256_extractf128_pd(half, 1), _mm256_extractf128_pd(half, 0));
  return (_mm_cvtsd_f64(quarter) + _mm_cvtsd_f64(_mm_unpackhi_pd(quarter, quarter))) + scalarLoss;
}

template <std::size_t... I>
void updateAvx512Groups(const Block& b, std::index_sequence<I...>) {
  using Fn = void (*)(const Block&, std::size_t, Group);
  static constexpr Fn table[] = {&updateAvx512<static_cast<int>(I) + 1>...};
  if (b.m <= kMaxRegisterRows) return table[b.m - 1](b, 0, Group::Only);
  // Groups of equal size (14 rows: 7 + 7, not 12 + 2): every pass over the targets
  // then does as many FMAs per target load and store.
  const std::size_t groups = (b.m + kMaxRegisterRows - 1) / kMaxRegisterRows;
  const std::size_t size = (b.m + groups - 1) / groups;
  for (std::size_t u0 = 0; u0 < b.m; u0 += size)
    table[std::min(size, b.m - u0) - 1](b, u0, u0 == 0 ? Group::First : Group::Later);
}
#endif

}  // namespace

namespace {

// 16-bit weights (TrainConfig::weights): a block's distinct rows are widened to
// float32 scratch, the float32 update runs on the scratch, and each row is
// written back rounded stochastically (random bits from the thread's generator,
// one draw per row: the same bits at one thread for one seed). A row's old value
// is exact in the scratch, so rounding the new value is rounding old + update.
}  // namespace

void widenRow(const std::uint16_t* src, float* dst, std::size_t dim, WeightType type,
              BatchedPath path) {
  std::size_t j = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  if (path != BatchedPath::Portable) {
    for (; j < dim; j += 16) {
      const std::size_t left = dim - j;
      const __mmask16 mask =
          left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
      const __m256i h = _mm256_maskz_loadu_epi16(mask, src + j);
      const __m512 f = type == WeightType::Bf16
                           ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
                           : _mm512_cvtph_ps(h);
      _mm512_mask_storeu_ps(dst + j, mask, f);
    }
    return;
  }
#else
  (void)path;
#endif
  if (type == WeightType::Bf16)
    for (; j < dim; ++j) dst[j] = bf16ToFloat(src[j]);
  else
    for (; j < dim; ++j) dst[j] = fp16ToFloat(src[j]);
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
namespace {

// 16 values rounded stochastically with the 16 random bits of each lane of r
// (the low halves: r & 0xFFFF), as 16-bit patterns in the low half of each lane.
inline __m256i narrow16(__m512 x, __m512i r, WeightType type) {
  const __m512i b = _mm512_castps_si512(x);
  if (type == WeightType::Bf16)  // floatToBf16Stochastic: no special case needed
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_add_epi32(b, r), 16));
  const __m512i expMask = _mm512_set1_epi32(0x7F800000);
  const __mmask16 special = _mm512_cmpeq_epi32_mask(_mm512_and_si512(b, expMask), expMask);
  const __m512i absMask = _mm512_set1_epi32(0x7FFFFFFF);
  const __m512i a = _mm512_and_si512(b, absMask);
  const __m512i ue = _mm512_sub_epi32(
      _mm512_max_epu32(_mm512_srli_epi32(a, 23), _mm512_set1_epi32(113)), _mm512_set1_epi32(10));
  const __m512 unit = _mm512_castsi512_ps(_mm512_slli_epi32(ue, 23));
  const __m512 inverse =
      _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(254), ue), 23));
  const __m512 q = _mm512_mul_ps(_mm512_castsi512_ps(a), inverse);
  const __m512 down = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  const __m512 frac = _mm512_sub_ps(q, down);
  const __m512 u = _mm512_mul_ps(_mm512_cvtepi32_ps(r), _mm512_set1_ps(1.0f / 65536.0f));
  const __mmask16 up = _mm512_cmp_ps_mask(u, frac, _CMP_LT_OQ);
  const __m512 mag = _mm512_mul_ps(_mm512_mask_add_ps(down, up, down, _mm512_set1_ps(1.0f)), unit);
  __m512 value = _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_castps_si512(mag), _mm512_andnot_si512(absMask, b)));
  value = _mm512_mask_mov_ps(value, special, x);
  return _mm512_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

}  // namespace
#endif

void narrowRow(const float* src, std::uint16_t* dst, std::size_t dim, WeightType type,
               RoundingBits& bits, BatchedPath path) {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  if (path != BatchedPath::Portable) {
    __m512i lanes = _mm512_loadu_si512(bits.lane);
    for (std::size_t j = 0; j < dim; j += 32) {
      stepRoundingLanes(lanes);
      const __mmask32 mask = tailMask32(dim - j);
      const auto m0 = static_cast<__mmask16>(mask), m1 = static_cast<__mmask16>(mask >> 16);
      const __m512 x0 = _mm512_maskz_loadu_ps(m0, src + j);
      const __m512 x1 = _mm512_maskz_loadu_ps(m1, src + j + 16);
      __m512i h;
      if (type == WeightType::Bf16) {
        h = roundBf16Stochastic(x0, x1, lanes);
      } else {
        const __m512i r0 = _mm512_and_si512(lanes, _mm512_set1_epi32(0xFFFF));
        const __m512i r1 = _mm512_srli_epi32(lanes, 16);
        h = _mm512_inserti64x4(_mm512_castsi256_si512(narrow16(x0, r0, type)),
                               narrow16(x1, r1, type), 1);
      }
      _mm512_mask_storeu_epi16(dst + j, mask, h);
    }
    _mm512_storeu_si512(bits.lane, lanes);
    return;
  }
#else
  (void)path;
#endif
  for (std::size_t j = 0; j < dim; j += 32) {
    bits.next();
    const std::size_t n = std::min<std::size_t>(32, dim - j);
    for (std::size_t p = 0; p < n; ++p) {
      const std::uint32_t r = bits.bits(static_cast<int>(p));
      dst[j + p] = type == WeightType::Bf16 ? floatToBf16Stochastic(src[j + p], r)
                                            : floatToFp16Stochastic(src[j + p], r);
    }
  }
}

void narrowRow(const float* src, std::uint16_t* dst, std::size_t dim, WeightType type,
               std::uint32_t seed, BatchedPath path) {
  RoundingBits bits(seed);
  narrowRow(src, dst, dim, type, bits, path);
}

namespace {

// Training without a probe: every probe call below is a constant, and the
// compiled kernel has no trace of them.
struct NoProbe {
  static constexpr bool prefetches() { return true; }
  static constexpr bool beforeUpdate(KernelBlock&) { return true; }
};

// A KernelProbe (kernel_probe.hpp) behind a virtual call: benchmarks and tests.
struct WithProbe {
  KernelProbe* probe;
  bool prefetch;
  explicit WithProbe(KernelProbe& p) : probe(&p), prefetch(p.prefetches()) {}
  bool prefetches() const { return prefetch; }
  bool beforeUpdate(KernelBlock& block) const { return probe->beforeUpdate(block); }
};

// The products of one block: rows crow[0..mu) of `input` against rows trow[0..nu)
// of `output` (both free of repeats), cell (u, v) weighted st.positive[u * nu + v]
// as a positive and st.negative[u * nu + v] as a negative prediction.
template <typename Probe>
double blockArithmetic(float** cp, std::size_t mu, float** tp, std::size_t nu, std::size_t dim,
                       const std::int32_t* crow, const std::int32_t* trow, float alpha,
                       const Sigmoid& sigmoid, ThreadState& state, BatchedPath path,
                       const Probe& probe);

#if defined(POSVEC_FUSED_BF16)
// One block on bfloat16 rows in place (Block16): one draw of state.rng seeds the
// block's rounding bits, as for the scratch path.
// A probe sees the rows as KernelBlock::valueBytes 2.
template <typename Probe>
double blockBf16(std::uint16_t* input, std::uint16_t* output, std::size_t dim,
                 const std::int32_t* crow, std::size_t mu, const std::int32_t* trow, std::size_t nu,
                 float alpha, const Sigmoid& sigmoid, ThreadState& state, const Probe& probe) {
  state.pointers.resize(mu + nu);
  float** fp = state.pointers.data();
  for (std::size_t u = 0; u < mu; ++u)
    fp[u] = reinterpret_cast<float*>(input + static_cast<std::size_t>(crow[u]) * dim);
  for (std::size_t v = 0; v < nu; ++v)
    fp[mu + v] = reinterpret_cast<float*>(output + static_cast<std::size_t>(trow[v]) * dim);
  // Drawn before the probe, so a probe that skips the arithmetic leaves the draws
  // (and the blocks after this one) as training has them.
  const RoundingBits start(static_cast<std::uint32_t>(state.rng.next()));
  KernelBlock seen{dim, fp, mu, fp + mu, nu, crow, trow, 2};
  if (!probe.beforeUpdate(seen)) return 0;
  state.rows16.resize(mu + nu);
  std::uint16_t** cp = state.rows16.data();
  std::uint16_t** tp = cp + mu;
  for (std::size_t i = 0; i < mu + nu; ++i) cp[i] = reinterpret_cast<std::uint16_t*>(fp[i]);
  state.hidden.resize(mu * nu);
  float* g = state.hidden.data();
  // Scratch: T's running values (nu x pad32(dim) floats) for blocks of several groups,
  // and for the pairs kernel one group's gradient pairs (gradientPairs: at most
  // (kMaxRegisterRows + 1) x (nu + 1) pairs).
  const bool pairs = (state.bf16Update == Bf16Update::Auto ? batchedBf16Update()
                                                           : state.bf16Update) == Bf16Update::Pairs;
  state.grad.resize(mu > kMaxRegisterRows ? nu * pad32(dim) : 0);
  state.gradientPairs.resize(pairs ? (kMaxRegisterRows + 1) * (nu + 1) : 0);
  const Block16 b{dim, mu, nu, cp, tp, g, state.grad.data(), state.gradientPairs.data()};
  scoresTiled(TileRows<Bf16Rows>{b.ctx, b.tgt, b.dim, b.m, b.n}, g);
  const double loss = lossAndGradientsAvx512(g, state.positive.data(), state.negative.data(),
                                             mu * nu, alpha, sigmoid);
  ChunkBits bits{_mm512_loadu_si512(start.lane)};
  if (pairs)
    updateBf16Groups<PairsKernel>(b, bits, std::make_index_sequence<kMaxRegisterRows>{});
  else
    updateBf16Groups<HalvesKernel>(b, bits, std::make_index_sequence<kMaxRegisterRows>{});
  return loss;
}
#endif

// `input` and `output` hold float32 or, with 16-bit `weights`, 16-bit values.
template <typename Probe>
double blockUpdate(float* input, float* output, std::size_t dim, const std::int32_t* crow,
                   std::size_t mu, const std::int32_t* trow, std::size_t nu, float alpha,
                   const Sigmoid& sigmoid, ThreadState& state, BatchedPath path, const Probe& probe,
                   WeightType weights = WeightType::Fp32) {
  state.pointers.resize(mu + nu);
  float** cp = state.pointers.data();
  float** tp = cp + mu;
  if (weights == WeightType::Fp32) {
    for (std::size_t u = 0; u < mu; ++u) cp[u] = input + static_cast<std::size_t>(crow[u]) * dim;
    for (std::size_t v = 0; v < nu; ++v) tp[v] = output + static_cast<std::size_t>(trow[v]) * dim;
    return blockArithmetic(cp, mu, tp, nu, dim, crow, trow, alpha, sigmoid, state, path, probe);
  }
  auto* in16 = reinterpret_cast<std::uint16_t*>(input);
  auto* out16 = reinterpret_cast<std::uint16_t*>(output);
#if defined(POSVEC_FUSED_BF16)
  if (weights == WeightType::Bf16 && path != BatchedPath::Portable)
    return blockBf16(in16, out16, dim, crow, mu, trow, nu, alpha, sigmoid, state, probe);
#endif
  state.rows.resize((mu + nu) * dim);
  float* scratch = state.rows.data();
  for (std::size_t u = 0; u < mu; ++u) {
    cp[u] = scratch + u * dim;
    widenRow(in16 + static_cast<std::size_t>(crow[u]) * dim, cp[u], dim, weights, path);
  }
  for (std::size_t v = 0; v < nu; ++v) {
    tp[v] = scratch + (mu + v) * dim;
    widenRow(out16 + static_cast<std::size_t>(trow[v]) * dim, tp[v], dim, weights, path);
  }
  const double loss =
      blockArithmetic(cp, mu, tp, nu, dim, crow, trow, alpha, sigmoid, state, path, probe);
  // Written back from the scratch (a probe may have pointed cp and tp elsewhere),
  // all rows from one stream of rounding bits seeded by one draw.
  RoundingBits bits(static_cast<std::uint32_t>(state.rng.next()));
  for (std::size_t u = 0; u < mu; ++u)
    narrowRow(scratch + u * dim, in16 + static_cast<std::size_t>(crow[u]) * dim, dim, weights, bits,
              path);
  for (std::size_t v = 0; v < nu; ++v)
    narrowRow(scratch + (mu + v) * dim, out16 + static_cast<std::size_t>(trow[v]) * dim, dim,
              weights, bits, path);
  return loss;
}

// The products of one block on rows cp[0..mu) and tp[0..nu) (float32).
template <typename Probe>
double blockArithmetic(float** cp, std::size_t mu, float** tp, std::size_t nu, std::size_t dim,
                       const std::int32_t* crow, const std::int32_t* trow, float alpha,
                       const Sigmoid& sigmoid, ThreadState& state, BatchedPath path,
                       const Probe& probe) {
  state.hidden.resize(mu * nu);
  // T's old chunk (portable) or, for blocks too wide for the registers, T's old
  // rows (AVX-512).
  state.grad.resize(std::max(nu * kChunk, mu > kMaxRegisterRows ? nu * dim : 0));
  float* g = state.hidden.data();
  const float* pos = state.positive.data();
  const float* neg = state.negative.data();
  const Block b{dim, mu, nu, cp, tp, g, state.grad.data(), state.grad.data()};
  // A probe may point the rows elsewhere (b reads them through cp and tp) or skip
  // the arithmetic.
  KernelBlock seen{dim, cp, mu, tp, nu, crow, trow};
  if (!probe.beforeUpdate(seen)) return 0;
#if defined(__AVX512F__)
  if (path != BatchedPath::Portable) {
    scoresAvx512(b, g);
    const double loss = lossAndGradientsAvx512(g, pos, neg, mu * nu, alpha, sigmoid);
    updateAvx512Groups(b, std::make_index_sequence<kMaxRegisterRows>{});
    return loss;
  }
#else
  (void)path;
#endif
  scoresPortable(b, g);
  double loss = 0;
  for (std::size_t i = 0; i < mu * nu; ++i)
    g[i] = lossAndGradient(g[i], pos[i], neg[i], alpha, sigmoid, loss);
  updatePortable(b);
  return loss;
}

template <typename Probe>
double windowUpdate(float* input, float* output, std::size_t dim, const std::int32_t* contexts,
                    std::size_t m, const std::int32_t* targets, std::size_t n, float alpha,
                    const Sigmoid& sigmoid, ThreadState& state, BatchedPath path,
                    const Probe& probe, WeightType weights = WeightType::Fp32) {
  if (m == 0 || n == 0) return 0;
  // Scratch: rows and repeat counts of both sides.
  state.ids.resize(2 * (m + n));
  std::int32_t* crow = state.ids.data();
  std::int32_t* cw = crow + m;
  std::int32_t* trow = cw + m;
  std::int32_t* tw = trow + n;
  const std::size_t mu = uniqueRows(contexts, m, -1, crow, cw);
  trow[0] = targets[0];
  tw[0] = 1;
  const std::size_t nu = 1 + uniqueRows(targets + 1, n - 1, targets[0], trow + 1, tw + 1);
  state.positive.assign(mu * nu, 0.0f);
  state.negative.assign(mu * nu, 0.0f);
  for (std::size_t u = 0; u < mu; ++u)
    for (std::size_t v = 0; v < nu; ++v)
      (v == 0 ? state.positive : state.negative)[u * nu + v] = static_cast<float>(cw[u] * tw[v]);
  return blockUpdate(input, output, dim, crow, mu, trow, nu, alpha, sigmoid, state, path, probe,
                     weights);
}

// Cell (u, v)'s weight as a negative: (row u's positive total - the cell's positive
// count) x (times column v is a shared negative) x weight. The counts are small
// integers (exact); the shared negatives stand for negative draws per pair, so each
// is weighted negative / negativeCount.
void negativeWeights(const float* pos, const std::int32_t* colShared, std::size_t mu,
                     std::size_t nu, float weight, float* neg) {
#if defined(__AVX512F__)
  // A row of at most 16 columns in one vector (the same operations per cell as the
  // loop below; the row total is a sum of small integers, exact in any order).
  if (nu <= 16) {
    const auto live = static_cast<__mmask16>((1u << nu) - 1);
    const __m512 shared = _mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(live, colShared));
    const __m512 w = _mm512_set1_ps(weight);
    for (std::size_t u = 0; u < mu; ++u) {
      const __m512 p = _mm512_maskz_loadu_ps(live, pos + u * nu);
      const __m512 windows = _mm512_set1_ps(_mm512_reduce_add_ps(p));
      _mm512_mask_storeu_ps(neg + u * nu, live,
                            _mm512_mul_ps(_mm512_mul_ps(_mm512_sub_ps(windows, p), shared), w));
    }
    return;
  }
#endif
  for (std::size_t u = 0; u < mu; ++u) {
    const float* p = pos + u * nu;
    float* out = neg + u * nu;
    float windows = 0;
    for (std::size_t v = 0; v < nu; ++v) windows += p[v];
    for (std::size_t v = 0; v < nu; ++v)
      out[v] = (windows - p[v]) * static_cast<float>(colShared[v]) * weight;
  }
}

template <typename Probe>
double combinedUpdate(float* input, float* output, std::size_t dim, const CombinedBlock& k,
                      float alpha, const Sigmoid& sigmoid, ThreadState& state, BatchedPath path,
                      const Probe& probe, std::int64_t& predictions,
                      WeightType weights = WeightType::Fp32) {
  if (k.count == 0) return 0;
  // The span of positions the windows reach, and the pairs they make.
  auto bounds = [&](std::size_t j) {
    const std::size_t q = k.first + j, r = static_cast<std::size_t>(k.reach[j]);
    return std::pair{q - std::min(q, r), std::min(k.length - 1, q + r)};
  };
  std::size_t lo = k.first, hi = k.first;
  std::int64_t pairs = 0;
  for (std::size_t j = 0; j < k.count; ++j) {
    const auto [a, z] = bounds(j);
    pairs += static_cast<std::int64_t>(z - a);
    lo = std::min(lo, a);
    hi = std::max(hi, z);
  }
  const std::size_t span = hi - lo + 1, cols = k.count + k.negativeCount;
  // Scratch: per window its first and last position (from lo); per position its
  // window count and row; rows; columns of centres and negatives; per column how
  // many shared negatives it is.
  state.ids.resize(2 * k.count + 3 * span + 1 + 3 * cols);
  std::int32_t* from = state.ids.data();
  std::int32_t* to = from + k.count;
  std::int32_t* times = to + k.count;
  std::int32_t* rowAt = times + span + 1;
  std::int32_t* crow = rowAt + span;
  std::int32_t* trow = crow + span;
  std::int32_t* colOf = trow + cols;  // centres, then negatives
  std::int32_t* colShared = colOf + cols;
  for (std::size_t j = 0; j < k.count; ++j) {
    const auto [a, z] = bounds(j);
    from[j] = static_cast<std::int32_t>(a - lo);
    to[j] = static_cast<std::int32_t>(z - lo);
  }
  // Window counts: +1 over each window (as differences, then summed), -1 at its
  // centre.
  std::fill(times, times + span + 1, 0);
  for (std::size_t j = 0; j < k.count; ++j) {
    ++times[from[j]];
    --times[to[j] + 1];
  }
  for (std::size_t s = 1; s < span; ++s) times[s] += times[s - 1];
  for (std::size_t j = 0; j < k.count; ++j) --times[k.first + j - lo];
  std::size_t mu = 0, nu = 0;
  for (std::size_t s = 0; s < span; ++s)
    rowAt[s] = times[s] ? static_cast<std::int32_t>(rowOf(k.ids[lo + s], crow, mu)) : -1;
  for (std::size_t j = 0; j < k.count; ++j)
    colOf[j] = static_cast<std::int32_t>(rowOf(k.ids[k.first + j], trow, nu));
  for (std::size_t i = 0; i < k.negativeCount; ++i)
    colOf[k.count + i] = static_cast<std::int32_t>(rowOf(k.negatives[i], trow, nu));
  if (mu == 0) return 0;
  predictions += pairs;

  state.positive.assign(mu * nu, 0.0f);
  state.negative.resize(mu * nu);
  float* pos = state.positive.data();
  float* neg = state.negative.data();
  // Every (context, centre) pair is a positive..
  for (std::size_t j = 0; j < k.count; ++j) {
    float* column = pos + colOf[j];
    const auto centre = static_cast<std::int32_t>(k.first + j - lo);
    for (auto s = from[j]; s <= to[j]; ++s)
      if (s != centre) column[static_cast<std::size_t>(rowAt[s]) * nu] += 1;
  }
  // ..and meets each shared negative once, except a negative equal to its centre,
  // which is skipped (as the classic kernel skips it). Cell (u, v) then counts
  // (pairs of u - pairs of u with centre v) x (times v is a shared negative): the
  // first is row u's positive total, the second the cell's positive count.
  std::fill(colShared, colShared + nu, 0);
  for (std::size_t i = 0; i < k.negativeCount; ++i) ++colShared[colOf[k.count + i]];
  negativeWeights(pos, colShared, mu, nu, k.negativeWeight, neg);
  return blockUpdate(input, output, dim, crow, mu, trow, nu, alpha, sigmoid, state, path, probe,
                     weights);
}

}  // namespace

double batchedWindow(float* input, float* output, std::size_t dim, const std::int32_t* contexts,
                     std::size_t m, const std::int32_t* targets, std::size_t n, float alpha,
                     const Sigmoid& sigmoid, ThreadState& state, BatchedPath path,
                     WeightType weights) {
  return windowUpdate(input, output, dim, contexts, m, targets, n, alpha, sigmoid, state, path,
                      NoProbe{}, weights);
}

double combinedBlock(float* input, float* output, std::size_t dim, const CombinedBlock& block,
                     float alpha, const Sigmoid& sigmoid, ThreadState& state, BatchedPath path,
                     std::int64_t& predictions) {
  return combinedUpdate(input, output, dim, block, alpha, sigmoid, state, path, NoProbe{},
                        predictions);
}

namespace {

template <typename Probe>
class BatchedSkipGram final : public TrainKernel {
 public:
  BatchedSkipGram(const TrainConfig& c, const KernelShared& s, BatchedPath path, Probe probe)
      : in_(s.input->data()),
        out_(s.output->data()),
        noise_(s.noise),
        sigmoid_(s.sigmoid),
        dim_(c.dim),
        window_(c.window),
        shrink_(c.shrinkWindows),
        negative_(static_cast<std::size_t>(c.negative)),
        path_(path),
        probe_(probe),
        combine_(static_cast<std::size_t>(c.combine)),
        blockNegatives_(static_cast<std::size_t>(c.blockNegativesFor())),
        weights_(c.weights),
        rowBytes_(c.dim * weightTypeBytes(c.weights)) {}

  double sentence(const std::int32_t* ids, std::size_t n, float alpha, ThreadState& st,
                  std::int64_t& predictions) const override {
    if (combine_ > 1) return combined(ids, n, alpha, st, predictions);
    double loss = 0;
    const auto len = static_cast<std::int64_t>(n);
    const std::size_t maxCtx = static_cast<std::size_t>(2 * window_);
    const std::size_t stride = negative_ + 1;
    st.window.resize(maxCtx + (kAhead + 1) * stride);
    std::int32_t* contexts = st.window.data();
    // A ring of target sets: window i + kAhead's negatives are drawn early so their
    // rows can be prefetched while window i computes (random output rows are the
    // cache misses of this kernel).
    std::int32_t* ring = contexts + maxCtx;
    for (std::size_t a = 0; a < kAhead; ++a) drawNegatives(ring + a * stride, st.rng);
    for (std::int64_t i = 0; i < len; ++i) {
      const std::int64_t reach = drawReach(st.rng);
      const std::int64_t ahead = i + static_cast<std::int64_t>(kAhead);
      std::int32_t* targets = ring + static_cast<std::size_t>(i % (kAhead + 1)) * stride;
      if (ahead < len) {
        std::int32_t* later = ring + static_cast<std::size_t>(ahead % (kAhead + 1)) * stride;
        drawNegatives(later, st.rng);
        prefetchRow(out_, ids[ahead]);
        for (std::size_t k = 1; k <= negative_; ++k) prefetchRow(out_, later[k]);
        // The word entering the widest window then.
        if (ahead + window_ < len) prefetchRow(in_, ids[ahead + window_]);
      }
      const std::int64_t lo = std::max<std::int64_t>(0, i - reach),
                         hi = std::min(len - 1, i + reach);
      std::size_t m = 0;
      for (std::int64_t c = lo; c <= hi; ++c)
        if (c != i) contexts[m++] = ids[c];
      if (m > 0) {
        targets[0] = ids[i];
        loss += windowUpdate(in_, out_, dim_, contexts, m, targets, negative_ + 1, alpha, *sigmoid_,
                             st, path_, probe_, weights_);
        predictions += static_cast<std::int64_t>(m);
      }
    }
    return loss;
  }

 private:
  // Blocks of combine_ centre words (combinedBlock); the next block's reaches and
  // negatives are drawn while this one computes, so its new rows can be prefetched.
  double combined(const std::int32_t* ids, std::size_t n, float alpha, ThreadState& st,
                  std::int64_t& predictions) const {
    const std::size_t width = combine_ + blockNegatives_;
    st.window.resize(2 * width);
    auto draw = [&](std::int32_t* slot, std::size_t first) {
      const std::size_t count = std::min(combine_, n - first);
      for (std::size_t j = 0; j < count; ++j)
        slot[j] = static_cast<std::int32_t>(drawReach(st.rng));
      for (std::size_t i = 0; i < blockNegatives_; ++i)
        slot[combine_ + i] = noise_->draw(st.rng.next());
    };
    const auto reach = static_cast<std::size_t>(window_);
    const float weight = static_cast<float>(negative_) / static_cast<float>(blockNegatives_);
    double loss = 0;
    draw(st.window.data(), 0);
    for (std::size_t first = 0, b = 0; first < n; first += combine_, ++b) {
      std::int32_t* now = st.window.data() + (b & 1) * width;
      const std::size_t next = first + combine_;
      if (next < n) {
        std::int32_t* later = st.window.data() + ((b + 1) & 1) * width;
        draw(later, next);
        const std::size_t end = std::min(n, next + combine_);
        for (std::size_t q = next; q < end; ++q) prefetchRow(out_, ids[q]);
        for (std::size_t i = 0; i < blockNegatives_; ++i) prefetchRow(out_, later[combine_ + i]);
        for (std::size_t p = next + reach; p < std::min(n, end + reach); ++p)
          prefetchRow(in_, ids[p]);
      }
      const CombinedBlock block{
          ids,   n, first, std::min(combine_, n - first), now, now + combine_, blockNegatives_,
          weight};
      loss += combinedUpdate(in_, out_, dim_, block, alpha, *sigmoid_, st, path_, probe_,
                             predictions, weights_);
    }
    return loss;
  }

  // Windows of look-ahead for the prefetches (1, 2 and 3 measured alike on Brown).
  static constexpr std::size_t kAhead = 1;
  std::int64_t drawReach(Rng& rng) const { return detail::drawReach(window_, shrink_, rng); }
  void drawNegatives(std::int32_t* targets, Rng& rng) const {
    for (std::size_t k = 1; k <= negative_; ++k) targets[k] = noise_->draw(rng.next());
  }
  // Into L2 (prefetcht1), as the subword kernel does: a window ahead is more rows
  // than L1 holds beside the block's own
  // (docs/benchmarks.md#the-kernels-halves-and-the-float32-bound).
  void prefetchRow(const float* matrix, std::int32_t row) const {
    if (!probe_.prefetches()) return;
    prefetchLines(reinterpret_cast<const char*>(matrix) + static_cast<std::size_t>(row) * rowBytes_,
                  rowBytes_, Prefetch::IntoL2);
  }

  float* in_;
  float* out_;
  const NoiseSampler* noise_;
  const Sigmoid* sigmoid_;
  std::size_t dim_;
  std::int64_t window_;
  bool shrink_;
  std::size_t negative_;
  BatchedPath path_;
  Probe probe_;
  std::size_t combine_, blockNegatives_;
  WeightType weights_;
  std::size_t rowBytes_;  // one stored row (dim x 4 or 2 bytes)
};

}  // namespace

std::unique_ptr<TrainKernel> makeBatchedSkipGram(const TrainConfig& config,
                                                 const KernelShared& shared, BatchedPath path) {
  return std::make_unique<BatchedSkipGram<NoProbe>>(config, shared, path, NoProbe{});
}

std::unique_ptr<TrainKernel> makeBatchedSkipGram(const TrainConfig& config,
                                                 const KernelShared& shared, KernelProbe& probe) {
  return std::make_unique<BatchedSkipGram<WithProbe>>(config, shared, BatchedPath::Auto,
                                                      WithProbe(probe));
}

}  // namespace posvec::detail
