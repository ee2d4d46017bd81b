#include "posvec/positional.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "posvec/error.hpp"

using namespace posvec;

namespace {

// Independent reference: the textbook loops of each variant, in long double.
long double refValue(Encoding e, std::int64_t p, std::size_t col, std::size_t d, long double base) {
  const long double pos = static_cast<long double>(p);
  const long double dd = static_cast<long double>(d);
  switch (e) {
    case Encoding::Interleaved: {
      const std::size_t i = col - col % 2;  // 2k
      const long double angle = pos / std::pow(base, static_cast<long double>(i) / dd);
      return col % 2 == 0 ? sinl(angle) : cosl(angle);
    }
    case Encoding::Concatenated: {
      const std::size_t half = d / 2, k = col % half;
      const long double angle = pos / std::pow(base, static_cast<long double>(2 * k) / dd);
      return col < half ? sinl(angle) : cosl(angle);
    }
    case Encoding::Book: {
      const std::size_t i = col - col % 2;
      const long double angle = pos / std::pow(base, static_cast<long double>(2 * i) / dd);
      return col % 2 == 0 ? sinl(angle) : cosl(angle);
    }
    case Encoding::Tutorial: {
      if (col % 2 == 0) return sinl(pos / std::pow(base, static_cast<long double>(2 * col) / dd));
      return cosl(pos / std::pow(base, static_cast<long double>(2 * col) / dd));  // 2(i+1)/d
    }
  }
  return 0;
}

const std::vector<Encoding> kAll = {Encoding::Interleaved, Encoding::Concatenated, Encoding::Book,
                                    Encoding::Tutorial};

PositionalEncoder make(std::size_t dim, Encoding e = Encoding::Interleaved, double base = 10000) {
  PositionalOptions o;
  o.dim = dim;
  o.base = base;
  o.encoding = e;
  return PositionalEncoder(o);
}

long double refCosine(Encoding e, std::int64_t p, std::int64_t q, std::size_t d) {
  long double dot = 0, na = 0, nb = 0;
  for (std::size_t c = 0; c < d; ++c) {
    const long double a = refValue(e, p, c, d, 10000), b = refValue(e, q, c, d, 10000);
    dot += a * b;
    na += a * a;
    nb += b * b;
  }
  return dot / std::sqrt(na * nb);
}

}  // namespace

TEST_CASE("positional: encoding names parse and print", "[positional]") {
  for (Encoding e : kAll) CHECK(parseEncoding(encodingName(e)) == e);
  CHECK(parseEncoding("book") == Encoding::Book);
  CHECK_THROWS_AS(parseEncoding("sinusoidal"), ConfigError);
  CHECK_THROWS_WITH(parseEncoding("Interleaved"), Catch::Contains("interleaved, concatenated"));
}

TEST_CASE("positional: every variant agrees with a long-double reference", "[positional]") {
  // Rows from several places, including far positions where float32 recipes drift.
  const std::vector<std::int64_t> starts = {0, 1, 255, 2048, 65536, 1000000, 9999700};
  for (Encoding e : kAll) {
    for (std::size_t d : {std::size_t{8}, std::size_t{512}}) {
      const auto enc = make(d, e);
      for (std::int64_t s : starts) {
        const MatrixD md = enc.matrix(s, 300);  // 300 rows cover every offset from a re-anchor
        const MatrixF mf = enc.matrixFloat(s, 300);
        long double worstD = 0, worstF = 0;
        for (Eigen::Index r = 0; r < md.rows(); r += (d == 512 ? 7 : 1))
          for (std::size_t c = 0; c < d; ++c) {
            const long double ref = refValue(e, s + r, c, d, 10000);
            const auto ci = static_cast<Eigen::Index>(c);
            worstD = std::max(worstD, std::fabs(static_cast<long double>(md(r, ci)) - ref));
            worstF = std::max(worstF, std::fabs(static_cast<long double>(mf(r, ci)) - ref));
          }
        INFO(encodingName(e) << " d=" << d << " start=" << s);
        // The double angle p * w carries ~1 ulp of p * w: about 1e-9 at p = 10^7.
        CHECK(static_cast<double>(worstD) <= 1e-13 + 3e-16 * static_cast<double>(s + 300));
        // Float: just the final rounding (half an ulp of 1 is 6e-8); the budget is 2e-6.
        CHECK(static_cast<double>(worstF) <= 1e-7);
      }
    }
  }
}

TEST_CASE("positional: row norms, value range and the row-0 pattern", "[positional]") {
  const std::size_t d = 512;
  for (Encoding e : {Encoding::Interleaved, Encoding::Concatenated, Encoding::Book}) {
    const MatrixD m = make(d, e).matrix(0, 1000);
    CHECK(m.maxCoeff() <= 1.0);
    CHECK(m.minCoeff() >= -1.0);
    for (Eigen::Index r = 0; r < m.rows(); r += 37)
      CHECK(m.row(r).norm() == Approx(std::sqrt(d / 2.0)).epsilon(1e-12));
  }
  for (Encoding e : kAll) {
    const Eigen::RowVectorXd r0 = make(d, e).row(0);
    for (std::size_t c = 0; c < d; ++c) {
      const bool isSine = e == Encoding::Concatenated ? c < d / 2 : c % 2 == 0;
      CHECK(r0(static_cast<Eigen::Index>(c)) == (isSine ? 0.0 : 1.0));
    }
  }
}

