/// \file
/// Distributed training: data-parallel word2vec over MPI. Every process (rank)
/// reads its own share of the corpus, the ranks reduce their word counts into the
/// vocabulary a single process would build, and each trains its share with its
/// own threads while the ranks combine their weights by collective operations
/// (Ji et al., "Parallelizing Word2Vec in Shared and Distributed Memory"): each
/// row about as often as it is trained, only the rows that changed.
/// Without MPI in the build (POSVEC_MPI=OFF), Cluster's constructor throws
/// ConfigError and nothing else changes.
///
/// Every rank must make the same calls in the same order (they are collective);
/// MPI is used from the thread that created the Cluster only (MPI_THREAD_FUNNELED).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "posvec/corpus.hpp"
#include "posvec/error.hpp"
#include "posvec/model_state.hpp"
#include "posvec/train_config.hpp"
#include "posvec/trainer.hpp"

namespace posvec {

/// How often, and how, the ranks combine their weights.
struct SyncOptions {
  /// Words each rank trains between two synchronisation rounds (1000 to 10^12).
  /// Every rank synchronises at the same fractions of its own share, so all stay
  /// in step.
  std::int64_t syncWords = 5'000;
  /// Warm-up: in the first epoch of a new model, the first interval is this many
  /// words and each next one twice the last, up to syncWords. From their common
  /// random start the ranks' rows move fast and in the same directions, so changes
  /// combined after long intervals overshoot; later the rows change slowly. 0 (or
  /// syncWords and more): none.
  std::int64_t syncWarmup = 5'000;
  /// Rows of the most frequent words combined at every round (input and, for
  /// negative sampling, output rows; the inner nodes nearest the root for
  /// hierarchical softmax). Sparse schedule: the row of frequency rank r beyond
  /// them every 2^t rounds, 2^(t-1) * syncRows <= r < 2^t * syncRows (about every
  /// r / syncRows rounds). Dense schedule: only these rows, all others at the end
  /// of each epoch. 0: every row every round.
  std::int64_t syncRows = 0;

  /// Which rows travel when.
  enum class Schedule { Sparse, Dense };
  /// \var Schedule::Sparse
  /// Rank-geometric: a row's round interval grows with its frequency rank; only
  /// rows some rank changed since their last exchange travel, overlapped with
  /// training (non-blocking collectives); every changed row once at the end of
  /// training (the default).
  /// \var Schedule::Dense
  /// The syncRows most frequent rows every round, every row at every epoch's end,
  /// each a blocking reduction of 32-bit floats (the schedule before the sparse one).

  /// Which rows travel when (default Sparse).
  Schedule schedule = Schedule::Sparse;

  /// How the ranks' rows are combined. Every rank starts from the same rows and
  /// trains 1/N of the words. SumChanges adds up every rank's change since the
  /// last synchronisation (as one process would apply them while the changes are
  /// small). But a row that every rank trains many times between two rounds moves
  /// most of the way to its local optimum on each rank: N such changes summed
  /// overshoot by N - 1 times the distance, and from 3 ranks on the error grows
  /// round after round (4 ranks on Brown: the loss climbs 2.7, 85.8, 464.6).
  /// Average takes the mean of the ranks' rows (always stable, but a word seen by
  /// one rank only moves N times less). BoundedSum multiplies the sum of the
  /// changes of a row by boundedFactor(n, occurrences): the sum for a row one rank
  /// changed or that the n ranks trained only a few times since its last exchange
  /// (counted from the word counts and the words trained since), falling towards
  /// 1.5 times the mean change for a row every rank trained hundreds of times (and
  /// 1.5 times the mean for every row that travels in every round, the busiest): a
  /// row every rank drove a fraction p of the way to the same optimum ends at most
  /// max(|1 - 1.5 p|, (1 - p)^n) <= 0.5 times as far from it as before.
  /// Momentum ("block momentum", as in Chen and Huo's blockwise model-update
  /// filtering) takes the mean of the ranks' changes and adds to it momentumFor(N)
  /// times the row's previous combined step: a row the ranks push the same way
  /// round after round moves about 1 / (1 - momentum) times the mean change a round,
  /// with the automatic momentum 1.25 times the sum of the changes, while the part
  /// of the changes in which the ranks disagree (each rank's own words) is averaged;
  /// a row every rank drives most of the way to its optimum is a heavy ball, which
  /// settles for any step below 2 (1 + momentum), where the sum overshoots from 3
  /// ranks on. A run of few rounds uses less momentum (at most 1 - 20 / rounds, so
  /// that the steps of its first epochs do not still push in its last). The default.
  enum class Combine { BoundedSum, SumChanges, Average, Momentum };
  /// \var Combine::BoundedSum
  /// The sum for rarely trained rows, down to 1.5 times the mean change for
  /// busy ones (boundedFactor; sparse schedule only).
  /// \var Combine::SumChanges
  /// Add up every rank's change since the last synchronisation.
  /// \var Combine::Average
  /// Take the mean of the ranks' rows.
  /// \var Combine::Momentum
  /// The mean change plus momentumFor(N) times the row's previous combined step
  /// (the default; sparse schedule only).

