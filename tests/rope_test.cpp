// Rotary scaling and ALiBi, against references written here from the published
// rules (RoFormer; position interpolation; NTK-aware scaling; dynamic NTK; YaRN,
// Peng et al. 2023, with transformers' pair-index ramp; Llama 3.1's three bands;
// LongRoPE's per-pair factors; ALiBi, Press et al., with BLOOM's rule for other
// head counts), not from posvec's code.
#include "posvec/rope.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "posvec/attention.hpp"
#include "posvec/error.hpp"
#include "test_util.hpp"

using namespace posvec;
using posvec::test::runCli;
using posvec::test::TempDir;

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// θ_i = base^(−2i/d) written as 2^(−(2i/d)·log2 base).
std::vector<double> refTheta(double base, std::size_t d) {
  std::vector<double> t;
  for (std::size_t i = 0; 2 * i < d; ++i)
    t.push_back(
        std::exp2(-(2.0 * static_cast<double>(i) / static_cast<double>(d)) * std::log2(base)));
  return t;
}

void requireClose(const std::vector<double>& got, const std::vector<double>& want,
                  double rel = 1e-12) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("pair " << i << ": " << got[i] << " vs " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= rel * std::abs(want[i]));
  }
}

// YaRN (transformers' form): the pair index at which the original context holds
// `rotations` full turns solves L = rotations · 2π · base^(2i/d).
double refYarnIndex(double rotations, double d, double base, double L) {
  return std::log(L / (kTwoPi * rotations)) / std::log(base) * d / 2;
}

std::vector<double> refYarn(double base, std::size_t d, double s, double L, double fast,
                            double slow, bool truncate) {
  double lo = refYarnIndex(fast, static_cast<double>(d), base, L);
  double hi = refYarnIndex(slow, static_cast<double>(d), base, L);
  if (truncate) {
    lo = std::floor(lo);
    hi = std::ceil(hi);
  }
  if (lo < 0) lo = 0;
  if (hi > static_cast<double>(d) - 1) hi = static_cast<double>(d) - 1;
  if (hi == lo) hi = lo + 0.001;
  std::vector<double> th = refTheta(base, d), out;
  for (std::size_t i = 0; i < th.size(); ++i) {
    double gamma = (static_cast<double>(i) - lo) / (hi - lo);  // 0: keep, 1: interpolate
    gamma = gamma < 0 ? 0 : gamma > 1 ? 1 : gamma;
    out.push_back(gamma * th[i] / s + (1 - gamma) * th[i]);
  }
  return out;
}

// Llama 3.1: wavelength λ = 2π/θ; λ < L/high kept, λ > L/low divided by the factor,
// between them a blend by (L/λ − low)/(high − low).
std::vector<double> refLlama3(double base, std::size_t d, double s, double L, double low,
                              double high, int bands[3]) {
  std::vector<double> out;
  bands[0] = bands[1] = bands[2] = 0;
  for (double th : refTheta(base, d)) {
    const double lambda = kTwoPi / th;
    if (lambda < L / high) {
      out.push_back(th);
      ++bands[0];
    } else if (lambda > L / low) {
      out.push_back(th / s);
      ++bands[2];
    } else {
      const double a = (L / lambda - low) / (high - low);
      out.push_back(a * th + (1 - a) * th / s);
      ++bands[1];
    }
  }
  return out;
}

RopeConfig cfg(RopeType type, std::size_t dim, double base, double factor = 1) {
  RopeConfig c;
  c.type = type;
  c.headDim = dim;
  c.base = base;
  c.factor = factor;
  return c;
}

std::string listJson(const std::vector<double>& v) {
  nlohmann::json j = v;
  return j.dump();
}

std::vector<double> phiShort() {
  std::vector<double> v;
  for (int i = 0; i < 48; ++i) v.push_back(1.0 + 0.01 * i);
  return v;
}
std::vector<double> phiLong() {
  std::vector<double> v;
  for (int i = 0; i < 48; ++i) v.push_back(1.0 + 0.9 * i);
  return v;
}

}  // namespace

TEST_CASE("rope default, linear and NTK frequencies match the published rules", "[rope]") {
  for (std::size_t d : {2u, 8u, 64u, 128u}) {
    const auto f = ropeFrequencies(cfg(RopeType::Default, d, 10000));
    CHECK(f.dim == d);
    CHECK(f.attentionFactor == 1.0);
    requireClose(f.invFreq, refTheta(10000, d));
  }
  std::vector<double> lin = refTheta(500000, 128);
  for (double& t : lin) t /= 4;
  requireClose(ropeFrequencies(cfg(RopeType::Linear, 128, 500000, 4)).invFreq, lin);
  // NTK-aware: base · s^(d/(d−2)).
  requireClose(ropeFrequencies(cfg(RopeType::Ntk, 64, 10000, 8)).invFreq,
               refTheta(10000 * std::pow(8.0, 64.0 / 62.0), 64));
  // The fastest pair is never scaled by NTK, the slowest by exactly 1/s.
  const auto ntk = ropeFrequencies(cfg(RopeType::Ntk, 64, 10000, 8)).invFreq;
  CHECK(ntk[0] == 1.0);
  CHECK(ntk.back() == Approx(refTheta(10000, 64).back() / 8).epsilon(1e-12));
}

