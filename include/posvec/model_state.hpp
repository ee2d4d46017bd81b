/// \file
/// ModelState: everything needed to continue training (words, counts, both
/// weight matrices, the serialised configuration, the epochs done and their
/// losses). The trainer produces and resumes it; formats.hpp saves and loads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "posvec/types.hpp"

namespace posvec {

/// The most threads training runs (TrainConfig::threads) and so the most thread
/// positions a model may record inside an unfinished epoch; a model file that
/// records more is refused when it is read.
inline constexpr int kMaxTrainThreads = 4096;

/// Where one thread was when training stopped inside an epoch (an interrupt or a
/// checkpoint): enough to finish that epoch exactly as if it had not stopped.
struct ShardProgress {
  std::int64_t position = 0;     ///< next id of the corpus stream to read
  std::int64_t end = 0;          ///< end of the thread's shard
  std::uint64_t rng = 0;         ///< the thread's random state (subsampling, windows, negatives)
  double loss = 0;               ///< summed loss of the epoch so far
  std::int64_t predictions = 0;  ///< predictions of the epoch so far (the loss's divisor)
};
/// Where an epoch stopped inside stands (ModelState::partial).
struct EpochProgress {
  std::int64_t words = 0;             ///< corpus words of the epoch done (sets the learning rate)
  std::int64_t streamSize = 0;        ///< ids in the corpus stream, to recognise the same corpus
  std::vector<ShardProgress> shards;  ///< one per thread; empty: at an epoch boundary
  /// True when training stopped inside the epoch (there is something to finish).
  bool active() const { return !shards.empty(); }
};

/// A model's full training state, a plain value (copying copies the matrices).
/// The trainer owns the meaning of `config` (a serialised TrainConfig, key=value
/// lines); the file format just stores it.
struct ModelState {
  std::vector<std::string> words;    ///< the vocabulary, most frequent first
  std::vector<std::int64_t> counts;  ///< corpus count of each word
  MatrixF input;                     ///< word vectors (V x D)
  MatrixF output;      ///< output weights: negative sampling (V x D) or HS inner nodes ((V-1) x D)
  std::string config;  ///< TrainConfig::serialize() of the configuration trained with
  std::int32_t epochsDone = 0;      ///< epochs completed
  std::vector<double> epochLosses;  ///< mean loss of each epoch done (NaN: no prediction)
  EpochProgress partial;            ///< epoch epochsDone + 1 when stopped inside it
};

}  // namespace posvec
