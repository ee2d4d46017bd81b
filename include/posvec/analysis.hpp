/// \file
/// Analysis: the numbers of the black/brown similarity study (word, positional and
/// combined cosine similarity of words placed in a sentence) and of the experiments
/// that explain sinusoidal positional encodings. Pure mathematics on vectors and
/// encodings: it never trains, never prints and writes no files (study.hpp trains
/// and calls these; the report module draws what they return). Every function
/// is a pure function of its arguments and may be called from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "posvec/embeddings.hpp"
#include "posvec/positional.hpp"
#include "posvec/types.hpp"

namespace posvec {

/// The study's sentence. Positions are 1-based word positions ("The" is 1), and
/// they are the indices the study passes to PE: black is PE[2], brown is PE[10].
inline constexpr const char* kStudySentence =
    "The black cat sat on the couch and the brown dog slept on the rug.";
/// The words of kStudySentence, lowercased, in order (the full stop is position 16).
const std::vector<std::string>& studySentenceWords();

/// A word placed at a position (the row of PE it receives).
struct WordAt {
  std::string word;           ///< the word, as the vocabulary spells it
  std::int64_t position = 0;  ///< the row of PE it receives, >= 0
};
/// "black:2" -> {"black", 2}. ConfigError (naming `text`) for a missing colon, an
/// empty word, or a position that is not a non-negative integer.
WordAt parseWordAt(const std::string& text);
std::string toString(const WordAt& w);  ///< "black:2" (what parseWordAt() reads back)

/// The study's three numbers for one pair of placed words under one encoding.
struct PairSimilarity {
  WordAt a, b;
  /// \var a
  /// The first word of the pair, with its position.
  /// \var b
  /// The second word of the pair, with its position.

  Encoding encoding = Encoding::Book;  ///< the encoding PE is computed with
  double scale = 1;                 ///< the factor embeddings are multiplied by (√d by default)
  double wordSimilarity = 0;        ///< cos(e_a, e_b)
  double positionalSimilarity = 0;  ///< cos(PE[p_a], PE[p_b])
  double combinedSimilarity = 0;    ///< cos(e_a·scale + PE[p_a], e_b·scale + PE[p_b])
};

/// cos(a·scale + PE[pa], b·scale + PE[pb]), in double. The vectors' size must be
/// the encoder's dim (InputError otherwise).
double combinedSimilarity(const Eigen::RowVectorXf& a, std::int64_t pa, const Eigen::RowVectorXf& b,
                          std::int64_t pb, const PositionalEncoder& encoder, double scale);

/// Every pair (i < j) of `words`, for each encoding in turn, with PE of the
/// embeddings' dimension. InputError for a word missing from the vocabulary;
/// ConfigError for fewer than two words or an invalid base.
std::vector<PairSimilarity> studySimilarities(const Embeddings& embeddings,
                                              const std::vector<WordAt>& words,
                                              const std::vector<Encoding>& encodings, Scale scale,
                                              double base = PositionalOptions{}.base);

/// Same token at different positions: cos(x_0, x_k) for k = 0..maxPosition, where
/// x_k = e·scale + PE[k]. Element 0 is 1 by definition. InputError when `e` is
/// not of the encoder's dim.
std::vector<double> sameTokenAcrossPositions(const Eigen::RowVectorXf& e,
                                             const PositionalEncoder& encoder, double scale,
                                             std::size_t maxPosition);

/// Similarity versus distance: cos(PE[p], PE[q]) for q = 0..len-1.
std::vector<double> distanceProfile(const PositionalEncoder& encoder, std::int64_t p,
                                    std::size_t len);

/// Combined similarity of a at p and b at p + k, for k = 0..maxDistance.
/// InputError when a vector is not of the encoder's dim.
std::vector<double> combinedVsDistance(const Eigen::RowVectorXf& a, const Eigen::RowVectorXf& b,
                                       std::int64_t p, std::size_t maxDistance,
                                       const PositionalEncoder& encoder, double scale);

/// A scale the experiments sweep: a plain factor, or a multiple of √d (resolved
/// once d is known), so curves are keyed by a value rather than by a label.
struct SweepScale {
  double multiple = 1;     ///< the factor, or the multiple of √d when ofRootDim
  bool ofRootDim = false;  ///< true: the factor is multiple·√d
  /// The factor at dimension `dim`: multiple, or multiple·√dim.
  double factor(std::size_t dim) const;
  std::string name() const;  ///< "0", "1", "sqrt(d)", "2 sqrt(d)"
  /// Equal when multiple and ofRootDim are.
  bool operator==(const SweepScale&) const = default;
};
/// The scales of the same-token and distance experiments: 1, √d, 2√d.
std::vector<SweepScale> experimentScales();
/// The scales the decomposition sweeps: 0, 1, √d, 2√d (0 leaves positions only).
std::vector<SweepScale> decompositionScales();

/// One curve of an experiment, keyed by its encoding (and scale).
struct EncodingCurve {
  Encoding encoding = Encoding::Book;  ///< the encoding of the curve
  std::vector<double> values;          ///< index = position, distance or q
};
/// One curve of an experiment, keyed by its encoding and scale.
struct ScaledCurve {
  Encoding encoding = Encoding::Book;  ///< the encoding of the curve
  SweepScale scale;                    ///< the scale of the embeddings
  std::vector<double> values;          ///< index = position or distance
};

/// "sqrt", "none" or the number (the text Scale::parse reads back).
std::string toString(const Scale& scale);
/// How the study names a factor used at dimension `dim`: "sqrt(d)" for √d, else the number.
std::string scaleLabel(double factor, std::size_t dim);

/// Binary counting as the intuition for sinusoids: bit k of position p flips with
/// period 2^(k+1); the smooth wave w_k(x) = 0.5 - 0.5·cos(π(x - 2^(k-1))/2^k) has the
/// same period and crosses 0.5 where the bit flips (the bit of p covers [p, p+1)).
struct BinaryCounting {
  int samplesPerPosition = 8;  ///< wave samples per unit of x
  MatrixD bits;                ///< positions × bits, 0 or 1
  /// (positions·samplesPerPosition + 1) × bits, row r at x = r / samplesPerPosition
  MatrixD waves;
};
/// The bits of positions 0..positions-1 and their waves. ConfigError unless
/// 1 <= bits <= 30, positions > 0 and samplesPerPosition >= 1.
BinaryCounting binaryCounting(std::size_t positions, std::size_t bits, int samplesPerPosition = 8);

/// Where the combined similarity comes from. With x = s·a + PE[p] and
/// y = s·b + PE[q], x·y = s²·a·b + s·(a·PE[q] + PE[p]·b) + PE[p]·PE[q]: the three
/// shares below are those terms divided by x·y (they sum to 1).
struct Decomposition {
  std::size_t dim = 0;                 ///< d_model of the vectors and PE
  Encoding encoding = Encoding::Book;  ///< the encoding of PE
  SweepScale scale;                    ///< the scale s, as swept
  double factor = 0;                   ///< scale.factor(dim)
  double wordSimilarity = 0, positionalSimilarity = 0, combinedSimilarity = 0;
  /// \var wordSimilarity
  /// cos(a, b).
  /// \var positionalSimilarity
  /// cos(PE[p], PE[q]).
  /// \var combinedSimilarity
  /// cos(x, y).

