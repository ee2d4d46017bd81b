#include "kernel_batched.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "kernel_probe.hpp"
#include "kernel_probes.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/trainer.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {

// The batched update written out pair by pair in double, straight from its
// definition: every (context occurrence, target occurrence) pair with its label,
// scores and gradients from the old values, gradients summed into the rows.
struct Reference {
  std::vector<double> in, out;
  double loss = 0;
};

Reference referenceWindow(const std::vector<float>& in, const std::vector<float>& out,
                          std::size_t dim, const std::vector<std::int32_t>& ctx,
                          const std::vector<std::int32_t>& tgt, double alpha) {
  Reference r;
  r.in.assign(in.begin(), in.end());
  r.out.assign(out.begin(), out.end());
  for (const std::int32_t c : ctx) {
    for (std::size_t b = 0; b < tgt.size(); ++b) {
      if (b > 0 && tgt[b] == tgt[0]) continue;  // a negative equal to the positive is skipped
      double s = 0;
      for (std::size_t d = 0; d < dim; ++d)
        s += static_cast<double>(in[c * dim + d]) * static_cast<double>(out[tgt[b] * dim + d]);
      const double label = b == 0 ? 1.0 : 0.0;
      const double g = alpha * (label - 1.0 / (1.0 + std::exp(-s)));
      r.loss += std::log1p(std::exp(b == 0 ? -s : s));
      for (std::size_t d = 0; d < dim; ++d) {
        r.in[c * dim + d] += g * out[tgt[b] * dim + d];
        r.out[tgt[b] * dim + d] += g * in[c * dim + d];
      }
    }
  }
  return r;
}

// A combined block written out pair by pair in double from its definition: every
// (context, centre) pair inside the centre's window is a positive and meets each
// shared negative (not equal to that centre) with weight `weight`; all scores
// and gradients from the values before the block.
Reference referenceBlock(const std::vector<float>& in, const std::vector<float>& out,
                         std::size_t dim, const std::vector<std::int32_t>& ids, std::size_t first,
                         const std::vector<std::int32_t>& reach,
                         const std::vector<std::int32_t>& negatives, double weight, double alpha,
                         std::int64_t& pairs) {
  Reference r;
  r.in.assign(in.begin(), in.end());
  r.out.assign(out.begin(), out.end());
  auto train = [&](std::int32_t c, std::int32_t t, double label, double w) {
    double s = 0;
    for (std::size_t d = 0; d < dim; ++d)
      s += static_cast<double>(in[c * dim + d]) * static_cast<double>(out[t * dim + d]);
    const double g = w * alpha * (label - 1.0 / (1.0 + std::exp(-s)));
    r.loss += w * std::log1p(std::exp(label > 0 ? -s : s));
    for (std::size_t d = 0; d < dim; ++d) {
      r.in[c * dim + d] += g * out[t * dim + d];
      r.out[t * dim + d] += g * in[c * dim + d];
    }
  };
  for (std::size_t j = 0; j < reach.size(); ++j) {
    const auto q = static_cast<std::int64_t>(first + j);
    for (std::int64_t p = q - reach[j]; p <= q + reach[j]; ++p) {
      if (p == q || p < 0 || p >= static_cast<std::int64_t>(ids.size())) continue;
      ++pairs;
      train(ids[p], ids[q], 1, 1);
      for (const std::int32_t n : negatives)
        if (n != ids[q]) train(ids[p], n, 0, weight);
    }
  }
  return r;
}

std::vector<detail::BatchedPath> paths() {
  std::vector<detail::BatchedPath> p{detail::BatchedPath::Portable};
  if (detail::batchedAvx512Compiled()) p.push_back(detail::BatchedPath::Avx512);
  return p;
}

constexpr int kClasses = 5, kPerClass = 10;

std::string classWord(int cls, int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "k%d_%d", cls, i);
  return buf;
}

