// The ThreadSanitizer run: tokenizes a corpus on two threads and trains every
// kernel (batched and classic skip-gram with negative sampling, hierarchical
// softmax, CBOW) on two threads. Hogwild updates of the weight matrices race by
// design (word2vec.c, gensim and fastText all do it: updates are sparse, and a
// lost one costs nothing); tsan.supp names exactly those writers. Any other
// race (counters, losses, progress, the tokenizer's blocks) fails the run.
//   tsan_train CORPUS
#include <cmath>
#include <cstdio>
#include <exception>

#include "posvec/trainer.hpp"

int main(int argc, char** argv) {
  using namespace posvec;
  if (argc != 2) {
    std::fprintf(stderr, "usage: tsan_train CORPUS\n");
    return 2;
  }
  try {
    TokenizerOptions tokenizer;
    tokenizer.threads = 2;
    tokenizer.chunkBytes = 4096;  // several blocks per thread even on a small corpus
    const CorpusSource corpus = CorpusSource::fromFiles({argv[1]}, false, tokenizer);
    struct Variant {
      const char* name;
      Architecture architecture;
      Loss loss;
      Kernel kernel;
    };
    const Variant variants[] = {
        {"skip-gram, negative sampling, batched", Architecture::SkipGram, Loss::NegativeSampling,
         Kernel::Batched},
        {"skip-gram, negative sampling, classic", Architecture::SkipGram, Loss::NegativeSampling,
         Kernel::Classic},
        {"skip-gram, hierarchical softmax", Architecture::SkipGram, Loss::HierarchicalSoftmax,
         Kernel::Classic},
        {"CBOW, negative sampling", Architecture::Cbow, Loss::NegativeSampling, Kernel::Classic},
    };
    for (const Variant& v : variants) {
      TrainConfig c;
      c.dim = 32;
      c.epochs = 2;
      c.minCount = 1;
      c.threads = 2;
      c.architecture = v.architecture;
      c.loss = v.loss;
      c.kernel = v.kernel;
      TrainObserver observer;
      double lastLoss = 0;
      observer.progress = [&](const TrainProgress& p) { lastLoss = p.loss; };
      const ModelState m = train(corpus, c, observer);
      std::printf("%s: %zu words, epoch losses %.4f %.4f\n", v.name, m.words.size(),
                  m.epochLosses.at(0), m.epochLosses.at(1));
      if (!std::isfinite(m.epochLosses.back())) return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tsan_train: %s\n", e.what());
    return 1;
  }
  return 0;
}
