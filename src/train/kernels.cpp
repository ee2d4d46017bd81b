#include "kernels.hpp"

#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "dense_rows.hpp"
#include "kernel_probe.hpp"
#include "posvec/error.hpp"
#include "row_math.hpp"

namespace posvec {

void initialInputRow(float* row, std::size_t dim, std::uint64_t seed, std::uint64_t r) {
  detail::initInputRow(row, dim, seed, r);
}

}  // namespace posvec

namespace posvec::detail {

std::uint64_t mixSeed(std::uint64_t a, std::uint64_t b) {
  Rng r(a ^ (b * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull));
  r.next();
  return r.next();
}

Sigmoid::Sigmoid() {
  for (int i = 0; i <= kSize; ++i) {
    const double x = -static_cast<double>(kMax) + i / static_cast<double>(kScale);
    sig_[i] = static_cast<float>(1.0 / (1.0 + std::exp(-x)));
    sp_[i] = static_cast<float>(std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0));
  }
  sig_[kSize + 1] = sig_[kSize];
  sp_[kSize + 1] = sp_[kSize];
  for (int i = 0; i <= kSize; ++i) {
    sigPairs_[2 * i] = sig_[i];
    sigPairs_[2 * i + 1] = sig_[i + 1];
    spPairs_[2 * i] = sp_[i];
    spPairs_[2 * i + 1] = sp_[i + 1];
  }
}

HuffmanTree buildHuffmanTree(const std::vector<std::int64_t>& counts) {
  const std::size_t v = counts.size();
  HuffmanTree tree;
  tree.offsets.assign(v + 1, 0);
  if (v < 2) return tree;
  // Leaves 0..v-1 (descending counts), inner nodes v..2v-2 in creation order: two
  // queues (leaves from the rare end, inner nodes as created) give the two
  // smallest in O(1), as word2vec.c does.
  for (std::size_t i = 1; i < v; ++i)
    if (counts[i] > counts[i - 1])
      throw InputError("hierarchical softmax needs counts sorted most frequent first");
  std::vector<std::int64_t> weight(2 * v - 1);
  std::vector<std::int32_t> parent(2 * v - 1, -1);
  std::vector<std::uint8_t> branch(2 * v - 1, 0);
  for (std::size_t i = 0; i < v; ++i) weight[i] = counts[i];
  std::int64_t leaf = static_cast<std::int64_t>(v) - 1;
  std::size_t inner = v;
  auto takeSmallest = [&](std::size_t made) -> std::size_t {
    if (leaf >= 0 && (inner >= made || weight[static_cast<std::size_t>(leaf)] < weight[inner]))
      return static_cast<std::size_t>(leaf--);
    return inner++;
  };
  for (std::size_t made = v; made < 2 * v - 1; ++made) {
    const std::size_t a = takeSmallest(made), b = takeSmallest(made);
    weight[made] = weight[a] + weight[b];
    parent[a] = parent[b] = static_cast<std::int32_t>(made);
    branch[b] = 1;
  }
  std::vector<std::int32_t> path;
  std::vector<std::uint8_t> code;
  for (std::size_t w = 0; w < v; ++w) {
    path.clear();
    code.clear();
    for (std::size_t n = w; parent[n] >= 0; n = static_cast<std::size_t>(parent[n])) {
      code.push_back(branch[n]);
      path.push_back(parent[n] - static_cast<std::int32_t>(v));
    }
    // Root first.
    tree.points.insert(tree.points.end(), path.rbegin(), path.rend());
    tree.codes.insert(tree.codes.end(), code.rbegin(), code.rend());
    tree.offsets[w + 1] = static_cast<std::int64_t>(tree.points.size());
  }
  return tree;
}

void initInputRow(float* row, std::size_t dim, std::uint64_t seed, std::uint64_t r) {
  const float scale = 2.0f / static_cast<float>(dim);
  Rng rng(mixSeed(seed, r));
  for (std::size_t d = 0; d < dim; ++d) row[d] = (rng.uniform() - 0.5f) * scale;
}

