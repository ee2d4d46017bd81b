#include "kernel_factory.hpp"

#include "kernel_batched.hpp"
#include "kernel_subword.hpp"
#include "posvec/error.hpp"

namespace posvec::detail {

KernelKind kernelFor(const TrainConfig& config) {
  const bool hs = config.loss == Loss::HierarchicalSoftmax;
  if (config.subwords)
    return config.architecture == Architecture::SkipGram ? KernelKind::SubwordSkipGram
                                                         : KernelKind::SubwordCbow;
  if (config.architecture == Architecture::SkipGram) {
    if (hs) return KernelKind::SkipGramHierarchical;
    return config.kernel == Kernel::Batched ? KernelKind::BatchedSkipGram
                                            : KernelKind::SkipGramNegative;
  }
  return hs ? KernelKind::CbowHierarchical : KernelKind::CbowNegative;
}

std::string kernelName(KernelKind kind) {
  if (kind == KernelKind::SubwordSkipGram || kind == KernelKind::SubwordCbow) return "subword";
  return kind == KernelKind::BatchedSkipGram ? "batched" : "classic";
}

std::unique_ptr<TrainKernel> makeKernel(const TrainConfig& config, const KernelShared& shared) {
  return makeKernel(config, shared, nullptr);
}

std::unique_ptr<TrainKernel> makeKernel(const TrainConfig& config, const KernelShared& shared,
                                        KernelProbe* probe) {
  const KernelKind kind = kernelFor(config);
  const bool hs = kind == KernelKind::SkipGramHierarchical || kind == KernelKind::CbowHierarchical;
  auto missing = [](const std::string& what) {
    throw ConfigError("cannot build the training kernel: " + what);
  };
  if (!shared.input || !shared.output || !shared.sigmoid)
    missing("the input and output matrices and the sigmoid table are required");
  if (hs && !shared.tree) missing("hierarchical softmax needs a Huffman tree");
  if (!hs && !shared.noise) missing("negative sampling needs a noise sampler");
  const auto dim = static_cast<Eigen::Index>(config.dim);
  if (shared.input->cols() != dim || (shared.output->rows() > 0 && shared.output->cols() != dim))
    missing("the matrices have " + std::to_string(shared.input->cols()) + " and " +
            std::to_string(shared.output->cols()) + " columns, the dimension is " +
            std::to_string(config.dim));
  if (probe && kind != KernelKind::BatchedSkipGram)
    missing("a kernel probe instruments the batched skip-gram kernel only (negative sampling)");
  if (kind == KernelKind::SubwordSkipGram || kind == KernelKind::SubwordCbow)
    return makeSubwordKernel(config, shared);
  if (kind == KernelKind::BatchedSkipGram)
    return probe ? makeBatchedSkipGram(config, shared, *probe) : makeBatchedSkipGram(config, shared);
  return makeClassicKernel(config, shared);
}

}  // namespace posvec::detail
