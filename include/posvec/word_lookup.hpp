/// \file
/// The vectors that the commands taking words or sentences look words up in: any
/// vectors file loadVectors() reads, or a fastText `.bin` whose vocabulary is
/// composed as fastText composes it and whose unknown words are built from their
/// character n-grams (so that, with a subword model, every word has a vector).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "posvec/embeddings.hpp"
#include "posvec/formats.hpp"
#include "posvec/subwords.hpp"

namespace posvec {

/// Word vectors, and the fastText model behind them when there is one.
struct LookupVectors {
  /// The vocabulary's vectors; for a fastText model, SubwordModel::wordVectors()
  /// (empty when loaded without the vocabulary).
  Embeddings vectors;
  /// The fastText model when the file is one: it builds the words `vectors` lacks.
  std::optional<SubwordModel> subwords;

  /// The vector of `word`: its row in `vectors`, else, with a subword model, the
  /// mean of its n-gram rows (SubwordModel::vector()); nullopt when it has neither
  /// (a model of 0 buckets has no n-gram rows).
  std::optional<Eigen::RowVectorXf> vector(std::string_view word) const;
  /// True when `word` is not in the vocabulary and a subword model builds its vector
  /// (the model's own vocabulary when it was opened without `vectors`).
  bool builds(std::string_view word) const {
    if (!subwords || subwords->rows(word).empty()) return false;
    return vectors.size() > 0 ? !vectors.find(word) : !subwords->find(word);
  }
};

/// Reads the vectors in `path`: a fastText `.bin` (recognised by its content) with
/// its composed vocabulary in `vectors` (the model read whole by SubwordModel::load(),
/// or, when the vocabulary's rows are under an eighth of the input matrix, opened by
/// SubwordModel::open() and only those rows read); any other file as
/// loadVectors(path, options) reads it. With `vocabulary` false a
/// fastText model is opened without its matrix (SubwordModel::open()) and
/// `vectors` stays empty: for looking up a few words in a model of any size.
LookupVectors loadLookupVectors(const std::string& path, const LoadOptions& options = {},
                                bool vocabulary = true);

}  // namespace posvec
