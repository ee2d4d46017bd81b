#include "posvec/analysis.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "posvec/error.hpp"
#include "posvec/tokenizer.hpp"
#include "posvec/trainer.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {

// Reference PE row in long double, written from the formulas (not the encoder):
// interleaved: angle p / base^(i/d) for the pair (i, i+1), i even; book: p / base^(2i/d).
std::vector<long double> refRow(std::int64_t p, std::size_t d, bool book,
                                long double base = 10000.0L) {
  std::vector<long double> r(d);
  for (std::size_t i = 0; i < d; i += 2) {
    const long double e = (book ? 2.0L * i : static_cast<long double>(i)) / d;
    const long double a = p / std::pow(base, e);
    r[i] = std::sin(a);
    r[i + 1] = std::cos(a);
  }
  return r;
}

long double refCos(const std::vector<long double>& x, const std::vector<long double>& y) {
  long double dot = 0, nx = 0, ny = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    dot += x[i] * y[i], nx += x[i] * x[i], ny += y[i] * y[i];
  return dot / std::sqrt(nx * ny);
}

PositionalEncoder encoder(Encoding e, std::size_t d) {
  PositionalOptions o;
  o.dim = d;
  o.encoding = e;
  return PositionalEncoder(o);
}

Embeddings randomEmbeddings(std::size_t d, const std::vector<std::string>& words, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0, 1);
  MatrixF m(static_cast<Eigen::Index>(words.size()), static_cast<Eigen::Index>(d));
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = n(rng);
  return Embeddings(words, m);
}

}  // namespace

TEST_CASE("analysis: positional similarity of PE[2] and PE[10] matches the study", "[analysis]") {
  // The study's text prints 0.8600013 (its loop, Encoding::Book); the standard
  // interleaved value comes from the closed form (test_util.hpp).
  const double interleaved = test::peCosineClosedForm(8, 512, 2);
  const auto book = encoder(Encoding::Book, 512), inter = encoder(Encoding::Interleaved, 512);
  CHECK(book.similarity(2, 10) == Approx(0.8600013).margin(5e-7));
  CHECK(inter.similarity(2, 10) == Approx(interleaved).margin(1e-12));
  CHECK(book.similarity(2, 10) == Approx(test::peCosineClosedForm(8, 512, 4)).margin(1e-12));
  CHECK(book.similarity(2, 10) ==
        Approx(static_cast<double>(refCos(refRow(2, 512, true), refRow(10, 512, true))))
            .margin(1e-12));
  const auto words = randomEmbeddings(512, {"black", "brown"}, 7);
  const auto pairs = studySimilarities(words, {{"black", 2}, {"brown", 10}},
                                       {Encoding::Book, Encoding::Interleaved}, Scale{});
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].encoding == Encoding::Book);
  CHECK(pairs[0].positionalSimilarity == Approx(0.8600013).margin(5e-7));
  CHECK(pairs[1].positionalSimilarity == Approx(interleaved).margin(1e-12));
  CHECK(pairs[0].wordSimilarity == pairs[1].wordSimilarity);
  CHECK(pairs[0].scale == Approx(std::sqrt(512.0)));
}

TEST_CASE("analysis: combined similarity equals a hand-computed cosine", "[analysis]") {
  // d = 2, interleaved: PE[p] = (sin p, cos p). a = (1, 0) at 0, b = (0, 1) at 1, scale 3:
  // x = (3, 0) + (0, 1) = (3, 1); y = (0, 3) + (sin 1, cos 1).
  Eigen::RowVectorXf a(2), b(2);
  a << 1, 0;
  b << 0, 1;
  const double y0 = std::sin(1.0), y1 = 3 + std::cos(1.0);
  const double expected = (3 * y0 + 1 * y1) / (std::sqrt(10.0) * std::sqrt(y0 * y0 + y1 * y1));
  CHECK(combinedSimilarity(a, 0, b, 1, encoder(Encoding::Interleaved, 2), 3.0) ==
        Approx(expected).epsilon(1e-12));
  // Scale 0 leaves the positions alone: cos(PE[0], PE[1]) = cos(1) for d = 2.
  CHECK(combinedSimilarity(a, 0, b, 1, encoder(Encoding::Interleaved, 2), 0.0) ==
        Approx(std::cos(1.0)).epsilon(1e-12));
  Eigen::RowVectorXf wrong(4);
  wrong.setOnes();
  CHECK_THROWS_AS(combinedSimilarity(wrong, 0, b, 1, encoder(Encoding::Interleaved, 2), 1.0),
                  InputError);
}