// Sentences about one class each (class words share contexts) with a few common
// filler words every class uses; the classes are the structure training must find.
std::vector<Sentence> classSentences(unsigned seed, int count) {
  std::mt19937 gen(seed);
  const std::vector<std::string> filler{"x", "y", "z"};
  std::vector<Sentence> out;
  for (int s = 0; s < count; ++s) {
    const int cls = static_cast<int>(gen() % kClasses);
    Sentence sent;
    const int len = 5 + static_cast<int>(gen() % 9);
    for (int t = 0; t < len; ++t)
      sent.push_back(gen() % 6 == 0 ? filler[gen() % filler.size()]
                                    : classWord(cls, static_cast<int>(gen() % kPerClass)));
    out.push_back(std::move(sent));
  }
  return out;
}

// The words of classSentences(seed, count) back to back as ids in [0, rows) (hashed):
// one long sentence for a kernel called directly, with many repeated words.
std::vector<std::int32_t> hashedIds(unsigned seed, int count, std::size_t rows) {
  std::vector<std::int32_t> ids;
  for (const auto& s : classSentences(seed, count))
    for (const auto& w : s) ids.push_back(static_cast<std::int32_t>(std::hash<std::string>{}(w) % rows));
  return ids;
}

// Share of class words whose nearest neighbour belongs to the same class.
double classAccuracy(const ModelState& m) {
  const Embeddings e = embeddingsOf(m);
  int good = 0;
  for (int c = 0; c < kClasses; ++c)
    for (int i = 0; i < kPerClass; ++i) {
      const auto nn = e.nearest(classWord(c, i), 1);
      good += !nn.empty() && nn[0].word.rfind(classWord(c, 0).substr(0, 3), 0) == 0;
    }
  return static_cast<double>(good) / (kClasses * kPerClass);
}

TrainConfig batchedConfig() {
  TrainConfig c;
  c.dim = 32;
  c.epochs = 5;
  c.minCount = 1;
  c.sample = 0;
  c.threads = 1;
  c.seed = 11;
  c.kernel = Kernel::Batched;
  return c;
}

// rows x dim weights uniform in [-0.6, 0.6).
std::vector<float> randomRows(std::mt19937& gen, std::size_t rows, std::size_t dim) {
  std::uniform_real_distribution<float> value(-0.6f, 0.6f);
  std::vector<float> w(rows * dim);
  for (auto& x : w) x = value(gen);
  return w;
}

// Largest difference of the updated matrices from the double reference.
double worstDifference(const std::vector<float>& in, const std::vector<float>& out,
                       const Reference& ref) {
  double worst = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    worst = std::max(worst, std::abs(in[i] - ref.in[i]));
    worst = std::max(worst, std::abs(out[i] - ref.out[i]));
  }
  return worst;
}

bool identical(const MatrixF& a, const MatrixF& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0;
}

// One window trained by the batched kernel on copies of in and out.
struct Trained {
  std::vector<float> in, out;
  double loss;
};
Trained trainWindow(const std::vector<float>& in, const std::vector<float>& out, std::size_t dim,
                    const std::vector<std::int32_t>& ctx, const std::vector<std::int32_t>& tgt,
                    double alpha, detail::BatchedPath path) {
  static const detail::Sigmoid sigmoid;
  Trained t{in, out, 0};
  detail::ThreadState st;
  t.loss = detail::batchedWindow(t.in.data(), t.out.data(), dim, ctx.data(), ctx.size(),
                                 tgt.data(), tgt.size(), static_cast<float>(alpha), sigmoid, st,
                                 path);
  return t;
}

}  // namespace

