// Trains word vectors on a pre-tokenized file with one kernel (classic or
// batched) and prints one JSON line: seconds, words/s, and the floating-point
// work of the skip-gram updates (6·d flops per context-target pair: the score,
// the output-row gradient and the input-row gradient), so bench-fast.sh can put
// achieved GFLOP/s next to the machine's peak. "seconds": train() alone;
// "saved_seconds": train() and writing the vectors; "pairs": the (context, centre)
// pairs the library trained (EpochReport::predictions, exact). Not a test: a
// benchmark helper. Two modes time the halves of the batched kernel's blocks apart
// with a kernel probe (kernel_probes.hpp), and in neither does the model train:
// - `memory`: without the arithmetic; every block reads and writes its rows and
//   does its set-up, so "train_seconds" is what the row traffic and the bookkeeping
//   cost by themselves;
// - `cache`: without the waiting; every block does its set-up and arithmetic on
//   the same draws, but on scratch rows that stay in cache, with no prefetches.
//   train_kernel CORPUS OUT.vec|- DIM EPOCHS THREADS SEED classic|batched|memory|cache
//                [SAMPLE [COMBINE [BLOCK_NEGATIVES [WEIGHTS]]]]
// WEIGHTS: fp32 (the default), bf16 or fp16, the storage of the two matrices.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "kernel_probe.hpp"
#include "kernel_probes.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/trainer.hpp"

int main(int argc, char** argv) {
  if (argc < 8) {
    std::cerr << "usage: train_kernel CORPUS OUT|- DIM EPOCHS THREADS SEED classic|batched|memory|"
                 "cache [SAMPLE [COMBINE [BLOCK_NEGATIVES [fp32|bf16|fp16]]]]\n";
    return 2;
  }
  try {
    const std::string corpus = argv[1], out = argv[2], kernel = argv[7];
    if (kernel != "classic" && kernel != "batched" && kernel != "memory" && kernel != "cache") {
      std::cerr << "train_kernel: unknown mode '" << kernel
                << "' (classic, batched, memory or cache)\n";
      return 2;
    }
    posvec::TrainConfig c;
    c.dim = std::stoul(argv[3]);
    c.epochs = std::stoi(argv[4]);
    c.threads = std::stoi(argv[5]);
    c.seed = std::stoull(argv[6]);
    c.kernel = kernel == "classic" ? posvec::Kernel::Classic : posvec::Kernel::Batched;
    c.window = 5;
    c.negative = 5;
    c.sample = argc > 8 ? std::stod(argv[8]) : 1e-4;
    if (argc > 9) c.combine = std::stoi(argv[9]);
    if (argc > 10) c.blockNegatives = std::stoi(argv[10]);
    if (argc > 11) {
      const std::string w = argv[11];
      if (w != "fp32" && w != "bf16" && w != "fp16") {
        std::cerr << "train_kernel: unknown weight type '" << w << "' (fp32, bf16 or fp16)\n";
        return 2;
      }
      c.weights = w == "bf16"   ? posvec::WeightType::Bf16
                  : w == "fp16" ? posvec::WeightType::Fp16
                                : posvec::WeightType::Fp32;
    }
    c.minCount = 5;
    c.alpha = 0.025;
    c.minAlpha = 0.0001;
    double trainSeconds = 0;
    std::int64_t words = 0, pairs = 0;
    posvec::TrainObserver obs;
    obs.epochEnd = [&](const posvec::EpochReport& r) {
      trainSeconds += r.seconds;
      words += r.words;
      pairs += r.predictions;
    };
    // The CLI's observer asks for interrupts and takes progress reports; the trainer
    // then runs other branches (a thread that finished its half polls and sleeps
    // instead of waiting at OpenMP's barrier), so the benchmark sets both as well.
    obs.interrupt = [] { return posvec::Interrupt::None; };
    obs.progress = [](const posvec::TrainProgress&) {};
    const auto t0 = std::chrono::steady_clock::now();
    const auto source = posvec::CorpusSource::fromFiles({corpus}, true);
    posvec::bench::RowTrafficProbe memory;
    posvec::bench::InCacheProbe cache;
    const posvec::ModelState m =
        kernel == "memory"  ? posvec::trainProbed(source, c, memory, obs)
        : kernel == "cache" ? posvec::trainProbed(source, c, cache, obs)
                            : posvec::train(source, c, obs);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (out != "-")
      posvec::saveVectors(posvec::embeddingsOf(m), out, posvec::VectorFormat::Word2VecText);
    const double savedSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double flops =
        static_cast<double>(pairs) * (c.negative + 1) * 6.0 * static_cast<double>(c.dim);
    std::printf(
        "{\"trainer\": \"posvec-%s\", \"seconds\": %.3f, \"train_seconds\": %.3f, "
        "\"words\": %lld, \"words_per_second\": %.1f, \"epoch_words_per_second\": %.1f, "
        "\"pairs\": %lld, \"gflops\": %.3f, \"final_loss\": %.5f, \"saved_seconds\": %.3f}\n",
        kernel.c_str(), seconds, trainSeconds, static_cast<long long>(words), words / seconds,
        words / trainSeconds, static_cast<long long>(pairs), flops / trainSeconds * 1e-9,
        m.epochLosses.back(), savedSeconds);
  } catch (const posvec::Error& e) {
    std::cerr << "train_kernel: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
