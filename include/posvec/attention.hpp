/// \file
/// Attention: scaled dot-product attention over transformer input rows, the place
/// where position encodings act. Single- and multi-head, identity or seeded random
/// projections (PyTorch nn.Linear's layout and initialisation), causal and padding
/// masks, and rotary position embedding (RoPE) as the alternative to adding PE to
/// the rows. Everything is computed in double; the softmax is stable for any
/// finite input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "posvec/embeddings.hpp"
#include "posvec/positional.hpp"
#include "posvec/rope.hpp"
#include "posvec/types.hpp"
#include "posvec/word_lookup.hpp"

namespace posvec {

/// How queries, keys and values are made from the input rows.
enum class Projection {
  Identity,  ///< Q = K = V = the input rows (split into heads): the map is their raw similarity
  Random     ///< seeded linear maps with bias, initialised like PyTorch's nn.Linear
};
/// "identity" / "random"; ConfigError otherwise
Projection parseProjection(const std::string& name);
/// The name parseProjection() reads back.
std::string projectionName(Projection projection);

/// How position enters attention.
enum class PositionMode {
  None,      ///< word vectors only: attention cannot tell positions apart
  Additive,  ///< PE[start + t] added to the scaled rows before the projections
  Rotary,    ///< Q and K of each head rotated by position (RoPE, Su et al.)
  Alibi      ///< no encoding: head h adds −m_h·|i − j| to its scores (ALiBi, Press et al.)
};
/// "none" / "additive" / "rotary" / "alibi"; ConfigError otherwise.
PositionMode parsePositionMode(const std::string& name);
/// The name parsePositionMode() reads back.
std::string positionModeName(PositionMode mode);

/// The shape of an Attention layer; every field has its default here.
struct AttentionOptions {
  std::size_t heads = 1;  ///< number of heads, at least 1
  /// Size of each head's queries, keys and values. 0: d_model / heads (the heads
  /// split d_model, which must then be divisible). With Identity projections a
  /// head reads columns [h·headDim, (h+1)·headDim) of the input, so heads ·
  /// headDim must equal d_model, or headDim must be d_model (every head reads all).
  std::size_t headDim = 0;
  Projection projection = Projection::Identity;  ///< identity or seeded random maps
  std::uint64_t seed = 1;  ///< Random projections: one seed, one set of matrices
  /// Random projections only: map the concatenated heads back to d_model with a
  /// further nn.Linear (what nn.MultiheadAttention's out_proj does). Identity
  /// projections return the concatenation.
  bool outputProjection = true;
  bool causal = false;  ///< query t sees keys 0..t: future scores are -inf before the softmax
  /// The common mistake, for comparison: softmax over every key, then zero the
  /// future weights. Rows then sum to less than 1 unless `renormalize` divides
  /// each row by its sum, which gives exactly the causal map. Needs `causal`.
  bool maskAfterSoftmax = false;
  /// With maskAfterSoftmax: divide each row by its sum (needs maskAfterSoftmax).
  bool renormalize = false;
  PositionMode positional = PositionMode::Additive;  ///< how position enters (see attentionInput())
  /// Rotary only: the rotation pairs and frequencies are those of relativeShift()
  /// of an encoder with dim = headDim, this layout and base (interleaved pairs are
  /// RoFormer's, concatenated halves GPT-NeoX's; tutorial has no rotation).
  Encoding rotaryEncoding = Encoding::Interleaved;
  double rotaryBase = kDefaultBase;  ///< Rotary only: the frequencies' base (> 1)
  /// Rotary only: frequencies from a rotary configuration (rope.hpp) instead of
  /// rotaryBase, as transformers applies them: the first rotaryDim() columns of
  /// each head rotate (pairs laid out by rotaryEncoding, interleaved or
  /// concatenated within those columns), the rest pass through, and cos and sin
  /// are multiplied by the attention factor. Its headDim must equal the head size.
  std::optional<RopeConfig> rope;
  /// Throws ConfigError naming the inconsistent options for inputs of d_model.
  void validate(std::size_t dModel) const;
  /// The head size for inputs of `dModel` columns: headDim, or dModel / heads when 0.
  std::size_t resolvedHeadDim(std::size_t dModel) const;
};

/// The names of Projection in text.
inline constexpr Choice<Projection> kProjectionNames[] = {{Projection::Identity, "identity"},
                                                          {Projection::Random, "random"}};
/// The names of PositionMode in text.
inline constexpr Choice<PositionMode> kPositionModeNames[] = {{PositionMode::Additive, "additive"},
                                                              {PositionMode::Rotary, "rotary"},
                                                              {PositionMode::Alibi, "alibi"},
                                                              {PositionMode::None, "none"}};

/// The settings of AttentionOptions, one row each (settings.hpp); `posvec attend`
/// takes them as flags.
inline constexpr auto kAttentionSettings = std::tuple{
    SettingRow<AttentionOptions, std::size_t>{
        .member = &AttentionOptions::heads, .setting = {"heads", "the number of heads"},
        .spelled = {.flag = "--heads"}, .help = "Number of heads", .bounds = atLeast(1)},
    SettingRow<AttentionOptions, std::size_t>{
        .member = &AttentionOptions::headDim, .setting = {"headDim", "the head size"},
        .spelled = {.flag = "--head-dim"},
        .help = "Size of each head; 0: d_model / heads (the heads split d_model)"},
    SettingRow<AttentionOptions, Projection>{
        .member = &AttentionOptions::projection, .setting = {"projection", "projection"},
        .spelled = {.flag = "--projection"},
        .help = "identity (Q = K = V = the input: raw similarity) or random (seeded, "
                "nn.Linear initialisation, with bias)",
        .choices = kProjectionNames},
    SettingRow<AttentionOptions, std::uint64_t>{
        .member = &AttentionOptions::seed, .setting = {"projectionSeed", "the projections' seed"},
        .spelled = {.flag = "--seed"}, .help = "Seed of the random projections"},
    SettingRow<AttentionOptions, bool>{
        .member = &AttentionOptions::outputProjection,
        .setting = {"outputProjection", "the output projection"},
        .spelled = {.flag = "--no-output-projection"},
        .help = "Random projections: return the concatenated heads without the output "
                "projection",
        .flagSwitch = true, .flagValue = false},
    SettingRow<AttentionOptions, bool>{
        .member = &AttentionOptions::causal, .setting = {"causal", "the causal mask"},
        .spelled = {.flag = "--causal"},
        .help = "Causal mask: future keys get -inf before the softmax"},
    SettingRow<AttentionOptions, bool>{
        .member = &AttentionOptions::maskAfterSoftmax,
        .setting = {"maskAfterSoftmax", "masking after the softmax"},
        .spelled = {.flag = "--mask-after-softmax"},
        .help = "With --causal: the common mistake, zeroing future weights after the softmax "
                "(rows no longer sum to 1)"},
    SettingRow<AttentionOptions, bool>{
        .member = &AttentionOptions::renormalize, .setting = {"renormalize", "renormalising"},
        .spelled = {.flag = "--renormalize"},
        .help = "With --mask-after-softmax: divide each row by its sum (equals --causal alone)"},
    SettingRow<AttentionOptions, PositionMode>{
        .member = &AttentionOptions::positional, .setting = {"positionMode", "the positional mode"},
        .spelled = {.flag = "--positional"},
        .help = "additive (PE added to the rows), rotary (RoPE on Q and K), alibi (head h adds "
                "-m_h |i - j| to its scores, no encoding) or none",
        .choices = kPositionModeNames},
    SettingRow<AttentionOptions, double>{
        .member = &AttentionOptions::rotaryBase, .setting = {"rotaryBase", "the rotary base"},
        .spelled = {.flag = "--base"}, .help = "Frequency base (rope_theta)"},
    SettingRow<AttentionOptions, Encoding>{
        .member = &AttentionOptions::rotaryEncoding,
        .setting = {"rotaryEncoding", "the rotary layout"}, .spelled = {.flag = "--encoding"},
        .help = "Rotary pairs: interleaved (RoFormer) or concatenated halves (GPT-NeoX)"},
};

/// The unknown-word policy, an argument of lookUpTokens(), as messages name it.
inline constexpr auto kLookupArguments = std::tuple{
    ArgumentRow{.setting = {"unk", "unknown-word policy"},
                .spelled = {.flag = "--unk", .keyword = "unk", .keywordInText = "unk="}},
};

/// One linear map in nn.Linear's layout: y = x · weightᵀ + bias, weight is
/// (out × in). Empty (0 × 0) when the map is the identity.
struct LinearMap {
  MatrixD weight;        ///< out × in; empty for the identity
  Eigen::VectorXd bias;  ///< out values; empty for the identity
  /// True when the map is the identity (no weights).
  bool identity() const { return weight.size() == 0; }
};

/// The projections of all heads together, as nn.MultiheadAttention keeps them:
/// rows h·headDim .. (h+1)·headDim - 1 of query/key/value belong to head h.
struct AttentionProjections {
  LinearMap query, key, value, output;
  /// \var query
  /// W_Q: the queries of every head (heads·headDim × dModel; identity when empty).
  /// \var key
  /// W_K: the keys of every head (heads·headDim × dModel; identity when empty).
  /// \var value
  /// W_V: the values of every head (heads·headDim × dModel; identity when empty).
  /// \var output
  /// The output map (dModel × heads·headDim); empty for identity projections or
  /// without AttentionOptions::outputProjection.
};

/// What Attention::compute() returns (T = the input's rows).
struct AttentionResult {
  std::vector<MatrixD> weights;  ///< one T × T map per head: row = query, column = key
  MatrixD heads;   ///< T × (heads · headDim): each head's weights · V, concatenated
  MatrixD output;  ///< T × d_out: `heads` through the output projection
};

/// Scaled dot-product attention (softmax(Q·Kᵀ / √headDim) · V per head). Holds
/// its projections and never changes after construction: compute() may be
/// called from several threads at once.
class Attention {
 public:
  /// Draws the random projections (if any) for inputs of dModel columns.
  /// \throws ConfigError when `options` are inconsistent for `dModel` (see
  ///         AttentionOptions::validate()).
  Attention(std::size_t dModel, AttentionOptions options = {});
  /// The options this layer was built with.
  const AttentionOptions& options() const { return options_; }
  /// Columns of the input rows.
  std::size_t dModel() const { return dModel_; }
  /// Size of each head's queries, keys and values.
  std::size_t headDim() const { return headDim_; }
  /// The projection matrices (identity maps are empty).
  const AttentionProjections& projections() const { return projections_; }

