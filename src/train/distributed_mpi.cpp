// Distributed training over MPI: the ranks' shared vocabulary, the synchronisation
// of their weights, and Cluster's collectives. Compiled when the build has MPI
// (POSVEC_MPI); distributed_no_mpi.cpp stands in otherwise.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "half.hpp"
#include "kernels.hpp"
#include "posvec/distributed.hpp"
#include "posvec/error.hpp"
#include "train_hooks.hpp"

namespace posvec {

bool Cluster::available() { return true; }

// ---- the ranks' copies of the corpus: one fingerprint a file -----------------

namespace {

// Each corpus file as "path<TAB>size<TAB>fingerprint" lines: the fingerprint hashes
// (FNV-1a, 64 bits) up to 64 KiB at the start, the middle and the end, so two
// copies that differ in length or at either end, or whose middle was edited,
// are told apart in three reads however large the file is.
std::string corpusFingerprint(const CorpusSource& corpus) {
  std::string lines;
  std::vector<char> buf(1 << 16);
  for (const auto& path : corpus.paths()) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
    const off_t size = ::lseek(fd, 0, SEEK_END);
    std::uint64_t h = 0xcbf29ce484222325ULL;
    const off_t block = static_cast<off_t>(buf.size());
    for (const off_t at :
         {off_t{0}, std::max<off_t>(0, size / 2 - block / 2), std::max<off_t>(0, size - block)}) {
      ssize_t got;
      do {
        got = ::pread(fd, buf.data(), buf.size(), at);
      } while (got < 0 && errno == EINTR);
      if (got < 0) {
        const int err = errno;
        ::close(fd);
        throw IoError("cannot read '" + path + "': " + std::strerror(err));
      }
      for (ssize_t i = 0; i < got; ++i) {
        h ^= static_cast<unsigned char>(buf[static_cast<std::size_t>(i)]);
        h *= 0x100000001b3ULL;
      }
    }
    ::close(fd);
    lines += path + "\t" + std::to_string(size) + "\t" + std::to_string(h) + "\n";
  }
  return lines;
}

}  // namespace

// ---- collectives in pieces, and the shared vocabulary ------------------------

namespace {

// MPI counts are ints: large buffers go in pieces.
constexpr std::size_t kMaxCount = std::size_t{1} << 28;

void sumInPlace(float* data, std::size_t n) {
  for (std::size_t at = 0; at < n; at += kMaxCount)
    MPI_Allreduce(MPI_IN_PLACE, data + at, static_cast<int>(std::min(kMaxCount, n - at)), MPI_FLOAT,
                  MPI_SUM, MPI_COMM_WORLD);
}

std::int64_t reduceInt(std::int64_t v, MPI_Op op) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, op, MPI_COMM_WORLD);
  return v;
}

void broadcast(std::string& s, int root) {
  std::int64_t n = static_cast<std::int64_t>(s.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, root, MPI_COMM_WORLD);
  s.resize(static_cast<std::size_t>(n));
  for (std::size_t at = 0; at < s.size(); at += kMaxCount)
    MPI_Bcast(s.data() + at, static_cast<int>(std::min(kMaxCount, s.size() - at)), MPI_CHAR, root,
              MPI_COMM_WORLD);
}

template <typename T>
MPI_Datatype mpiType() {
  if constexpr (std::is_same_v<T, char>) return MPI_CHAR;
  if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
  if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
}

template <typename T>
void broadcast(std::vector<T>& v, int root) {
  std::int64_t n = static_cast<std::int64_t>(v.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, root, MPI_COMM_WORLD);
  v.resize(static_cast<std::size_t>(n));
  for (std::size_t at = 0; at < v.size(); at += kMaxCount)
    MPI_Bcast(v.data() + at, static_cast<int>(std::min(kMaxCount, v.size() - at)), mpiType<T>(),
              root, MPI_COMM_WORLD);
}

// Every rank's vector, concatenated in rank order at rank 0 (empty elsewhere).
template <typename T>
std::vector<T> gather(const std::vector<T>& mine, int rank, int size,
                      std::vector<std::int64_t>* offsets = nullptr) {
  if (mine.size() > static_cast<std::size_t>(INT32_MAX))
    throw InputError(ErrorText("this rank counted too many distinct words to send (more than 2^31 "
                               "bytes); use more ranks or ")
                     << Setting{"minCount", "a higher minimum count"});
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<T> all;
  if (rank == 0) {
    std::int64_t total = 0;
    for (int r = 0; r < size; ++r) {
      if (total > INT32_MAX)
        throw InputError(ErrorText("the ranks' word tables exceed 2^31 entries; raise ")
                         << Setting{"minCount", "the minimum count"});
      displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
      total += counts[static_cast<std::size_t>(r)];
    }
    all.resize(static_cast<std::size_t>(total));
    if (offsets) {
      offsets->assign(displs.begin(), displs.end());
      offsets->push_back(total);
    }
  }
  MPI_Gatherv(mine.data(), n, mpiType<T>(), all.data(), counts.data(), displs.data(), mpiType<T>(),
              0, MPI_COMM_WORLD);
  return all;
}

constexpr const char* kNoWords = "contains no words";