void populatePages(void* begin, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  constexpr std::size_t kLarge = std::size_t{8} << 20;  // smaller: faulted by the writes
  if (bytes < kLarge) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t first = (at + page - 1) / page * page;
  const std::uintptr_t last = (at + bytes) / page * page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
#else
  (void)begin;
  (void)bytes;
#endif
}

// Each thread fills one contiguous range of rows (the values depend on the row
// only, so any thread count gives the same bits), its pages faulted in first with
// one call (populatePages).
void initInputMatrix(MatrixF& input, std::uint64_t seed, int threads) {
  drawRows(input, 0, seed, PackedWeights::None, threads);
}

double negativeSamplingStep(const float* h, WordId target, float alpha, float* grad, float* out,
                            std::size_t dim, int negative, const NoiseSampler& noise,
                            const Sigmoid& sigmoid, Rng& rng) {
  double loss = 0;
  for (int d = 0; d <= negative; ++d) {
    WordId t = target;
    float label = 1.0f;
    if (d > 0) {
      t = noise.draw(rng.next());
      if (t == target) continue;
      label = 0.0f;
    }
    float* o = out + static_cast<std::size_t>(t) * dim;
    const float f = rowDot(h, o, dim);
    const float g = (label - sigmoid.sigmoid(f)) * alpha;
    loss += sigmoid.softplus(d == 0 ? -f : f);
    rowAxpy(g, o, grad, dim);
    rowAxpy(g, h, o, dim);
  }
  return loss;
}

namespace {

enum class Out { Negative, Hierarchical };

// The shared loop of every classic kernel: input vector `h` predicts `target`,
// updating the output rows and accumulating the input gradient in `grad`.
template <Out kOut>
class Predictor {
 public:
  Predictor(const TrainConfig& c, const KernelShared& s)
      : shared_(s), out_(s.output->data()), dim_(c.dim), negative_(c.negative) {}

  double predict(const float* h, WordId target, float alpha, float* grad, Rng& rng) const {
    const Sigmoid& sg = *shared_.sigmoid;
    double loss = 0;
    if constexpr (kOut == Out::Negative) {
      loss = negativeSamplingStep(h, target, alpha, grad, out_, dim_, negative_, *shared_.noise,
                                  sg, rng);
    } else {
      const HuffmanTree& tree = *shared_.tree;
      const auto begin = tree.offsets[static_cast<std::size_t>(target)];
      const auto end = tree.offsets[static_cast<std::size_t>(target) + 1];
      for (auto j = begin; j < end; ++j) {
        float* o = out_ + static_cast<std::size_t>(tree.points[static_cast<std::size_t>(j)]) * dim_;
        const float code = tree.codes[static_cast<std::size_t>(j)];
        const float f = rowDot(h, o, dim_);
        const float g = (1.0f - code - sg.sigmoid(f)) * alpha;
        // Branch 0 is the positive label: -log sigma(f); branch 1: -log sigma(-f).
        loss += sg.softplus(code > 0 ? f : -f);
        rowAxpy(g, o, grad, dim_);
        rowAxpy(g, h, o, dim_);
      }
    }
    return loss;
  }

 private:
  KernelShared shared_;
  float* out_;
  std::size_t dim_;
  int negative_;
};

// word2vec.c's skip-gram: each context word's input vector predicts the centre word.
template <Out kOut>
class SkipGram final : public TrainKernel {
 public:
  SkipGram(const TrainConfig& c, const KernelShared& s)
      : p_(c, s), in_(s.input->data()), dim_(c.dim), window_(c.window), shrink_(c.shrinkWindows) {}

