// Kernels: the hot loops of word2vec training behind one interface. A kernel
// trains on one (already subsampled) sentence at a given learning rate, with the
// calling thread's state (RNG, scratch), and returns the loss it saw. Classic
// skip-gram and CBOW, each with negative sampling or hierarchical softmax.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "posvec/train_config.hpp"
#include "posvec/types.hpp"
#include "posvec/vocabulary.hpp"

namespace posvec::detail {

// splitmix64: one word of state, good enough statistics for sampling, cheap.
struct Rng {
  std::uint64_t state;
  explicit Rng(std::uint64_t seed = 0) : state(seed) {}
  static constexpr std::uint64_t kStep = 0x9E3779B97F4A7C15ull;
  std::uint64_t next() { return mix(state += kStep); }
  // The output for a state (SplitMix64's finaliser).
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  std::uint32_t below(std::uint32_t n) {
    return static_cast<std::uint32_t>(((next() >> 32) * static_cast<std::uint64_t>(n)) >> 32);
  }
  // Uniform in [0, 1) with 24 random bits.
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }
};

// A seed for stream `b` derived from seed `a` (rows, epochs, threads).
std::uint64_t mixSeed(std::uint64_t a, std::uint64_t b);

// Sigmoid and softplus (log(1 + e^x)) from tables with linear interpolation on
// [-8, 8]: within ~1e-5 of the exact values. Beyond, the sigmoid is clipped and
// the softplus is computed exactly (the loss stays true for confident mistakes).
// A NaN score (a diverging model) comes back as NaN instead of becoming a table
// index, so the trainer sees it in the loss and stops with a message.
class Sigmoid {
 public:
  static constexpr float kMax = 8.0f;
  static constexpr int kSize = 2048;
  Sigmoid();
  float sigmoid(float x) const {
    if (std::isnan(x)) return x;
    if (x <= -kMax) return sig_[0];
    if (x >= kMax) return sig_[kSize];
    const float t = (x + kMax) * kScale;
    const int i = static_cast<int>(t);
    const float f = t - static_cast<float>(i);
    return sig_[i] + f * (sig_[i + 1] - sig_[i]);
  }
  float softplus(float x) const {
    if (std::isnan(x)) return x;
    if (x <= -kMax || x >= kMax)
      return static_cast<float>(std::log1p(std::exp(-std::fabs(x)))) + std::fmax(x, 0.0f);
    const float t = (x + kMax) * kScale;
    const int i = static_cast<int>(t);
    const float f = t - static_cast<float>(i);
    return sp_[i] + f * (sp_[i + 1] - sp_[i]);
  }
  // The tables for vectorised lookups, as pairs: floats 2i and 2i + 1 are the
  // function at -kMax + i / kScale and at the next point, so one 64-bit gather
  // fetches both ends of a cell. Inside (-kMax, kMax) a value is the linear
  // interpolation sigmoid() and softplus() compute.
  const float* sigmoidPairs() const { return sigPairs_; }
  const float* softplusPairs() const { return spPairs_; }
  static constexpr float scale() { return kScale; }

 private:
  static constexpr float kScale = kSize / (2 * kMax);
  // kSize + 1 points and the last repeated: an x just under kMax can round to
  // t = kSize, whose cell (fraction 0) reads entry kSize + 1.
  float sig_[kSize + 2];
  float sp_[kSize + 2];
  alignas(64) float sigPairs_[2 * (kSize + 1)];
  alignas(64) float spPairs_[2 * (kSize + 1)];
};

// Huffman tree over the vocabulary (counts sorted descending), as hierarchical
// softmax uses it: for each word the inner nodes (0..V-2) from the root down and
// the branch taken at each (0/1).
struct HuffmanTree {
  std::vector<std::int32_t> points;
  std::vector<std::uint8_t> codes;
  std::vector<std::int64_t> offsets;  // word w's path is [offsets[w], offsets[w+1])
  std::size_t depth(WordId w) const {
    return static_cast<std::size_t>(offsets[static_cast<std::size_t>(w) + 1] -
                                    offsets[static_cast<std::size_t>(w)]);
  }
};
HuffmanTree buildHuffmanTree(const std::vector<std::int64_t>& counts);

// Input rows uniform in [-1/dim, 1/dim) (gensim, fastText), each row from its own (seed, row)
// stream: the result does not depend on `threads`.
void initInputMatrix(MatrixF& input, std::uint64_t seed, int threads);
// Faults in the whole pages of [begin, begin + bytes) with one call where Linux
// offers it (MADV_POPULATE_WRITE, 5.14): a fresh 2.4 GB matrix (2M bucket rows at
// dim 300) filled after it took 0.95 to 1.2 s where faulting page by page took 1.35
// to 1.4 s (docs/benchmarks-history.md, "earlier Brown ×16 runs"). Advice only;
// small ranges are left to the writes.
void populatePages(void* begin, std::size_t bytes);
// Row `r` of that initialisation, written to row[0..dim).
void initInputRow(float* row, std::size_t dim, std::uint64_t seed, std::uint64_t r);

