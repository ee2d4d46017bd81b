// `posvec study` end to end through the command line.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.hpp"

using namespace posvec;
using nlohmann::json;

namespace {

std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// A small corpus holding the study's sentence (fast to train at a small d_model).
std::string smallCorpus(const test::TempDir& tmp) {
  std::string text;
  for (int i = 0; i < 20; ++i)
    text +=
        "The black cat sat on the couch and the brown dog slept on the rug. The dog sat near the "
        "rug.\n";
  const std::string path = tmp.file("corpus.txt");
  test::writeText(path, text);
  return path;
}

}  // namespace

TEST_CASE("study cli: --json gives the three similarities and the settings", "[study]") {
  test::TempDir tmp;
  const auto r = test::runCli("-q study --corpus " + test::quote(smallCorpus(tmp)) +
                              " --dim 16 --epochs 2 --json");
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  for (const char* key :
       {"word_similarity", "positional_similarity", "combined_similarity", "settings", "pairs"})
    CHECK(j.contains(key));
  CHECK(j["encoding"] == "book");
  CHECK(j["settings"]["dim"] == 16);
  CHECK(j["settings"]["epochs"] == 2);
  CHECK(j["settings"]["window"] == 5);
  CHECK(j["settings"]["min_count"] == 1);
  CHECK(j["pairs"].size() == 2);  // book and interleaved
  CHECK(r.err.empty());
}

TEST_CASE("study cli: more than two pairs are reported pairwise", "[study]") {
  test::TempDir tmp;
  const auto r = test::runCli(
      "-q study --corpus " + test::quote(smallCorpus(tmp)) +
      " --dim 16 --epochs 1 --json --encoding interleaved --pair black:2 --pair brown:10"
      " --pair cat:3");
  REQUIRE(r.status == 0);
  CHECK(json::parse(r.out)["pairs"].size() == 3);
}

TEST_CASE("study cli: bad input gives one error line and no output", "[study]") {
  test::TempDir tmp;
  const std::string corpus = test::quote(smallCorpus(tmp));
  const std::string report = tmp.file("report");
  struct Case {
    std::string args;
    int status;
    std::string needle;
  };
  const Case cases[] = {
      {"study --pair black --pair brown:10", 2, "colon"},
      {"study --pair black:two --pair brown:10", 2, "not a non-negative integer"},
      {"study --corpus " + test::quote(tmp.file("missing.txt")), 3, "missing.txt"},
      {"study --corpus " + corpus + " --vectors " + corpus, 2, "excludes"},
      {"-q study --corpus " + corpus + " --dim 16 --epochs 1 --pair zebra:3 --pair black:2", 5,
       "zebra"},
      {"study --corpus " + corpus + " --dim 15", 2, "15"},
      {"study --corpus " + corpus + " --encoding nope", 2, "nope"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const auto r = test::runCli(c.args + " --report " + test::quote(report));
    CHECK(r.status == c.status);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.rfind("posvec: error: ", 0) == 0);
    CHECK(r.err.find(c.needle) != std::string::npos);
    CHECK(r.out.empty());
    CHECK_FALSE(std::filesystem::exists(report));
  }
}

TEST_CASE("study cli: --report writes the page, the figures and results.json", "[study]") {
  test::TempDir tmp;
  const std::string dir = tmp.file("report");
  const auto r = test::runCli("-q study --corpus " + test::quote(smallCorpus(tmp)) +
                              " --dim 16 --epochs 2 --report " + test::quote(dir));
  REQUIRE(r.status == 0);
  CHECK(r.out.find("black:2 ~ brown:10") != std::string::npos);
  for (const char* f :
       {"index.html", "results.json", "study-similarities.svg", "distance-profile.svg",
        "pe-heatmap-interleaved.svg", "binary-counting.svg", "training.svg"})
    CHECK(std::filesystem::exists(dir + "/" + f));
  const json j = json::parse(test::readText(dir + "/results.json"));
  CHECK(j["training"].size() == 18);  // epochs 1, 2, 5, 10, 20, 50 on three corpus fractions
}

TEST_CASE("study cli: --vectors uses existing vectors without training", "[study]") {
  test::TempDir tmp;
  // word2vec text format, d = 4: black and brown orthogonal, so word similarity 0.
  const std::string vec = tmp.file("v.txt");
  test::writeText(vec, "3 4\nblack 1 0 0 0\nbrown 0 1 0 0\ncat 1 1 0 0\n");
  const auto r = test::runCli("study --vectors " + test::quote(vec) + " --json --scale none");
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  CHECK(j["word_similarity"].get<double>() == Approx(0.0).margin(1e-12));
  CHECK(j["settings"]["trained"] == false);
  CHECK(j["settings"]["dim"] == 4);
  // Hand-computed, d = 4, book: column 2 uses 10000^(2·2/4), so PE[p] = (sin p, cos p,
  // sin(p/10000), cos(p/10000)); scale 1.
  auto pe = [](double p) {
    return std::array<double, 4>{std::sin(p), std::cos(p), std::sin(p / 10000),
                                 std::cos(p / 10000)};
  };
  const auto a = pe(2), b = pe(10);
  const std::array<double, 4> x{1 + a[0], a[1], a[2], a[3]}, y{b[0], 1 + b[1], b[2], b[3]};
  double dot = 0, nx = 0, ny = 0;
  for (int i = 0; i < 4; ++i) dot += x[i] * y[i], nx += x[i] * x[i], ny += y[i] * y[i];
  CHECK(j["combined_similarity"].get<double>() == Approx(dot / std::sqrt(nx * ny)).epsilon(1e-6));
  const auto bad = test::runCli("study --vectors " + test::quote(vec) + " --dim 8");
  CHECK(bad.status == 2);
  CHECK(lines(bad.err) == 1);
  CHECK(bad.err.find("--dim") != std::string::npos);
}
