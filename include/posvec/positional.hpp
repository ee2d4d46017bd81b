/// \file
/// PositionalEncoder: sinusoidal position encodings and the transformer input
/// layer (embedding × scale + PE[start + t]). Angles are computed in double from
/// exactly computed frequencies, so values stay within float rounding at any
/// position up to 10^7.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "posvec/settings.hpp"
#include "posvec/types.hpp"

namespace posvec {

/// The column layout and frequencies of a sinusoidal encoding (d = d_model).
enum class Encoding {
  Interleaved,   ///< PE[p,2k] = sin(p / base^(2k/d)), PE[p,2k+1] = cos(same)   (Vaswani et al.)
  Concatenated,  ///< the d/2 sines, then the d/2 cosines (tensor2tensor layout)
  /// the study's loop: column i (even) uses base^((2i)/d) for sin at i and cos at i+1
  Book,
  Tutorial,  ///< sin at even i with base^(2i/d), cos at i+1 with base^(2(i+1)/d)
  /// The layout released models carry (tensor2tensor get_timing_signal_1d, fairseq,
  /// Marian, M2M100): [sin | cos] halves, d/2 inverse timescales base^(-k/(d/2 - 1)),
  /// so the slowest column pair has exactly 1/base (d = 2: the one pair has 1).
  Timescale,
  /// Timescale as fairseq's SinusoidalPositionalEmbedding uses it: row paddingIdx
  /// is all zeros and encode() puts token t at position paddingIdx + 1 + start + t.
  Fairseq
};

/// "interleaved", "concatenated", "book", "tutorial", "timescale" or "fairseq".
Encoding parseEncoding(const std::string& name);  ///< ConfigError on an unknown name
/// The name parseEncoding() reads back.
std::string encodingName(Encoding encoding);

/// The timescale base of Vaswani et al. (and every encoding's default here).
inline constexpr double kDefaultBase = 10000.0;
/// Fairseq's default padding index (its padding token's row).
inline constexpr std::int64_t kDefaultPaddingIdx = 1;

/// The encoding a PositionalEncoder computes.
struct PositionalOptions {
  std::size_t dim = 512;                      ///< d_model; must be even and > 0
  double base = kDefaultBase;                 ///< > 1, finite
  Encoding encoding = Encoding::Interleaved;  ///< layout and frequencies
  std::int64_t paddingIdx = kDefaultPaddingIdx;  ///< Fairseq only: the zero row; >= 0 (fairseq's default is 1)
  void validate() const;        ///< throws ConfigError (says why odd d_model is refused)
};

/// PositionalOptions' settings, a row each (settings.hpp): the meaning a message uses
/// and the `posvec pe`/`encode` flag. validate() writes their checks out, each error
/// about its row (an odd d_model has a reason of its own).
inline constexpr auto kPositionalSettings = std::tuple{
    SettingRow<PositionalOptions, std::size_t>{.member = &PositionalOptions::dim,
                                               .setting = {"dModel", "d_model"},
                                               .key = "dim", .spelled = {"--dim", "d_model"}},
    SettingRow<PositionalOptions, double>{.member = &PositionalOptions::base,
                                          .setting = {"positionalBase", "the base"},
                                          .key = "base", .spelled = {"--base", "base"}},
    SettingRow<PositionalOptions, Encoding>{.member = &PositionalOptions::encoding,
                                            .setting = {"encoding", "the encoding"},
                                            .key = "encoding", .spelled = {"--encoding", ""}},
    SettingRow<PositionalOptions, std::int64_t>{
        .member = &PositionalOptions::paddingIdx,
        .setting = {"paddingIdx", "the fairseq padding index"}, .key = "padding_idx",
        .spelled = {"", "padding_idx"}},
};

/// The positions a matrix of encodings covers: arguments of the encoder's calls
/// (and of attention's), named once for the messages that refuse them.
inline constexpr auto kPositionArguments = std::tuple{
    ArgumentRow{.setting = {"len", "the number of positions"},
                .spelled = {.flag = "--len", .keyword = "len"}},
    ArgumentRow{.setting = {"start", "the start position"},
                .spelled = {.flag = "--start", .keyword = "start"}},
};

/// Checks, without allocating or computing anything, that an encoder of `options`
/// (its per-dimension tables) and a `len` x dim matrix of `scalarBytes`-wide values
/// from `start` fit in this machine's memory; throws ConfigError ("... needs 80 GB,
/// more than this machine's 25.2 GB of memory ...") otherwise, and for the options
/// and positions the encoder itself refuses. The encoder's constructor checks its
/// tables the same way, and each matrix call its matrix.
void checkPositionalMemory(const PositionalOptions& options, std::int64_t start, std::size_t len,
                           std::size_t scalarBytes);

/// How embeddings are scaled before the encoding is added.
struct Scale {
  /// Which factor: √d_model, none (1) or `value`.
  enum class Kind { Sqrt, None, Value };
  /// \var Kind::Sqrt
  /// √d_model, as Vaswani et al. (the default).
  /// \var Kind::None
  /// A factor of 1.
  /// \var Kind::Value
  /// The factor `value`.

