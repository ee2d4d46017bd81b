// posvec train, the parts its files share: the options as parsed, what run()
// settles before training (Plan), and the steps cmd_train.cpp runs in order
// (train_plan.cpp checks and prepares, train_report.cpp reports and writes).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "posvec/distributed.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/trainer.hpp"

namespace posvec::cli::training {

struct Options {
  std::vector<std::string> corpus;
  std::string output;
  std::string format;
  std::string resume;
  std::string saveModel;
  std::string checkpointEvery;
  std::string saveVocab;
  std::string readVocab;
  bool updateVocab = false;
  bool epochsGiven = false;
  bool alphaGiven = false;
  bool json = false;
  bool recursive = false;
  bool dryRun = false;
  std::string memoryLimit;
  bool alsoVec = false;  // --also-vec: FILE.vec beside a fastText .bin, as fastText writes
  std::string phrases;  // --phrases TABLE: a saved phrase table applied as the corpus is read
  // How the corpus is read: the rows of kTokenizerSettings but its threads and chunk
  // size are flags.
  TokenizerOptions tokenizer;
  TrainConfig config;
  SyncOptions sync;
  std::string npyDtype = "float32";
  bool weightsGiven = false;
  // Under mpirun: the options as parsed, but the thread count (the same on every rank).
  std::string sameOnEveryRank;
};

// --checkpoint-every: a duration ("90s", "10m", "2h") or a number of epochs ("2epochs").
struct CheckpointEvery {
  double seconds = 0;  // 0: not by time
  int epochs = 0;      // 0: not by epochs
};

// --subwords without --alpha: fastText's initial learning rate.
constexpr double kSubwordAlpha = 0.05;

// --format fasttext without subwords.
extern const char* const kFastTextNeedsSubwords;

// What run() settles before training: formats, paths, the corpus (and vocabulary).
struct Plan {
  VectorFormat format{};
  bool fastText = false;  // --format fasttext: fastText's .bin (format stays bin for the rest)
  std::string vecOutput;  // --also-vec: the .vec beside the .bin
  CheckpointEvery every;
  std::string checkpoint;
  std::optional<Vocabulary> vocabulary;
  CorpusSource corpus;
  CorpusSource whole;  // under mpirun: the whole corpus, before this rank's share
  std::uint64_t memoryLimit = 0;
  Bf16Update bf16Update = Bf16Update::Auto;
};

// train_plan.cpp
CheckpointEvery parseCheckpointEvery(const std::string& text);
// The command that continues from `checkpoint`.
std::string resumeCommand(const Options& o, const std::string& checkpoint);
// Everything that can be wrong before training, checked before the corpus is counted.
Plan prepare(const Options& o, Cluster* cluster, bool writer);
// Under mpirun: every rank prepares, and all agree on the first error.
Plan prepareTogether(const Options& o, Cluster& cluster, bool writer);
// Whether the run writes a model's full state besides its output.
bool writesState(const Options& o, const Plan& plan);
// Whether a new subword model's unused bucket rows can stay unheld (TrainConfig::deferRows).
bool rowsDeferred(const Options& o);

// train_report.cpp
// --dry-run: the memory estimate, nothing trained or written.
void printDryRun(const Options& o, const Plan& plan);
// Progress lines, epoch summaries and the vocabulary warning on stderr.
TrainObserver reportingObserver(const Options& o, bool quiet,
                                const std::shared_ptr<ProgressLine>& progressLine);
// Writes the vectors (and the full state where asked) and reports what was written.
void writeResults(const Options& o, ModelState& model, const Plan& plan, Cluster* cluster,
                  bool quiet, std::chrono::steady_clock::time_point start);

}  // namespace posvec::cli::training
