// TrainConfig: every training option, its default, and one validate().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace posvec {

enum class Architecture { SkipGram, Cbow };
enum class Loss { NegativeSampling, HierarchicalSoftmax };
enum class Kernel { Classic, Batched };

struct TrainConfig {
  std::size_t dim = 512;
  int window = 5;             // maximum window; each centre word draws a shrink in [0, window)
  bool shrinkWindows = true;  // false: every centre word sees the whole window (no draw)
  int negative = 5;           // noise words per positive (negative sampling)
  // Noise words are drawn with probability proportional to count^nsExponent
  // (word2vec.c: 0.75; 1 follows the counts, 0 is uniform, negative favours rare words).
  double nsExponent = 0.75;
  Loss loss = Loss::NegativeSampling;
  Architecture architecture = Architecture::SkipGram;
  double sample = 1e-3;       // subsampling threshold (word2vec.c formula); 0 disables
  double alpha = 0.025;       // initial learning rate (CBOW users often pick 0.05)
  double minAlpha = 0.0001;   // final learning rate
  int epochs = 5;
  std::int64_t minCount = 5;
  std::size_t maxVocab = 0;   // 0: no limit
  int threads = 0;            // 0: all cores
  std::uint64_t seed = 1;
  Kernel kernel = Kernel::Batched;
  // Batched kernel: `combine` consecutive centre words trained together as one
  // block whose context words share blockNegatives noise words (context
  // combining); each pair still weighs as `negative` negatives. 1: each window is
  // its own block, with `negative` noise words shared by its contexts.
  // blockNegatives 0: automatic, blockNegativesFor(). 4 centre words with 5 shared
  // negatives train 1.6 times as fast as 1 at its quality on Brown (README).
  int combine = 4;
  int blockNegatives = 0;
  // The noise words a block shares: blockNegatives, or when 0 the larger of
  // `negative` and 1.25 x combine (the ratio that kept quality on Brown).
  int blockNegativesFor() const;

  // Throws ConfigError naming the option by its meaning ("dimension must be between 1 and
  // 100000 (got 0)") and the allowed range; the CLI adds its flag name.
  void validate() const;
  // key=value lines; deserialize accepts what serialize writes and rejects the rest (FormatError).
  std::string serialize() const;
  static TrainConfig deserialize(const std::string& text);
};

}  // namespace posvec
