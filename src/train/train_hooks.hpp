// The trainer's hooks: how the counting pass turns local counts into the shared
// vocabulary and where the epochs combine weights across processes (distributed
// training, distributed_mpi.cpp, implements them: the trainer knows no MPI), and the
// kernel probe of benchmarks and tests. A one-process run passes empty hooks.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "corpus_detail.hpp"
#include "kernel_probe.hpp"
#include "posvec/model_state.hpp"
#include "posvec/trainer.hpp"
#include "posvec/vocabulary.hpp"

namespace posvec::detail {

// The trainer calls these at fixed points of every epoch, on every process, so
// each collective operation inside is entered the same number of times by all.
class EpochSync {
 public:
  virtual ~EpochSync() = default;
  // Words of an epoch over all processes, from this one's.
  virtual std::int64_t globalWords(std::int64_t localWords) = 0;
  // This process's training seed, from the shared one.
  virtual std::uint64_t rankSeed(std::uint64_t seed) const = 0;
  // Before the threads start an epoch over `localWords` words.
  virtual void beginEpoch(ModelState& model, std::int64_t localWords) = 0;
  // Thread 0, whenever it has counted the words done: averages the frequent
  // rows at each synchronisation point passed.
  virtual void poll(std::int64_t localDone) = 0;
  // Thread 0, after its own shard: keeps polling until the other threads end
  // (or one failed), then passes the remaining synchronisation points.
  virtual void drain(const std::function<std::int64_t()>& localDone,
                     const std::function<bool()>& failed) = 0;
  // After the threads: the rows the schedule says combined; loss, predictions and
  // words summed.
  virtual void endEpoch(ModelState& model, double& loss, std::int64_t& predictions,
                        std::int64_t& words) = 0;
  // After the last epoch of the run (or a stop between epochs): every rank ends
  // with the same rows.
  virtual void finish(ModelState& model) = 0;
  // Whether it combines 16-bit (packed) weights; the trainer refuses them otherwise.
  virtual bool combinesPacked() const = 0;
  // Whether the ranks' changes are added up whole (SyncOptions::Combine::SumChanges):
  // then a diverging run is told of the momentum rule, which keeps the steps in range.
  virtual bool sumsChanges() const { return false; }
};

struct TrainHooks {
  VocabularyMerge merge;      // empty: this process's counts alone
  EpochSync* sync = nullptr;  // null: no averaging
  // Benchmarks and tests (kernel_probe.hpp): shown every block of the
  // batched kernel; null: the kernel without a probe.
  KernelProbe* probe = nullptr;
};

// train() and resumeTraining() with hooks (trainer.cpp).
ModelState trainWith(const CorpusSource& corpus, const TrainConfig& config,
                     const TrainObserver& observer, const TrainHooks& hooks);
void resumeWith(ModelState& model, const CorpusSource& corpus, int moreEpochs,
                const TrainObserver& observer, const TrainHooks& hooks);

}  // namespace posvec::detail
