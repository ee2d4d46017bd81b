/// \file
/// StudyResults: everything the black/brown study computed, as plain values. It
/// sits between the study (which fills it, study.hpp) and the report (which draws
/// it, report.hpp), so the report does not depend on the stage that trains.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "posvec/analysis.hpp"
#include "posvec/attention.hpp"
#include "posvec/train_config.hpp"

namespace posvec {

/// Where the vectors came from and the settings the numbers were computed with.
struct StudySettings {
  std::string source;             ///< corpus or vectors file
  bool trained = false;           ///< true: trained here from `source`
  std::size_t dim = 0;            ///< d_model of the vectors
  std::string scaleName;          ///< scaleLabel(scale, dim): "sqrt(d)" or the number
  double scale = 0;               ///< factor actually used
  double base = 0;                ///< the encodings' base
  TrainConfig train;              ///< meaningful when trained
  std::size_t vocabulary = 0;     ///< words in the vectors' vocabulary
  std::int64_t corpusTokens = 0;  ///< tokens of the corpus trained on (0 with vectors)
  double trainSeconds = 0;        ///< wall-clock seconds training took (0 with vectors)
  /// Placed words that a fastText model's vocabulary lacks, their vectors built
  /// from character n-grams (in the order placed).
  std::vector<std::string> builtWords;
};

/// How the study's numbers move with training: the word similarity of the first
/// pair and its combined similarity under each of StudyResults::encodings (scale
/// √d) after training on the first `fraction` of the corpus for `epochs` epochs.
/// NaN when a word is not in that part of the corpus.
struct TrainingPoint {
  int epochs = 0;                          ///< epochs trained
  double fraction = 1;                     ///< share of the corpus trained on, in (0, 1]
  std::size_t sentences = 0;               ///< sentences in that share
  std::int64_t tokens = 0;                 ///< tokens in that share
  double wordSimilarity = 0;               ///< cos of the first pair's word vectors
  std::vector<double> combinedSimilarity;  ///< one per StudyResults::encodings, same order
};

/// One attention map of the study sentence (one head of one setting).
struct AttentionMapResult {
  std::string key;      ///< file stem: "attention-words", "attention-head-2", ...
  std::string setting;  ///< what was computed, in words
  PositionMode positional = PositionMode::None;  ///< how position entered
  bool causal = false, maskAfterSoftmax = false;
  /// \var causal
  /// True for a causal mask (AttentionOptions::causal).
  /// \var maskAfterSoftmax
  /// True for the mask applied after the softmax (AttentionOptions::maskAfterSoftmax).

  std::size_t head = 0, heads = 1;
  /// \var head
  /// The head this map belongs to, 0-based.
  /// \var heads
  /// The number of heads of the setting.

