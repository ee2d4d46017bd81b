/// @file rope.hpp
/// Positions as released models use them: the inverse frequencies of rotary
/// position embedding (RoPE) under each context-extension rule (linear
/// interpolation, NTK-aware, dynamic NTK, YaRN, Llama 3.1's `llama3`, LongRoPE),
/// read from a model's config.json with the semantics of Hugging Face
/// transformers' `modeling_rope_utils`, but in double; the distance profile of a
/// set of frequencies; and ALiBi's per-head slopes and linear biases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "posvec/settings.hpp"

#include "posvec/types.hpp"

namespace posvec {

/// How a rotary configuration turns its base frequencies into the ones used.
enum class RopeType {
  Default,  ///< θᵢ = base^(−2i/d): RoFormer's frequencies, no scaling
  Linear,   ///< position interpolation: every θᵢ divided by the factor
  Ntk,      ///< NTK-aware: base multiplied by factor^(d/(d−2)), frequencies kept in shape
  Dynamic,  ///< dynamic NTK: the NTK base grows with the sequence length beyond the original
            ///< context
  Yarn,  ///< YaRN: interpolate slow pairs, keep fast ones, a linear ramp between; attention factor
  Llama3,   ///< Llama 3.1: three bands by wavelength (kept, smoothed, divided by the factor)
  LongRope  ///< LongRoPE / Phi-3: one rescale factor per pair (short or long list), attention
            ///< factor
};

/// Where transformers changed a rotary rule between versions, whose rule applies.
enum class HfRules {
  V5,     ///< transformers 5: yarn's rope_scaling.factor wins; max / original only without it
  V4_50,  ///< transformers 4.50 to 4.x: yarn with an original context in rope_scaling takes
          ///< factor = max_position_embeddings / original (interpolation and attention factor)
  V4_47   ///< transformers 4.47 and earlier: yarn ignores the original context; its correction
          ///< range comes from max_position_embeddings
};
/// The names of HfRules' values in text ("5", "4.50", "4.47").
inline constexpr Choice<HfRules> kHfRulesNames[] = {
    {HfRules::V5, "5"}, {HfRules::V4_50, "4.50"}, {HfRules::V4_47, "4.47"}};

/// "5", "4.50" or "4.47"; ConfigError otherwise (the message lists them).
HfRules parseHfRules(const std::string& name);

/// "default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope"; ConfigError otherwise
/// (the message lists the known types).
RopeType parseRopeType(const std::string& name);
/// The name parseRopeType() reads.
std::string ropeTypeName(RopeType type);

/// A rotary configuration: the fields of a model's config.json that decide its
/// frequencies, with the names Hugging Face uses. Defaults are those of
/// transformers' configuration classes.
struct RopeConfig {
  RopeType type = RopeType::Default;  ///< `rope_scaling.rope_type` (or the older `type`)
  std::size_t headDim = 128;  ///< size of one attention head (`head_dim`, or hidden_size / heads)
  double partialRotaryFactor =
      1.0;                ///< share of the head that rotates (`partial_rotary_factor`), in (0, 1]
  double base = 10000.0;  ///< `rope_theta`, > 1
  double factor = 1.0;    ///< `rope_scaling.factor`, >= 1 (linear, ntk, dynamic, yarn, llama3)
  std::int64_t maxPositionEmbeddings =
      2048;  ///< `max_position_embeddings`, the context the model claims
  /// `original_max_position_embeddings`: the context the model was pre-trained with
  /// (yarn, llama3, longrope, dynamic). 0: the same as maxPositionEmbeddings.
  std::int64_t originalMaxPositionEmbeddings = 0;
  /// yarn and longrope: the factor cos and sin are multiplied by. Unset: derived from
  /// the factor (yarn: 0.1·ln(factor) + 1; longrope: √(1 + ln(factor)/ln(original context))).
  std::optional<double> attentionFactor;
  /// yarn (DeepSeek's form): with both set and no attentionFactor, the attention factor
  /// is m(factor, mscale) / m(factor, mscaleAllDim), m(s, k) = 0.1·k·ln(s) + 1.
  std::optional<double> mscale;
  std::optional<double> mscaleAllDim;  ///< yarn (DeepSeek's form): see mscale
  double betaFast = 32.0;  ///< yarn: rotations at which extrapolation starts (`beta_fast`)
  double betaSlow =
      1.0;               ///< yarn: rotations below which pairs are fully interpolated (`beta_slow`)
  bool truncate = true;  ///< yarn: round the correction range outwards to whole pairs (`truncate`)
  double lowFreqFactor = 1.0;  ///< llama3: wavelengths above original/low are divided by the factor
  double highFreqFactor = 4.0;      ///< llama3: wavelengths below original/high are kept
  std::vector<double> shortFactor;  ///< longrope: per pair, used up to the original context
  std::vector<double> longFactor;   ///< longrope: per pair, used beyond it
  /// dynamic and longrope: the sequence length the frequencies are for. 0: none
  /// given (dynamic: the original context, i.e. no scaling; longrope: the short factors).
  std::int64_t seqLen = 0;
  /// Gemma 3's `rope_local_base_freq`: the base of its sliding-window layers, which
  /// rotate with the default rule (no scaling). Unset: one base for every layer.
  std::optional<double> localBase;
  /// Whose rule applies where transformers changed one (yarn's factor and original context).
  HfRules hfVersion = HfRules::V5;