TEST_CASE("kernel_batched one window matches a double-precision pairwise reference",
          "[kernel_batched]") {
  std::mt19937 gen(42);
  const std::size_t rows = 40;
  // Dimensions below, at and across the 32-float chunk and the 16-float vector.
  for (const std::size_t dim : {1u, 7u, 16u, 32u, 37u, 100u, 129u}) {
    for (int trial = 0; trial < 6; ++trial) {
      const std::vector<float> in = randomRows(gen, rows, dim), out = randomRows(gen, rows, dim);
      // Contexts and negatives with repeats; negatives sometimes equal to the positive.
      // Odd trials: wide windows with more distinct contexts than the AVX-512 loops
      // keep in registers (they run in groups).
      const bool wide = trial % 2 == 1;
      const std::size_t m = 1 + gen() % (wide ? 40 : 12), negatives = gen() % 8;
      const std::size_t ctxRows = wide ? 30 : 6;
      std::vector<std::int32_t> ctx(m), tgt(1 + negatives);
      for (auto& c : ctx) c = static_cast<std::int32_t>(gen() % ctxRows);
      for (auto& t : tgt) t = static_cast<std::int32_t>(gen() % 5);
      const double alpha = 0.3;
      const Reference ref = referenceWindow(in, out, dim, ctx, tgt, alpha);
      for (const auto path : paths()) {
        INFO("dim " << dim << " trial " << trial << " path " << static_cast<int>(path));
        const Trained t = trainWindow(in, out, dim, ctx, tgt, alpha, path);
        // The sigmoid and softplus tables are within ~1e-5 of the exact functions.
        CHECK(t.loss == Approx(ref.loss).epsilon(1e-4));
        CHECK(worstDifference(t.in, t.out, ref) < 2e-5 * (1 + static_cast<double>(m)));
        // Rows outside the window are untouched.
        for (std::size_t r = ctxRows; r < rows; ++r)
          CHECK(std::memcmp(t.in.data() + r * dim, in.data() + r * dim, dim * 4) == 0);
      }
    }
  }
}

TEST_CASE("kernel_batched every score tile shape matches the double reference",
          "[kernel_batched]") {
  // The AVX-512 scores run in tiles of up to 4 contexts x 4 targets; m and n from 1
  // to 9 distinct rows give every remainder on both sides, at a dimension with a
  // masked tail (37 = 2 x 16 + 5) and one without (64).
  std::mt19937 gen(11);
  for (const std::size_t dim : {37u, 64u}) {
    for (std::size_t m = 1; m <= 9; ++m) {
      for (std::size_t n = 1; n <= 9; ++n) {
        const std::size_t rows = m + n;
        const std::vector<float> in = randomRows(gen, rows, dim), out = randomRows(gen, rows, dim);
        std::vector<std::int32_t> ctx(m), tgt(n);
        for (std::size_t u = 0; u < m; ++u) ctx[u] = static_cast<std::int32_t>(u);
        for (std::size_t v = 0; v < n; ++v) tgt[v] = static_cast<std::int32_t>(m + v);
        const double alpha = 0.3;
        const Reference ref = referenceWindow(in, out, dim, ctx, tgt, alpha);
        for (const auto path : paths()) {
          INFO("dim " << dim << " m " << m << " n " << n << " path " << static_cast<int>(path));
          const Trained t = trainWindow(in, out, dim, ctx, tgt, alpha, path);
          CHECK(t.loss == Approx(ref.loss).epsilon(1e-4));
          CHECK(worstDifference(t.in, t.out, ref) < 2e-5 * (1 + static_cast<double>(m)));
        }
      }
    }
  }
}

