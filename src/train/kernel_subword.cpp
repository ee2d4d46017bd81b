#include "kernel_subword.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "posvec/error.hpp"
#include "posvec/subwords.hpp"
#include "row_math.hpp"

// How this follows fastText 0.9.2 (Model::update, unsupervised): a word's input
// vector is the mean of its rows (computeHidden: the rows summed in order, then
// scaled by 1 / count), and the gradient with respect to that mean is added to
// every row whole (no 1 / count: fastText scales only for supervised models).
// Skip-gram follows fastText's orientation and order too: the centre word's
// composed vector predicts each context word with fresh negatives per pair, every
// output row updated at once (subwordWindow). The centre is composed once per
// window and moved after each pair as composing it again from updated rows would
// move it; its rows take the window's summed gradient at the end. The blocked
// update this replaced (context words composed, a block's pairs and shared
// negatives all scored from the values before the block, as the batched word
// kernel does) trained faster but cost SimLex-999 and the unknown words a fifth to a
// third of their correlation: most likely the many pairs that push one stale centre
// row (and shared negatives) at once overshoot with composed vectors' large steps
// (docs/benchmarks-history.md#the-subword-skip-gram-update). With 16-bit weights
// every row is widened exactly for the arithmetic and rounded back stochastically
// (docs/design/16-bit-weights.md).

namespace posvec::detail {

namespace {

inline const float* rowAt(const float* m, std::int32_t r, std::size_t dim) {
  return m + static_cast<std::size_t>(r) * dim;
}
inline float* rowAt(float* m, std::int32_t r, std::size_t dim) {
  return m + static_cast<std::size_t>(r) * dim;
}

// y += x
inline void addTo(float* __restrict y, const float* __restrict x, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) y[i] += x[i];
}

inline void prefetchRow(const float* row, std::size_t dim) {
  prefetchLines(row, dim * sizeof(float), Prefetch::ForWrite);
}

#if defined(__AVX512F__)
// a · b in four 16-lane sums: one accumulator would chain n / 8 dependent additions
// into every score, and a window's 36 or so scores wait on them (an epoch about a
// tenth shorter at dims 100 and 300: docs/benchmarks-history.md, "what changed in the
// kernel").
inline float scoreRow(const float* __restrict a, const float* __restrict b, std::size_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), s2);
    s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), s3);
  }
  for (; i + 16 <= n; i += 16)
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
  if (i < n) {
    const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
    s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}
#else
// a · b over n floats in 8 partial sums added as a tree.
inline float scoreRow(const float* __restrict a, const float* __restrict b, std::size_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
#pragma omp simd
    for (std::size_t l = 0; l < 8; ++l) acc[l] += a[i + l] * b[i + l];
  for (std::size_t l = 0; i + l < n; ++l) acc[l] += a[i + l] * b[i + l];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}
#endif

// Rows ahead that the sums prefetch.
constexpr std::size_t kAhead = 4;

// The sum of `n` rows, scaled by 1 / n, into out (fastText's computeHidden order).
void meanOfRows(const float* input, std::size_t dim, const std::int32_t* rows, std::size_t n,
                float* __restrict out) {
  std::memset(out, 0, dim * sizeof(float));
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) prefetchRow(rowAt(input, rows[i + kAhead], dim), dim);
    addTo(out, rowAt(input, rows[i], dim), dim);
  }
  if (n == 0) return;
  const float inv = 1.0f / static_cast<float>(n);
#pragma omp simd
  for (std::size_t d = 0; d < dim; ++d) out[d] *= inv;
}

// delta[] added to each of the n rows.
void scatter(float* input, std::size_t dim, const std::int32_t* rows, std::size_t n,
             const float* delta) {
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 2 < n) prefetchRow(rowAt(input, rows[i + 2], dim), dim);
    addTo(rowAt(input, rows[i], dim), delta, dim);
  }
}

