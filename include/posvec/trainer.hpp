// Trainer: word2vec from a corpus (skip-gram or CBOW, negative sampling or
// hierarchical softmax), OpenMP threads, progress and per-epoch loss reporting.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "posvec/corpus.hpp"
#include "posvec/embeddings.hpp"
#include "posvec/model_state.hpp"
#include "posvec/train_config.hpp"
#include "posvec/vocabulary.hpp"

namespace posvec {

struct TrainProgress {
  int epoch = 0;  // 1-based
  int epochs = 0;
  double fraction = 0;        // of all training, 0..1
  double wordsPerSecond = 0;  // wall clock (steady_clock), all threads
  double alpha = 0;           // current learning rate
  double loss = 0;            // running mean loss of the current epoch (NaN: no prediction yet)
  double etaSeconds = 0;
  std::int64_t wordsProcessed = 0;
};

struct EpochReport {
  int epoch = 0;
  // Mean loss of the epoch (summed in double, fixed merge order); NaN when the epoch
  // made no prediction (nothing was trained: too few words kept, or subsampled away).
  double loss = 0;
  std::int64_t words = 0;  // corpus words seen (before subsampling)
  // Of them, the words this run trained: fewer than `words` when the epoch was
  // resumed inside, so runWords / seconds is the speed of this run.
  std::int64_t runWords = 0;
  double seconds = 0;  // this run's time on the epoch
  // (context, centre) predictions trained in the epoch: skip-gram's pairs after
  // subsampling and window shrinking, the count the loss is averaged over.
  std::int64_t predictions = 0;
};

// The counting pass's outcome, before training: what min-count and max-vocab kept.
struct CorpusCounts {
  std::int64_t distinctWords = 0;  // distinct words in the corpus
  std::int64_t tokens = 0;         // corpus tokens
  std::int64_t keptWords = 0;      // the vocabulary's size
  std::int64_t keptTokens = 0;     // tokens of those words (what an epoch trains on)
};

// What TrainObserver::interrupt asks for at a safe point inside an epoch.
enum class Interrupt { None, Stop, Checkpoint };

struct TrainObserver {
  std::function<void(const TrainProgress&)>
      progress;  // called from one thread, a few times a second
  std::function<void(const EpochReport&)> epochEnd;
  std::function<void(const std::string&)> log;  // one-off lines (config, vocabulary size)
  // Asked before each epoch (the first included): true stops training there, with
  // the schedule of config.epochs kept, so resumeTraining continues it exactly.
  std::function<bool()> stopRequested;
  // Asked at every safe point inside an epoch (each time the calling thread has
  // trained about 10,000 more words, and a few times a second while it waits for
  // the other threads) and after each epoch, always on the thread that called
  // train(). Stop: every thread stops at its next safe point and training
  // returns with the model's `partial` recording where each thread was, so
  // resumeTraining finishes that epoch exactly (bitwise at one thread). Checkpoint:
  // the threads pause the same way, `checkpoint` gets that resumable state, and
  // training goes on unchanged.
  std::function<Interrupt()> interrupt;
  std::function<void(const ModelState&)> checkpoint;
  // After the counting pass, before training: the vocabulary, and the number of
  // sentences (word2vec.c counts them as the token "</s>").
  std::function<void(const Vocabulary&, std::int64_t sentences)> vocabulary;
  // After the counting pass of a new training (not a resumed one, not under MPI):
  // how much of the corpus the vocabulary kept, for a front end to warn about.
  std::function<void(const CorpusCounts&)> counted;
};

// What training needs in memory once the corpus is counted, in bytes (the
// counting table is gone by then; the id stream of a file corpus is on disk).
struct MemoryEstimate {
  std::size_t words = 0;         // vocabulary size
  std::uint64_t matrices = 0;    // input and output matrices
  std::uint64_t vocabulary = 0;  // words, counts, index, noise and subsampling tables
  std::uint64_t buffers = 0;     // per-thread scratch, an in-memory id stream
  std::uint64_t available = 0;   // physical memory, or POSVEC_MEMORY_LIMIT when set
  std::uint64_t total() const { return matrices + vocabulary + buffers; }
};
// Physical memory of the machine; the environment variable POSVEC_MEMORY_LIMIT
// (bytes, or with a K/M/G/T suffix) replaces it, to train in a fraction of a
// shared machine. Throws ConfigError on a malformed value.
std::uint64_t availableMemory();
// Counts the corpus (the vocabulary pass, nothing else) and estimates what
// train() would need for it.
MemoryEstimate estimateTrainingMemory(const CorpusSource& corpus, const TrainConfig& config);

// Builds the vocabulary and trains config.epochs epochs from scratch. Before the
// matrices are allocated it checks the memory estimate against availableMemory()
// and throws ConfigError naming --min-count, --max-vocab and --dim when training
// would not fit.
ModelState train(const CorpusSource& corpus, const TrainConfig& config,
                 const TrainObserver& observer = {});
// Same with a given vocabulary (e.g. readWord2vecVocabulary) instead of counting
// the corpus: its words below config.minCount are dropped and config.maxVocab
// applies; corpus words outside it are skipped.
ModelState train(const CorpusSource& corpus, const TrainConfig& config,
                 const Vocabulary& vocabulary, const TrainObserver& observer = {});
// Continues a model for `moreEpochs` epochs with the learning-rate schedule it
// would have had if trained for epochsDone + moreEpochs from the start. The
// model is updated in place (no second copy of the matrices); the corpus must
// be the one it was trained on for that promise to hold (other words are skipped).
// A model stopped inside an epoch (model.partial) finishes that epoch first; it
// counts as one of the `moreEpochs`.
void resumeTraining(ModelState& model, const CorpusSource& corpus, int moreEpochs,
                    const TrainObserver& observer = {});
// Epochs of the model's stored schedule not finished yet (the one it was stopped
// inside counts); 0 for a model that completed its schedule.
int epochsLeft(const ModelState& model);
// The input vectors as Embeddings (words, vectors, counts).
Embeddings embeddingsOf(const ModelState& model);

}  // namespace posvec
