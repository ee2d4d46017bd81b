// The study's numbers (studySimilarities and positionalExperiments, the tables behind every figure and
// results.json) against a second computation written from the definitions in
// double: PE rows from the sinusoid formula, cosines by hand.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "posvec/analysis.hpp"
#include "posvec/error.hpp"
#include "posvec/positional.hpp"
#include "posvec/report.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {

// PE row from the formula: the pair of columns (2k, 2k+1) holds sin and cos of
// p * 10000^(-2k/d) (interleaved) or p * 10000^(-4k/d) (the study's loop, Book).
std::vector<double> peRow(std::int64_t p, std::size_t d, bool book) {
  std::vector<double> r(d);
  for (std::size_t k = 0; k < d / 2; ++k) {
    const double w = std::pow(10000.0, -(book ? 4.0 : 2.0) * static_cast<double>(k) / static_cast<double>(d));
    r[2 * k] = std::sin(static_cast<double>(p) * w);
    r[2 * k + 1] = std::cos(static_cast<double>(p) * w);
  }
  return r;
}

double cosOf(const std::vector<double>& x, const std::vector<double>& y) {
  double dot = 0, nx = 0, ny = 0;
  for (std::size_t i = 0; i < x.size(); ++i) dot += x[i] * y[i], nx += x[i] * x[i], ny += y[i] * y[i];
  return dot / std::sqrt(nx * ny);
}

// s * e + PE[p]
std::vector<double> placed(const Eigen::RowVectorXf& e, double s, std::int64_t p, bool book) {
  std::vector<double> r = peRow(p, static_cast<std::size_t>(e.size()), book);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] += s * static_cast<double>(e[static_cast<Eigen::Index>(i)]);
  return r;
}

Embeddings randomWords(std::size_t d, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0, 1);
  MatrixF m(3, static_cast<Eigen::Index>(d));
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = n(rng);
  return Embeddings({"black", "brown", "other"}, m);
}

}  // namespace

