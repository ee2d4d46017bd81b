/// \file
/// TrainConfig: every training option, its default, and one validate().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "posvec/model_state.hpp"
#include "posvec/settings.hpp"

namespace posvec {

/// The word2vec model trained.
enum class Architecture { SkipGram, Cbow };
/// \var Architecture::SkipGram
/// Skip-gram: each word predicts the words of its window (the default).
/// \var Architecture::Cbow
/// Continuous bag of words: the mean of the window's words predicts the centre word.

/// The largest vector dimension a training may have.
inline constexpr std::size_t kMaxDim = 100000;
/// The most epochs a training may have.
inline constexpr int kMaxEpochs = 100000;

/// The output layer and its loss.
enum class Loss { NegativeSampling, HierarchicalSoftmax };
/// \var Loss::NegativeSampling
/// Negative sampling: the true word against TrainConfig::negative noise words
/// drawn from the unigram^0.75 distribution (the default).
/// \var Loss::HierarchicalSoftmax
/// Hierarchical softmax over a Huffman tree of the vocabulary (V - 1 inner nodes).

/// Which implementation trains skip-gram with negative sampling (the other
/// combinations always use the classic one).
enum class Kernel { Classic, Batched };
/// \var Kernel::Classic
/// word2vec.c's update, one (context, centre) pair at a time with fresh negatives.
/// \var Kernel::Batched
/// A window (or a block of `combine` windows) at a time, its contexts sharing one
/// set of noise words, as matrix products (the default, several times faster at
/// the same quality).

/// The batched kernel's update of bfloat16 weights in place (builds with AVX-512
/// BF16). The two updates round differently, so one seed gives the same bits for
/// one choice only.
enum class Bf16Update { Auto, Pairs, Halves };
/// \var Bf16Update::Auto
/// The update measured faster on the running CPU's vendor: Pairs on AMD, Halves on others.
/// \var Bf16Update::Pairs
/// Pairs of rows multiplied with AVX-512 BF16 dot products, the gradient rounded to
/// bfloat16 first.
/// \var Bf16Update::Halves
/// Each chunk's even and odd values widened exactly and multiplied with float32 FMAs.

/// How the two weight matrices are stored while training. Products and sums are
/// float32 in every case; files stay float32 unless a writer is asked otherwise.
enum class WeightType { Fp32, Bf16, Fp16 };
/// \var WeightType::Fp32
/// IEEE single precision (the default).
/// \var WeightType::Bf16
/// bfloat16: float32's exponent, 8 significant bits.
/// \var WeightType::Fp16
/// IEEE half precision: 5-bit exponent, 11 significant bits.

/// "fp32", "bf16" or "fp16".
const char* weightTypeName(WeightType type);
/// Bytes one stored weight takes (4 or 2).
std::size_t weightTypeBytes(WeightType type);

/// The longest character n-gram posvec accepts (characters).
inline constexpr int kMaxNgramLength = 64;

/// Every training option with its default. A plain value: set the fields, then
/// validate() (train() validates too). Stored with the model as serialize() text.
/// Each field has its row in kTrainSettings (below): its key, meaning, range and
/// front-end spellings.
struct TrainConfig {
  std::size_t dim = 512;  ///< vector dimension (1 to 100000)
  /// maximum window (1 to 1000); each centre word draws a shrink in [0, window)
  int window = 5;
  /// false: every centre word sees the whole window (no shrink is drawn)
  bool shrinkWindows = true;
  int negative = 5;  ///< noise words per positive (negative sampling; 1 to 1000)
  /// Noise words are drawn with probability proportional to count^nsExponent
  /// (word2vec.c: 0.75; 1 follows the counts, 0 is uniform, negative favours rare words).
  double nsExponent = 0.75;
  Loss loss = Loss::NegativeSampling;  ///< output layer
  Architecture architecture = Architecture::SkipGram;  ///< skip-gram or CBOW
  /// CBOW: the context rows' mean predicts the centre word and each context row takes
  /// the whole gradient (word2vec.c, gensim's cbow_mean=1); false: their sum, each
  /// taking the gradient over the number of contexts (gensim's cbow_mean=0).
  bool cbowMean = true;
  double sample = 1e-3;       ///< subsampling threshold in [0, 1) (word2vec.c formula); 0 disables
  double alpha = 0.025;       ///< initial learning rate, in (0, 10] (CBOW users often pick 0.05)
  double minAlpha = 0.0001;   ///< final learning rate, in [0, alpha]; the rate falls linearly to it
  int epochs = 5;             ///< passes over the corpus (1 to 100000)
  std::int64_t minCount = 5;  ///< words seen fewer times are dropped (at least 1)
  std::size_t maxVocab = 0;   ///< keep at most this many most frequent words; 0: no limit
  int threads = 0;            ///< training threads (0 to 4096); 0: all cores
  /// one seed, one initial matrix; at one thread, one result bit for bit
  std::uint64_t seed = 1;
  Kernel kernel = Kernel::Batched;  ///< implementation of skip-gram with negative sampling
  /// Batched kernel: `combine` consecutive centre words trained together as one
  /// block whose context words share blockNegatives noise words (context
  /// combining); each pair still weighs as `negative` negatives. 1: each window is
  /// its own block, with `negative` noise words shared by its contexts (1 to 1024).
  /// 4 centre words with 5 shared
  /// negatives train 1.6 times as fast as 1 at its quality on Brown (docs/benchmarks.md).
  int combine = 4;
  /// Noise words a block shares (0 to 10000); 0: automatic, blockNegativesFor().
  int blockNegatives = 0;
  /// Memory training may use, in bytes (0: the machine's physical memory): train()
  /// refuses before it allocates when its estimate exceeds it. A property of the
  /// machine, not of the model: serialize() leaves it out.
  std::uint64_t memoryLimit = 0;
  /// Subword (fastText) training: a word's input vector is the mean of its own row and
  /// the rows of its character n-grams, hashed into `bucket` extra rows.
  bool subwords = false;
  int minn = 3;  ///< shortest character n-gram (subwords; 1 to 64, at most maxn)
  int maxn = 6;  ///< longest character n-gram (subwords; 0 to 64; 0 turns n-grams off)
  std::uint32_t bucket = 2000000;         ///< hash buckets for n-grams (subwords; 0: no n-grams)
  WeightType weights = WeightType::Fp32;  ///< storage of the weight matrices while training
  /// Which in-place update bfloat16 weights take (Bf16Update). A property of the run,
  /// not of the model: serialize() leaves it out.
  Bf16Update bf16Update = Bf16Update::Auto;
  /// A new subword model comes back with its words' rows gathered
  /// (ModelState::unplacedRows) instead of placed in a full input matrix: for a caller
  /// that writes it (saveModel, saveFastTextModel: they draw the rows no word uses as
  /// they write them) or takes its words' vectors (embeddingsOf), so that the bucket
  /// rows never take memory. A checkpoint in the run completes the model there and then
  /// (the rows stay deferred no longer). placeRows() completes the model.
  /// A property of the run, not of the model: serialize() leaves it out.
  bool deferRows = false;
  /// The noise words a block shares: blockNegatives, or when 0 the larger of
  /// `negative` and 1.25 x combine (the ratio that kept quality on Brown).
  int blockNegativesFor() const;