TEST_CASE("analysis: three or more words give every pair", "[analysis]") {
  const auto e = randomEmbeddings(8, {"a", "b", "c"}, 3);
  const auto pairs =
      studySimilarities(e, {{"a", 1}, {"b", 2}, {"c", 3}}, {Encoding::Interleaved}, Scale{});
  REQUIRE(pairs.size() == 3);
  CHECK(pairs[2].a.word == "b");
  CHECK(pairs[2].b.word == "c");
  CHECK_THROWS_AS(studySimilarities(e, {{"a", 1}, {"zebra", 2}}, {Encoding::Book}, Scale{}),
                  InputError);
}

TEST_CASE("analysis: same token across positions starts at 1 and follows the definition",
          "[analysis]") {
  const auto e = randomEmbeddings(16, {"w"}, 11);
  const Eigen::RowVectorXf v = e.vector("w");
  const auto pe = encoder(Encoding::Interleaved, 16);
  const auto curve = sameTokenAcrossPositions(v, pe, 4.0, 20);
  REQUIRE(curve.size() == 21);
  CHECK(curve[0] == 1.0);
  for (std::size_t k : {1u, 7u, 20u}) {
    std::vector<long double> x0(16), xk(16);
    const auto r0 = refRow(0, 16, false), rk = refRow(static_cast<std::int64_t>(k), 16, false);
    for (int i = 0; i < 16; ++i) x0[i] = 4.0L * v[i] + r0[i], xk[i] = 4.0L * v[i] + rk[i];
    CHECK(curve[k] == Approx(static_cast<double>(refCos(x0, xk))).margin(1e-6));
  }
  // A huge scale keeps the word: the token stays itself everywhere.
  for (double c : sameTokenAcrossPositions(v, pe, 1e6, 10)) CHECK(c > 0.999999);
}

TEST_CASE("analysis: the interleaved distance profile is symmetric around p", "[analysis]") {
  const auto pe = encoder(Encoding::Interleaved, 64);
  const std::int64_t p = 100;
  const auto prof = distanceProfile(pe, p, 201);
  REQUIRE(prof.size() == 201);
  CHECK(prof[100] == Approx(1.0).margin(1e-12));
  for (std::int64_t k = 1; k <= 100; ++k) CHECK(prof[p - k] == Approx(prof[p + k]).margin(1e-9));
  for (double c : prof) CHECK(c <= 1.0 + 1e-12);
  // The value at q is cos(PE[p], PE[q]) from the reference formula.
  CHECK(prof[37] ==
        Approx(static_cast<double>(refCos(refRow(100, 64, false), refRow(37, 64, false))))
            .margin(1e-9));
}

TEST_CASE("analysis: combined similarity versus distance starts at the pair at distance 0",
          "[analysis]") {
  const auto e = randomEmbeddings(32, {"a", "b"}, 5);
  const auto pe = encoder(Encoding::Book, 32);
  const auto curve = combinedVsDistance(e.vector("a"), e.vector("b"), 3, 10, pe, 2.0);
  REQUIRE(curve.size() == 11);
  CHECK(curve[0] == Approx(combinedSimilarity(e.vector("a"), 3, e.vector("b"), 3, pe, 2.0)));
  CHECK(curve[7] == Approx(combinedSimilarity(e.vector("a"), 3, e.vector("b"), 10, pe, 2.0)));
}

TEST_CASE("analysis: binary counting bits and waves", "[analysis]") {
  const auto c = binaryCounting(32, 5, 4);
  REQUIRE(c.bits.rows() == 32);
  REQUIRE(c.waves.rows() == 32 * 4 + 1);
  CHECK(c.bits(13, 0) == 1);  // 13 = 0b01101
  CHECK(c.bits(13, 1) == 0);
  CHECK(c.bits(13, 2) == 1);
  CHECK(c.bits(13, 3) == 1);
  CHECK(c.bits(13, 4) == 0);
  // Bit k of p covers [p, p+1): at the middle of a cell the wave is on the bit's side of 0.5.
  for (int k = 1; k < 5; ++k)
    for (int p = 0; p < 32; ++p) {
      const double w = c.waves(p * 4 + 2, k);
      if (c.bits(p, k) == 1)
        CHECK(w >= 0.5 - 1e-12);
      else
        CHECK(w <= 0.5 + 1e-12);
    }
  CHECK_THROWS_AS(binaryCounting(0, 5), ConfigError);
}