TEST_CASE("analysis values of every experiment match a computation from the definitions",
          "[analysis]") {
  const std::size_t d = 32;
  const Embeddings e = randomWords(d, 11), e16 = randomWords(16, 12);
  ExperimentOptions o;
  o.first = {"black", 2};
  o.second = {"brown", 10};
  o.encodings = {Encoding::Book, Encoding::Interleaved};
  o.sameTokenPositions = 30;
  o.profilePosition = 40;
  o.profileLength = 90;
  o.maxDistance = 20;
  o.heatmapPositions = 8;
  const PositionalExperiments r = positionalExperiments(e, o, {&e16});
  const std::vector<PairSimilarity> pairs =
      studySimilarities(e, {o.first, o.second}, o.encodings, Scale{});
  const Eigen::RowVectorXf a = e.vector("black"), b = e.vector("brown");
  std::vector<double> av(a.data(), a.data() + d), bv(b.data(), b.data() + d);
  const double root = std::sqrt(static_cast<double>(d));

  // The study table: the default scale is sqrt(d); book first, then interleaved.
  REQUIRE(pairs.size() == 2);  // one pair x the two encodings
  for (const auto& p : pairs) {
    const bool book = p.encoding == Encoding::Book;
    INFO((book ? "book" : "interleaved"));
    CHECK(p.scale == Approx(root).epsilon(1e-15));
    CHECK(p.wordSimilarity == Approx(cosOf(av, bv)).margin(1e-6));  // float vectors, float cosine
    CHECK(p.positionalSimilarity == Approx(cosOf(peRow(2, d, book), peRow(10, d, book))).margin(1e-12));
    CHECK(p.positionalSimilarity == Approx(test::peCosineClosedForm(8, d, book ? 4 : 2)).margin(1e-12));
    CHECK(p.combinedSimilarity ==
          Approx(cosOf(placed(a, root, 2, book), placed(b, root, 10, book))).margin(1e-9));
  }

  // Same token across positions: curves for book then interleaved, scales 1, sqrt(d), 2 sqrt(d).
  const std::vector<double> scales{1.0, root, 2 * root};
  REQUIRE(r.sameToken.size() == 2 * scales.size());
  for (std::size_t c = 0; c < r.sameToken.size(); ++c) {
    const bool book = c < scales.size();
    const double s = scales[c % scales.size()];
    CHECK(r.sameToken[c].encoding == (book ? Encoding::Book : Encoding::Interleaved));
    CHECK(r.sameToken[c].scale.factor(d) == Approx(s).epsilon(1e-15));
    const auto& v = r.sameToken[c].values;
    INFO(encodingName(r.sameToken[c].encoding) << " scale " << r.sameToken[c].scale.name());
    REQUIRE(v.size() == o.sameTokenPositions + 1);  // positions 0..sameTokenPositions
    for (const std::size_t k : {0u, 1u, 7u, 30u})
      CHECK(v[k] == Approx(cosOf(placed(a, s, 0, book), placed(a, s, static_cast<std::int64_t>(k), book)))
                        .margin(1e-9));
  }

  // Distance profile: cos(PE[p], PE[q]) for q = 0..len-1, closed form in q - p.
  REQUIRE(r.profiles.size() == 2);
  for (std::size_t c = 0; c < 2; ++c) {
    CHECK(r.profiles[c].encoding == (c == 0 ? Encoding::Book : Encoding::Interleaved));
    const auto& v = r.profiles[c].values;
    REQUIRE(v.size() == o.profileLength);
    for (const std::size_t q : {0u, 39u, 40u, 41u, 89u})
      CHECK(v[q] == Approx(test::peCosineClosedForm(static_cast<long long>(q) - 40, d, c == 0 ? 4 : 2))
                        .margin(1e-12));
  }

  // Combined similarity with the second word k positions after the first (at 2).
  REQUIRE(r.combinedByDistance.size() == 2 * scales.size());
  for (std::size_t c = 0; c < r.combinedByDistance.size(); ++c) {
    const bool book = c < scales.size();
    const double s = scales[c % scales.size()];
    CHECK(r.combinedByDistance[c].encoding == (book ? Encoding::Book : Encoding::Interleaved));
    CHECK(r.combinedByDistance[c].scale.factor(d) == Approx(s).epsilon(1e-15));
    const auto& v = r.combinedByDistance[c].values;
    INFO(encodingName(r.combinedByDistance[c].encoding) << " scale " << r.combinedByDistance[c].scale.name());
    REQUIRE(v.size() == o.maxDistance + 1);
    for (const std::size_t k : {0u, 1u, 8u, 20u})
      CHECK(v[k] == Approx(cosOf(placed(a, s, 2, book), placed(b, s, 2 + static_cast<std::int64_t>(k), book)))
                        .margin(1e-9));
  }

  // PE matrices for the heatmaps.
  for (std::int64_t p = 0; p < 8; ++p)
    for (std::size_t j = 0; j < d; ++j) {
      CHECK(r.peInterleaved(p, static_cast<Eigen::Index>(j)) == Approx(peRow(p, d, false)[j]).margin(1e-12));
      CHECK(r.peBook(p, static_cast<Eigen::Index>(j)) == Approx(peRow(p, d, true)[j]).margin(1e-12));
    }

  // Binary counting: bit k of p, and a wave 0.5 - 0.5 cos(pi (x - 2^k / 2) / 2^k) that is
  // 1 in the middle of every run of ones of bit k.
  for (std::size_t p = 0; p < 32; ++p)
    for (std::size_t k = 0; k < 5; ++k)
      CHECK(r.counting.bits(static_cast<Eigen::Index>(p), static_cast<Eigen::Index>(k)) ==
            static_cast<double>((p / (1u << k)) % 2));

  // Decomposition: the three dot-product shares of the combined vectors' dot product.
  REQUIRE_FALSE(r.decompositions.empty());
  for (const auto& dc : r.decompositions) {
    const Embeddings& src = dc.dim == d ? e : e16;
    const Eigen::RowVectorXf x = src.vector("black"), y = src.vector("brown");
    const bool book = dc.encoding == Encoding::Book;
    const std::vector<double> px = peRow(2, dc.dim, book), py = peRow(10, dc.dim, book);
    double ww = 0, cross = 0, pp = 0, nx = 0, ny = 0, npx = 0, npy = 0;
    for (std::size_t i = 0; i < dc.dim; ++i) {
      const double xs = dc.factor * x[static_cast<Eigen::Index>(i)], ys = dc.factor * y[static_cast<Eigen::Index>(i)];
      ww += xs * ys;
      cross += xs * py[i] + px[i] * ys;
      pp += px[i] * py[i];
      nx += xs * xs, ny += ys * ys, npx += px[i] * px[i], npy += py[i] * py[i];
    }
    const double total = ww + cross + pp;
    INFO("dim " << dc.dim << " scale " << dc.scale.name() << (book ? " book" : " interleaved"));
    CHECK(dc.positionalSimilarity == Approx(cosOf(px, py)).margin(1e-12));
    if (total != 0) {
      CHECK(dc.wordShare == Approx(ww / total).margin(1e-9));
      CHECK(dc.crossShare == Approx(cross / total).margin(1e-9));
      CHECK(dc.positionalShare == Approx(pp / total).margin(1e-9));
    }
    CHECK(dc.normRatio == Approx(0.5 * (std::sqrt(nx / npx) + std::sqrt(ny / npy))).margin(1e-9));
  }
}

TEST_CASE("analysis encoders refuse every odd d_model, small ones too", "[analysis]") {
  // Each sine column needs its cosine partner: an odd d has a column without one.
  for (const std::size_t d : {1u, 3u, 5u, 7u, 9u, 513u}) {
    INFO("d_model " << d);
    PositionalOptions o;
    o.dim = d;
    CHECK_THROWS_AS(o.validate(), ConfigError);
  }
}
