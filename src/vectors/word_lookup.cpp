// Vectors for word lookups, with a fastText model's n-grams for unknown words.
#include "posvec/word_lookup.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "formats_detail.hpp"

namespace posvec {

std::optional<Eigen::RowVectorXf> LookupVectors::vector(std::string_view word) const {
  if (auto id = vectors.find(word)) return Eigen::RowVectorXf(vectors.vectors().row(*id));
  // A word without n-gram rows (bucket 0, no n-gram lengths) has no vector to build.
  if (subwords && !subwords->rows(word).empty()) return subwords->vector(word);
  return std::nullopt;
}

LookupVectors loadLookupVectors(const std::string& path, const LoadOptions& options,
                                bool vocabulary) {
  LookupVectors v;
  if (SubwordModel::isFastTextFile(path)) {
    v.subwords = SubwordModel::open(path);
    if (vocabulary) {
      // The vocabulary's vectors read each word's rows. When those are a small share of
      // the input matrix (a model with many more buckets than its words use), they are
      // read as they are needed; otherwise the matrix is read whole, in one pass.
      const std::vector<std::string>& words = v.subwords->words();
      const std::size_t sample = std::min<std::size_t>(words.size(), 1000);
      std::uint64_t listed = 0;
      for (std::size_t i = 0; i < sample; ++i) listed += v.subwords->rows(words[i]).size();
      const double estimate =
          sample ? static_cast<double>(listed) / static_cast<double>(sample) *
                       static_cast<double>(words.size())
                 : 0.0;
      const double matrixRows = static_cast<double>(words.size()) + v.subwords->bucket();
      if (estimate > matrixRows / 8) v.subwords = SubwordModel::load(path);
      v.vectors = v.subwords->wordVectors();
    }
  } else if (std::optional<SubwordModel> model = detail::posvecSubwordModel(path)) {
    // A posvec subword model: its input rows build any word, as a fastText model's do.
    v.subwords = std::move(model);
    if (vocabulary) {
      v.vectors = v.subwords->wordVectors();
      if (options.limit > 0 && options.limit < v.vectors.size()) v.vectors = loadVectors(path, options);
    }
  } else {
    v.vectors = loadVectors(path, options);
  }
  return v;
}

}  // namespace posvec
