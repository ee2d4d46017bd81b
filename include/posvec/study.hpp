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

/// A model's rotary configuration for the comparison of positions (its config.json),
/// with the name the table and the report show.
struct ComparedModel {
  std::string name;  ///< e.g. the config file's name
  RopeConfig config;  ///< its rotary configuration (readRopeConfig)
};

/// Every option of the study with its default (the CLI shows these in --help).
struct StudyOptions {
  /// Train on this text file, or use existing vectors (word2vec binary/text, .npy,
  /// posvec model); never both. Neither: train on the corpus shipped with posvec.
  std::string corpus;
  /// Existing vectors to use instead of training (see `corpus`).
  std::string vectors;
  /// Invalid UTF-8 in `corpus` becomes U+FFFD instead of stopping with an error.
  bool replaceInvalid = false;
  /// A phrase table (`posvec phrases --save-table`, readPhraseTable) whose phrases are
  /// joined in the corpus's sentences as they are read, so a placed word may be one
  /// ("new_york@3"); only with a corpus to train on.
  std::string phrases;
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
  /// Models whose rotary rules the comparison adds, each at its own rotated size,
  /// rope_theta and context (StudyResults::positions.models); needs comparePositions.
  std::vector<ComparedModel> compareModels;
  /// When not empty, runStudy writes the report (index.html, SVGs, results.json) here.
  std::string reportDir;

  /// The dimension trained when `dim` is 0: TrainConfig's default (512).
  static std::size_t defaultDim() { return TrainConfig{}.dim; }
  /// The training configuration runStudy uses (skip-gram, window 5, min-count 1).
  TrainConfig trainConfig() const;
  /// StudyOptionError for anything runStudy would refuse, before any work starts.
  void validate() const;
};

