// The classic kernels (skip-gram and CBOW, each with negative sampling and
// hierarchical softmax) against a double-precision reference written from
// word2vec's update rules, and the shrunk-window distribution they draw.
#include "kernel_factory.hpp"
#include "kernels.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <vector>

using namespace posvec;

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return std::log1p(std::exp(x)); }  // -log sigma(-x)

struct Setup {
  Architecture arch;
  Loss loss;
  bool cbowSum = false;  // CBOW: the contexts' sum (gensim's cbow_mean=0) instead of their mean
};

// One sentence trained by the reference: word2vec.c's loops in double.
// - Each centre position i draws a reach uniform in 1..window (window minus a draw
//   below window), contexts are the positions within reach, centre excluded.
// - Skip-gram: every context word's input row predicts the centre word; CBOW: the
//   mean of the context rows (over the contexts actually used) predicts it, and
//   every context row receives the whole gradient; summed CBOW (gensim's
//   cbow_mean=0): their sum predicts it, and each receives the gradient divided by
//   the number of contexts.
// - Negative sampling: label 1 for the centre word, 0 for each of `negative` noise
//   words (a noise word equal to the centre is skipped). Hierarchical softmax: one
//   prediction per node of the centre word's Huffman path, label 1 - code bit.
// - Per prediction of score f and label y: g = alpha (y - sigma(f)), the output row
//   moves by g h, the input gradient collects g o (with o before its update), loss
//   -log sigma(f) for y = 1 and -log sigma(-f) for y = 0.
// The RNG is replayed in the kernels' draw order so both see the same windows and
// noise words: one draw per centre position for the reach, one per noise word.
struct Reference {
  std::vector<double> in, out;
  std::vector<int> touchesIn, touchesOut;  // updates each row received
  double loss = 0;
  std::int64_t predictions = 0;
};

Reference reference(const std::vector<float>& in0, const std::vector<float>& out0, std::size_t dim,
                    const std::vector<std::int32_t>& ids, const Setup& s, int window, int negative,
                    double alpha, const NoiseSampler& noise, const detail::HuffmanTree& tree,
                    detail::Rng rng) {
  Reference r;
  r.in.assign(in0.begin(), in0.end());
  r.out.assign(out0.begin(), out0.end());
  r.touchesIn.assign(in0.size() / dim, 0);
  r.touchesOut.assign(out0.size() / dim, 0);
  // Predicts `target` from h; returns the input gradient.
  auto predict = [&](const std::vector<double>& h, std::int32_t target) {
    std::vector<std::pair<std::int32_t, double>> rows;  // (output row, label)
    if (s.loss == Loss::NegativeSampling) {
      rows.emplace_back(target, 1.0);
      for (int k = 0; k < negative; ++k) {
        const WordId t = noise.draw(rng.next());
        if (t != target) rows.emplace_back(t, 0.0);
      }
    } else {
      const auto w = static_cast<std::size_t>(target);
      for (auto j = tree.offsets[w]; j < tree.offsets[w + 1]; ++j)
        rows.emplace_back(tree.points[static_cast<std::size_t>(j)],
                          1.0 - tree.codes[static_cast<std::size_t>(j)]);
    }
    std::vector<double> grad(dim, 0.0);
    for (const auto& [row, label] : rows) {
      double* o = &r.out[static_cast<std::size_t>(row) * dim];
      double f = 0;
      for (std::size_t d = 0; d < dim; ++d) f += h[d] * o[d];
      const double g = alpha * (label - sigmoid(f));
      r.loss += label > 0.5 ? softplus(-f) : softplus(f);
      for (std::size_t d = 0; d < dim; ++d) {
        grad[d] += g * o[d];
        o[d] += g * h[d];
      }
      ++r.touchesOut[static_cast<std::size_t>(row)];
    }
    return grad;
  };
  const auto n = static_cast<std::int64_t>(ids.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t reach = window - static_cast<std::int64_t>(rng.below(static_cast<std::uint32_t>(window)));
    std::vector<std::int64_t> ctx;
    for (std::int64_t c = i - reach; c <= i + reach; ++c)
      if (c >= 0 && c < n && c != i) ctx.push_back(c);
    if (s.arch == Architecture::SkipGram) {
      for (const std::int64_t c : ctx) {
        const std::size_t base = static_cast<std::size_t>(ids[c]) * dim;
        const std::vector<double> h(r.in.begin() + base, r.in.begin() + base + dim);
        const std::vector<double> grad = predict(h, ids[i]);
        for (std::size_t d = 0; d < dim; ++d) r.in[base + d] += grad[d];
        ++r.touchesIn[static_cast<std::size_t>(ids[c])];
        ++r.predictions;
      }
    } else {
      if (ctx.empty()) continue;
      std::vector<double> h(dim, 0.0);
      for (const std::int64_t c : ctx)
        for (std::size_t d = 0; d < dim; ++d) h[d] += r.in[static_cast<std::size_t>(ids[c]) * dim + d];
      const double count = static_cast<double>(ctx.size());
      if (!s.cbowSum)
        for (double& x : h) x /= count;
      const std::vector<double> grad = predict(h, ids[i]);
      const double share = s.cbowSum ? 1.0 / count : 1.0;
      for (const std::int64_t c : ctx) {
        for (std::size_t d = 0; d < dim; ++d)
          r.in[static_cast<std::size_t>(ids[c]) * dim + d] += share * grad[d];
        ++r.touchesIn[static_cast<std::size_t>(ids[c])];
      }
      ++r.predictions;
    }
  }
  return r;
}