TEST_CASE("kernel_batched one combined block matches a double-precision pairwise reference",
          "[kernel_batched]") {
  std::mt19937 gen(7);
  const detail::Sigmoid sigmoid;
  const std::size_t rows = 30;
  for (const std::size_t dim : {1u, 7u, 16u, 37u, 100u, 129u}) {
    for (int trial = 0; trial < 8; ++trial) {
      const std::vector<float> in = randomRows(gen, rows, dim), out = randomRows(gen, rows, dim);
      // Sentences from few words (repeats inside a block; a negative is sometimes a
      // centre), blocks at the start, the end and inside, one centre to many, and
      // reaches past both ends of the sentence.
      const std::size_t length = 1 + gen() % 40, vocab = 3 + gen() % 12;
      std::vector<std::int32_t> ids(length);
      for (auto& id : ids) id = static_cast<std::int32_t>(gen() % vocab);
      const std::size_t first = gen() % length, count = 1 + gen() % std::min<std::size_t>(20, length - first);
      std::vector<std::int32_t> reach(count), negatives(1 + gen() % 12);
      for (auto& r : reach) r = 1 + static_cast<std::int32_t>(gen() % 6);
      for (auto& n : negatives) n = static_cast<std::int32_t>(gen() % vocab);
      const double weight = 5.0 / static_cast<double>(negatives.size()), alpha = 0.2;
      std::int64_t pairs = 0;
      const Reference ref =
          referenceBlock(in, out, dim, ids, first, reach, negatives, weight, alpha, pairs);
      for (const auto path : paths()) {
        INFO("dim " << dim << " trial " << trial << " path " << static_cast<int>(path));
        std::vector<float> a = in, b = out;
        detail::ThreadState st;
        std::int64_t counted = 0;
        const detail::CombinedBlock block{ids.data(),       length,          first,
                                          count,            reach.data(),    negatives.data(),
                                          negatives.size(), static_cast<float>(weight)};
        const double loss = detail::combinedBlock(a.data(), b.data(), dim, block,
                                                  static_cast<float>(alpha), sigmoid, st, path,
                                                  counted);
        CHECK(counted == pairs);
        CHECK(loss == Approx(ref.loss).epsilon(1e-4).margin(1e-9));
        CHECK(worstDifference(a, b, ref) < 2e-5 * (1 + static_cast<double>(pairs)));
        // Words no window reaches and no negative names keep their rows.
        for (std::size_t r = vocab; r < rows; ++r) {
          CHECK(std::memcmp(a.data() + r * dim, in.data() + r * dim, dim * 4) == 0);
          CHECK(std::memcmp(b.data() + r * dim, out.data() + r * dim, dim * 4) == 0);
        }
      }
    }
  }
}

TEST_CASE("kernel_batched both inner-loop paths agree on a full training run",
          "[kernel_batched]") {
  if (!detail::batchedAvx512Compiled()) POSVEC_SKIP("this build has no AVX-512 loops");
  // Same draws, same windows: the paths differ only in float summation order.
  const std::vector<std::int32_t> ids = hashedIds(3, 300, 50);
  TrainConfig c = batchedConfig();
  c.dim = 40;
  c.epochs = 1;
  MatrixF in0 = MatrixF::Random(50, 40) * 0.1f, out0 = MatrixF::Random(50, 40) * 0.1f;
  std::vector<std::int64_t> counts(50, 1);
  const NoiseSampler noise(counts);
  const detail::Sigmoid sigmoid;
  for (const int combine : {1, 16}) {
    INFO("combine " << combine);
    c.combine = combine;
    MatrixF results[2][2];
    for (int p = 0; p < 2; ++p) {
      MatrixF in = in0, out = out0;
      detail::KernelShared shared{&in, &out, &noise, nullptr, &sigmoid};
      const auto k = detail::makeBatchedSkipGram(
          c, shared, p ? detail::BatchedPath::Avx512 : detail::BatchedPath::Portable);
      detail::ThreadState st;
      st.rng = detail::Rng(5);
      std::int64_t predictions = 0;
      k->sentence(ids.data(), ids.size(), 0.025f, st, predictions);
      CHECK(predictions > 0);
      results[p][0] = in;
      results[p][1] = out;
    }
    CHECK((results[0][0] - results[1][0]).cwiseAbs().maxCoeff() < 1e-5f);
    CHECK((results[0][1] - results[1][1]).cwiseAbs().maxCoeff() < 1e-5f);
    CHECK_FALSE(identical(results[0][0], in0));
  }
}

namespace {

// One sentence of `ids` trained three ways on copies of the matrices: 0 without a
// probe, 1 with train_kernel's `memory` probe, 2 with its `cache` probe.
struct ProbeRuns {
  double loss[3] = {0, 0, 0};
  std::int64_t predictions[3] = {0, 0, 0};
  std::uint64_t rngAfter[3] = {0, 0, 0};
};

ProbeRuns runProbes(const TrainConfig& c, MatrixF (&in)[3], MatrixF (&out)[3],
                    const std::vector<std::int32_t>& ids, bench::RowTrafficProbe& memory,
                    bench::InCacheProbe& cache) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(in[0].rows()), 1);
  const NoiseSampler noise(counts);
  const detail::Sigmoid sigmoid;
  ProbeRuns runs;
  for (int p = 0; p < 3; ++p) {
    detail::KernelShared shared{&in[p], &out[p], &noise, nullptr, &sigmoid};
    const auto k = p == 0   ? detail::makeBatchedSkipGram(c, shared)
                   : p == 1 ? detail::makeBatchedSkipGram(c, shared, memory)
                            : detail::makeBatchedSkipGram(c, shared, cache);
    detail::ThreadState st;
    st.rng = detail::Rng(9);
    runs.loss[p] = k->sentence(ids.data(), ids.size(), 0.025f, st, runs.predictions[p]);
    runs.rngAfter[p] = st.rng.state;
  }
  return runs;
}

}  // namespace