  Kind kind = Kind::Sqrt;  ///< which factor
  double value = 1.0;      ///< the factor when kind is Value
  /// "sqrt", "none" or a number; ConfigError otherwise
  static Scale parse(const std::string& text);
  double factor(std::size_t dim) const;  ///< √dim, 1, or value
};

/// Computes the rows of a sinusoidal encoding and adds them to embeddings.
/// The const members may be called from several threads at once; cached()
/// (the one non-const member) may not run alongside any other call.
class PositionalEncoder {
 public:
  /// Validates `options` (ConfigError) and precomputes the frequencies.
  explicit PositionalEncoder(PositionalOptions options = {});
  /// The options this encoder was built with.
  const PositionalOptions& options() const { return options_; }

  /// Row p of PE in double (p >= 0); bitwise equal to row p of any matrix below.
  /// Costs up to 255 rotation steps (tens of microseconds at d = 512): for many
  /// rows, take them from matrix() or cached(). ConfigError for a negative or
  /// too large (2^53 and beyond) position.
  Eigen::RowVectorXd row(std::int64_t position) const;
  /// Rows start .. start+len-1. Throws ConfigError for len == 0, a negative start,
  /// and (before allocating) when the matrix would not fit in physical memory.
  MatrixD matrix(std::int64_t start, std::size_t len) const;
  /// matrix() in float32 (the double values rounded).
  MatrixF matrixFloat(std::int64_t start, std::size_t len) const;
  /// Fills out.rows() rows starting at `start` into a caller-owned matrix with
  /// dim columns (no allocation; the float values are the double ones rounded).
  /// InputError when `out` has another number of columns.
  void fill(std::int64_t start, MatrixD& out) const;
  /// fill() into a float32 matrix.
  void fill(std::int64_t start, MatrixF& out) const;
  /// Cached rows from position 0, grown on demand (geometrically), so the result
  /// has at least n rows; growing never changes earlier rows. Not thread-safe.
  /// The reference stays valid until the next cached() call that grows the cache.
  const MatrixD& cached(std::size_t n);

  /// Cosine of PE[p] and PE[q] (two row() calls).
  double similarity(std::int64_t p, std::int64_t q) const;

  /// Where encode() puts token 0 for start = 0: paddingIdx + 1 for Fairseq, else 0.
  std::int64_t positionOffset() const;

  /// Transformer input: row t = rows(t) * scale + PE[positionOffset() + start + t].
  /// InputError when `rows` does not have dim columns.
  MatrixD encode(const MatrixF& rows, std::int64_t start = 0, Scale scale = {}) const;
  /// A batch of sequences of different lengths: one matrix per sequence, each
  /// padded to the longest length. Padding rows stay zero unless `encodePadding`
  /// (then they hold PE[start + t], i.e. a zero embedding plus its encoding).
  /// InputError when a sequence does not have dim columns.
  std::vector<MatrixD> encodeBatch(const std::vector<MatrixF>& sequences, std::int64_t start = 0,
                                   Scale scale = {}, bool encodePadding = false) const;

  /// The block-diagonal rotation M_k (d x d) with PE[p + k] = M_k · PE[p] for every
  /// p (one 2x2 rotation per sine/cosine pair; for Concatenated, Timescale and
  /// Fairseq the pairs are columns j and d/2 + j; for Fairseq neither p nor p + k
  /// may be the zero row). ConfigError for Tutorial: its sine and cosine columns
  /// have different frequencies, so no such matrix exists.
  MatrixD relativeShift(std::int64_t k) const;

 private:
  template <typename T>
  void fillRows(std::int64_t start, std::size_t len, T* out) const;

  PositionalOptions options_;
  std::vector<double> invFreqSin_;  // per column pair: inverse frequency of the sine
  std::vector<double> invFreqCos_;  // ... and of the cosine (differs for Tutorial)
  // The rows are generated from one (sin, cos) state per distinct frequency:
  // d/2 states, or d for Tutorial (state j drives column j).
  std::vector<double> stateFreq_;
  std::vector<double> stepSin_, stepCos_;  // sin and cos of each state's per-row step
  MatrixD cache_;
};

}  // namespace posvec
