// Trainer: word2vec from a corpus (skip-gram or CBOW, negative sampling or
// hierarchical softmax), OpenMP threads, progress and per-epoch loss reporting.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "posvec/embeddings.hpp"
#include "posvec/formats.hpp"
#include "posvec/tokenizer.hpp"
#include "posvec/train_config.hpp"

namespace posvec {

// Where the sentences come from: files (raw text through the tokenizer, or
// pre-tokenized whitespace-split lines), sentences already in memory, or a
// generator that hands sentences to a sink (e.g. a Python iterable).
class CorpusSource {
 public:
  // Called once, by the counting pass, on the thread that called train(); each
  // sentence is recorded as ids (in a temporary file) and dropped, so a generated
  // corpus is never held in memory. Exceptions it throws propagate.
  using Generator = std::function<void(const SentenceSink&)>;

  static CorpusSource fromFiles(std::vector<std::string> paths, bool pretokenized = false,
                                TokenizerOptions tokenizer = {});
  static CorpusSource fromSentences(std::vector<Sentence> sentences);
  static CorpusSource fromGenerator(Generator generate);

  const std::vector<std::string>& paths() const { return paths_; }
  bool pretokenized() const { return pretokenized_; }
  const TokenizerOptions& tokenizer() const { return tokenizer_; }
  const std::vector<Sentence>& sentences() const { return sentences_; }
  const Generator& generator() const { return generator_; }
  bool inMemory() const { return paths_.empty() && !generator_; }

 private:
  std::vector<std::string> paths_;
  bool pretokenized_ = false;
  TokenizerOptions tokenizer_;
  std::vector<Sentence> sentences_;
  Generator generator_;
};

struct TrainProgress {
  int epoch = 0;  // 1-based
  int epochs = 0;
  double fraction = 0;        // of all training, 0..1
  double wordsPerSecond = 0;  // wall clock (steady_clock), all threads
  double alpha = 0;           // current learning rate
  double loss = 0;            // running mean loss of the current epoch
  double etaSeconds = 0;
  std::int64_t wordsProcessed = 0;
};

struct EpochReport {
  int epoch = 0;
  double loss = 0;         // mean loss of the epoch (summed in double, fixed merge order)
  std::int64_t words = 0;  // corpus words seen (before subsampling)
  double seconds = 0;
};

struct TrainObserver {
  std::function<void(const TrainProgress&)>
      progress;  // called from one thread, a few times a second
  std::function<void(const EpochReport&)> epochEnd;
  std::function<void(const std::string&)> log;  // one-off lines (config, vocabulary size)
  // Asked before each epoch (the first included): true stops training there, with
  // the schedule of config.epochs kept, so resumeTraining continues it exactly.
  std::function<bool()> stopRequested;
};

// Builds the vocabulary and trains config.epochs epochs from scratch.
ModelState train(const CorpusSource& corpus, const TrainConfig& config,
                 const TrainObserver& observer = {});
// Continues a model for `moreEpochs` epochs with the learning-rate schedule it
// would have had if trained for epochsDone + moreEpochs from the start. The
// model is updated in place (no second copy of the matrices); the corpus must
// be the one it was trained on for that promise to hold (other words are skipped).
void resumeTraining(ModelState& model, const CorpusSource& corpus, int moreEpochs,
                    const TrainObserver& observer = {});
// The input vectors as Embeddings (words, vectors, counts).
Embeddings embeddingsOf(const ModelState& model);

}  // namespace posvec
