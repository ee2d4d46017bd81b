#include "posvec/trainer.hpp"

#include <malloc.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "ascii_space.hpp"
#include "corpus_detail.hpp"
#include "dense_rows.hpp"
#include "formats_detail.hpp"
#include "half.hpp"
#include "huge_pages.hpp"
#include "kernel_factory.hpp"
#include "kernel_probe.hpp"
#include "kernel_subword.hpp"
#include "kernels.hpp"
#include "memory_estimate.hpp"
#include "parallel.hpp"
#include "posvec/error.hpp"
#include "sampling.hpp"
#include "train_hooks.hpp"

namespace posvec {

Embeddings embeddingsOf(const ModelState& model) {
  const auto v = static_cast<Eigen::Index>(model.words.size());
  const bool subwords =
      model.input.rows() != v && model.config.find("subwords=1\n") != std::string::npos;
  if (model.packed != PackedWeights::None && !subwords) {  // 16-bit weights
    MatrixF vectors(v, model.input.cols());
    for (Eigen::Index r = 0; r < vectors.rows(); ++r)
      readWeightRow(model, model.input, r, vectors.row(r).data());
    return Embeddings(model.words, std::move(vectors), model.counts);
  }
  if (!subwords) return Embeddings(model.words, model.input, model.counts);
  // A subword model: each word's vector is the mean of its rows (what fastText's
  // .vec file holds), not its own row alone.
  const TrainConfig config = TrainConfig::deserialize(model.config);
  const int threads = detail::resolveThreads(config.threads);
  detail::SubwordRows rows = detail::subwordRowsOf(model.words, config, threads);
  MatrixF vectors(v, model.input.cols());
  const auto dim = static_cast<std::size_t>(model.input.cols());
  // Rows not placed (TrainConfig::deferRows): every row a word lists is gathered.
  const detail::DenseRows* gathered =
      model.unplacedRows ? &detail::DenseRows::of(*model.unplacedRows) : nullptr;
  const MatrixF& from = gathered ? gathered->matrix() : model.input;
  if (gathered) gathered->toPositions(rows);
  const auto* packed = reinterpret_cast<const std::uint16_t*>(from.data());
  const WeightType type = model.packed == PackedWeights::Bf16 ? WeightType::Bf16 : WeightType::Fp16;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (Eigen::Index w = 0; w < v; ++w) {
    if (model.packed == PackedWeights::None)
      detail::composeWord(from.data(), dim, rows, static_cast<std::int32_t>(w),
                          vectors.row(w).data());
    else
      detail::composeWord(packed, dim, rows, static_cast<std::int32_t>(w), vectors.row(w).data(),
                          type);
  }
  return Embeddings(model.words, std::move(vectors), model.counts);
}

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Words a thread trains on between two updates of the shared counter.
constexpr std::int64_t kFlushWords = 10000;

// Per-thread totals, padded so threads don't share cache lines.
struct alignas(64) ThreadTotals {
  double loss = 0;
  std::int64_t predictions = 0;
  std::atomic<double> publishedLoss{0};
  std::atomic<std::int64_t> publishedPredictions{0};
};

std::string describeConfig(const TrainConfig& c, int threads) {
  std::ostringstream s;
  s << "training " << (c.architecture == Architecture::SkipGram ? "skip-gram" : "CBOW") << " with "
    << (c.loss == Loss::NegativeSampling ? "negative sampling (" + std::to_string(c.negative) + ")"
                                         : std::string("hierarchical softmax"))
    << ": dim " << c.dim << ", window " << c.window << ", sample " << c.sample << ", alpha "
    << c.alpha << " -> " << c.minAlpha << ", epochs " << c.epochs << ", min-count " << c.minCount
    << ", max-vocab " << c.maxVocab << ", threads " << threads << ", seed " << c.seed << ", kernel "
    << detail::kernelName(detail::kernelFor(c));
  if (c.subwords)
    s << " (character n-grams of " << c.minn << " to " << c.maxn << ", " << c.bucket << " buckets)";
  if (detail::kernelFor(c) == detail::KernelKind::BatchedSkipGram && c.combine > 1)
    s << " (blocks of " << c.combine << " centre words, " << c.blockNegativesFor()
      << " shared negatives)";
  if (c.weights != WeightType::Fp32) s << ", weights " << weightTypeName(c.weights);
  return s.str();
}

void checkModel(const ModelState& m, const TrainConfig& c) {
  const auto v = static_cast<Eigen::Index>(m.words.size());
  const auto d = static_cast<Eigen::Index>(c.dim);
  auto bad = [](const std::string& what) {
    throw FormatError("model is inconsistent: " + what +
                      " (the file is corrupt or not from this trainer)");
  };
  if (m.words.empty()) bad("it has no words");
  if (m.counts.size() != m.words.size()) bad("word and count lists differ in length");
  const Eigen::Index inRows = v + (c.subwords ? static_cast<Eigen::Index>(c.bucket) : 0);
  if (m.input.rows() != inRows || m.input.cols() != d)
    bad("input matrix is " + std::to_string(m.input.rows()) + "x" + std::to_string(m.input.cols()) +
        ", expected " + std::to_string(inRows) + "x" + std::to_string(d));
  const Eigen::Index outRows = c.loss == Loss::HierarchicalSoftmax ? v - 1 : v;
  if (m.output.rows() != outRows || m.output.cols() != d)
    bad("output matrix is " + std::to_string(m.output.rows()) + "x" +
        std::to_string(m.output.cols()) + ", expected " + std::to_string(outRows) + "x" +
        std::to_string(d));
  if (m.epochsDone < 0) bad("negative epoch count");
  for (std::size_t i = 1; i < m.counts.size(); ++i)
    if (m.counts[i] > m.counts[i - 1]) bad("counts are not sorted");
  std::int64_t total = 0;
  for (const std::int64_t c : m.counts)
    if (c <= 0 || __builtin_add_overflow(total, c, &total))
      bad(c <= 0 ? "a word count is not positive" : "word counts add up to more than 2^63 - 1");
}

// A learning rate too high for the data makes the weights overflow: scores turn
// into inf and NaN and every later update spreads them. Long before that the loss
// per prediction leaves its range: it starts near the untrained model's
// ((1 + negative) ln 2 with negative sampling) and falls, while a run whose steps
// overshoot sees it climb by orders of magnitude (1e22 in one epoch of Brown at
// alpha 0.2 with the batched kernel). Stop at once and say what to change, rather
// than train on for hours and write vectors of 1e12 or NaN.
// `previous`: the last epoch's loss, when this one grew past it (distributed).
constexpr double kLossGrowthLimit = 1.25;
// A stretch of training whose loss per prediction is this many times the run's
// reference (LossGuard) has diverged: healthy runs stay below it (their loss falls
// from the reference), diverging ones pass it within a few stretches and go on to
// grow without bound.
constexpr double kDivergedFactor = 4;

// Why a run diverged, in words, and what to change: the learning rate always; the
// classic kernel where the batched one ran (it applies a block's summed steps at
// once, from the rows as they were, and overshoots at rates the classic kernel's
// pair-by-pair updates still take: docs/design/batched-kernel.md#learning-rate).
[[noreturn]] void throwDiverged(const TrainConfig& config, bool distributed, bool sums, int epoch,
                                double loss, double reference,
                                double previous = std::numeric_limits<double>::quiet_NaN()) {
  std::ostringstream s;
  s << "training diverged at epoch " << epoch << " (loss ";
  // A NaN prints as "nan" or "-nan" by its sign bit, which says nothing here.
  if (std::isnan(loss))
    s << "nan";
  else
    s << loss;
  if (!std::isnan(previous))
    s << ", up from " << previous << " at epoch " << epoch - 1;
  else if (reference > 0 && !std::isnan(loss))
    s << " per prediction, against " << reference << " at the start";
  s << ")";
  ErrorText text;
  if (sums) {
    // Added up whole, the ranks' changes to a row grow with the number of ranks.
    s << ": the ranks' combined steps are too long; combine their changes with the momentum "
         "rule (";
    text = ErrorText(s.str()) << Setting{"syncCombine", "the combining rule"}
                              << " momentum, the default) or lower the learning rate (";
  } else {
    if (distributed) s << ": the ranks' combined steps are too long";
    s << "; lower the learning rate (";
    text = ErrorText(s.str());
  }
  std::ostringstream now;
  now << ", now " << config.alpha << ")";
  if (!sums && !config.subwords && config.kernel == Kernel::Batched &&
      config.loss == Loss::NegativeSampling && config.architecture == Architecture::SkipGram)
    now << ", or train with the classic kernel, which takes higher rates";
  throw ConfigError(std::move(text) << Setting{"alpha", "alpha"} << now.str());
}

// The run's reference loss for divergence: what an untrained model loses per
// prediction. With negative sampling each of the 1 + negative terms starts at ln 2,
// whatever the data. With hierarchical softmax it is ln 2 per node of the word's
// code, so the first stretch any thread measures sets it, capped at a 64-node code
// (a first stretch that has already diverged must not become the yardstick).
// Shared by the threads of every epoch of a run.
class LossGuard {
 public:
  LossGuard(const TrainConfig& config, const detail::EpochSync* sync)
      : config_(config),
        distributed_(sync != nullptr),
        sums_(sync && sync->sumsChanges()),
        untrained_(config.loss == Loss::NegativeSampling ? (1.0 + config.negative) * std::log(2.0)
                                                         : 64 * std::log(2.0)) {
    if (config.loss == Loss::NegativeSampling) reference_.store(untrained_);
  }

