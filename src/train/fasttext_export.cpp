// posvec's training settings in fastText's terms, and a trained state written as
// fastText's .bin through the vectors stage's writer.
#include "posvec/fasttext_export.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "formats_detail.hpp"
#include "posvec/error.hpp"
#include "posvec/model_state.hpp"

namespace posvec {

FastTextArgs fastTextArgs(const TrainConfig& config) {
  if (!config.subwords)
    throw ConfigError(
        "the fastText format needs subword training (character n-grams): this model was "
        "trained on whole words only, so it has no n-gram rows to write");
  if (config.bucket > static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max()))
    throw ConfigError("the fastText format holds at most 2147483647 n-gram buckets (got " +
                      std::to_string(config.bucket) + ")");
  FastTextArgs a;
  a.dim = static_cast<std::int32_t>(config.dim);
  a.ws = config.window;
  a.epoch = config.epochs;
  a.minCount = static_cast<std::int32_t>(
      std::min<std::int64_t>(config.minCount, std::numeric_limits<std::int32_t>::max()));
  a.neg = config.negative;
  a.wordNgrams = 1;
  a.loss = config.loss == Loss::HierarchicalSoftmax ? FastTextLoss::HierarchicalSoftmax
                                                    : FastTextLoss::NegativeSampling;
  a.model =
      config.architecture == Architecture::Cbow ? FastTextModel::Cbow : FastTextModel::SkipGram;
  a.bucket = static_cast<std::int32_t>(config.bucket);
  a.minn = config.minn;
  a.maxn = config.maxn;
  a.t = config.sample;
  return a;
}

void saveFastTextModel(const ModelState& model, const std::string& path) {
  const FastTextArgs args = fastTextArgs(TrainConfig::deserialize(model.config));
  // Counts may be absent from a state built by hand: fastText needs one per word.
  const std::vector<std::int64_t> zeros(model.counts.empty() ? model.words.size() : 0, 0);
  const auto& counts = model.counts.empty() ? zeros : model.counts;
  // Rows not placed (TrainConfig::deferRows): the words' rows from the gathered
  // matrix, the others drawn, 4 MiB at a time; the input matrix is never touched.
  std::optional<detail::FastTextMatrix> unplaced;
  if (model.unplacedRows)
    unplaced = detail::FastTextMatrix{model.input.rows(), model.input.cols(),
                                      [&model](std::ostream& out) {
                                        detail::writeUnplacedRows(out, model);
                                      }};
  if (model.packed != PackedWeights::None) {
    // 16-bit weights: fastText's file holds float32, widened 1 MiB at a time (no
    // float32 copy of a matrix: the bucket rows make the input matrix large).
    auto widened = [&model](const MatrixF& m) {
      return detail::FastTextMatrix{m.rows(), m.cols(), [&model, &m](std::ostream& out) {
        const auto cols = static_cast<std::size_t>(m.cols());
        const Eigen::Index chunk =
            std::max<Eigen::Index>(1, static_cast<Eigen::Index>((std::size_t{1} << 18) / cols));
        std::vector<float> rows(static_cast<std::size_t>(chunk) * cols);
        for (Eigen::Index r = 0; r < m.rows(); r += chunk) {
          const Eigen::Index n = std::min(chunk, m.rows() - r);
          for (Eigen::Index i = 0; i < n; ++i)
            readWeightRow(model, m, r + i, rows.data() + static_cast<std::size_t>(i) * cols);
          detail::writeFloats(out, rows.data(), static_cast<std::size_t>(n) * cols);
        }
      }};
    };
    if (args.loss == FastTextLoss::HierarchicalSoftmax)
      throw ConfigError("hierarchical softmax does not train in 16 bits: this model cannot be one");
    detail::saveFastTextMatrices(path, model.words, counts,
                                 unplaced ? *unplaced : widened(model.input),
                                 widened(model.output), args);
    return;
  }
  if (args.loss == FastTextLoss::HierarchicalSoftmax) {
    // Both build word2vec.c's Huffman tree from the counts (the same inner nodes, the
    // same rows), but posvec trains an inner node towards 1 - code (word2vec.c) and
    // fastText towards code: the same model has the rows negated in fastText.
    const MatrixF negated = -model.output;
    detail::saveFastTextMatrices(path, model.words, counts,
                                 unplaced ? *unplaced : detail::fastTextMatrix(model.input),
                                 detail::fastTextMatrix(negated), args);
  } else {
    detail::saveFastTextMatrices(path, model.words, counts,
                                 unplaced ? *unplaced : detail::fastTextMatrix(model.input),
                                 detail::fastTextMatrix(model.output), args);
  }
}

}  // namespace posvec