TEST_CASE("analysis: decomposition shares add up and explain the extremes", "[analysis]") {
  const auto e = randomEmbeddings(64, {"a", "b"}, 9);
  const auto pe = encoder(Encoding::Interleaved, 64);
  const auto a = e.vector("a"), b = e.vector("b");
  const auto zero = decompose(a, 2, b, 10, pe, {0, false});
  CHECK(zero.combinedSimilarity == Approx(pe.similarity(2, 10)).margin(1e-12));
  CHECK(zero.positionalShare == Approx(1.0));
  CHECK(zero.normRatio == 0.0);
  const auto big = decompose(a, 2, b, 10, pe, {1e5, false});
  CHECK(big.combinedSimilarity == Approx(e.similarity("a", "b")).margin(1e-6));
  for (const auto& d : {zero, big, decompose(a, 2, b, 10, pe, {1, false})}) {
    CHECK(d.wordShare + d.crossShare + d.positionalShare == Approx(1.0).margin(1e-9));
    CHECK(d.combinedSimilarity ==
          Approx(combinedSimilarity(a, 2, b, 10, pe, d.factor)).margin(1e-12));
  }
  // ‖a·s‖ / ‖PE‖ with ‖PE[p]‖ = √(d/2) for interleaved.
  const auto one = decompose(a, 2, b, 10, pe, {1, false});
  CHECK(one.normRatio == Approx(0.5 * (a.norm() + b.norm()) / std::sqrt(32.0)).epsilon(1e-5));
  const auto scales = decompositionScales();
  REQUIRE(scales.size() == 4);
  CHECK(scales[2].factor(64) == Approx(8.0));
  // The names the report and results.json use.
  CHECK(scales[0].name() == "0");
  CHECK(scales[1].name() == "1");
  CHECK(scales[2].name() == "sqrt(d)");
  CHECK(scales[3].name() == "2 sqrt(d)");
  CHECK(scales[3].factor(64) == Approx(16.0));
  const auto rootScale = decompose(a, 2, b, 10, pe, scales[2]);
  CHECK(rootScale.factor == Approx(8.0));
  CHECK(rootScale.combinedSimilarity ==
        Approx(combinedSimilarity(a, 2, b, 10, pe, 8.0)).margin(1e-12));
}

TEST_CASE("analysis: WORD:POSITION parsing", "[analysis]") {
  CHECK(parseWordAt("black:2").word == "black");
  CHECK(parseWordAt("black:2").position == 2);
  CHECK(parseWordAt("a:b:10").word == "a:b");  // the last colon separates
  CHECK_THROWS_AS(parseWordAt("black"), ConfigError);
  CHECK_THROWS_AS(parseWordAt("black:two"), ConfigError);
  CHECK_THROWS_AS(parseWordAt("black:-1"), ConfigError);
  CHECK_THROWS_AS(parseWordAt(":3"), ConfigError);
  CHECK(studySentenceWords().size() == 16);
  CHECK(studySentenceWords()[1] == "black");  // position 2, 1-based
  CHECK(studySentenceWords()[9] == "brown");  // position 10
}

TEST_CASE("analysis: positionalExperiments fills every section", "[analysis]") {
  const auto e = randomEmbeddings(32, {"black", "brown"}, 1);
  const auto e16 = randomEmbeddings(16, {"black", "brown"}, 2);
  ExperimentOptions o;
  o.first = {"black", 2};
  o.second = {"brown", 10};
  o.encodings = {Encoding::Book, Encoding::Interleaved};
  o.sameTokenPositions = 20;
  o.profileLength = 64;
  o.profilePosition = 30;
  o.heatmapPositions = 12;
  const auto r = positionalExperiments(e, o, {&e16});
  CHECK(studySimilarities(e, {o.first, o.second}, o.encodings, Scale{}).size() == 2);
  CHECK(r.sameToken.size() == 6);
  CHECK(r.profiles.size() == 2);
  CHECK(r.profiles[0].values.size() == 64);
  CHECK(r.peInterleaved.rows() == 12);
  CHECK(r.peInterleaved.cols() == 32);
  CHECK(r.decompositions.size() == 2 * 2 * 4);
  CHECK(r.decompositions.front().dim == 16);
}

