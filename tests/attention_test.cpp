#include "posvec/attention.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "test_util.hpp"

using namespace posvec;
using posvec::test::quote;
using posvec::test::runCli;
using posvec::test::TempDir;

namespace {

using Grid = std::vector<std::vector<double>>;

Grid zeros(std::size_t r, std::size_t c) { return Grid(r, std::vector<double>(c, 0.0)); }

MatrixD randomMatrix(std::size_t rows, std::size_t cols, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  MatrixD m(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = scale * g(rng);
  return m;
}

struct RefConfig {
  std::size_t heads = 1, headDim = 0;
  bool causal = false, maskAfter = false, renormalize = false;
  bool rotary = false, rotaryHalves = false;  // halves: pairs (j, dk/2 + j), else (2j, 2j + 1)
  double base = 10000.0;
  std::int64_t start = 0;
  std::size_t length = 0;  // 0: all rows
};

struct RefResult {
  std::vector<Grid> weights;  // [head][query][key]
  Grid output;                // [row][column]
};

// y = x · Wᵀ + b in plain loops, or each head's slice of x for an identity map.
Grid refLinear(const MatrixD& x, const LinearMap& map, std::size_t heads, std::size_t dk) {
  const auto T = static_cast<std::size_t>(x.rows()), d = static_cast<std::size_t>(x.cols());
  if (map.weight.size() == 0) {
    Grid y = zeros(T, heads * dk);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t c = 0; c < dk; ++c)
          y[t][h * dk + c] = x(static_cast<Eigen::Index>(t),
                               static_cast<Eigen::Index>(heads * dk == d ? h * dk + c : c));
    return y;
  }
  const auto out = static_cast<std::size_t>(map.weight.rows());
  Grid y = zeros(T, out);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t o = 0; o < out; ++o) {
      double s = map.bias(static_cast<Eigen::Index>(o));
      for (std::size_t i = 0; i < d; ++i)
        s += map.weight(static_cast<Eigen::Index>(o), static_cast<Eigen::Index>(i)) *
             x(static_cast<Eigen::Index>(t), static_cast<Eigen::Index>(i));
      y[t][o] = s;
    }
  return y;
}

// RoPE as Su et al. write it: pair j at position p turns by p · base^(-2j/dk).
void refRotate(Grid& m, std::size_t heads, std::size_t dk, const RefConfig& cfg, std::size_t n) {
  const std::size_t half = dk / 2;
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t j = 0; j < half; ++j) {
        const double theta =
            static_cast<double>(cfg.start + static_cast<std::int64_t>(t)) *
            std::pow(cfg.base, -2.0 * static_cast<double>(j) / static_cast<double>(dk));
        const std::size_t a = h * dk + (cfg.rotaryHalves ? j : 2 * j);
        const std::size_t b = h * dk + (cfg.rotaryHalves ? half + j : 2 * j + 1);
        const double x1 = m[t][a], x2 = m[t][b];
        m[t][a] = x1 * std::cos(theta) - x2 * std::sin(theta);
        m[t][b] = x1 * std::sin(theta) + x2 * std::cos(theta);
      }
}

// The textbook computation, loop by loop, in double.
RefResult refAttention(const MatrixD& x, const AttentionProjections& p, const RefConfig& cfg) {
  const auto T = static_cast<std::size_t>(x.rows()), d = static_cast<std::size_t>(x.cols());
  const std::size_t H = cfg.heads, dk = cfg.headDim ? cfg.headDim : d / H;
  const std::size_t n = cfg.length ? cfg.length : T;
  Grid q = refLinear(x, p.query, H, dk), k = refLinear(x, p.key, H, dk),
       v = refLinear(x, p.value, H, dk);
  if (cfg.rotary) {
    refRotate(q, H, dk, cfg, n);
    refRotate(k, H, dk, cfg, n);
  }
  RefResult r;
  Grid concat = zeros(T, H * dk);
  for (std::size_t h = 0; h < H; ++h) {
    Grid w = zeros(T, T);
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<double> s(n);
      double m = -1e308;
      for (std::size_t j = 0; j < n; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < dk; ++c) dot += q[i][h * dk + c] * k[j][h * dk + c];
        s[j] = dot / std::sqrt(static_cast<double>(dk));
        const bool allowed = !(cfg.causal && !cfg.maskAfter && j > i);
        if (allowed) m = std::max(m, s[j]);
      }
      double sum = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const bool allowed = !(cfg.causal && !cfg.maskAfter && j > i);
        w[i][j] = allowed ? std::exp(s[j] - m) : 0.0;
        sum += w[i][j];
      }
      for (std::size_t j = 0; j < n; ++j) w[i][j] /= sum;
      if (cfg.maskAfter) {
        double kept = 0;
        for (std::size_t j = 0; j < n; ++j) {
          if (j > i) w[i][j] = 0;
          kept += w[i][j];
        }
        if (cfg.renormalize)
          for (std::size_t j = 0; j < n; ++j) w[i][j] /= kept;
      }
      for (std::size_t c = 0; c < dk; ++c) {
        double o = 0;
        for (std::size_t j = 0; j < n; ++j) o += w[i][j] * v[j][h * dk + c];
        concat[i][h * dk + c] = o;
      }
    }
    r.weights.push_back(std::move(w));
  }
  if (p.output.weight.size() == 0) {
    r.output = concat;
  } else {
    r.output = zeros(T, d);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t o = 0; o < d; ++o) {
        double s = p.output.bias(static_cast<Eigen::Index>(o));
        for (std::size_t c = 0; c < H * dk; ++c)
          s += p.output.weight(static_cast<Eigen::Index>(o), static_cast<Eigen::Index>(c)) *
               concat[i][c];
        r.output[i][o] = s;
      }
  }
  return r;
}