TEST_CASE("kernel_batched measuring paths make the same blocks and change no row",
          "[kernel_batched]") {
  // The benchmark's probes (train_kernel's `memory` and `cache` modes, kernel_probes.hpp)
  // must see the real kernel's set-up (same draws, same pairs) and leave the matrices
  // as they were; the cache probe must still compute (a loss, and its scratch rows
  // trained). 600 rows: more than the cache probe's stand-in has, so its rows wrap
  // (under the sanitizers a row index past the stand-in is an error).
  const std::vector<std::int32_t> ids = hashedIds(3, 200, 600);
  REQUIRE(*std::max_element(ids.begin(), ids.end()) >= 256);
  TrainConfig c = batchedConfig();
  c.dim = 24;
  const MatrixF in0 = MatrixF::Random(600, 24) * 0.1f, out0 = MatrixF::Random(600, 24) * 0.1f;
  for (const int combine : {1, 4}) {
    INFO("combine " << combine);
    c.combine = combine;
    MatrixF in[3] = {in0, in0, in0}, out[3] = {out0, out0, out0};
    bench::RowTrafficProbe memory;
    bench::InCacheProbe cache;
    const ProbeRuns runs = runProbes(c, in, out, ids, memory, cache);
    const auto& loss = runs.loss;
    const auto& predictions = runs.predictions;
    const auto& rngAfter = runs.rngAfter;
    // The cache probe's stand-in model trained: output rows (started at zero) of the
    // sentence's words moved.
    const std::vector<float>& rows = cache.standIn(24);
    REQUIRE(rows.size() == 2 * 256 * 24);
    std::size_t moved = 0;
    for (std::size_t i = 256 * 24; i < rows.size(); ++i) moved += rows[i] != 0.0f;
    CHECK(moved >= 20 * 24);
    CHECK(predictions[0] > 0);
    CHECK(loss[0] > 0.0);
    CHECK(loss[1] == 0.0);
    CHECK(loss[2] > 0.0);
    for (int p = 1; p < 3; ++p) {
      INFO("path " << p);
      CHECK(predictions[p] == predictions[0]);
      CHECK(rngAfter[p] == rngAfter[0]);
      CHECK(identical(in[p], in0));
      CHECK(identical(out[p], out0));
    }
    CHECK_FALSE(identical(in[0], in0));
  }
}

TEST_CASE("kernel_batched probes see bfloat16 rows in place", "[kernel_batched]") {
  // With bfloat16 weights on the AVX-512 BF16 path the probes get the 16-bit rows
  // (KernelBlock::valueBytes 2): the memory probe leaves the matrices' bytes as they
  // were and computes nothing, the cache probe computes on its bfloat16 stand-in rows
  // (they move) and leaves the matrices' bytes as they were too.
  if (!detail::batchedBf16InPlace()) POSVEC_SKIP("this build has no AVX-512 BF16 update");
  const std::vector<std::int32_t> ids = hashedIds(3, 200, 600);
  TrainConfig c = batchedConfig();
  c.dim = 24;
  c.weights = WeightType::Bf16;
  c.combine = 4;
  // 600 rows of 24 bfloat16 values in the first half of each 600 x 24 float matrix.
  const MatrixF values = MatrixF::Random(600, 24) * 0.1f;
  MatrixF in0 = MatrixF::Zero(600, 24), out0 = MatrixF::Zero(600, 24);
  auto* in16 = reinterpret_cast<std::uint16_t*>(in0.data());
  auto* out16 = reinterpret_cast<std::uint16_t*>(out0.data());
  for (Eigen::Index r = 0; r < 600; ++r)
    for (Eigen::Index j = 0; j < 24; ++j) {
      in16[r * 24 + j] = detail::floatToBf16(values(r, j));
      out16[r * 24 + j] = detail::floatToBf16(-values(r, j));
    }
  bench::RowTrafficProbe memory;
  bench::InCacheProbe cache;
  MatrixF in[3] = {in0, in0, in0}, out[3] = {out0, out0, out0};
  const ProbeRuns runs = runProbes(c, in, out, ids, memory, cache);
  const auto& loss = runs.loss;
  const auto& predictions = runs.predictions;
  CHECK(loss[0] > 0.0);
  CHECK(loss[1] == 0.0);
  CHECK(loss[2] > 0.0);
  CHECK(predictions[1] == predictions[0]);
  CHECK(predictions[2] == predictions[0]);
  for (int p = 1; p < 3; ++p) {
    CHECK(identical(in[p], in0));
    CHECK(identical(out[p], out0));
  }
  CHECK_FALSE(identical(in[0], in0));
  // The stand-in's bfloat16 output rows (started at zero) moved.
  const std::vector<std::uint16_t>& half = cache.standInBf16(24);
  std::size_t moved = 0;
  for (std::size_t i = 256 * 24; i < half.size(); ++i) moved += half[i] != 0;
  CHECK(moved >= 20 * 24);
}

