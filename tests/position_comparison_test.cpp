// The study's comparison of positions (--compare-positions): the measures
// against hand-derived values and identities that do not use posvec's code.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "posvec/report.hpp"
#include "posvec/study.hpp"
#include "test_util.hpp"

using namespace posvec;
using nlohmann::json;

namespace {

const PositionMethod& method(const StudyResults& r, const std::string& name) {
  for (const auto& m : r.positions.methods)
    if (m.name == name) return m;
  FAIL("no method " << name);
  throw std::logic_error("unreachable");
}

StudyResults compared(const std::string& vec, std::int64_t context, double factor) {
  StudyOptions o;
  o.vectors = vec;
  o.scale = Scale::parse("none");
  o.comparePositions = true;
  o.compareContext = context;
  o.compareFactor = factor;
  return runStudy(o);
}

}  // namespace

TEST_CASE("position comparison: measures, identities and the pair", "[rope][study]") {
  test::TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  // d = 4: θ = (1, 1/100). black and brown orthogonal unit vectors.
  test::writeText(vec, "3 4\nblack 1 0 0 0\nbrown 0 1 0 0\ncat 1 1 0 0\n");
  const StudyResults r = compared(vec, 64, 8);
  REQUIRE(r.positions.methods.size() == 9);
  CHECK(r.positions.pairDistance == 8);
  const auto& paper = method(r, "paper");
  const auto& rope = method(r, "rope");
  const auto& linear = method(r, "linear");
  const auto& alibi = method(r, "alibi");
  for (std::size_t k = 0; k < rope.near.size(); ++k) {
    const double want = (std::cos(double(k)) + std::cos(double(k) / 100)) / 2;
    CHECK(rope.near[k] == Approx(want).margin(1e-14));
    CHECK(paper.near[k] == Approx(want).margin(1e-12));  // PE rows: the same cosine
    const double ali = [&] {
      double s = 0;
      for (int h = 1; h <= 8; ++h) s += std::exp(-std::ldexp(1.0, -h) * double(k));
      return s / 8;
    }();
    CHECK(alibi.near[k] == Approx(ali).margin(1e-14));
  }
  // Linear interpolation by 8 stretches the profile: linear(8k) = rope(k).
  for (std::size_t i = 0; i < linear.farDistance.size(); ++i) {
    const double k = linear.farDistance[i] / 8;
    CHECK(linear.far[i] == Approx((std::cos(k) + std::cos(k / 100)) / 2).margin(1e-12));
  }
  // Rotary combined: R_2 (1,0,..) · R_10 (0,1,..) = sin(2θ0 − 10θ0) = sin(−8), θ0 = 1.
  CHECK(rope.pairCombined == Approx(std::sin(-8.0)).margin(1e-14));
  CHECK(std::isnan(alibi.pairCombined));
  // Unseen pairs at 8 × 64: θ1·64 = 0.64 < 2π, so pair 1 (only) is past its trained
  // angles under plain RoPE and the paper's encoding; linear ×8 keeps it in range.
  CHECK(rope.unseenPairs == 1);
  CHECK(paper.unseenPairs == 1);
  CHECK(linear.unseenPairs == 0);
  CHECK(method(r, "yarn").unseenPairs == 0);
  CHECK(alibi.unseenPairs == -1);
  // Dynamic NTK equals plain RoPE up to the context.
  const auto& dyn = method(r, "dynamic");
  // (distance k needs k + 1 tokens: up to k = 63 the sequence fits the context of 64).
  for (std::size_t k = 0; k < 64; ++k) CHECK(dyn.near[k] == rope.near[k]);
  CHECK(dyn.near[64] != rope.near[64]);
  // YaRN's attention factor at factor 8.
  CHECK(method(r, "yarn").attentionFactor == Approx(0.1 * std::log(8.0) + 1).epsilon(1e-15));

  const json s = json::parse(summaryJson(r));
  REQUIRE(s["position_comparison"]["methods"].size() == 9);
  CHECK(s["position_comparison"]["methods"][8]["pair_combined"].is_null());
  CHECK(studyTable(r).find("positions today") != std::string::npos);
}

TEST_CASE("position comparison: CLI table, JSON, report figures and refused options",
          "[rope][study]") {
  test::TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  test::writeText(vec, "3 4\nblack 1 0 0 0\nbrown 0 1 0 0\ncat 1 1 0 0\n");
  const std::string dir = tmp.file("report");
  const auto r =
      test::runCli("-q study --vectors " + test::quote(vec) +
                   " --compare-positions --compare-context 128 --report " + test::quote(dir));
  REQUIRE(r.status == 0);
  CHECK(r.out.find("positions today") != std::string::npos);
  CHECK(std::filesystem::exists(dir + "/positions-near.svg"));
  CHECK(std::filesystem::exists(dir + "/positions-far.svg"));
  const json j = json::parse(test::readText(dir + "/results.json"));
  CHECK(j["position_comparison"]["context"] == 128);
  CHECK(j["position_comparison"]["methods"][1]["far"]["distance"].back().get<double>() == 1024);
  CHECK(test::readText(dir + "/index.html").find("unseen pairs") != std::string::npos);
  const auto bad = test::runCli("study --vectors " + test::quote(vec) +
                                " --compare-positions --compare-factor 0.5");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--compare-factor") != std::string::npos);
}

