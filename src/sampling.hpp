// What training draws per sentence besides the kernels' own draws: which words
// subsampling keeps, and the noise distribution negative sampling draws from.
// Separate from the trainer loop so tests can measure both directly.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels.hpp"
#include "posvec/vocabulary.hpp"

namespace posvec::detail {

// word2vec's noise distribution: counts^0.75.
inline NoiseSampler trainingNoise(const Vocabulary& vocab) {
  return NoiseSampler(vocab.counts(), 0.75);
}

// Subsampling as integer thresholds on 32 random bits (exactly 2^32: always keep).
class Subsampler {
 public:
  Subsampler(const Vocabulary& vocab, double sample) : keep_(vocab.size()) {
    for (std::size_t i = 0; i < keep_.size(); ++i)
      keep_[i] = static_cast<std::uint64_t>(
          std::ldexp(vocab.keepProbability(static_cast<WordId>(i), sample), 32));
  }
  // Appends the ids of `sentence` that survive to `kept` (one draw per word kept with
  // probability below 1).
  void apply(const std::vector<std::int32_t>& sentence, Rng& rng,
             std::vector<std::int32_t>& kept) const {
    for (const std::int32_t id : sentence) {
      const std::uint64_t k = keep_[static_cast<std::size_t>(id)];
      if (k >= (1ull << 32) || (rng.next() >> 32) < k) kept.push_back(id);
    }
  }

 private:
  std::vector<std::uint64_t> keep_;
};

}  // namespace posvec::detail
