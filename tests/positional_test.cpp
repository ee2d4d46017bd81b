#include "posvec/positional.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "posvec/error.hpp"
#include "test_util.hpp"

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
    case Encoding::Timescale:
    case Encoding::Fairseq: {  // fairseq's row 1 (its default padding index) is zero
      if (e == Encoding::Fairseq && p == 1) return 0;
      const std::size_t half = d / 2, k = col % half;
      const long double span = static_cast<long double>(std::max<std::size_t>(half - 1, 1));
      const long double angle = pos / std::pow(base, static_cast<long double>(k) / span);
      return col < half ? sinl(angle) : cosl(angle);
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
    // Short fills and windows inside one anchor block: the same bits.
    CHECK((enc.matrix(1000, 5).array() == longM.middleRows(1000, 5).array()).all());
    CHECK((enc.matrix(255, 2).array() == longM.middleRows(255, 2).array()).all());
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
  // cos(PE[2], PE[10]) at d = 512: the study's text prints 0.8600013 for its loop
  // (Encoding::Book); both values also follow from the closed form in test_util.hpp.
  const double book = make(512, Encoding::Book).similarity(2, 10);
  const double inter = make(512).similarity(2, 10);
  CHECK(std::fabs(book - 0.8600013) < 5e-8);
  CHECK(std::fabs(inter - test::peCosineClosedForm(8, 512, 2)) < 1e-12);
  CHECK(std::fabs(book - test::peCosineClosedForm(8, 512, 4)) < 1e-12);
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

namespace {
std::vector<std::vector<double>> parseTsv(const std::string& text) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<double> row;
    std::string cell;
    while (std::getline(ls, cell, '\t')) row.push_back(std::stod(cell));
    rows.push_back(row);
  }
  return rows;
}
}  // namespace

TEST_CASE("positional: posvec pe writes tsv, json and npy", "[positional][cli]") {
  using namespace posvec::test;
  SECTION("tsv: one row per line, values to float precision") {
    const auto r = runCli("pe --dim 6 --len 4 --start 1000000 --encoding book");
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const auto rows = parseTsv(r.out);
    REQUIRE(rows.size() == 4);
    for (std::size_t t = 0; t < 4; ++t) {
      REQUIRE(rows[t].size() == 6);
      for (std::size_t c = 0; c < 6; ++c)
        CHECK(std::fabs(rows[t][c] - static_cast<double>(refValue(Encoding::Book, 1000000 + t, c, 6,
                                                                  10000))) < 1e-7);
    }
  }
  SECTION("tsv in double carries 17 significant digits") {
    const auto r = runCli("pe --dim 4 --len 2 --precision double --base 100");
    REQUIRE(r.status == 0);
    const auto rows = parseTsv(r.out);
    REQUIRE(rows.size() == 2);
    CHECK(rows[1][0] == std::sin(1.0));  // a correctly rounded double survives the text round trip
    CHECK(std::fabs(rows[1][3] - std::cos(0.1)) < 1e-16);
  }
  SECTION("json") {
    const auto r = runCli("pe --dim 4 --len 3 --json --encoding concatenated");
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["encoding"] == "concatenated");
    CHECK(j["dim"] == 4);
    REQUIRE(j["rows"].size() == 3);
    CHECK(j["rows"][2][0].get<double>() == Approx(std::sin(2.0)).epsilon(1e-7));
    CHECK(j["rows"][2][2].get<double>() == Approx(std::cos(2.0)).epsilon(1e-7));
  }
  SECTION("npy: v1.0 header, <f4 / <f8, C order") {
    TempDir tmp;
    for (const char* prec : {"float", "double"}) {
      const std::string path = tmp.file(std::string("pe-") + prec + ".npy");
      const auto r = runCli("pe --dim 8 --len 5 --start 3 --precision " + std::string(prec) +
                            " -o " + quote(path));
      REQUIRE(r.status == 0);
      const std::string bytes = readText(path);
      REQUIRE(bytes.size() > 10);
      CHECK(bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
      const std::size_t hlen =
          static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]);
      CHECK((10 + hlen) % 64 == 0);
      const std::string header = bytes.substr(10, hlen);
      const bool dbl = std::string(prec) == "double";
      CHECK(header.find(dbl ? "'<f8'" : "'<f4'") != std::string::npos);
      CHECK(header.find("'fortran_order': False") != std::string::npos);
      CHECK(header.find("'shape': (5, 8)") != std::string::npos);
      CHECK(header.back() == '\n');
      const std::size_t width = dbl ? 8 : 4;
      REQUIRE(bytes.size() == 10 + hlen + 5 * 8 * width);
      // Row 1 (position 4), column 0: sin(4).
      const char* at = bytes.data() + 10 + hlen + 8 * width;
      double v;
      if (dbl) {
        std::memcpy(&v, at, 8);
      } else {
        float f;
        std::memcpy(&f, at, 4);
        v = f;
      }
      CHECK(std::fabs(v - std::sin(4.0)) < (dbl ? 1e-15 : 1e-7));
    }
  }
}

