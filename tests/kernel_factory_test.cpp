#include "kernel_factory.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kernel_batched.hpp"
#include "posvec/error.hpp"

using namespace posvec;
using namespace posvec::detail;

namespace {

TrainConfig configFor(Architecture a, Loss l, Kernel k) {
  TrainConfig c;
  c.dim = 8;
  c.window = 2;
  c.negative = 3;
  c.architecture = a;
  c.loss = l;
  c.kernel = k;
  return c;
}

// Everything a kernel reads, for a 6-word vocabulary with made-up counts.
struct Fixture {
  std::vector<std::int64_t> counts{40, 20, 10, 5, 3, 2};
  MatrixF input, output;
  NoiseSampler noise{counts, 0.75};
  HuffmanTree tree = buildHuffmanTree(counts);
  Sigmoid sigmoid;
  explicit Fixture(const TrainConfig& c) {
    const auto v = static_cast<Eigen::Index>(counts.size());
    input.resize(v, static_cast<Eigen::Index>(c.dim));
    initInputMatrix(input, 7, 1);
    output = MatrixF::Constant(c.loss == Loss::HierarchicalSoftmax ? v - 1 : v,
                               static_cast<Eigen::Index>(c.dim), 0.01f);
  }
  KernelShared shared() { return {&input, &output, &noise, &tree, &sigmoid}; }
};

// Runs a kernel on one fixed sentence from a fixed RNG state; returns both matrices.
std::pair<MatrixF, MatrixF> trainOnce(const TrainConfig& c,
                                      std::unique_ptr<TrainKernel> (*make)(const TrainConfig&,
                                                                           const KernelShared&)) {
  Fixture f(c);
  const auto kernel = make(c, f.shared());
  ThreadState state;
  state.rng = Rng(99);
  const std::vector<std::int32_t> ids{0, 3, 1, 5, 2, 0, 4};
  std::int64_t predictions = 0;
  kernel->sentence(ids.data(), ids.size(), 0.05f, state, predictions);
  return {f.input, f.output};
}

std::unique_ptr<TrainKernel> batchedDirect(const TrainConfig& c, const KernelShared& s) {
  return makeBatchedSkipGram(c, s);
}

}  // namespace

TEST_CASE("kernel factory: each configuration maps to the documented kernel", "[kernels]") {
  using A = Architecture;
  using L = Loss;
  using K = Kernel;
  // The rule, written out by hand: batched only for skip-gram with negative sampling.
  struct Row {
    A a;
    L l;
    K k;
    KernelKind want;
    const char* name;
  };
  const Row rows[] = {
      {A::SkipGram, L::NegativeSampling, K::Batched, KernelKind::BatchedSkipGram, "batched"},
      {A::SkipGram, L::NegativeSampling, K::Classic, KernelKind::SkipGramNegative, "classic"},
      {A::SkipGram, L::HierarchicalSoftmax, K::Batched, KernelKind::SkipGramHierarchical,
       "classic"},
      {A::SkipGram, L::HierarchicalSoftmax, K::Classic, KernelKind::SkipGramHierarchical,
       "classic"},
      {A::Cbow, L::NegativeSampling, K::Batched, KernelKind::CbowNegative, "classic"},
      {A::Cbow, L::NegativeSampling, K::Classic, KernelKind::CbowNegative, "classic"},
      {A::Cbow, L::HierarchicalSoftmax, K::Batched, KernelKind::CbowHierarchical, "classic"},
      {A::Cbow, L::HierarchicalSoftmax, K::Classic, KernelKind::CbowHierarchical, "classic"},
  };
  for (const Row& r : rows) {
    const TrainConfig c = configFor(r.a, r.l, r.k);
    CHECK(kernelFor(c) == r.want);
    CHECK(kernelName(kernelFor(c)) == r.name);
  }
}

TEST_CASE("kernel factory: builds the kernel it names, with the same updates", "[kernels]") {
  const TrainConfig batched =
      configFor(Architecture::SkipGram, Loss::NegativeSampling, Kernel::Batched);
  const TrainConfig classic =
      configFor(Architecture::SkipGram, Loss::NegativeSampling, Kernel::Classic);
  const auto viaFactoryB = trainOnce(batched, makeKernel);
  const auto directB = trainOnce(batched, batchedDirect);
  const auto viaFactoryC = trainOnce(classic, makeKernel);
  const auto directC = trainOnce(classic, makeClassicKernel);
  CHECK(viaFactoryB.first == directB.first);
  CHECK(viaFactoryB.second == directB.second);
  CHECK(viaFactoryC.first == directC.first);
  CHECK(viaFactoryC.second == directC.second);
  // The two kernels draw negatives differently, so the comparison above can tell them apart.
  CHECK(directB.first != directC.first);

  for (const auto a : {Architecture::SkipGram, Architecture::Cbow}) {
    for (const auto l : {Loss::NegativeSampling, Loss::HierarchicalSoftmax}) {
      const TrainConfig c = configFor(a, l, Kernel::Batched);
      if (kernelFor(c) == KernelKind::BatchedSkipGram) continue;
      const auto f = trainOnce(c, makeKernel);
      const auto d = trainOnce(c, makeClassicKernel);
      CHECK(f.first == d.first);
      CHECK(f.second == d.second);
    }
  }
}

TEST_CASE("kernel factory: refuses shared state that cannot serve the kernel", "[kernels]") {
  auto expectError = [](const TrainConfig& c, KernelShared s, const std::string& words) {
    try {
      makeKernel(c, s);
      FAIL("expected ConfigError mentioning " << words);
    } catch (const ConfigError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(words) != std::string::npos);
    }
  };
  const TrainConfig ns = configFor(Architecture::SkipGram, Loss::NegativeSampling, Kernel::Batched);
  const TrainConfig hs = configFor(Architecture::Cbow, Loss::HierarchicalSoftmax, Kernel::Classic);
  Fixture f(ns), g(hs);
  KernelShared noNoise = f.shared();
  noNoise.noise = nullptr;
  expectError(ns, noNoise, "noise sampler");
  KernelShared noTree = g.shared();
  noTree.tree = nullptr;
  expectError(hs, noTree, "Huffman tree");
  KernelShared noInput = f.shared();
  noInput.input = nullptr;
  expectError(ns, noInput, "matrices");
  TrainConfig wider = ns;
  wider.dim = 16;  // the fixture's matrices have 8 columns
  expectError(wider, f.shared(), "dimension is 16");
  // A hierarchical-softmax kernel does not need a noise sampler.
  KernelShared hsOnly = g.shared();
  hsOnly.noise = nullptr;
  CHECK(makeKernel(hs, hsOnly) != nullptr);
}
