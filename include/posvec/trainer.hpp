/// \file
/// Trainer: word2vec from a corpus (skip-gram or CBOW, negative sampling or
/// hierarchical softmax), OpenMP threads, progress and per-epoch loss reporting.
///
/// Threads: train() and resumeTraining() run config.threads OpenMP threads
/// (Hogwild updates of the shared matrices) and return when all are done; every
/// observer callback runs on the thread that called them. Reproducibility: the
/// initial matrix depends on the seed only (never on the thread count); at one
/// thread the same corpus, configuration and seed give bitwise identical vectors.
/// Separate calls may run concurrently on separate models.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "posvec/corpus.hpp"
#include "posvec/embeddings.hpp"
#include "posvec/memory_estimate.hpp"
#include "posvec/model_state.hpp"
#include "posvec/train_config.hpp"
#include "posvec/vocabulary.hpp"

namespace posvec {

/// A progress snapshot for TrainObserver::progress.
struct TrainProgress {
  int epoch = 0;              ///< current epoch, 1-based
  int epochs = 0;             ///< epochs in this run's schedule
  double fraction = 0;        ///< of all training, 0..1
  double wordsPerSecond = 0;  ///< corpus words per second, wall clock (steady_clock), all threads
  double alpha = 0;           ///< current learning rate
  double loss = 0;            ///< running mean loss of the current epoch (NaN: no prediction yet)
  double etaSeconds = 0;      ///< estimated seconds until training ends
  std::int64_t wordsProcessed = 0;  ///< corpus words trained so far (before subsampling)
};

/// What one finished epoch did, for TrainObserver::epochEnd.
struct EpochReport {
  int epoch = 0;  ///< 1-based epoch number in the model's schedule
  /// Mean loss of the epoch (summed in double, fixed merge order); NaN when the epoch
  /// made no prediction (nothing was trained: too few words kept, or subsampled away).
  double loss = 0;
  std::int64_t words = 0;  ///< corpus words seen (before subsampling)
  /// Of them, the words this run trained: fewer than `words` when the epoch was
  /// resumed inside, so runWords / seconds is the speed of this run.
  std::int64_t runWords = 0;
  double seconds = 0;  ///< this run's wall-clock time on the epoch, in seconds
  /// (context, centre) predictions trained in the epoch: skip-gram's pairs after
  /// subsampling and window shrinking, the count the loss is averaged over.
  std::int64_t predictions = 0;
};

/// The counting pass's outcome, before training: what min-count and max-vocab kept.
struct CorpusCounts {
  std::int64_t distinctWords = 0;  ///< distinct words in the corpus
  std::int64_t tokens = 0;         ///< corpus tokens
  std::int64_t keptWords = 0;      ///< the vocabulary's size
  std::int64_t keptTokens = 0;     ///< tokens of those words (what an epoch trains on)
};

/// What TrainObserver::interrupt asks for at a safe point inside an epoch.
enum class Interrupt { None, Stop, Checkpoint };
/// \var Interrupt::None
/// Go on training.
/// \var Interrupt::Stop
/// Stop every thread at its next safe point and return the resumable state.
/// \var Interrupt::Checkpoint
/// Pause every thread, hand the resumable state to TrainObserver::checkpoint, go on.

/// Callbacks of train() and resumeTraining(); every one is optional (empty) and
/// runs on the thread that called train(). An exception a callback throws stops
/// training and propagates.
struct TrainObserver {
  std::function<void(const TrainProgress&)>
      progress;  ///< called from one thread, a few times a second
  /// After each epoch, with its report.
  std::function<void(const EpochReport&)> epochEnd;
  std::function<void(const std::string&)> log;  ///< one-off lines (config, vocabulary size)
  /// Asked before each epoch (the first included): true stops training there, with
  /// the schedule of config.epochs kept, so resumeTraining continues it exactly.
  std::function<bool()> stopRequested;
  /// Asked at every safe point inside an epoch (each time the calling thread has
  /// trained about 10,000 more words, and a few times a second while it waits for
  /// the other threads) and after each epoch, always on the thread that called
  /// train(); inside an epoch, before the progress report of the same safe point.
  /// Stop: every thread stops at its next safe point and training
  /// returns with the model's `partial` recording where each thread was, so
  /// resumeTraining finishes that epoch exactly (bitwise at one thread). Checkpoint:
  /// the threads pause the same way, `checkpoint` gets that resumable state, and
  /// training goes on unchanged.
  std::function<Interrupt()> interrupt;
  /// Receives the resumable state when interrupt() asks for a Checkpoint (the
  /// reference is valid during the call only; copy or save it there).
  std::function<void(const ModelState&)> checkpoint;
  /// After the counting pass, before training: the vocabulary, and the number of
  /// sentences (word2vec.c counts them as the token "</s>").
  std::function<void(const Vocabulary&, std::int64_t sentences)> vocabulary;
  /// After the counting pass of a new training (not a resumed one, not under MPI):
  /// how much of the corpus the vocabulary kept, for a front end to warn about.
  std::function<void(const CorpusCounts&)> counted;
};

/// Builds the vocabulary and trains config.epochs epochs from scratch. Before the
/// matrices are allocated it checks the memory estimate against the memory
/// available (MemoryEstimate::available) and throws ConfigError naming the
/// minimum count, the vocabulary limit and the dimension when training would not fit.
/// \returns the trained state (ModelState::partial set when the observer stopped it).
/// \throws ConfigError for an invalid `config`; IoError for an unreadable corpus
///         file; InputError for invalid UTF-8, an empty corpus or one where no word
///         reaches config.minCount; whatever an observer callback throws.
ModelState train(const CorpusSource& corpus, const TrainConfig& config,
                 const TrainObserver& observer = {});
/// Same with a given vocabulary (e.g. readWord2vecVocabulary) instead of counting
/// the corpus: its words below config.minCount are dropped and config.maxVocab
/// applies; corpus words outside it are skipped. InputError when `vocabulary` is
/// not sorted by count.
ModelState train(const CorpusSource& corpus, const TrainConfig& config,
                 const Vocabulary& vocabulary, const TrainObserver& observer = {});
/// Continues a model for `moreEpochs` epochs with the learning-rate schedule it
/// would have had if trained for epochsDone + moreEpochs from the start. The
/// model is updated in place (no second copy of the matrices); the corpus must
/// be the one it was trained on for that promise to hold (other words are skipped).
/// A model stopped inside an epoch (model.partial) finishes that epoch first; it
/// counts as one of the `moreEpochs`.
/// \throws ConfigError for `moreEpochs` outside 1..100000; FormatError when the
///         model's stored configuration or state is invalid; InputError when a
///         model stopped inside an epoch is given another corpus.
void resumeTraining(ModelState& model, const CorpusSource& corpus, int moreEpochs,
                    const TrainObserver& observer = {});
/// A model with a vocabulary and no training yet (0 epochs done): the input rows
/// initialised as train() initialises them, the output weights zero. `vocabulary`
/// is kept as given (most frequent first, as Vocabulary requires); config.minCount
/// and config.maxVocab are not applied. resumeTraining trains it.
ModelState initialModel(const Vocabulary& vocabulary, const TrainConfig& config);
/// Grows a model's vocabulary for further training on new text (gensim's
/// build_vocab(update=True)): each (word, count) adds `count` to a known word's
/// count and appends an unknown word, whose input row is initialised as the trainer
/// initialises row `old size + k` (k-th new word) and whose output row starts at
/// zero. The vocabulary is then re-sorted by count (ties keep their order, new words
/// after old ones) with the rows of both matrices moved along, so the noise
/// distribution and the Huffman tree the next resumeTraining builds cover the new
/// words; known words keep their trained vectors. Hierarchical softmax's output
/// rows are inner nodes of that tree: the old ones are kept, new ones start at zero.
/// \returns the number of words added.
/// \throws ConfigError for a model stopped inside an epoch (finish the epoch first);
///         InputError for an empty word or a count < 1.
std::size_t extendVocabulary(ModelState& model, const std::vector<std::string>& words,
                             const std::vector<std::int64_t>& counts);
/// extendVocabulary with the words of a corpus (resume with new text): counts the
/// corpus, adds each known word's count to it and appends the words the model does
/// not know that occur at least its minimum count times. Returns the number added.
std::size_t extendVocabulary(ModelState& model, const CorpusSource& corpus);
/// Epochs of the model's stored schedule not finished yet (the one it was stopped
/// inside counts); 0 for a model that completed its schedule. FormatError when
/// the stored configuration cannot be read.
int epochsLeft(const ModelState& model);
/// The input vectors as Embeddings (words, vectors, counts); copies the matrix. A
/// subword model's vectors are its words' composed ones (placed or not: placeRows).
Embeddings embeddingsOf(const ModelState& model);
/// Completes a model trained with TrainConfig::deferRows: its words' rows copied into
/// `input` and the rows no word uses drawn there (the values train() without deferRows
/// gives); ModelState::unplacedRows is cleared. Nothing to do for any other model.
void placeRows(ModelState& model);

}  // namespace posvec