// 16-bit rows (bfloat16 or binary16, the model's weights packed): the same sums in
// float32, each row widened exactly first.
inline const std::uint16_t* rowAt16(const std::uint16_t* m, std::int32_t r, std::size_t dim) {
  return m + static_cast<std::size_t>(r) * dim;
}
inline std::uint16_t* rowAt16(std::uint16_t* m, std::int32_t r, std::size_t dim) {
  return m + static_cast<std::size_t>(r) * dim;
}
inline void prefetchRow16(const std::uint16_t* row, std::size_t dim) {
  prefetchLines(row, dim * sizeof(std::uint16_t), Prefetch::ForWrite);
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
constexpr bool kFusedBf16 = true;
inline __mmask16 tailMask16(std::size_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}
inline __m512 loadBf16Row(const std::uint16_t* p, __mmask16 m) {
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}
// out += the bfloat16 row, widened on the fly.
inline void addBf16Row(float* __restrict out, const std::uint16_t* row, std::size_t dim) {
  for (std::size_t j = 0; j < dim; j += 16) {
    const __mmask16 m = tailMask16(dim - j);
    _mm512_mask_storeu_ps(out + j, m,
                          _mm512_add_ps(_mm512_maskz_loadu_ps(m, out + j), loadBf16Row(row + j, m)));
  }
}
// row += delta on a bfloat16 row, widened in registers and rounded back as
// widenRow, addTo and narrowRow would (the same sums, the same bits in the same
// order: `lanes` stepped once per 32 values).
inline void addToBf16Row(std::uint16_t* row, const float* __restrict delta, std::size_t dim,
                         __m512i& lanes) {
  for (std::size_t j = 0; j < dim; j += 32) {
    stepRoundingLanes(lanes);
    const __mmask32 mask = tailMask32(dim - j);
    const auto m0 = static_cast<__mmask16>(mask), m1 = static_cast<__mmask16>(mask >> 16);
    const __m512 x0 = _mm512_add_ps(loadBf16Row(row + j, m0), _mm512_maskz_loadu_ps(m0, delta + j));
    const __m512 x1 =
        _mm512_add_ps(loadBf16Row(row + j + 16, m1), _mm512_maskz_loadu_ps(m1, delta + j + 16));
    _mm512_mask_storeu_epi16(row + j, mask, roundBf16Stochastic(x0, x1, lanes));
  }
}
#else
constexpr bool kFusedBf16 = false;
inline void addBf16Row(float*, const std::uint16_t*, std::size_t) {}
#endif

// As meanOfRows; `wide` holds dim floats of scratch.
void meanOfRows16(const std::uint16_t* input, std::size_t dim, const std::int32_t* rows,
                  std::size_t n, float* __restrict out, float* __restrict wide, WeightType type,
                  BatchedPath path) {
  std::memset(out, 0, dim * sizeof(float));
  const bool fused = kFusedBf16 && type == WeightType::Bf16 && path != BatchedPath::Portable;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) prefetchRow16(rowAt16(input, rows[i + kAhead], dim), dim);
    if (fused) {
      addBf16Row(out, rowAt16(input, rows[i], dim), dim);
      continue;
    }
    widenRow(rowAt16(input, rows[i], dim), wide, dim, type, path);
    addTo(out, wide, dim);
  }
  if (n == 0) return;
  const float inv = 1.0f / static_cast<float>(n);
#pragma omp simd
  for (std::size_t d = 0; d < dim; ++d) out[d] *= inv;
}