TEST_CASE("rope dynamic NTK keeps the base up to max_position_embeddings and grows it beyond",
          "[rope]") {
  RopeConfig c = cfg(RopeType::Dynamic, 128, 10000, 2);
  c.maxPositionEmbeddings = 4096;
  for (std::int64_t L : {0, 100, 4096}) {
    c.seqLen = L;
    requireClose(ropeFrequencies(c).invFreq, refTheta(10000, 128));
  }
  for (std::int64_t L : {4097, 8192, 100000}) {
    c.seqLen = L;
    const double grown = 10000 * std::pow(2.0 * static_cast<double>(L) / 4096 - 1, 128.0 / 126.0);
    requireClose(ropeFrequencies(c).invFreq, refTheta(grown, 128));
  }
  // transformers grows the base from max_position_embeddings, whatever
  // original_max_position_embeddings says (a Llama 3.1 config at 65536 differs by up to 98 %
  // where the original context was taken); a note says it is not used.
  c.originalMaxPositionEmbeddings = 2048;
  c.seqLen = 4096;
  const RopeFrequencies kept = ropeFrequencies(c);
  requireClose(kept.invFreq, refTheta(10000, 128));
  REQUIRE(kept.notes.size() == 1);
  CHECK(kept.notes[0].find("original_max_position_embeddings (2048) is not used") !=
        std::string::npos);
  c.seqLen = 65536;
  requireClose(ropeFrequencies(c).invFreq,
               refTheta(10000 * std::pow(2.0 * 65536 / 4096 - 1, 128.0 / 126.0), 128));
}

TEST_CASE("rope yarn with an original context follows the chosen transformers version", "[rope]") {
  // Qwen2-style: factor 4 stated, contexts 32768 / 4096 (ratio 8).
  RopeConfig c = cfg(RopeType::Yarn, 128, 1e6, 4);
  c.maxPositionEmbeddings = 32768;
  c.originalMaxPositionEmbeddings = 4096;
  // transformers 5: the stated factor, the correction range from the original context.
  RopeFrequencies v5 = ropeFrequencies(c);
  requireClose(v5.invFreq, refYarn(1e6, 128, 4, 4096, 32, 1, true));
  CHECK(v5.attentionFactor == Approx(0.1 * std::log(4.0) + 1).epsilon(1e-14));
  REQUIRE(v5.notes.size() == 1);
  CHECK(v5.notes[0].find("5 uses factor 4, 4.50 to 4.x max_position_embeddings / original = 8") !=
        std::string::npos);
  CHECK(v5.notes[0].find("these frequencies follow 5") != std::string::npos);
  // 4.50: the ratio replaces the factor, in the frequencies and the attention factor.
  c.hfVersion = HfRules::V4_50;
  RopeFrequencies v450 = ropeFrequencies(c);
  requireClose(v450.invFreq, refYarn(1e6, 128, 8, 4096, 32, 1, true));
  CHECK(v450.attentionFactor == Approx(0.1 * std::log(8.0) + 1).epsilon(1e-14));
  // 4.47: the original context is ignored; the range comes from max_position_embeddings.
  c.hfVersion = HfRules::V4_47;
  RopeFrequencies v447 = ropeFrequencies(c);
  requireClose(v447.invFreq, refYarn(1e6, 128, 4, 32768, 32, 1, true));
  CHECK(v447.attentionFactor == Approx(0.1 * std::log(4.0) + 1).epsilon(1e-14));
  // The three differ (the issue's 85 % between 4.47 and the later rule).
  double most = 0;
  for (std::size_t i = 0; i < v5.invFreq.size(); ++i)
    most = std::max(most, std::abs(v447.invFreq[i] - v5.invFreq[i]) / v5.invFreq[i]);
  CHECK(most > 0.5);
  // Without an original context every version agrees and nothing is noted.
  c.originalMaxPositionEmbeddings = 0;
  for (HfRules v : {HfRules::V5, HfRules::V4_50, HfRules::V4_47}) {
    c.hfVersion = v;
    const RopeFrequencies f = ropeFrequencies(c);
    requireClose(f.invFreq, refYarn(1e6, 128, 4, 32768, 32, 1, true));
    CHECK(f.notes.empty());
  }
  // A config without a factor takes the ratio (transformers 5's rule).
  const RopeConfig derived = parseRopeConfig(
      R"({"head_dim": 128, "rope_theta": 1000000, "max_position_embeddings": 32768,
          "rope_scaling": {"rope_type": "yarn", "original_max_position_embeddings": 4096}})");
  CHECK(derived.factor == 8.0);
}

TEST_CASE("rope head size of DeepSeek, GPT-J and multimodal configs", "[rope]") {
  // DeepSeek-V3: 7168 / 128 = 56, but multi-head latent attention rotates qk_rope_head_dim.
  const RopeConfig ds = parseRopeConfig(
      R"({"hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64,
          "qk_nope_head_dim": 128, "rope_theta": 10000, "max_position_embeddings": 163840,
          "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096,
                           "beta_fast": 32, "beta_slow": 1, "mscale": 0.707,
                           "mscale_all_dim": 0.707}})");
  CHECK(ds.rotaryDim() == 64);
  const RopeFrequencies f = ropeFrequencies(ds);
  requireClose(f.invFreq, refYarn(10000, 64, 40, 4096, 32, 1, true));
  CHECK(f.attentionFactor == 1.0);  // mscale equal to mscale_all_dim
  // GPT-J states the rotated size: n_embd 4096 / n_head 16 = 256, rotary_dim 64.
  const RopeConfig gptj =
      parseRopeConfig(R"({"n_embd": 4096, "n_head": 16, "rotary_dim": 64, "n_positions": 2048})");
  CHECK(gptj.rotaryDim() == 64);
  CHECK(gptj.maxPositionEmbeddings == 2048);
  requireClose(ropeFrequencies(gptj).invFreq, refTheta(10000, 64));
  // A size whose share of the head does not survive the round trip exactly.
  for (int r = 2; r <= 80; r += 2) {
    const RopeConfig c = parseRopeConfig(R"({"n_embd": 2560, "n_head": 32, "rotary_dim": )" +
                                         std::to_string(r) + "}");
    CHECK(c.rotaryDim() == static_cast<std::size_t>(r));
  }
  CHECK_THROWS_WITH(parseRopeConfig(R"({"n_embd": 2560, "n_head": 32, "rotary_dim": 82})"),
                    Catch::Contains("'rotary_dim' (82) must be at most the head size (80)"));
  // Gemma 3 keeps its language model in text_config, with a second base for the
  // sliding-window layers.
  const RopeConfig gemma = parseRopeConfig(
      R"({"model_type": "gemma3", "text_config": {"head_dim": 256, "rope_theta": 1000000,
          "rope_local_base_freq": 10000, "max_position_embeddings": 131072,
          "rope_scaling": {"rope_type": "linear", "factor": 8}}})");
  std::vector<double> global = refTheta(1e6, 256);
  for (double& t : global) t /= 8;
  requireClose(ropeFrequencies(gemma).invFreq, global);
  const auto local = ropeLocalFrequencies(gemma);
  REQUIRE(local);
  requireClose(local->invFreq, refTheta(10000, 256));
  CHECK_FALSE(ropeLocalFrequencies(cfg(RopeType::Default, 64, 10000)));
}

