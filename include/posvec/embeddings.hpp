/// \file
/// Embeddings: a vocabulary of words, each with one row of a float matrix, and
/// the queries people run on word vectors (cosine, nearest words, analogies).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "posvec/types.hpp"
#include "posvec/vector_math.hpp"  // cosine, used with rows of the matrix

namespace posvec {

/// One answer of a nearest-word query.
struct Neighbour {
  std::string word;   ///< the word found
  double similarity;  ///< its cosine similarity to the query, in [-1, 1]
};

/// Word vectors: words (each with a row of a float32 matrix, and optionally its
/// corpus count) and the queries run on them. Immutable after construction, so
/// the const members may be called from any number of threads at once. Copies
/// share the cached norms (the matrix itself is copied).
class Embeddings {
 public:
  /// No words, dimension 0.
  Embeddings() = default;
  /// Rows of `vectors` belong to `words` in order, most frequent first by convention.
  /// `counts` is optional (empty, or one per word). Throws InputError on a size
  /// mismatch, an empty or duplicate word, or a word containing whitespace.
  Embeddings(std::vector<std::string> words, MatrixF vectors, std::vector<std::int64_t> counts = {});

  /// Number of words (rows).
  std::size_t size() const { return words_.size(); }
  /// Dimension of the vectors (columns).
  std::size_t dim() const { return static_cast<std::size_t>(vectors_.cols()); }
  /// The words, in row order.
  const std::vector<std::string>& words() const { return words_; }
  /// The vectors, size() × dim(), row i for words()[i].
  const MatrixF& vectors() const { return vectors_; }
  /// The corpus counts, one per word, or empty when unknown.
  const std::vector<std::int64_t>& counts() const { return counts_; }

  /// The row of `word` (exact, case-sensitive match), or nothing when absent.
  std::optional<WordId> find(std::string_view word) const;
  /// Like find, but throws InputError("unknown word '...'") when absent.
  WordId id(std::string_view word) const;
  /// A copy of the vector of `word`; InputError when it is unknown.
  Eigen::RowVectorXf vector(std::string_view word) const;

  /// Cosine similarity of two words' vectors (accumulated in double; 0 when one is
  /// all zeros); InputError when either is unknown.
  double similarity(std::string_view a, std::string_view b) const;
  /// The k words closest to `word` by cosine, excluding the word itself.
  /// InputError when `word` is unknown.
  std::vector<Neighbour> nearest(std::string_view word, std::size_t k) const;
  /// The k words closest to `query` by cosine, skipping ids in `exclude`, among the
  /// first `limit` rows (0: all). Most similar first (ties: lower id first); rows
  /// of zeros are never returned, and a zero query returns nothing. InputError
  /// when `query` does not have dim() values.
  std::vector<Neighbour> nearestTo(const Eigen::RowVectorXf& query, std::size_t k,
                                   const std::vector<WordId>& exclude = {},
                                   std::size_t limit = 0) const;
  /// 3CosAdd as gensim's most_similar(positive=[b, c], negative=[a]): unit vectors,
  /// b - a + c, inputs excluded; searched among the first `limit` rows (0: all).
  /// InputError when a word is unknown.
  std::vector<Neighbour> analogy(std::string_view a, std::string_view b, std::string_view c,
                                 std::size_t k, std::size_t limit = 0) const;

  /// Unit-length copy of row `id` (zeros stay zeros).
  Eigen::RowVectorXf unitVector(WordId id) const;
  /// Euclidean length of every row, computed on first use (thread-safe) and kept:
  /// loading a file does not pay for a pass over the matrix nobody may need.
  const Eigen::VectorXf& norms() const;

 private:
  struct NormCache {
    std::once_flag once;
    Eigen::VectorXf norms;
  };
  std::vector<std::string> words_;
  MatrixF vectors_;
  std::vector<std::int64_t> counts_;
  // Shared by copies: the matrix never changes after construction.
  std::shared_ptr<NormCache> norms_ = std::make_shared<NormCache>();
  // Open addressing over words_ (id + 1, 0 empty; a power of two, at most half
  // full): one allocation for the whole vocabulary instead of one per word.
  std::vector<std::uint32_t> slots_;
};

}  // namespace posvec