  // A stretch of `predictions` whose loss summed to `loss`: one past kDivergedFactor
  // times the reference throws.
  void check(int epoch, double loss, std::int64_t predictions) {
    if (predictions <= 0) return;
    const double mean = loss / static_cast<double>(predictions);
    if (!std::isfinite(mean)) throwDiverged(config_, distributed_, sums_, epoch, mean, 0);
    double ref = reference_.load(std::memory_order_relaxed);
    if (ref == 0) {
      const double first = std::min(mean, untrained_);
      if (!reference_.compare_exchange_strong(ref, first)) ref = reference_.load();
      ref = reference_.load();
    }
    if (mean > kDivergedFactor * ref) throwDiverged(config_, distributed_, sums_, epoch, mean, ref);
  }
  double reference() const { return reference_.load(std::memory_order_relaxed); }

 private:
  const TrainConfig& config_;
  bool distributed_, sums_;
  double untrained_;
  std::atomic<double> reference_{0};
};

// The learning-rate schedule of a run, in words of all processes: alpha falls
// linearly from config.alpha to config.minAlpha over the schedule's words.
struct Schedule {
  std::int64_t localWords = 0;  // an epoch's words in this process
  std::int64_t epochWords = 0;  // an epoch's words in all processes
  double toGlobal = 1;          // this process's words -> all processes' words
  double scheduleWords = 0;     // the words of all the schedule's epochs
  double runStartWords = 0;     // of them, those trained before this run
  double runWords = 0;          // those this run trains
  double alpha = 0, minAlpha = 0;

