// 16-bit weights (TrainConfig::weights): the conversions, stochastic rounding, one
// kernel step against a float64 reference, model files, resume across weight types
// and reproducibility.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "half.hpp"
#include "kernel_batched.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/trainer.hpp"
#include "test_util.hpp"

using namespace posvec;
using namespace posvec::detail;

namespace {

// x rounded to `bits` significant bits, to nearest even, in double (exact: the
// inputs are floats, whose 24 bits fit a double's 53), with binary16's subnormal
// spacing 2^-24 as the floor when `minExponent` says so.
double roundSignificant(double x, int bits, int minExponent) {
  if (x == 0) return x;
  int e;
  std::frexp(x, &e);  // x = m 2^e, 0.5 <= |m| < 1
  const int spacing = std::max(e - bits, minExponent);
  return std::nearbyint(std::ldexp(x, -spacing)) * std::ldexp(1.0, spacing);
}

std::vector<float> someFloats(std::size_t n, std::uint32_t seed, float scale) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = u(gen);
  return v;
}

// One weight's float64 reference update, old + sum_k term(k), and the bound delta on
// the kernel's float32 value's distance from it, as the step test below derives it:
// the sigmoid table's 1e-5 times alpha and |t| summed, float32 rounding (1e-5 of the
// sums' magnitudes), and gradRel of sum |term| where the gradient is rounded first.
struct Reference {
  double value, delta;
};
template <typename Term>
Reference referenceOf(double old, std::size_t partners, Term term, double alpha, double scale,
                      double gradRel) {
  double ref = old, products = 0;
  for (std::size_t k = 0; k < partners; ++k) {
    ref += term(k);
    products += std::fabs(term(k));
  }
  return {ref, static_cast<double>(partners) * alpha * 1e-5 * scale +
                   1e-5 * (std::fabs(old) + products) + gradRel * products};
}

std::vector<BatchedPath> paths() {
  std::vector<BatchedPath> p{BatchedPath::Portable};
  if (batchedAvx512Compiled()) p.push_back(BatchedPath::Avx512);
  return p;
}

}  // namespace

TEST_CASE("half: every finite 16-bit value converts to float32 and back exactly", "[half]") {
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    // bfloat16: exponent bits 0x7F80 all set is infinity or NaN.
    if ((h & 0x7F80u) != 0x7F80u) {
      const float f = bf16ToFloat(h);
      REQUIRE(floatToBf16(f) == h);
      // An exact value has nothing to round, whatever the random bits.
      REQUIRE(floatToBf16Stochastic(f, 0xFFFFFFFFu) == h);
      REQUIRE(floatToBf16Stochastic(f, 0) == h);
    }
    if ((h & 0x7C00u) != 0x7C00u) {
      const float f = fp16ToFloat(h);
      // Independently: sign x (1024 + fraction) x 2^(exponent - 25), or the subnormals'
      // fraction x 2^-24.
      const int exp = (h >> 10) & 0x1F, frac = h & 0x3FF;
      const double expect = (h & 0x8000 ? -1.0 : 1.0) *
                            (exp ? std::ldexp(1024.0 + frac, exp - 25) : std::ldexp(frac, -24));
      REQUIRE(static_cast<double>(f) == expect);
      REQUIRE(floatToFp16(f) == h);
      REQUIRE(floatToFp16Stochastic(f, 0xFFFFFFFFu) == h);
      REQUIRE(floatToFp16Stochastic(f, 0) == h);
    }
  }
}