TEST_CASE("rope longrope refuses an original context whose logarithm is zero", "[rope]") {
  RopeConfig c = cfg(RopeType::LongRope, 96, 10000);
  c.shortFactor = phiShort();
  c.longFactor = phiLong();
  c.maxPositionEmbeddings = 131072;
  c.originalMaxPositionEmbeddings = 1;
  CHECK_THROWS_WITH(ropeFrequencies(c), Catch::Contains("original context of at least 2"));
  c.originalMaxPositionEmbeddings = 4096;
  c.factor = 4;  // stated, but transformers takes the contexts' ratio: noted
  const RopeFrequencies f = ropeFrequencies(c);
  CHECK(f.attentionFactor == Approx(std::sqrt(1 + std::log(32.0) / std::log(4096.0))));
  REQUIRE(f.notes.size() == 1);
  CHECK(f.notes[0].find("rope_scaling.factor 4 is not used") != std::string::npos);
}

TEST_CASE("rope YaRN ramp, clamps at both ends and attention factor", "[rope]") {
  RopeConfig c = cfg(RopeType::Yarn, 128, 1000000, 4);
  c.maxPositionEmbeddings = 32768;
  auto f = ropeFrequencies(c);
  requireClose(f.invFreq, refYarn(1000000, 128, 4, 32768, 32, 1, true));
  CHECK(f.attentionFactor == Approx(0.1 * std::log(4.0) + 1).epsilon(1e-15));
  // Interior ramp: the fastest pairs kept, the slowest interpolated.
  CHECK(f.invFreq[0] == 1.0);
  CHECK(f.invFreq.back() == Approx(refTheta(1000000, 128).back() / 4).epsilon(1e-12));
  // Low clamp: beta_fast so large the start index is negative (clamped to 0), so
  // even pair 1 is partly interpolated.
  c.betaFast = 1e9;
  f = ropeFrequencies(c);
  REQUIRE(refYarnIndex(1e9, 128, 1000000, 32768) < 0);
  requireClose(f.invFreq, refYarn(1000000, 128, 4, 32768, 1e9, 1, true));
  CHECK(f.invFreq[1] < refTheta(1000000, 128)[1]);
  // High clamp: beta_slow so small the end index exceeds d − 1 (clamped to d − 1).
  c.betaFast = 32;
  c.betaSlow = 1e-9;
  REQUIRE(refYarnIndex(1e-9, 128, 1000000, 32768) > 127);
  f = ropeFrequencies(c);
  requireClose(f.invFreq, refYarn(1000000, 128, 4, 32768, 32, 1e-9, true));
  // Without truncation, and with an explicit attention factor.
  c.betaSlow = 1;
  c.truncate = false;
  c.attentionFactor = 1.25;
  f = ropeFrequencies(c);
  requireClose(f.invFreq, refYarn(1000000, 128, 4, 32768, 32, 1, false));
  CHECK(f.attentionFactor == 1.25);
  // DeepSeek's mscale pair: (0.1·1·ln 4 + 1) / (0.1·0.5·ln 4 + 1) when no attention_factor.
  RopeConfig ds = parseRopeConfig(R"({"head_dim": 64, "max_position_embeddings": 4096,
    "rope_scaling": {"type": "yarn", "factor": 4, "mscale": 1, "mscale_all_dim": 0.5}})");
  CHECK(ropeFrequencies(ds).attentionFactor ==
        Approx((0.1 * std::log(4.0) + 1) / (0.05 * std::log(4.0) + 1)).epsilon(1e-15));
  // Equal ends: a step instead of a division by zero.
  c.truncate = true;
  c.betaFast = c.betaSlow = 2;
  f = ropeFrequencies(c);
  requireClose(f.invFreq, refYarn(1000000, 128, 4, 32768, 2, 2, true));
}

TEST_CASE("rope llama3 has its three bands", "[rope]") {
  RopeConfig c = cfg(RopeType::Llama3, 128, 500000, 8);
  c.originalMaxPositionEmbeddings = 8192;
  c.maxPositionEmbeddings = 131072;
  c.lowFreqFactor = 1;
  c.highFreqFactor = 4;
  int bands[3];
  const auto want = refLlama3(500000, 128, 8, 8192, 1, 4, bands);
  requireClose(ropeFrequencies(c).invFreq, want);
  // Every band is populated for Llama 3.1's own numbers.
  CHECK(bands[0] > 0);
  CHECK(bands[1] > 0);
  CHECK(bands[2] > 0);
  CHECK(ropeFrequencies(c).attentionFactor == 1.0);
}