TEST_CASE("kernel_batched probes train through the public entry, the batched kernel only",
          "[kernel_batched]") {
  const auto corpus = CorpusSource::fromSentences(classSentences(1, 200));
  TrainConfig c = batchedConfig();
  c.epochs = 1;
  // The memory probe computes nothing: the model is the trainer's start (input rows
  // from (seed, row), output zero) and every epoch's loss 0, over the same predictions.
  bench::RowTrafficProbe memory;
  std::int64_t probed = 0, trained = 0;
  TrainObserver countProbed, countTrained;
  countProbed.epochEnd = [&](const EpochReport& r) { probed += r.predictions; };
  countTrained.epochEnd = [&](const EpochReport& r) { trained += r.predictions; };
  const ModelState m = trainProbed(corpus, c, memory, countProbed);
  REQUIRE(m.epochLosses.size() == 1);
  CHECK(m.epochLosses[0] == 0.0);
  CHECK(m.output.isZero(0));
  std::vector<float> row(c.dim);
  initialInputRow(row.data(), c.dim, c.seed, 3);
  for (std::size_t j = 0; j < c.dim; ++j) CHECK(m.input(3, static_cast<Eigen::Index>(j)) == row[j]);
  train(corpus, c, countTrained);
  CHECK(probed == trained);
  CHECK(probed > 0);
  // The classic kernels have no blocks to show.
  c.kernel = Kernel::Classic;
  CHECK_THROWS_AS(trainProbed(corpus, c, memory), ConfigError);
}

TEST_CASE("kernel_batched and classic both find planted classes", "[kernel_batched]") {
  const auto corpus = CorpusSource::fromSentences(classSentences(1, 1500));
  // Batched one window per block, batched in blocks of 16 centre words, classic.
  for (const int variant : {0, 1, 2}) {
    const Kernel k = variant == 2 ? Kernel::Classic : Kernel::Batched;
    TrainConfig c = batchedConfig();
    c.kernel = k;
    if (variant == 1) c.combine = 16;
    const ModelState m = train(corpus, c);
    INFO("kernel " << (k == Kernel::Batched ? "batched" : "classic") << " combine " << c.combine);
    REQUIRE(m.epochLosses.size() == 5);
    // Below the untrained loss (1 + negative) log 2, and lower at the end.
    CHECK(m.epochLosses[0] < 6 * std::log(2.0));
    CHECK(m.epochLosses[4] < m.epochLosses[0]);
    CHECK(classAccuracy(m) >= 0.9);
    CHECK(TrainConfig::deserialize(m.config).kernel == k);
    CHECK(TrainConfig::deserialize(m.config).combine == c.combine);
  }
}