  /// How the rows are combined (default Momentum).
  Combine combine = Combine::Momentum;

  /// Combine::Momentum: the fraction of a row's previous combined step added to the
  /// next, in [0, 1); 0 (the default): 1 - 1 / (1.25 N) for N ranks (0.6 at 2,
  /// 0.8 at 4, 0.9 at 8), which moves a row the ranks push alike 1.25 times the
  /// sum of their changes a round once the momentum has built up.
  double syncMomentum = 0;
  /// The momentum Combine::Momentum uses at `ranks` ranks (syncMomentum, or the
  /// automatic one when it is 0).
  double momentumFor(int ranks) const;

  /// Sparse schedule: changes travel as 16-bit brain floats (bfloat16: 8 bits of
  /// mantissa, float's range), summed in float at every step of the reduction;
  /// false: 32-bit floats.
  bool halfDeltas = true;

  /// What the sparse schedule's last round (after the last epoch) combines, and for whom.
  enum class Final {
    /// Both matrices, on every rank: every rank returns the same model (the default).
    Everyone,
    /// The input matrix only, reduced to rank 0 only: rank 0's input rows are the
    /// combined ones; its output rows, and every other rank's model, are what that rank
    /// trained, so the ranks' models must not be trained together again (resumed
    /// across the cluster). For a caller that writes rank 0's word vectors and nothing else: the
    /// last round carries half the rows, and a reduction to one rank puts about half
    /// an all-reduction's bytes on the wire.
    WriterVectors
  };
  Final final = Final::Everyone;  ///< the last round (Final::Everyone: every rank the same model)

  /// ConfigError naming the option by meaning ("words between synchronisations ...").
  void validate() const;