double maxDiff(const MatrixD& a, const Grid& b) {
  double worst = 0;
  REQUIRE(static_cast<std::size_t>(a.rows()) == b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    REQUIRE(static_cast<std::size_t>(a.cols()) == b[i].size());
    for (std::size_t j = 0; j < b[i].size(); ++j)
      worst = std::max(
          worst, std::abs(a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) - b[i][j]));
  }
  return worst;
}

bool anyNan(const MatrixD& m) {
  for (Eigen::Index i = 0; i < m.size(); ++i)
    if (std::isnan(m.data()[i])) return true;
  return false;
}

}  // namespace

TEST_CASE("attention: weights and outputs match a float64 reference for every option",
          "[attention]") {
  const std::size_t T = 7, d = 8;
  double worstWeights = 0, worstOutputs = 0;
  int cases = 0;
  struct HeadShape {
    std::size_t heads, headDim;
  };
  for (Projection proj : {Projection::Identity, Projection::Random})
    for (HeadShape hs :
         {HeadShape{1, 0}, HeadShape{2, 0}, HeadShape{4, 0}, HeadShape{3, 6}, HeadShape{2, 8}})
      for (bool outProj : {true, false})
        for (int mask = 0; mask < 4; ++mask)  // none, causal, after softmax, after + renormalised
          for (int pos = 0; pos < 3;
               ++pos)  // none/additive (same here), rotary pairs, rotary halves
            for (std::size_t length : {T, T - 3}) {
              if (proj == Projection::Identity && hs.heads == 3) continue;  // 3 x 6 != 8
              AttentionOptions o;
              o.heads = hs.heads;
              o.headDim = hs.headDim;
              o.projection = proj;
              o.seed = 7 + static_cast<std::uint64_t>(cases);
              o.outputProjection = outProj;
              o.causal = mask > 0;
              o.maskAfterSoftmax = mask >= 2;
              o.renormalize = mask == 3;
              o.positional = pos == 0 ? PositionMode::None : PositionMode::Rotary;
              o.rotaryEncoding = pos == 2 ? Encoding::Concatenated : Encoding::Interleaved;
              const Attention att(d, o);
              const MatrixD x = randomMatrix(T, d, 100 + static_cast<std::uint64_t>(cases));
              const std::int64_t start = pos ? 3 : 0;
              const AttentionResult got = att.compute(x, start, length);
              RefConfig cfg;
              cfg.heads = hs.heads;
              cfg.headDim = hs.headDim;
              cfg.causal = o.causal;
              cfg.maskAfter = o.maskAfterSoftmax;
              cfg.renormalize = o.renormalize;
              cfg.rotary = pos > 0;
              cfg.rotaryHalves = pos == 2;
              cfg.start = start;
              cfg.length = length;
              const RefResult want = refAttention(x, att.projections(), cfg);
              REQUIRE(got.weights.size() == hs.heads);
              for (std::size_t h = 0; h < hs.heads; ++h)
                worstWeights = std::max(worstWeights, maxDiff(got.weights[h], want.weights[h]));
              worstOutputs = std::max(worstOutputs, maxDiff(got.output, want.output));
              ++cases;
            }
  INFO(cases << " configurations");
  CHECK(cases > 300);
  CHECK(worstWeights < 1e-5);
  CHECK(worstOutputs < 1e-5);
  // Both are double computations of the same sums: far below the tolerance.
  CHECK(worstWeights < 1e-12);
  CHECK(worstOutputs < 1e-12);
}