TEST_CASE("half: round to nearest even matches a float64 rounding", "[half]") {
  // bfloat16: 8 significant bits, float32's exponent range; binary16: 11 bits, the
  // smallest spacing 2^-24. Values chosen inside both ranges (no overflow).
  for (float scale : {1e-6f, 1e-3f, 1.0f, 1000.0f}) {
    for (float x : someFloats(20000, 3, scale)) {
      REQUIRE(static_cast<double>(bf16ToFloat(floatToBf16(x))) == roundSignificant(x, 8, -1000));
      REQUIRE(static_cast<double>(fp16ToFloat(floatToFp16(x))) == roundSignificant(x, 11, -24));
    }
  }
  CHECK(std::isinf(fp16ToFloat(floatToFp16(65520.0f))));
  CHECK(fp16ToFloat(floatToFp16(65519.0f)) == 65504.0f);
  CHECK(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
  // Stochastic rounding keeps infinity, and the largest float rounds to it or down.
  CHECK(std::isinf(bf16ToFloat(floatToBf16Stochastic(INFINITY, 0xFFFFu))));
  CHECK(std::isinf(fp16ToFloat(floatToFp16Stochastic(-INFINITY, 0xFFFFu))));
  CHECK(!std::isfinite(bf16ToFloat(floatToBf16Stochastic(std::nanf(""), 0xFFFFu))));
}

TEST_CASE("half: stochastic rounding is unbiased", "[half]") {
  // x = 1 + 2^-10 lies 1/8 of a bfloat16 step (2^-7 at 1) above 1 and, for binary16
  // (step 2^-10), x = 1 + 2^-13 likewise. Each rounding is 1 or 1 + step, the second
  // with probability p = 1/8: the mean of N roundings has standard deviation
  // step sqrt(p (1 - p) / N); 5 of them bound a correct rounding's mean with
  // probability 1 - 6e-7. Truncation (mean 1) or round-to-nearest (also 1) miss it
  // by step / 8 = 11 standard deviations at N = 2^16.
  const int n = 1 << 16;
  const double p = 1.0 / 8;
  struct Case {
    float x;
    double step;
    bool bf16;
  };
  for (const Case c :
       {Case{1.0f + 0x1p-10f, 0x1p-7, true}, Case{1.0f + 0x1p-13f, 0x1p-10, false}}) {
    const double bound = 5 * c.step * std::sqrt(p * (1 - p) / n);
    Rng rng(42);
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      const auto bits = static_cast<std::uint32_t>(rng.next() >> 32);
      sum += c.bf16 ? bf16ToFloat(floatToBf16Stochastic(c.x, bits))
                    : fp16ToFloat(floatToFp16Stochastic(c.x, bits));
    }
    CHECK(std::fabs(sum / n - static_cast<double>(c.x)) < bound);
    // The rows' loops: one value repeated along a row, its roundings' mean the same.
    for (const BatchedPath path : paths()) {
      std::vector<float> row(n, -c.x);  // negative: the magnitude is rounded
      std::vector<std::uint16_t> out(n);
      const WeightType type = c.bf16 ? WeightType::Bf16 : WeightType::Fp16;
      narrowRow(row.data(), out.data(), row.size(), type, 12345u, path);
      std::vector<float> back(n);
      widenRow(out.data(), back.data(), out.size(), type, path);
      double s = 0;
      for (float f : back) s += f;
      CHECK(std::fabs(s / n + static_cast<double>(c.x)) < bound);
    }
  }
}

TEST_CASE("half: the portable and AVX-512 row loops give the same bits", "[half]") {
  if (!batchedAvx512Compiled()) POSVEC_SKIP("this build has no AVX-512 loops");
  for (std::size_t dim : {1u, 7u, 16u, 37u, 512u}) {
    std::vector<float> row = someFloats(dim, static_cast<std::uint32_t>(dim), 3.0f);
    row[0] = 1e-6f;  // a binary16 subnormal
    // Edges of the binary16 range: zeros, the smallest normal and its neighbours, the
    // largest finite value and past it, non-finite values.
    const float edges[] = {0.0f,      -0.0f,    0x1p-14f,  -0x1.fffffcp-15f, 0x1.000002p-14f,
                           65504.0f,  65519.0f, -65535.0f, 65536.0f,         1e30f,
                           -INFINITY, NAN,      0x1p-130f};
    for (std::size_t i = 1; i < dim; ++i) row[i] = i % 3 == 0 ? edges[(i / 3) % 13] : row[i];
    for (const WeightType type : {WeightType::Bf16, WeightType::Fp16}) {
      std::vector<std::uint16_t> a(dim), b(dim);
      narrowRow(row.data(), a.data(), dim, type, 99u, BatchedPath::Portable);
      narrowRow(row.data(), b.data(), dim, type, 99u, BatchedPath::Avx512);
      CHECK(a == b);
      std::vector<float> wa(dim), wb(dim);
      widenRow(a.data(), wa.data(), dim, type, BatchedPath::Portable);
      widenRow(a.data(), wb.data(), dim, type, BatchedPath::Avx512);
      CHECK(std::memcmp(wa.data(), wb.data(), dim * 4) == 0);
    }
  }
}