TEST_CASE("rope LongRoPE picks short or long factors and derives the attention factor", "[rope]") {
  RopeConfig c = cfg(RopeType::LongRope, 96, 10000);
  c.maxPositionEmbeddings = 131072;
  c.originalMaxPositionEmbeddings = 4096;
  c.shortFactor = phiShort();
  c.longFactor = phiLong();
  const auto th = refTheta(10000, 96);
  std::vector<double> s, l;
  for (std::size_t i = 0; i < th.size(); ++i) {
    s.push_back(th[i] / c.shortFactor[i]);
    l.push_back(th[i] / c.longFactor[i]);
  }
  const double af = std::sqrt(1 + std::log(32.0) / std::log(4096.0));
  auto f = ropeFrequencies(c);
  requireClose(f.invFreq, s);
  CHECK(f.attentionFactor == Approx(af).epsilon(1e-15));
  c.seqLen = 4096;
  requireClose(ropeFrequencies(c).invFreq, s);
  c.seqLen = 4097;
  requireClose(ropeFrequencies(c).invFreq, l);
  c.shortFactor.pop_back();
  REQUIRE_THROWS_WITH(ropeFrequencies(c), Catch::Contains("short_factor"));
}

TEST_CASE("rope partial rotary factor rotates the first share of the head", "[rope]") {
  RopeConfig c = cfg(RopeType::Default, 96, 10000);
  c.partialRotaryFactor = 0.25;
  const auto f = ropeFrequencies(c);
  CHECK(f.dim == 24);
  requireClose(f.invFreq, refTheta(10000, 24));
  c.partialRotaryFactor = 0.5;
  c.type = RopeType::Yarn;
  c.factor = 2;
  requireClose(ropeFrequencies(c).invFreq, refYarn(10000, 48, 2, 2048, 32, 1, true));
}

TEST_CASE("rope configs of five model families", "[rope]") {
  SECTION("Llama 3.1 8B") {
    const RopeConfig c = parseRopeConfig(R"({"architectures": ["LlamaForCausalLM"],
      "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
      "max_position_embeddings": 131072, "rope_theta": 500000.0,
      "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 8192, "rope_type": "llama3"}})");
    CHECK(c.type == RopeType::Llama3);
    int bands[3];
    requireClose(ropeFrequencies(c).invFreq, refLlama3(500000, 128, 8, 8192, 1, 4, bands));
  }
  SECTION("Qwen2 7B with YaRN (older type key)") {
    const RopeConfig c = parseRopeConfig(R"({"architectures": ["Qwen2ForCausalLM"],
      "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
      "max_position_embeddings": 32768, "rope_theta": 1000000.0,
      "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}})");
    CHECK(c.type == RopeType::Yarn);
    const auto f = ropeFrequencies(c);
    requireClose(f.invFreq, refYarn(1000000, 128, 4, 32768, 32, 1, true));
    CHECK(f.attentionFactor == Approx(1 + 0.1 * std::log(4.0)).epsilon(1e-15));
  }
  SECTION("Phi-3 mini 128k with LongRoPE") {
    const RopeConfig c = parseRopeConfig(
        R"({"architectures": ["Phi3ForCausalLM"], "hidden_size": 3072, "num_attention_heads": 32,
        "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0, "rope_scaling": {"long_factor": )" +
        listJson(phiLong()) + R"(, "short_factor": )" + listJson(phiShort()) +
        R"(, "type": "longrope"}})");
    CHECK(c.type == RopeType::LongRope);
    CHECK(c.rotaryDim() == 96);
    CHECK(ropeFrequencies(c).attentionFactor ==
          Approx(std::sqrt(1 + std::log(32.0) / std::log(4096.0))).epsilon(1e-15));
  }
  SECTION("GPT-NeoX 20B with partial rotary") {
    const RopeConfig c = parseRopeConfig(R"({"architectures": ["GPTNeoXForCausalLM"],
      "hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25,
      "rotary_emb_base": 10000, "max_position_embeddings": 2048})");
    CHECK(c.type == RopeType::Default);
    const auto f = ropeFrequencies(c);
    CHECK(f.dim == 24);
    requireClose(f.invFreq, refTheta(10000, 24));
  }
  SECTION("InternLM2 with dynamic NTK") {
    RopeConfig c = parseRopeConfig(R"({"architectures": ["InternLM2ForCausalLM"],
      "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 32768,
      "rope_theta": 1000000, "rope_scaling": {"type": "dynamic", "factor": 2.0}})");
    CHECK(c.type == RopeType::Dynamic);
    requireClose(ropeFrequencies(c).invFreq, refTheta(1000000, 128));
    c.seqLen = 65536;
    requireClose(ropeFrequencies(c).invFreq, refTheta(1000000 * std::pow(3.0, 128.0 / 126.0), 128));
  }
  SECTION("head_dim and rope_type beside type") {
    const RopeConfig c = parseRopeConfig(R"({"head_dim": 64, "hidden_size": 4096,
      "num_attention_heads": 32, "rope_scaling": {"rope_type": "linear", "factor": 2}})");
    CHECK(c.headDim == 64);
    CHECK(c.type == RopeType::Linear);
    CHECK(c.base == 10000.0);
  }
}

TEST_CASE("rope config errors name the key", "[rope]") {
  REQUIRE_THROWS_WITH(parseRopeConfig(R"({"num_attention_heads": 32})"),
                      Catch::Contains("'hidden_size'"));
  REQUIRE_THROWS_WITH(parseRopeConfig(R"({"rope_theta": 10000})"), Catch::Contains("'head_dim'"));
  REQUIRE_THROWS_WITH(parseRopeConfig(R"({"head_dim": 64, "rope_scaling": {"factor": 2}})"),
                      Catch::Contains("'rope_type'"));
  REQUIRE_THROWS_WITH(parseRopeConfig(R"({"head_dim": 64, "rope_scaling": {"type": "linear"}})"),
                      Catch::Contains("'factor' is missing"));
  REQUIRE_THROWS_WITH(
      parseRopeConfig(R"({"head_dim": 64, "rope_scaling": {"type": "linear", "factor": 0.5}})"),
      Catch::Contains("factor must be at least 1"));
  REQUIRE_THROWS_WITH(
      parseRopeConfig(R"({"head_dim": 64, "rope_scaling": {"type": "xpos", "factor": 2}})"),
      Catch::Contains("unknown rope_type 'xpos'"));
  REQUIRE_THROWS_WITH(
      parseRopeConfig(R"({"head_dim": 64, "rope_scaling": {"rope_type": "llama3", "factor": 8,
                          "low_freq_factor": 1, "high_freq_factor": 4}})"),
      Catch::Contains("'original_max_position_embeddings' is missing"));
  REQUIRE_THROWS_WITH(parseRopeConfig(R"({"head_dim": 64, "rope_scaling": {"type": "longrope"}})"),
                      Catch::Contains("'short_factor' is missing"));
  REQUIRE_THROWS_WITH(parseRopeConfig(R"({"head_dim": "64"})"),
                      Catch::Contains("'head_dim' must be a number"));
  REQUIRE_THROWS_AS(parseRopeConfig("{not json"), FormatError);
  // Every message is one line.
  try {
    parseRopeConfig(R"({"head_dim": 63})");
    FAIL("odd rotary size accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
    CHECK(std::string(e.what()).find("even") != std::string::npos);
  }
}