  double wordShare = 0, crossShare = 0, positionalShare = 0;
  /// \var wordShare
  /// s²·a·b / x·y.
  /// \var crossShare
  /// s·(a·PE[q] + PE[p]·b) / x·y.
  /// \var positionalShare
  /// PE[p]·PE[q] / x·y.

  /// Mean of ‖a·s‖/‖PE[p]‖ and ‖b·s‖/‖PE[q]‖: > 1 means the words dominate.
  double normRatio = 0;
};
/// The decomposition of a at position pa and b at pb under `encoder`, with the
/// embeddings scaled by `scale`. InputError when a vector is not of the encoder's dim.
Decomposition decompose(const Eigen::RowVectorXf& a, std::int64_t pa, const Eigen::RowVectorXf& b,
                        std::int64_t pb, const PositionalEncoder& encoder, SweepScale scale);

/// The positional experiments of the study for the first pair of its words: pure
/// functions of the embeddings and the encodings (nothing is trained here).
struct ExperimentOptions {
  WordAt first, second;
  /// \var first
  /// The first word of the pair the experiments follow, with its position.
  /// \var second
  /// The second word of the pair, with its position.

  std::vector<Encoding> encodings;  ///< one curve (or decomposition row) per encoding, in order
  double base = PositionalOptions{}.base;  ///< the encodings' base
  std::size_t sameTokenPositions = 100;    ///< same-token curve: positions 0..this
  std::int64_t profilePosition = 1000;     ///< distance profile: the reference position p
  std::size_t profileLength = 2048;        ///< distance profile: q = 0..this-1
  std::size_t maxDistance = 64;            ///< combined similarity: distances 0..this
  std::size_t heatmapPositions = 100;      ///< heatmaps: rows 0..this-1 of PE
};

/// Everything positionalExperiments() computes, for the report's figures.
struct PositionalExperiments {
  /// Same token across positions: the word whose vector the curves use (`first`) ...
  std::string sameTokenWord;
  /// ... and its curves, per encoding × experimentScales().
  std::vector<ScaledCurve> sameToken;
  /// Distance profiles: the reference position ...
  std::int64_t profilePosition = 0;
  /// ... and cos(PE[profilePosition], PE[q]) over q, per encoding.
  std::vector<EncodingCurve> profiles;
  /// Combined similarity of `first` with `second` placed k after it, per encoding × scale.
  std::vector<ScaledCurve> combinedByDistance;
  /// The two layouts the study contrasts (book vs interleaved, at the requested base),
  /// positions × dims, for the heatmaps; and the plotted columns of peInterleaved.
  MatrixD peInterleaved, peBook;
  /// \var peInterleaved
  /// PE with the interleaved layout, heatmapPositions × d.
  /// \var peBook
  /// PE with the book layout, heatmapPositions × d.

  /// the plotted columns of peInterleaved (those of 0, 32, 64, 128 below d)
  std::vector<std::size_t> columns;
  BinaryCounting counting;  ///< binary counting over 32 positions, 5 bits
  /// Per dim (ascending), per encoding, per decompositionScales().
  std::vector<Decomposition> decompositions;
};

/// Every positional experiment for `embeddings`. The decomposition also uses
/// `extraDims` (the same words at other d_model). InputError when a word of the
/// pair is missing from one of the embeddings; ConfigError without encodings.
PositionalExperiments positionalExperiments(const Embeddings& embeddings,
                                            const ExperimentOptions& options,
                                            const std::vector<const Embeddings*>& extraDims = {});

}  // namespace posvec