// Subword training: each vocabulary word's input rows (its own row, then its
// n-gram rows, fastText's getSubwords order) as compressed rows: word w's are
// rows[offsets[w], offsets[w + 1]).
struct SubwordRows {
  std::vector<std::int64_t> offsets;
  std::vector<std::int32_t> rows;
  // Words that list a row more than once (a run of one letter lists "aaa" at every
  // position): at firstListings[repeatsAt[w]] their count of distinct rows, then the
  // position in their list of each row's first listing; -1 for the other words.
  // A gradient is added to each distinct row once (updatedRows), so the mean moves by
  // the gradient itself: added once per listing, as fastText adds it, it would move
  // by the gradient times (sum of listings^2) / (length of the list), about 1000
  // times for a 1000-letter run, and training diverged.
  std::vector<std::int64_t> repeatsAt;
  std::vector<std::int32_t> firstListings;
  std::size_t count(std::int32_t w) const {
    return static_cast<std::size_t>(offsets[static_cast<std::size_t>(w) + 1] -
                                    offsets[static_cast<std::size_t>(w)]);
  }
  const std::int32_t* of(std::int32_t w) const {
    return rows.data() + offsets[static_cast<std::size_t>(w)];
  }
  // The rows a gradient of word w is added to, each once: its list when no row is
  // listed twice, else its distinct rows copied into `scratch`. Sets n to their count.
  const std::int32_t* updatedRows(std::int32_t w, std::vector<std::int32_t>& scratch,
                                  std::size_t& n) const {
    const std::int64_t at = repeatsAt[static_cast<std::size_t>(w)];
    if (at < 0) {
      n = count(w);
      return of(w);
    }
    const std::int32_t* first = firstListings.data() + at;
    n = static_cast<std::size_t>(first[0]);
    scratch.resize(n);
    for (std::size_t i = 0; i < n; ++i) scratch[i] = of(w)[first[1 + i]];
    return scratch.data();
  }
};

// What a kernel reads and updates; shared by all threads (Hogwild updates).
struct KernelShared {
  MatrixF* input = nullptr;
  MatrixF* output = nullptr;
  const NoiseSampler* noise = nullptr;
  const HuffmanTree* tree = nullptr;
  const Sigmoid* sigmoid = nullptr;
  const SubwordRows* subwords = nullptr;  // subword training only
};

// A centre word's shrunk window: uniform in 1..window (word2vec.c's `b`); the whole
// window, without a draw, when shrinking is off. Every kernel draws it this way.
inline std::int64_t drawReach(std::int64_t window, bool shrink, Rng& rng) {
  if (!shrink) return window;
  return window - static_cast<std::int64_t>(rng.below(static_cast<std::uint32_t>(window)));
}

// Per-thread state: RNG and scratch buffers the kernels size as they need.
// bf16Update: the batched kernel's update of bfloat16 rows in place (AVX-512 BF16
// builds; TrainConfig::bf16Update): Pairs multiplies pairs of rows with AVX-512 BF16
// dot products, the gradient rounded to bfloat16 first (half float32's
// multiply-adds, plus shuffles); Halves widens each 32-value chunk's even and odd
// values and multiplies with float32 FMAs (float32's arithmetic, no shuffle). Auto
// takes the one measured faster on the running CPU's vendor (batchedBf16Update).

struct ThreadState {
  Rng rng;
  std::vector<float> hidden;
  std::vector<float> grad;
  // Batched kernel: one window's ids, deduplicated rows and row pointers.
  std::vector<std::int32_t> window, ids;
  std::vector<float*> pointers;
  // bfloat16 weights: the block's rows in place, the update kernel (Auto: the one
  // batchedBf16Update names) and the pairs kernel's gradients as bfloat16 pairs.
  std::vector<std::uint16_t*> rows16;
  Bf16Update bf16Update = Bf16Update::Auto;
  std::vector<std::uint32_t> gradientPairs;
  // Batched kernel: each score's weight as a positive and as a negative prediction
  // (repeat counts; a combined block can have both in one cell).
  std::vector<float> positive, negative;
  // Subword kernel: a block's composed input vectors, before and after, and its
  // local ids.
  std::vector<float> composed;
  std::vector<std::int32_t> local;
  // Batched kernel with 16-bit weights: the block's rows widened to float32.
  std::vector<float> rows;
};

class TrainKernel {
 public:
  virtual ~TrainKernel() = default;
  // Trains on `n` ids; returns the loss summed over the predictions made and adds
  // their number to `predictions`.
  virtual double sentence(const std::int32_t* ids, std::size_t n, float alpha, ThreadState& state,
                          std::int64_t& predictions) const = 0;
};

// One negative-sampling prediction of `target` from the hidden vector `h`: the
// positive and `negative` noise words drawn with `rng` (a draw equal to `target`
// is skipped, as word2vec.c skips it). Updates each output row of `out` (`dim`
// columns) at once, adds the gradient for `h` (times alpha) to `grad`, and
// returns the loss.
double negativeSamplingStep(const float* h, WordId target, float alpha, float* grad, float* out,
                            std::size_t dim, int negative, const NoiseSampler& noise,
                            const Sigmoid& sigmoid, Rng& rng);

// word2vec.c's loops for config's architecture and loss (config.kernel is not
// looked at: kernel_factory.hpp chooses between these and the batched kernel).
std::unique_ptr<TrainKernel> makeClassicKernel(const TrainConfig& config,
                                               const KernelShared& shared);

}  // namespace posvec::detail