TEST_CASE("kernel_batched with one thread is bitwise deterministic, resumes exactly, and two "
          "threads still learn",
          "[kernel_batched]") {
  const auto corpus = CorpusSource::fromSentences(classSentences(2, 1200));
  TrainConfig c = batchedConfig();
  c.combine = GENERATE(1, 16);
  INFO("combine " << c.combine);
  c.sample = 1e-2;
  c.epochs = 3;
  const ModelState a = train(corpus, c), b = train(corpus, c);
  CHECK(identical(a.input, b.input));
  CHECK(identical(a.output, b.output));
  CHECK(a.epochLosses == b.epochLosses);
  // The batched kernel really ran: the classic one gives other vectors.
  TrainConfig classic = c;
  classic.kernel = Kernel::Classic;
  CHECK_FALSE(identical(a.input, train(corpus, classic).input));

  int asked = 0;
  TrainObserver stopAfterTwo;
  stopAfterTwo.stopRequested = [&] { return asked++ == 2; };
  ModelState part = train(corpus, c, stopAfterTwo);
  REQUIRE(part.epochsDone == 2);
  resumeTraining(part, corpus, 1);
  CHECK(identical(part.input, a.input));
  CHECK(identical(part.output, a.output));

  c.threads = 2;
  c.sample = 0;
  c.epochs = 5;
  CHECK(classAccuracy(train(CorpusSource::fromSentences(classSentences(1, 1500)), c)) >= 0.9);
}

TEST_CASE("kernel_batched leaves CBOW and hierarchical softmax to the classic loops",
          "[kernel_batched]") {
  const auto corpus = CorpusSource::fromSentences(classSentences(4, 600));
  TrainConfig c = batchedConfig();
  c.epochs = 2;
  for (const bool cbow : {false, true}) {
    c.architecture = cbow ? Architecture::Cbow : Architecture::SkipGram;
    c.loss = cbow ? Loss::NegativeSampling : Loss::HierarchicalSoftmax;
    TrainConfig classic = c;
    classic.kernel = Kernel::Classic;
    std::string logged;
    TrainObserver obs;
    obs.log = [&](const std::string& line) { logged += line + "\n"; };
    CHECK(identical(train(corpus, c, obs).input, train(corpus, classic).input));
    CHECK(logged.find("kernel classic") != std::string::npos);
  }
}

TEST_CASE("kernel_batched is selected with posvec train --kernel and is the default",
          "[kernel_batched][cli]") {
  test::TempDir dir;
  std::string text;
  for (const auto& s : classSentences(5, 400)) {
    for (std::size_t i = 0; i < s.size(); ++i) text += (i ? " " : "") + s[i];
    text += "\n";
  }
  const std::string corpus = dir.file("c.txt");
  test::writeText(corpus, text);
  const std::string common = "--quiet train " + test::quote(corpus) +
                             " --pretokenized --min-count 1 --dim 16 --epochs 1 --threads 1";
  auto kernelOf = [&](const std::string& extra, const std::string& name) {
    const auto r = test::runCli(common + extra + " -o " + test::quote(dir.file(name)));
    REQUIRE(r.status == 0);
    return TrainConfig::deserialize(loadModel(dir.file(name)).config).kernel;
  };
  CHECK(kernelOf("", "default.posvec") == Kernel::Batched);
  CHECK(kernelOf(" --kernel batched", "b.posvec") == Kernel::Batched);
  CHECK(kernelOf(" --kernel classic", "c.posvec") == Kernel::Classic);
  REQUIRE(test::runCli(common + " --combine 4 --block-negatives 7 -o " +
                       test::quote(dir.file("k.posvec")))
              .status == 0);
  const TrainConfig blocks = TrainConfig::deserialize(loadModel(dir.file("k.posvec")).config);
  CHECK(blocks.combine == 4);
  CHECK(blocks.blockNegatives == 7);
  for (const std::string option : {"--combine 0", "--block-negatives -1", "--combine many"}) {
    const auto r = test::runCli(common + " " + option + " -o " + test::quote(dir.file("y.txt")));
    INFO(option << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(option.substr(0, option.find(' '))) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("y.txt")));
  }

  const auto bad = test::runCli(common + " --kernel fast -o " + test::quote(dir.file("x.txt")));
  CHECK(bad.status == 2);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  CHECK(bad.err.find("--kernel") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("x.txt")));
}
