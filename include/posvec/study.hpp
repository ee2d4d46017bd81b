/// \file
/// The study as a stage: StudyOptions in, StudyResults out. runStudy trains (or
/// loads) the vectors, measures word, positional and combined similarity of words
/// placed in "The black cat sat on the couch and the brown dog slept on the rug.",
/// runs the positional-encoding experiments and, when asked, the training sweep
/// and the report. It never prints: progress goes to the observer, numbers come
/// back as values (the CLI and other front ends only parse, call and show).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "posvec/analysis.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/positional.hpp"
#include "posvec/study_results.hpp"
#include "posvec/train_config.hpp"
#include "posvec/trainer.hpp"

namespace posvec {

/// Every option of the study with its default (the CLI shows these in --help).
struct StudyOptions {
  /// Train on this text file, or use existing vectors (word2vec binary/text, .npy,
  /// posvec model); never both. Neither: train on the corpus shipped with posvec.
  std::string corpus;
  /// Existing vectors to use instead of training (see `corpus`).
  std::string vectors;
  /// Invalid UTF-8 in `corpus` becomes U+FFFD instead of stopping with an error.
  bool replaceInvalid = false;
  /// How `vectors` is read (unicode errors, limit, headerless text).
  LoadOptions vectorsLoad;
  /// The placed words; every pair (i < j) is measured, the first two drive the
  /// experiments. Positions are the rows of PE the words receive.
  std::vector<WordAt> pairs = {{"black", 2}, {"brown", 10}};
  /// The encodings measured, in order, each once (default book and interleaved).
  std::vector<Encoding> encodings = {Encoding::Book, Encoding::Interleaved};
  /// d_model trained. With `vectors`, 0 means "the vectors' dimension" and any
  /// other value must match it; when training, 0 means defaultDim().
  std::size_t dim = 0;
  Scale scale;                              ///< embedding scale before PE is added (√d)
  double base = PositionalOptions{}.base;   ///< the encodings' base (10000)
  std::uint64_t seed = TrainConfig{}.seed;  ///< training seed
  int epochs = TrainConfig{}.epochs;        ///< training epochs
  int threads = 1;                          ///< 1 keeps the numbers reproducible; 0: all cores
  /// Also train the report's extra models: the training sweep (epochs × corpus
  /// fractions) and smaller d_model for the decomposition. Only for trained
  /// corpora of at most sweepMaxTokens tokens. Implied by a reportDir.
  bool sweep = false;
  std::int64_t sweepMaxTokens = 300000;  ///< largest corpus (tokens) the sweep trains on
  std::vector<int> sweepEpochs = {1, 2, 5, 10, 20, 50};  ///< the sweep's epoch counts (each >= 1)
  /// the sweep's corpus fractions, in (0, 1]
  std::vector<double> sweepFractions = {0.1, 0.3, 1.0};
  std::vector<std::size_t> decompositionDims = {64, 128, 256, 512};  ///< those below dim train
  /// Also compare the paper's encoding, plain RoPE, each rotary scaling (linear, ntk,
  /// dynamic, yarn, llama3, longrope) at compareFactor and ALiBi (StudyResults::positions).
  bool comparePositions = false;
  std::int64_t compareContext = 4096;  ///< the original (training) context, >= 2
  double compareFactor = 8.0;          ///< the scaling factor, >= 1
  std::size_t alibiHeads = 8;          ///< heads whose ALiBi slopes are averaged, >= 1
  /// When not empty, runStudy writes the report (index.html, SVGs, results.json) here.
  std::string reportDir;

  /// The dimension trained when `dim` is 0: TrainConfig's default (512).
  static std::size_t defaultDim() { return TrainConfig{}.dim; }
  /// The training configuration runStudy uses (skip-gram, window 5, min-count 1).
  TrainConfig trainConfig() const;
  /// StudyOptionError for anything runStudy would refuse, before any work starts.
  void validate() const;
};

/// A refused study option: option() is the StudyOptions member it concerns
/// ("pairs", "encodings", "dim", "base", ...), so a front end can name its own flag.
class StudyOptionError : public ConfigError {
 public:
  /// `option` is the member's name ("training" for the training configuration as a
  /// whole), `message` what is wrong, without the option's spelling.
  StudyOptionError(std::string option, const std::string& message)
      : ConfigError(message), option_(std::move(option)) {}
  /// The StudyOptions member concerned: "vectors", "pairs", "encodings", "dim",
  /// "base", "sweepMaxTokens", "sweepFractions", "sweepEpochs" or "training".
  const std::string& option() const { return option_; }

 private:
  std::string option_;
};

/// What runStudy is doing, for a progress display.
struct StudyProgress {
  /// The stage of the study; the comment of each says which fields it sets.
  enum class Stage {
    ReadingCorpus,  ///< path, tokens so far
    Training,       ///< model, training (called a few times a second)
    Trained,        ///< model, epochs, seconds
    TrainingSweep,  ///< the report's sweep (no per-model progress)
    WritingReport   ///< path
  };
  Stage stage = Stage::ReadingCorpus;  ///< what is happening
  bool finished = false;               ///< the stage's last event
  std::string path;         ///< corpus (ReadingCorpus) or report directory (WritingReport)
  std::int64_t tokens = 0;  ///< corpus tokens read so far (ReadingCorpus)
  std::string model;        ///< "512-d", "64-d (decomposition)"
  TrainProgress training;   ///< the trainer's progress (Training)
  int epochs = 0;           ///< epochs trained (Trained)
  double seconds = 0;       ///< wall-clock seconds the training took (Trained)
};

/// Callbacks of runStudy(); called on the thread that called runStudy().
struct StudyObserver {
  std::function<void(const StudyProgress&)> progress;  ///< each progress event (may be empty)
};

/// The study end to end. Throws StudyOptionError (a ConfigError) for refused
/// options, IoError/FormatError for files, InputError for an empty corpus or a
/// word that is not in the vocabulary. Trains with options.threads threads; at
/// one thread (the default) the numbers are reproducible bit for bit.
StudyResults runStudy(const StudyOptions& options, const StudyObserver& observer = {});

}  // namespace posvec
