#include "kernel_subword.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "posvec/error.hpp"
#include "posvec/subwords.hpp"

// How this follows fastText 0.9.2 (Model::update, unsupervised): a word's input
// vector is the mean of its rows (computeHidden: the rows summed in order, then
// scaled by 1 / count), and the gradient with respect to that mean is added to
// every row whole (no 1 / count: fastText scales only for supervised models).
// Skip-gram keeps posvec's orientation (the context word's composed vector
// predicts the centre word, word2vec.c's and the batched kernel's) and its
// context combining: a block's distinct context words are composed once into
// scratch rows, combinedBlock() trains those and the block's output rows, and the
// change of each scratch row is scattered once to its word's rows. Within a block
// every score comes from the values before it, as in the batched kernel.

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

double subwordBlock(float* input, float* output, std::size_t dim, const SubwordRows& rows,
                    const CombinedBlock& k, float alpha, const Sigmoid& sigmoid,
                    ThreadState& state, BatchedPath path, std::int64_t& predictions) {
  if (k.count == 0) return 0;
  // The span of positions the block's windows reach (as combinedBlock finds it).
  std::size_t lo = k.first, hi = k.first;
  for (std::size_t j = 0; j < k.count; ++j) {
    const std::size_t q = k.first + j, r = static_cast<std::size_t>(k.reach[j]);
    lo = std::min(lo, q - std::min(q, r));
    hi = std::max(hi, std::min(k.length - 1, q + r));
  }
  const std::size_t span = hi - lo + 1, negatives = k.negativeCount;
  // Local ids: the span's words first (the only ones with an input row), then the
  // negatives not among them.
  state.local.resize(3 * (span + negatives));
  std::int32_t* spanIds = state.local.data();
  std::int32_t* negIds = spanIds + span;
  std::int32_t* words = negIds + negatives;
  // The local ids whose output row the block uses: the centres and the negatives.
  std::int32_t* used = words + span + negatives;
  std::size_t distinct = 0;
  for (std::size_t s = 0; s < span; ++s) spanIds[s] = localOf(k.ids[lo + s], words, distinct);
  const std::size_t inputs = distinct;
  for (std::size_t i = 0; i < negatives; ++i)
    negIds[i] = localOf(k.negatives[i], words, distinct);
  std::size_t outputs = 0;
  auto useOutput = [&](std::int32_t id) {
    for (std::size_t i = 0; i < outputs; ++i)
      if (used[i] == id) return;
    used[outputs++] = id;
  };
  for (std::size_t j = 0; j < k.count; ++j) useOutput(spanIds[k.first - lo + j]);
  for (std::size_t i = 0; i < negatives; ++i) useOutput(negIds[i]);

  // Scratch: the composed vectors and the output rows, each followed by its copy
  // from before the block.
  state.composed.resize(2 * inputs * dim);
  state.outputs.resize(2 * distinct * dim);
  float* in = state.composed.data();
  float* inBefore = in + inputs * dim;
  float* out = state.outputs.data();
  float* outBefore = out + distinct * dim;
  for (std::size_t j = 0; j < inputs; ++j) {
    const auto w = words[j];
    if (j + 1 < inputs) prefetchRow(rowAt(input, rows.of(words[j + 1])[0], dim), dim);
    meanOfRows(input, dim, rows.of(w), rows.count(w), in + j * dim);
  }
  std::memcpy(inBefore, in, inputs * dim * sizeof(float));
  // (The other rows of `out` are never read.)
  for (std::size_t i = 0; i < outputs; ++i) {
    const auto j = static_cast<std::size_t>(used[i]);
    std::memcpy(out + j * dim, rowAt(output, words[j], dim), dim * sizeof(float));
    std::memcpy(outBefore + j * dim, out + j * dim, dim * sizeof(float));
  }

  const CombinedBlock local{spanIds, span,    k.first - lo, k.count, k.reach,
                            negIds,  negatives, k.negativeWeight};
  const double loss = combinedBlock(in, out, dim, local, alpha, sigmoid, state, path, predictions);

  // Each changed row's change, once per row of its word (output: its one row).
  // (A span word that is no context has a zero change: adding it leaves its rows.)
  for (std::size_t j = 0; j < inputs; ++j) {
    const float* now = in + j * dim;
    float* delta = inBefore + j * dim;
#pragma omp simd
    for (std::size_t d = 0; d < dim; ++d) delta[d] = now[d] - delta[d];
    scatter(input, dim, rows.of(words[j]), rows.count(words[j]), delta);
  }
  for (std::size_t i = 0; i < outputs; ++i) {
    const auto j = static_cast<std::size_t>(used[i]);
    const float* now = out + j * dim;
    const float* before = outBefore + j * dim;
    float* row = rowAt(output, words[j], dim);
#pragma omp simd
    for (std::size_t d = 0; d < dim; ++d) row[d] += now[d] - before[d];
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
        weight_(static_cast<float>(c.negative) / static_cast<float>(blockNegatives_)) {}

  double sentence(const std::int32_t* ids, std::size_t n, float alpha, ThreadState& st,
                  std::int64_t& predictions) const override {
    const std::size_t width = combine_ + blockNegatives_;
    st.window.resize(width);
    std::int32_t* reach = st.window.data();
    std::int32_t* negatives = reach + combine_;
    double loss = 0;
    for (std::size_t first = 0; first < n; first += combine_) {
      const std::size_t count = std::min(combine_, n - first);
      for (std::size_t j = 0; j < count; ++j)
        reach[j] = static_cast<std::int32_t>(drawReach(window_, shrink_, st.rng));
      for (std::size_t i = 0; i < blockNegatives_; ++i) negatives[i] = noise_->draw(st.rng.next());
      const CombinedBlock block{ids,   n,         first,           count,
                                reach, negatives, blockNegatives_, weight_};
      loss += subwordBlock(in_, out_, dim_, *rows_, block, alpha, *sigmoid_, st, path_,
                           predictions);
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
  BatchedPath path_;
  std::size_t combine_, blockNegatives_;
  float weight_;
};




// EXPERIMENTAL (POSVEC_SUBWORD_REFERENCE): plain per-pair skip-gram for comparing
// with fastText's update. Tokens (comma separated): "context" composes the
// context word and predicts the centre (word2vec.c's orientation; default
// "centre", fastText's); "once" composes the centre once per window and scatters
// the summed gradient at its end (default: composed again for every pair, rows
// updated at once); "shared" draws the negatives once per centre for all its
// pairs (default: `negative` fresh draws per pair, a draw equal to the target
// drawn again, as fastText's getNegative).
struct ReferenceOptions {
  bool context = false, once = false, shared = false, stale = false;
};

class SubwordReference final : public TrainKernel {
 public:
  SubwordReference(const TrainConfig& c, const KernelShared& s, ReferenceOptions o)
      : in_(s.input->data()),
        out_(s.output->data()),
        rows_(s.subwords),
        noise_(s.noise),
        sigmoid_(s.sigmoid),
        dim_(c.dim),
        window_(c.window),
        shrink_(c.shrinkWindows),
        negative_(static_cast<std::size_t>(c.negative)),
        o_(o) {}

  double sentence(const std::int32_t* ids, std::size_t n, float alpha, ThreadState& st,
                  std::int64_t& predictions) const override {
    st.grad.resize(dim_);
    st.hidden.resize(dim_);
    st.local.resize(negative_);
    float* grad = st.grad.data();
    float* h = st.hidden.data();
    std::int32_t* negs = st.local.data();
    double loss = 0;
    const auto len = static_cast<std::int64_t>(n);
    if (o_.stale) return staleSentence(ids, n, alpha, st, predictions);
    for (std::int64_t i = 0; i < len; ++i) {
      const std::int64_t reach = drawReach(window_, shrink_, st.rng);
      const std::int32_t centre = ids[i];
      if (o_.shared)
        for (std::size_t k = 0; k < negative_; ++k) negs[k] = noise_->draw(st.rng.next());
      if (o_.once && !o_.context) {
        composeWord(in_, dim_, *rows_, centre, h);
        std::memset(grad, 0, dim_ * sizeof(float));
      }
      for (std::int64_t c = std::max<std::int64_t>(0, i - reach);
           c <= std::min(len - 1, i + reach); ++c) {
        if (c == i) continue;
        const std::int32_t source = o_.context ? ids[c] : centre;
        const std::int32_t target = o_.context ? centre : ids[c];
        const bool now = o_.context || !o_.once;
        if (now) {
          composeWord(in_, dim_, *rows_, source, h);
          std::memset(grad, 0, dim_ * sizeof(float));
        }
        loss += pairStep(h, target, alpha, grad, negs, st.rng);
        ++predictions;
        if (now) scatter(in_, dim_, rows_->of(source), rows_->count(source), grad);
      }
      if (o_.once && !o_.context) scatter(in_, dim_, rows_->of(centre), rows_->count(centre), grad);
    }
    return loss;
  }

  // Context orientation, negatives shared per centre, every score of a window
  // from the values before it (the fast kernel with one centre per block).
  double staleSentence(const std::int32_t* ids, std::size_t n, float alpha, ThreadState& st,
                       std::int64_t& predictions) const {
    const auto len = static_cast<std::int64_t>(n);
    const std::size_t cols = negative_ + 1, maxCtx = 2 * static_cast<std::size_t>(window_);
    st.local.resize(cols + maxCtx);
    std::int32_t* tg = st.local.data();
    std::int32_t* ctx = tg + cols;
    st.composed.resize(2 * maxCtx * dim_);
    st.outputs.resize(2 * cols * dim_);
    std::vector<float> g(maxCtx * cols);
    double loss = 0;
    for (std::int64_t i = 0; i < len; ++i) {
      const std::int64_t reach = drawReach(window_, shrink_, st.rng);
      tg[0] = ids[i];
      for (std::size_t k = 1; k < cols; ++k) tg[k] = noise_->draw(st.rng.next());
      std::size_t m = 0;
      for (std::int64_t c = std::max<std::int64_t>(0, i - reach);
           c <= std::min(len - 1, i + reach); ++c)
        if (c != i) ctx[m++] = ids[c];
      float* h = st.composed.data();
      float* gin = h + maxCtx * dim_;
      float* ob = st.outputs.data();
      float* gout = ob + cols * dim_;
      for (std::size_t j = 0; j < m; ++j) composeWord(in_, dim_, *rows_, ctx[j], h + j * dim_);
      for (std::size_t t = 0; t < cols; ++t)
        std::memcpy(ob + t * dim_, rowAt(out_, tg[t], dim_), dim_ * sizeof(float));
      for (std::size_t j = 0; j < m; ++j)
        for (std::size_t t = 0; t < cols; ++t) {
          g[j * cols + t] = 0;
          if (t > 0 && tg[t] == tg[0]) continue;
          float f = 0;
          for (std::size_t k = 0; k < dim_; ++k) f += h[j * dim_ + k] * ob[t * dim_ + k];
          g[j * cols + t] = ((t == 0 ? 1.0f : 0.0f) - sigmoid_->sigmoid(f)) * alpha;
          loss += sigmoid_->softplus(t == 0 ? -f : f);
        }
      std::memset(gin, 0, m * dim_ * sizeof(float));
      std::memset(gout, 0, cols * dim_ * sizeof(float));
      for (std::size_t j = 0; j < m; ++j)
        for (std::size_t t = 0; t < cols; ++t)
          for (std::size_t k = 0; k < dim_; ++k) {
            gin[j * dim_ + k] += g[j * cols + t] * ob[t * dim_ + k];
            gout[t * dim_ + k] += g[j * cols + t] * h[j * dim_ + k];
          }
      for (std::size_t j = 0; j < m; ++j)
        scatter(in_, dim_, rows_->of(ctx[j]), rows_->count(ctx[j]), gin + j * dim_);
      for (std::size_t t = 0; t < cols; ++t) addTo(rowAt(out_, tg[t], dim_), gout + t * dim_, dim_);
      predictions += static_cast<std::int64_t>(m);
    }
    return loss;
  }

 private:
  double pairStep(const float* h, std::int32_t target, float alpha, float* grad,
                  const std::int32_t* negs, Rng& rng) const {
    double loss = 0;
    for (std::size_t d = 0; d <= negative_; ++d) {
      std::int32_t t = target;
      float label = 1.0f;
      if (d > 0) {
        label = 0.0f;
        if (o_.shared) {
          t = negs[d - 1];
          if (t == target) continue;
        } else {
          do t = noise_->draw(rng.next());
          while (t == target);
        }
      }
      float* o = rowAt(out_, t, dim_);
      float f = 0;
      for (std::size_t k = 0; k < dim_; ++k) f += h[k] * o[k];
      const float g = (label - sigmoid_->sigmoid(f)) * alpha;
      loss += sigmoid_->softplus(d == 0 ? -f : f);
      for (std::size_t k = 0; k < dim_; ++k) grad[k] += g * o[k];
      for (std::size_t k = 0; k < dim_; ++k) o[k] += g * h[k];
    }
    return loss;
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
  ReferenceOptions o_;
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
  if (const char* r = std::getenv("POSVEC_SUBWORD_REFERENCE")) {
    const std::string t = r;
    ReferenceOptions o;
    o.context = t.find("context") != std::string::npos;
    o.once = t.find("once") != std::string::npos;
    o.shared = t.find("shared") != std::string::npos;
    o.stale = t.find("stale") != std::string::npos;
    return std::make_unique<SubwordReference>(config, shared, o);
  }
  return std::make_unique<SubwordSkipGram>(config, shared, path);
}

}  // namespace posvec::detail