  double alphaAt(double wordsDone) const {
    const double progress = std::min(1.0, wordsDone / std::max(1.0, scheduleWords));
    return alpha - (alpha - minAlpha) * progress;
  }
};

// Distributed: the schedule runs on the words of all processes; this one's
// count scales by their ratio (they all pass the same fractions together).
Schedule scheduleOf(const ModelState& model, const detail::PreparedCorpus& corpus,
                    const TrainConfig& config, int totalEpochs, detail::EpochSync* sync) {
  Schedule s;
  s.localWords = corpus.stream.words();
  s.epochWords = sync ? sync->globalWords(s.localWords) : s.localWords;
  s.toGlobal = s.localWords > 0
                   ? static_cast<double>(s.epochWords) / static_cast<double>(s.localWords)
                   : 1.0;
  s.scheduleWords = static_cast<double>(s.epochWords) * totalEpochs;
  s.runStartWords = static_cast<double>(s.epochWords) * model.epochsDone +
                    static_cast<double>(model.partial.words);
  s.runWords = s.scheduleWords - s.runStartWords;
  s.alpha = config.alpha;
  s.minAlpha = config.minAlpha;
  return s;
}

// What the threads of one epoch share.
struct EpochContext {
  const detail::PreparedCorpus& corpus;
  const detail::Subsampler& subsample;
  const detail::TrainKernel& kernel;
  const TrainConfig& config;
  const TrainObserver& observer;
  detail::EpochSync* sync;
  const Schedule& schedule;
  LossGuard& guard;
  int epoch;         // 0-based
  int totalEpochs;   // of the schedule
  double epochBase;  // schedule words before this epoch
  Clock::time_point runStart;
};

// Where each thread starts a new epoch: its shard of the id stream and its seed.
EpochProgress newEpoch(const EpochContext& c, int threads) {
  EpochProgress progress;
  std::uint64_t epochSeed =
      detail::mixSeed(c.config.seed, 0x5EED0000ull + static_cast<std::uint64_t>(c.epoch));
  if (c.sync) epochSeed = c.sync->rankSeed(epochSeed);
  progress.streamSize = c.corpus.stream.size();
  for (int t = 0; t < threads; ++t) {
    const auto [begin, end] = c.corpus.stream.shard(t, threads);
    progress.shards.push_back(
        {begin, end, detail::mixSeed(epochSeed, static_cast<std::uint64_t>(t)), 0, 0});
  }
  return progress;
}

// The observer's progress line: every thread's published loss, the words done.
void reportProgress(const EpochContext& c, const std::vector<ThreadTotals>& totals, double done,
                    float alpha, double elapsed) {
  double loss = 0;
  std::int64_t preds = 0;
  for (const auto& t : totals) {
    loss += t.publishedLoss.load(std::memory_order_relaxed);
    preds += t.publishedPredictions.load(std::memory_order_relaxed);
  }
  const Schedule& s = c.schedule;
  TrainProgress p;
  p.epoch = c.epoch + 1;
  p.epochs = c.totalEpochs;
  const double all = c.epochBase + done;
  p.fraction = std::min(1.0, all / std::max(1.0, s.scheduleWords));
  const double runDone = all - s.runStartWords;
  p.wordsProcessed = static_cast<std::int64_t>(runDone);
  p.wordsPerSecond = elapsed > 0 ? runDone / elapsed : 0;
  p.alpha = alpha;
  p.loss = preds > 0 ? loss / static_cast<double>(preds) : std::numeric_limits<double>::quiet_NaN();
  p.etaSeconds = runDone > 0 ? elapsed * (s.runWords - runDone) / runDone : 0;
  c.observer.progress(p);
}

// Trains every shard from where it is until it ends or an interrupt arrives; each
// thread stops only right after publishing its words (the learning rate is then
// a function of the shared count), so a stopped epoch goes on exactly. Returns
// what stopped it (None: every shard ended).
// `runThreads`: this run's threads, which take the shards in turn.
Interrupt trainShards(const EpochContext& c, EpochProgress& progress, int runThreads) {
  const int threads = static_cast<int>(progress.shards.size());
  const TrainObserver& observer = c.observer;
  std::atomic<std::int64_t> processed{progress.words};
  std::atomic<int> stop{0};
  std::atomic<int> finished{0};
  std::vector<ThreadTotals> totals(static_cast<std::size_t>(threads));
  detail::ParallelErrors errors;
  auto ask = [&] {
    const Interrupt how = observer.interrupt();
    if (how != Interrupt::None) stop.store(static_cast<int>(how));
  };
  // An unfinished epoch keeps its shards (a model stopped with more threads than
  // this run has: its shards are shared out, each thread taking them in turn). The
  // team may also be smaller than asked (OMP_THREAD_LIMIT): the same loop covers it.
  const int team = std::max(1, std::min(threads, std::max(runThreads, 1)));
#pragma omp parallel num_threads(team)
  {
    const int tid = omp_get_thread_num();
    const int teamSize = omp_get_num_threads();
    errors.run([&] {
      for (int s = tid; s < threads && stop.load() == 0 && !errors.failed(); s += teamSize) {
        ShardProgress& shard = progress.shards[static_cast<std::size_t>(s)];
        ThreadTotals& mine = totals[static_cast<std::size_t>(s)];
        mine.loss = shard.loss;
        mine.predictions = shard.predictions;
        detail::ShardReader reader(c.corpus.stream, shard.position, shard.end);
        detail::ThreadState state;
        state.bf16Update = c.config.bf16Update;
        state.rng = detail::Rng(shard.rng);
        std::vector<std::int32_t> sentence, kept;
        kept.reserve(detail::kMaxSentence);
        std::int64_t pending = 0;
        float alpha = static_cast<float>(c.schedule.alphaAt(
            c.epochBase + static_cast<double>(processed.load()) * c.schedule.toGlobal));
        double lastReport = -1e9;  // report at the first flush, then a few times a second
        double stretchLoss = mine.loss;
        std::int64_t stretchPredictions = mine.predictions;
        bool stopped = false;
        while (!errors.failed() && reader.next(sentence)) {
          kept.clear();
          c.subsample.apply(sentence, state.rng, kept);
          if (!kept.empty())
            mine.loss +=
                c.kernel.sentence(kept.data(), kept.size(), alpha, state, mine.predictions);
          pending += static_cast<std::int64_t>(sentence.size());
          if (pending < kFlushWords) continue;
          const std::int64_t localDone = processed.fetch_add(pending) + pending;
          pending = 0;
          if (c.sync && tid == 0) c.sync->poll(localDone);
          // Distributed: the schedule's words are those of all processes.
          const double done = static_cast<double>(localDone) * c.schedule.toGlobal;
          // The stretch since this thread's last flush.
          c.guard.check(c.epoch + 1, mine.loss - stretchLoss, mine.predictions - stretchPredictions);
          stretchLoss = mine.loss;
          stretchPredictions = mine.predictions;
          alpha = static_cast<float>(c.schedule.alphaAt(c.epochBase + done));
          mine.publishedLoss.store(mine.loss, std::memory_order_relaxed);
          mine.publishedPredictions.store(mine.predictions, std::memory_order_relaxed);
          // The safe point: nothing of this thread is unpublished. Asked before the
          // progress report, so a front end knows a state can be saved (the CLI
          // stops quitting at once on a signal) before it shows that training runs.
          if (tid == 0 && observer.interrupt) ask();
          if (tid == 0 && observer.progress) {
            const double elapsed = secondsSince(c.runStart);
            if (elapsed - lastReport >= 0.25) {
              lastReport = elapsed;
              reportProgress(c, totals, done, alpha, elapsed);
            }
          }
          if (stop.load() != 0) {
            stopped = true;
            break;
          }
        }
        if (!stopped) processed.fetch_add(pending);
        shard.position = reader.position();
        shard.rng = state.rng.state;
        shard.loss = mine.loss;
        shard.predictions = mine.predictions;
        finished.fetch_add(1);
      }
      // The calling thread keeps answering interrupts while the others finish.
      if (tid == 0 && observer.interrupt)
        while (finished.load() < threads && stop.load() == 0 && !errors.failed()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          ask();
        }
      if (c.sync && tid == 0)
        c.sync->drain([&] { return processed.load(); }, [&] { return errors.failed(); });
    });
  }
  errors.rethrow();
  progress.words = processed.load();
  for (const ShardProgress& shard : progress.shards)
    if (shard.position < shard.end) return static_cast<Interrupt>(stop.load());
  return Interrupt::None;
}

// Every value finite, read in storage order (Eigen's allFinite walks a row-major
// matrix by columns, seconds on a subword model's 2M bucket rows): x - x is 0 for
// a finite x and NaN otherwise, so the sum is 0 exactly when all are finite.
bool allFinite(const MatrixF& m) {
  const float* p = m.data();
  const auto n = static_cast<std::size_t>(m.size());
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (std::size_t i = 0; i < n; ++i) sum += p[i] - p[i];
  return sum == 0;
}

// Every weight finite (packed or not); the input rows are the dense ones while a
// subword model trains them gathered (the model's own are stale or not drawn).
bool weightsFinite(const ModelState& model, const detail::DenseRows* dense) {
  if (dense) {
    if (!dense->finite()) return false;
    if (model.packed == PackedWeights::None) return allFinite(model.output);
  }
  if (model.packed == PackedWeights::None) return allFinite(model.input) && allFinite(model.output);
  // A 16-bit value is infinite or NaN when its exponent bits are all ones.
  const std::uint16_t exponent = model.packed == PackedWeights::Bf16 ? 0x7F80 : 0x7C00;
  for (const MatrixF* m : {&model.input, &model.output}) {
    if (dense && m == &model.input) continue;
    const auto* h = reinterpret_cast<const std::uint16_t*>(m->data());
    const auto n = static_cast<std::size_t>(m->size());
    std::uint16_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad |= ((h[i] & exponent) == exponent) ? 1 : 0;
    if (bad) return false;
  }
  return true;
}

PackedWeights packingOf(WeightType type) {
  return type == WeightType::Bf16   ? PackedWeights::Bf16
         : type == WeightType::Fp16 ? PackedWeights::Fp16
                                    : PackedWeights::None;
}

// A finished epoch: the shards' totals merged (and, distributed, every row
// combined), checked for divergence and recorded in the model.
EpochReport endEpoch(const EpochContext& c, ModelState& model, const EpochProgress& progress,
                     std::int64_t wordsBefore, Clock::time_point epochStart,
                     const detail::DenseRows* dense) {
  // Fixed merge order: the loss does not depend on which thread finished first.
  double loss = 0;
  std::int64_t predictions = 0;
  for (const auto& t : progress.shards) {
    loss += t.loss;
    predictions += t.predictions;
  }
  std::int64_t words = progress.words;
  if (c.sync) c.sync->endEpoch(model, loss, predictions, words);
  EpochReport report;
  report.epoch = c.epoch + 1;
  // No prediction, no loss: NaN ("not available"), not a perfect 0.
  report.loss = predictions > 0 ? loss / static_cast<double>(predictions)
                                : std::numeric_limits<double>::quiet_NaN();
  report.words = words;
  report.runWords = words - wordsBefore;
  report.seconds = secondsSince(epochStart);
  report.predictions = predictions;
  // Weights can overflow without the loss showing it yet (the last updates of the epoch).
  if ((predictions > 0 && !std::isfinite(report.loss)) || !weightsFinite(model, dense))
    throwDiverged(c.config, c.sync != nullptr, c.sync && c.sync->sumsChanges(), c.epoch + 1,
                  report.loss, c.guard.reference());
  // The whole epoch against the run's reference (a corpus too small for a thread to
  // flush mid-epoch sets it here).
  c.guard.check(c.epoch + 1, loss, predictions);
  // Distributed: ranks whose combined steps are too long make the loss grow epoch
  // over epoch long before anything overflows. A healthy run's epoch loss falls
  // (or stays within a few per cent, sampling noise); a quarter more than the
  // previous epoch's is a runaway, not noise.
  if (c.sync && predictions > 0 && !model.epochLosses.empty() &&
      std::isfinite(model.epochLosses.back()) &&
      report.loss > kLossGrowthLimit * model.epochLosses.back())
    throwDiverged(c.config, true, c.sync->sumsChanges(), c.epoch + 1, report.loss,
                  c.guard.reference(), model.epochLosses.back());
  model.epochLosses.push_back(report.loss);
  model.epochsDone = c.epoch + 1;
  return report;
}

// Runs epochs [model.epochsDone, totalEpochs) of the schedule for totalEpochs,
// finishing model.partial first when the model was stopped inside an epoch.
// `undrawnFrom`: a new subword model's input rows from there on are not drawn yet
// (trainPrepared); -1 when the model is whole.
void runEpochs(ModelState& model, const detail::PreparedCorpus& corpus, const TrainConfig& config,
               int totalEpochs, const TrainObserver& observer, detail::EpochSync* sync,
               KernelProbe* probe = nullptr, Eigen::Index undrawnFrom = -1) {
  const int threads = detail::resolveThreads(config.threads);
  const Vocabulary& vocab = corpus.vocabulary;
  const detail::Subsampler subsample(vocab, config.sample);
  NoiseSampler noise;
  detail::HuffmanTree tree;
  if (config.loss == Loss::NegativeSampling)
    noise = detail::trainingNoise(vocab, config.nsExponent);
  else
    tree = detail::buildHuffmanTree(vocab.counts());
  static const detail::Sigmoid sigmoid;
  if (config.weights != WeightType::Fp32) {
    const auto kind = detail::kernelFor(config);
    if (kind != detail::KernelKind::BatchedSkipGram && kind != detail::KernelKind::SubwordSkipGram)
      throw ConfigError(std::string("weights stored in ") + weightTypeName(config.weights) +
                        " train skip-gram with negative sampling (the batched or the subword "
                        "kernel) only; use float32 weights (fp32) for CBOW, hierarchical softmax "
                        "or the classic kernel");
    if (sync && !sync->combinesPacked())
      throw ConfigError(std::string("weights stored in ") + weightTypeName(config.weights) +
                        " train across processes with the sparse synchronisation schedule only; "
                        "use it (the default) or float32 weights (fp32)");
  }
  // Subword training: every word's rows, listed once before the first epoch.
  detail::SubwordRows subwordRows;
  if (config.subwords) subwordRows = detail::subwordRowsOf(model.words, config, threads);
  // 16-bit weights train packed (and the model stays so); float32 ones unpacked.
  packWeights(model, packingOf(config.weights));
  // A subword model trains its used rows gathered (dense_rows.hpp), copied back
  // where the model is seen: a checkpoint, a stop, the end. (Exchanges across
  // processes, which subword training does not do, would address the model's rows.)
  std::optional<detail::DenseRows> dense;
  const auto modelRows = static_cast<std::size_t>(model.input.rows());
  const std::size_t rowBytes =
      static_cast<std::size_t>(model.input.cols()) * (model.packed == PackedWeights::None ? 4 : 2);
  if (config.subwords && !sync &&
      detail::DenseRows::pays(detail::DenseRows::distinctRows(subwordRows, modelRows), modelRows,
                              rowBytes)) {
    dense.emplace(subwordRows, modelRows, static_cast<std::size_t>(model.input.cols()),
                  model.packed);
    dense->gather(model.input, undrawnFrom, config.seed, threads);
  } else if (undrawnFrom >= 0) {
    detail::drawRows(model.input, undrawnFrom, config.seed, model.packed, threads);
  }
  // `last`: no more training, the dense rows' memory given back as they are copied.
  const auto expose = [&](bool last) {
    if (dense) dense->scatter(model.input, threads, last);
  };
  // Training is over (the end, or a stop): a new model to be written as it is keeps
  // its words' rows gathered and the rest undrawn (ModelState::unplacedRows).
  const auto finish = [&] {
    if (dense && config.deferRows && dense->undrawn() && !sync)
      model.unplacedRows = std::make_shared<detail::DenseRows>(std::move(*dense));
    else
      expose(true);
  };
  detail::KernelShared shared{
      dense ? &dense->matrix() : &model.input, &model.output, &noise, &tree, &sigmoid,
      config.subwords ? &subwordRows : nullptr};
  const auto kernel = detail::makeKernel(config, shared, probe);
  const Schedule schedule = scheduleOf(model, corpus, config, totalEpochs, sync);
  LossGuard guard(config, sync);
  const int firstEpoch = model.epochsDone;
  const auto runStart = Clock::now();

  for (int epoch = firstEpoch; epoch < totalEpochs; ++epoch) {
    if (observer.stopRequested && observer.stopRequested()) break;
    const auto epochStart = Clock::now();
    const EpochContext context{corpus,
                               subsample,
                               *kernel,
                               config,
                               observer,
                               sync,
                               schedule,
                               guard,
                               epoch,
                               totalEpochs,
                               static_cast<double>(schedule.epochWords) * epoch,
                               runStart};
    EpochProgress progress;
    if (epoch == firstEpoch && model.partial.active()) {
      progress = std::move(model.partial);
      model.partial = EpochProgress{};
    } else {
      progress = newEpoch(context, threads);
    }
    const std::int64_t wordsBefore = progress.words;  // trained by an earlier run
    if (sync) sync->beginEpoch(model, schedule.localWords);

    for (;;) {
      const Interrupt how = trainShards(context, progress, threads);
      if (how == Interrupt::None) break;
      model.partial = progress;
      if (how == Interrupt::Stop) {
        finish();
        return;
      }
      expose(false);
      if (observer.checkpoint) observer.checkpoint(model);
      model.partial = EpochProgress{};
    }

    const EpochReport report =
        endEpoch(context, model, progress, wordsBefore, epochStart, dense ? &*dense : nullptr);
    if (observer.epochEnd) observer.epochEnd(report);
    if (observer.interrupt) {
      const Interrupt how = observer.interrupt();
      if (how == Interrupt::Stop && epoch + 1 < totalEpochs) {
        finish();
        return;
      }
      if (how == Interrupt::Checkpoint && observer.checkpoint) {
        expose(false);
        observer.checkpoint(model);
      }
    }
  }
  finish();
  if (sync) sync->finish(model);
}

void logCorpus(const TrainObserver& observer, const detail::PreparedCorpus& c) {
  if (!observer.log) return;
  std::ostringstream s;
  s << "vocabulary: " << c.vocabulary.size() << " words kept of " << c.distinctWords
    << " distinct, " << c.stream.words() << " of " << c.tokens << " tokens";
  if (c.prunings > 0)
    s << " (rare words were forgotten " << c.prunings
      << " times while counting to bound memory; their counts may be low)";
  observer.log(s.str());
}

}  // namespace

