#include "kernel_subword.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "posvec/error.hpp"
#include "posvec/subwords.hpp"

// How this follows fastText 0.9.2 (Model::update, unsupervised): a word's input
// vector is the mean of its rows (computeHidden: the rows summed in order, then
// scaled by 1 / count), and the gradient with respect to that mean is added to
// every row whole (no 1 / count: fastText scales only for supervised models).
// Skip-gram has fastText's orientation: the centre word's composed vector
// predicts each context word's output row. Centres are combined into blocks as
// the batched kernel combines them: a block's distinct centre words are composed
// once into scratch rows, weightedBlock() trains those against the output rows of
// the windows' context words and the block's shared negatives, and the change of
// each scratch row is scattered once to its word's rows. Within a block every
// score comes from the values before it, as in the batched kernel.

namespace posvec::detail {

namespace {

// Index of `id` in ids[0..k), appended when new (a block has a few dozen words).
std::int32_t localOf(std::int32_t id, std::int32_t* ids, std::size_t& k) {
  std::size_t j = 0;
  while (j < k && ids[j] != id) ++j;
  if (j == k) ids[k++] = id;
  return static_cast<std::int32_t>(j);
}

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
  const char* p = reinterpret_cast<const char*>(row);
  for (std::size_t b = 0; b < dim * sizeof(float); b += 64) __builtin_prefetch(p + b, 1, 3);
}

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
  const char* p = reinterpret_cast<const char*>(row);
  for (std::size_t b = 0; b < dim * sizeof(std::uint16_t); b += 64) __builtin_prefetch(p + b, 1, 3);
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
// The bfloat16 row + delta, rounded back with the next bits of `bits`: the same
// values and bits as widenRow, the sum and narrowRow (kernel_batched.cpp).
inline void addBf16RowRounded(std::uint16_t* row, const float* delta, std::size_t dim,
                              RoundingBits& bits) {
  __m512i lanes = _mm512_loadu_si512(bits.lane);
  const __m512i low = _mm512_set1_epi32(0xFFFF);
  const __m512i upper = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37,
                                         35, 33, 31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7,
                                         5, 3, 1);
  for (std::size_t j = 0; j < dim; j += 32) {
    lanes = _mm512_xor_si512(lanes, _mm512_slli_epi32(lanes, 13));
    lanes = _mm512_xor_si512(lanes, _mm512_srli_epi32(lanes, 17));
    lanes = _mm512_xor_si512(lanes, _mm512_slli_epi32(lanes, 5));
    const std::size_t left = dim - j;
    const __mmask32 mask =
        left >= 32 ? __mmask32(0xFFFFFFFFu) : static_cast<__mmask32>((1u << left) - 1);
    const auto m0 = static_cast<__mmask16>(mask), m1 = static_cast<__mmask16>(mask >> 16);
    const __m512 x0 = _mm512_add_ps(loadBf16Row(row + j, m0), _mm512_maskz_loadu_ps(m0, delta + j));
    const __m512 x1 =
        _mm512_add_ps(loadBf16Row(row + j + 16, m1), _mm512_maskz_loadu_ps(m1, delta + j + 16));
    const __m512i r0 = _mm512_and_si512(lanes, low), r1 = _mm512_srli_epi32(lanes, 16);
    const __m512i h = _mm512_permutex2var_epi16(_mm512_add_epi32(_mm512_castps_si512(x0), r0),
                                                upper,
                                                _mm512_add_epi32(_mm512_castps_si512(x1), r1));
    _mm512_mask_storeu_epi16(row + j, mask, h);
  }
  _mm512_storeu_si512(bits.lane, lanes);
}
#else
constexpr bool kFusedBf16 = false;
inline void addBf16Row(float*, const std::uint16_t*, std::size_t) {}
inline void addBf16RowRounded(std::uint16_t*, const float*, std::size_t, RoundingBits&) {}
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
  const bool fused = kFusedBf16 && type == WeightType::Bf16 && path != BatchedPath::Portable;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 2 < n) prefetchRow16(rowAt16(input, rows[i + 2], dim), dim);
    std::uint16_t* row = rowAt16(input, rows[i], dim);
    if (fused) {
      addBf16RowRounded(row, delta, dim, bits);
      continue;
    }
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

