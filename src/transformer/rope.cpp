// Rotary frequencies under each context-extension rule, their distance profile,
// and ALiBi. The rules are those of transformers' modeling_rope_utils (the
// reference practitioners' models run with), computed in double: transformers
// computes them in float32, so its θ differ from these by float rounding.
#include "posvec/rope.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>

#include "posvec/error.hpp"
#include "posvec/io.hpp"

namespace posvec {

namespace {

constexpr double kPi = std::numbers::pi;
// Far beyond any model's head (128 to 256) and ALiBi's head count, small enough that
// the arrays they size always fit in memory.
constexpr std::size_t kMaxRopeDim = std::size_t{1} << 20;
constexpr std::size_t kMaxAlibiHeads = std::size_t{1} << 20;
constexpr std::size_t kMaxAlibiLength = std::size_t{1} << 14;

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// The base frequencies θᵢ = base^(−2i/d), i < d/2.
std::vector<double> baseInvFreq(double base, std::size_t dim) {
  std::vector<double> f(dim / 2);
  for (std::size_t i = 0; i < f.size(); ++i)
    f[i] = std::pow(base, -static_cast<double>(2 * i) / static_cast<double>(dim));
  return f;
}

// YaRN: the (fractional) pair index whose wavelength fits `rotations` times into
// the original context.
double yarnCorrectionDim(double rotations, double dim, double base, double context) {
  return dim * std::log(context / (rotations * 2 * kPi)) / (2 * std::log(base));
}

double yarnMscale(double scale, double k = 1) {
  return scale <= 1 ? 1.0 : 0.1 * k * std::log(scale) + 1.0;
}

}  // namespace

RopeType parseRopeType(const std::string& name) {
  if (name == "default") return RopeType::Default;
  if (name == "linear") return RopeType::Linear;
  if (name == "ntk") return RopeType::Ntk;
  if (name == "dynamic") return RopeType::Dynamic;
  if (name == "yarn") return RopeType::Yarn;
  if (name == "llama3") return RopeType::Llama3;
  if (name == "longrope") return RopeType::LongRope;
  throw ConfigError(ErrorText::about(settingNamed(kRopeSettings, "ropeType"), "unknown rope_type '")
                    << name
                    << "' (choose default, linear, ntk, dynamic, yarn, llama3 or longrope)");
}

HfRules parseHfRules(const std::string& name) {
  for (const auto& c : kHfRulesNames)
    if (c.name == name) return c.value;
  throw ConfigError(
      ErrorText::about(settingNamed(kRopeSettings, "hfVersion"), "unknown transformers version '")
      << name << "' (choose 5, 4.50 or 4.47)");
}

std::string ropeTypeName(RopeType type) {
  switch (type) {
    case RopeType::Default:
      return "default";
    case RopeType::Linear:
      return "linear";
    case RopeType::Ntk:
      return "ntk";
    case RopeType::Dynamic:
      return "dynamic";
    case RopeType::Yarn:
      return "yarn";
    case RopeType::Llama3:
      return "llama3";
    case RopeType::LongRope:
      return "longrope";
  }
  return "default";
}

std::size_t RopeConfig::rotaryDim() const {
  return static_cast<std::size_t>(static_cast<double>(headDim) * partialRotaryFactor);
}

std::int64_t RopeConfig::originalContext() const {
  return originalMaxPositionEmbeddings > 0 ? originalMaxPositionEmbeddings : maxPositionEmbeddings;
}

void RopeConfig::validate() const {
  // A message about one setting (Error::about): the CLI puts its flag in front.
  const auto about = [](std::string_view name) {
    return ErrorText::about(name == "rotaryDim" ? settingNamed(kRopeArguments, name)
                                                : settingNamed(kRopeSettings, name),
                            "");
  };
  if (headDim == 0)
    throw ConfigError(about("ropeHeadDim")
                      << "head_dim (the size of one attention head) must be at least 2");
  if (!(partialRotaryFactor > 0 && partialRotaryFactor <= 1))
    throw ConfigError(about("partialRotaryFactor")
                      << "partial_rotary_factor must be in (0, 1] (got " +
                             num(partialRotaryFactor) + ")");
  if (headDim > kMaxRopeDim)
    throw ConfigError(about("ropeHeadDim")
                      << "head_dim (the size of one attention head) must be at most " +
                             std::to_string(kMaxRopeDim) + " (got " + std::to_string(headDim) +
                             ")");
  const std::size_t d = rotaryDim();
  if (d < 2 || d % 2 != 0)
    throw ConfigError(about("rotaryDim") << "the rotated size head_dim x partial_rotary_factor (" +
                                                std::to_string(d) +
                                                ") must be even and at least 2");
  if (!(std::isfinite(base) && base > 1))
    throw ConfigError(about("ropeBase")
                      << "rope_theta (the frequency base) must be above 1 (got " + num(base) + ")");
  if (maxPositionEmbeddings < 1)
    throw ConfigError(about("maxPositionEmbeddings")
                      << "max_position_embeddings must be at least 1 (got " +
                             std::to_string(maxPositionEmbeddings) + ")");
  if (originalMaxPositionEmbeddings < 0)
    throw ConfigError(about("originalMaxPositionEmbeddings")
                      << "original_max_position_embeddings must be at least 1 (got " +
                             std::to_string(originalMaxPositionEmbeddings) + ")");
  if (seqLen < 0)
    throw ConfigError(about("seqLen") << "the sequence length must be 0 or more (got " +
                                             std::to_string(seqLen) + ")");
  const bool usesFactor = type == RopeType::Linear || type == RopeType::Ntk ||
                          type == RopeType::Dynamic || type == RopeType::Yarn ||
                          type == RopeType::Llama3;
  if (usesFactor && !(std::isfinite(factor) && factor >= 1))
    throw ConfigError(about("ropeFactor")
                      << "rope_scaling.factor must be at least 1 (got " + num(factor) + ")");
  if (type == RopeType::Dynamic && d < 4)
    throw ConfigError("dynamic NTK needs a rotated size of at least 4 (its exponent is d/(d-2))");
  if (type == RopeType::Ntk && d < 4)
    throw ConfigError("NTK scaling needs a rotated size of at least 4 (its exponent is d/(d-2))");
  if (attentionFactor && !(std::isfinite(*attentionFactor) && *attentionFactor > 0))
    throw ConfigError(about("attentionFactor")
                      << "rope_scaling.attention_factor must be above 0 (got " +
                             num(*attentionFactor) + ")");
  if (type == RopeType::Yarn) {
    if (!(std::isfinite(betaFast) && betaFast > 0))
      throw ConfigError(about("betaFast")
                        << "rope_scaling.beta_fast must be above 0 (got " + num(betaFast) + ")");
    if (!(std::isfinite(betaSlow) && betaSlow > 0))
      throw ConfigError(about("betaSlow")
                        << "rope_scaling.beta_slow must be above 0 (got " + num(betaSlow) + ")");
  }
  if (type == RopeType::Llama3) {
    if (!(lowFreqFactor > 0))
      throw ConfigError(about("lowFreqFactor")
                        << "rope_scaling.low_freq_factor must be above 0 (got " +
                               num(lowFreqFactor) + ")");
    if (!(highFreqFactor > lowFreqFactor))
      throw ConfigError(about("highFreqFactor")
                        << "rope_scaling.high_freq_factor (" + num(highFreqFactor) +
                               ") must be above low_freq_factor (" + num(lowFreqFactor) + ")");
  }
  if (localBase && !(std::isfinite(*localBase) && *localBase > 1))
    throw ConfigError(about("localBase")
                      << "rope_local_base_freq must be above 1 (got " + num(*localBase) + ")");
  if (type == RopeType::LongRope && originalContext() < 2)
    throw ConfigError(about("originalMaxPositionEmbeddings")
                      << "longrope needs an original context of at least 2 positions "
                         "(its attention factor divides by the context's logarithm; got " +
                             std::to_string(originalContext()) + ")");
  if (type == RopeType::LongRope) {
    for (const auto* list : {&shortFactor, &longFactor}) {
      const char* key = list == &shortFactor ? "short_factor" : "long_factor";
      if (list->size() != d / 2)
        throw ConfigError(about(list == &shortFactor ? "shortFactor" : "longFactor")
                          << "rope_scaling." + std::string(key) +
                                 " must hold one factor per rotated pair (" +
                                 std::to_string(d / 2) + "), got " + std::to_string(list->size()));
      for (double v : *list)
        if (!(std::isfinite(v) && v > 0))
          throw ConfigError(about(list == &shortFactor ? "shortFactor" : "longFactor")
                            << "rope_scaling." + std::string(key) + " holds " + num(v) +
                                   "; every factor must be above 0");
    }
  }
}

// ---- config.json -----------------------------------------------------------

namespace {

using nlohmann::json;

const json* field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

double number(const json& obj, const char* key, const std::string& where) {
  const json* v = field(obj, key);
  if (!v) throw ConfigError(where + ": the key '" + key + "' is missing");
  if (!v->is_number()) throw ConfigError(where + ": '" + key + "' must be a number");
  return v->get<double>();
}

std::int64_t integer(const json& obj, const char* key, const std::string& where) {
  const double v = number(obj, key, where);
  if (v != std::floor(v) || std::abs(v) > 9e15)
    throw ConfigError(where + ": '" + key + "' must be a whole number (got " + num(v) + ")");
  return static_cast<std::int64_t>(v);
}

std::vector<double> numberList(const json& obj, const char* key, const std::string& where) {
  const json* v = field(obj, key);
  if (!v) throw ConfigError(where + ": the key '" + key + "' is missing");
  if (!v->is_array()) throw ConfigError(where + ": '" + key + "' must be a list of numbers");
  std::vector<double> out;
  for (const json& x : *v) {
    if (!x.is_number()) throw ConfigError(where + ": '" + key + "' must be a list of numbers");
    out.push_back(x.get<double>());
  }
  return out;
}

}  // namespace

RopeConfig parseRopeConfig(const std::string& jsonText, const std::string& source) {
  json j;
  try {
    j = json::parse(jsonText);
  } catch (const json::exception& e) {
    throw FormatError(source + " is not JSON: " + e.what());
  }
  if (!j.is_object())
    throw FormatError(source + " must hold a JSON object (a model's config.json)");
  // A multimodal model (Gemma 3, Llama 4, Qwen2-VL's successors) keeps its language
  // model's settings in text_config.
  if (const json* text = field(j, "text_config");
      text && text->is_object() && !field(j, "head_dim") && !field(j, "hidden_size"))
    j = json(*text);
  RopeConfig c;
  // transformers 5 keeps rope_theta inside `rope_parameters`; earlier versions keep
  // it at the top level beside `rope_scaling`.
  const json* scaling = field(j, "rope_scaling");
  if (!scaling) scaling = field(j, "rope_parameters");
  if (scaling && !scaling->is_object())
    throw ConfigError(source + ": 'rope_scaling' must be an object");
  const std::string sw = source + " rope_scaling";

  if (field(j, "rope_theta"))
    c.base = number(j, "rope_theta", source);
  else if (scaling && field(*scaling, "rope_theta"))
    c.base = number(*scaling, "rope_theta", sw);
  else if (field(j, "rotary_emb_base"))
    c.base = number(j, "rotary_emb_base", source);

  // The rotated head: DeepSeek's multi-head latent attention rotates qk_rope_head_dim
  // columns of each head (transformers' DeepSeek configs set head_dim to it); GPT-J
  // names its sizes n_embd and n_head.
  const auto positive = [&](const char* key) {
    const std::int64_t v = integer(j, key, source);
    if (v < 1) throw ConfigError(source + ": '" + key + "' must be at least 1");
    return v;
  };
  if (field(j, "qk_rope_head_dim")) {
    c.headDim = static_cast<std::size_t>(positive("qk_rope_head_dim"));
  } else if (field(j, "head_dim")) {
    c.headDim = static_cast<std::size_t>(positive("head_dim"));
  } else if (field(j, "hidden_size") || field(j, "num_attention_heads")) {
    c.headDim = static_cast<std::size_t>(positive("hidden_size") / positive("num_attention_heads"));
  } else if (field(j, "n_embd") || field(j, "n_head")) {
    c.headDim = static_cast<std::size_t>(positive("n_embd") / positive("n_head"));
  } else {
    throw ConfigError(source +
                      ": the key 'head_dim' (or 'hidden_size' with 'num_attention_heads', or "
                      "'qk_rope_head_dim') is missing");
  }

  if (field(j, "partial_rotary_factor"))
    c.partialRotaryFactor = number(j, "partial_rotary_factor", source);
  else if (scaling && field(*scaling, "partial_rotary_factor"))
    c.partialRotaryFactor = number(*scaling, "partial_rotary_factor", sw);
  else if (field(j, "rotary_pct"))
    c.partialRotaryFactor = number(j, "rotary_pct", source);
  else if (field(j, "rotary_dim")) {
    // GPT-J states the rotated size; as a share of the head, nudged up so that
    // rotaryDim() (a floor) gives the size back.
    const std::int64_t r = positive("rotary_dim");
    if (static_cast<std::size_t>(r) > c.headDim)
      throw ConfigError(source + ": 'rotary_dim' (" + std::to_string(r) +
                        ") must be at most the head size (" + std::to_string(c.headDim) + ")");
    c.partialRotaryFactor = static_cast<double>(r) / static_cast<double>(c.headDim);
    while (c.rotaryDim() < static_cast<std::size_t>(r))
      c.partialRotaryFactor = std::nextafter(c.partialRotaryFactor, 2.0);
  }
  if (field(j, "max_position_embeddings"))
    c.maxPositionEmbeddings = integer(j, "max_position_embeddings", source);
  else if (field(j, "n_positions"))
    c.maxPositionEmbeddings = integer(j, "n_positions", source);
  if (field(j, "rope_local_base_freq")) c.localBase = number(j, "rope_local_base_freq", source);
  if (field(j, "original_max_position_embeddings"))
    c.originalMaxPositionEmbeddings = integer(j, "original_max_position_embeddings", source);

  if (scaling) {
    const json* t = field(*scaling, "rope_type");
    if (!t) t = field(*scaling, "type");
    if (!t) throw ConfigError(sw + ": the key 'rope_type' (or 'type') is missing");
    if (!t->is_string()) throw ConfigError(sw + ": 'rope_type' must be a string");
    try {
      // Phi-3's first releases called LongRoPE "su" (transformers reads it as longrope).
      const std::string name = t->get<std::string>();
      c.type = parseRopeType(name == "su" ? "longrope" : name);
    } catch (const ConfigError& e) {
      throw ConfigError(source + ": " + e.what());
    }
    const bool needsFactor = c.type == RopeType::Linear || c.type == RopeType::Ntk ||
                             c.type == RopeType::Dynamic || c.type == RopeType::Yarn ||
                             c.type == RopeType::Llama3;
    if (field(*scaling, "original_max_position_embeddings"))
      c.originalMaxPositionEmbeddings = integer(*scaling, "original_max_position_embeddings", sw);
    if (c.type == RopeType::Yarn && !field(*scaling, "factor") &&
        c.originalMaxPositionEmbeddings > 0)
      // transformers 5: without a factor, the ratio of the two contexts.
      c.factor = static_cast<double>(c.maxPositionEmbeddings) /
                 static_cast<double>(c.originalMaxPositionEmbeddings);
    else if (needsFactor)
      c.factor = number(*scaling, "factor", sw);
    else if (field(*scaling, "factor"))
      c.factor = number(*scaling, "factor", sw);
    if (field(*scaling, "attention_factor"))
      c.attentionFactor = number(*scaling, "attention_factor", sw);
    if (c.type == RopeType::Yarn) {
      if (field(*scaling, "beta_fast")) c.betaFast = number(*scaling, "beta_fast", sw);
      if (field(*scaling, "beta_slow")) c.betaSlow = number(*scaling, "beta_slow", sw);
      if (field(*scaling, "mscale")) c.mscale = number(*scaling, "mscale", sw);
      if (field(*scaling, "mscale_all_dim"))
        c.mscaleAllDim = number(*scaling, "mscale_all_dim", sw);
      if (const json* tr = field(*scaling, "truncate")) {
        if (!tr->is_boolean()) throw ConfigError(sw + ": 'truncate' must be true or false");
        c.truncate = tr->get<bool>();
      }
    }
    if (c.type == RopeType::Llama3) {
      c.lowFreqFactor = number(*scaling, "low_freq_factor", sw);
      c.highFreqFactor = number(*scaling, "high_freq_factor", sw);
      if (!field(*scaling, "original_max_position_embeddings"))
        throw ConfigError(sw + ": the key 'original_max_position_embeddings' is missing");
    }
    if (c.type == RopeType::LongRope) {
      c.shortFactor = numberList(*scaling, "short_factor", sw);
      c.longFactor = numberList(*scaling, "long_factor", sw);
    }
  }
  try {
    c.validate();
  } catch (const ConfigError& e) {
    throw ConfigError(source + ": " + e.what());
  }
  return c;
}

RopeConfig readRopeConfig(const std::string& path) {
  // A model's config.json is a few kilobytes; /dev/zero or the wrong file stops here.
  constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{16} << 20;
  return parseRopeConfig(readFile(path, kMaxConfigBytes, "model configuration"), path);
}

// ---- frequencies -----------------------------------------------------------

RopeFrequencies ropeFrequencies(const RopeConfig& c) {
  c.validate();
  RopeFrequencies r;
  r.type = c.type;
  const std::size_t d = c.rotaryDim();
  const auto dd = static_cast<double>(d);
  r.dim = d;
  const double original = static_cast<double>(c.originalContext());
  switch (c.type) {
    case RopeType::Default:
      r.invFreq = baseInvFreq(c.base, d);
      break;
    case RopeType::Linear:
      r.invFreq = baseInvFreq(c.base, d);
      for (double& f : r.invFreq) f /= c.factor;
      break;
    case RopeType::Ntk:
      r.invFreq = baseInvFreq(c.base * std::pow(c.factor, dd / (dd - 2)), d);
      break;
    case RopeType::Dynamic: {
      // The base grows once the sequence is longer than max_position_embeddings (as
      // transformers has it, not the original context); at or below it the
      // frequencies are the default ones.
      const auto context = static_cast<double>(c.maxPositionEmbeddings);
      const double len = std::max(static_cast<double>(c.seqLen), context);
      const double grown =
          c.base * std::pow(c.factor * len / context - (c.factor - 1), dd / (dd - 2));
      if (c.originalMaxPositionEmbeddings > 0 &&
          c.originalMaxPositionEmbeddings != c.maxPositionEmbeddings)
        r.notes.push_back("dynamic NTK grows the base beyond max_position_embeddings (" +
                          std::to_string(c.maxPositionEmbeddings) +
                          "), as transformers does; original_max_position_embeddings (" +
                          std::to_string(c.originalMaxPositionEmbeddings) + ") is not used");
      r.invFreq = baseInvFreq(grown, d);
      break;
    }
    case RopeType::Yarn: {
      // Where transformers versions differ: with an original context, 4.50 to 4.x
      // take the factor from the contexts' ratio; 4.47 and earlier ignore the
      // original context (the correction range from max_position_embeddings).
      double factor = c.factor;
      double context = original;
      const bool hasOriginal = c.originalMaxPositionEmbeddings > 0;
      const double ratio = static_cast<double>(c.maxPositionEmbeddings) / original;
      if (hasOriginal && c.hfVersion == HfRules::V4_50) factor = ratio;
      if (c.hfVersion == HfRules::V4_47) context = static_cast<double>(c.maxPositionEmbeddings);
      if (hasOriginal &&
          (ratio != c.factor || c.originalMaxPositionEmbeddings != c.maxPositionEmbeddings))
        r.notes.push_back(
            "transformers versions read this yarn config differently: 5 uses factor " +
            num(c.factor) + ", 4.50 to 4.x max_position_embeddings / original = " + num(ratio) +
            ", 4.47 and earlier ignore the original context (the hf_version setting chooses "
            "their rules); these frequencies follow " +
            std::string(std::find_if(std::begin(kHfRulesNames), std::end(kHfRulesNames),
                                     [&](const auto& n) { return n.value == c.hfVersion; })
                            ->name));
      const std::vector<double> extrapolated = baseInvFreq(c.base, d);
      double low = yarnCorrectionDim(c.betaFast, dd, c.base, context);
      double high = yarnCorrectionDim(c.betaSlow, dd, c.base, context);
      if (c.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
      }
      low = std::max(low, 0.0);
      high = std::min(high, dd - 1);
      if (low == high) high += 0.001;  // a step instead of a division by zero
      r.invFreq.resize(d / 2);
      for (std::size_t i = 0; i < d / 2; ++i) {
        // ramp 0 below `low` (kept: extrapolated), 1 above `high` (interpolated).
        const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
        const double keep = 1 - ramp;
        r.invFreq[i] = extrapolated[i] / factor * (1 - keep) + extrapolated[i] * keep;
      }
      if (c.attentionFactor)
        r.attentionFactor = *c.attentionFactor;
      else if (c.mscale && c.mscaleAllDim && *c.mscale != 0 && *c.mscaleAllDim != 0)
        r.attentionFactor = yarnMscale(factor, *c.mscale) / yarnMscale(factor, *c.mscaleAllDim);
      else
        r.attentionFactor = yarnMscale(factor);
      break;
    }
    case RopeType::Llama3: {
      r.invFreq = baseInvFreq(c.base, d);
      const double lowWavelen = original / c.lowFreqFactor;
      const double highWavelen = original / c.highFreqFactor;
      for (double& f : r.invFreq) {
        const double wavelen = 2 * kPi / f;
        if (wavelen > lowWavelen) {
          f /= c.factor;
        } else if (wavelen >= highWavelen) {
          const double smooth =
              (original / wavelen - c.lowFreqFactor) / (c.highFreqFactor - c.lowFreqFactor);
          f = (1 - smooth) * f / c.factor + smooth * f;
        }
      }
      break;
    }
    case RopeType::LongRope: {
      // Phi-3 states the original context at the top level and no factor: the
      // factor is the ratio of the two contexts.
      double factor = c.factor;
      if (c.originalMaxPositionEmbeddings > 0) {
        factor = static_cast<double>(c.maxPositionEmbeddings) / original;
        if (c.factor != 1 && c.factor != factor)
          r.notes.push_back(
              "longrope with an original context takes its factor from "
              "max_position_embeddings / original_max_position_embeddings = " +
              num(factor) + ", as transformers does; rope_scaling.factor " + num(c.factor) +
              " is not used");
      }
      const std::vector<double>& ext =
          c.seqLen > 0 && static_cast<double>(c.seqLen) > original ? c.longFactor : c.shortFactor;
      r.invFreq = baseInvFreq(c.base, d);
      for (std::size_t i = 0; i < r.invFreq.size(); ++i) r.invFreq[i] /= ext[i];
      if (c.attentionFactor)
        r.attentionFactor = *c.attentionFactor;
      else
        r.attentionFactor =
            factor <= 1 ? 1.0 : std::sqrt(1 + std::log(factor) / std::log(original));
      break;
    }
  }
  if (c.attentionFactor && c.type != RopeType::Yarn && c.type != RopeType::LongRope)
    r.attentionFactor = *c.attentionFactor;
  // Settings each in range can still meet at a frequency that overflows or underflows
  // (NTK's base·factor^(d/(d−2)), a longrope factor near zero): a pair that never turns,
  // or turns by an infinite angle, is refused rather than handed on.
  const char* culprit =
      c.type == RopeType::Default ? "ropeBase"
      : c.type == RopeType::LongRope
          ? (c.seqLen > 0 && static_cast<double>(c.seqLen) > original ? "longFactor"
                                                                      : "shortFactor")
          : "ropeFactor";
  for (std::size_t i = 0; i < r.invFreq.size(); ++i)
    if (!(std::isfinite(r.invFreq[i]) && r.invFreq[i] > 0))
      throw ConfigError(ErrorText::about(settingNamed(kRopeSettings, culprit), "")
                        << "these settings give rotation pair " + std::to_string(i) +
                               " the frequency " + num(r.invFreq[i]) +
                               " (it must be finite and above 0): a value is too extreme for "
                               "the " +
                               ropeTypeName(c.type) + " rule");
  if (!(std::isfinite(r.attentionFactor) && r.attentionFactor > 0))
    throw ConfigError(ErrorText::about(settingNamed(kRopeSettings, "attentionFactor"), "")
                      << "these settings give the attention factor " + num(r.attentionFactor) +
                             " (it must be finite and above 0)");
  return r;
}

std::optional<RopeFrequencies> ropeLocalFrequencies(const RopeConfig& config) {
  config.validate();
  if (!config.localBase) return std::nullopt;
  RopeFrequencies r;
  r.type = RopeType::Default;
  r.dim = config.rotaryDim();
  r.invFreq = baseInvFreq(*config.localBase, r.dim);
  return r;
}

// ---- profile ---------------------------------------------------------------

double ropeMeanCos(const std::vector<double>& invFreq, double distance) {
  if (invFreq.empty()) return 1.0;
  double s = 0;
  for (double f : invFreq) s += std::cos(distance * f);
  return s / static_cast<double>(invFreq.size());
}

double ropeDecayBound(const std::vector<double>& invFreq, double distance) {
  if (invFreq.empty()) return 0.0;
  std::complex<double> partial = 0;
  double total = 0;
  for (double f : invFreq) {
    partial += std::polar(1.0, distance * f);
    total += std::abs(partial);
  }
  return total / static_cast<double>(invFreq.size());
}

std::vector<RopeProfilePoint> ropeProfile(const std::vector<double>& invFreq,
                                          const std::vector<double>& distances) {
  // A term is a cosine and a complex sum for one frequency at one distance: 2^26 of
  // them take about two seconds. The largest rotary dimension (2^20) at 2,000
  // distances took 32 s with no bound.
  constexpr double kMaxProfileTerms = 67108864;  // 2^26
  const double terms = static_cast<double>(invFreq.size()) * static_cast<double>(distances.size());
  if (terms > kMaxProfileTerms)
    throw ConfigError("a profile of " + std::to_string(distances.size()) + " distances over " +
                      std::to_string(invFreq.size()) + " frequencies is " + num(terms) +
                      " terms, more than 67108864 (2^26); profile fewer distances or a smaller "
                      "rotary dimension");
  std::vector<RopeProfilePoint> out;
  out.reserve(distances.size());
  for (double k : distances) {
    if (!(std::isfinite(k) && k >= 0))
      throw ConfigError("profile distances must be 0 or more (got " + num(k) + ")");
    out.push_back({k, ropeMeanCos(invFreq, k), ropeDecayBound(invFreq, k)});
  }
  return out;
}

// ---- ALiBi -----------------------------------------------------------------

std::vector<double> alibiSlopes(std::size_t heads) {
  if (heads == 0) throw ConfigError("ALiBi needs at least one head");
  if (heads > kMaxAlibiHeads)
    throw ConfigError("ALiBi heads must be at most " + std::to_string(kMaxAlibiHeads) + " (got " +
                      std::to_string(heads) + ")");
  std::size_t p = 1;
  while (p * 2 <= heads) p *= 2;
  std::vector<double> slopes;
  slopes.reserve(heads);
  const double ratio = std::exp2(-8.0 / static_cast<double>(p));
  for (std::size_t h = 1; h <= p; ++h) slopes.push_back(std::pow(ratio, static_cast<double>(h)));
  const double extra = std::exp2(-4.0 / static_cast<double>(p));  // 2^(−8/(2P))
  for (std::size_t h = 0; slopes.size() < heads; ++h)
    slopes.push_back(std::pow(extra, static_cast<double>(2 * h + 1)));
  return slopes;
}

MatrixD alibiBias(double slope, std::size_t length, bool causal) {
  if (length > kMaxAlibiLength)
    throw ConfigError("an ALiBi bias matrix is length x length: length must be at most " +
                      std::to_string(kMaxAlibiLength) + " (got " + std::to_string(length) + ")");
  if (!std::isfinite(slope)) throw ConfigError("the ALiBi slope must be finite");
  const auto n = static_cast<Eigen::Index>(length);
  MatrixD b(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j)
      b(i, j) = causal && j > i ? -std::numeric_limits<double>::infinity()
                                : -slope * static_cast<double>(i > j ? i - j : j - i);
  return b;
}

}  // namespace posvec