TEST_CASE("half: rows sharing one stream of rounding bits take it in turn", "[half]") {
  // The model: the stream steps every lane once per 32 values of a row (a short last
  // group too), value p of a group takes lane p's low half, value 16 + p lane p's
  // high half, and the next row goes on from there. Two rows through one stream
  // must give exactly the bits of this model (and the second row must differ from a
  // fresh stream's, which the model shows it does not start from).
  for (std::size_t dim : {7u, 37u, 100u}) {
    const std::vector<float> a = someFloats(dim, 5, 2.0f), b = someFloats(dim, 6, 2.0f);
    for (const WeightType type : {WeightType::Bf16, WeightType::Fp16}) {
      std::vector<std::uint16_t> wantA(dim), wantB(dim);
      std::uint32_t lane[16];
      for (std::uint32_t l = 0; l < 16; ++l) {
        std::uint32_t x = 777u + (l + 1) * 0x9E3779B9u;
        x ^= x >> 16;
        x *= 0x7FEB352Du;
        x ^= x >> 15;
        x *= 0x846CA68Bu;
        x ^= x >> 16;
        lane[l] = x | 1u;
      }
      for (int row = 0; row < 2; ++row) {
        const std::vector<float>& src = row == 0 ? a : b;
        std::vector<std::uint16_t>& want = row == 0 ? wantA : wantB;
        for (std::size_t j = 0; j < dim; ++j) {
          if (j % 32 == 0)
            for (auto& x : lane) {
              x ^= x << 13;
              x ^= x >> 17;
              x ^= x << 5;
            }
          const std::size_t p = j % 32;
          const std::uint32_t r = p < 16 ? lane[p] & 0xFFFFu : lane[p - 16] >> 16;
          want[j] = type == WeightType::Bf16 ? floatToBf16Stochastic(src[j], r)
                                             : floatToFp16Stochastic(src[j], r);
        }
      }
      for (const BatchedPath path : paths()) {
        RoundingBits bits(777u);
        std::vector<std::uint16_t> gotA(dim), gotB(dim), fresh(dim);
        narrowRow(a.data(), gotA.data(), dim, type, bits, path);
        narrowRow(b.data(), gotB.data(), dim, type, bits, path);
        CHECK(gotA == wantA);
        CHECK(gotB == wantB);
        narrowRow(b.data(), fresh.data(), dim, type, 777u, path);
        CHECK(fresh != gotB);
      }
    }
  }
}

TEST_CASE("half: one batched step in 16 bits against a float64 reference", "[half]") {
  // m input rows (contexts) and n output rows (target 0 the positive, the others
  // negatives). The reference: s_uv = c_u . t_v in float64, g_uv = (label -
  // sigma(s_uv)) alpha, c_u' = c_u + sum_v g_uv t_v, t_v' = t_v + sum_u g_uv c_u, all
  // from the old (16-bit) values. The kernel's float32 value y of each new weight is
  // within delta of the reference: the sigmoid table's 1e-5 (kernels.hpp) times alpha
  // and |t| summed, plus float32 rounding (2^-24 relative per operation, a few
  // hundred operations: 1e-5 relative of the sums' magnitudes), plus, for the
  // in-place bfloat16 update that multiplies in bfloat16 pairs (Bf16Update::Pairs),
  // each g rounded to bfloat16 first: 2^-8 (half a step of 8 significant bits) of
  // sum |g t| (or of sum |g c|); the other paths multiply g in float32, and the
  // bound holds them to that. Stochastic rounding then stores one of y's two
  // neighbours in 16 bits, so |stored - y| < one step at y:
  // step <= 2^-7 |y| for bfloat16 (8 significant bits) and <= 2^-10 |y| + 2^-24 for
  // binary16 (11 bits, subnormals spaced 2^-24), once per block however many groups
  // of contexts the update takes. Hence
  // |stored - reference| <= rel (|reference| + delta) + abs + delta.
  // Shapes: one group, three groups of contexts (26 > 12 kept in registers) with an
  // odd number of targets and a dim that is no multiple of 16, one context alone, and
  // two groups against 35 targets (gradient pairs past their first 16 and 32 lanes).
  // Both in-place bfloat16 updates run wherever the build has them.
  struct Shape {
    std::size_t m, n, dim;
  };
  const float alpha = 0.1f, scale = 0.5f;
  const Sigmoid sigmoid;
  for (const Shape shape :
       {Shape{2, 3, 40}, Shape{26, 7, 37}, Shape{1, 6, 100}, Shape{13, 35, 33}}) {
    const std::size_t m = shape.m, n = shape.n, dim = shape.dim;
    for (const WeightType type : {WeightType::Bf16, WeightType::Fp16}) {
      const bool bf16 = type == WeightType::Bf16;
      const double rel = bf16 ? 0x1p-7 : 0x1p-10, absStep = bf16 ? 0.0 : 0x1p-24;
      for (const BatchedPath path : paths())
        for (const Bf16Update update : {Bf16Update::Pairs, Bf16Update::Halves}) {
          const bool inPlace = bf16 && path != BatchedPath::Portable && batchedBf16InPlace();
          if (!inPlace && update == Bf16Update::Halves)
            continue;  // one run: the update is not used
          INFO("weights " << (bf16 ? "bf16" : "fp16") << ", path " << static_cast<int>(path)
                          << ", update " << static_cast<int>(update) << ", m " << m << ", n " << n
                          << ", dim " << dim);
          const double gradRel = inPlace && update == Bf16Update::Pairs ? 0x1p-8 : 0.0;
          std::vector<std::uint16_t> in(m * dim), out(n * dim);
          const auto a = someFloats(m * dim, 1, scale), b = someFloats(n * dim, 2, scale);
          for (std::size_t i = 0; i < a.size(); ++i)
            in[i] = bf16 ? floatToBf16(a[i]) : floatToFp16(a[i]);
          for (std::size_t i = 0; i < b.size(); ++i)
            out[i] = bf16 ? floatToBf16(b[i]) : floatToFp16(b[i]);
          auto value = [&](std::uint16_t h) {
            return static_cast<double>(bf16 ? bf16ToFloat(h) : fp16ToFloat(h));
          };
          std::vector<double> c(m * dim), t(n * dim), g(m * n);
          for (std::size_t i = 0; i < c.size(); ++i) c[i] = value(in[i]);
          for (std::size_t i = 0; i < t.size(); ++i) t[i] = value(out[i]);
          for (std::size_t u = 0; u < m; ++u)
            for (std::size_t v = 0; v < n; ++v) {
              double sc = 0;
              for (std::size_t j = 0; j < dim; ++j) sc += c[u * dim + j] * t[v * dim + j];
              g[u * n + v] = ((v == 0 ? 1.0 : 0.0) - 1.0 / (1.0 + std::exp(-sc))) * alpha;
            }
          ThreadState state;
          state.rng = Rng(7);
          state.bf16Update = update;
          std::vector<std::int32_t> contexts(m), targets(n);
          for (std::size_t u = 0; u < m; ++u) contexts[u] = static_cast<std::int32_t>(u);
          for (std::size_t v = 0; v < n; ++v) targets[v] = static_cast<std::int32_t>(v);
          batchedWindow(reinterpret_cast<float*>(in.data()), reinterpret_cast<float*>(out.data()),
                        dim, contexts.data(), m, targets.data(), n, alpha, sigmoid, state, path,
                        type);
          // One weight: its old value, what the kernel stored, and the terms g x partner
          // of its reference update. True when the stored value moved.
          auto check = [&](double old, std::uint16_t stored, std::size_t partners, auto term) {
            const auto [ref, delta] = referenceOf(old, partners, term, alpha, scale, gradRel);
            const double got = value(stored);
            REQUIRE(std::fabs(got - ref) <= rel * (std::fabs(ref) + delta) + absStep + delta);
            return got != old;
          };
          std::size_t changed = 0;
          for (std::size_t j = 0; j < dim; ++j) {
            for (std::size_t u = 0; u < m; ++u)
              changed += check(c[u * dim + j], in[u * dim + j], n,
                               [&](std::size_t v) { return g[u * n + v] * t[v * dim + j]; });
            for (std::size_t v = 0; v < n; ++v)
              changed += check(t[v * dim + j], out[v * dim + j], m,
                               [&](std::size_t u) { return g[u * n + v] * c[u * dim + j]; });
          }
          // The step moved most weights (updates ~0.02 against steps of at most 2^-8).
          CHECK(changed > (m + n) * dim / 2);
        }
    }
  }
}

