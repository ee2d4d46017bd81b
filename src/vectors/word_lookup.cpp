// Vectors for word lookups, with a fastText model's n-grams for unknown words.
#include "posvec/word_lookup.hpp"

namespace posvec {

std::optional<Eigen::RowVectorXf> LookupVectors::vector(std::string_view word) const {
  if (auto id = vectors.find(word)) return Eigen::RowVectorXf(vectors.vectors().row(*id));
  if (subwords) return subwords->vector(word);
  return std::nullopt;
}

LookupVectors loadLookupVectors(const std::string& path, const LoadOptions& options,
                                bool vocabulary) {
  LookupVectors v;
  if (SubwordModel::isFastTextFile(path)) {
    v.subwords = vocabulary ? SubwordModel::load(path) : SubwordModel::open(path);
    if (vocabulary) v.vectors = v.subwords->wordVectors();
  } else {
    v.vectors = loadVectors(path, options);
  }
  return v;
}

}  // namespace posvec