namespace {

// How a file corpus was read, as "corpus.KEY=VALUE" lines stored after the
// training config: the same files read another way (another locale, without
// punctuation) give other tokens in silence, so resuming checks them.
// Sentences in memory and generators record nothing.
std::string readingOf(const CorpusSource& corpus) {
  if (corpus.paths().empty()) return {};
  const TokenizerOptions& t = corpus.tokenizer();
  std::string s = std::string("corpus.reading=") +
                  (corpus.pretokenized() ? "pretokenized" : "raw") +
                  "\ncorpus.invalid_utf8=" + (t.replaceInvalid ? "replace" : "refuse") + "\n";
  if (!corpus.pretokenized())
    s += std::string("corpus.case=") + (t.lowercase ? "lowercase" : "keep") +
         "\ncorpus.punctuation=" + (t.keepPunctuation ? "keep" : "drop") +
         "\ncorpus.locale=" + t.locale + "\n";
  return s;
}

// The "corpus." lines of a stored config.
std::string recordedReading(const std::string& config) {
  std::string out;
  std::size_t at = 0;
  while (at < config.size()) {
    std::size_t end = config.find('\n', at);
    if (end == std::string::npos) end = config.size();
    if (config.compare(at, 7, "corpus.") == 0) out += config.substr(at, end - at) + "\n";
    at = end + 1;
  }
  return out;
}

// What each key means in a message.
std::string readingMeaning(const std::string& key, const std::string& value) {
  if (key == "corpus.reading")
    return value == "pretokenized" ? "as pre-tokenized lines" : "as raw text through the tokenizer";
  if (key == "corpus.invalid_utf8")
    return value == "replace" ? "replacing invalid UTF-8" : "refusing invalid UTF-8";
  if (key == "corpus.case") return value == "keep" ? "keeping case" : "lowercased";
  if (key == "corpus.punctuation")
    return value == "keep" ? "keeping punctuation tokens" : "dropping punctuation tokens";
  if (key == "corpus.locale") return "with locale '" + value + "'";
  return key + "=" + value;
}

// InputError when a model's recorded reading differs from how `corpus` is read.
void checkReading(const std::string& recorded, const CorpusSource& corpus) {
  const std::string now = readingOf(corpus);
  if (recorded.empty() || now.empty() || recorded == now) return;
  auto valueOf = [](const std::string& lines, const std::string& key) {
    const std::size_t at = lines.find(key + "=");
    if (at == std::string::npos) return std::string();
    const std::size_t from = at + key.size() + 1;
    return lines.substr(from, lines.find('\n', from) - from);
  };
  for (const char* key : {"corpus.reading", "corpus.invalid_utf8", "corpus.case",
                          "corpus.punctuation", "corpus.locale"}) {
    const std::string was = valueOf(recorded, key), is = valueOf(now, key);
    if (was != is && !was.empty() && !is.empty())
      throw InputError("the model was trained on its corpus read " + readingMeaning(key, was) +
                       ", but this corpus is read " + readingMeaning(key, is) +
                       "; resume with the reading options it was trained with");
  }
  throw InputError("the model was trained on its corpus read another way (" +
                   recorded.substr(0, 60) +
                   "); resume with the reading options it was trained with");
}

// Rows of the input matrix: a row per word, and with subwords one per n-gram
// bucket after them (fastText's layout). Row numbers are 32-bit in the kernels.
Eigen::Index inputRows(Eigen::Index words, const TrainConfig& config) {
  if (!config.subwords) return words;
  const std::int64_t rows = static_cast<std::int64_t>(words) + config.bucket;
  if (rows > std::numeric_limits<std::int32_t>::max())
    throw ConfigError(ErrorText("the vocabulary (" + std::to_string(words) + " words) and ")
                      << Setting{"bucket", "the n-gram buckets"}
                      << " (" + std::to_string(config.bucket) +
                             ") make more than 2^31 - 1 input rows; use fewer buckets");
  return static_cast<Eigen::Index>(rows);
}

// The matrices of a new model: input rows from the seed (the first `drawn` of them;
// the rest are left for DenseRows to draw), output rows zero; with 16-bit weights
// written packed at once (the float32 matrices are never filled, so their second
// halves are never given memory).
void initMatrices(ModelState& model, const TrainConfig& config, Eigen::Index v, Eigen::Index d,
                  int threads, Eigen::Index drawn) {
  const Eigen::Index outRows = config.loss == Loss::HierarchicalSoftmax ? v - 1 : v;
  const Eigen::Index inRows = inputRows(v, config);  // subwords: the bucket rows too
  model.input.resize(inRows, d);
  model.output.resize(outRows, d);
  // Before the first touch; 16-bit values fill the first half only, and a huge page
  // across the middle would give the untouched half memory.
  const std::size_t used = config.weights == WeightType::Fp32 ? sizeof(float) : 2;
  for (MatrixF* m : {&model.input, &model.output})
    detail::adviseHugePages(m->data(), static_cast<std::size_t>(m->size()) * used);
  if (config.weights == WeightType::Fp32) {
    if (drawn >= inRows) {
      detail::initInputMatrix(model.input, config.seed, threads);
    } else {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (Eigen::Index r = 0; r < drawn; ++r)
        detail::initInputRow(model.input.row(r).data(), static_cast<std::size_t>(d), config.seed,
                             static_cast<std::uint64_t>(r));
    }
    model.output.setZero();
    return;
  }
  const auto dim = static_cast<std::size_t>(d);
  auto* in = reinterpret_cast<std::uint16_t*>(model.input.data());
  const PackedWeights packed = packingOf(config.weights);
  drawn = std::min(drawn, inRows);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (Eigen::Index r = 0; r < drawn; ++r)
    detail::drawStoredRow(in + static_cast<std::size_t>(r) * dim, dim, config.seed,
                          static_cast<std::uint64_t>(r), packed);
  // +0 is the all-zero bit pattern in both 16-bit types.
  std::memset(model.output.data(), 0, static_cast<std::size_t>(model.output.size()) * 2);
  model.packed = packed;
}

ModelState trainPrepared(detail::PreparedCorpus& prepared, const TrainConfig& config,
                         const TrainObserver& observer, const detail::TrainHooks& hooks,
                         const std::string& reading) {
  const int threads = detail::resolveThreads(config.threads);
  const auto v = static_cast<Eigen::Index>(prepared.vocabulary.size());
  if (config.loss == Loss::HierarchicalSoftmax && v < 2)
    throw InputError(
        ErrorText("hierarchical softmax needs at least 2 words in the vocabulary (got " +
                  std::to_string(v) + "); lower ")
        << Setting{"minCount", "the minimum count"});
  inputRows(v, config);  // refuses a bucket count the row numbers cannot hold
  // Before the matrices: refuse at once what would not fit, rather than swap for hours.
  const MemoryEstimate memory = detail::estimateMemory(prepared, config, threads);
  detail::checkMemory(memory, config);
  // Logged once the corpus is known to be usable: a bad corpus gives one error line, nothing else.
  if (observer.log) observer.log(describeConfig(config, threads));
  // The counting table is gone: give its pages back before the matrices arrive,
  // so peak memory is the larger of the two, not their sum.
  ::malloc_trim(0);
  if (!hooks.merge) {  // a merge logs the counts of all processes
    logCorpus(observer, prepared);
    if (observer.counted) {
      CorpusCounts counts;
      counts.distinctWords = prepared.distinctWords;
      counts.tokens = prepared.tokens;
      counts.keptWords = static_cast<std::int64_t>(prepared.vocabulary.size());
      counts.keptTokens = prepared.stream.words();
      observer.counted(counts);
    }
  }
  if (observer.log)
    observer.log("memory: about " + detail::humanBytes(memory.total()) + " (matrices " +
                 detail::humanBytes(memory.matrices) + ", vocabulary " +
                 detail::humanBytes(memory.vocabulary) + ", buffers " +
                 detail::humanBytes(memory.buffers) + ")");
  if (observer.vocabulary) observer.vocabulary(prepared.vocabulary, prepared.sentences);
  const auto d = static_cast<Eigen::Index>(config.dim);

  ModelState model;
  model.words = prepared.vocabulary.words();
  model.counts = prepared.vocabulary.counts();
  model.config = config.serialize() + reading;
  // A subword model's input rows are drawn as training needs them (dense_rows.hpp).
  const Eigen::Index drawn = config.subwords && !hooks.sync ? 0 : inputRows(v, config);
  initMatrices(model, config, v, d, threads, drawn);
  runEpochs(model, prepared, config, config.epochs, observer, hooks.sync, hooks.probe,
            drawn < model.input.rows() ? drawn : -1);
  return model;
}

}  // namespace