double subwordBlock(float* input, float* output, std::size_t dim, const SubwordRows& rows,
                    const CombinedBlock& k, float alpha, const Sigmoid& sigmoid,
                    ThreadState& state, BatchedPath path, std::int64_t& predictions,
                    WeightType weights) {
  if (k.count == 0) return 0;
  // Each centre's window, as positions from `lo`.
  std::size_t lo = k.first, hi = k.first;
  for (std::size_t j = 0; j < k.count; ++j) {
    const std::size_t q = k.first + j, r = static_cast<std::size_t>(k.reach[j]);
    lo = std::min(lo, q - std::min(q, r));
    hi = std::max(hi, std::min(k.length - 1, q + r));
  }
  const std::size_t span = hi - lo + 1, negatives = k.negativeCount;
  // Scratch ids: the distinct centre words (the block's inputs), their local index,
  // the distinct output words (the windows' context words, then the negatives not
  // among them), each span position's column (-1: in no window) and each
  // negative's, and per column how many shared negatives it is.
  state.local.resize(2 * k.count + 4 * span + 4 * negatives + 2);
  std::int32_t* centres = state.local.data();
  std::int32_t* centreAt = centres + k.count;
  std::int32_t* outWords = centreAt + k.count;
  std::int32_t* colAt = outWords + span + negatives;
  std::int32_t* negCol = colAt + span;
  std::int32_t* shared = negCol + negatives;
  std::size_t mu = 0, nu = 0;
  for (std::size_t j = 0; j < k.count; ++j)
    centreAt[j] = localOf(k.ids[k.first + j], centres, mu);
  std::fill(colAt, colAt + span, -1);
  std::int64_t pairs = 0;
  for (std::size_t j = 0; j < k.count; ++j) {
    const std::size_t q = k.first + j, r = static_cast<std::size_t>(k.reach[j]);
    const std::size_t a = q - std::min(q, r), z = std::min(k.length - 1, q + r);
    pairs += static_cast<std::int64_t>(z - a);
    for (std::size_t p = a; p <= z; ++p)
      if (p != q && colAt[p - lo] < 0) colAt[p - lo] = localOf(k.ids[p], outWords, nu);
  }
  if (pairs == 0) return 0;
  for (std::size_t i = 0; i < negatives; ++i) negCol[i] = localOf(k.negatives[i], outWords, nu);
  predictions += pairs;

  // Cell (u, v): the pairs of centre word u with context word v as positives; each
  // pair meets every shared negative once with the block's weight, except a
  // negative equal to the pair's context word (fastText skips a negative equal to
  // the target), so a negative column v counts (u's pairs - its pairs with v) x
  // (times v is a shared negative).
  state.positive.assign(mu * nu, 0.0f);
  state.negative.assign(mu * nu, 0.0f);
  float* pos = state.positive.data();
  float* neg = state.negative.data();
  for (std::size_t j = 0; j < k.count; ++j) {
    const std::size_t q = k.first + j, r = static_cast<std::size_t>(k.reach[j]);
    const std::size_t a = q - std::min(q, r), z = std::min(k.length - 1, q + r);
    float* row = pos + static_cast<std::size_t>(centreAt[j]) * nu;
    for (std::size_t p = a; p <= z; ++p)
      if (p != q) row[colAt[p - lo]] += 1;
  }
  std::fill(shared, shared + nu, 0);
  for (std::size_t i = 0; i < negatives; ++i) ++shared[negCol[i]];
  for (std::size_t u = 0; u < mu; ++u) {
    const float* p = pos + u * nu;
    float total = 0;
    for (std::size_t v = 0; v < nu; ++v) total += p[v];
    for (std::size_t v = 0; v < nu; ++v)
      if (shared[v]) neg[u * nu + v] = (total - p[v]) * static_cast<float>(shared[v]) * k.negativeWeight;
  }

  // The centres' composed vectors in scratch (each followed by its copy from before
  // the block). Float32 output rows are trained where they are; 16-bit ones in
  // scratch, widened before and rounded back after.
  const bool packed = weights != WeightType::Fp32;
  state.composed.resize(2 * mu * dim + (packed ? (nu + 1) * dim : 0));
  float* in = state.composed.data();
  float* before = in + mu * dim;
  float* outScratch = before + mu * dim;
  float* wide = outScratch + nu * dim;
  auto* in16 = reinterpret_cast<std::uint16_t*>(input);
  auto* out16 = reinterpret_cast<std::uint16_t*>(output);
  for (std::size_t u = 0; u < mu; ++u) {
    const std::int32_t* r = rows.of(centres[u]);
    if (packed) {
      if (u + 1 < mu) prefetchRow16(rowAt16(in16, rows.of(centres[u + 1])[0], dim), dim);
      meanOfRows16(in16, dim, r, rows.count(centres[u]), in + u * dim, wide, weights, path);
    } else {
      if (u + 1 < mu) prefetchRow(rowAt(input, rows.of(centres[u + 1])[0], dim), dim);
      meanOfRows(input, dim, r, rows.count(centres[u]), in + u * dim);
    }
  }
  std::memcpy(before, in, mu * dim * sizeof(float));
  // Local input rows 0..mu-1 of the scratch (the centres' local index is no longer
  // needed), and for 16-bit weights local output rows 0..nu-1.
  std::int32_t* inRows = centreAt;
  for (std::size_t u = 0; u < mu; ++u) inRows[u] = static_cast<std::int32_t>(u);
  std::int32_t* outLocal = shared + nu;
  double loss;
  if (!packed) {
    loss = weightedBlock(in, output, dim, inRows, mu, outWords, nu, alpha, sigmoid, state, path);
  } else {
    for (std::size_t v = 0; v < nu; ++v) {
      outLocal[v] = static_cast<std::int32_t>(v);
      widenRow(rowAt16(out16, outWords[v], dim), outScratch + v * dim, dim, weights, path);
    }
    loss = weightedBlock(in, outScratch, dim, inRows, mu, outLocal, nu, alpha, sigmoid, state,
                         path);
  }
  // One draw of the thread's generator seeds the block's rounding bits (16-bit
  // weights), as in the batched kernel: one seed and one thread give the same bits.
  RoundingBits bits(packed ? static_cast<std::uint32_t>(state.rng.next()) : 0u);
  if (packed)
    for (std::size_t v = 0; v < nu; ++v)
      narrowRow(outScratch + v * dim, rowAt16(out16, outWords[v], dim), dim, weights, bits, path);

  // Each centre word's change, once to every row of its word.
  for (std::size_t u = 0; u < mu; ++u) {
    const float* now = in + u * dim;
    float* delta = before + u * dim;
#pragma omp simd
    for (std::size_t d = 0; d < dim; ++d) delta[d] = now[d] - delta[d];
    if (packed)
      scatter16(in16, dim, rows.of(centres[u]), rows.count(centres[u]), delta, wide, weights,
                bits, path);
    else
      scatter(input, dim, rows.of(centres[u]), rows.count(centres[u]), delta);
  }
  return loss;
}