TEST_CASE("posvec pe --cosine prints the study's similarities", "[positional][cli]") {
  using namespace posvec::test;
  const auto r = runCli("pe --encoding book --cosine 2,10 --cosine 3,3");
  REQUIRE(r.status == 0);
  const auto rows = parseTsv(r.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0][0] == 2);
  CHECK(rows[0][1] == 10);
  CHECK(std::fabs(rows[0][2] - 0.8600013) < 5e-8);
  CHECK(rows[1][2] == Approx(1.0).epsilon(1e-15));
  const auto j = runCli("pe --cosine 2,10 --json");
  REQUIRE(j.status == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(std::fabs(doc["cosines"][0]["cosine"].get<double>() - test::peCosineClosedForm(8, 512, 2)) < 1e-12);
  for (const char* bad :
       {"--cosine 2", "--cosine 2,-1", "--cosine a,b", "--cosine 1,2 --format npy"}) {
    const auto e = runCli(std::string("pe ") + bad);
    INFO(bad << " -> " << e.err);
    CHECK(e.status == 2);
    CHECK(std::count(e.err.begin(), e.err.end(), '\n') == 1);
  }
}

TEST_CASE("posvec pe: bad input gives one error line and no output file", "[positional][cli]") {
  using namespace posvec::test;
  TempDir tmp;
  const std::string out = tmp.file("pe.tsv");
  for (const std::string args :
       {"--dim 7 --len 3", "--dim 8 --len 0", "--dim 8 --len -2", "--dim 0 --len 3",
        "--dim 8 --len 3 --encoding sinusoid", "--dim 8 --len 3 --format xml",
        "--dim 8 --len 3 --precision half", "--dim 8 --len 3 --start -1",
        "--dim 512 --len 100000000000", "--dim 8 --len 3 --base 0.5", "--dim 8"}) {
    const auto r = runCli("pe " + args + " -o " + quote(out));
    INFO(args << " -> " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.rfind("posvec: error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(out));
  }
  const auto r = runCli("pe --dim 7 --len 3");
  CHECK(r.err.find("even") != std::string::npos);
  const auto io = runCli("pe --dim 4 --len 3 -o " + quote(tmp.file("missing/dir/pe.tsv")));
  CHECK(io.status == 3);
}

namespace {
// A word2vec text file with d = 4 vectors.
std::string writeVectors(const posvec::test::TempDir& tmp, const std::string& body,
                         const std::string& name = "vec.txt") {
  const std::string path = tmp.file(name);
  posvec::test::writeText(path, body);
  return path;
}
}  // namespace

TEST_CASE("posvec encode: rows are scaled vectors plus PE[start + t]", "[positional][cli]") {
  using namespace posvec::test;
  TempDir tmp;
  const std::string vec = writeVectors(tmp,
                                       "3 4\n"
                                       "the 1 2 3 4\n"
                                       "black 0.5 0 0 -1\n"
                                       "cat 0 0 1 0\n");
  // base 100, d = 4: frequencies 1 and 0.1; scale sqrt(4) = 2; start 1.
  const auto r = runCli("encode " + quote(vec) +
                        " --sentence 'The black cat' --start 1 --base 100 --precision double");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto rows = parseTsv(r.out);
  REQUIRE(rows.size() == 3);
  const double e[3][4] = {{1, 2, 3, 4}, {0.5, 0, 0, -1}, {0, 0, 1, 0}};
  for (int t = 0; t < 3; ++t) {
    const double p = 1 + t;
    const double pe[4] = {std::sin(p), std::cos(p), std::sin(0.1 * p), std::cos(0.1 * p)};
    REQUIRE(rows[t].size() == 4);
    for (int c = 0; c < 4; ++c) CHECK(rows[t][c] == Approx(2 * e[t][c] + pe[c]).epsilon(1e-12));
  }
  SECTION("json carries the tokens, --scale none") {
    const auto j = runCli("encode " + quote(vec) + " -s 'the cat' --json --scale none --base 100");
    REQUIRE(j.status == 0);
    const auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["scale"] == 1.0);
    REQUIRE(doc["sequences"].size() == 1);
    CHECK(doc["sequences"][0]["tokens"] == nlohmann::json({"the", "cat"}));
    CHECK(doc["sequences"][0]["rows"][1][2].get<double>() ==
          Approx(1 + std::sin(0.1)).epsilon(1e-7));
  }
  SECTION("a batch is padded; padding is zero unless --pad-encoding") {
    const std::string path = tmp.file("batch.npy");
    const auto b = runCli("encode " + quote(vec) + " -s 'the black cat' -s 'cat' --scale none " +
                          "--base 100 --precision double -o " + quote(path));
    REQUIRE(b.status == 0);
    const std::string bytes = readText(path);
    const std::size_t hlen =
        static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]);
    CHECK(bytes.substr(10, hlen).find("'shape': (2, 3, 4)") != std::string::npos);
    REQUIRE(bytes.size() == 10 + hlen + 2 * 3 * 4 * 8);
    std::vector<double> v(24);
    std::memcpy(v.data(), bytes.data() + 10 + hlen, 24 * 8);
    CHECK(v[12 + 2] == Approx(1 + std::sin(0.0)));     // sequence 1, t = 0: "cat" + PE[0]
    for (int i = 16; i < 24; ++i) CHECK(v[i] == 0.0);  // its padding rows
    const auto padded = runCli("encode " + quote(vec) + " -s 'the black cat' -s 'cat' " +
                               "--scale none --base 100 --pad-encoding --format json");
    REQUIRE(padded.status == 0);
    const auto doc = nlohmann::json::parse(padded.out);
    CHECK(doc["sequences"][1]["length"] == 1);
    CHECK(doc["sequences"][1]["rows"][2][0].get<double>() == Approx(std::sin(2.0)).epsilon(1e-7));
  }
  SECTION("--input: one sentence a line, blank lines skipped; punctuation can be dropped") {
    const std::string in = tmp.file("in.txt");
    writeText(in, "The cat.\r\n\nblack\n");
    const auto b = runCli("encode " + quote(vec) + " --input " + quote(in) +
                          " --no-punctuation --json --scale none --base 100");
    INFO(b.err);
    REQUIRE(b.status == 0);
    const auto doc = nlohmann::json::parse(b.out);
    REQUIRE(doc["sequences"].size() == 2);
    CHECK(doc["sequences"][0]["tokens"] == nlohmann::json({"the", "cat"}));
    CHECK(doc["sequences"][1]["tokens"] == nlohmann::json({"black"}));
    CHECK(doc["padded_length"] == 2);
    const auto p = runCli("encode " + quote(vec) + " -s 'The cat.'");
    CHECK(p.status == 5);
    CHECK(p.err.find("or --no-punct to drop punctuation") != std::string::npos);
  }
  SECTION("unknown words: an error naming the word, or a zero vector with --unk zero") {
    const std::string out = tmp.file("out.tsv");
    const auto u = runCli("encode " + quote(vec) + " -s 'the brown cat' -o " + quote(out));
    CHECK(u.status == 5);
    CHECK(u.err.find("'brown'") != std::string::npos);
    CHECK(std::count(u.err.begin(), u.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(out));
    const auto z =
        runCli("encode " + quote(vec) +
               " -s 'the brown cat' --unk zero --scale none --base 100 --precision double");
    REQUIRE(z.status == 0);
    const auto zr = parseTsv(z.out);
    REQUIRE(zr.size() == 3);
    CHECK(zr[1][0] == Approx(std::sin(1.0)).epsilon(1e-15));
    CHECK(zr[1][1] == Approx(std::cos(1.0)).epsilon(1e-15));
    // The message is attend's (one lookup in the library), prefixed with the sentence.
    const auto a = runCli("attend " + quote(vec) + " -s 'the brown cat'");
    CHECK(a.status == 5);
    CHECK(u.err == a.err);
    CHECK(u.err.find("sentence 1: unknown word 'brown' (token 2)") != std::string::npos);
  }
  SECTION("--unk token: the mean of all vectors, shown as <unk>") {
    const auto t = runCli("encode " + quote(vec) +
                          " -s 'the brown cat' --unk token --scale none --base 100 --precision "
                          "double --json");
    INFO(t.err);
    REQUIRE(t.status == 0);
    const auto doc = nlohmann::json::parse(t.out);
    CHECK(doc["sequences"][0]["tokens"] == nlohmann::json({"the", "<unk>", "cat"}));
    // Mean of the three rows above, by hand: (1.5, 2, 4, 3) / 3, held as float like every
    // vector row; PE[1] at frequencies 1 and 0.1.
    const double mean[4] = {0.5, static_cast<float>(2.0 / 3), static_cast<float>(4.0 / 3), 1.0};
    const double pe[4] = {std::sin(1.0), std::cos(1.0), std::sin(0.1), std::cos(0.1)};
    const auto& row = doc["sequences"][0]["rows"][1];
    REQUIRE(row.size() == 4);
    for (int c = 0; c < 4; ++c) CHECK(row[c].get<double>() == Approx(mean[c] + pe[c]).epsilon(1e-12));
    // The known words around it are untouched: "cat" + PE[2].
    CHECK(doc["sequences"][0]["rows"][2][2].get<double>() ==
          Approx(1 + std::sin(0.2)).epsilon(1e-12));
  }
}