  /// The rotated size: ⌊headDim · partialRotaryFactor⌋ (even, > 0 once validated).
  std::size_t rotaryDim() const;
  /// originalMaxPositionEmbeddings, or maxPositionEmbeddings when that is 0.
  std::int64_t originalContext() const;
  /// Throws ConfigError naming the setting by its config.json key: a factor below 1,
  /// a base not above 1, an odd or empty rotary size, a head above 2^20 columns, missing longrope
  /// lists or lists of the wrong length, llama3 frequency factors not increasing.
  void validate() const;
};

/// RopeConfig's settings, a row each (settings.hpp): the config.json key a message
/// names, and the `posvec rope` flag. Their ranges depend on the rope type and on
/// each other, so validate() writes them out, each error about its row.
inline constexpr auto kRopeSettings = std::tuple{
    SettingRow<RopeConfig, RopeType>{
        .member = &RopeConfig::type,
        .setting = {"ropeType", "rope_scaling.rope_type"},
        .key = "rope_type",
        .spelled = {"--type", ""},
        .help = "rope_type: default, linear, ntk, dynamic, yarn, llama3 or longrope"},
    SettingRow<RopeConfig, std::size_t>{
        .member = &RopeConfig::headDim,
        .setting = {"ropeHeadDim", "head_dim (the size of one attention head)"},
        .key = "head_dim",
        .spelled = {"--dim", ""},
        .help = "Head size (head_dim); the rotated size is head size x --partial-rotary-factor"},
    SettingRow<RopeConfig, double>{.member = &RopeConfig::partialRotaryFactor,
                                   .setting = {"partialRotaryFactor", "partial_rotary_factor"},
                                   .key = "partial_rotary_factor",
                                   .spelled = {"--partial-rotary-factor", ""},
                                   .help = "Share of the head that rotates"},
    SettingRow<RopeConfig, double>{.member = &RopeConfig::base,
                                   .setting = {"ropeBase", "rope_theta (the frequency base)"},
                                   .key = "rope_theta",
                                   .spelled = {"--base", ""},
                                   .help = "rope_theta, the frequency base"},
    SettingRow<RopeConfig, double>{
        .member = &RopeConfig::factor,
        .setting = {"ropeFactor", "rope_scaling.factor"},
        .key = "factor",
        .spelled = {"--factor", ""},
        .help = "Scaling factor (linear, ntk, dynamic, yarn, llama3), >= 1"},
    SettingRow<RopeConfig, std::int64_t>{
        .member = &RopeConfig::maxPositionEmbeddings,
        .setting = {"maxPositionEmbeddings", "max_position_embeddings"},
        .key = "max_position_embeddings",
        .spelled = {"--max-position", ""},
        .help = "max_position_embeddings"},
    SettingRow<RopeConfig, std::int64_t>{
        .member = &RopeConfig::originalMaxPositionEmbeddings,
        .setting = {"originalMaxPositionEmbeddings", "original_max_position_embeddings"},
        .key = "original_max_position_embeddings",
        .spelled = {"--original-max-position", ""},
        .help = "original_max_position_embeddings, the pre-training context (0: --max-position)"},
    SettingRow<RopeConfig, std::optional<double>>{
        .member = &RopeConfig::attentionFactor,
        .setting = {"attentionFactor", "rope_scaling.attention_factor"},
        .key = "attention_factor",
        .spelled = {"--attention-factor", ""},
        .help = "yarn, longrope: multiplies cos and sin (default: derived from the factor)"},
    SettingRow<RopeConfig, double>{.member = &RopeConfig::betaFast,
                                   .setting = {"betaFast", "rope_scaling.beta_fast"},
                                   .key = "beta_fast",
                                   .spelled = {"--beta-fast", ""},
                                   .help = "yarn: beta_fast"},
    SettingRow<RopeConfig, double>{.member = &RopeConfig::betaSlow,
                                   .setting = {"betaSlow", "rope_scaling.beta_slow"},
                                   .key = "beta_slow",
                                   .spelled = {"--beta-slow", ""},
                                   .help = "yarn: beta_slow"},
    SettingRow<RopeConfig, double>{.member = &RopeConfig::lowFreqFactor,
                                   .setting = {"lowFreqFactor", "rope_scaling.low_freq_factor"},
                                   .key = "low_freq_factor",
                                   .spelled = {"--low-freq-factor", ""},
                                   .help = "llama3: low_freq_factor"},
    SettingRow<RopeConfig, double>{.member = &RopeConfig::highFreqFactor,
                                   .setting = {"highFreqFactor", "rope_scaling.high_freq_factor"},
                                   .key = "high_freq_factor",
                                   .spelled = {"--high-freq-factor", ""},
                                   .help = "llama3: high_freq_factor"},
    SettingRow<RopeConfig, std::vector<double>>{
        .member = &RopeConfig::shortFactor,
        .setting = {"shortFactor", "rope_scaling.short_factor"},
        .key = "short_factor",
        .spelled = {"--short-factor", ""},
        .help = "longrope: short_factor, comma-separated"},
    SettingRow<RopeConfig, std::vector<double>>{
        .member = &RopeConfig::longFactor,
        .setting = {"longFactor", "rope_scaling.long_factor"},
        .key = "long_factor",
        .spelled = {"--long-factor", ""},
        .help = "longrope: long_factor, comma-separated"},
    SettingRow<RopeConfig, std::int64_t>{
        .member = &RopeConfig::seqLen,
        .setting = {"seqLen", "the sequence length"},
        .key = "seq_len",
        .spelled = {"--seq-len", ""},
        .help = "dynamic, longrope: the sequence length the frequencies are for (0: none)"},
    SettingRow<RopeConfig, std::optional<double>>{
        .member = &RopeConfig::localBase,
        .setting = {"localBase", "rope_local_base_freq"},
        .key = "rope_local_base_freq",
        .spelled = {"--local-base", ""},
        .help = "Gemma 3: rope_local_base_freq, the base of the sliding-window layers (default "
                "rule)"},
    SettingRow<RopeConfig, HfRules>{
        .member = &RopeConfig::hfVersion,
        .setting = {"hfVersion", "the transformers version whose rules apply"},
        .key = "hf_version",
        .spelled = {"--hf-version", ""},
        .help = "Where transformers changed a rule (yarn's factor and original context): 5, "
                "4.50 or 4.47",
        .choices = kHfRulesNames},
};

/// The rotated size, a property of two settings (RopeConfig::rotaryDim()), as the
/// messages that refuse it name it.
inline constexpr auto kRopeArguments = std::tuple{
    ArgumentRow{.setting = {"rotaryDim", "the rotated size"},
                .spelled = {.flagInText = "--dim/--partial-rotary-factor",
                            .keywordInText = "head_dim/partial_rotary_factor"}},
};

/// Parses a model's config.json text: rope_theta (10000 when absent; GPT-NeoX's
/// `rotary_emb_base` accepted), the head size (DeepSeek's `qk_rope_head_dim`, else head_dim,
/// else hidden_size / num_attention_heads, or GPT-J's n_embd / n_head),
/// partial_rotary_factor (or GPT-NeoX's `rotary_pct`, or GPT-J's `rotary_dim` as a size),
/// max_position_embeddings (GPT-J: n_positions), Gemma 3's rope_local_base_freq,
/// original_max_position_embeddings (top level or in rope_scaling), and
/// rope_scaling (or transformers 5's rope_parameters) with `rope_type` or `type`. `source` names
/// the input in messages. FormatError for text that is not JSON; ConfigError naming the key that is
/// missing or invalid. The result is validated.
RopeConfig parseRopeConfig(const std::string& jsonText, const std::string& source = "config.json");
/// Reads and parses a config.json file (IoError when it cannot be read).
RopeConfig readRopeConfig(const std::string& path);

/// What a rotary configuration rotates by.
struct RopeFrequencies {
  RopeType type = RopeType::Default;  ///< the rule that produced them
  std::size_t dim = 0;                ///< rotated size: 2 · invFreq.size()
  std::vector<double> invFreq;        ///< θᵢ for pair i (radians per position), i < dim/2
  double attentionFactor = 1.0;       ///< multiplies cos and sin (so the scores by its square)
  /// Where the configuration is read differently by transformers versions, or a value
  /// it holds is not used: one sentence each, for the front ends to show.
  std::vector<std::string> notes;
};

/// The frequencies of `config` (validated first), following transformers'
/// `_compute_*_parameters` for each type, in double.
RopeFrequencies ropeFrequencies(const RopeConfig& config);
/// Gemma 3's sliding-window layers: the default rule at `config.localBase` over the same
/// rotated size; nullopt when the configuration has no local base.
std::optional<RopeFrequencies> ropeLocalFrequencies(const RopeConfig& config);

/// mean_cos(k) = (2/d)·Σᵢ cos(k·θᵢ): the cosine of two sinusoidal positions k apart
/// with these frequencies, and rotary attention's relative score for a constant
/// query and key (attention factor left out). 1 at k = 0.
double ropeMeanCos(const std::vector<double>& invFreq, double distance);
/// RoFormer's long-term decay bound (section 3.4.3) per unit of max |h_{i+1} − h_i|:
/// (2/d)·Σ_{j=1}^{d/2} |Σ_{i<j} e^{i·k·θᵢ}|.
double ropeDecayBound(const std::vector<double>& invFreq, double distance);

/// One distance of a profile.
struct RopeProfilePoint {
  double distance = 0;  ///< k
  double meanCos = 0;   ///< ropeMeanCos at k
  double bound = 0;     ///< ropeDecayBound at k
};
/// The profile at each distance (ConfigError for a negative or non-finite one).
std::vector<RopeProfilePoint> ropeProfile(const std::vector<double>& invFreq,
                                          const std::vector<double>& distances);

/// ALiBi's head slopes m_h: for a power-of-two head count H, 2^(−8h/H) for
/// h = 1..H (Press et al.); otherwise BLOOM's rule: the slopes of the largest power
/// of two P below H, then the odd powers 1, 3, 5, … of 2^(−8/(2P)) for the
/// remaining H − P heads. ConfigError for 0 heads or more than 2^20.
std::vector<double> alibiSlopes(std::size_t heads);

/// ALiBi's bias for one head, T × T: −slope·|i − j| (row = query, column = key);
/// with `causal`, keys after the query are −∞. ConfigError for a length above
/// 16384 (the matrix would hold over 2 GiB) or a non-finite slope.
MatrixD alibiBias(double slope, std::size_t length, bool causal);

}  // namespace posvec