  /// Where the rounds fall in an epoch over `shareWords` words (the largest
  /// rank's share; the others at the same fractions of theirs): the words done at
  /// each point, increasing, each inside (0, shareWords). `warmUp`: the first
  /// epoch of a new model (see syncWarmup).
  std::vector<std::int64_t> points(std::int64_t shareWords, bool warmUp) const;
  /// The same rule step by step: the first interval (syncWarmup when warming up,
  /// else syncWords) ...
  std::int64_t firstInterval(bool warmUp) const;
  /// ... and the one after `interval` (twice it, at most syncWords).
  std::int64_t intervalAfter(std::int64_t interval) const;
  /// Sparse schedule: the frequency ranks (0 = most frequent) of a matrix of
  /// `rows` rows that round `round` (counted from 0 over the whole run) covers,
  /// increasing. Every rank computes the same list, so no row ids travel.
  std::vector<std::int64_t> roundRows(std::int64_t round, std::int64_t rows) const;
  /// Combine::BoundedSum: the factor on the sum of the changes of a row that
  /// `ranks` ranks changed, each after about `occurrences` training occurrences of
  /// the row since its last exchange. With x = occurrences / 100 (the occurrences
  /// taken to drive a row about 63 % of the way to its optimum), one process training
  /// all n shares moves the row 1 - e^(-n x) of the way and each rank 1 - e^(-x):
  /// the factor is their ratio (1 - e^(-n x)) / (n (1 - e^(-x))), kept between
  /// 1.5 / n and 1 (1 for one rank or a row trained once or twice: the sum;
  /// 1.5 / n for a row every rank trained hundreds of times).
  static double boundedFactor(int ranks, double occurrences);
};

/// The names of SyncOptions::Schedule's values in text.
inline constexpr Choice<SyncOptions::Schedule> kScheduleNames[] = {
    {SyncOptions::Schedule::Sparse, "sparse"}, {SyncOptions::Schedule::Dense, "dense"}};
/// The names of SyncOptions::Combine's values in text.
inline constexpr Choice<SyncOptions::Combine> kCombineNames[] = {
    {SyncOptions::Combine::BoundedSum, "bounded"},
    {SyncOptions::Combine::SumChanges, "sum"},
    {SyncOptions::Combine::Average, "average"},
    {SyncOptions::Combine::Momentum, "momentum"}};
/// The names of SyncOptions::halfDeltas's values in text.
inline constexpr Choice<bool> kDeltaNames[] = {{true, "bf16"}, {false, "fp32"}};

/// SyncOptions' settings, one row each (settings.hpp). `final` is the caller's
/// choice of what it writes, not a setting. A dense schedule without a combining
/// rule given combines by sum (the command line applies it).
inline constexpr auto kSyncSettings = std::tuple{
    SettingRow<SyncOptions, std::int64_t>{
        .member = &SyncOptions::syncWords,
        .setting = {"syncWords", "words between synchronisations"},
        .key = "sync_words",
        .spelled = {"--sync-words", ""},
        .help = "Under mpirun: words each rank trains between two synchronisation rounds",
        .bounds = between(1000, 1'000'000'000'000LL)},
    SettingRow<SyncOptions, std::int64_t>{
        .member = &SyncOptions::syncRows,
        .setting = {"syncRows", "rows per synchronisation"},
        .key = "sync_rows",
        .spelled = {"--sync-rows", ""},
        .help = "Under mpirun: how many of the most frequent words' rows every round covers; "
                "the row of frequency rank r beyond them travels about every r / this "
                "rounds (sparse schedule) or at epoch ends (dense) (0: all rows every round)",
        .bounds = atLeast(0, "all")},
    SettingRow<SyncOptions, std::int64_t>{
        .member = &SyncOptions::syncWarmup,
        .setting = {"syncWarmup", "words of the first warm-up interval"},
        .key = "sync_warmup",
        .spelled = {"--sync-warmup", ""},
        .help = "Under mpirun: words of the first synchronisation interval of a new model's "
                "first epoch; each next interval doubles up to --sync-words (0: no warm-up)",
        .bounds = atLeast(0, "no warm-up")},
    SettingRow<SyncOptions, SyncOptions::Combine>{
        .member = &SyncOptions::combine,
        .setting = {"syncCombine", "combining rule"},
        .key = "sync_combine",
        .spelled = {"--sync-combine", ""},
        .help = "Under mpirun: how the ranks' rows are combined: momentum (the mean change "
                "plus --sync-momentum times the row's previous combined step; default of the "
                "sparse schedule), bounded (the sum of the changes for a row few ranks trained "
                "a few times, down to 1.5 times their mean change for a row every rank trained "
                "often), sum (every rank's change since the last synchronisation; default of "
                "the dense schedule) or average (the mean row)",
        .choices = kCombineNames},
    SettingRow<SyncOptions, double>{
        .member = &SyncOptions::syncMomentum,
        .setting = {"syncMomentum", "momentum of the combined steps"},
        .key = "sync_momentum",
        .spelled = {"--sync-momentum", ""},
        .help = "Under mpirun, --sync-combine momentum: the fraction of a row's previous "
                "combined step added to the next (0: 1 - 1 / (1.25 N) for N ranks)",
        .bounds = interval('[', 0, 1, ')', "0 chooses it by the number of ranks")},
    SettingRow<SyncOptions, SyncOptions::Schedule>{
        .member = &SyncOptions::schedule,
        .setting = {"syncSchedule", "synchronisation schedule"},
        .key = "sync_schedule",
        .spelled = {"--sync-schedule", ""},
        .help = "Under mpirun: sparse (each row about as often as it is trained, only changed "
                "rows, overlapped with training) or dense (the --sync-rows most frequent rows "
                "every round and all rows every epoch, blocking, in 32-bit floats)",
        .choices = kScheduleNames},
    SettingRow<SyncOptions, bool>{
        .member = &SyncOptions::halfDeltas,
        .setting = {"syncDeltas", "changes' number type"},
        .key = "sync_deltas",
        .spelled = {"--sync-deltas", ""},
        .help = "Under mpirun, sparse schedule: how the changes travel, bf16 (16 bits) or fp32",
        .choices = kDeltaNames},
};

/// One MPI job. Constructed once per process; MPI is initialised by the first
/// Cluster and finalised when it is destroyed (after a failure, abort() ends
/// the whole job instead, because the other ranks may wait in a collective).
/// Not copyable; use it from the thread that created it.
class Cluster {
 public:
  /// True when this process was started by an MPI launcher (mpirun, srun):
  /// then training is distributed, otherwise the one-process path runs.
  /// Looks at the launchers' environment variables only; MPI is not touched.
  static bool launched();
  /// True when this build has MPI (POSVEC_MPI).
  static bool available();