  /// Attention over the rows of x (T × dModel); `start` is the position of row 0
  /// (used by rotary). `length` < T marks rows length..T-1 as padding: they neither
  /// attend nor are attended, and their weights and outputs are zero. InputError
  /// on a column mismatch or a non-finite value; ConfigError for a negative start.
  AttentionResult compute(const MatrixD& x, std::int64_t start = 0,
                          std::size_t length = static_cast<std::size_t>(-1)) const;

  /// Checks, before anything is allocated, that `results` results of compute() over
  /// `tokens` rows fit in this machine's memory: each holds one T x T weight map a
  /// head, and compute() needs one more map and a few T-row matrices while it runs.
  /// `bytesPerWeight` adds what a caller spends on each weight besides (its text
  /// form, say). Throws ConfigError naming the sentence length and the bytes needed
  /// ("attention over a sentence of 50000 tokens needs 40 GB ..."); compute() checks
  /// its own sentence the same way.
  void checkMemory(std::size_t tokens, std::size_t results = 1, double bytesPerWeight = 0) const;

 private:
  std::size_t dModel_;
  std::size_t headDim_;
  AttentionOptions options_;
  AttentionProjections projections_;
};

/// Softmax of one row in place over the entries where `allowed` is true (others
/// become 0), stable for any finite or infinite scores: subtracting the row
/// maximum keeps exp() in range, and rows whose maximum is +inf share the weight
/// among their +inf entries. At least one entry must be allowed (InputError
/// otherwise, and for a NaN score). `row` and `allowed` hold `n` values.
void stableSoftmax(double* row, const bool* allowed, std::size_t n);

// ---- from a sentence to attention input ------------------------------------

/// What lookUpTokens() does with a token the embeddings do not know.
enum class UnknownWords {
  Error,  ///< InputError naming the word
  Zero,   ///< a zero vector: the row is just its position encoding
  Token   ///< one shared out-of-vocabulary row, the mean of all vectors, named `<unk>`
};
/// "error" / "zero" / "token"; ConfigError otherwise
UnknownWords parseUnknownWords(const std::string& name);

/// A sentence's tokens and their vectors (lookUpTokens()).
struct LookedUp {
  std::vector<std::string> tokens;   ///< as looked up; unknown ones replaced by `<unk>` for Token
  std::vector<std::size_t> unknown;  ///< indices of the tokens not in the vocabulary
  std::vector<std::size_t> built;    ///< those of them built from character n-grams
  MatrixF rows;                      ///< tokens × dim
};

/// The row UnknownWords::Token gives every unknown word: the mean of all vectors
/// (accumulated in double), or zeros when there are no words.
Eigen::RowVectorXf unknownTokenRow(const Embeddings& embeddings);

/// Looks every token up in `embeddings`, handling unknown words by `unk`.
/// InputError for an empty sentence or (Error) an unknown word.
LookedUp lookUpTokens(const Embeddings& embeddings, const Sentence& tokens,
                      UnknownWords unk = UnknownWords::Error);
/// The same over `vectors`: with a fastText model, a token not in the vocabulary
/// gets the vector of its character n-grams (its index in `built` and `unknown`)
/// and `unk` is not used; without one, as the overload above.
LookedUp lookUpTokens(const LookupVectors& vectors, const Sentence& tokens,
                      UnknownWords unk = UnknownWords::Error);

/// The attention input of one sentence: rows · scale, plus PE[start + t] from
/// `encoder` when mode is Additive (positionOffset() included, as encode() does).
/// ConfigError for a negative start; InputError when `rows` does not have the
/// encoder's dim columns (Additive).
MatrixD attentionInput(const MatrixF& rows, PositionMode mode, const PositionalEncoder& encoder,
                       std::int64_t start = 0, Scale scale = {});

}  // namespace posvec