TEST_CASE("rope profile: mean cosine and RoFormer's decay bound", "[rope]") {
  const std::vector<double> th = refTheta(10000, 64);
  const auto p = ropeProfile(th, {0, 1, 100, 8192});
  REQUIRE(p.size() == 4);
  CHECK(p[0].meanCos == Approx(1.0).epsilon(1e-15));
  for (const auto& pt : p) {
    double c = 0;
    std::complex<double> s = 0;
    double b = 0;
    for (double t : th) {
      c += std::cos(pt.distance * t);
      s += std::exp(std::complex<double>(0, pt.distance * t));
      b += std::abs(s);
    }
    CHECK(pt.meanCos == Approx(c / 32).margin(1e-14));
    CHECK(pt.bound == Approx(b / 32).epsilon(1e-12));
  }
  // At distance 0 the bound is (1/n)·Σ_j j = (n + 1)/2.
  CHECK(p[0].bound == Approx(16.5).epsilon(1e-15));
  // Equal to the sinusoidal encoding's cosine of two positions (test_util's closed form).
  CHECK(ropeProfile(refTheta(10000, 512), {8})[0].meanCos ==
        Approx(posvec::test::peCosineClosedForm(8, 512, 2)).margin(1e-12));
  REQUIRE_THROWS_AS(ropeProfile(th, {-1}), ConfigError);
}

TEST_CASE("rope profile work is bounded", "[rope]") {
  // Before: 2^19 frequencies at 2,000 distances ran 32 s. 2^26 terms is the bound.
  const std::vector<double> freq(std::size_t{1} << 19, 1e-3);
  CHECK_THROWS_WITH(ropeProfile(freq, std::vector<double>(2000, 1.0)),
                    Catch::Contains("2000 distances over 524288 frequencies") &&
                        Catch::Contains("more than 67108864 (2^26)"));
  CHECK(ropeProfile(freq, std::vector<double>(128, 1.0)).size() == 128);  // 2^26 exactly
  CHECK_THROWS_AS(ropeProfile(freq, std::vector<double>(129, 1.0)), ConfigError);
}

TEST_CASE("alibi slopes for power-of-two and other head counts", "[rope][alibi]") {
  // Press et al.: the geometric sequence starting at 2^(−8/H) with that ratio.
  const auto s8 = alibiSlopes(8);
  for (int h = 0; h < 8; ++h) CHECK(s8[static_cast<std::size_t>(h)] == std::ldexp(1.0, -(h + 1)));
  const auto s16 = alibiSlopes(16);
  for (int h = 0; h < 16; ++h)
    CHECK(s16[static_cast<std::size_t>(h)] == Approx(std::pow(2.0, -0.5 * (h + 1))).epsilon(1e-15));
  // 12 heads: the 8 of H = 8, then every other slope of H = 16 (2^-0.5, 2^-1.5, ...).
  const auto s12 = alibiSlopes(12);
  REQUIRE(s12.size() == 12);
  for (int h = 0; h < 8; ++h) CHECK(s12[static_cast<std::size_t>(h)] == std::ldexp(1.0, -(h + 1)));
  for (int e = 0; e < 4; ++e)
    CHECK(s12[static_cast<std::size_t>(8 + e)] == Approx(std::pow(2.0, -0.5 - e)).epsilon(1e-15));
  CHECK(alibiSlopes(1) == std::vector<double>{1.0 / 256});
  REQUIRE_THROWS_AS(alibiSlopes(0), ConfigError);
  const MatrixD b = alibiBias(0.5, 3, true);
  CHECK(b(2, 0) == -1.0);
  CHECK(b(1, 1) == 0.0);
  CHECK(b(0, 2) == -std::numeric_limits<double>::infinity());
  CHECK(alibiBias(0.5, 3, false)(0, 2) == -1.0);
}

TEST_CASE("attention with ALiBi adds minus slope times distance to each head's scores",
          "[rope][alibi]") {
  const std::size_t T = 5, H = 4, dk = 2;
  MatrixD x(static_cast<Eigen::Index>(T), static_cast<Eigen::Index>(H * dk));
  for (Eigen::Index i = 0; i < x.size(); ++i)
    x.data()[i] = std::sin(0.7 * static_cast<double>(i) + 0.3);
  for (bool causal : {false, true}) {
    AttentionOptions o;
    o.heads = H;
    o.positional = PositionMode::Alibi;
    o.causal = causal;
    const auto r = Attention(H * dk, o).compute(x);
    const auto slopes = alibiSlopes(H);
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t i = 0; i < T; ++i) {
        std::vector<double> e(T, 0.0);
        double sum = 0;
        for (std::size_t j = 0; j < T; ++j) {
          if (causal && j > i) continue;
          double s = 0;
          for (std::size_t c = 0; c < dk; ++c)
            s += x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(h * dk + c)) *
                 x(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(h * dk + c));
          e[j] = std::exp(s / std::sqrt(2.0) - slopes[h] * std::abs(double(i) - double(j)));
          sum += e[j];
        }
        for (std::size_t j = 0; j < T; ++j)
          CHECK(r.weights[h](static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) ==
                Approx(e[j] / sum).margin(1e-14));
      }
    }
  }
}