// The vocabulary of all ranks' counts, as one process would count the whole
// corpus: ties in count are broken by first occurrence, which is the order
// (rank, provisional id) because rank r's share precedes rank r + 1's.
Vocabulary mergeVocabulary(const Cluster& cluster, VocabularyBuilder& local, std::int64_t minCount,
                           std::size_t maxVocab, std::vector<WordId>* provisionalToFinal,
                           const TrainObserver& observer) {
  const int rank = cluster.rank(), size = cluster.size();
  std::vector<std::int32_t> lengths, ids;
  std::vector<std::int64_t> counts;
  std::vector<char> bytes;
  // In first-seen order (provisional ids), which the merge's tie order needs.
  std::vector<std::tuple<std::int32_t, std::string_view, std::int64_t>> entries;
  local.forEachInIdOrder(
      [&](std::string_view w, std::int32_t id, std::int64_t c) { entries.emplace_back(id, w, c); });
  std::sort(entries.begin(), entries.end());
  for (const auto& [id, w, c] : entries) {
    lengths.push_back(static_cast<std::int32_t>(w.size()));
    counts.push_back(c);
    bytes.insert(bytes.end(), w.begin(), w.end());
  }
  const std::int64_t tokens = reduceInt(local.tokens(), MPI_SUM);
  const std::int64_t prunings = reduceInt(local.prunings(), MPI_SUM);
  std::vector<std::int64_t> rankStart;
  const auto allLengths = gather(lengths, rank, size, &rankStart);
  const auto allCounts = gather(counts, rank, size);
  const auto allBytes = gather(bytes, rank, size);

  std::vector<std::string> words;
  std::vector<std::int64_t> finalCounts;
  std::string error;
  std::int64_t distinct = 0;
  if (rank == 0) {
    struct Total {
      std::int64_t count;
      std::int64_t order;  // first occurrence: rank-major entry index
    };
    std::unordered_map<std::string_view, Total> totals;
    totals.reserve(allLengths.size());
    std::size_t at = 0;
    for (std::size_t i = 0; i < allLengths.size(); ++i) {
      const std::string_view w(allBytes.data() + at, static_cast<std::size_t>(allLengths[i]));
      at += static_cast<std::size_t>(allLengths[i]);
      auto [it, fresh] = totals.try_emplace(w, Total{0, static_cast<std::int64_t>(i)});
      it->second.count += allCounts[i];
    }
    distinct = static_cast<std::int64_t>(totals.size());
    std::vector<std::pair<std::string_view, Total>> kept;
    std::int64_t best = 0;
    for (const auto& [w, t] : totals) {
      best = std::max(best, t.count);
      if (t.count >= minCount) kept.emplace_back(w, t);
    }
    if (tokens == 0) {
      error = kNoWords;
    } else if (kept.empty()) {
      error = "no word occurs at least " + std::to_string(minCount) +
              " times (the most frequent occurs " + std::to_string(best) + ")";
    }
    std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
      return a.second.count != b.second.count ? a.second.count > b.second.count
                                              : a.second.order < b.second.order;
    });
    if (maxVocab > 0 && kept.size() > maxVocab) kept.resize(maxVocab);
    for (const auto& [w, t] : kept) {
      words.emplace_back(w);
      finalCounts.push_back(t.count);
    }
  }
  broadcast(error, 0);
  if (error == kNoWords) throw InputError(error);
  if (!error.empty())
    throw InputError(ErrorText(error + "; lower ")
                     << Setting{"minCount", "the minimum count"} << " or give a larger corpus");
  std::string packed;
  std::vector<std::int32_t> wordLengths;
  if (rank == 0) {
    for (const auto& w : words) {
      packed += w;
      wordLengths.push_back(static_cast<std::int32_t>(w.size()));
    }
  }
  broadcast(packed, 0);
  broadcast(wordLengths, 0);
  broadcast(finalCounts, 0);
  if (rank != 0) {
    words.clear();
    std::size_t at = 0;
    for (const std::int32_t n : wordLengths) {
      words.emplace_back(packed, at, static_cast<std::size_t>(n));
      at += static_cast<std::size_t>(n);
    }
  }
  Vocabulary vocabulary(std::move(words), std::move(finalCounts));
  provisionalToFinal->assign(static_cast<std::size_t>(local.provisionalIds()), -1);
  local.forEachInIdOrder([&](std::string_view w, std::int32_t id, std::int64_t) {
    (*provisionalToFinal)[static_cast<std::size_t>(id)] = vocabulary.find(w);
  });
  if (observer.log) {
    std::ostringstream s;
    s << "vocabulary of " << size << " ranks: " << vocabulary.size() << " words kept of "
      << distinct << " distinct, " << vocabulary.totalCount() << " of " << tokens << " tokens";
    if (prunings > 0)
      s << " (rare words were forgotten " << prunings
        << " times while counting to bound memory; their counts may be low)";
    observer.log(s.str());
  }
  return vocabulary;
}

// ---- synchronisation ---------------------------------------------------------

// bfloat16: the upper half of a float, rounded to nearest even (NaN kept NaN).
std::uint16_t toBf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