const char* nameOf(const Setup& s) {
  if (s.arch == Architecture::SkipGram)
    return s.loss == Loss::NegativeSampling ? "skip-gram NS" : "skip-gram HS";
  if (s.cbowSum) return s.loss == Loss::NegativeSampling ? "summed CBOW NS" : "summed CBOW HS";
  return s.loss == Loss::NegativeSampling ? "CBOW NS" : "CBOW HS";
}

}  // namespace

TEST_CASE("kernels Huffman tree follows word2vec.c's construction and code bits", "[kernels]") {
  // Hand-run of word2vec.c's CreateBinaryTree on counts 5 3 2 1 (leaves 0..3, inner
  // nodes 4, 5, 6 as created; the second-smallest child gets bit 1, ties between a
  // leaf and an inner node go to the inner node):
  //   node 4 = leaf 3 (1) + leaf 2 (2) -> bit(2) = 1
  //   node 5 = node 4 (3) + leaf 1 (3) -> bit(1) = 1      (tie: inner node first)
  //   node 6 = leaf 0 (5) + node 5 (6) -> bit(5) = 1, root
  // Paths root first, inner nodes numbered from 0 (node - 4):
  const detail::HuffmanTree t = detail::buildHuffmanTree({5, 3, 2, 1});
  const std::vector<std::vector<std::int32_t>> points{{2}, {2, 1}, {2, 1, 0}, {2, 1, 0}};
  const std::vector<std::vector<int>> codes{{0}, {1, 1}, {1, 0, 1}, {1, 0, 0}};
  for (std::size_t w = 0; w < 4; ++w) {
    INFO("word " << w);
    const auto b = static_cast<std::size_t>(t.offsets[w]), e = static_cast<std::size_t>(t.offsets[w + 1]);
    CHECK(std::vector<std::int32_t>(t.points.begin() + b, t.points.begin() + e) == points[w]);
    CHECK(std::vector<int>(t.codes.begin() + b, t.codes.begin() + e) == codes[w]);
  }
}