TEST_CASE("attention with a rotary configuration rotates the first columns and scales cos and sin",
          "[rope]") {
  // One head of 8, partial rotary 0.5 (4 columns, 2 pairs), YaRN's attention factor.
  RopeConfig rc = cfg(RopeType::Yarn, 8, 10000, 4);
  rc.partialRotaryFactor = 0.5;
  rc.maxPositionEmbeddings = 16;
  const auto th = refYarn(10000, 4, 4, 16, 32, 1, true);
  const double af = 1 + 0.1 * std::log(4.0);
  const std::size_t T = 4;
  MatrixD x(4, 8);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = std::cos(1.3 * static_cast<double>(i));
  for (bool halves : {false, true}) {
    AttentionOptions o;
    o.positional = PositionMode::Rotary;
    o.rotaryEncoding = halves ? Encoding::Concatenated : Encoding::Interleaved;
    o.rope = rc;
    const auto r = Attention(8, o).compute(x, 3);
    // Reference: rotate (a, b) by (3 + t)·θ_p with cos, sin times af.
    MatrixD q = x;
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t p = 0; p < 2; ++p) {
        const std::size_t a = halves ? p : 2 * p, b = halves ? p + 2 : 2 * p + 1;
        const double ang = static_cast<double>(3 + t) * th[p];
        const double xa = x(long(t), long(a)), xb = x(long(t), long(b));
        q(long(t), long(a)) = af * (xa * std::cos(ang) - xb * std::sin(ang));
        q(long(t), long(b)) = af * (xb * std::cos(ang) + xa * std::sin(ang));
      }
    const MatrixD s = q * q.transpose() / std::sqrt(8.0);
    for (std::size_t i = 0; i < T; ++i) {
      double sum = 0;
      for (std::size_t j = 0; j < T; ++j) sum += std::exp(s(long(i), long(j)));
      for (std::size_t j = 0; j < T; ++j)
        CHECK(r.weights[0](long(i), long(j)) ==
              Approx(std::exp(s(long(i), long(j))) / sum).margin(1e-13));
    }
  }
  AttentionOptions bad;
  bad.positional = PositionMode::Rotary;
  bad.rope = rc;
  REQUIRE_THROWS_WITH(Attention(16, bad), Catch::Contains("heads of 8 columns"));
}

TEST_CASE("rope cli: config.json, options, profile and one-line errors", "[rope][cli]") {
  TempDir tmp;
  const std::string cfgPath = tmp.file("config.json");
  posvec::test::writeText(cfgPath, R"({"hidden_size": 4096, "num_attention_heads": 32,
    "max_position_embeddings": 131072, "rope_theta": 500000.0,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"}})");
  const auto ok =
      runCli("rope " + posvec::test::quote(cfgPath) + " --json --profile 1,100,8192,65536");
  REQUIRE(ok.status == 0);
  const auto j = nlohmann::json::parse(ok.out);
  CHECK(j["rope_type"] == "llama3");
  CHECK(j["dim"] == 128);
  CHECK(j["attention_factor"] == 1.0);
  int bands[3];
  requireClose(j["inv_freq"].get<std::vector<double>>(),
               refLlama3(500000, 128, 8, 8192, 1, 4, bands));
  REQUIRE(j["profile"].size() == 4);
  CHECK(j["profile"][1]["distance"] == 100.0);
  // Options instead of a file, with an option overriding the file.
  const auto opt =
      runCli("rope --type yarn --dim 64 --base 10000 --factor 4 --max-position 4096 --json");
  REQUIRE(opt.status == 0);
  requireClose(nlohmann::json::parse(opt.out)["inv_freq"].get<std::vector<double>>(),
               refYarn(10000, 64, 4, 4096, 32, 1, true));
  const auto over = runCli("rope " + posvec::test::quote(cfgPath) + " --factor 16 --json");
  REQUIRE(over.status == 0);
  requireClose(nlohmann::json::parse(over.out)["inv_freq"].get<std::vector<double>>(),
               refLlama3(500000, 128, 16, 8192, 1, 4, bands));
  // tsv by default, npy with the profile beside it.
  const auto tsv = runCli("rope --dim 8");
  REQUIRE(tsv.status == 0);
  CHECK(tsv.out.find("pair\tinv_freq\twavelength\n0\t1\t6.283185307179586\n") != std::string::npos);
  REQUIRE(
      runCli("rope --dim 8 --profile 0,1 -o " + posvec::test::quote(tmp.file("f.npy"))).status ==
      0);
  CHECK(std::filesystem::exists(tmp.file("f.profile.npy")));
  // Errors: one line, naming the key or the option.
  auto oneLine = [](const posvec::test::RunResult& e, const std::string& what) {
    CHECK(e.status != 0);
    CHECK(e.err.find(what) != std::string::npos);
    CHECK(std::count(e.err.begin(), e.err.end(), '\n') == 1);
  };
  oneLine(runCli("rope --type linear --factor 0.5"), "--factor");
  oneLine(runCli("rope --type rotary2"), "--type");
  posvec::test::writeText(
      tmp.file("bad.json"),
      R"({"hidden_size": 4096, "rope_scaling": {"type": "yarn", "factor": 4}})");
  oneLine(runCli("rope " + posvec::test::quote(tmp.file("bad.json"))), "'num_attention_heads'");
  // A file without end is refused at the limit (it was read until memory ran out), by
  // rope and by attend's --rope-config alike.
  const std::string bounded =
      "'/dev/zero' holds more than 16 MiB, more than a model configuration may";
  oneLine(runCli("rope /dev/zero"), bounded);
  posvec::test::writeText(tmp.file("v.txt"), "2 4\na 1 0 0 0\nb 0 1 0 0\n");
  oneLine(runCli("attend " + posvec::test::quote(tmp.file("v.txt")) +
                 " --sentence 'a b' --positional rotary --rope-config /dev/zero"),
          bounded);
  const auto help = runCli("rope --help");
  CHECK(help.out.find("beta_fast") != std::string::npos);
  CHECK(help.out.find("32") != std::string::npos);
}