  /// Throws ConfigError naming the option by its meaning ("dimension must be between 1 and
  /// 100000 (got 0)") and the allowed range; the CLI adds its flag name.
  void validate() const;
  /// key=value lines, one per field (the text ModelState::config stores); a model
  /// stores the trainer's "corpus.*" lines (how the corpus was read) after these.
  std::string serialize() const;
  /// Reads serialize()'s text: accepts what serialize writes and rejects the rest
  /// (FormatError naming the line or key: unknown or repeated keys, invalid values),
  /// except "corpus.*" lines (the trainer's record of how the corpus was read),
  /// which are skipped here. Keys missing from `text` keep their defaults, except `combine`, which is 1
  /// (configurations stored before context combining trained one window per block).
  static TrainConfig deserialize(const std::string& text);
};

/// The names of Architecture's values in text.
inline constexpr Choice<Architecture> kArchitectureNames[] = {{Architecture::SkipGram, "skipgram"},
                                                              {Architecture::Cbow, "cbow"}};
/// The names of Loss's values in text.
inline constexpr Choice<Loss> kLossNames[] = {{Loss::NegativeSampling, "ns"},
                                              {Loss::HierarchicalSoftmax, "hs"}};
/// The names of Kernel's values in text.
inline constexpr Choice<Kernel> kKernelNames[] = {{Kernel::Batched, "batched"},
                                                  {Kernel::Classic, "classic"}};
/// The names of WeightType's values in text.
inline constexpr Choice<WeightType> kWeightTypeNames[] = {
    {WeightType::Fp32, "fp32"}, {WeightType::Bf16, "bf16"}, {WeightType::Fp16, "fp16"}};

/// Whether a TrainConfig trains subwords (the n-gram settings' rows apply).
constexpr bool trainsSubwords(const TrainConfig& c) { return c.subwords; }
/// Whether a TrainConfig trains CBOW (the CBOW rows apply).
constexpr bool trainsCbow(const TrainConfig& c) { return c.architecture == Architecture::Cbow; }
/// Whether a TrainConfig trains with negative sampling (its noise words' row applies).
constexpr bool samplesNoise(const TrainConfig& c) { return c.loss == Loss::NegativeSampling; }

/// TrainConfig's settings, one row each: the order of serialize()'s lines. A new
/// setting is a member above and a row here; validate(), serialize(), deserialize(),
/// the command line, the Python keywords and the docs' tables follow.
inline constexpr auto kTrainSettings = std::tuple{
    SettingRow<TrainConfig, std::size_t>{.member = &TrainConfig::dim,
                                         .setting = {"dim", "dimension"},
                                         .key = "dim",
                                         .spelled = {"--dim", "vector_size"},
                                         .help = "Vector dimension",
                                         .bounds = between(1, kMaxDim),
                                         .keywordDefault = "100"},
    SettingRow<TrainConfig, int>{.member = &TrainConfig::window,
                                 .setting = {"window", "window"},
                                 .key = "window",
                                 .spelled = {"--window", "window"},
                                 .help = "Maximum context window (shrunk at random per word)",
                                 .bounds = between(1, 1000)},
    SettingRow<TrainConfig, int>{.member = &TrainConfig::negative,
                                 .setting = {"negative", "negative samples"},
                                 .key = "negative",
                                 .spelled = {"--negative", "negative"},
                                 .help = "Noise words per positive (negative sampling)",
                                 .bounds = between(1, 1000),
                                 .applies = samplesNoise},
    SettingRow<TrainConfig, Loss>{
        .member = &TrainConfig::loss,
        .setting = {"loss", "output layer"},
        .key = "loss",
        .spelled = {"--hs", "hs"},
        .help = "Hierarchical softmax (Huffman tree) instead of negative sampling",
        .choices = kLossNames,
        .flagSwitch = true,
        .flagValue = Loss::HierarchicalSoftmax,
        .keywordSwitch = true,
        .keywordValue = Loss::HierarchicalSoftmax},
    SettingRow<TrainConfig, Architecture>{.member = &TrainConfig::architecture,
                                          .setting = {"architecture", "architecture"},
                                          .key = "architecture",
                                          .spelled = {"--cbow", "sg"},
                                          .help = "CBOW instead of skip-gram (try --alpha 0.05)",
                                          .choices = kArchitectureNames,
                                          .flagSwitch = true,
                                          .flagValue = Architecture::Cbow,
                                          .keywordSwitch = true,
                                          .keywordValue = Architecture::SkipGram},
    SettingRow<TrainConfig, double>{.member = &TrainConfig::sample,
                                    .setting = {"sample", "subsampling threshold"},
                                    .key = "sample",
                                    .spelled = {"--sample", "sample"},
                                    .help = "Subsampling threshold for frequent words (0: off)",
                                    .bounds = interval('[', 0, 1, ')', "0 disables subsampling")},
    SettingRow<TrainConfig, double>{
        .member = &TrainConfig::alpha,
        .setting = {"alpha", "initial learning rate"},
        .key = "alpha",
        .spelled = {"--alpha", "alpha"},
        .help = "Initial learning rate (with --resume: replaces the model's, with a warning)",
        .bounds = interval('(', 0, 10, ']')},
    SettingRow<TrainConfig, double>{.member = &TrainConfig::minAlpha,
                                    .setting = {"minAlpha", "final learning rate"},
                                    .key = "min_alpha",
                                    .spelled = {"--min-alpha", "min_alpha"},
                                    .help = "Final learning rate (linear decay over all epochs)"},
    SettingRow<TrainConfig, int>{
        .member = &TrainConfig::epochs,
        .setting = {"epochs", "epochs"},
        .key = "epochs",
        .spelled = {"--epochs", "epochs"},
        .help = "Epochs (with --resume: how many more; default there: the rest of an "
                "interrupted or checkpointed schedule, else 5)",
        .bounds = between(1, kMaxEpochs)},
    SettingRow<TrainConfig, std::int64_t>{.member = &TrainConfig::minCount,
                                          .setting = {"minCount", "minimum count"},
                                          .key = "min_count",
                                          .spelled = {"--min-count", "min_count"},
                                          .help = "Ignore words rarer than this",
                                          .bounds = atLeast(1)},
    SettingRow<TrainConfig, std::size_t>{.member = &TrainConfig::maxVocab,
                                         .setting = {"maxVocab", "vocabulary limit"},
                                         .key = "max_vocab",
                                         .spelled = {"--max-vocab", "max_final_vocab"},
                                         .help = "Keep at most this many words (0: no limit)",
                                         .keywordDefault = "None"},
    SettingRow<TrainConfig, int>{.member = &TrainConfig::threads,
                                 .setting = {"threads", "threads"},
                                 .key = "threads",
                                 .spelled = {"--threads", "workers", {}, "-t"},
                                 .help = "Training threads (0: all cores)",
                                 .bounds = between(0, kMaxTrainThreads, "all cores")},
    SettingRow<TrainConfig, std::uint64_t>{
        .member = &TrainConfig::seed,
        .setting = {"seed", "seed"},
        .key = "seed",
        .spelled = {"--seed", "seed"},
        .help = "Random seed (one thread: same seed, same bits)"},
    SettingRow<TrainConfig, Kernel>{
        .member = &TrainConfig::kernel,
        .setting = {"kernel", "kernel"},
        .key = "kernel",
        .spelled = {"--kernel", "kernel"},
        .help = "Training kernel for skip-gram with negative sampling: batched (negatives "
                "shared by a window's contexts, several times faster) or classic (word2vec.c's "
                "per-pair updates); CBOW and --hs always use classic",
        .choices = kKernelNames},
    SettingRow<TrainConfig, int>{
        .member = &TrainConfig::combine,
        .setting = {"combine", "centre words per block (combine)"},
        .key = "combine",
        .spelled = {"--combine", "combine"},
        .help = "Batched kernel: centre words trained as one block, their contexts sharing "
                "--block-negatives noise words (1: one window per block, 1.6 times slower "
                "than 4 at the same quality on Brown)",
        .bounds = between(1, 1024),
        .keywordDefault = "None"},
    SettingRow<TrainConfig, int>{
        .member = &TrainConfig::blockNegatives,
        .setting = {"blockNegatives", "noise words per block"},
        .key = "block_negatives",
        .spelled = {"--block-negatives", "block_negatives"},
        .help = "Batched kernel: noise words shared by a block of --combine centre words (0: "
                "the larger of --negative and 1.25 x --combine); each pair still weighs as "
                "--negative negatives",
        .bounds = between(0, 10000, "automatic"),
        .keywordDefault = "None"},
    SettingRow<TrainConfig, double>{
        .member = &TrainConfig::nsExponent,
        .setting = {"nsExponent", "noise distribution exponent"},
        .key = "ns_exponent",
        .spelled = {"--ns-exponent", "ns_exponent"},
        .help = "Noise words are drawn with probability count^E (word2vec and gensim: 0.75; "
                "fastText: 0.5)",
        .bounds = between(-10, 10, {}, "word2vec's is 0.75"),
        .stored = Stored::IfChanged},
    SettingRow<TrainConfig, bool>{
        .member = &TrainConfig::shrinkWindows,
        .setting = {"shrinkWindows", "window shrinking"},
        .key = "shrink_windows",
        .spelled = {"--fixed-windows", "shrink_windows"},
        .help = "Every centre word sees its whole window (no random shrink; gensim's "
                "shrink_windows=False)",
        .stored = Stored::IfChanged,
        .flagSwitch = true,
        .flagValue = false},
    SettingRow<TrainConfig, bool>{
        .member = &TrainConfig::cbowMean,
        .setting = {"cbowMean", "CBOW's mean of the contexts"},
        .key = "cbow_mean",
        .spelled = {"--cbow-sum", "cbow_mean"},
        .help = "CBOW: the sum of the context vectors predicts the centre word, each taking the "
                "gradient over their number (gensim's cbow_mean=0; default: their mean)",
        .applies = trainsCbow,
        .stored = Stored::IfChanged,
        .flagSwitch = true,
        .flagValue = false,
        .keywordDefault = "1"},
    SettingRow<TrainConfig, bool>{
        .member = &TrainConfig::subwords,
        .setting = {"subwords", "subword training"},
        .key = "subwords",
        .spelled = {"--subwords", ""},
        .help = "fastText subword vectors: a word's vector is the mean of its own row and the "
                "rows of its character n-grams (skip-gram or CBOW, negative sampling; --alpha "
                "defaults to fastText's 0.05 then)",
        .stored = Stored::IfChanged},
    SettingRow<TrainConfig, int>{.member = &TrainConfig::minn,
                                 .setting = {"minn", "shortest character n-gram"},
                                 .key = "minn",
                                 .spelled = {"--minn", "min_n"},
                                 .help = "With --subwords: shortest character n-gram",
                                 .applies = trainsSubwords,
                                 .stored = Stored::IfApplies},
    SettingRow<TrainConfig, int>{
        .member = &TrainConfig::maxn,
        .setting = {"maxn", "longest character n-gram"},
        .key = "maxn",
        .spelled = {"--maxn", "max_n"},
        .help = "With --subwords: longest character n-gram (0: no n-grams)",
        .bounds = between(0, kMaxNgramLength),
        .applies = trainsSubwords,
        .stored = Stored::IfApplies},
    SettingRow<TrainConfig, std::uint32_t>{
        .member = &TrainConfig::bucket,
        .setting = {"bucket", "n-gram buckets"},
        .key = "bucket",
        .spelled = {"--bucket", "bucket"},
        .help = "With --subwords: hash buckets (input rows) shared by the n-grams (0: no "
                "n-grams, word vectors only, as fastText's and gensim's bucket 0)",
        .bounds = atLeast(0),
        .applies = trainsSubwords,
        .stored = Stored::IfApplies},
    SettingRow<TrainConfig, WeightType>{
        .member = &TrainConfig::weights,
        .setting = {"weights", "weight storage"},
        .key = "weights",
        .spelled = {"--weights", "weights"},
        .help = "Storage of the weight matrices while training: fp32, bf16 or fp16 (16 bits: "
                "half the memory, stochastic rounding; skip-gram with negative sampling and the "
                "batched kernel). On --resume: the model's unless given",
        .choices = kWeightTypeNames,
        .stored = Stored::IfChanged},
    SettingRow<TrainConfig, std::uint64_t>{
        .member = &TrainConfig::memoryLimit,
        .setting = {"memoryLimit", "memory limit"},
        .key = "",
        .spelled = {"--memory-limit", "", "--memory-limit or POSVEC_MEMORY_LIMIT"},
        .help = "Memory training may use, e.g. 8G (default: the physical memory; training "
                "that would need more is refused before it starts)",
        .stored = Stored::Never,
        .customFlag = true},
};

}  // namespace posvec