TEST_CASE("analysis: experiments use the requested encodings and base", "[analysis]") {
  const auto e = randomEmbeddings(16, {"black", "brown"}, 3);
  const auto e8 = randomEmbeddings(8, {"black", "brown"}, 4);
  ExperimentOptions o;
  o.first = {"black", 2};
  o.second = {"brown", 10};
  o.encodings = {Encoding::Interleaved};
  o.base = 50;
  o.sameTokenPositions = 5;
  o.profileLength = 40;
  o.profilePosition = 7;
  o.maxDistance = 6;
  o.heatmapPositions = 4;
  const auto r = positionalExperiments(e, o, {&e8});
  // One curve per (requested encoding, scale 1, √d, 2√d), keyed by value.
  REQUIRE(r.sameToken.size() == 3);
  REQUIRE(r.combinedByDistance.size() == 3);
  REQUIRE(r.profiles.size() == 1);
  CHECK(r.profiles[0].encoding == Encoding::Interleaved);
  CHECK(r.sameToken[1].encoding == Encoding::Interleaved);
  CHECK(r.sameToken[1].scale == SweepScale{1, true});
  CHECK(r.sameToken[2].scale == SweepScale{2, true});
  // The profile at base 50, from the formula in long double.
  const auto ref = refRow(7, 16, false, 50.0L);
  for (std::size_t q = 0; q < 40; ++q)
    CHECK(r.profiles[0].values[q] ==
          Approx(static_cast<double>(
                     refCos(ref, refRow(static_cast<std::int64_t>(q), 16, false, 50.0L))))
              .margin(1e-12));
  // Combined similarity of black at 2 and brown at 2 + k, scale √16 = 4, base 50.
  const auto a = e.vector("black"), b = e.vector("brown");
  for (std::size_t k = 0; k <= 6; ++k) {
    const auto pa = refRow(2, 16, false, 50.0L),
               pb = refRow(2 + static_cast<long>(k), 16, false, 50.0L);
    std::vector<long double> x(16), y(16);
    for (int i = 0; i < 16; ++i) x[i] = 4.0L * a[i] + pa[i], y[i] = 4.0L * b[i] + pb[i];
    CHECK(r.combinedByDistance[1].values[k] ==
          Approx(static_cast<double>(refCos(x, y))).margin(1e-9));
  }
  // Decompositions: per dim (8, then 16), per requested encoding, per scale.
  REQUIRE(r.decompositions.size() == 2 * 1 * 4);
  for (const auto& d : r.decompositions) {
    CHECK(d.encoding == Encoding::Interleaved);
    const auto pa = refRow(2, d.dim, false, 50.0L), pb = refRow(10, d.dim, false, 50.0L);
    CHECK(d.positionalSimilarity == Approx(static_cast<double>(refCos(pa, pb))).margin(1e-12));
  }
}

TEST_CASE("analysis: the study on its own text reaches the regime it reports", "[analysis][slow]") {
  const std::string text = test::sharedData("study-text.txt");
  if (text.empty()) POSVEC_SKIP("shared study-text.txt absent");
  std::vector<Sentence> sentences;
  Tokenizer().tokenizeFile(text, [&](Sentence&& s) { sentences.push_back(std::move(s)); });
  TrainConfig c;
  c.dim = 512;
  c.window = 5;
  c.minCount = 1;
  c.epochs = 5;
  c.sample = 1e-3;
  c.threads = 1;
  const Embeddings e = embeddingsOf(train(CorpusSource::fromSentences(sentences), c));
  const auto pairs = studySimilarities(e, {{"black", 2}, {"brown", 10}},
                                       {Encoding::Book, Encoding::Interleaved}, Scale{});
  REQUIRE(pairs.size() == 2);
  INFO("word similarity " << pairs[0].wordSimilarity << ", combined " << pairs[0].combinedSimilarity);
  CHECK(pairs[0].wordSimilarity >= 0.99);
  CHECK(pairs[0].positionalSimilarity == Approx(0.8600013).margin(5e-7));
  CHECK(pairs[1].positionalSimilarity == Approx(test::peCosineClosedForm(8, 512, 2)).margin(1e-12));
  for (const auto& p : pairs) {
    CHECK(p.combinedSimilarity <= std::max(p.wordSimilarity, p.positionalSimilarity));
    CHECK(p.combinedSimilarity >= std::min(p.wordSimilarity, p.positionalSimilarity));
  }
}
