// The memory estimate's inside (posvec/memory_estimate.hpp): the estimate of a
// counted corpus, and the check train() makes before it allocates the matrices.
#pragma once

#include "corpus_detail.hpp"
#include "posvec/memory_estimate.hpp"

namespace posvec::detail {

// Bytes per vocabulary word besides its characters: Vocabulary's string, count,
// index node and bucket, the model's copy of the word and count, the noise
// column and the subsampling threshold (libstdc++ sizes, 64-bit).
inline constexpr std::uint64_t kBytesPerWord = 32 + 8 + 64 + 8 + 32 + 8 + 8 + 8;

MemoryEstimate estimateMemory(const PreparedCorpus& corpus, const TrainConfig& config, int threads);
// Throws ConfigError when the estimate exceeds the available memory.
void checkMemory(const MemoryEstimate& estimate, const TrainConfig& config);
// "1.5 GiB", "12.0 MiB", "800 B".
std::string humanBytes(std::uint64_t bytes);

}  // namespace posvec::detail
