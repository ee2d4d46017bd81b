// Kernel factory: which training loop runs for a TrainConfig, and building it
// over the shared matrices. Its own file so that the kernels (kernels.cpp, the
// classic loops; kernel_batched.cpp, the batched skip-gram) do not depend on
// each other: the factory sits above both.
#pragma once

#include <memory>
#include <string>

#include "kernel_batched.hpp"
#include "kernels.hpp"
#include "posvec/train_config.hpp"

namespace posvec::detail {

enum class KernelKind {
  SkipGramNegative,      // classic skip-gram, negative sampling
  SkipGramHierarchical,  // classic skip-gram, hierarchical softmax
  CbowNegative,          // classic CBOW, negative sampling
  CbowHierarchical,      // classic CBOW, hierarchical softmax
  BatchedSkipGram,       // batched skip-gram, negative sampling (kernel_batched.hpp)
  SubwordSkipGram,       // subword skip-gram, negative sampling (kernel_subword.hpp)
  SubwordCbow            // subword CBOW, negative sampling (kernel_subword.hpp)
};

// The batched kernel covers skip-gram with negative sampling; CBOW and
// hierarchical softmax always run the classic loops, whatever config.kernel says.
// Subword training (config.subwords) always runs the subword kernels.
KernelKind kernelFor(const TrainConfig& config);
// "batched", "classic" or "subword": the name the training log shows.
std::string kernelName(KernelKind kind);

// Builds kernelFor(config). Throws ConfigError when `shared` lacks what that
// kernel needs (the matrices and sigmoid table always; the noise sampler for
// negative sampling; the Huffman tree for hierarchical softmax) or when the
// matrices do not have config.dim columns.
std::unique_ptr<TrainKernel> makeKernel(const TrainConfig& config, const KernelShared& shared);
// The same with a kernel probe (kernel_probe.hpp; null: none). Only the
// batched kernel takes one: ConfigError for a probe and any other kernel.
std::unique_ptr<TrainKernel> makeKernel(const TrainConfig& config, const KernelShared& shared,
                                        KernelProbe* probe);

}  // namespace posvec::detail