TEST_CASE("attention: additive input is the positional stage's encode", "[attention]") {
  PositionalOptions po;
  po.dim = 6;
  const PositionalEncoder enc(po);
  MatrixF rows(3, 6);
  rows.setRandom();
  const MatrixD x = attentionInput(rows, PositionMode::Additive, enc, 2, Scale::parse("2"));
  const MatrixD plain = attentionInput(rows, PositionMode::Rotary, enc, 2, Scale::parse("2"));
  for (Eigen::Index t = 0; t < 3; ++t)
    for (Eigen::Index c = 0; c < 6; ++c) {
      const double p = static_cast<double>(t + 2);
      const double angle = p / std::pow(10000.0, static_cast<double>(c - c % 2) / 6.0);
      const double pe = c % 2 == 0 ? std::sin(angle) : std::cos(angle);
      CHECK(std::abs(x(t, c) - (2.0 * rows(t, c) + pe)) < 1e-6);
      CHECK(std::abs(plain(t, c) - 2.0 * rows(t, c)) < 1e-6);
    }
}

TEST_CASE("attention: causal rows sum to 1 and are zero above the diagonal", "[attention]") {
  for (Projection proj : {Projection::Identity, Projection::Random}) {
    AttentionOptions o;
    o.heads = 2;
    o.projection = proj;
    o.causal = true;
    const Attention att(10, o);
    const AttentionResult r = att.compute(randomMatrix(9, 10, 5, 3.0));
    for (const MatrixD& w : r.weights)
      for (Eigen::Index i = 0; i < 9; ++i) {
        CHECK(std::abs(w.row(i).sum() - 1.0) < 1e-12);
        for (Eigen::Index j = i + 1; j < 9; ++j) CHECK(w(i, j) == 0.0);
        CHECK(w(i, 0) > 0.0);
      }
  }
}