ModelState train(const CorpusSource& corpus, const TrainConfig& config,
                 const TrainObserver& observer) {
  return detail::trainWith(corpus, config, observer, {});
}

ModelState trainProbed(const CorpusSource& corpus, const TrainConfig& config, KernelProbe& probe,
                       const TrainObserver& observer) {
  if (detail::kernelFor(config) != detail::KernelKind::BatchedSkipGram)
    throw ConfigError(
        "a kernel probe instruments the batched kernel: skip-gram with negative "
        "sampling and the batched kernel");
  detail::TrainHooks hooks;
  hooks.probe = &probe;
  return detail::trainWith(corpus, config, observer, hooks);
}

void resumeTraining(ModelState& model, const CorpusSource& corpus, int moreEpochs,
                    const TrainObserver& observer) {
  detail::resumeWith(model, corpus, moreEpochs, observer, {});
}

ModelState detail::trainWith(const CorpusSource& corpus, const TrainConfig& config,
                             const TrainObserver& observer, const TrainHooks& hooks) {
  config.validate();
  detail::PreparedCorpus prepared =
      detail::prepareCorpus(corpus, config.minCount, config.maxVocab, 20'000'000,
                            detail::resolveThreads(config.threads), hooks.merge);
  return trainPrepared(prepared, config, observer, hooks, readingOf(corpus));
}

