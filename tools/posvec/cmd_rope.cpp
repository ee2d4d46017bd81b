// Subcommand `rope`: the inverse frequencies and attention factor of a rotary
// configuration (a model's config.json or options), in double, with the distance
// profile of the similarity of two positions.
#include <charconv>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string>
#include <vector>

#include "cli.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/io.hpp"
#include "posvec/rope.hpp"
#include "rope_options.hpp"

namespace posvec::cli {

namespace {
const RopeConfig kRopeDefaults{};
}  // namespace

void addRopeOptions(CLI::App* sub, RopeCliOptions& o, const std::string& dimName, bool baseOption) {
  const RopeConfig& d = kRopeDefaults;
  o.type = ropeTypeName(d.type);
  o.dim = static_cast<std::int64_t>(d.headDim);
  o.partial = d.partialRotaryFactor;
  o.base = d.base;
  o.factor = d.factor;
  o.maxPosition = d.maxPositionEmbeddings;
  o.originalMaxPosition = d.originalMaxPositionEmbeddings;
  o.betaFast = d.betaFast;
  o.betaSlow = d.betaSlow;
  o.lowFreqFactor = d.lowFreqFactor;
  o.highFreqFactor = d.highFreqFactor;
  o.seqLen = d.seqLen;
  const std::string g = "Rotary configuration (override the config.json's values)";
  auto add = [&](CLI::Option* opt) {
    opt->group(g);
    o.given.push_back(opt);
    return opt;
  };
  add(sub->add_option("--type", o.type,
                      "rope_type: default, linear, ntk, dynamic, yarn, llama3 or longrope"))
      ->capture_default_str();
  if (!dimName.empty())
    add(sub->add_option(
            dimName, o.dim,
            "Head size (head_dim); the rotated size is head size x --partial-rotary-factor"))
        ->capture_default_str();
  add(sub->add_option("--partial-rotary-factor", o.partial, "Share of the head that rotates"))
      ->capture_default_str();
  if (baseOption)
    add(sub->add_option("--base", o.base, "rope_theta, the frequency base"))->capture_default_str();
  add(sub->add_option("--factor", o.factor,
                      "Scaling factor (linear, ntk, dynamic, yarn, llama3), >= 1"))
      ->capture_default_str();
  add(sub->add_option("--max-position", o.maxPosition, "max_position_embeddings"))
      ->capture_default_str();
  add(sub->add_option(
          "--original-max-position", o.originalMaxPosition,
          "original_max_position_embeddings, the pre-training context (0: --max-position)"))
      ->capture_default_str();
  add(sub->add_option("--attention-factor", o.attentionFactor,
                      "yarn, longrope: multiplies cos and sin (default: derived from the factor)"));
  add(sub->add_option("--beta-fast", o.betaFast, "yarn: beta_fast"))->capture_default_str();
  add(sub->add_option("--beta-slow", o.betaSlow, "yarn: beta_slow"))->capture_default_str();
  add(sub->add_option("--low-freq-factor", o.lowFreqFactor, "llama3: low_freq_factor"))
      ->capture_default_str();
  add(sub->add_option("--high-freq-factor", o.highFreqFactor, "llama3: high_freq_factor"))
      ->capture_default_str();
  add(sub->add_option("--short-factor", o.shortFactor, "longrope: short_factor, comma-separated")
          ->delimiter(','));
  add(sub->add_option("--long-factor", o.longFactor, "longrope: long_factor, comma-separated")
          ->delimiter(','));
  add(sub->add_option("--seq-len", o.seqLen,
                      "dynamic, longrope: the sequence length the frequencies are for (0: none)"))
      ->capture_default_str();
}

RopeConfig resolveRopeConfig(const RopeCliOptions& o, bool* anyGiven) {
  RopeConfig c = o.config.empty() ? kRopeDefaults : readRopeConfig(o.config);
  bool any = !o.config.empty();
  auto given = [&](const char* name) {
    for (CLI::Option* opt : o.given)
      if (opt->check_lname(name) && opt->count() > 0) return any = true;
    return false;
  };
  if (given("type")) c.type = parseRopeType(o.type);
  if (given("dim")) {
    if (o.dim < 1)
      throw ConfigError("the head size must be at least 1 (got " + std::to_string(o.dim) + ")");
    c.headDim = static_cast<std::size_t>(o.dim);
  }
  if (given("partial-rotary-factor")) c.partialRotaryFactor = o.partial;
  if (given("base")) c.base = o.base;
  if (given("factor")) c.factor = o.factor;
  if (given("max-position")) c.maxPositionEmbeddings = o.maxPosition;
  if (given("original-max-position")) c.originalMaxPositionEmbeddings = o.originalMaxPosition;
  if (given("attention-factor")) c.attentionFactor = o.attentionFactor;
  if (given("beta-fast")) c.betaFast = o.betaFast;
  if (given("beta-slow")) c.betaSlow = o.betaSlow;
  if (given("low-freq-factor")) c.lowFreqFactor = o.lowFreqFactor;
  if (given("high-freq-factor")) c.highFreqFactor = o.highFreqFactor;
  if (given("short-factor")) c.shortFactor = o.shortFactor;
  if (given("long-factor")) c.longFactor = o.longFactor;
  if (given("seq-len")) c.seqLen = o.seqLen;
  if (anyGiven) *anyGiven = any;
  return c;
}

namespace {

// The library names settings by their config.json keys; the options spell them so.
struct RopeCmdOptions {
  RopeCliOptions rope;
  std::vector<double> profile;
  std::string format = "auto";
  bool json = false;
  std::string output = "-";
};

std::string g17(double v) {
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void runRope(const RopeCmdOptions& o) {
  std::string fmt = o.json ? "json" : o.format;
  auto endsWith = [&](const std::string& ext) {
    return o.output.size() >= ext.size() &&
           o.output.compare(o.output.size() - ext.size(), ext.size(), ext) == 0;
  };
  if (fmt == "auto") fmt = endsWith(".npy") ? "npy" : endsWith(".json") ? "json" : "tsv";
  if (fmt != "tsv" && fmt != "json" && fmt != "npy")
    throw ConfigError("unknown --format '" + o.format + "' (choose auto, tsv, json or npy)");
  if (fmt == "npy" && !o.profile.empty() && (o.output.empty() || o.output == "-"))
    throw ConfigError(
        "--format npy with --profile writes two files: give -o FILE.npy (the profile goes to "
        "FILE.profile.npy)");
  const RopeConfig c = resolveRopeConfig(o.rope);
  const RopeFrequencies f = ropeFrequencies(c);
  const std::vector<RopeProfilePoint> profile = ropeProfile(f.invFreq, o.profile);
  if (globals().parseOnly) return;
  if (fmt == "json") {
    nlohmann::json j = {{"rope_type", ropeTypeName(f.type)},
                        {"dim", f.dim},
                        {"inv_freq", f.invFreq},
                        {"attention_factor", f.attentionFactor}};
    if (!o.profile.empty()) {
      nlohmann::json p = nlohmann::json::array();
      for (const RopeProfilePoint& pt : profile)
        p.push_back({{"distance", pt.distance}, {"mean_cos", pt.meanCos}, {"bound", pt.bound}});
      j["profile"] = std::move(p);
    }
    writeOutput(o.output, j.dump(1) + "\n");
  } else if (fmt == "npy") {
    writeToPathOrStdout(o.output, [&](std::ostream& out) {
      writeNpyArray(out, f.invFreq.data(), {f.invFreq.size()});
    });
    if (!o.profile.empty()) {
      std::string base = o.output;
      if (endsWith(".npy")) base.resize(base.size() - 4);
      std::vector<double> rows;
      for (const RopeProfilePoint& pt : profile)
        rows.insert(rows.end(), {pt.distance, pt.meanCos, pt.bound});
      writeFileAtomically(base + ".profile.npy", [&](std::ostream& out) {
        writeNpyArray(out, rows.data(), {profile.size(), 3});
      });
    }
  } else {
    std::string out = "# rope_type " + ropeTypeName(f.type) + ", dim " + std::to_string(f.dim) +
                      ", attention_factor " + g17(f.attentionFactor) +
                      "\npair\tinv_freq\twavelength\n";
    for (std::size_t i = 0; i < f.invFreq.size(); ++i)
      out += std::to_string(i) + '\t' + g17(f.invFreq[i]) + '\t' +
             g17(2 * std::numbers::pi / f.invFreq[i]) + '\n';
    if (!profile.empty()) {
      out += "\ndistance\tmean_cos\tbound\n";
      for (const RopeProfilePoint& pt : profile)
        out += g17(pt.distance) + '\t' + g17(pt.meanCos) + '\t' + g17(pt.bound) + '\n';
    }
    writeOutput(o.output, out);
  }
}

Registrar regRope(43, [](CLI::App& app) {
  auto o = std::make_shared<RopeCmdOptions>();
  auto* sub = app.add_subcommand(
      "rope",
      "Rotary frequencies and attention factor of a model's config.json (or options), in float64");
  sub->add_option(
      "config", o->rope.config,
      "A model's config.json (rope_theta, head size, rope_scaling); without it the options "
      "below describe the configuration");
  addRopeOptions(sub, o->rope, "--dim", true);
  sub->add_option(
         "--profile", o->profile,
         "Distances k, comma-separated: mean_cos(k) = (2/d) sum cos(k theta_i) and RoFormer's "
         "long-term decay bound")
      ->delimiter(',');
  sub->add_option(
         "--format", o->format,
         "auto (from the -o extension: .npy, .json, else tsv), tsv, json or npy (inv_freq; "
         "the profile to FILE.profile.npy as distance, mean_cos, bound)")
      ->capture_default_str();
  sub->add_flag("--json", o->json, "Same as --format json");
  sub->add_option("-o,--output", o->output, "Output file ('-' is stdout)")->capture_default_str();
  sub->callback([o] { runRope(*o); });
});

}  // namespace
}  // namespace posvec::cli