  MatrixD weights;              ///< T × T, row = query, column = key
  std::vector<double> rowSums;  ///< 1 except for the mask after the softmax
};

/// The attention section: maps of the study sentence through identity
/// projections (the raw similarity of the input rows) and a two-head example.
struct AttentionStudy {
  std::string sentence;                  ///< the sentence attended over (kStudySentence)
  std::vector<std::string> tokens;       ///< `<unk>` for words the vectors lack
  std::vector<AttentionMapResult> maps;  ///< every map, in page order
  std::string repeatedWord;              ///< the most repeated token ("the")
  std::vector<std::size_t> repeatedAt;   ///< its positions
  /// Largest |difference| between the rows of the repeated word's occurrences,
  /// with word vectors only: 0, the rows are identical.
  double repeatedRowsDiffWords = 0;
  double repeatedRowsDiffAdditive = 0;  ///< the same with additive encodings: they differ
};

/// One method of the comparison of positions (StudyOptions::comparePositions): how
/// similar two positions are against their distance, and the study pair under it.
struct PositionMethod {
  std::string
      name;  ///< "paper", "rope", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "alibi"
  /// What `near` and `far` hold: for "paper" the cosine of PE rows; for the rotary
  /// methods mean_cos(k) = (2/d)·Σ cos(k·θᵢ) (dynamic and longrope with the
  /// frequencies for a sequence of k + 1 tokens); for "alibi" the mean over heads of
  /// exp(−m_h·k), the factor its bias puts on an attention weight k positions away.
  std::string measure;
  double attentionFactor = 1;        ///< rotary: multiplies cos and sin
  std::vector<double> nearDistance;  ///< 0, 1, ..., nearMax
  std::vector<double> near;          ///< the measure at each of nearDistance
  std::vector<double> farDistance;  ///< about 160 log-spaced distances, 1 .. 8 × context
  std::vector<double> far;          ///< the measure at each of farDistance
  double pairPositional = 0;  ///< the measure at the study pair's distance
  /// The pair's words with their positions: "paper" cos(e_a·s + PE[p_a], e_b·s + PE[p_b]);
  /// rotary cos(R_{p_a} e_a, R_{p_b} e_b) (the rotary score of the two word vectors,
  /// normalised); NaN for ALiBi, which leaves the vectors alone.
  double pairCombined = 0;
  double atContext = 0;  ///< the measure at distance = context
  double maxBeyond = 0;  ///< its largest value over distances in (context, 8 × context]
  /// Rotary and paper: rotation pairs that reach, at 8 × context, angles their
  /// unscaled frequencies never reached within the context (pairs that turned less
  /// than once in training). −1 for ALiBi.
  std::int64_t unseenPairs = 0;
};

/// A model of the comparison (StudyOptions::compareModels) at its own rotated size,
/// rope_theta and context, or its unscaled twin (the same size and theta, the default
/// rule): how similar two positions are against their distance, out to 8 × its
/// max_position_embeddings.
struct ModelPositions {
  std::string name;                 ///< the model's name; "<name> unscaled" for its twin
  std::string rule;                 ///< rope_type
  std::size_t dim = 0;              ///< rotated size
  double base = 0;                  ///< rope_theta
  std::int64_t context = 0;         ///< the original (pre-training) context
  std::int64_t maxPosition = 0;     ///< max_position_embeddings
  double attentionFactor = 1;       ///< multiplies cos and sin
  std::vector<double> farDistance;  ///< about 160 log-spaced distances, 1 .. 8 × maxPosition
  std::vector<double> far;          ///< mean_cos(k) at each (dynamic and longrope: k + 1 tokens)
  double pairPositional = 0;        ///< mean_cos at the study pair's distance
  /// cos(R_{p_a} e_a, R_{p_b} e_b) with these frequencies on the first `dim` columns of the
  /// study's word vectors; NaN when the rotated size exceeds the vectors'.
  double pairCombined = 0;
  double atContext = 0;  ///< mean_cos at the original context
  double atMax = 0;      ///< mean_cos at max_position_embeddings
  double maxBeyond = 0;  ///< its largest value over distances in (maxPosition, 8 × maxPosition]
  /// Rotation pairs that reach, at maxPosition (the context the model claims), angles the
  /// unscaled frequencies never reached within the original context.
  std::int64_t unseenPairs = 0;
};

/// The comparison of positions as models use them today (posvec study --compare-positions).
struct PositionComparison {
  std::int64_t context = 0;  ///< the original (training) context the scalings extend
  double factor = 0;         ///< the scaling methods' factor
  std::size_t dim = 0;       ///< rotated size = the study's d_model
  double base = 0;           ///< the rotary and sinusoidal frequencies' base
  std::size_t alibiHeads = 0;  ///< heads whose ALiBi slopes are averaged
  std::int64_t pairDistance = 0;  ///< |p_b − p_a| of the study pair
  std::size_t nearMax = 64;  ///< the largest distance of the near curves
  std::vector<PositionMethod> methods;  ///< empty unless the comparison ran
  std::vector<ModelPositions> models;   ///< each compared model, then its unscaled twin
};

/// Everything the study computed (runStudy()), as plain values for the report.
struct StudyResults {
  StudySettings settings;               ///< where the vectors came from, the settings used
  std::vector<WordAt> words;            ///< the placed words; the first two drive the experiments
  std::vector<Encoding> encodings;      ///< as requested, in order
  std::vector<PairSimilarity> pairs;    ///< every pair (i < j) of words, per encoding
  PositionalExperiments experiments;    ///< the positional-encoding experiments
  std::vector<TrainingPoint> training;  ///< empty unless the training sweep ran
  AttentionStudy attention;             ///< the attention section
  PositionComparison positions;         ///< empty methods unless StudyOptions::comparePositions
};

}  // namespace posvec