  double sentence(const std::int32_t* ids, std::size_t n, float alpha, ThreadState& st,
                  std::int64_t& predictions) const override {
    st.grad.resize(dim_);
    float* grad = st.grad.data();
    double loss = 0;
    const auto len = static_cast<std::int64_t>(n);
    for (std::int64_t i = 0; i < len; ++i) {
      const std::int64_t reach = drawReach(window_, shrink_, st.rng);
      const std::int64_t lo = std::max<std::int64_t>(0, i - reach),
                         hi = std::min(len - 1, i + reach);
      for (std::int64_t c = lo; c <= hi; ++c) {
        if (c == i) continue;
        float* h = in_ + static_cast<std::size_t>(ids[c]) * dim_;
        std::memset(grad, 0, dim_ * sizeof(float));
        loss += p_.predict(h, ids[i], alpha, grad, st.rng);
        rowAxpy(1.0f, grad, h, dim_);
        ++predictions;
      }
    }
    return loss;
  }

 private:
  Predictor<kOut> p_;
  float* in_;
  std::size_t dim_;
  std::int64_t window_;
  bool shrink_;
};

// word2vec.c's CBOW: the mean of the context input vectors predicts the centre
// word; every context vector receives the whole gradient. With cbowMean false
// (gensim's cbow_mean=0) their sum predicts it and each receives the gradient
// over the number of contexts.
template <Out kOut>
class Cbow final : public TrainKernel {
 public:
  Cbow(const TrainConfig& c, const KernelShared& s)
      : p_(c, s),
        in_(s.input->data()),
        dim_(c.dim),
        window_(c.window),
        shrink_(c.shrinkWindows),
        mean_(c.cbowMean) {}

  double sentence(const std::int32_t* ids, std::size_t n, float alpha, ThreadState& st,
                  std::int64_t& predictions) const override {
    st.grad.resize(dim_);
    st.hidden.resize(dim_);
    float* grad = st.grad.data();
    float* h = st.hidden.data();
    double loss = 0;
    const auto len = static_cast<std::int64_t>(n);
    for (std::int64_t i = 0; i < len; ++i) {
      const std::int64_t reach = drawReach(window_, shrink_, st.rng);
      const std::int64_t lo = std::max<std::int64_t>(0, i - reach),
                         hi = std::min(len - 1, i + reach);
      if (hi == lo) continue;  // no context (a one-word sentence)
      std::memset(h, 0, dim_ * sizeof(float));
      for (std::int64_t c = lo; c <= hi; ++c)
        if (c != i) rowAxpy(1.0f, in_ + static_cast<std::size_t>(ids[c]) * dim_, h, dim_);
      const float inv = 1.0f / static_cast<float>(hi - lo);
      if (mean_)
        for (std::size_t d = 0; d < dim_; ++d) h[d] *= inv;
      std::memset(grad, 0, dim_ * sizeof(float));
      loss += p_.predict(h, ids[i], alpha, grad, st.rng);
      const float share = mean_ ? 1.0f : inv;  // the sum's gradient is split among the contexts
      for (std::int64_t c = lo; c <= hi; ++c)
        if (c != i) rowAxpy(share, grad, in_ + static_cast<std::size_t>(ids[c]) * dim_, dim_);
      ++predictions;
    }
    return loss;
  }

 private:
  Predictor<kOut> p_;
  float* in_;
  std::size_t dim_;
  std::int64_t window_;
  bool shrink_;
  bool mean_;
};

}  // namespace

std::unique_ptr<TrainKernel> makeClassicKernel(const TrainConfig& config,
                                               const KernelShared& shared) {
  const bool hs = config.loss == Loss::HierarchicalSoftmax;
  if (config.architecture == Architecture::SkipGram) {
    if (hs) return std::make_unique<SkipGram<Out::Hierarchical>>(config, shared);
    return std::make_unique<SkipGram<Out::Negative>>(config, shared);
  }
  if (hs) return std::make_unique<Cbow<Out::Hierarchical>>(config, shared);
  return std::make_unique<Cbow<Out::Negative>>(config, shared);
}

}  // namespace posvec::detail