TEST_CASE("positional: a shorter matrix is bitwise the prefix of a longer one", "[positional]") {
  for (Encoding e : kAll) {
    auto enc = make(64, e);
    const MatrixD longM = enc.matrix(0, 3000);
    const MatrixD shortM = enc.matrix(0, 700);
    CHECK((longM.topRows(700).array() == shortM.array()).all());
    // A window starting off an anchor boundary is the same rows again.
    const MatrixD window = enc.matrix(1234, 500);
    CHECK((longM.middleRows(1234, 500).array() == window.array()).all());
    // Single rows and float matrices are the same values.
    CHECK((enc.row(2999).array() == longM.row(2999).array()).all());
    const MatrixF f = enc.matrixFloat(0, 3000);
    CHECK((f.array() == longM.cast<float>().array()).all());
    MatrixF pre(300, 64);
    enc.fill(100, pre);
    CHECK((pre.array() == f.middleRows(100, 300).array()).all());

    // The cache grows on demand and never changes what it already handed out.
    const MatrixD first = enc.cached(10);
    CHECK(first.rows() >= 10);
    const MatrixD& grown = enc.cached(2500);
    REQUIRE(grown.rows() >= 2500);
    CHECK((grown.topRows(first.rows()).array() == first.array()).all());
    CHECK((grown.topRows(2500).array() == longM.topRows(2500).array()).all());
    CHECK(enc.cached(5).rows() == grown.rows());  // shorter requests reuse it
  }
}

TEST_CASE("positional: concatenated is a fixed column permutation of interleaved", "[positional]") {
  const std::size_t d = 128, h = d / 2;
  const MatrixD inter = make(d).matrix(0, 600);
  const MatrixD concat = make(d, Encoding::Concatenated).matrix(0, 600);
  for (std::size_t k = 0; k < h; ++k) {
    const auto ki = static_cast<Eigen::Index>(k);
    CHECK((concat.col(ki).array() == inter.col(2 * ki).array()).all());
    CHECK((concat.col(ki + h).array() == inter.col(2 * ki + 1).array()).all());
  }
}

TEST_CASE("positional: the study's published similarities are reproduced", "[positional]") {
  // cos(PE[2], PE[10]) at d = 512: 0.8600013 with the study's loop (float32
  // print), 0.7225201 with the standard interleaved encoding.
  const double book = make(512, Encoding::Book).similarity(2, 10);
  const double inter = make(512).similarity(2, 10);
  CHECK(std::fabs(book - 0.8600013) < 5e-8);
  CHECK(std::fabs(inter - 0.7225201) < 5e-8);
  CHECK(book == Approx(static_cast<double>(refCosine(Encoding::Book, 2, 10, 512))).epsilon(1e-12));
  CHECK(inter ==
        Approx(static_cast<double>(refCosine(Encoding::Interleaved, 2, 10, 512))).epsilon(1e-12));
  CHECK(make(512).similarity(7, 7) == Approx(1.0).epsilon(1e-15));
}

TEST_CASE("positional: PE[p + k] is a fixed rotation of PE[p]", "[positional]") {
  const std::size_t d = 64;
  for (Encoding e : {Encoding::Interleaved, Encoding::Concatenated, Encoding::Book}) {
    const auto enc = make(d, e);
    for (std::int64_t k : {1, 2, 17, 300, 4096}) {
      const MatrixD mk = enc.relativeShift(k);
      // A rotation: orthogonal.
      CHECK((mk * mk.transpose() - MatrixD::Identity(d, d)).cwiseAbs().maxCoeff() < 1e-14);
      for (std::int64_t p : {0, 3, 250, 9999, 123456}) {
        const Eigen::VectorXd shifted = mk * enc.row(p).transpose();
        const Eigen::VectorXd direct = enc.row(p + k).transpose();
        INFO(encodingName(e) << " p=" << p << " k=" << k);
        CHECK((shifted - direct).cwiseAbs().maxCoeff() < 1e-10);
      }
    }
    // M_a M_b = M_(a+b); M_-k undoes M_k.
    CHECK((enc.relativeShift(5) * enc.relativeShift(9) - enc.relativeShift(14))
              .cwiseAbs()
              .maxCoeff() < 1e-14);
    CHECK((enc.relativeShift(-40) * enc.relativeShift(40) - MatrixD::Identity(d, d))
              .cwiseAbs()
              .maxCoeff() < 1e-14);
  }
  // M_k of interleaved, checked entry by entry against the angle-addition formulas.
  const MatrixD m3 = make(4, Encoding::Interleaved, 100).relativeShift(3);
  const double w1 = 0.1;  // 100^(-2/4)
  CHECK(m3(0, 0) == Approx(std::cos(3.0)));
  CHECK(m3(0, 1) == Approx(std::sin(3.0)));
  CHECK(m3(1, 0) == Approx(-std::sin(3.0)));
  CHECK(m3(2, 3) == Approx(std::sin(3 * w1)));
  CHECK(m3(0, 2) == 0.0);
  CHECK_THROWS_WITH(make(8, Encoding::Tutorial).relativeShift(1),
                    Catch::Contains("different frequencies"));
}

