// StudyResults: everything the black/brown study computed, as plain values. It
// sits between the study (which fills it, study.hpp) and the report (which draws
// it, report.hpp), so the report does not depend on the stage that trains.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "posvec/analysis.hpp"
#include "posvec/train_config.hpp"

namespace posvec {

// Where the vectors came from and the settings the numbers were computed with.
struct StudySettings {
  std::string source;    // corpus or vectors file
  bool trained = false;  // true: trained here from `source`
  std::size_t dim = 0;
  std::string scaleName;  // scaleLabel(scale, dim): "sqrt(d)" or the number
  double scale = 0;       // factor actually used
  double base = 0;
  TrainConfig train;  // meaningful when trained
  std::size_t vocabulary = 0;
  std::int64_t corpusTokens = 0;
  double trainSeconds = 0;
};

// How the study's numbers move with training: the word similarity of the first
// pair and its combined similarity under each of StudyResults::encodings (scale
// √d) after training on the first `fraction` of the corpus for `epochs` epochs.
// NaN when a word is not in that part of the corpus.
struct TrainingPoint {
  int epochs = 0;
  double fraction = 1;
  std::size_t sentences = 0;
  std::int64_t tokens = 0;
  double wordSimilarity = 0;
  std::vector<double> combinedSimilarity;  // one per StudyResults::encodings, same order
};

struct StudyResults {
  StudySettings settings;
  std::vector<WordAt> words;          // the placed words; the first two drive the experiments
  std::vector<Encoding> encodings;    // as requested, in order
  std::vector<PairSimilarity> pairs;  // every pair (i < j) of words, per encoding
  PositionalExperiments experiments;
  std::vector<TrainingPoint> training;  // empty unless the training sweep ran
};

}  // namespace posvec
