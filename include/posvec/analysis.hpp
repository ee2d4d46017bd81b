// Analysis: the numbers of the black/brown similarity study (word, positional and
// combined cosine similarity of words placed in a sentence) and of the experiments
// that explain sinusoidal positional encodings. Pure computation: it never prints
// and writes no files (the report module draws what these functions return).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "posvec/embeddings.hpp"
#include "posvec/positional.hpp"
#include "posvec/trainer.hpp"
#include "posvec/types.hpp"

namespace posvec {

// The study's sentence. Positions are 1-based word positions ("The" is 1), and
// they are the indices the study passes to PE: black is PE[2], brown is PE[10].
inline constexpr const char* kStudySentence =
    "The black cat sat on the couch and the brown dog slept on the rug.";
// The words of kStudySentence, lowercased, in order (the full stop is position 16).
const std::vector<std::string>& studySentenceWords();

// A word placed at a position (the row of PE it receives).
struct WordAt {
  std::string word;
  std::int64_t position = 0;
};
// "black:2" -> {"black", 2}. ConfigError (naming `text`) for a missing colon, an
// empty word, or a position that is not a non-negative integer.
WordAt parseWordAt(const std::string& text);
std::string toString(const WordAt& w);  // "black:2"

// The study's three numbers for one pair of placed words under one encoding.
struct PairSimilarity {
  WordAt a, b;
  Encoding encoding = Encoding::Book;
  double scale = 1;       // the factor embeddings are multiplied by (√d by default)
  double word = 0;        // cos(e_a, e_b)
  double positional = 0;  // cos(PE[p_a], PE[p_b])
  double combined = 0;    // cos(e_a·scale + PE[p_a], e_b·scale + PE[p_b])
};

// cos(a·scale + PE[pa], b·scale + PE[pb]), in double. The vectors' size must be
// the encoder's dim (InputError otherwise).
double combinedSimilarity(const Eigen::RowVectorXf& a, std::int64_t pa, const Eigen::RowVectorXf& b,
                          std::int64_t pb, const PositionalEncoder& encoder, double scale);

// Every pair (i < j) of `words`, for each encoding in turn, with PE of the
// embeddings' dimension. InputError for a word missing from the vocabulary.
std::vector<PairSimilarity> studySimilarities(const Embeddings& embeddings,
                                              const std::vector<WordAt>& words,
                                              const std::vector<Encoding>& encodings, Scale scale,
                                              double base = 10000.0);

// Same token at different positions: cos(x_0, x_k) for k = 0..maxPosition, where
// x_k = e·scale + PE[k]. Element 0 is 1 by definition.
std::vector<double> sameTokenAcrossPositions(const Eigen::RowVectorXf& e,
                                             const PositionalEncoder& encoder, double scale,
                                             std::size_t maxPosition);

// Similarity versus distance: cos(PE[p], PE[q]) for q = 0..len-1.
std::vector<double> distanceProfile(const PositionalEncoder& encoder, std::int64_t p,
                                    std::size_t len);

// Combined similarity of a at p and b at p + k, for k = 0..maxDistance.
std::vector<double> combinedVsDistance(const Eigen::RowVectorXf& a, const Eigen::RowVectorXf& b,
                                       std::int64_t p, std::size_t maxDistance,
                                       const PositionalEncoder& encoder, double scale);

// Binary counting as the intuition for sinusoids: bit k of position p flips with
// period 2^(k+1); the smooth wave w_k(x) = 0.5 - 0.5·cos(π(x - 2^(k-1))/2^k) has the
// same period and crosses 0.5 where the bit flips (the bit of p covers [p, p+1)).
struct BinaryCounting {
  int samplesPerPosition = 8;
  MatrixD bits;   // positions × bits, 0 or 1
  MatrixD waves;  // (positions·samplesPerPosition + 1) × bits, row r at x = r / samplesPerPosition
};
BinaryCounting binaryCounting(std::size_t positions, std::size_t bits, int samplesPerPosition = 8);

// Where the combined similarity comes from. With x = s·a + PE[p] and
// y = s·b + PE[q], x·y = s²·a·b + s·(a·PE[q] + PE[p]·b) + PE[p]·PE[q]: the three
// shares below are those terms divided by x·y (they sum to 1).
struct Decomposition {
  std::size_t dim = 0;
  Encoding encoding = Encoding::Book;
  std::string scaleName;  // "0", "1", "sqrt(d)", "2 sqrt(d)": 0 leaves positions only
  double scale = 0;       // the factor
  double word = 0, positional = 0, combined = 0;
  double wordShare = 0, crossShare = 0, positionalShare = 0;
  // Mean of ‖a·s‖/‖PE[p]‖ and ‖b·s‖/‖PE[q]‖: > 1 means the words dominate.
  double normRatio = 0;
};
Decomposition decompose(const Eigen::RowVectorXf& a, std::int64_t pa, const Eigen::RowVectorXf& b,
                        std::int64_t pb, const PositionalEncoder& encoder,
                        const std::string& scaleName, double scale);
// The scales the decomposition sweeps for dimension d: 0, 1, √d, 2√d (names as above).
std::vector<std::pair<std::string, double>> decompositionScales(std::size_t dim);

// How the study's numbers move with training: word similarity and combined
// similarity (book and interleaved, scale √d) after training `config` on the first
// `fraction` of `sentences` for `epochs` epochs. NaN when a word is not in that
// part of the corpus.
struct TrainingPoint {
  int epochs = 0;
  double fraction = 1;
  std::size_t sentences = 0;
  std::int64_t tokens = 0;
  double word = 0, combinedBook = 0, combinedInterleaved = 0;
};
std::vector<TrainingPoint> trainingSweep(const std::vector<Sentence>& sentences,
                                         const TrainConfig& config, const WordAt& a,
                                         const WordAt& b, const std::vector<int>& epochs,
                                         const std::vector<double>& fractions);

// Everything the report shows, computed by runExperiments.
struct StudySettings {
  std::string source;    // corpus or vectors file
  bool trained = false;  // true: trained here from `source`
  std::size_t dim = 512;
  std::string scaleName = "sqrt";
  double scale = 0;  // factor actually used
  double base = 10000.0;
  TrainConfig train;  // meaningful when trained
  std::size_t vocabulary = 0;
  std::int64_t corpusTokens = 0;
  double trainSeconds = 0;
};

struct NamedCurve {
  std::string label;
  std::vector<double> values;  // index = position, distance or q
};

struct StudyResults {
  StudySettings settings;
  std::vector<WordAt> words;
  std::vector<PairSimilarity> pairs;  // per pair, per encoding
  // Same token across positions (first word of the study), by encoding × scale.
  std::string sameTokenWord;
  std::vector<NamedCurve> sameToken;
  // cos(PE[p], PE[q]) over q, by encoding.
  std::int64_t profilePosition = 1000;
  std::vector<NamedCurve> profiles;
  // Combined similarity of the first pair's words with the second k after the first.
  std::vector<NamedCurve> combinedByDistance;
  // PE matrices (positions × dims) for the heatmap, and the sinusoid columns.
  MatrixD peInterleaved, peBook;
  std::vector<std::size_t> columns;  // selected columns of peInterleaved
  BinaryCounting counting;
  std::vector<Decomposition> decompositions;  // first pair: per dim, per encoding, per scale
  std::vector<TrainingPoint> training;        // filled by the caller (needs the corpus)
};

struct ExperimentOptions {
  std::vector<WordAt> words;  // at least two; the first pair drives the experiments
  std::vector<Encoding> encodings = {Encoding::Book, Encoding::Interleaved};
  Scale scale;  // for the study table
  double base = 10000.0;
  std::size_t sameTokenPositions = 100;
  std::int64_t profilePosition = 1000;
  std::size_t profileLength = 2048;
  std::size_t maxDistance = 64;
  std::size_t heatmapPositions = 100;
};

// The study table and every positional experiment for `embeddings`. The
// decomposition uses `extraDims` (trained at other d_model, each with the same
// words) besides `embeddings` itself.
StudyResults runExperiments(const Embeddings& embeddings, const ExperimentOptions& options,
                            const std::vector<const Embeddings*>& extraDims = {});

}  // namespace posvec