TEST_CASE("kernels one sentence of every classic kernel matches a double-precision reference",
          "[kernels]") {
  const std::vector<Setup> setups{{Architecture::SkipGram, Loss::NegativeSampling},
                                  {Architecture::SkipGram, Loss::HierarchicalSoftmax},
                                  {Architecture::Cbow, Loss::NegativeSampling},
                                  {Architecture::Cbow, Loss::HierarchicalSoftmax},
                                  {Architecture::Cbow, Loss::NegativeSampling, true},
                                  {Architecture::Cbow, Loss::HierarchicalSoftmax, true}};
  const std::vector<std::int64_t> counts{40, 25, 17, 12, 9, 6, 4, 3, 2, 1};
  const std::size_t v = counts.size();
  const NoiseSampler noise(counts, 0.75);
  const detail::HuffmanTree tree = detail::buildHuffmanTree(counts);
  const detail::Sigmoid sigmoidTable;
  std::mt19937 gen(2024);
  std::uniform_real_distribution<float> value(-0.5f, 0.5f);
  for (const Setup& s : setups) {
    for (const std::size_t dim : {1u, 8u, 33u}) {
      for (int trial = 0; trial < 4; ++trial) {
        const int window = 1 + trial;  // 1..4
        const int negative = 1 + trial % 3;
        const double alpha = 0.25;
        // Sentences with repeats, long enough that windows are cut at both ends.
        std::vector<std::int32_t> ids(3 + static_cast<std::size_t>(gen() % 9));
        for (auto& id : ids) id = static_cast<std::int32_t>(gen() % v);
        const std::size_t outRows = s.loss == Loss::HierarchicalSoftmax ? v - 1 : v;
        std::vector<float> in(v * dim), out(outRows * dim);
        for (auto& x : in) x = value(gen);
        for (auto& x : out) x = value(gen);
        MatrixF inM = Eigen::Map<MatrixF>(in.data(), static_cast<Eigen::Index>(v), static_cast<Eigen::Index>(dim));
        MatrixF outM = Eigen::Map<MatrixF>(out.data(), static_cast<Eigen::Index>(outRows),
                                           static_cast<Eigen::Index>(dim));
        TrainConfig c;
        c.dim = static_cast<int>(dim);
        c.window = window;
        c.negative = negative;
        c.architecture = s.arch;
        c.loss = s.loss;
        c.cbowMean = !s.cbowSum;
        c.kernel = Kernel::Classic;
        const detail::KernelShared shared{&inM, &outM, &noise, &tree, &sigmoidTable};
        const auto kernel = detail::makeKernel(c, shared);
        const std::uint64_t seed = 1000u + static_cast<std::uint64_t>(trial);
        detail::ThreadState st;
        st.rng = detail::Rng(seed);
        std::int64_t predictions = 0;
        const double loss = kernel->sentence(ids.data(), ids.size(), static_cast<float>(alpha), st,
                                             predictions);
        const Reference ref =
            reference(in, out, dim, ids, s, window, negative, alpha, noise, tree, detail::Rng(seed));
        INFO(nameOf(s) << " dim " << dim << " window " << window << " sentence length " << ids.size());
        CHECK(predictions == ref.predictions);
        // The tables are within 2e-5 of sigma and softplus (tested in trainer_test), so
        // the loss, a sum of softplus values of about 0.7, is within 2e-5 per term plus
        // float rounding: a relative 1e-4 covers it.
        CHECK(loss == Approx(ref.loss).epsilon(1e-4));
        // Each update of a row moves it by g * x with |x| <= ~1 (values in [-0.5, 0.5],
        // CBOW means of them, updated by steps of at most alpha * 0.5): the table's
        // 2e-5 error in sigma changes g by at most alpha * 2e-5 = 5e-6 per update, and
        // float32 rounding adds ~1e-7 per operation. 2e-5 per update received (plus
        // one) bounds both with room; every mutation of the rules moves rows by
        // alpha * O(0.1), thousands of times more. A sum of up to 8 context rows is up
        // to 8 times larger than their mean, and so are the output rows' steps.
        const double bound = s.cbowSum ? 1.6e-4 : 2e-5;
        for (std::size_t r = 0; r < v; ++r)
          for (std::size_t d = 0; d < dim; ++d) {
            INFO("input row " << r << " column " << d);
            CHECK(std::abs(inM(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(d)) -
                           ref.in[r * dim + d]) <= bound * (1 + ref.touchesIn[r]));
          }
        for (std::size_t r = 0; r < outRows; ++r)
          for (std::size_t d = 0; d < dim; ++d) {
            INFO("output row " << r << " column " << d);
            CHECK(std::abs(outM(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(d)) -
                           ref.out[r * dim + d]) <= bound * (1 + ref.touchesOut[r]));
          }
      }
    }
  }
}