ModelState train(const CorpusSource& corpus, const TrainConfig& config,
                 const Vocabulary& vocabulary, const TrainObserver& observer) {
  config.validate();
  // word2vec.c applies min-count to a vocabulary it reads; the order stays the given one.
  std::vector<std::string> words;
  std::vector<std::int64_t> counts;
  for (std::size_t i = 0; i < vocabulary.size(); ++i) {
    const auto id = static_cast<WordId>(i);
    if (vocabulary.count(id) < config.minCount) continue;
    if (config.maxVocab > 0 && words.size() == config.maxVocab) break;
    words.push_back(vocabulary.word(id));
    counts.push_back(vocabulary.count(id));
  }
  if (words.empty())
    throw InputError("no word of the given vocabulary (" + std::to_string(vocabulary.size()) +
                     " words) reaches the minimum count of " + std::to_string(config.minCount));
  for (std::size_t i = 1; i < counts.size(); ++i)
    if (counts[i] > counts[i - 1])
      throw InputError("the given vocabulary is not sorted by count ('" + words[i] +
                       "' follows a rarer word)");
  detail::PreparedCorpus prepared =
      detail::prepareCorpus(corpus, Vocabulary(std::move(words), std::move(counts)));
  prepared.distinctWords = static_cast<std::int64_t>(prepared.vocabulary.size());
  return trainPrepared(prepared, config, observer, {}, readingOf(corpus));
}