TEST_CASE("position comparison: real models at their own size, theta and context",
          "[rope][study]") {
  test::TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  // d = 4: a model rotating 4 columns fits; black and brown orthogonal unit vectors.
  test::writeText(vec, "3 4\nblack 1 0 0 0\nbrown 0 1 0 0\ncat 1 1 0 0\n");
  StudyOptions o;
  o.vectors = vec;
  o.scale = Scale::parse("none");
  o.comparePositions = true;
  // A linear x4 model of head 4, theta 100 (θ = 1, 1/10), context 16 -> 64.
  RopeConfig lin;
  lin.type = RopeType::Linear;
  lin.headDim = 4;
  lin.base = 100;
  lin.factor = 4;
  lin.maxPositionEmbeddings = 64;
  lin.originalMaxPositionEmbeddings = 16;
  // A model rotating more columns than the vectors have: no combined value.
  RopeConfig wide;
  wide.headDim = 8;
  o.compareModels = {{"lin", lin}, {"wide", wide}};
  const StudyResults r = runStudy(o);
  REQUIRE(r.positions.models.size() == 4);
  const ModelPositions& m = r.positions.models[0];
  const ModelPositions& u = r.positions.models[1];
  CHECK(m.name == "lin");
  CHECK(u.name == "lin unscaled");
  CHECK(m.rule == "linear");
  CHECK(u.rule == "default");
  CHECK(m.dim == 4);
  CHECK(m.context == 16);
  CHECK(m.maxPosition == 64);
  // Independent: mean_cos(k) = (cos(k θ0 / s) + cos(k θ1 / s)) / 2, θ = 1, 0.1.
  const auto meanCos = [](double k, double s) {
    return (std::cos(k / s) + std::cos(k / 10 / s)) / 2;
  };
  REQUIRE(m.farDistance.size() == m.far.size());
  CHECK(m.farDistance.back() == 8 * 64);
  for (std::size_t i = 0; i < m.far.size(); ++i) {
    CHECK(m.far[i] == Approx(meanCos(m.farDistance[i], 4)).margin(1e-14));
    CHECK(u.far[i] == Approx(meanCos(u.farDistance[i], 1)).margin(1e-14));
  }
  CHECK(m.pairPositional == Approx(meanCos(8, 4)).margin(1e-14));
  CHECK(m.atContext == Approx(meanCos(16, 4)).margin(1e-14));
  CHECK(m.atMax == Approx(meanCos(64, 4)).margin(1e-14));
  // black (1,0,0,0) at 2 turns to (cos 2t, sin 2t), brown (0,1,0,0) at 10 to
  // (-sin 10t, cos 10t), t = θ0 / s: their cosine is sin(2t - 10t) = -sin(8 θ0 / s) (the
  // second pair holds nothing).
  CHECK(m.pairCombined == Approx(-std::sin(8.0 / 4)).margin(1e-14));
  CHECK(u.pairCombined == Approx(-std::sin(8.0)).margin(1e-14));
  // Unseen at 64: pair 1 reached 16 / 10 = 1.6 rad in training (under one turn); scaled it
  // reaches 64 / 40 = 1.6 (not past), unscaled 6.4 (past); pair 0 turned in training.
  CHECK(m.unseenPairs == 0);
  CHECK(u.unseenPairs == 1);
  CHECK(std::isnan(r.positions.models[2].pairCombined));
  // The table, the JSON and the report's figure carry them.
  const std::string table = studyTable(r);
  CHECK(table.find("models, each at its own rotated size, theta and context") != std::string::npos);
  CHECK(table.find("lin unscaled") != std::string::npos);
  const json j = json::parse(summaryJson(r));
  CHECK(j["position_comparison"]["models"][0]["rope_type"] == "linear");
  CHECK(j["position_comparison"]["models"][0]["unseen_pairs"] == 0);
  // Models need the comparison.
  StudyOptions bad = o;
  bad.comparePositions = false;
  CHECK_THROWS_WITH(bad.validate(), Catch::Contains("need the position comparison"));
}

TEST_CASE("position comparison: study --rope-config adds the models and names a bad file",
          "[rope][study][cli]") {
  test::TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  test::writeText(vec, "3 4\nblack 1 0 0 0\nbrown 0 1 0 0\ncat 1 1 0 0\n");
  const std::string cfg = tmp.file("llama.json");
  test::writeText(cfg, R"({"head_dim": 4, "rope_theta": 100, "max_position_embeddings": 64,
                           "rope_scaling": {"rope_type": "linear", "factor": 4}})");
  const auto ok = test::runCli("-q study --vectors " + test::quote(vec) + " --rope-config " +
                               test::quote(cfg) + " --json");
  REQUIRE(ok.status == 0);
  const json j = json::parse(ok.out);
  REQUIRE(j["position_comparison"]["models"].size() == 2);
  CHECK(j["position_comparison"]["models"][0]["name"] == "llama");
  const std::string broken = tmp.file("broken.json");
  test::writeText(broken, R"({"head_dim": 4, "rope_scaling": {"rope_type": "linear"}})");
  const auto bad = test::runCli("-q study --vectors " + test::quote(vec) + " --rope-config " +
                                test::quote(broken));
  CHECK(bad.status != 0);
  CHECK(bad.err.find("broken.json") != std::string::npos);
  CHECK(bad.err.find("'factor' is missing") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
}