TEST_CASE("attend cli: alibi and scaled rotary", "[rope][cli]") {
  TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  posvec::test::writeText(vec,
                          "4 8\nthe 1 0 0 0 1 0 0 0\ncat 0 1 0 0 0 1 0 0\nsat 0 0 1 0 0 0 1 0\n"
                          "down 0 0 0 1 0 0 0 1\n");
  const auto a = runCli(
      "attend " + posvec::test::quote(vec) +
      " -s 'the cat sat down' --heads 2 --positional alibi --causal --scale none --format json");
  REQUIRE(a.status == 0);
  const auto j = nlohmann::json::parse(a.out);
  CHECK(j["alibi_slopes"].get<std::vector<double>>() == std::vector<double>{1.0 / 16, 1.0 / 256});
  // Head 0 (slope 1/16), query 3 ("down"), keys 0..3: scores q·k/2 (each word's half-vector is a
  // unit basis vector, so only k = 3 scores 1/2), minus slope·distance.
  double e[4], sum = 0;
  for (int k = 0; k < 4; ++k) sum += e[k] = std::exp((k == 3 ? 0.5 : 0.0) - (3 - k) / 16.0);
  for (int k = 0; k < 4; ++k)
    CHECK(j["sequences"][0]["weights"][0][3][k].get<double>() == Approx(e[k] / sum).margin(1e-12));
  CHECK(j["sequences"][0]["weights"][0][0][1].get<double>() == 0.0);
  const auto ry = runCli("attend " + posvec::test::quote(vec) +
                         " -s 'the cat sat down' --positional rotary --type yarn --factor 4 "
                         "--max-position 2 --format json");
  REQUIRE(ry.status == 0);
  const auto k = nlohmann::json::parse(ry.out);
  CHECK(k["rope_type"] == "yarn");
  CHECK(k["attention_factor"].get<double>() == Approx(1 + 0.1 * std::log(4.0)).epsilon(1e-15));
  CHECK(k["base"].get<double>() == 10000.0);
  // A config's rope_theta is the base the frequencies use, and the one reported; --json is
  // --format json.
  TempDir dir;
  const std::string config = (dir.path() / "llama31.json").string();
  posvec::test::writeText(config,
                          R"({"hidden_size": 64, "num_attention_heads": 2, "rope_theta": 500000,
                              "max_position_embeddings": 131072, "rope_scaling": {"rope_type":
                              "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4,
                              "original_max_position_embeddings": 8192}})");
  const auto rl = runCli("attend " + posvec::test::quote(vec) +
                         " -s 'the cat sat down' --positional rotary --rope-config " +
                         posvec::test::quote(config) + " --json");
  REQUIRE(rl.status == 0);
  const auto l = nlohmann::json::parse(rl.out);
  CHECK(l["base"].get<double>() == 500000.0);
  CHECK(l["inv_freq"][1].get<double>() == Approx(std::pow(500000.0, -2.0 / static_cast<double>(
                                                                             2 * l["inv_freq"].size())))
                                              .epsilon(1e-14));
  const auto bad =
      runCli("attend " + posvec::test::quote(vec) + " -s 'the cat' --type yarn --factor 4");
  CHECK(bad.status != 0);
  CHECK(bad.err.find("--positional rotary") != std::string::npos);
}