/// The settings of StudyOptions, one row each (settings.hpp). A row's name is its
/// member's, prefixed "study" where another table has the name (studyDim, studySeed,
/// studyEpochs, studyThreads, studyReplaceInvalid); "training" names the training
/// configuration as a whole. The CLI registers the flags of the rows without
/// customFlag from here; Python's study() passes the keywords.
inline constexpr auto kStudySettings = std::tuple{
    SettingRow<StudyOptions, std::string>{.member = &StudyOptions::corpus,
                                          .setting = {"corpus", "the corpus"},
                                          .spelled = {.flag = "--corpus", .keyword = "corpus"},
                                          .customFlag = true},
    SettingRow<StudyOptions, std::string>{.member = &StudyOptions::vectors,
                                          .setting = {"vectors", "the vectors"},
                                          .spelled = {.flag = "--vectors", .keyword = "vectors"},
                                          .customFlag = true},
    SettingRow<StudyOptions, bool>{
        .member = &StudyOptions::replaceInvalid,
        .setting = {"studyReplaceInvalid", "the replace-invalid option"},
        .spelled = {.flag = "--replace-invalid"},
        .help = "--corpus: replace invalid UTF-8 with U+FFFD instead of stopping with an error"},
    SettingRow<StudyOptions, std::string>{
        .member = &StudyOptions::phrases,
        .setting = {"studyPhrases", "the phrase table"},
        .spelled = {.flag = "--phrases", .keyword = "phrases"},
        .help = "A phrase table (posvec phrases --save-table): its phrases are joined in the "
                "corpus as it is read, so --pair may name one (new_york@3)"},
    SettingRow<StudyOptions, std::vector<WordAt>>{.member = &StudyOptions::pairs,
                                                  .setting = {"pairs", "the placed words"},
                                                  .spelled = {.flag = "--pair", .keyword = "pairs"},
                                                  .customFlag = true},
    SettingRow<StudyOptions, std::vector<Encoding>>{
        .member = &StudyOptions::encodings,
        .setting = {"encodings", "the encodings"},
        .spelled = {.flag = "--encoding", .keyword = "encodings"},
        .customFlag = true},
    SettingRow<StudyOptions, std::size_t>{.member = &StudyOptions::dim,
                                          .setting = {"studyDim", "d_model"},
                                          .spelled = {.flag = "--dim", .keyword = "dim"},
                                          .customFlag = true},
    SettingRow<StudyOptions, Scale>{.member = &StudyOptions::scale,
                                    .setting = {"scale", "the embedding scale"},
                                    .spelled = {.flag = "--scale", .keyword = "scale"},
                                    .customFlag = true},
    SettingRow<StudyOptions, double>{.member = &StudyOptions::base,
                                     .setting = {"base", "the base"},
                                     .spelled = {.flag = "--base", .keyword = "base"},
                                     .help = "Base of the encoding's frequencies"},
    SettingRow<StudyOptions, std::uint64_t>{.member = &StudyOptions::seed,
                                            .setting = {"studySeed", "the training seed"},
                                            .spelled = {.flag = "--seed", .keyword = "seed"},
                                            .help = "Training seed"},
    SettingRow<StudyOptions, int>{.member = &StudyOptions::epochs,
                                  .setting = {"studyEpochs", "training epochs"},
                                  .spelled = {.flag = "--epochs", .keyword = "epochs"},
                                  .help = "Training epochs"},
    SettingRow<StudyOptions, int>{
        .member = &StudyOptions::threads,
        .setting = {"studyThreads", "training threads"},
        .spelled = {.flag = "--threads", .keyword = "workers", .alias = "-t"},
        .help = "Training threads (0: all cores; 1 keeps the numbers reproducible)"},
    SettingRow<StudyOptions, bool>{.member = &StudyOptions::sweep,
                                   .setting = {"sweep", "the training sweep"},
                                   .spelled = {.keyword = "sweep"}},
    SettingRow<StudyOptions, std::int64_t>{
        .member = &StudyOptions::sweepMaxTokens,
        .setting = {"sweepMaxTokens", "the training sweep's largest corpus"},
        .bounds = atLeast(0)},
    SettingRow<StudyOptions, std::vector<int>>{.member = &StudyOptions::sweepEpochs,
                                               .setting = {"sweepEpochs", "the sweep's epochs"}},
    SettingRow<StudyOptions, std::vector<double>>{
        .member = &StudyOptions::sweepFractions,
        .setting = {"sweepFractions", "the sweep's corpus fractions"}},
    SettingRow<StudyOptions, std::vector<std::size_t>>{
        .member = &StudyOptions::decompositionDims,
        .setting = {"decompositionDims", "the decomposition's dimensions"}},
    SettingRow<StudyOptions, bool>{
        .member = &StudyOptions::comparePositions,
        .setting = {"comparePositions", "the position comparison"},
        .spelled = {.flag = "--compare-positions"},
        .help = "Also compare positions as models use them today: the paper's encoding, plain "
                "RoPE, linear, ntk, dynamic, yarn, llama3 and longrope scaling, and ALiBi (a "
                "table, JSON position_comparison, report figures)"},
    SettingRow<StudyOptions, std::int64_t>{
        .member = &StudyOptions::compareContext,
        .setting = {"compareContext", "the compared context"},
        .spelled = {.flag = "--compare-context"},
        .help = "The original (training) context the scalings extend; distances run to 8x it",
        .bounds = between(2, 1099511627776.0L, {}, "2^40 positions at most")},
    SettingRow<StudyOptions, double>{.member = &StudyOptions::compareFactor,
                                     .setting = {"compareFactor", "the compared scaling factor"},
                                     .spelled = {.flag = "--compare-factor"},
                                     .help = "The scaling methods' factor",
                                     .bounds = between(1, 1e6)},
    SettingRow<StudyOptions, std::size_t>{.member = &StudyOptions::alibiHeads,
                                          .setting = {"alibiHeads", "ALiBi's head count"},
                                          .spelled = {.flag = "--alibi-heads"},
                                          .help = "Heads whose ALiBi slopes are averaged",
                                          .bounds = between(1, 4096)},
    SettingRow<StudyOptions, std::string>{
        .member = &StudyOptions::reportDir,
        .setting = {"reportDir", "the report directory"},
        .spelled = {.flag = "--report", .keyword = "report"},
        .help = "Write index.html, one SVG per figure and results.json into this directory"},
};

/// What the study's messages name besides its rows: the training configuration as a
/// whole (its dimension, epochs, seed and threads together).
inline constexpr auto kStudyArguments = std::tuple{
    ArgumentRow{.setting = {"training", "the training settings"},
                .spelled = {.flagInText = "--dim/--epochs/--seed/--threads",
                            .keywordInText = "dim/epochs/seed/workers"}},
};

/// A refused study option: option() names its row of kStudySettings (or
/// kStudyArguments' "training"), which Error::about() also gives, so a front end
/// can put its own spelling in front.
class StudyOptionError : public ConfigError {
 public:
  /// `option` is the row's name ("training" for the training configuration as a
  /// whole), `message` what is wrong, without the option's spelling.
  StudyOptionError(std::string option, const std::string& message)
      : ConfigError(ErrorText::about(Setting{option, {}}, message)), option_(std::move(option)) {}
  /// A range error of a row (checkSettings), kept with what it names.
  explicit StudyOptionError(const ConfigError& e) : ConfigError(e), option_(e.about()) {}
  /// The row concerned: "vectors", "pairs", "encodings", "studyDim", "base",
  /// "compareContext", "sweepMaxTokens", "sweepFractions", "sweepEpochs", "training"...
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