TEST_CASE("positional: encode adds PE[start + t] to scaled embeddings", "[positional]") {
  // d = 4, base 100: frequencies 1 and 0.1. Hand-derived expected values.
  const auto enc = make(4, Encoding::Interleaved, 100);
  MatrixF e(2, 4);
  e << 1, 2, 3, 4,  //
      0.5f, 0, 0, -1;
  const MatrixD out = enc.encode(e, 1);  // scale sqrt(4) = 2
  const double expected[2][4] = {
      {2 + std::sin(1.0), 4 + std::cos(1.0), 6 + std::sin(0.1), 8 + std::cos(0.1)},
      {1 + std::sin(2.0), 0 + std::cos(2.0), 0 + std::sin(0.2), -2 + std::cos(0.2)}};
  REQUIRE(out.rows() == 2);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 4; ++c) CHECK(out(r, c) == Approx(expected[r][c]).epsilon(1e-14));

  const MatrixD none = enc.encode(e, 0, Scale::parse("none"));
  CHECK(none(0, 1) == Approx(2 + 1.0));
  const MatrixD three = enc.encode(e, 0, Scale::parse("3"));
  CHECK(three(1, 3) == Approx(-3 + std::cos(0.1)));  // PE[1], frequency 0.1
  CHECK(enc.encode(MatrixF(0, 4)).rows() == 0);
  CHECK_THROWS_AS(enc.encode(MatrixF::Zero(2, 5)), InputError);
}

TEST_CASE("positional: a batch is padded, and padding gets no encoding unless asked",
          "[positional]") {
  const auto enc = make(4, Encoding::Interleaved, 100);
  std::vector<MatrixF> batch = {MatrixF::Ones(3, 4), MatrixF::Ones(1, 4), MatrixF(0, 4)};
  const auto out = enc.encodeBatch(batch, 2, Scale::parse("none"));
  REQUIRE(out.size() == 3);
  for (const MatrixD& m : out) REQUIRE(m.rows() == 3);
  CHECK(out[0](2, 0) == Approx(1 + std::sin(4.0)));
  CHECK(out[1](0, 1) == Approx(1 + std::cos(2.0)));
  CHECK(out[1].bottomRows(2).isZero(0));
  CHECK(out[2].isZero(0));

  const auto padded = enc.encodeBatch(batch, 2, Scale::parse("none"), true);
  CHECK(padded[1](2, 2) == Approx(std::sin(0.4)));  // PE[4] at the padding row t = 2
  CHECK(padded[2](0, 1) == Approx(std::cos(2.0)));
  CHECK((padded[0].array() == out[0].array()).all());
}

TEST_CASE("positional: scale parsing", "[positional]") {
  CHECK(Scale::parse("sqrt").factor(512) == Approx(std::sqrt(512.0)));
  CHECK(Scale{}.factor(64) == 8.0);
  CHECK(Scale::parse("none").factor(512) == 1.0);
  CHECK(Scale::parse("2.5").factor(512) == 2.5);
  CHECK(Scale::parse("0").factor(512) == 0.0);
  for (const char* bad : {"", "abc", "1.5x", "nan", "inf", "SQRT ", " 2"})
    CHECK_THROWS_AS(Scale::parse(bad), ConfigError);
}

TEST_CASE("positional: invalid sizes and options are refused with a reason", "[positional]") {
  CHECK_THROWS_WITH(make(7), Catch::Contains("even") && Catch::Contains("cosine"));
  CHECK_THROWS_AS(make(0), ConfigError);
  CHECK_THROWS_AS(make(8, Encoding::Interleaved, 1.0), ConfigError);
  CHECK_THROWS_AS(make(8, Encoding::Interleaved, std::numeric_limits<double>::quiet_NaN()),
                  ConfigError);
  const auto enc = make(512);
  CHECK_THROWS_WITH(enc.matrix(0, 0), Catch::Contains("at least 1"));
  CHECK_THROWS_AS(enc.matrix(-1, 10), ConfigError);
  CHECK_THROWS_AS(enc.row(-5), ConfigError);
  // Far beyond physical memory: refused before allocating (no bad_alloc, no swap storm).
  CHECK_THROWS_WITH(enc.matrix(0, std::size_t{1} << 40), Catch::Contains("memory"));
  CHECK_THROWS_WITH(enc.matrixFloat(0, std::size_t{1} << 40), Catch::Contains("memory"));
  CHECK_THROWS_AS(enc.matrix(std::int64_t{1} << 53, 1), ConfigError);
  CHECK_THROWS_AS(enc.matrix(0, std::numeric_limits<std::size_t>::max()), ConfigError);
  auto grow = make(512);
  CHECK_THROWS_AS(grow.cached(std::size_t{1} << 40), ConfigError);
  MatrixF wrong(3, 10);
  CHECK_THROWS_AS(enc.fill(0, wrong), InputError);
}