ModelState initialModel(const Vocabulary& vocabulary, const TrainConfig& config) {
  config.validate();
  const auto v = static_cast<Eigen::Index>(vocabulary.size());
  if (v < 1) throw InputError("the vocabulary is empty: no word to train");
  if (config.loss == Loss::HierarchicalSoftmax && v < 2)
    throw InputError("hierarchical softmax needs at least 2 words in the vocabulary (got 1)");
  const auto d = static_cast<Eigen::Index>(config.dim);
  ModelState model;
  model.words = vocabulary.words();
  model.counts = vocabulary.counts();
  model.config = config.serialize();
  model.input.resize(inputRows(v, config), d);
  model.output.resize(config.loss == Loss::HierarchicalSoftmax ? v - 1 : v, d);
  detail::adviseHugePages(model.input);  // before the first touch
  detail::adviseHugePages(model.output);
  detail::initInputMatrix(model.input, config.seed, detail::resolveThreads(config.threads));
  model.output.setZero();
  return model;
}

std::size_t extendVocabulary(ModelState& model, const std::vector<std::string>& words,
                             const std::vector<std::int64_t>& counts) {
  if (words.size() != counts.size())
    throw InputError("words and counts differ in length (" + std::to_string(words.size()) +
                     " and " + std::to_string(counts.size()) + ")");
  // Every word is checked before the model changes: a refused call leaves it as it
  // was (a word holding whitespace used to be added, and then no save could write
  // the model).
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i].empty()) throw InputError("an added word is empty");
    if (std::any_of(words[i].begin(), words[i].end(), detail::isAsciiSpace))
      throw InputError("the added word '" + words[i] +
                       "' contains whitespace, which no word of a model may hold (its files "
                       "separate words by whitespace); split it or replace the whitespace");
    if (counts[i] < 1)
      throw InputError("the count of '" + words[i] + "' must be at least 1 (got " +
                       std::to_string(counts[i]) + ")");
  }
  {
    std::unordered_map<std::string_view, std::int64_t> total;
    for (std::size_t i = 0; i < model.words.size(); ++i) total.emplace(model.words[i], model.counts[i]);
    for (std::size_t i = 0; i < words.size(); ++i)
      if (__builtin_add_overflow(total[words[i]], counts[i], &total[words[i]]))
        throw InputError("the count of '" + words[i] + "' overflows");
  }
  placeRows(model);  // rows move with their words
  if (model.partial.active())
    throw ConfigError("the model was stopped inside epoch " + std::to_string(model.epochsDone + 1) +
                      "; finish that epoch (resume training) before adding words");
  const TrainConfig config = TrainConfig::deserialize(model.config);
  checkModel(model, config);
  unpackWeights(model);  // rows move below; the next training packs them again
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < model.words.size(); ++i) index.emplace(model.words[i], i);
  const std::size_t oldSize = model.words.size();
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto [at, added] = index.emplace(words[i], model.words.size());
    if (added) {
      model.words.push_back(words[i]);
      model.counts.push_back(counts[i]);
    } else {
      model.counts[at->second] += counts[i];  // no overflow: checked above
    }
  }
  const std::size_t v = model.words.size();
  const auto d = static_cast<Eigen::Index>(config.dim);
  // Most frequent first; a stable sort keeps ties in their order, new words last.
  std::vector<std::size_t> order(v);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return model.counts[a] > model.counts[b]; });
  // With subwords the n-gram rows follow the word rows (fastText's layout) and stay as
  // they are; a new word's row is drawn from a row number past the old model's rows
  // (old words + buckets + its index), which none of the model's rows was drawn from.
  const Eigen::Index ngramRows = config.subwords ? config.bucket : 0;
  const std::uint64_t newRowBase =
      config.subwords ? oldSize + static_cast<std::uint64_t>(config.bucket) : 0;
  MatrixF input(inputRows(static_cast<Eigen::Index>(v), config), d);
  const bool hs = config.loss == Loss::HierarchicalSoftmax;
  MatrixF output = MatrixF::Zero(static_cast<Eigen::Index>(hs ? v - 1 : v), d);
  std::vector<std::string> sortedWords(v);
  std::vector<std::int64_t> sortedCounts(v);
  for (std::size_t to = 0; to < v; ++to) {
    const std::size_t from = order[to];
    const auto row = static_cast<Eigen::Index>(to);
    sortedWords[to] = std::move(model.words[from]);
    sortedCounts[to] = model.counts[from];
    if (from < oldSize) {
      input.row(row) = model.input.row(static_cast<Eigen::Index>(from));
      if (!hs) output.row(row) = model.output.row(static_cast<Eigen::Index>(from));
    } else {
      detail::initInputRow(input.row(row).data(), config.dim, config.seed, newRowBase + from);
    }
  }
  if (ngramRows > 0) input.bottomRows(ngramRows) = model.input.bottomRows(ngramRows);
  if (hs) output.topRows(model.output.rows()) = model.output;
  model.words = std::move(sortedWords);
  model.counts = std::move(sortedCounts);
  model.input = std::move(input);
  model.output = std::move(output);
  return v - oldSize;
}

