// Embeddings: a vocabulary of words, each with one row of a float matrix, and
// the queries people run on word vectors (cosine, nearest words, analogies).
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

struct Neighbour {
  std::string word;
  double similarity;
};

class Embeddings {
 public:
  Embeddings() = default;
  // Rows of `vectors` belong to `words` in order, most frequent first by convention.
  // `counts` is optional (empty, or one per word). Throws InputError on a size
  // mismatch, an empty or duplicate word, or a word containing whitespace.
  Embeddings(std::vector<std::string> words, MatrixF vectors, std::vector<std::int64_t> counts = {});

  std::size_t size() const { return words_.size(); }
  std::size_t dim() const { return static_cast<std::size_t>(vectors_.cols()); }
  const std::vector<std::string>& words() const { return words_; }
  const MatrixF& vectors() const { return vectors_; }
  const std::vector<std::int64_t>& counts() const { return counts_; }

  std::optional<WordId> find(std::string_view word) const;
  // Like find, but throws InputError("unknown word '...'") when absent.
  WordId id(std::string_view word) const;
  Eigen::RowVectorXf vector(std::string_view word) const;

  double similarity(std::string_view a, std::string_view b) const;
  // The k words closest to `word` by cosine, excluding the word itself.
  std::vector<Neighbour> nearest(std::string_view word, std::size_t k) const;
  // The k words closest to `query` by cosine, skipping ids in `exclude`, among the
  // first `limit` rows (0: all).
  std::vector<Neighbour> nearestTo(const Eigen::RowVectorXf& query, std::size_t k,
                                   const std::vector<WordId>& exclude = {},
                                   std::size_t limit = 0) const;
  // 3CosAdd as gensim's most_similar(positive=[b, c], negative=[a]): unit vectors,
  // b - a + c, inputs excluded.
  std::vector<Neighbour> analogy(std::string_view a, std::string_view b, std::string_view c,
                                 std::size_t k, std::size_t limit = 0) const;

  // Unit-length copy of row `id` (zeros stay zeros).
  Eigen::RowVectorXf unitVector(WordId id) const;
  // Euclidean length of every row, computed on first use (thread-safe) and kept:
  // loading a file does not pay for a pass over the matrix nobody may need.
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