// delta[] added to each of the n rows, each sum rounded stochastically with the next
// bits of `bits` (a row listed twice is updated twice, as in float32).
void scatter16(std::uint16_t* input, std::size_t dim, const std::int32_t* rows, std::size_t n,
               const float* delta, float* __restrict wide, WeightType type, RoundingBits& bits,
               BatchedPath path) {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  if (type == WeightType::Bf16 && path != BatchedPath::Portable) {
    __m512i lanes = _mm512_loadu_si512(bits.lane);
    for (std::size_t i = 0; i < n; ++i) {
      if (i + 2 < n) prefetchRow16(rowAt16(input, rows[i + 2], dim), dim);
      addToBf16Row(rowAt16(input, rows[i], dim), delta, dim, lanes);
    }
    _mm512_storeu_si512(bits.lane, lanes);
    return;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 2 < n) prefetchRow16(rowAt16(input, rows[i + 2], dim), dim);
    std::uint16_t* row = rowAt16(input, rows[i], dim);
    widenRow(row, wide, dim, type, path);
    addTo(wide, delta, dim);
    narrowRow(wide, row, dim, type, bits, path);
  }
}

}  // namespace

SubwordRows subwordRowsOf(const std::vector<std::string>& words, const TrainConfig& config,
                          int threads) {
  const std::size_t v = words.size();
  std::vector<std::vector<std::int64_t>> lists(v);
  const auto nwords = static_cast<std::int64_t>(v);
#pragma omp parallel for num_threads(std::max(1, threads)) schedule(dynamic, 1024)
  for (std::int64_t i = 0; i < nwords; ++i)
    lists[static_cast<std::size_t>(i)] =
        ngramRows(words[static_cast<std::size_t>(i)], config.minn, config.maxn, config.bucket,
                  nwords);
  SubwordRows r;
  r.offsets.resize(v + 1);
  std::size_t total = 0;
  for (std::size_t i = 0; i < v; ++i) {
    r.offsets[i] = static_cast<std::int64_t>(total);
    total += 1 + lists[i].size();
  }
  r.offsets[v] = static_cast<std::int64_t>(total);
  r.rows.resize(total);
  for (std::size_t i = 0; i < v; ++i) {
    std::int32_t* to = r.rows.data() + r.offsets[i];
    *to++ = static_cast<std::int32_t>(i);
    for (const std::int64_t row : lists[i]) *to++ = static_cast<std::int32_t>(row);
  }
  r.repeatsAt.assign(v, -1);
  std::vector<std::int32_t> sorted;
  for (std::size_t i = 0; i < v; ++i) {
    const std::int32_t* list = r.rows.data() + r.offsets[i];
    const std::size_t n = 1 + lists[i].size();
    sorted.assign(list, list + n);
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) continue;
    r.repeatsAt[i] = static_cast<std::int64_t>(r.firstListings.size());
    const std::size_t countAt = r.firstListings.size();
    r.firstListings.push_back(0);
    for (std::size_t a = 0; a < n; ++a)
      if (std::find(list, list + a, list[a]) == list + a)
        r.firstListings.push_back(static_cast<std::int32_t>(a));
    r.firstListings[countAt] = static_cast<std::int32_t>(r.firstListings.size() - countAt - 1);
  }
  return r;
}

void composeWord(const float* input, std::size_t dim, const SubwordRows& rows, std::int32_t w,
                 float* out) {
  meanOfRows(input, dim, rows.of(w), rows.count(w), out);
}

void composeWord(const std::uint16_t* input, std::size_t dim, const SubwordRows& rows,
                 std::int32_t w, float* out, WeightType type) {
  std::vector<float> wide(dim);
  meanOfRows16(input, dim, rows.of(w), rows.count(w), out, wide.data(), type, BatchedPath::Auto);
}