TEST_CASE("posvec encode: bad input gives one error line and no output", "[positional][cli]") {
  using namespace posvec::test;
  TempDir tmp;
  const std::string vec = writeVectors(tmp, "2 4\nthe 1 2 3 4\ncat 0 0 1 0\n");
  const std::string odd = writeVectors(tmp, "2 3\nthe 1 2 3\ncat 0 0 1\n", "odd.txt");
  const std::string out = tmp.file("out.tsv");
  struct Case {
    std::string args;
    int status;
  };
  for (const Case& c : std::vector<Case>{{quote(odd) + " -s 'the cat'", 2},
                                         {quote(vec) + " -s 'the cat' --scale big", 2},
                                         {quote(vec) + " -s 'the cat' --unk skip", 2},
                                         {quote(vec) + " -s 'the cat' --start -3", 2},
                                         {quote(vec), 2},
                                         {quote(vec) + " -s '   '", 5},
                                         {quote(tmp.file("missing.txt")) + " -s 'the'", 3}}) {
    const auto r = runCli("encode " + c.args + " -o " + quote(out));
    INFO(c.args << " -> " << r.err);
    CHECK(r.status == c.status);
    CHECK(r.err.rfind("posvec: error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(out));
  }
}

// ---- the layout released models carry: [sin | cos] halves, timescales 1 .. base ----

namespace {
// fairseq's get_embedding / tensor2tensor's get_timing_signal_1d, written out in
// double: inverse timescale k = exp(-k * log(base) / max(d/2 - 1, 1)).
double refTimescale(std::int64_t p, std::size_t col, std::size_t d, double base) {
  const std::size_t half = d / 2, k = col % half;
  const double increment = std::log(base) / static_cast<double>(std::max<std::size_t>(half - 1, 1));
  const double angle = static_cast<double>(p) * std::exp(-static_cast<double>(k) * increment);
  return col < half ? std::sin(angle) : std::cos(angle);
}
}  // namespace

TEST_CASE("positional: timescale and fairseq names parse and print", "[positional]") {
  CHECK(parseEncoding("timescale") == Encoding::Timescale);
  CHECK(parseEncoding("fairseq") == Encoding::Fairseq);
  CHECK(encodingName(Encoding::Timescale) == "timescale");
  CHECK(encodingName(Encoding::Fairseq) == "fairseq");
  CHECK_THROWS_WITH(parseEncoding("t2t"), Catch::Contains("timescale or fairseq"));
}

TEST_CASE("positional: timescale agrees with a float64 formula", "[positional]") {
  for (std::size_t d : {2u, 4u, 8u, 64u, 512u}) {
    for (double base : {10000.0, 500.0}) {
      const PositionalEncoder enc = make(d, Encoding::Timescale, base);
      for (std::int64_t start : {std::int64_t{0}, std::int64_t{1000}, std::int64_t{123456}}) {
        const MatrixD m = enc.matrix(start, 40);
        double worst = 0;
        for (Eigen::Index r = 0; r < m.rows(); ++r)
          for (std::size_t c = 0; c < d; ++c)
            worst = std::max(worst, std::abs(m(r, static_cast<Eigen::Index>(c)) -
                                             refTimescale(start + r, c, d, base)));
        INFO("d " << d << " base " << base << " start " << start);
        CHECK(worst < 1e-9);
      }
    }
  }
  // Hand-derived, d = 4: the two timescales are exactly 1 and base.
  const MatrixD m = make(4, Encoding::Timescale).matrix(3, 1);
  CHECK(m(0, 0) == Approx(std::sin(3.0)).margin(1e-15));
  CHECK(m(0, 1) == Approx(std::sin(3.0 / 10000)).margin(1e-15));
  CHECK(m(0, 2) == Approx(std::cos(3.0)).margin(1e-15));
  CHECK(m(0, 3) == Approx(std::cos(3.0 / 10000)).margin(1e-15));
}

TEST_CASE("positional: fairseq has a zero padding row and starts at padding_idx + 1",
          "[positional]") {
  for (std::int64_t pad : {std::int64_t{0}, std::int64_t{1}, std::int64_t{5}}) {
    PositionalOptions o;
    o.dim = 16;
    o.encoding = Encoding::Fairseq;
    o.paddingIdx = pad;
    const PositionalEncoder enc(o);
    CHECK(enc.positionOffset() == pad + 1);
    const MatrixD m = enc.matrix(0, 10);
    for (Eigen::Index r = 0; r < 10; ++r)
      for (Eigen::Index c = 0; c < 16; ++c) {
        const double want =
            r == pad ? 0.0 : refTimescale(r, static_cast<std::size_t>(c), 16, 10000);
        CHECK(std::abs(m(r, c) - want) < 1e-12);
      }
    CHECK(enc.row(pad).norm() == 0.0);
    // Token t of a sentence gets table row pad + 1 + start + t (fairseq's make_positions).
    MatrixF rows = MatrixF::Zero(3, 16);
    rows(1, 4) = 2.0f;
    const MatrixD x = enc.encode(rows, 2, Scale::parse("none"));
    for (Eigen::Index t = 0; t < 3; ++t)
      for (Eigen::Index c = 0; c < 16; ++c) {
        const double want =
            rows(t, c) + refTimescale(pad + 1 + 2 + t, static_cast<std::size_t>(c), 16, 10000);
        CHECK(std::abs(x(t, c) - want) < 1e-12);
      }
  }
  PositionalOptions bad;
  bad.dim = 8;
  bad.encoding = Encoding::Fairseq;
  bad.paddingIdx = -1;
  CHECK_THROWS_AS(PositionalEncoder(bad), ConfigError);
}

TEST_CASE("positional: timescale rows shift by a fixed rotation of its half pairs",
          "[positional]") {
  const PositionalEncoder enc = make(32, Encoding::Timescale);
  for (std::int64_t k : {std::int64_t{1}, std::int64_t{7}, std::int64_t{-3}}) {
    const MatrixD shift = enc.relativeShift(k);
    for (std::int64_t p : {std::int64_t{5}, std::int64_t{40}}) {
      Eigen::VectorXd want(32), got = shift * enc.row(p).transpose();
      for (std::size_t c = 0; c < 32; ++c)
        want(static_cast<Eigen::Index>(c)) = refTimescale(p + k, c, 32, 10000);
      CHECK((got - want).cwiseAbs().maxCoeff() < 1e-12);
    }
  }
}

TEST_CASE("positional: timescale and fairseq agree with a long-double reference far out",
          "[positional]") {
  for (Encoding e : {Encoding::Timescale, Encoding::Fairseq})
    for (std::int64_t s : {std::int64_t{0}, std::int64_t{65536}, std::int64_t{9999700}}) {
      const MatrixD md = make(64, e).matrix(s, 300);
      long double worst = 0;
      for (Eigen::Index r = 0; r < md.rows(); ++r)
        for (std::size_t c = 0; c < 64; ++c)
          worst = std::max(worst,
                           std::fabs(static_cast<long double>(md(r, static_cast<Eigen::Index>(c))) -
                                     refValue(e, s + r, c, 64, 10000)));
      INFO(encodingName(e) << " start=" << s);
      CHECK(static_cast<double>(worst) <= 1e-13 + 3e-16 * static_cast<double>(s + 300));
    }
}

TEST_CASE("posvec encode: the input file or the vectors as output are refused",
          "[positional][cli]") {
  using namespace posvec::test;
  TempDir tmp;
  const std::string vectors = "2 4\nthe 1 2 3 4\ncat 0 0 1 0\n";
  const std::string vec = writeVectors(tmp, vectors);
  const std::string in = tmp.file("in.txt");
  writeText(in, "the cat\n");
  for (const std::string& args : {quote(vec) + " --input " + quote(in) + " -o " + quote(in),
                                  quote(vec) + " -s 'the cat' --format tsv -o " + quote(vec)}) {
    const auto r = runCli("encode " + args);
    INFO(args << " -> " << r.err);
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("is the input file") != std::string::npos);
  }
  CHECK(readText(in) == "the cat\n");
  CHECK(readText(vec) == vectors);
}
