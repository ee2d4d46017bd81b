// Kernel probes: instrumentation of the batched skip-gram kernel for benchmarks
// and tests. A probe is shown every block just before its arithmetic and may
// point the block's rows elsewhere or skip the arithmetic, so a benchmark can time
// the halves of the kernel's work apart (tools/bench/train_kernel.cpp: row traffic
// alone, arithmetic on rows in cache). Training with a probe runs a separate
// instantiation of the kernel; train() has none of this. Private to src/train,
// the benchmarks and the tests: not installed, not part of the library's API.
#pragma once

#include <cstddef>
#include <cstdint>

#include "posvec/corpus.hpp"
#include "posvec/model_state.hpp"
#include "posvec/train_config.hpp"
#include "posvec/trainer.hpp"

namespace posvec {

// One block of the batched kernel as its update is about to read it: the rows of
// its distinct context words (input matrix) and of its distinct targets (output
// matrix: the centre words and the shared negatives), `dim` floats each.
struct KernelBlock {
  std::size_t dim = 0;                       // floats per row
  float** contexts = nullptr;                // contextCount row pointers; a probe may change them
  std::size_t contextCount = 0;              // number of context rows
  float** targets = nullptr;                 // targetCount row pointers; a probe may change them
  std::size_t targetCount = 0;               // number of target rows
  const std::int32_t* contextIds = nullptr;  // the words of those rows
  const std::int32_t* targetIds = nullptr;   // the words of the target rows
  // Bytes per value of the rows: 4 (float32), or 2 when the model trains in
  // bfloat16 in place (TrainConfig::weights; the pointers then point at `dim`
  // bfloat16 values, cast to float*), so a probe can stand in rows of the same type.
  std::size_t valueBytes = 4;
};

// Instrumentation of the batched kernel (see the file's description).
class KernelProbe {
 public:
  virtual ~KernelProbe() = default;
  // False: the kernel prefetches no rows (of blocks it has not reached yet).
  virtual bool prefetches() const { return true; }
  // Called for every block, on the thread that trains it, before its scores and
  // updates are computed from the rows the pointers give. False skips them (the
  // block then adds 0 to the loss). The draws, the blocks and the prediction
  // counts do not depend on the probe.
  virtual bool beforeUpdate(KernelBlock& block) = 0;
};

// train() with `probe` shown every block. Needs the batched kernel (skip-gram,
// negative sampling, Kernel::Batched): ConfigError otherwise. The result is a
// trained model only when the probe leaves the blocks as they are.
ModelState trainProbed(const CorpusSource& corpus, const TrainConfig& config, KernelProbe& probe,
                       const TrainObserver& observer = {});

// Row `r` of the input matrix train() starts from for `seed` (uniform in
// [-1/dim, 1/dim), from the stream of (seed, r)), written to row[0..dim): a
// probe's stand-in rows can start as the trainer's do.
void initialInputRow(float* row, std::size_t dim, std::uint64_t seed, std::uint64_t r);

}  // namespace posvec