TEST_CASE("kernels shrunk windows have every reach 1 to window equally likely", "[kernels]") {
  // Measured through the kernel alone: the number of predictions skip-gram makes on a
  // sentence is the sum over centre positions of the contexts within its reach. With
  // each reach r in 1..W equally likely (word2vec.c: b = rand % window, reach W - b),
  // position i of n has min(i, r) + min(n - 1 - i, r) contexts; the distribution of
  // the total is the convolution of those per-position distributions, computed here
  // exactly and compared with the counts of 20000 sentences by a chi-square test.
  const int window = 4;
  const std::size_t n = 6;
  const std::vector<std::int64_t> counts{3, 2, 1};
  const detail::HuffmanTree tree = detail::buildHuffmanTree(counts);
  const detail::Sigmoid sigmoidTable;
  MatrixF in = MatrixF::Zero(3, 2), out = MatrixF::Zero(2, 2);
  TrainConfig c;
  c.dim = 2;
  c.window = window;
  c.loss = Loss::HierarchicalSoftmax;
  c.kernel = Kernel::Classic;
  const detail::KernelShared shared{&in, &out, nullptr, &tree, &sigmoidTable};
  const auto kernel = detail::makeKernel(c, shared);

  std::map<std::int64_t, double> expected{{0, 1.0}};
  for (std::size_t i = 0; i < n; ++i) {
    std::map<std::int64_t, double> next;
    for (int r = 1; r <= window; ++r) {
      const std::int64_t k = std::min<std::int64_t>(static_cast<std::int64_t>(i), r) +
                             std::min<std::int64_t>(static_cast<std::int64_t>(n - 1 - i), r);
      for (const auto& [sum, p] : expected) next[sum + k] += p / window;
    }
    expected = next;
  }
  const int trials = 20000;
  std::map<std::int64_t, int> seen;
  detail::ThreadState st;
  st.rng = detail::Rng(99);
  const std::vector<std::int32_t> ids{0, 1, 2, 0, 1, 2};
  double mean = 0;
  for (int t = 0; t < trials; ++t) {
    std::int64_t predictions = 0;
    kernel->sentence(ids.data(), ids.size(), 0.0f, st, predictions);
    ++seen[predictions];
    mean += static_cast<double>(predictions) / trials;
  }
  double expectedMean = 0;
  for (const auto& [sum, p] : expected) expectedMean += static_cast<double>(sum) * p;
  for (const auto& [sum, count] : seen) {
    INFO("total " << sum);
    CHECK(expected.count(sum) == 1);  // only totals the uniform reach can give
  }
  // Chi-square over totals with expected count >= 5, the rest pooled.
  double chi2 = 0, pooledExp = 0, pooledSeen = 0;
  int cells = 0;
  for (const auto& [sum, p] : expected) {
    const double e = p * trials;
    const double o = seen.count(sum) ? seen[sum] : 0;
    if (e < 5) {
      pooledExp += e;
      pooledSeen += o;
      continue;
    }
    chi2 += (o - e) * (o - e) / e;
    ++cells;
  }
  if (pooledExp > 0) {
    chi2 += (pooledSeen - pooledExp) * (pooledSeen - pooledExp) / pooledExp;
    ++cells;
  }
  INFO("chi-square " << chi2 << " over " << cells << " cells, mean " << mean << " expected "
                     << expectedMean);
  REQUIRE(cells >= 10);
  // The 99.9th percentile of chi-square with 30 degrees of freedom is 59.7; `cells`
  // stays below 31 here (totals 10..30), so this bound is conservative for a fixed seed.
  CHECK(chi2 < 59.7);
  // The standard error of the mean of 20000 totals is about 0.02.
  CHECK(std::abs(mean - expectedMean) < 0.1);
}

namespace {

// SplitMix64 (Steele, Lea and Flood 2014), written out from the published algorithm.
std::uint64_t splitMix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Row r of the initial input matrix as kernels.hpp documents it: row r's stream
// starts from the second SplitMix64 output after seed ^ (r * C + D), and value d is
// (24 high bits of output d / 2^24 - 1/2) * 2 / dim.
double expectedInitial(std::uint64_t seed, std::uint64_t r, std::size_t d, std::size_t dim) {
  std::uint64_t s = seed ^ (r * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull);
  splitMix(s);
  std::uint64_t stream = splitMix(s);
  std::uint64_t out = 0;
  for (std::size_t i = 0; i <= d; ++i) out = splitMix(stream);
  const double u = static_cast<double>(out >> 40) / 16777216.0;
  return (u - 0.5) * 2.0 / static_cast<double>(dim);
}

}  // namespace

TEST_CASE("kernels initial input matrix has the same bits at every thread count, large or small",
          "[kernels]") {
  // 9000 x 1000 floats: 36 MB, so each of 1 to 3 threads faults its range in at
  // once (ranges of 8 MiB or more) and each of 5 threads writes page by page.
  const Eigen::Index rows = 9000, dim = 1000;
  MatrixF one(rows, dim);
  detail::initInputMatrix(one, 42, 1);
  for (const int threads : {2, 3, 5}) {
    MatrixF other(rows, dim);
    detail::initInputMatrix(other, 42, threads);
    INFO("threads " << threads);
    CHECK(std::memcmp(one.data(), other.data(), static_cast<std::size_t>(one.size()) * 4) == 0);
  }
  // Values from the algorithm itself, at rows on both sides of every thread boundary.
  for (const Eigen::Index r : {Eigen::Index{0}, Eigen::Index{1799}, Eigen::Index{1800},
                               Eigen::Index{2999}, Eigen::Index{3000}, Eigen::Index{4499},
                               Eigen::Index{4500}, Eigen::Index{5999}, Eigen::Index{6000},
                               rows - 1})
    for (const std::size_t d : {std::size_t{0}, std::size_t{1}, std::size_t{999}}) {
      INFO("row " << r << " column " << d);
      CHECK(one(r, static_cast<Eigen::Index>(d)) ==
            Approx(expectedInitial(42, static_cast<std::uint64_t>(r), d, 1000)).margin(1e-9));
    }
  // A matrix without rows is left alone.
  MatrixF empty(0, 300);
  detail::initInputMatrix(empty, 42, 2);
  CHECK(empty.size() == 0);
}