namespace {

// The predictions of one window after the centre's mean is in h (hidden[0..dim)):
// fastText's order. `score(t)` gives h · (output row t); `update(t, g)` adds g times
// that row to grad and then g h to the row (both from the row's value before). The
// window's summed gradient is left in total (hidden[dim..2 dim)) for the centre's rows.
template <typename Score, typename Update>
double windowPredictions(float* hidden, float* grad, std::size_t dim,
                         const std::int32_t* contexts, std::size_t m,
                         const std::int32_t* negatives, std::size_t negative, float alpha,
                         const Sigmoid& sigmoid, Score score, Update update) {
  float* h = hidden;
  float* total = hidden + dim;
  std::memset(total, 0, dim * sizeof(float));
  double loss = 0;
  for (std::size_t j = 0; j < m; ++j) {
    std::memset(grad, 0, dim * sizeof(float));
    for (std::size_t k = 0; k <= negative; ++k) {
      const bool positive = k == 0;
      const std::int32_t t = positive ? contexts[j] : negatives[j * negative + k - 1];
      if (!positive && t == contexts[j]) continue;
      const float f = score(t);
      const float g = ((positive ? 1.0f : 0.0f) - sigmoid.sigmoid(f)) * alpha;
      loss += sigmoid.softplus(positive ? -f : f);
      update(t, g);
    }
    // The mean where fastText, which adds the pair's gradient to the rows at once,
    // composes it again for the next pair.
#pragma omp simd
    for (std::size_t d = 0; d < dim; ++d) {
      h[d] += grad[d];
      total[d] += grad[d];
    }
  }
  return loss;
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
// A bfloat16 output row scored and updated with its values widened in registers,
// never through a float32 copy: the same sums as scoreRow on the widened row, and the
// update rounded back as narrowRow rounds it (the same bits drawn in the same order).
inline float scoreRowBf16(const float* __restrict h, const std::uint16_t* o, std::size_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  const __mmask16 all = 0xFFFF;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(h + i), loadBf16Row(o + i, all), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(h + i + 16), loadBf16Row(o + i + 16, all), s1);
    s2 = _mm512_fmadd_ps(_mm512_loadu_ps(h + i + 32), loadBf16Row(o + i + 32, all), s2);
    s3 = _mm512_fmadd_ps(_mm512_loadu_ps(h + i + 48), loadBf16Row(o + i + 48, all), s3);
  }
  for (; i + 16 <= n; i += 16)
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(h + i), loadBf16Row(o + i, all), s0);
  if (i < n) {
    const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
    s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, h + i), loadBf16Row(o + i, m), s1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

// grad += g o; o += g h, rounded stochastically (floatToBf16Stochastic) with `bits`.
inline void rowUpdateBf16(float g, const float* __restrict h, std::uint16_t* o,
                          float* __restrict grad, std::size_t n, RoundingBits& bits) {
  __m512i lanes = _mm512_loadu_si512(bits.lane);
  const __m512 gv = _mm512_set1_ps(g);
  for (std::size_t j = 0; j < n; j += 32) {
    stepRoundingLanes(lanes);
    const __mmask32 mask = tailMask32(n - j);
    const auto m0 = static_cast<__mmask16>(mask), m1 = static_cast<__mmask16>(mask >> 16);
    const __m512 o0 = loadBf16Row(o + j, m0), o1 = loadBf16Row(o + j + 16, m1);
    _mm512_mask_storeu_ps(grad + j, m0, _mm512_fmadd_ps(gv, o0, _mm512_maskz_loadu_ps(m0, grad + j)));
    _mm512_mask_storeu_ps(grad + j + 16, m1,
                          _mm512_fmadd_ps(gv, o1, _mm512_maskz_loadu_ps(m1, grad + j + 16)));
    const __m512 x0 = _mm512_fmadd_ps(gv, _mm512_maskz_loadu_ps(m0, h + j), o0);
    const __m512 x1 = _mm512_fmadd_ps(gv, _mm512_maskz_loadu_ps(m1, h + j + 16), o1);
    _mm512_mask_storeu_epi16(o + j, mask, roundBf16Stochastic(x0, x1, lanes));
  }
  _mm512_storeu_si512(bits.lane, lanes);
}
#endif

}  // namespace

