// Attention: scaled dot-product attention over transformer input rows, the place
// where position encodings act. Single- and multi-head, identity or seeded random
// projections (PyTorch nn.Linear's layout and initialisation), causal and padding
// masks, and rotary position embedding (RoPE) as the alternative to adding PE to
// the rows. Everything is computed in double; the softmax is stable for any
// finite input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "posvec/embeddings.hpp"
#include "posvec/positional.hpp"
#include "posvec/types.hpp"

namespace posvec {

enum class Projection {
  Identity,  // Q = K = V = the input rows (split into heads): the map is their raw similarity
  Random     // seeded linear maps with bias, initialised like PyTorch's nn.Linear
};
Projection parseProjection(const std::string& name);  // "identity" / "random"; ConfigError
std::string projectionName(Projection projection);

// How position enters attention.
enum class PositionMode {
  None,      // word vectors only: attention cannot tell positions apart
  Additive,  // PE[start + t] added to the scaled rows before the projections
  Rotary     // Q and K of each head rotated by position (RoPE, Su et al.)
};
PositionMode parsePositionMode(const std::string& name);  // "none" / "additive" / "rotary"
std::string positionModeName(PositionMode mode);

struct AttentionOptions {
  std::size_t heads = 1;
  // Size of each head's queries, keys and values. 0: d_model / heads (the heads
  // split d_model, which must then be divisible). With Identity projections a
  // head reads columns [h·headDim, (h+1)·headDim) of the input, so heads ·
  // headDim must equal d_model, or headDim must be d_model (every head reads all).
  std::size_t headDim = 0;
  Projection projection = Projection::Identity;
  std::uint64_t seed = 1;  // Random projections: one seed, one set of matrices
  // Random projections only: map the concatenated heads back to d_model with a
  // further nn.Linear (what nn.MultiheadAttention's out_proj does). Identity
  // projections return the concatenation.
  bool outputProjection = true;
  bool causal = false;  // query t sees keys 0..t: future scores are -inf before the softmax
  // The common mistake, for comparison: softmax over every key, then zero the
  // future weights. Rows then sum to less than 1 unless `renormalize` divides
  // each row by its sum, which gives exactly the causal map. Needs `causal`.
  bool maskAfterSoftmax = false;
  bool renormalize = false;
  PositionMode positional = PositionMode::Additive;
  // Rotary only: the rotation pairs and frequencies are those of relativeShift()
  // of an encoder with dim = headDim, this layout and base (interleaved pairs are
  // RoFormer's, concatenated halves GPT-NeoX's; tutorial has no rotation).
  Encoding rotaryEncoding = Encoding::Interleaved;
  double rotaryBase = 10000.0;
  // Throws ConfigError naming the inconsistent options for inputs of d_model.
  void validate(std::size_t dModel) const;
  std::size_t resolvedHeadDim(std::size_t dModel) const;
};

// One linear map in nn.Linear's layout: y = x · weightᵀ + bias, weight is
// (out × in). Empty (0 × 0) when the map is the identity.
struct LinearMap {
  MatrixD weight;
  Eigen::VectorXd bias;
  bool identity() const { return weight.size() == 0; }
};

// The projections of all heads together, as nn.MultiheadAttention keeps them:
// rows h·headDim .. (h+1)·headDim - 1 of query/key/value belong to head h.
struct AttentionProjections {
  LinearMap query, key, value, output;
};

struct AttentionResult {
  std::vector<MatrixD> weights;  // one T × T map per head: row = query, column = key
  MatrixD heads;                 // T × (heads · headDim): each head's weights · V, concatenated
  MatrixD output;                // T × d_out: `heads` through the output projection
};

class Attention {
 public:
  // Draws the random projections (if any) for inputs of dModel columns.
  Attention(std::size_t dModel, AttentionOptions options = {});
  const AttentionOptions& options() const { return options_; }
  std::size_t dModel() const { return dModel_; }
  std::size_t headDim() const { return headDim_; }
  const AttentionProjections& projections() const { return projections_; }

  // Attention over the rows of x (T × dModel); `start` is the position of row 0
  // (used by rotary). `length` < T marks rows length..T-1 as padding: they neither
  // attend nor are attended, and their weights and outputs are zero. InputError
  // on a column mismatch or a non-finite value.
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

// Softmax of one row in place over the entries where `allowed` is true (others
// become 0), stable for any finite or infinite scores: subtracting the row
// maximum keeps exp() in range, and rows whose maximum is +inf share the weight
// among their +inf entries. At least one entry must be allowed.
void stableSoftmax(double* row, const bool* allowed, std::size_t n);

// ---- from a sentence to attention input ------------------------------------

enum class UnknownWords {
  Error,  // InputError naming the word
  Zero,   // a zero vector: the row is just its position encoding
  Token   // one shared out-of-vocabulary row, the mean of all vectors, named "<unk>"
};
UnknownWords parseUnknownWords(const std::string& name);  // "error" / "zero" / "token"

struct LookedUp {
  std::vector<std::string> tokens;   // as looked up; unknown ones replaced by "<unk>" for Token
  std::vector<std::size_t> unknown;  // indices of the tokens not in the vocabulary
  MatrixF rows;                      // tokens × dim
};

// The row UnknownWords::Token gives every unknown word: the mean of all vectors
// (accumulated in double), or zeros when there are no words.
Eigen::RowVectorXf unknownTokenRow(const Embeddings& embeddings);

// Looks every token up in `embeddings`, handling unknown words by `unk`.
// InputError for an empty sentence or (Error) an unknown word.
LookedUp lookUpTokens(const Embeddings& embeddings, const Sentence& tokens,
                      UnknownWords unk = UnknownWords::Error);

// The attention input of one sentence: rows · scale, plus PE[start + t] from
// `encoder` when mode is Additive (positionOffset() included, as encode() does).
MatrixD attentionInput(const MatrixF& rows, PositionMode mode, const PositionalEncoder& encoder,
                       std::int64_t start = 0, Scale scale = {});

}  // namespace posvec