TEST_CASE("rope partial rotary factor with a non-integer product truncates as transformers does",
          "[rope]") {
  // transformers: dim = int(head_dim * partial_rotary_factor), the float64 product
  // truncated, then inv_freq = 1 / base^(arange(0, dim, 2) / dim). The expected sizes
  // below are Python's int(h * f); the spot values 1 / base ** (i / dim) in float64.
  struct Case {
    std::size_t head;
    double factor;
    std::size_t dim;  // int(head * factor) in Python
  };
  const Case even[] = {
      {128, 0.3, 38},   // 38.4
      {256, 0.15, 38},  // 38.4
      {64, 0.7, 44},    // 44.8
      {128, 0.35, 44},  // 44.8
      {96, 0.3, 28},    // 28.799999999999997
      {100, 0.29, 28},  // 28.999999999999996: the product falls short of 29 in float64
      {100, 0.57, 56},  // 56.99999999999999
      {200, 0.07, 14},  // 14.000000000000002
      {80, 0.45, 36},   // 36.0
  };
  for (const Case& k : even) {
    INFO("head " << k.head << " x " << k.factor);
    RopeConfig c = cfg(RopeType::Default, k.head, 10000);
    c.partialRotaryFactor = k.factor;
    CHECK(c.rotaryDim() == k.dim);
    const auto f = ropeFrequencies(c);
    CHECK(f.dim == k.dim);
    REQUIRE(f.invFreq.size() == k.dim / 2);
    requireClose(f.invFreq, refTheta(10000, k.dim));
  }
  // Spot values of transformers' rule computed by Python in float64.
  auto spot = [](std::size_t head, double factor, double base, std::size_t i) {
    RopeConfig c = cfg(RopeType::Default, head, base);
    c.partialRotaryFactor = factor;
    return ropeFrequencies(c).invFreq.at(i);
  };
  CHECK(spot(128, 0.3, 10000, 1) == Approx(0.6158482110660264).epsilon(1e-13));
  CHECK(spot(128, 0.3, 10000, 18) == Approx(0.00016237767391887227).epsilon(1e-13));
  CHECK(spot(100, 0.29, 10000, 1) == Approx(0.5179474679231212).epsilon(1e-13));
  CHECK(spot(100, 0.29, 10000, 13) == Approx(0.00019306977288832496).epsilon(1e-13));
  CHECK(spot(64, 0.7, 500000, 1) == Approx(0.5507517793056103).epsilon(1e-13));
  CHECK(spot(64, 0.7, 500000, 21) == Approx(3.631399979354775e-06).epsilon(1e-13));
  CHECK(spot(100, 0.57, 1e6, 1) == Approx(0.6105402296585329).epsilon(1e-13));
  CHECK(spot(100, 0.57, 1e6, 27) == Approx(1.6378937069540637e-06).epsilon(1e-13));

  // The scaled rules use the truncated size too: NTK's exponent d/(d-2), YaRN's
  // correction range, LongRoPE's one factor per rotated pair.
  RopeConfig ntk = cfg(RopeType::Ntk, 128, 10000, 4);
  ntk.partialRotaryFactor = 0.3;
  const auto n = ropeFrequencies(ntk).invFreq;
  requireClose(n, refTheta(10000 * std::pow(4.0, 38.0 / 36.0), 38));
  CHECK(n.at(1) == Approx(0.5701982852333997).epsilon(1e-13));
  CHECK(n.at(18) == Approx(4.059441847971807e-05).epsilon(1e-13));
  RopeConfig yarn = cfg(RopeType::Yarn, 128, 10000, 4);
  yarn.partialRotaryFactor = 0.3;
  requireClose(ropeFrequencies(yarn).invFreq, refYarn(10000, 38, 4, 2048, 32, 1, true));
  RopeConfig longrope = cfg(RopeType::LongRope, 128, 10000);
  longrope.partialRotaryFactor = 0.3;
  longrope.shortFactor.assign(19, 2.0);
  longrope.longFactor.assign(19, 3.0);
  std::vector<double> halved = refTheta(10000, 38);
  for (double& t : halved) t /= 2;
  requireClose(ropeFrequencies(longrope).invFreq, halved);
  longrope.shortFactor.assign(20, 2.0);
  CHECK_THROWS_WITH(ropeFrequencies(longrope), Catch::Contains("one factor per rotated pair (19)"));

  // An odd truncated size: transformers' arange(0, dim, 2) would give ceil(dim/2)
  // frequencies for dim columns (and its YaRN and LongRoPE would not broadcast);
  // posvec refuses the size, naming it.
  const Case odd[] = {
      {96, 0.33, 31},   // 31.68
      {72, 0.35, 25},   // 25.2
      {64, 0.33, 21},   // 21.12
      {100, 0.58, 57},  // 57.99999999999999: float64 falls short of 58
  };
  for (const Case& k : odd) {
    INFO("head " << k.head << " x " << k.factor);
    RopeConfig c = cfg(RopeType::Default, k.head, 10000);
    c.partialRotaryFactor = k.factor;
    CHECK(c.rotaryDim() == k.dim);
    CHECK_THROWS_WITH(ropeFrequencies(c),
                      Catch::Contains("(" + std::to_string(k.dim) + ") must be even"));
  }

  // From a config.json: head size by integer division first (hidden_size //
  // num_attention_heads), then the product; GPT-NeoX's rotary_pct alike.
  const RopeConfig fromHidden = parseRopeConfig(
      R"({"hidden_size": 4100, "num_attention_heads": 32, "partial_rotary_factor": 0.3})");
  CHECK(fromHidden.headDim == 128);
  CHECK(ropeFrequencies(fromHidden).dim == 38);
  const RopeConfig neox =
      parseRopeConfig(R"({"hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.3})");
  CHECK(ropeFrequencies(neox).dim == 28);
  CHECK_THROWS_WITH(parseRopeConfig(R"({"head_dim": 100, "partial_rotary_factor": 0.58})"),
                    Catch::Contains("(57) must be even"));
  // And from the command line.
  const auto cli = runCli("rope --dim 128 --partial-rotary-factor 0.3 --json");
  REQUIRE(cli.status == 0);
  const auto j = nlohmann::json::parse(cli.out);
  CHECK(j["dim"] == 38);
  requireClose(j["inv_freq"].get<std::vector<double>>(), refTheta(10000, 38));
}

TEST_CASE("rope refuses settings whose frequencies overflow or underflow", "[rope]") {
  // NTK at d 4: base · factor^(4/2) = 1e4 · 1e600 overflows, so pair 1's θ = base'^(-1/2)
  // is 0; a longrope short factor of 1e-320 makes pair 0's θ = 1 / 1e-320 infinite.
  RopeConfig ntk = cfg(RopeType::Ntk, 4, 10000, 1e300);
  CHECK_THROWS_WITH(ropeFrequencies(ntk), Catch::Contains("rotation pair 1 the frequency 0") &&
                                              Catch::Contains("too extreme for the ntk rule"));
  RopeConfig lr = cfg(RopeType::LongRope, 4, 10000);
  lr.shortFactor = {1e-320, 1};
  lr.longFactor = {1, 1};
  lr.maxPositionEmbeddings = 100;
  lr.originalMaxPositionEmbeddings = 10;
  CHECK_THROWS_WITH(ropeFrequencies(lr), Catch::Contains("rotation pair 0 the frequency inf"));
  // The CLI names the option, in one line.
  const auto r = runCli("rope --type ntk --factor 1e300 --dim 4");
  CHECK(r.status == 2);
  CHECK(r.err.rfind("posvec: error: --factor: these settings give rotation pair 1", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  // Extreme but representable values still work: base 1e308 at d 8 gives θ_1 = 1e-77.
  CHECK(ropeFrequencies(cfg(RopeType::Default, 8, 1e308)).invFreq[1] ==
        Approx(1e-77).epsilon(1e-12));
}