TEST_CASE("half: the in-place bfloat16 step rounds without bias", "[half]") {
  // The same step from the same 16-bit rows under 4096 seeds: each stored weight is
  // one of the two bfloat16 neighbours of the kernel's float32 value y, chosen so that
  // its mean is y. y is within delta of the float64 reference (the bound of the step
  // test above, the pairs update's gradient rounding included), and the mean of N
  // roundings is within 5 sigma / sqrt(N) of y, sigma <= step / 2 <= 2^-8 |y|. A
  // rounding that truncated, or used biased bits, would be off by a fraction of a
  // step on most weights. Both in-place updates.
  if (!batchedBf16InPlace()) POSVEC_SKIP("this build has no AVX-512 BF16 update");
  const std::size_t m = 2, n = 3, dim = 40, runs = 4096;
  const float alpha = 0.1f, scale = 0.5f;
  const Sigmoid sigmoid;
  std::vector<std::uint16_t> in0(m * dim), out0(n * dim);
  const auto a = someFloats(m * dim, 1, scale), b = someFloats(n * dim, 2, scale);
  for (std::size_t i = 0; i < a.size(); ++i) in0[i] = floatToBf16(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) out0[i] = floatToBf16(b[i]);
  std::vector<double> c(m * dim), t(n * dim), g(m * n);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = bf16ToFloat(in0[i]);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = bf16ToFloat(out0[i]);
  for (std::size_t u = 0; u < m; ++u)
    for (std::size_t v = 0; v < n; ++v) {
      double sc = 0;
      for (std::size_t j = 0; j < dim; ++j) sc += c[u * dim + j] * t[v * dim + j];
      g[u * n + v] = ((v == 0 ? 1.0 : 0.0) - 1.0 / (1.0 + std::exp(-sc))) * alpha;
    }
  const std::int32_t contexts[] = {0, 1}, targets[] = {0, 1, 2};
  for (const Bf16Update update : {Bf16Update::Pairs, Bf16Update::Halves}) {
    INFO("update " << static_cast<int>(update));
    const double gradRel = update == Bf16Update::Pairs ? 0x1p-8 : 0.0;
    std::vector<double> sumIn(m * dim, 0.0), sumOut(n * dim, 0.0);
    for (std::size_t r = 0; r < runs; ++r) {
      std::vector<std::uint16_t> in = in0, out = out0;
      ThreadState state;
      state.rng = Rng(1000 + r);
      state.bf16Update = update;
      batchedWindow(reinterpret_cast<float*>(in.data()), reinterpret_cast<float*>(out.data()), dim,
                    contexts, m, targets, n, alpha, sigmoid, state, BatchedPath::Avx512,
                    WeightType::Bf16);
      for (std::size_t i = 0; i < in.size(); ++i) sumIn[i] += bf16ToFloat(in[i]);
      for (std::size_t i = 0; i < out.size(); ++i) sumOut[i] += bf16ToFloat(out[i]);
    }
    auto check = [&](double old, double sum, std::size_t partners, auto term) {
      const auto [ref, delta] = referenceOf(old, partners, term, alpha, scale, gradRel);
      const double sigma = 0x1p-8 * (std::fabs(ref) + delta);
      REQUIRE(std::fabs(sum / runs - ref) <= delta + 5 * sigma / std::sqrt(double(runs)));
    };
    for (std::size_t j = 0; j < dim; ++j) {
      for (std::size_t u = 0; u < m; ++u)
        check(c[u * dim + j], sumIn[u * dim + j], n,
              [&](std::size_t v) { return g[u * n + v] * t[v * dim + j]; });
      for (std::size_t v = 0; v < n; ++v)
        check(t[v * dim + j], sumOut[v * dim + j], m,
              [&](std::size_t u) { return g[u * n + v] * c[u * dim + j]; });
    }
  }
}