double subwordWindow(float* input, float* output, std::size_t dim, const SubwordRows& rows,
                     std::int32_t centre, const std::int32_t* contexts, std::size_t m,
                     const std::int32_t* negatives, std::size_t negative, float alpha,
                     const Sigmoid& sigmoid, float* hidden, float* grad) {
  composeWord(input, dim, rows, centre, hidden);
  // Each distinct row takes a pair's gradient once (SubwordRows::updatedRows), so
  // composing again would move the mean by the gradient itself.
  float* o = nullptr;  // the row scored last
  const double loss = windowPredictions(
      hidden, grad, dim, contexts, m, negatives, negative, alpha, sigmoid,
      [&](std::int32_t t) {
        o = rowAt(output, t, dim);
        return scoreRow(hidden, o, dim);
      },
      [&](std::int32_t, float g) {
        rowAxpy(g, o, grad, dim);
        rowAxpy(g, hidden, o, dim);
      });
  thread_local std::vector<std::int32_t> distinct;
  std::size_t n = 0;
  const std::int32_t* updated = rows.updatedRows(centre, distinct, n);
  scatter(input, dim, updated, n, hidden + dim);
  return loss;
}

double subwordWindow16(std::uint16_t* input, std::uint16_t* output, std::size_t dim,
                       const SubwordRows& rows, std::int32_t centre, const std::int32_t* contexts,
                       std::size_t m, const std::int32_t* negatives, std::size_t negative,
                       float alpha, const Sigmoid& sigmoid, WeightType type, float* hidden,
                       float* grad, float* wide, RoundingBits& bits, BatchedPath path) {
  const std::int32_t* list = rows.of(centre);
  const std::size_t n = rows.count(centre);
  meanOfRows16(input, dim, list, n, hidden, wide, type, path);
  thread_local std::vector<std::int32_t> distinct;
  std::size_t updatedCount = 0;
  const std::int32_t* updated = rows.updatedRows(centre, distinct, updatedCount);
  double loss;
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  if (type == WeightType::Bf16 && path != BatchedPath::Portable) {
    loss = windowPredictions(
        hidden, grad, dim, contexts, m, negatives, negative, alpha, sigmoid,
        [&](std::int32_t t) { return scoreRowBf16(hidden, rowAt16(output, t, dim), dim); },
        [&](std::int32_t t, float g) {
          rowUpdateBf16(g, hidden, rowAt16(output, t, dim), grad, dim, bits);
        });
    scatter16(input, dim, updated, updatedCount, hidden + dim, wide, type, bits, path);
    return loss;
  }
#endif
  // Each output row widened into `wide`, updated there and rounded back.
  loss = windowPredictions(
      hidden, grad, dim, contexts, m, negatives, negative, alpha, sigmoid,
      [&](std::int32_t t) {
        widenRow(rowAt16(output, t, dim), wide, dim, type, path);
        return scoreRow(hidden, wide, dim);
      },
      [&](std::int32_t t, float g) {
        rowAxpy(g, wide, grad, dim);
        rowAxpy(g, hidden, wide, dim);
        narrowRow(wide, rowAt16(output, t, dim), dim, type, bits, path);
      });
  scatter16(input, dim, updated, updatedCount, hidden + dim, wide, type, bits, path);
  return loss;
}

namespace {

// Skip-gram as fastText trains it: each centre word's composed vector predicts each
// of its context words (subwordWindow), with `negative`
// fresh noise words per pair; a draw equal to the pair's context word is drawn again
// (fastText's getNegative; after 16 such draws it is skipped). The window's negatives are drawn before its arithmetic
// so that their output rows can be prefetched.
class SubwordSkipGram final : public TrainKernel {
 public:
  SubwordSkipGram(const TrainConfig& c, const KernelShared& s, BatchedPath path)
      : in_(s.input->data()),
        out_(s.output->data()),
        rows_(s.subwords),
        noise_(s.noise),
        sigmoid_(s.sigmoid),
        dim_(c.dim),
        window_(c.window),
        shrink_(c.shrinkWindows),
        negative_(static_cast<std::size_t>(c.negative)),
        weights_(c.weights),
        path_(path),
        rowBytes_(c.dim * weightTypeBytes(c.weights)) {}