std::size_t extendVocabulary(ModelState& model, const CorpusSource& corpus) {
  const TrainConfig config = TrainConfig::deserialize(model.config);
  // Before the corpus is counted: a corpus read another way is refused before a word
  // is added (resuming on it would refuse it anyway, after the count).
  checkReading(recordedReading(model.config), corpus);
  const detail::PreparedCorpus counted =
      detail::prepareCorpus(corpus, 1, 0, 20'000'000, detail::resolveThreads(config.threads));
  std::unordered_map<std::string_view, std::size_t> known;
  for (std::size_t i = 0; i < model.words.size(); ++i) known.emplace(model.words[i], i);
  std::vector<std::string> words;
  std::vector<std::int64_t> counts;
  for (std::size_t i = 0; i < counted.vocabulary.size(); ++i) {
    const auto id = static_cast<WordId>(i);
    const std::int64_t c = counted.vocabulary.count(id);
    if (known.count(counted.vocabulary.word(id)) == 0 && c < config.minCount) continue;
    words.push_back(counted.vocabulary.word(id));
    counts.push_back(c);
  }
  return extendVocabulary(model, words, counts);
}

int epochsLeft(const ModelState& model) {
  const TrainConfig config = TrainConfig::deserialize(model.config);
  return std::max(0, config.epochs - model.epochsDone);
}

void placeRows(ModelState& model) {
  if (!model.unplacedRows) return;
  std::shared_ptr<detail::UnplacedRows> rows = std::move(model.unplacedRows);
  model.unplacedRows.reset();
  // Placing consumes the gathered rows (their memory is given back as they are
  // copied): a copy of the model that shares them gets its own.
  if (rows.use_count() > 1)
    rows = std::make_shared<detail::DenseRows>(detail::DenseRows::of(*rows));
  const TrainConfig config = TrainConfig::deserialize(model.config);
  detail::DenseRows::of(*rows).scatter(model.input, detail::resolveThreads(config.threads), true);
}

void detail::resumeWith(ModelState& model, const CorpusSource& corpus, int moreEpochs,
                        const TrainObserver& observer, const TrainHooks& hooks) {
  placeRows(model);
  if (moreEpochs < 1 || moreEpochs > kMaxEpochs)
    throw ConfigError(ErrorText::about(Setting{"epochs", "epochs"})
                      << " to resume must be between 1 and " << std::to_string(kMaxEpochs)
                      << " (got " << std::to_string(moreEpochs) << ")");
  TrainConfig config = TrainConfig::deserialize(model.config);
  try {
    config.validate();
  } catch (const ConfigError& e) {
    throw FormatError(std::string("model holds an invalid training config: ") + e.what());
  }
  checkModel(model, config);
  if (model.epochsDone > config.epochs ||
      (model.partial.active() && model.epochsDone >= config.epochs))
    throw FormatError("model says " + std::to_string(model.epochsDone) + " epochs are done of " +
                      std::to_string(config.epochs) + " (corrupt file?)");
  const int total = model.epochsDone + moreEpochs;
  TrainConfig resumed = config;
  resumed.epochs = total;
  const int threads = detail::resolveThreads(resumed.threads);
  // Before the corpus is counted: a different reading is refused at once.
  const std::string recorded = recordedReading(model.config);
  checkReading(recorded, corpus);
  Vocabulary vocab(model.words, model.counts);
  detail::PreparedCorpus prepared = detail::prepareCorpus(corpus, vocab, hooks.sync != nullptr);
  if (model.partial.active()) {
    if (hooks.sync)
      throw ConfigError(
          "the model was stopped inside an epoch by a one-process run; resume it "
          "with one process, or from a checkpoint taken at an epoch's end");
    const EpochProgress& p = model.partial;
    if (p.shards.size() > static_cast<std::size_t>(kMaxTrainThreads))
      throw FormatError("model says " + std::to_string(p.shards.size()) +
                        " threads were inside epoch " + std::to_string(model.epochsDone + 1) +
                        "; training runs at most " + std::to_string(kMaxTrainThreads) +
                        " (corrupt file?)");
    if (p.streamSize != prepared.stream.size() || p.words > prepared.stream.words())
      throw InputError("the model was stopped inside epoch " +
                       std::to_string(model.epochsDone + 1) +
                       " of a different corpus (or one read with other options); resume it on "
                       "the corpus it was trained on");
    for (const ShardProgress& s : p.shards)
      if (s.position < 0 || s.position > s.end || s.end > p.streamSize)
        throw FormatError("model's position inside epoch " + std::to_string(model.epochsDone + 1) +
                          " is impossible (corrupt file?)");
  }
  if (observer.log) {
    std::string at = "after epoch " + std::to_string(model.epochsDone);
    if (model.partial.active())
      at = "inside epoch " + std::to_string(model.epochsDone + 1) + " (" +
           std::to_string(model.partial.words) + " of " + std::to_string(prepared.stream.words()) +
           " words done, finished with its " + std::to_string(model.partial.shards.size()) +
           " thread" + (model.partial.shards.size() == 1 ? "" : "s") + ")";
    observer.log("resuming " + at + ": " + describeConfig(resumed, threads));
    const std::int64_t outside = prepared.tokens - prepared.stream.words();
    std::ostringstream line;
    line << "vocabulary: the model's " << vocab.size() << " words; " << outside << " of "
         << prepared.tokens << " corpus tokens";
    if (prepared.tokens > 0 && outside > 0)
      line << " (" << std::setprecision(3)
           << 100.0 * static_cast<double>(outside) / static_cast<double>(prepared.tokens) << "%)";
    line << " are outside it and skipped (a resumed model keeps its vocabulary)";
    observer.log(line.str());
  }
  if (observer.vocabulary) observer.vocabulary(vocab, prepared.sentences);
  // Trained in place (a copy would double peak memory); the stored schedule is the new total.
  model.config = resumed.serialize() + (recorded.empty() ? readingOf(corpus) : recorded);
  runEpochs(model, prepared, resumed, total, observer, hooks.sync, hooks.probe);
}

}  // namespace posvec