namespace {

CorpusSource smallCorpus() {
  std::vector<Sentence> sentences;
  std::mt19937 gen(5);
  const std::vector<std::string> words{"the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far"};
  std::discrete_distribution<int> pick{30, 10, 8, 8, 20, 6, 9, 5, 4};
  for (int s = 0; s < 300; ++s) {
    Sentence sentence;
    for (int i = 0; i < 12; ++i) sentence.push_back(words[static_cast<std::size_t>(pick(gen))]);
    sentences.push_back(sentence);
  }
  return CorpusSource::fromSentences(sentences);
}

TrainConfig smallConfig(WeightType weights) {
  TrainConfig c;
  c.dim = 24;
  c.minCount = 1;
  c.epochs = 2;
  c.threads = 1;
  c.seed = 3;
  c.weights = weights;
  return c;
}

std::vector<float> inputOf(const ModelState& m) {
  const Embeddings e = embeddingsOf(m);
  return {e.vectors().data(), e.vectors().data() + e.vectors().size()};
}

}  // namespace

TEST_CASE("half: training in 16 bits, model files and one seed's bits", "[half]") {
  const CorpusSource corpus = smallCorpus();
  test::TempDir dir;
  for (const WeightType type : {WeightType::Bf16, WeightType::Fp16}) {
    INFO(weightTypeName(type));
    ModelState a = train(corpus, smallConfig(type));
    CHECK(a.packed == (type == WeightType::Bf16 ? PackedWeights::Bf16 : PackedWeights::Fp16));
    const ModelState b = train(corpus, smallConfig(type));
    // One seed, one thread: the same bits, the packed matrices included.
    REQUIRE(a.input.size() == b.input.size());
    CHECK(std::memcmp(a.input.data(), b.input.data(),
                      static_cast<std::size_t>(a.input.size()) * 2) == 0);
    CHECK(std::memcmp(a.output.data(), b.output.data(),
                      static_cast<std::size_t>(a.output.size()) * 2) == 0);
    const std::vector<float> vectors = inputOf(a);
    // Every value is a 16-bit value, and training moved them.
    int moved = 0;
    for (float x : vectors) {
      REQUIRE(std::isfinite(x));
      const double r =
          type == WeightType::Bf16 ? roundSignificant(x, 8, -1000) : roundSignificant(x, 11, -24);
      REQUIRE(static_cast<double>(x) == r);
    }
    const ModelState fp32 = train(corpus, smallConfig(WeightType::Fp32));
    const Embeddings e32 = embeddingsOf(fp32);
    for (std::size_t i = 0; i < vectors.size(); ++i) moved += vectors[i] != e32.vectors().data()[i];
    CHECK(moved > 0);
    // The file holds float32 and the weight type in the configuration.
    const std::string path = dir.file(std::string("m-") + weightTypeName(type) + ".posvec");
    saveModel(a, path);
    ModelState loaded = loadModel(path);
    CHECK(loaded.packed == PackedWeights::None);
    CHECK(TrainConfig::deserialize(loaded.config).weights == type);
    CHECK(inputOf(loaded) == vectors);
    std::vector<float> out(a.output.cols()), back(a.output.cols());
    for (Eigen::Index r = 0; r < a.output.rows(); ++r) {
      readWeightRow(a, a.output, r, out.data());
      readWeightRow(loaded, loaded.output, r, back.data());
      REQUIRE(out == back);
    }
    // unpackWeights in place gives the same floats.
    unpackWeights(a);
    CHECK(a.packed == PackedWeights::None);
    CHECK(std::vector<float>(a.input.data(), a.input.data() + a.input.size()) == vectors);
  }
}