TEST_CASE("attention: masking after the softmax loses mass, renormalising restores the causal map",
          "[attention]") {
  const MatrixD x = randomMatrix(6, 8, 11);
  AttentionOptions o;
  o.projection = Projection::Random;
  o.causal = true;
  const AttentionResult standard = Attention(8, o).compute(x);
  o.maskAfterSoftmax = true;
  const AttentionResult after = Attention(8, o).compute(x);
  o.renormalize = true;
  const AttentionResult renorm = Attention(8, o).compute(x);
  AttentionOptions full = o;
  full.causal = full.maskAfterSoftmax = full.renormalize = false;
  const AttentionResult unmasked = Attention(8, full).compute(x);
  const MatrixD& w = after.weights[0];
  for (Eigen::Index i = 0; i < 6; ++i) {
    // The mistake keeps the unmasked weights of the past, so rows sum to less than 1.
    for (Eigen::Index j = 0; j <= i; ++j)
      CHECK(std::abs(w(i, j) - unmasked.weights[0](i, j)) < 1e-15);
    if (i < 5) CHECK(w.row(i).sum() < 1.0 - 1e-6);
  }
  CHECK((renorm.weights[0] - standard.weights[0]).cwiseAbs().maxCoeff() < 1e-12);
  CHECK((renorm.output - standard.output).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("attention: with rotary, scores depend only on the offset between positions",
          "[attention]") {
  const MatrixD words = randomMatrix(5, 8, 21);
  for (Projection proj : {Projection::Identity, Projection::Random}) {
    AttentionOptions o;
    o.projection = proj;
    o.heads = 2;
    o.positional = PositionMode::Rotary;
    const Attention rotary(8, o);
    const AttentionResult base = rotary.compute(words, 0);
    for (std::int64_t start : {std::int64_t{1}, std::int64_t{9}, std::int64_t{1000}}) {
      const AttentionResult shifted = rotary.compute(words, start);
      for (std::size_t h = 0; h < 2; ++h)
        CHECK((shifted.weights[h] - base.weights[h]).cwiseAbs().maxCoeff() < 1e-9);
    }
    // Additive: the same shift changes the rows, so the map changes.
    o.positional = PositionMode::Additive;
    const Attention additive(8, o);
    PositionalOptions po;
    po.dim = 8;
    const PositionalEncoder enc(po);
    MatrixF rows = words.cast<float>();
    const AttentionResult a0 = additive.compute(
        attentionInput(rows, PositionMode::Additive, enc, 0, Scale::parse("none")));
    const AttentionResult a9 = additive.compute(
        attentionInput(rows, PositionMode::Additive, enc, 9, Scale::parse("none")));
    CHECK((a9.weights[0] - a0.weights[0]).cwiseAbs().maxCoeff() > 1e-3);
  }
  // Direct: one vector q at position m, one k at n; the score through the map of
  // a two-token sentence [q, k] is the same for every (m, n) with n - m = 3.
  AttentionOptions o;
  o.positional = PositionMode::Rotary;
  const Attention att(4, o);
  MatrixD two(2, 4);
  two << 0.3, -1.2, 0.8, 0.5, 1.1, 0.4, -0.7, 0.9;
  // Rows placed at positions s and s + 3 through start s: weight(0, 1) stays.
  const double w0 = att.compute(two, 0).weights[0](1, 0);
  for (std::int64_t s : {std::int64_t{4}, std::int64_t{50}})
    CHECK(std::abs(att.compute(two, s).weights[0](1, 0) - w0) < 1e-12);
  // From 2^53 on neighbouring positions share one angle in double: refused, as the
  // additive encoding refuses them (near 2^62 the map came out as with no positions).
  const std::int64_t limit = std::int64_t{1} << 53;
  for (const std::int64_t s : {limit - 1, std::int64_t{1} << 62}) {
    INFO(s);
    CHECK_THROWS_WITH(att.compute(two, s), Catch::Contains("positions must stay below 2^53"));
  }
  CHECK_NOTHROW(att.compute(two, limit - 2));
  AttentionOptions scaled = o;
  RopeConfig rope;
  rope.headDim = 4;
  scaled.rope = rope;
  CHECK_THROWS_AS(Attention(4, scaled).compute(two, std::int64_t{1} << 62), ConfigError);
}

TEST_CASE("attention: multi-head equals separate single heads concatenated and projected",
          "[attention]") {
  const MatrixD x = randomMatrix(6, 12, 31);
  // Identity: head h is single-head attention over columns 4h .. 4h + 3.
  AttentionOptions o;
  o.heads = 3;
  const AttentionResult multi = Attention(12, o).compute(x);
  for (Eigen::Index h = 0; h < 3; ++h) {
    const MatrixD slice = x.middleCols(4 * h, 4);
    const AttentionResult single = Attention(4, AttentionOptions{}).compute(slice);
    CHECK((multi.weights[static_cast<std::size_t>(h)] - single.weights[0]).cwiseAbs().maxCoeff() <
          1e-15);
    CHECK((multi.output.middleCols(4 * h, 4) - single.output).cwiseAbs().maxCoeff() < 1e-15);
  }
  // Random: each head's slice of the projections, as its own single-head
  // computation in the reference, then concatenated and mapped by the output projection.
  o.projection = Projection::Random;
  o.seed = 99;
  const Attention att(12, o);
  const AttentionResult r = att.compute(x);
  const AttentionProjections& p = att.projections();
  Grid concat = zeros(6, 12);
  for (Eigen::Index h = 0; h < 3; ++h) {
    AttentionProjections one;
    for (auto [dst, src] : {std::pair{&one.query, &p.query}, std::pair{&one.key, &p.key},
                            std::pair{&one.value, &p.value}}) {
      dst->weight = src->weight.middleRows(4 * h, 4);
      dst->bias = src->bias.segment(4 * h, 4);
    }
    RefConfig cfg;
    cfg.headDim = 4;  // one head of 4 over the 12 input columns
    const RefResult single = refAttention(x, one, cfg);
    CHECK(maxDiff(r.weights[static_cast<std::size_t>(h)], single.weights[0]) < 1e-12);
    for (std::size_t i = 0; i < 6; ++i)
      for (std::size_t c = 0; c < 4; ++c)
        concat[i][static_cast<std::size_t>(4 * h) + c] = single.output[i][c];
  }
  Grid projected = zeros(6, 12);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t oc = 0; oc < 12; ++oc) {
      double s = p.output.bias(static_cast<Eigen::Index>(oc));
      for (std::size_t c = 0; c < 12; ++c)
        s += p.output.weight(static_cast<Eigen::Index>(oc), static_cast<Eigen::Index>(c)) *
             concat[i][c];
      projected[i][oc] = s;
    }
  CHECK(maxDiff(r.heads, concat) < 1e-12);
  CHECK(maxDiff(r.output, projected) < 1e-12);
}

TEST_CASE("attention: the softmax stays finite for huge inputs", "[attention]") {
  {
    double row[4] = {1e308, -1e308, 0.0, 1e308};
    const bool allowed[4] = {true, true, true, true};
    stableSoftmax(row, allowed, 4);
    CHECK(row[0] == 0.5);
    CHECK(row[1] == 0.0);
    CHECK(row[3] == 0.5);
  }
  {
    const double inf = std::numeric_limits<double>::infinity();
    double row[3] = {inf, 1.0, inf};
    const bool allowed[3] = {true, true, false};
    stableSoftmax(row, allowed, 3);
    CHECK(row[0] == 1.0);
    CHECK(row[1] == 0.0);
    CHECK(row[2] == 0.0);
  }
  const MatrixD y = randomMatrix(6, 8, 41);
  for (Projection proj : {Projection::Identity, Projection::Random}) {
    AttentionOptions o;
    o.projection = proj;
    o.heads = 2;
    const Attention att(8, o);
    // 1e30: the scores (~1e60) are still doubles; the reference handles them.
    const MatrixD x30 = y * 1e30;
    const AttentionResult r30 = att.compute(x30);
    RefConfig cfg;
    cfg.heads = 2;
    const RefResult want = refAttention(x30, att.projections(), cfg);
    for (std::size_t h = 0; h < 2; ++h) {
      CHECK_FALSE(anyNan(r30.weights[h]));
      CHECK(maxDiff(r30.weights[h], want.weights[h]) < 1e-5);
    }
    // 1e200: the plain product overflows (1e400); every row is then one-hot at
    // the largest score, which the reference finds from the unscaled rows.
    const AttentionResult r200 = att.compute(y * 1e200);
    for (std::size_t h = 0; h < 2; ++h) {
      CHECK_FALSE(anyNan(r200.weights[h]));
      for (Eigen::Index i = 0; i < 6; ++i)
        CHECK(std::abs(r200.weights[h].row(i).sum() - 1.0) < 1e-12);
    }
    if (proj == Projection::Identity) {
      for (std::size_t h = 0; h < 2; ++h)
        for (std::size_t i = 0; i < 6; ++i) {
          std::size_t best = 0;
          double bestScore = -1e300;
          for (std::size_t j = 0; j < 6; ++j) {
            double s = 0;
            for (std::size_t c = 0; c < 4; ++c)
              s += y(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(4 * h + c)) *
                   y(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(4 * h + c));
            if (s > bestScore) {
              bestScore = s;
              best = j;
            }
          }
          CHECK(r200.weights[h](static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(best)) ==
                1.0);
        }
    }
  }
  AttentionOptions o;
  const Attention att(2, o);
  MatrixD bad(2, 2);
  bad << 1, std::numeric_limits<double>::quiet_NaN(), 0, 1;
  CHECK_THROWS_AS(att.compute(bad), InputError);
}

TEST_CASE("attention: padding rows neither attend nor are attended", "[attention]") {
  AttentionOptions o;
  o.projection = Projection::Random;
  o.heads = 2;
  o.causal = true;
  const Attention att(8, o);
  const MatrixD real = randomMatrix(3, 8, 51);
  MatrixD padded = randomMatrix(6, 8, 52, 10.0);  // padding holds large junk on purpose
  padded.topRows(3) = real;
  const AttentionResult a = att.compute(real);
  const AttentionResult b = att.compute(padded, 0, 3);
  for (std::size_t h = 0; h < 2; ++h) {
    CHECK((b.weights[h].topLeftCorner(3, 3) - a.weights[h]).cwiseAbs().maxCoeff() < 1e-15);
    CHECK(b.weights[h].rightCols(3).cwiseAbs().maxCoeff() == 0.0);
    CHECK(b.weights[h].bottomRows(3).cwiseAbs().maxCoeff() == 0.0);
  }
  CHECK((b.output.topRows(3) - a.output).cwiseAbs().maxCoeff() < 1e-15);
  CHECK(b.output.bottomRows(3).cwiseAbs().maxCoeff() == 0.0);
}

TEST_CASE("attention: random projections follow nn.Linear's initialisation and the seed",
          "[attention]") {
  AttentionOptions o;
  o.projection = Projection::Random;
  o.heads = 2;
  o.headDim = 5;
  const Attention a(16, o), b(16, o);
  o.seed = 2;
  const Attention c(16, o);
  const AttentionProjections& p = a.projections();
  CHECK(p.query.weight.rows() == 10);
  CHECK(p.query.weight.cols() == 16);
  CHECK(p.output.weight.rows() == 16);
  CHECK(p.output.weight.cols() == 10);
  // Uniform in ±1/√fan_in, and spread over most of that range.
  CHECK(p.key.weight.cwiseAbs().maxCoeff() <= 0.25);
  CHECK(p.key.weight.cwiseAbs().maxCoeff() > 0.2);
  CHECK(p.value.bias.cwiseAbs().maxCoeff() <= 0.25);
  CHECK(p.output.weight.cwiseAbs().maxCoeff() <= 1.0 / std::sqrt(10.0));
  CHECK(std::abs(p.query.weight.mean()) < 0.05);
  CHECK(a.projections().query.weight == b.projections().query.weight);
  CHECK(a.projections().query.weight != c.projections().query.weight);
  CHECK(Attention(16, AttentionOptions{}).projections().query.identity());
}

TEST_CASE("attention: inconsistent options are refused with a reason", "[attention]") {
  auto refuse = [](AttentionOptions o, std::size_t d, const char* why) {
    CHECK_THROWS_WITH(Attention(d, o), Catch::Contains(why));
  };
  AttentionOptions o;
  o.heads = 3;
  refuse(o, 8, "not divisible by 3 heads");
  o.heads = 2;
  o.headDim = 3;
  refuse(o, 8, "identity projections");
  o = {};
  o.heads = 0;
  refuse(o, 8, "at least 1");
  o = {};
  o.maskAfterSoftmax = true;
  refuse(o, 8, "a variant of the causal mask: add it");
  o = {};
  o.renormalize = true;
  refuse(o, 8, "only applies to the mask after the softmax (turn it on)");
  o = {};
  o.positional = PositionMode::Rotary;
  o.projection = Projection::Random;
  o.headDim = 3;
  refuse(o, 8, "must be even");
  o.headDim = 4;
  o.rotaryEncoding = Encoding::Tutorial;
  refuse(o, 8, "no rotation");
  CHECK_THROWS_AS(Attention(8, AttentionOptions{}).compute(MatrixD::Zero(2, 6)), InputError);
  CHECK_THROWS_AS(parseProjection("learned"), ConfigError);
  CHECK_THROWS_AS(parsePositionMode("xpos"), ConfigError);
  CHECK(parsePositionMode("alibi") == PositionMode::Alibi);
  // A rotary configuration without rotary positions, or for another head size.
  AttentionOptions r;
  r.rope = RopeConfig{};
  refuse(r, 8, "needs rotary positions");
  r.positional = PositionMode::Rotary;
  refuse(r, 8, "heads of 128 columns");
  CHECK_THROWS_AS(parseUnknownWords("skip"), ConfigError);
}

TEST_CASE("attention: unknown words are an error, a zero row or the mean row", "[attention]") {
  MatrixF v(3, 2);
  v << 1, 2, 3, 4, 5, 9;
  const Embeddings emb({"a", "b", "c"}, v);
  CHECK_THROWS_WITH(lookUpTokens(emb, {"a", "zebra"}), Catch::Contains("unknown word 'zebra'"));
  // Only a token without letters or digits gets the hint to drop punctuation.
  CHECK_THROWS_WITH(lookUpTokens(emb, {"a", "zebra"}), !Catch::Contains("drop punctuation"));
  CHECK_THROWS_WITH(lookUpTokens(emb, {"a", "--"}), Catch::Contains("or drop punctuation"));
  CHECK_THROWS_WITH(lookUpTokens(emb, {"a", "\xc3\xa9"}), !Catch::Contains("drop punctuation"));
  // The settings are named by meaning, and where: a front end spells them its own way.
  try {
    lookUpTokens(emb, {"a", "--"});
    FAIL("no error for an unknown word");
  } catch (const InputError& e) {
    std::vector<std::string> named;
    for (const SettingMention& m : e.mentions()) named.push_back(m.setting);
    CHECK(named == std::vector<std::string>{"unk", "unk", "keepPunctuation"});
    CHECK(std::string(e.what()).find("use unknown-word policy zero or unknown-word policy token") !=
          std::string::npos);
    const std::string python = e.spelled([](const std::string& s) {
      return s == "unk" ? std::string("unk=") : std::string();
    });
    CHECK(python.find("use unk= zero or unk= token to map it") != std::string::npos);
    CHECK(python.find(", or drop punctuation") != std::string::npos);
  }
  const LookedUp z = lookUpTokens(emb, {"a", "zebra"}, UnknownWords::Zero);
  CHECK(z.rows.row(1).norm() == 0.0f);
  CHECK(z.tokens[1] == "zebra");
  const LookedUp t = lookUpTokens(emb, {"zebra", "b"}, UnknownWords::Token);
  CHECK(t.tokens[0] == "<unk>");
  CHECK(t.unknown == std::vector<std::size_t>{0});
  CHECK(t.rows(0, 0) == Approx(3.0));  // (1 + 3 + 5) / 3
  CHECK(t.rows(0, 1) == Approx(5.0));  // (2 + 4 + 9) / 3
  CHECK(t.rows(1, 1) == 4.0f);
  CHECK_THROWS_AS(lookUpTokens(emb, {}), InputError);
}

// ---- the command line --------------------------------------------------------

namespace {

// A .npy file of float64 with the shape in its header.
std::vector<double> readNpy(const std::string& path, std::vector<std::size_t>& shape) {
  const std::string raw = posvec::test::readText(path);
  REQUIRE(raw.size() > 10);
  REQUIRE(raw.compare(0, 6, "\x93NUMPY") == 0);
  const std::size_t headerLen =
      static_cast<unsigned char>(raw[8]) | (static_cast<unsigned char>(raw[9]) << 8);
  const std::string header = raw.substr(10, headerLen);
  REQUIRE(header.find("'<f8'") != std::string::npos);
  shape.clear();
  std::size_t pos = header.find('(') + 1;
  const std::size_t end = header.find(')');
  while (pos < end) {
    const std::size_t comma = std::min(header.find(',', pos), end);
    const std::string num = header.substr(pos, comma - pos);
    if (num.find_first_not_of(" ") != std::string::npos) shape.push_back(std::stoul(num));
    pos = comma + 1;
  }
  std::size_t count = 1;
  for (std::size_t s : shape) count *= s;
  std::vector<double> data(count);
  REQUIRE(raw.size() == 10 + headerLen + count * 8);
  std::memcpy(data.data(), raw.data() + 10 + headerLen, count * 8);
  return data;
}

const char* kVectors =
    "5 4\n"
    "the 0.1 0.2 0.3 0.4\n"
    "black 1 0 0.5 0\n"
    "cat 0 1 0 0.5\n"
    "sat -0.5 0.2 0.1 0.3\n"
    "brown 0.9 0.1 0.5 0.1\n";

// Rows of `words` · √4 + interleaved PE[t], from the formula.
MatrixD encodedRows(const std::vector<std::vector<double>>& words) {
  MatrixD x(static_cast<Eigen::Index>(words.size()), 4);
  for (std::size_t t = 0; t < words.size(); ++t)
    for (std::size_t c = 0; c < 4; ++c) {
      const double angle =
          static_cast<double>(t) / std::pow(10000.0, static_cast<double>(c - c % 2) / 4.0);
      x(static_cast<Eigen::Index>(t), static_cast<Eigen::Index>(c)) =
          2.0 * static_cast<double>(static_cast<float>(words[t][c])) +
          (c % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  return x;
}

}  // namespace

TEST_CASE("posvec attend: npy maps match the reference, batches are padded", "[attention][cli]") {
  TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  posvec::test::writeText(vec, kVectors);
  const std::vector<double> the{0.1, 0.2, 0.3, 0.4}, black{1, 0, 0.5, 0}, cat{0, 1, 0, 0.5};
  const auto one = runCli("attend " + quote(vec) + " -s 'The black cat' --causal -o " +
                          quote(tmp.file("w.npy")));
  REQUIRE(one.status == 0);
  std::vector<std::size_t> shape;
  std::vector<double> w = readNpy(tmp.file("w.npy"), shape);
  CHECK(shape == std::vector<std::size_t>{1, 3, 3});
  RefConfig cfg;
  cfg.causal = true;
  const MatrixD x = encodedRows({the, black, cat});
  const RefResult want = refAttention(x, AttentionProjections{}, cfg);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      CHECK(std::abs(w[i * 3 + j] - want.weights[0][i][j]) < 1e-9);

  const auto batch = runCli("attend " + quote(vec) + " -s 'The black cat' -s 'cat' --heads 2 -o " +
                            quote(tmp.file("b.npy")) + " --output-values");
  REQUIRE(batch.status == 0);
  w = readNpy(tmp.file("b.npy"), shape);
  CHECK(shape == std::vector<std::size_t>{2, 2, 3, 3});
  // Sentence 2 ("cat", padded to 3): one real token attending to itself.
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j)
        CHECK(w[18 + h * 9 + i * 3 + j] == (i == 0 && j == 0 ? 1.0 : 0.0));
  const std::vector<double> values = readNpy(tmp.file("b.values.npy"), shape);
  CHECK(shape == std::vector<std::size_t>{2, 3, 4});
  // A lone token's output is its own (encoded) row.
  for (std::size_t c = 0; c < 4; ++c)
    CHECK(std::abs(values[12 + c] - encodedRows({cat})(0, static_cast<Eigen::Index>(c))) < 1e-9);
}

TEST_CASE("posvec attend: tsv and json name the words", "[attention][cli]") {
  TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  posvec::test::writeText(vec, kVectors);
  const auto tsv = runCli("attend " + quote(vec) + " -s 'black cat' --positional none");
  REQUIRE(tsv.status == 0);
  CHECK(tsv.out.find("\tblack\tcat\n") != std::string::npos);
  // Identity, no positions, scale 2: scores 4 e_i·e_j / 2.
  const double s00 = 2 * 1.25, s01 = 0.0;
  const double w01 = std::exp(s01 - s00) / (1 + std::exp(s01 - s00));
  char want[64];
  std::snprintf(want, sizeof want, "black\t%.6f\t%.6f\n", 1 - w01, w01);
  CHECK(tsv.out.find(want) != std::string::npos);
  const auto js = runCli("attend " + quote(vec) + " -s 'black dog' --unk token --format json");
  REQUIRE(js.status == 0);
  const auto j = nlohmann::json::parse(js.out);
  CHECK(j["sequences"][0]["tokens"] == nlohmann::json({"black", "<unk>"}));
  CHECK(j["sequences"][0]["unknown"] == nlohmann::json({1}));
  CHECK(j["sequences"][0]["weights"].size() == 1);
  CHECK(j["unk"] == "token");
}

TEST_CASE("posvec attend: bad input gives one error line and no output", "[attention][cli]") {
  TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  posvec::test::writeText(vec, kVectors);
  const std::string out = tmp.file("o.npy");
  const std::vector<std::pair<std::string, int>> cases = {
      {" -s 'the dog'", 5},
      {" -s 'the cat' --heads 3", 2},
      {" -s 'the cat' --heads 0", 2},
      {" -s 'the cat' --mask-after-softmax", 2},
      {" -s 'the cat' --positional sideways", 2},
      {" -s 'the cat' --projection learned", 2},
      {" -s 'the cat' --unk skip", 2},
      {" -s 'the cat' --encoding tutorial --positional rotary", 2},
      {" -s 'the cat' --format npy --output-values", 2},
      {" -s '   '", 5},
      {"", 2},
  };
  for (const auto& [args, code] : cases) {
    const auto r =
        runCli("attend " + quote(vec) + args +
               (args.find("--output-values") == std::string::npos ? " -o " + quote(out) : ""));
    INFO(args << " -> " << r.err);
    CHECK(r.status == code);
    CHECK(r.err.rfind("posvec: error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(out));
  }
  const auto missing = runCli("attend " + quote(tmp.file("nope.txt")) + " -s 'the cat'");
  CHECK(missing.status == 3);
}

TEST_CASE("posvec attend: the input file or the vectors as output are refused",
          "[attention][cli]") {
  TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  posvec::test::writeText(vec, kVectors);
  const std::string in = tmp.file("in.txt");
  posvec::test::writeText(in, "the cat\n");
  // FILE.values.npy beside FILE.npy is written too: as the input it is refused as well.
  const std::string values = tmp.file("s.values.npy");
  posvec::test::writeText(values, "the cat\n");
  for (const std::string& args : {quote(vec) + " --input " + quote(in) + " -o " + quote(in),
                                  quote(vec) + " -s 'the cat' --format tsv -o " + quote(vec),
                                  quote(vec) + " --input " + quote(values) +
                                      " --output-values -o " + quote(tmp.file("s.npy"))}) {
    const auto r = runCli("attend " + args);
    INFO(args << " -> " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.rfind("posvec: error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("is the input file") != std::string::npos);
  }
  CHECK(posvec::test::readText(in) == "the cat\n");
  CHECK(posvec::test::readText(vec) == kVectors);
  CHECK(posvec::test::readText(values) == "the cat\n");
  CHECK_FALSE(std::filesystem::exists(tmp.file("s.npy")));
}

TEST_CASE("posvec attend: PyTorch recomputes the maps from the saved projections",
          "[attention][cli]") {
  if (std::system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") != 0)
    POSVEC_SKIP("python3-torch is not installed for /usr/bin/python3 (Debian package python3-torch)");
  TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  posvec::test::writeText(vec, kVectors);
  const std::string dir = tmp.file("proj");
  const auto r = runCli("attend " + quote(vec) +
                        " -s 'The black cat sat' -s 'brown cat' --heads 2 --projection random "
                        "--seed 5 --causal --output-values -o " +
                        quote(tmp.file("w.npy")) + " --save-projections " + quote(dir));
  REQUIRE(r.status == 0);
  const std::string script = tmp.file("check.py");
  posvec::test::writeText(script, R"PY(
import json, sys
import numpy as np
import torch
d, out = sys.argv[1], sys.argv[2]
cfg = json.load(open(d + "/config.json"))
x = torch.from_numpy(np.load(d + "/input.npy"))            # batch x L x d_model
lin = lambda n: torch.nn.functional.linear(
    x, torch.from_numpy(np.load(f"{d}/{n}_weight.npy")), torch.from_numpy(np.load(f"{d}/{n}_bias.npy")))
q, k, v = lin("query"), lin("key"), lin("value")
B, L, _ = x.shape
H, dk = cfg["heads"], cfg["head_dim"]
split = lambda t: t.view(B, L, H, dk).transpose(1, 2)       # batch x heads x L x dk
q, k, v = split(q), split(k), split(v)
scores = q @ k.transpose(-1, -2) / dk ** 0.5
allowed = torch.zeros(B, 1, L, L, dtype=torch.bool)
for b, n in enumerate(cfg["lengths"]):
    allowed[b, :, :n, :n] = True
allowed &= torch.ones(L, L, dtype=torch.bool).tril()
w = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
w = torch.nan_to_num(w)                                     # padding queries: all keys masked
w = torch.where(allowed.any(-1, keepdim=True), w, torch.zeros_like(w))
mine = torch.from_numpy(np.load(out))
err = (w - mine).abs().max().item()
o = (w @ v).transpose(1, 2).reshape(B, L, H * dk)
o = torch.nn.functional.linear(o, torch.from_numpy(np.load(d + "/output_weight.npy")),
                               torch.from_numpy(np.load(d + "/output_bias.npy")))
rows = torch.zeros(B, L, 1, dtype=torch.bool)
for b, n in enumerate(cfg["lengths"]):
    rows[b, :n] = True
o = torch.where(rows, o, torch.zeros_like(o))
verr = (o - torch.from_numpy(np.load(out[:-4] + ".values.npy"))).abs().max().item()
print(err, verr)
sys.exit(0 if err < 1e-5 and verr < 1e-5 else 1)
)PY");
  const int status =
      std::system(("/usr/bin/python3 " + quote(script) + " " + quote(dir) + " " + quote(tmp.file("w.npy")) +
                   " >" + quote(tmp.file("py.out")) + " 2>&1")
                      .c_str());
  INFO(posvec::test::readText(tmp.file("py.out")));
  CHECK(status == 0);
}