  double sentence(const std::int32_t* ids, std::size_t n, float alpha, ThreadState& st,
                  std::int64_t& predictions) const override {
    if (n < 2) return 0;  // no context
    // Two windows' contexts and negatives: window i + 1's are drawn and its rows
    // prefetched (output rows are this kernel's cache misses) while window i computes.
    const std::size_t maxContexts = 2 * static_cast<std::size_t>(window_);
    const std::size_t stride = maxContexts * (1 + negative_);
    st.grad.resize(dim_);
    st.hidden.resize(2 * dim_);
    st.composed.resize(dim_);  // 16-bit weights: a row widened
    st.local.resize(2 * stride);
    std::size_t count[2] = {0, 0};
    prepare(ids, n, 0, st.local.data(), count[0], st.rng);
    double loss = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::int32_t* now = st.local.data() + (i & 1) * stride;
      if (i + 1 < n)
        prepare(ids, n, i + 1, st.local.data() + ((i + 1) & 1) * stride, count[(i + 1) & 1],
                st.rng);
      const std::size_t m = count[i & 1];
      if (m == 0) continue;
      if (weights_ == WeightType::Fp32) {
        loss += subwordWindow(in_, out_, dim_, *rows_, ids[i], now, m, now + maxContexts,
                              negative_, alpha, *sigmoid_, st.hidden.data(), st.grad.data());
      } else {
        // One draw of the thread's generator seeds the window's rounding bits.
        RoundingBits bits(static_cast<std::uint32_t>(st.rng.next()));
        loss += subwordWindow16(reinterpret_cast<std::uint16_t*>(in_),
                                reinterpret_cast<std::uint16_t*>(out_), dim_, *rows_, ids[i], now,
                                m, now + maxContexts, negative_, alpha, *sigmoid_, weights_,
                                st.hidden.data(), st.grad.data(), st.composed.data(), bits, path_);
      }
      predictions += static_cast<std::int64_t>(m);
    }
    return loss;
  }

 private:
  // Window i's contexts into w[0..m) and their negatives after maxContexts slots,
  // with their output rows and the centre's input rows prefetched.
  void prepare(const std::int32_t* ids, std::size_t n, std::size_t i, std::int32_t* w,
               std::size_t& m, Rng& rng) const {
    const auto reach = static_cast<std::size_t>(drawReach(window_, shrink_, rng));
    const std::size_t lo = i - std::min(i, reach), hi = std::min(n - 1, i + reach);
    std::int32_t* negatives = w + 2 * static_cast<std::size_t>(window_);
    m = 0;
    for (std::size_t c = lo; c <= hi; ++c)
      if (c != i) {
        w[m++] = ids[c];
        prefetch(out_, ids[c]);
      }
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t k = 0; k < negative_; ++k) {
        // (Bounded: a vocabulary whose noise is all one word must not hang; a
        // negative still equal to its context is skipped by subwordWindow.)
        std::int32_t t = noise_->draw(rng.next());
        for (int tries = 0; t == w[j] && tries < 16; ++tries) t = noise_->draw(rng.next());
        negatives[j * negative_ + k] = t;
        prefetch(out_, t);
      }
    const std::int32_t* r = rows_->of(ids[i]);
    for (std::size_t k = 0, c = rows_->count(ids[i]); k < c; ++k)
      prefetch(in_, r[k]);
  }

  // Row r of a matrix of float32 or 16-bit rows, into L2 (prefetcht1): the next
  // window's 40-odd rows, tens of KB at dim 300, would push this window's rows out
  // of L1 (prefetchw into L1 made a dim-300 epoch about a sixth slower:
  // docs/benchmarks-history.md, "what changed in the kernel").
  void prefetch(const float* matrix, std::int32_t r) const {
    prefetchLines(reinterpret_cast<const char*>(matrix) + static_cast<std::size_t>(r) * rowBytes_,
                  rowBytes_, Prefetch::IntoL2);
  }

  float* in_;
  float* out_;
  const SubwordRows* rows_;
  const NoiseSampler* noise_;
  const Sigmoid* sigmoid_;
  std::size_t dim_;
  std::int64_t window_;
  bool shrink_;
  std::size_t negative_;
  WeightType weights_;
  BatchedPath path_;
  std::size_t rowBytes_;  // one stored row (dim x 4 or 2 bytes)
};