namespace {

// Resident pages of [from, to) (mincore), rounded inwards to whole pages.
std::size_t residentPages(const void* from, const void* to) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(from) + page - 1) / page * page;
  const auto end = reinterpret_cast<std::uintptr_t>(to) / page * page;
  if (end <= begin) return 0;
  std::vector<unsigned char> in((end - begin) / page);
  REQUIRE(::mincore(reinterpret_cast<void*>(begin), end - begin, in.data()) == 0);
  return static_cast<std::size_t>(
      std::count_if(in.begin(), in.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

}  // namespace

TEST_CASE("half: a new 16-bit model never gives memory to its matrices' second halves", "[half]") {
  // 12,000 words at dim 512: 24.6 MB a float32-sized matrix, large enough for
  // huge pages, of which the 16-bit values fill the first half.
  std::vector<Sentence> sentences;
  for (int s = 0; s < 1200; ++s) {
    Sentence sentence;
    for (int i = 0; i < 10; ++i) sentence.push_back("w" + std::to_string(s * 10 + i));
    sentences.push_back(sentence);
  }
  TrainConfig c = smallConfig(WeightType::Bf16);
  c.dim = 512;
  c.epochs = 1;
  const ModelState m = train(CorpusSource::fromSentences(sentences), c);
  REQUIRE(m.packed == PackedWeights::Bf16);
  for (const MatrixF* matrix : {&m.input, &m.output}) {
    const auto* data = reinterpret_cast<const char*>(matrix->data());
    const auto bytes = static_cast<std::size_t>(matrix->size()) * sizeof(float);
    CHECK(residentPages(data, data + bytes / 2) > 0);  // the values are there
    CHECK(residentPages(data + bytes / 2, data + bytes) == 0);
  }
}

TEST_CASE("half: a float32 model resumes in 16 bits and back", "[half]") {
  const CorpusSource corpus = smallCorpus();
  TrainConfig config = smallConfig(WeightType::Fp32);
  config.epochs = 1;
  ModelState model = train(corpus, config);
  CHECK(model.packed == PackedWeights::None);
  const std::vector<float> before = inputOf(model);
  // Packing rounds each weight to nearest even (float64 reference).
  ModelState packed = model;
  packWeights(packed, PackedWeights::Bf16);
  const std::vector<float> rounded = inputOf(packed);
  for (std::size_t i = 0; i < before.size(); ++i)
    REQUIRE(static_cast<double>(rounded[i]) == roundSignificant(before[i], 8, -1000));

  TrainConfig stored = TrainConfig::deserialize(model.config);
  stored.weights = WeightType::Bf16;
  model.config = stored.serialize();
  resumeTraining(model, corpus, 1);
  CHECK(model.packed == PackedWeights::Bf16);
  CHECK(model.epochsDone == 2);
  CHECK(std::isfinite(model.epochLosses.back()));
  const std::vector<float> mid = inputOf(model);
  CHECK(mid != rounded);

  stored.weights = WeightType::Fp32;
  stored.epochs = 2;
  model.config = stored.serialize();
  resumeTraining(model, corpus, 1);
  CHECK(model.packed == PackedWeights::None);
  CHECK(model.epochsDone == 3);
  CHECK(std::isfinite(model.epochLosses.back()));
}

TEST_CASE("half: kernels without 16-bit support refuse with one message", "[half]") {
  const CorpusSource corpus = smallCorpus();
  for (int which = 0; which < 4; ++which) {
    TrainConfig c = smallConfig(WeightType::Bf16);
    if (which == 0) c.architecture = Architecture::Cbow;
    if (which == 1) c.loss = Loss::HierarchicalSoftmax;
    if (which == 2) c.kernel = Kernel::Classic;
    if (which == 3) {  // subword CBOW (subword skip-gram trains in 16 bits)
      c.subwords = true;
      c.bucket = 100;
      c.architecture = Architecture::Cbow;
    }
    try {
      (void)train(corpus, c);
      FAIL("no error");
    } catch (const ConfigError& e) {
      const std::string m = e.what();
      CHECK(m.find("bf16") != std::string::npos);
      CHECK(m.find("skip-gram with negative sampling") != std::string::npos);
      CHECK(m.find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("half: posvec train --weights, resume across weight types, dry run", "[half][cli]") {
  test::TempDir dir;
  const std::string corpus = dir.file("c.txt");
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the cat sat on a mat\nthe dog ran far\na cat ran\n";
  test::writeText(corpus, text);
  const std::string train =
      "-q train --pretokenized --min-count 1 --dim 8 -t 1 --seed 3 " + test::quote(corpus) + " ";
  const std::string resume = "-q train --pretokenized -t 1 " + test::quote(corpus) + " ";
  // A bad value: one line, the configuration errors' exit code.
  const test::RunResult bad = test::runCli(train + "--epochs 1 -o - --weights fp8");
  CHECK(bad.status == 2);
  CHECK(bad.err == "posvec: error: train: --weights: 'fp8' is not one of fp32, bf16, fp16\n");
  const test::RunResult cbow = test::runCli(train + "--epochs 1 -o - --weights bf16 --cbow");
  CHECK(cbow.status == 2);
  CHECK(cbow.err.find("skip-gram with negative sampling") != std::string::npos);
  CHECK(std::count(cbow.err.begin(), cbow.err.end(), '\n') == 1);
  // Refused before the corpus is read: without -q too, the error is the only line, and an
  // output that was asked for is never written.
  const std::string out = dir.file("never.vec");
  const test::RunResult swCbow =
      test::runCli("train --pretokenized --min-count 1 --dim 8 -t 1 " + test::quote(corpus) +
                   " --subwords --cbow --weights fp16 -o " + test::quote(out));
  CHECK(swCbow.status == 2);
  CHECK(swCbow.err.rfind("posvec: error: weights stored in fp16 train skip-gram", 0) == 0);
  CHECK(std::count(swCbow.err.begin(), swCbow.err.end(), '\n') == 1);
  CHECK_FALSE(std::filesystem::exists(out));
  // Subword skip-gram trains in 16 bits, and the dry run shows both sizes.
  const test::RunResult swDry =
      test::runCli(train + "--subwords --bucket 1000 -o - --weights bf16 --dry-run");
  CHECK(swDry.status == 0);
  CHECK(swDry.out.find("matrices with weights fp32: ") != std::string::npos);
  // float32 -> bf16 -> fp32, each resumed from the last model file.
  const std::string m = test::quote(dir.file("m.posvec"));
  REQUIRE(
      test::runCli(train + "--epochs 1 -o " + test::quote(dir.file("a.txt")) + " --save-model " + m)
          .status == 0);
  const test::RunResult up =
      test::runCli(resume + "--resume " + m + " --epochs 1 --weights bf16 -o " +
                   test::quote(dir.file("b.txt")) + " --save-model " + m);
  INFO(up.err);
  REQUIRE(up.status == 0);
  ModelState model = loadModel(dir.file("m.posvec"));
  CHECK(TrainConfig::deserialize(model.config).weights == WeightType::Bf16);
  CHECK(model.epochsDone == 2);
  for (Eigen::Index i = 0; i < model.input.size(); ++i)
    REQUIRE((floatBits(model.input.data()[i]) & 0xFFFFu) == 0);  // bfloat16 values
  // Without --weights the model's type goes on; with it, float32 again.
  const test::RunResult down =
      test::runCli(resume + "--resume " + m + " --epochs 1 --weights fp32 -o " +
                   test::quote(dir.file("c.txt.bin")) + " --save-model " + m);
  INFO(down.err);
  REQUIRE(down.status == 0);
  model = loadModel(dir.file("m.posvec"));
  CHECK(TrainConfig::deserialize(model.config).weights == WeightType::Fp32);
  CHECK(model.epochsDone == 3);
  // The dry run shows the matrices in both types: 2 x 9 words x 8 x 4 bytes, and half.
  const test::RunResult dry =
      test::runCli("train --pretokenized --min-count 1 --dim 8 " + test::quote(corpus) +
                   " -o x.bin --dry-run --weights bf16");
  INFO(dry.err);
  CHECK(
      dry.out.find("matrices with weights fp32: 0.0 MiB, bf16 or fp16: 0.0 MiB (--weights bf16)") !=
      std::string::npos);
  const test::RunResult json =
      test::runCli("train --pretokenized --min-count 1 --dim 8 " + test::quote(corpus) +
                   " -o x.bin --dry-run --json --weights fp16");
  CHECK(json.out.find("\"matrices_bytes_fp32\": 576") != std::string::npos);
  CHECK(json.out.find("\"matrices_bytes_16bit\": 288") != std::string::npos);
  CHECK(json.out.find("\"matrices_bytes\": 288") != std::string::npos);
}

TEST_CASE("half: POSVEC_BF16_UPDATE picks the in-place update and a bad value is one line",
          "[half][cli]") {
  // Without the variable the CPU's vendor picks (batchedBf16Update, read here in a
  // process without it): the same bits as that update named. The two updates round
  // differently, so their bits differ; each repeats its own.
  if (!batchedBf16InPlace()) POSVEC_SKIP("this build has no in-place bfloat16 update");
  test::TempDir dir;
  const std::string corpus = dir.file("c.txt");
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the cat sat on a mat\nthe dog ran far\na cat ran\n";
  test::writeText(corpus, text);
  auto run = [&](const std::string& env, const std::string& name) {
    const std::string out = dir.file(name + ".bin");
    const test::RunResult r = test::runCli(
        "-q train --pretokenized --min-count 1 --dim 40 -t 1 --seed 3 --epochs 2 --weights bf16 " +
            test::quote(corpus) + " -o " + test::quote(out),
        "", env);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return test::readText(out);
  };
  const std::string pairs = run("POSVEC_BF16_UPDATE=pairs", "pairs");
  const std::string halves = run("POSVEC_BF16_UPDATE=halves", "halves");
  CHECK(pairs != halves);
  CHECK(run("POSVEC_BF16_UPDATE=halves", "again") == halves);
  const std::string chosen = run("", "auto");
  CHECK(chosen == (batchedBf16Update() == Bf16Update::Pairs ? pairs : halves));
  const std::string never = dir.file("never.bin");
  const test::RunResult bad =
      test::runCli("-q train --pretokenized --min-count 1 --dim 8 -t 1 --weights bf16 " +
                       test::quote(corpus) + " -o " + test::quote(never),
                   "", "POSVEC_BF16_UPDATE=fast");
  CHECK(bad.status == 2);
  CHECK(bad.err ==
        "posvec: error: the environment variable POSVEC_BF16_UPDATE is 'fast': set it to pairs "
        "or halves, or unset it\n");
  CHECK_FALSE(std::filesystem::exists(never));
}

TEST_CASE("half: float16 npy files hold the vectors rounded to nearest even", "[half]") {
  test::TempDir dir;
  MatrixF m(3, 4);
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10 (to even: 1); 65519 rounds to the
  // largest value, 65504; 1e-8 is below half the smallest subnormal 2^-24 (to 0).
  m << 1.0f + 0x1p-11f, -0.1f, 3.14159f, 1e-8f,  //
      2.0f, 65519.0f, -7.25f, 0.333f,            //
      1e-5f, -1e-5f, 100.5f, 0.0f;
  const Embeddings e({"a", "b", "c"}, m, {3, 2, 1});
  const std::string path = dir.file("v.npy");
  saveNpyFloat16(e, path);
  // A 128-byte header (magic, version, length and the dict padded to a multiple of
  // 64 bytes) + 12 values x 2 bytes.
  CHECK(std::filesystem::file_size(path) == 128 + 24);
  const Embeddings back = loadVectors(path);
  REQUIRE(back.size() == 3);
  for (Eigen::Index r = 0; r < 3; ++r)
    for (Eigen::Index c = 0; c < 4; ++c) {
      const float x = m(r, c);
      CHECK(static_cast<double>(back.vectors()(r, c)) == roundSignificant(x, 11, -24));
    }
  CHECK(test::runCli("-q train --min-count 1 --dim 4 x.txt -o v.bin --npy-dtype float16").err ==
        "posvec: error: --npy-dtype float16 is for npy output (--format npy or an .npy file)\n");

  // A value float16 cannot hold is refused before anything is written (it was written
  // as inf): 65520 is the first float that rounds to infinity, 65519 the last that
  // does not; NaN and inf are refused too.
  for (const float bad : {65520.0f, -1e10f, std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()}) {
    MatrixF big = m;
    big(2, 1) = bad;
    const std::string out = dir.file("big.npy");
    INFO(bad);
    CHECK_THROWS_AS(saveNpyFloat16(Embeddings({"a", "b", "c"}, big, {3, 2, 1}), out), InputError);
    if (std::isfinite(bad))  // NaN and inf: every writer's own refusal names the word
      CHECK_THROWS_WITH(saveNpyFloat16(Embeddings({"a", "b", "c"}, big, {3, 2, 1}), out),
                        Catch::Contains("word 'c' holds") &&
                            Catch::Contains("beyond float16's largest value 65504"));
    CHECK_FALSE(std::filesystem::exists(out));
    CHECK_FALSE(std::filesystem::exists(dir.file("big.vocab")));
  }

  // A subword model's composed vectors too: half the bytes of the float32 file, the
  // same vectors rounded.
  const std::string corpus = dir.file("c.txt");
  test::writeText(corpus, "the cat sat on the mat\nthe dog sat on the log\na cat and a dog\n");
  const std::string common = "-q train " + test::quote(corpus) +
                             " --subwords --bucket 1000 --min-count 1 --dim 8 -t 1 --epochs 1 -o ";
  REQUIRE(test::runCli(common + test::quote(dir.file("w32.npy"))).status == 0);
  REQUIRE(test::runCli(common + test::quote(dir.file("w16.npy")) + " --npy-dtype float16").status ==
          0);
  const Embeddings w32 = loadVectors(dir.file("w32.npy")), w16 = loadVectors(dir.file("w16.npy"));
  REQUIRE(w16.words() == w32.words());
  CHECK(std::filesystem::file_size(dir.file("w16.npy")) - 128 ==
        (std::filesystem::file_size(dir.file("w32.npy")) - 128) / 2);
  for (Eigen::Index r = 0; r < w32.vectors().rows(); ++r)
    for (Eigen::Index c = 0; c < w32.vectors().cols(); ++c)
      CHECK(static_cast<double>(w16.vectors()(r, c)) ==
            roundSignificant(w32.vectors()(r, c), 11, -24));
}