namespace {

// Skip-gram: blocks of `combine` centre words as the batched kernel forms them
// (one shrink drawn per centre, the block's shared negatives after them).
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
        path_(path),
        combine_(static_cast<std::size_t>(c.combine)),
        blockNegatives_(static_cast<std::size_t>(c.combine > 1 ? c.blockNegativesFor()
                                                               : c.negative)),
        weight_(static_cast<float>(c.negative) / static_cast<float>(blockNegatives_)),
        weights_(c.weights),
        rowBytes_(c.dim * weightTypeBytes(c.weights)) {}

  double sentence(const std::int32_t* ids, std::size_t n, float alpha, ThreadState& st,
                  std::int64_t& predictions) const override {
    const std::size_t width = combine_ + blockNegatives_;
    st.window.resize(width);
    std::int32_t* reach = st.window.data();
    std::int32_t* negatives = reach + combine_;
    double loss = 0;
    prefetchWords(ids, std::min(combine_, n));
    for (std::size_t first = 0; first < n; first += combine_) {
      const std::size_t count = std::min(combine_, n - first);
      // The next block's rows travel while this block computes (the n-gram rows are
      // random rows of a large matrix: the misses of this kernel).
      if (first + combine_ < n) prefetchWords(ids + first + combine_, std::min(combine_, n - first - combine_));
      for (std::size_t j = 0; j < count; ++j)
        reach[j] = static_cast<std::int32_t>(drawReach(window_, shrink_, st.rng));
      for (std::size_t i = 0; i < blockNegatives_; ++i) negatives[i] = noise_->draw(st.rng.next());
      const CombinedBlock block{ids,   n,         first,           count,
                                reach, negatives, blockNegatives_, weight_};
      loss += subwordBlock(in_, out_, dim_, *rows_, block, alpha, *sigmoid_, st, path_,
                           predictions, weights_);
    }
    return loss;
  }

 private:
  // Every row of the `count` centre words at ids.
  void prefetchWords(const std::int32_t* ids, std::size_t count) const {
    const char* base = reinterpret_cast<const char*>(in_);
    for (std::size_t j = 0; j < count; ++j) {
      const std::int32_t* r = rows_->of(ids[j]);
      for (std::size_t i = 0, c = rows_->count(ids[j]); i < c; ++i) {
        const char* p = base + static_cast<std::size_t>(r[i]) * rowBytes_;
        for (std::size_t b = 0; b < rowBytes_; b += 64) __builtin_prefetch(p + b, 1, 3);
      }
    }
  }

  float* in_;
  float* out_;
  const SubwordRows* rows_;
  const NoiseSampler* noise_;
  const Sigmoid* sigmoid_;
  std::size_t dim_;
  std::int64_t window_;
  bool shrink_;
  BatchedPath path_;
  std::size_t combine_, blockNegatives_;
  float weight_;
  WeightType weights_;
  std::size_t rowBytes_;  // one stored input row (dim x 4 or 2 bytes)
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
      scatter(in_, dim_, bow, rows, grad);
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
                                               const KernelShared& shared, BatchedPath path) {
  if (!shared.subwords)
    throw ConfigError("cannot build the training kernel: subword training needs each word's rows");
  if (config.loss != Loss::NegativeSampling)
    throw ConfigError("subword training uses negative sampling; hierarchical softmax with "
                      "subwords is not available");
  if (config.architecture == Architecture::Cbow)
    return std::make_unique<SubwordCbow>(config, shared);
  return std::make_unique<SubwordSkipGram>(config, shared, path);
}

}  // namespace posvec::detail