  /// Initialises MPI (unless already initialised); ConfigError when the build has no MPI.
  Cluster();
  /// Finalises MPI (unless already finalised).
  ~Cluster();
  /// Not copyable: one Cluster per process.
  Cluster(const Cluster&) = delete;
  /// Not copyable: one Cluster per process.
  Cluster& operator=(const Cluster&) = delete;

  /// This process's rank, 0 to size() - 1.
  int rank() const;
  /// Number of ranks in the job.
  int size() const;

  /// Every rank passes a description of its options (key=value lines); a rank
  /// whose lines differ from rank 0's makes every rank throw ConfigError naming
  /// the rank and the first differing line. Collective.
  void requireSameOptions(const std::string& options);
  /// Every rank passes the corpus it was given (before share()): rank 0's list of
  /// files, their sizes and a cheap fingerprint of each (start, middle and end)
  /// are compared with every rank's own, and a difference makes every rank throw
  /// (InputError "rank R of N: corpus file 'F' differs from rank 0's copy ...";
  /// IoError when a rank cannot read its copy). Each rank cuts its byte range
  /// from its own copy, so copies that differ would train on a wrong corpus. Collective.
  void requireSameCorpus(const CorpusSource& corpus);
  /// All ranks together: when any rank passes a non-empty `error`, every rank
  /// throws the first failing rank's message, "rank R of N: ...", as the kind of
  /// error that rank gave. Collective.
  void agree(const std::string& error, ErrorKind kind = ErrorKind::Other);

  /// This rank's share of `corpus`: the files seen as one byte stream, cut into
  /// `size()` ranges of about equal bytes, each cut moved to the next line start
  /// (the tokenizer never carries a sentence across a line break). Ranks in rank
  /// order read the corpus in file order. ConfigError for stdin, InputError for
  /// in-memory corpora or compressed files (they cannot be shared by byte
  /// ranges), IoError for an unreadable file.
  CorpusSource share(const CorpusSource& corpus) const;

  /// Ends every rank of the job with `exitCode` (after an unrecoverable error).
  [[noreturn]] void abort(int exitCode) const;

  /// Rank-tagged copy of a message, "rank R of N: message".
  std::string tag(const std::string& message) const;

 private:
  int rank_ = 0;
  int size_ = 1;
};

/// train() across the cluster: vocabulary from reduced counts (identical on all
/// ranks and to a one-process run on the same corpus), the input matrix from
/// config.seed on every rank, training randomness from (seed, rank), the
/// learning rate on the global word count. Every rank returns the same combined
/// model (with SyncOptions::Final::WriterVectors, rank 0's input rows only are the
/// combined ones); the observer's progress and epoch reports carry global numbers (give
/// observers to rank 0 only to report once). `share` is Cluster::share() of the
/// corpus. Collective; throws on every rank what train() throws (ConfigError
/// when the build has no MPI).
ModelState trainDistributed(Cluster& cluster, const CorpusSource& share, const TrainConfig& config,
                            const SyncOptions& sync, const TrainObserver& observer = {});
/// resumeTraining() across the cluster; every rank holds the same model (see
/// trainDistributed for SyncOptions::Final::WriterVectors).
/// ConfigError for a model stopped inside an epoch by a one-process run (resume
/// it with one process, or from a checkpoint taken at an epoch's end).
void resumeDistributed(Cluster& cluster, ModelState& model, const CorpusSource& share,
                       int moreEpochs, const SyncOptions& sync, const TrainObserver& observer = {});

}  // namespace posvec