float fromBf16(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// The reduction of bfloat16 changes: each pair added in float, rounded once.
void sumBf16(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = toBf16(fromBf16(a[i]) + fromBf16(b[i]));
}

using Clock = std::chrono::steady_clock;

// Traffic and time blocked in MPI, per rank.
struct SyncStats {
  std::int64_t rounds = 0;
  double bytes = 0;    // handed to MPI as send buffers by the synchronisation
  double waiting = 0;  // seconds blocked in MPI calls of the synchronisation
};

// Times one blocking stretch of MPI calls into `stats.waiting`.
class Blocked {
 public:
  explicit Blocked(SyncStats& stats) : stats_(stats), start_(Clock::now()) {}
  ~Blocked() { stats_.waiting += std::chrono::duration<double>(Clock::now() - start_).count(); }
  Blocked(const Blocked&) = delete;
  Blocked& operator=(const Blocked&) = delete;

 private:
  SyncStats& stats_;
  Clock::time_point start_;
};

// Synchronisation at evenly spaced points of every rank's share, as
// SyncOptions::schedule and combine say. Sparse: a round is two non-blocking
// all-reductions started at a point and completed while training goes on:
// (1) for every row the round covers, how many ranks changed it since its last
// exchange; (2) the changes of the rows some rank changed, in bfloat16. Only one
// round is in flight; the next point completes it first. Dense: the frequent rows
// at each point and every row at each epoch's end, blocking, in float.
class MpiSync final : public detail::EpochSync {
 public:
  MpiSync(const Cluster& cluster, const SyncOptions& options, const TrainConfig& config,
          const TrainObserver& observer)
      : rank_(cluster.rank()),
        size_(cluster.size()),
        options_(options),
        hs_(config.loss == Loss::HierarchicalSoftmax),
        sparse_(options.schedule == SyncOptions::Schedule::Sparse),
        observer_(observer),
        start_(Clock::now()),
        scale_(options.combine == SyncOptions::Combine::Average ||
                       options.combine == SyncOptions::Combine::Momentum
                   ? 1.0f / static_cast<float>(size_)
                   : 1.0f),
        momentum_(options.combine == SyncOptions::Combine::Momentum
                      ? static_cast<float>(options.momentumFor(size_))
                      : 0.0f) {
    MPI_Op_create(&sumBf16, 1, &bf16Sum_);
    ns_ = config.loss == Loss::NegativeSampling;
    seed_ = config.seed;
    sample_ = config.sample;
    negative_ = config.negative;
    epochs_ = config.epochs;
  }
  ~MpiSync() override {
    // A round still in flight (training failed on this rank): the job is being
    // aborted; freeing the operation is all that is left to do.
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (!finalised) MPI_Op_free(&bf16Sum_);
  }
  MpiSync(const MpiSync&) = delete;
  MpiSync& operator=(const MpiSync&) = delete;

  std::int64_t globalWords(std::int64_t localWords) override {
    const std::int64_t total = reduceInt(localWords, MPI_SUM);
    if (total == 0) throw InputError("no rank's share of the corpus holds a vocabulary word");
    return total;
  }

  std::uint64_t rankSeed(std::uint64_t seed) const override {
    return detail::mixSeed(seed, 0xD157000000000000ull + static_cast<std::uint64_t>(rank_));
  }

  bool combinesPacked() const override { return sparse_; }
  bool sumsChanges() const override {
    return options_.combine == SyncOptions::Combine::SumChanges;
  }

  void beginEpoch(ModelState& model, std::int64_t localWords) override {
    model_ = &model;
    localWords_ = localWords;
    if (sparse_ && rate_[0].empty()) occurrenceRates(model);
    // Where the changes are counted from: the model as every rank holds it (the
    // same start on all, then the result of the last synchronisation). 16-bit
    // weights (sparse schedule only) keep their bases in 16 bits too.
    packed_ = model.packed;
    if (packed_ != PackedWeights::None) {
      for (int m = 0; m < 2; ++m) {
        const MatrixF& matrix = m == 0 ? model.input : model.output;
        const auto n = static_cast<std::size_t>(matrix.size());
        if (base16_[m].size() != n) {
          const auto* values = reinterpret_cast<const std::uint16_t*>(matrix.data());
          base16_[m].assign(values, values + n);
        }
      }
    } else if (baseIn_.rows() != model.input.rows() || baseOut_.rows() != model.output.rows()) {
      baseIn_ = model.input;
      baseOut_ = model.output;
    }
    // The momentum combine's last combined step of every row, the same on every
    // rank (zero at the start of a run, a resumed one included).
    if (momentum_ > 0)
      for (int m = 0; m < 2; ++m) {
        const auto n = static_cast<std::size_t>((m == 0 ? model.input : model.output).size());
        if (step_[m].size() != n) step_[m].assign(n, 0.0f);
      }
    // Points in words of the largest share; every rank passes each at the same
    // fraction of its own share, so all enter the same collectives.
    // Passed one by one (SyncOptions::points lists the same), so that a huge share
    // with short intervals needs no list of them.
    {
      Blocked b(stats_);
      clockBefore_ += most_;  // the clock of the rounds: words of the largest share
      most_ = reduceInt(localWords, MPI_MAX);
    }
    warmUp_ = model.epochsDone == 0;
    interval_ = options_.firstInterval(warmUp_);
    // The momentum carries a row's steps over about 1 / (1 - momentum) rounds; in a
    // run of few rounds it would still push with the steps of the first epochs, taken
    // at a higher learning rate far from the rows' optima, in the last ones (a 76-word
    // corpus at 8 ranks, 4 rounds an epoch: the loss rose from epoch 3 to 4). So that
    // memory is kept within a twentieth of the run's rounds.
    if (momentum_ > 0) {
      const double rounds = std::max<double>(1.0, static_cast<double>(most_) /
                                                      static_cast<double>(options_.syncWords)) *
                            std::max(1, epochs_ - model.epochsDone);
      runMomentum_ =
          static_cast<float>(std::clamp(1.0 - 20.0 / rounds, 0.0, static_cast<double>(momentum_)));
    }
    next_ = interval_;
    passed_ = 0;
    const auto v = model.input.rows(), outRows = model.output.rows();
    hotIn_ = options_.syncRows == 0 ? v : std::min<Eigen::Index>(v, options_.syncRows);
    hotOut_ = options_.syncRows == 0 ? outRows : std::min<Eigen::Index>(outRows, options_.syncRows);
    if (!sparse_) {
      const auto floats = static_cast<std::size_t>((hotIn_ + hotOut_) * model.input.cols());
      sum_.resize(floats);
      snapshot_.resize(floats);
    }
  }

  void poll(std::int64_t localDone) override {
    if (sparse_) progress();
    // localDone / localWords_ >= point / most_, in 128 bits (both products can pass 2^63).
    __extension__ using Wide = __int128;
    while (next_ < most_ &&
           static_cast<Wide>(localDone) * most_ >= static_cast<Wide>(next_) * localWords_) {
      if (sparse_) {
        complete();
        clock_ = clockBefore_ + next_;
        startRound(options_.roundRows(round_, model_->input.rows()),
                   options_.roundRows(round_, model_->output.rows()));
        ++round_;
      } else {
        combineFrequentRows();
      }
      ++stats_.rounds;
      ++passed_;
      interval_ = options_.intervalAfter(interval_);
      next_ += interval_;
    }
  }

  void drain(const std::function<std::int64_t()>& localDone,
             const std::function<bool()>& failed) override {
    while (!failed() && localDone() < localWords_) {
      poll(localDone());
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (!failed()) poll(localWords_);
  }

  void endEpoch(ModelState& model, double& loss, std::int64_t& predictions,
                std::int64_t& words) override {
    if (sparse_) {
      complete();
    } else {
      // Every row: the changes of all ranks since the last synchronisation, combined.
      Blocked b(stats_);
      for (auto [m, base] :
           {std::pair{&model.input, &baseIn_}, std::pair{&model.output, &baseOut_}}) {
        *m -= *base;
        sumInPlace(m->data(), static_cast<std::size_t>(m->size()));
        stats_.bytes += static_cast<double>(m->size()) * sizeof(float);
        *m = *base + *m * scale_;
        *base = *m;
      }
      ++stats_.rounds;
    }
    {
      Blocked b(stats_);
      MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      predictions = reduceInt(predictions, MPI_SUM);
      words = reduceInt(words, MPI_SUM);
    }
    if (!logged_ && observer_.log && !sparse_) {
      logged_ = true;
      const double mb = 1.0 / (1 << 20);
      const double hot = static_cast<double>(sum_.size()) * sizeof(float) * mb;
      const double all =
          static_cast<double>(model.input.size() + model.output.size()) * sizeof(float) * mb;
      // Per epoch as the later epochs run (the points k * syncWords inside the largest
      // share); the first epoch of a new model adds the warm-up.
      const std::int64_t rounds = most_ > 0 ? (most_ - 1) / options_.syncWords : 0;
      const std::int64_t firstEpochPoints = warmUp_ ? passed_ : rounds;
      std::ostringstream s;
      s.precision(3);
      s << "synchronisation: " << rounds << " rounds for the " << hotIn_ << " + " << hotOut_
        << " most frequent rows (" << hot << " MB each) and one for all rows (" << all
        << " MB) per epoch: " << static_cast<double>(rounds) * hot + all
        << " MB reduced by each rank";
      if (firstEpochPoints > rounds)
        s << " (the first epoch's warm-up adds " << firstEpochPoints - rounds << " rounds)";
      observer_.log(s.str());
    }
  }

  void finish(ModelState& model) override {
    if (sparse_ && model_) {
      // Every row some rank changed since its last exchange, once: then every
      // rank holds the same rows.
      complete();
      const bool writer = options_.final == SyncOptions::Final::WriterVectors;
      std::vector<std::int64_t> in(static_cast<std::size_t>(model.input.rows())),
          out(writer ? 0 : static_cast<std::size_t>(model.output.rows()));
      for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::int64_t>(i);
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::int64_t>(i);
      clock_ = clockBefore_ + most_;
      toWriter_ = writer;
      startRound(std::move(in), std::move(out));
      ++stats_.rounds;
      complete();
      toWriter_ = false;
    }
    // The run's traffic, as rank 0 reports it: rounds, mean bytes over the ranks,
    // mean share of wall time blocked.
    const double wall = std::chrono::duration<double>(Clock::now() - start_).count();
    double mine[2] = {stats_.bytes, wall > 0 ? stats_.waiting / wall : 0.0};
    MPI_Allreduce(MPI_IN_PLACE, mine, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (observer_.log) {
      std::ostringstream s;
      s.setf(std::ios::fixed);
      s.precision(1);
      s << "sync: " << stats_.rounds << " rounds, " << mine[0] / size_ / (1 << 20)
        << " MB sent per rank, " << 100.0 * mine[1] / size_ << " % of wall time waiting";
      observer_.log(s.str());
    }
  }

 private:
  // ---- sparse rounds ----
  enum class Stage { Idle, Counting, Combining };

  // The row of frequency rank `rank` in matrix m (0 input, 1 output).
  std::int64_t rowIndex(int m, std::int64_t rank) const {
    // HS: the inner nodes nearest the root (created last) are the busiest.
    return m == 1 && hs_ ? model_->output.rows() - 1 - rank : rank;
  }
  float* rowOf(int m, std::int64_t rank) const {
    const auto d = model_->input.cols();
    return (m == 0 ? model_->input : model_->output).data() + rowIndex(m, rank) * d;
  }
  // Value j of a row's combined step: `change` (the combine's factor times the sum of
  // the ranks' changes), plus, with a row's last step `step` (momentum), that step
  // times the run's momentum, which becomes the row's last step.
  float stepped(float change, float* step, std::size_t j) const {
    return step ? step[j] = runMomentum_ * step[j] + change : change;
  }
  // The momentum combine's last step of a row; null for the other rules.
  float* stepOf(int m, std::int64_t rank) {
    if (momentum_ <= 0) return nullptr;
    return step_[m == 0 ? 0 : 1].data() + rowIndex(m, rank) * model_->input.cols();
  }
  float* baseOf(int m, std::int64_t rank) {
    const auto d = model_->input.cols();
    return (m == 0 ? baseIn_ : baseOut_).data() + rowIndex(m, rank) * d;
  }
  // The same rows with 16-bit weights.
  std::uint16_t* row16Of(int m, std::int64_t rank) const {
    const auto d = model_->input.cols();
    return reinterpret_cast<std::uint16_t*>((m == 0 ? model_->input : model_->output).data()) +
           rowIndex(m, rank) * d;
  }
  std::uint16_t* base16Of(int m, std::int64_t rank) {
    const auto d = model_->input.cols();
    return base16_[m == 0 ? 0 : 1].data() + rowIndex(m, rank) * d;
  }
  // d 16-bit values as float32 (exact).
  void widen(const std::uint16_t* from, float* to, std::size_t d) const {
    for (std::size_t j = 0; j < d; ++j)
      to[j] = packed_ == PackedWeights::Bf16 ? detail::bf16ToFloat(from[j])
                                             : detail::fp16ToFloat(from[j]);
  }
  // d float32 values rounded stochastically to 16 bits, with bits drawn from `seed`
  // (the same seed gives the same bits on every rank).
  void narrow(const float* from, std::uint16_t* to, std::size_t d, std::uint64_t seed) const {
    for (std::size_t j = 0; j < d; ++j) {
      seed = detail::mixSeed(seed, j);
      const auto bits = static_cast<std::uint32_t>(seed >> 32);
      to[j] = packed_ == PackedWeights::Bf16 ? detail::floatToBf16Stochastic(from[j], bits)
                                             : detail::floatToFp16Stochastic(from[j], bits);
    }
  }

  // Stage 1: which of the round's rows this rank changed; how many ranks did.
  void startRound(std::vector<std::int64_t> in, std::vector<std::int64_t> out) {
    const auto d = static_cast<std::size_t>(model_->input.cols());
    rows_[0] = std::move(in);
    rows_[1] = std::move(out);
    counts_.assign(rows_[0].size() + rows_[1].size(), 0);
    std::size_t k = 0;
    for (int m = 0; m < 2; ++m)
      for (const std::int64_t r : rows_[m])
        counts_[k++] = packed_ != PackedWeights::None
                           ? std::memcmp(row16Of(m, r), base16Of(m, r), d * 2) != 0
                           : std::memcmp(rowOf(m, r), baseOf(m, r), d * sizeof(float)) != 0;
    start(counts_.data(), counts_.size(), MPI_UINT16_T, MPI_SUM, sizeof(std::uint16_t));
    stage_ = Stage::Counting;
    age_ = 0;
  }

  // Stage 2: the changes of the rows some rank changed, as of now.
  void sendChanges() {
    const auto d = static_cast<std::size_t>(model_->input.cols());
    changed_.clear();
    std::size_t k = 0;
    for (int m = 0; m < 2; ++m)
      for (const std::int64_t r : rows_[m]) {
        if (counts_[k] > 0) {
          // The same on every rank: the clock and the rates are.
          auto& last = last_[m][static_cast<std::size_t>(r)];
          const double occurrences =
              static_cast<double>(clock_ - last) * rate_[m][static_cast<std::size_t>(r)];
          last = clock_;
          // The rows that travel every round (the most frequent) are the busy
          // ones: 1.5 times the mean change. The others by their occurrences.
          const bool everyRound = options_.syncRows == 0 || r < options_.syncRows;
          const float factor =
              options_.combine != SyncOptions::Combine::BoundedSum ? scale_
              : everyRound
                  ? std::min(1.0f, 1.5f / static_cast<float>(counts_[k]))
                  : static_cast<float>(SyncOptions::boundedFactor(counts_[k], occurrences));
          changed_.push_back({m, r, counts_[k], factor});
        }
        ++k;
      }
    const std::size_t n = changed_.size() * d;
    snapshot_.resize(n);
    if (options_.halfDeltas)
      half_.resize(n);
    else
      sum_.resize(n);
    widened_.resize(packed_ != PackedWeights::None ? 2 * d : 0);
    for (std::size_t i = 0; i < changed_.size(); ++i) {
      const int m = changed_[i].matrix;
      const std::int64_t r = changed_[i].rank;
      float* snap = snapshot_.data() + i * d;
      const float* base;
      if (packed_ != PackedWeights::None) {
        widen(row16Of(m, r), snap, d);
        widen(base16Of(m, r), widened_.data(), d);
        base = widened_.data();
      } else {
        std::memcpy(snap, rowOf(m, r), d * sizeof(float));
        base = baseOf(m, r);
      }
      for (std::size_t j = 0; j < d; ++j) {
        const float change = snap[j] - base[j];
        if (options_.halfDeltas)
          half_[i * d + j] = toBf16(change);
        else
          sum_[i * d + j] = change;
      }
    }
    if (options_.halfDeltas)
      start(half_.data(), n, MPI_UINT16_T, bf16Sum_, sizeof(std::uint16_t), toWriter_);
    else
      start(sum_.data(), n, MPI_FLOAT, MPI_SUM, sizeof(float), toWriter_);
    stage_ = Stage::Combining;
  }

  // The combined changes applied: new row = base + combined change, keeping what
  // this rank's threads added since the snapshot.
  void applyChanges() {
    if (toWriter_ && rank_ != 0) {  // the combined changes went to rank 0 only
      stage_ = Stage::Idle;
      return;
    }
    const auto d = static_cast<std::size_t>(model_->input.cols());
    if (packed_ != PackedWeights::None) {
      applyChanges16(d);
      stage_ = Stage::Idle;
      return;
    }
    for (std::size_t i = 0; i < changed_.size(); ++i) {
      float* row = rowOf(changed_[i].matrix, changed_[i].rank);
      float* base = baseOf(changed_[i].matrix, changed_[i].rank);
      const float* snap = snapshot_.data() + i * d;
      const float scale = changed_[i].factor;
      float* step = stepOf(changed_[i].matrix, changed_[i].rank);
      for (std::size_t j = 0; j < d; ++j) {
        const float sum = options_.halfDeltas ? fromBf16(half_[i * d + j]) : sum_[i * d + j];
        const float combined = base[j] + stepped(sum * scale, step, j);
        row[j] += combined - snap[j];
        base[j] = combined;
      }
    }
    stage_ = Stage::Idle;
  }

  // applyChanges on 16-bit rows: the combined row is rounded stochastically with
  // bits every rank draws alike (from the seed, the round and the row), so the
  // bases stay equal on all ranks; the row then gains what this rank's threads
  // added since the snapshot, rounded with bits of its own. A row no thread
  // touched since the snapshot ends equal to its new base: snap + (base - snap) is
  // exact in float32 for values less than 2^16 (bfloat16) or 2^13 (binary16) apart
  // in magnitude.
  void applyChanges16(std::size_t d) {
    widened_.resize(2 * d);
    float* combined = widened_.data();
    float* row = combined + d;
    for (std::size_t i = 0; i < changed_.size(); ++i) {
      const int m = changed_[i].matrix;
      const std::int64_t r = changed_[i].rank;
      std::uint16_t* row16 = row16Of(m, r);
      std::uint16_t* base16 = base16Of(m, r);
      const float* snap = snapshot_.data() + i * d;
      const float scale = changed_[i].factor;
      float* step = stepOf(m, r);
      widen(base16, combined, d);
      for (std::size_t j = 0; j < d; ++j) {
        const float sum = options_.halfDeltas ? fromBf16(half_[i * d + j]) : sum_[i * d + j];
        combined[j] += stepped(sum * scale, step, j);
      }
      const std::uint64_t where =
          detail::mixSeed(detail::mixSeed(seed_, static_cast<std::uint64_t>(clock_)),
                          (static_cast<std::uint64_t>(m) << 62) ^ static_cast<std::uint64_t>(r));
      narrow(combined, base16, d, where);
      widen(base16, combined, d);
      widen(row16, row, d);
      for (std::size_t j = 0; j < d; ++j) row[j] += combined[j] - snap[j];
      narrow(row, row16, d,
             detail::mixSeed(where, 0x5EED000000000000ull + static_cast<std::uint64_t>(rank_)));
    }
  }

  // A non-blocking all-reduction in place (`toRoot`: a reduction to rank 0), in
  // pieces of at most kMaxCount.
  void start(void* data, std::size_t n, MPI_Datatype type, MPI_Op op, std::size_t bytes,
             bool toRoot = false) {
    requests_.clear();
    for (std::size_t at = 0; at < n; at += kMaxCount) {
      requests_.emplace_back();
      char* piece = static_cast<char*>(data) + at * bytes;
      const int count = static_cast<int>(std::min(kMaxCount, n - at));
      if (!toRoot)
        MPI_Iallreduce(MPI_IN_PLACE, piece, count, type, op, MPI_COMM_WORLD, &requests_.back());
      else if (rank_ == 0)
        MPI_Ireduce(MPI_IN_PLACE, piece, count, type, op, 0, MPI_COMM_WORLD, &requests_.back());
      else
        MPI_Ireduce(piece, nullptr, count, type, op, 0, MPI_COMM_WORLD, &requests_.back());
    }
    if (n == 0) {  // every rank has the same n: all skip together
      requests_.clear();
    }
    stats_.bytes += static_cast<double>(n * bytes);
  }

  // The round in flight moved on at fixed polls: the changes are taken at the
  // first poll after the point, applied at the second (with one thread a rank,
  // polls fall at fixed word counts, so a run is reproducible whatever the
  // network's timing). Between them, testing lets MPI progress the reduction.
  void progress() {
    if (stage_ == Stage::Idle) return;
    ++age_;
    if ((stage_ == Stage::Counting && age_ >= 1) || (stage_ == Stage::Combining && age_ >= 2)) {
      {
        Blocked b(stats_);
        MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
      }
      advance();
      return;
    }
    int done = 0;
    if (!requests_.empty())
      MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE);
  }

  // The round in flight finished, waiting as needed.
  void complete() {
    while (stage_ != Stage::Idle) {
      {
        Blocked b(stats_);
        MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
      }
      advance();
    }
  }

  void advance() {
    requests_.clear();
    if (stage_ == Stage::Counting)
      sendChanges();
    else if (stage_ == Stage::Combining)
      applyChanges();
  }

  // ---- dense rounds ----
  void combineFrequentRows() {
    Blocked b(stats_);
    const auto d = model_->input.cols();
    const auto inFloats = static_cast<std::size_t>(hotIn_ * d);
    const std::size_t outFloats = sum_.size() - inFloats;
    // HS: the inner nodes nearest the root (created last) are the busiest.
    const auto outFirst = hs_ ? (model_->output.rows() - hotOut_) * d : 0;
    float* rows[2] = {model_->input.data(), model_->output.data() + outFirst};
    float* base[2] = {baseIn_.data(), baseOut_.data() + outFirst};
    const std::size_t n[2] = {inFloats, outFloats}, at[2] = {0, inFloats};
    for (int k = 0; k < 2; ++k) {
      std::memcpy(snapshot_.data() + at[k], rows[k], n[k] * sizeof(float));
      for (std::size_t i = 0; i < n[k]; ++i) sum_[at[k] + i] = snapshot_[at[k] + i] - base[k][i];
    }
    sumInPlace(sum_.data(), sum_.size());
    stats_.bytes += static_cast<double>(sum_.size()) * sizeof(float);
    // The other threads kept training meanwhile: keep what they added since the snapshot.
    for (int k = 0; k < 2; ++k) {
      for (std::size_t i = 0; i < n[k]; ++i) {
        const float combined = base[k][i] + sum_[at[k] + i] * scale_;
        rows[k][i] += combined - snapshot_[at[k] + i];
        base[k][i] = combined;
      }
    }
  }

  struct Changed {
    int matrix;           // 0 input, 1 output
    std::int64_t rank;    // frequency rank of the row
    std::uint16_t ranks;  // how many ranks changed it
    float factor;         // on the sum of their changes
  };

  // Expected training occurrences of each row per word of a share (a word's
  // kept occurrences as an input row; for negative sampling's output rows also
  // its draws as a noise word, in the same unit): the bounded combine's count
  // of how often a row was trained since its last exchange. Hierarchical
  // softmax's inner nodes count as trained on every word (the busiest rows).
  void occurrenceRates(const ModelState& model) {
    const auto v = static_cast<std::size_t>(model.input.rows());
    const auto outRows = static_cast<std::size_t>(model.output.rows());
    double total = 0, noise = 0;
    for (std::size_t w = 0; w < v && w < model.counts.size(); ++w) {
      total += static_cast<double>(model.counts[w]);
      noise += std::pow(static_cast<double>(model.counts[w]), 0.75);
    }
    rate_[0].assign(v, 1.0f);
    rate_[1].assign(outRows, 1.0f);
    last_[0].assign(v, 0);
    last_[1].assign(outRows, 0);
    if (total <= 0 || model.counts.size() < v) return;
    double kept = 0;
    for (std::size_t w = 0; w < v; ++w) {
      const double c = static_cast<double>(model.counts[w]), f = c / total;
      // word2vec's subsampling: kept with probability (sqrt(f / t) + 1) t / f.
      const double keep =
          sample_ > 0 && f > 0 ? std::min(1.0, (std::sqrt(f / sample_) + 1) * sample_ / f) : 1.0;
      rate_[0][w] = static_cast<float>(keep * f);
      kept += keep * f;
    }
    if (!ns_ || outRows != v) return;
    for (std::size_t w = 0; w < v; ++w)
      rate_[1][w] = static_cast<float>(
          rate_[0][w] +
          negative_ * kept * std::pow(static_cast<double>(model.counts[w]), 0.75) / noise);
  }

  int rank_, size_;
  SyncOptions options_;
  bool hs_, sparse_;
  const TrainObserver& observer_;
  Clock::time_point start_;
  ModelState* model_ = nullptr;
  std::int64_t localWords_ = 0, most_ = 0;
  // The next point in words of the largest share, the interval that led to it, points passed.
  std::int64_t next_ = 0, interval_ = 0, passed_ = 0;
  std::int64_t round_ = 0;  // sparse rounds started in this run (the schedule's clock)
  // Words of the largest share trained in this run before this epoch, and at the
  // point of the round in flight; each row's clock at its last exchange.
  std::int64_t clockBefore_ = 0, clock_ = 0;
  std::vector<std::int64_t> last_[2];
  std::vector<float> rate_[2];
  bool ns_ = true;
  double sample_ = 0;
  int negative_ = 0;
  bool warmUp_ = false;  // this epoch starts with the warm-up
  Eigen::Index hotIn_ = 0, hotOut_ = 0;
  std::vector<float> sum_, snapshot_;
  std::vector<std::uint16_t> half_, counts_;
  std::vector<std::int64_t> rows_[2];
  std::vector<Changed> changed_;
  std::vector<MPI_Request> requests_;
  Stage stage_ = Stage::Idle;
  bool toWriter_ = false;  // the last round of SyncOptions::Final::WriterVectors
  int age_ = 0;            // polls since the round in flight started
  MPI_Op bf16Sum_ = MPI_OP_NULL;
  MatrixF baseIn_, baseOut_;  // the rows as of their last synchronisation
  // With 16-bit weights (packed_): the bases in 16 bits, and two rows of scratch.
  PackedWeights packed_ = PackedWeights::None;
  std::vector<std::uint16_t> base16_[2];
  std::vector<float> widened_;
  std::uint64_t seed_ = 0;
  float scale_;                 // 1 (sum of changes) or 1 / ranks (average, momentum)
  float momentum_;              // Combine::Momentum's momentum; 0 for the other rules
  float runMomentum_ = 0;       // what this epoch uses: momentum_ within the run's length
  int epochs_;                  // epochs of the run (the schedule's total)
  std::vector<float> step_[2];  // Combine::Momentum: each row's last combined step
  SyncStats stats_;
  bool logged_ = false;
};

// Stopping between epochs is decided together: one rank stopping alone would
// leave the others waiting in the next epoch's collectives.
TrainObserver collectiveStop(const TrainObserver& observer) {
  TrainObserver o = observer;
  o.stopRequested = [ask = observer.stopRequested] {
    return reduceInt(ask && ask() ? 1 : 0, MPI_MAX) != 0;
  };
  return o;
}

}  // namespace

Cluster::Cluster() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    int provided = 0;
    // Only the thread that called train() (OpenMP's thread 0) talks to MPI.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Cluster::~Cluster() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

int Cluster::rank() const { return rank_; }
int Cluster::size() const { return size_; }

void Cluster::abort(int exitCode) const {
  MPI_Abort(MPI_COMM_WORLD, exitCode);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

void Cluster::agree(const std::string& error, ErrorKind kind) {
  const int first = static_cast<int>(reduceInt(error.empty() ? size_ : rank_, MPI_MIN));
  if (first == size_) return;
  std::string message = error;
  broadcast(message, first);
  int sent = static_cast<int>(kind);
  MPI_Bcast(&sent, 1, MPI_INT, first, MPI_COMM_WORLD);
  throwError(static_cast<ErrorKind>(sent),
             "rank " + std::to_string(first) + " of " + std::to_string(size_) + ": " + message);
}

void Cluster::requireSameOptions(const std::string& options) {
  std::string reference = options;
  broadcast(reference, 0);
  std::string error;
  if (reference != options) {
    std::istringstream a(options), b(reference);
    std::string mine, theirs;
    while (std::getline(a, mine) && std::getline(b, theirs) && mine == theirs) {
    }
    error = "started with other options than rank 0 ('" + mine + "' where rank 0 has '" + theirs +
            "'); every rank must run the same command";
  }
  agree(error, ErrorKind::Config);
}

void Cluster::requireSameCorpus(const CorpusSource& corpus) {
  std::string error, mine;
  ErrorKind kind = ErrorKind::Input;
  try {
    mine = corpusFingerprint(corpus);
  } catch (const IoError& e) {
    error = e.what(), kind = ErrorKind::Io;
  }
  std::string reference = mine;
  broadcast(reference, 0);
  if (error.empty() && reference != mine) {
    std::istringstream a(mine), b(reference);
    std::string here, there;
    for (;;) {
      const bool more = static_cast<bool>(std::getline(a, here));
      const bool moreThere = static_cast<bool>(std::getline(b, there));
      if (!more || !moreThere || here != there) break;
    }
    if (here.empty()) {
      error = "has fewer corpus files than rank 0 (its list ends before '" +
              there.substr(0, there.find('\t')) + "')";
    } else {
      const std::string file = here.substr(0, here.find('\t'));
      const std::size_t sizeAt = here.find('\t') + 1;
      const std::string size = here.substr(sizeAt, here.find('\t', sizeAt) - sizeAt);
      if (there.empty() || there.substr(0, there.find('\t')) != file)
        error = "corpus file '" + file + "' is not in rank 0's list of corpus files";
      else {
        const std::size_t refAt = there.find('\t') + 1;
        const std::string refSize = there.substr(refAt, there.find('\t', refAt) - refAt);
        error = "corpus file '" + file + "' differs from rank 0's copy (" +
                (size != refSize ? size + " bytes here, " + refSize + " on rank 0"
                                 : std::string("same size, other content")) +
                "); every rank must read identical copies of the corpus";
      }
    }
  }
  agree(error, kind);
}

namespace {
// The n-gram rows are shared by many words and are not in the synchronisation's
// frequency order: until the schedule covers them, subword training stays in one process.
void refuseSubwords(const TrainConfig& config) {
  if (config.subwords)
    throw ConfigError(
        ErrorText("subword training runs in one process only: leave out mpirun, "
                  "or train word vectors across processes"));
}
}  // namespace

ModelState trainDistributed(Cluster& cluster, const CorpusSource& share, const TrainConfig& config,
                            const SyncOptions& sync, const TrainObserver& observer) {
  sync.validate();
  refuseSubwords(config);
  const TrainObserver o = collectiveStop(observer);
  MpiSync synchronisation(cluster, sync, config, o);
  detail::TrainHooks hooks;
  hooks.merge = [&](VocabularyBuilder& local, std::int64_t minCount, std::size_t maxVocab,
                    std::vector<WordId>* map) {
    return mergeVocabulary(cluster, local, minCount, maxVocab, map, o);
  };
  hooks.sync = &synchronisation;
  return detail::trainWith(share, config, o, hooks);
}

void resumeDistributed(Cluster& cluster, ModelState& model, const CorpusSource& share,
                       int moreEpochs, const SyncOptions& sync, const TrainObserver& observer) {
  sync.validate();
  TrainConfig config = TrainConfig::deserialize(model.config);
  refuseSubwords(config);
  const TrainObserver o = collectiveStop(observer);
  config.epochs = model.epochsDone + moreEpochs;  // the run's schedule
  MpiSync synchronisation(cluster, sync, config, o);
  detail::TrainHooks hooks;
  hooks.sync = &synchronisation;
  detail::resumeWith(model, share, moreEpochs, o, hooks);
}
}  // namespace posvec
