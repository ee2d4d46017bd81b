// Subcommand `rope`: the inverse frequencies and attention factor of a rotary
// configuration (a model's config.json or options), in double, with the distance
// profile of the similarity of two positions.
#include <charconv>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <numbers>
#include <optional>
#include <string>
#include <type_traits>
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
  const std::string group = "Rotary configuration (override the config.json's values)";
  forEachSetting(kRopeSettings, [&](const auto& row) {
    using T = std::remove_cvref_t<decltype(o.values.*(row.member))>;
    std::string flag(row.spelled.flag);
    if (row.setting.name == "ropeHeadDim") {
      if (dimName.empty()) return;  // attend: the heads' own size
      flag = dimName;
    }
    if (row.setting.name == "ropeBase" && !baseOption) return;
    const std::string help(row.help);
    T& value = o.values.*(row.member);
    CLI::Option* opt = nullptr;
    if constexpr (std::is_same_v<T, RopeType>) {
      opt = sub->add_option(flag, o.type, help)->capture_default_str();
    } else if constexpr (std::is_enum_v<T>) {
      std::vector<std::string> names;
      for (const auto& c : row.choices) names.emplace_back(c.name);
      opt = sub->add_option_function<std::string>(
                   flag,
                   [&value, &row](const std::string& text) {
                     RopeConfig parsed;
                     readSetting(row, text, parsed);
                     value = parsed.*(row.member);
                   },
                   help)
                ->check(CLI::IsMember(names))
                ->default_str(settingText(row, kRopeDefaults));
    } else if constexpr (std::is_same_v<T, std::optional<double>>) {
      opt = sub->add_option_function<double>(
          flag, [&value](double v) { value = v; }, help);
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      opt = sub->add_option(flag, value, help)->delimiter(',');
    } else {
      opt = sub->add_option(flag, value, help)->capture_default_str();
      if constexpr (std::is_unsigned_v<T>) opt->check(notNegative());
    }
    opt->group(group);
    o.given.emplace_back(row.setting.name, opt);
  });
}

RopeConfig resolveRopeConfig(const RopeCliOptions& o, bool* anyGiven) {
  RopeConfig c = o.config.empty() ? kRopeDefaults : readRopeConfig(o.config);
  bool any = !o.config.empty();
  forEachSetting(kRopeSettings, [&](const auto& row) {
    for (const auto& [name, opt] : o.given) {
      if (name != row.setting.name || opt->count() == 0) continue;
      any = true;
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(c.*(row.member))>, RopeType>)
        c.type = parseRopeType(o.type);
      else
        c.*(row.member) = o.values.*(row.member);
    }
  });
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
  const std::optional<RopeFrequencies> local = ropeLocalFrequencies(c);
  const std::vector<RopeProfilePoint> profile = ropeProfile(f.invFreq, o.profile);
  if (globals().parseOnly) return;
  if (!globals().quiet)
    for (const std::string& note : f.notes)
      std::fprintf(stderr, "posvec: note: %s\n", note.c_str());
  if (fmt == "json") {
    nlohmann::json j = {{"rope_type", ropeTypeName(f.type)},
                        {"dim", f.dim},
                        {"base", c.base},
                        {"inv_freq", f.invFreq},
                        {"attention_factor", f.attentionFactor}};
    if (local)
      j["local"] = {{"rope_type", ropeTypeName(local->type)},
                    {"base", *c.localBase},
                    {"inv_freq", local->invFreq}};
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
    std::string out =
        "# rope_type " + ropeTypeName(f.type) + ", dim " + std::to_string(f.dim) +
        ", attention_factor " + g17(f.attentionFactor) +
        (local
             ? ", sliding-window layers: default rule at rope_local_base_freq " + g17(*c.localBase)
             : std::string()) +
        "\npair\tinv_freq\twavelength" + (local ? "\tlocal_inv_freq\tlocal_wavelength\n" : "\n");
    for (std::size_t i = 0; i < f.invFreq.size(); ++i) {
      out += std::to_string(i) + '\t' + g17(f.invFreq[i]) + '\t' +
             g17(2 * std::numbers::pi / f.invFreq[i]);
      if (local)
        out += '\t' + g17(local->invFreq[i]) + '\t' + g17(2 * std::numbers::pi / local->invFreq[i]);
      out += '\n';
    }
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
