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

// word2vec's noise distribution: counts^power (0.75 in word2vec.c).
inline NoiseSampler trainingNoise(const Vocabulary& vocab, double power = 0.75) {
  return NoiseSampler(vocab.counts(), power);
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
  // Without branches (keeping a word is a coin flip the branch predictor loses):
  // the generator steps only for words that draw, every word is written, and the
  // end advances past the kept ones. Draws and results are those of
  // `if (k >= 2^32 || (rng.next() >> 32) < k) keep`.
  void apply(const std::vector<std::int32_t>& sentence, Rng& rng,
             std::vector<std::int32_t>& kept) const {
    const std::size_t base = kept.size();
    kept.resize(base + sentence.size());
    std::int32_t* out = kept.data() + base;
    std::size_t w = 0;
    std::uint64_t state = rng.state;
    for (const std::int32_t id : sentence) {
      const std::uint64_t k = keep_[static_cast<std::size_t>(id)];
      const std::uint64_t draws = k < (1ull << 32) ? 1 : 0;
      state += draws * Rng::kStep;
      out[w] = id;
      w += (draws ^ 1) | ((Rng::mix(state) >> 32) < k ? 1 : 0);
    }
    rng.state = state;
    kept.resize(base + w);
  }

 private:
  std::vector<std::uint64_t> keep_;
};

}  // namespace posvec::detail
