/// \file
/// The memory estimate: what training needs once the corpus is counted, checked
/// by train() before it allocates the matrices, and the memory it may use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "posvec/corpus.hpp"
#include "posvec/train_config.hpp"

namespace posvec {

/// What training needs in memory once the corpus is counted, in bytes (the
/// counting table is gone by then; the id stream of a file corpus is on disk).
struct MemoryEstimate {
  std::size_t words = 0;         ///< vocabulary size
  std::uint64_t matrices = 0;    ///< input and output matrices
  std::uint64_t vocabulary = 0;  ///< words, counts, index, noise and subsampling tables
  std::uint64_t buffers = 0;     ///< per-thread scratch, an in-memory id stream
  std::uint64_t available = 0;   ///< physical memory, or TrainConfig::memoryLimit when set
  std::uint64_t wordBytes = 0;   ///< the kept words' UTF-8 bytes (for the size of an output file)
  /// Bytes training needs: matrices + vocabulary + buffers.
  std::uint64_t total() const { return matrices + vocabulary + buffers; }
};
/// Physical memory of the machine (TrainConfig::memoryLimit, when set, replaces it
/// to train in a fraction of a shared machine).
std::uint64_t availableMemory();
/// A size such as "8G", "512M", "1.5GiB" or "1000000" (bytes; K/M/G/T are powers
/// of 1024), for TrainConfig::memoryLimit. Throws ConfigError ("memory limit must
/// be a positive size ...") on a malformed value.
std::uint64_t parseMemorySize(const std::string& text);
/// Counts the corpus (the vocabulary pass, nothing else) and estimates what
/// train() would need for it.
MemoryEstimate estimateTrainingMemory(const CorpusSource& corpus, const TrainConfig& config);

}  // namespace posvec