// fastText's cbow: the mean of every row of every context word (a row listed
// twice counts twice) predicts the centre word against `negative` noise words
// (one equal to the centre is skipped, as posvec's classic CBOW skips it); every
// listed row receives the whole gradient.
class SubwordCbow final : public TrainKernel {
 public:
  SubwordCbow(const TrainConfig& c, const KernelShared& s)
      : in_(s.input->data()),
        out_(s.output->data()),
        rows_(s.subwords),
        noise_(s.noise),
        sigmoid_(s.sigmoid),
        dim_(c.dim),
        window_(c.window),
        shrink_(c.shrinkWindows),
        negative_(c.negative) {}

  double sentence(const std::int32_t* ids, std::size_t n, float alpha, ThreadState& st,
                  std::int64_t& predictions) const override {
    st.grad.resize(dim_);
    st.hidden.resize(dim_);
    float* grad = st.grad.data();
    float* h = st.hidden.data();
    const Sigmoid& sg = *sigmoid_;
    double loss = 0;
    const auto len = static_cast<std::int64_t>(n);
    for (std::int64_t i = 0; i < len; ++i) {
      const std::int64_t reach = drawReach(window_, shrink_, st.rng);
      const std::int64_t lo = std::max<std::int64_t>(0, i - reach),
                         hi = std::min(len - 1, i + reach);
      if (hi == lo) continue;  // no context (a one-word sentence)
      st.local.clear();
      for (std::int64_t c = lo; c <= hi; ++c)
        if (c != i) {
          const auto w = ids[c];
          st.local.insert(st.local.end(), rows_->of(w), rows_->of(w) + rows_->count(w));
        }
      const std::int32_t* bow = st.local.data();
      const std::size_t rows = st.local.size();
      meanOfRows(in_, dim_, bow, rows, h);
      std::memset(grad, 0, dim_ * sizeof(float));
      loss += negativeSamplingStep(h, ids[i], alpha, grad, out_, dim_, negative_, *noise_, sg,
                                   st.rng);
      // A context word that lists a row twice has it updated once (updatedRows).
      bool repeats = false;
      for (std::int64_t c = lo; c <= hi && !repeats; ++c)
        repeats = c != i && rows_->repeatsAt[static_cast<std::size_t>(ids[c])] >= 0;
      if (!repeats) {
        scatter(in_, dim_, bow, rows, grad);
      } else {
        thread_local std::vector<std::int32_t> distinct;
        for (std::int64_t c = lo; c <= hi; ++c) {
          if (c == i) continue;
          std::size_t k = 0;
          const std::int32_t* updated = rows_->updatedRows(ids[c], distinct, k);
          scatter(in_, dim_, updated, k, grad);
        }
      }
      ++predictions;
    }
    return loss;
  }

 private:
  float* in_;
  float* out_;
  const SubwordRows* rows_;
  const NoiseSampler* noise_;
  const Sigmoid* sigmoid_;
  std::size_t dim_;
  std::int64_t window_;
  bool shrink_;
  int negative_;
};

}  // namespace

std::unique_ptr<TrainKernel> makeSubwordKernel(const TrainConfig& config,
                                               const KernelShared& shared) {
  if (!shared.subwords)
    throw ConfigError("cannot build the training kernel: subword training needs each word's rows");
  if (config.loss != Loss::NegativeSampling)
    throw ConfigError(ErrorText::about(Setting{"subwords", "subword training"})
                      << " uses negative sampling; hierarchical softmax with subwords is not "
                         "available");
  if (config.architecture == Architecture::Cbow)
    return std::make_unique<SubwordCbow>(config, shared);
  return std::make_unique<SubwordSkipGram>(config, shared, BatchedPath::Auto);
}

}  // namespace posvec::detail
