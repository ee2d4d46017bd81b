/// \file
/// Subword vectors as fastText forms them: the character n-grams of a word, their
/// hash, the rows they select, and a fastText model read from its `.bin` file, in
/// which any string has a vector (the mean of its word row and its n-gram rows).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "posvec/embeddings.hpp"
#include "posvec/types.hpp"

namespace posvec {

/// fastText's hash of a string: 32-bit FNV-1a over its bytes, each byte taken as a
/// signed char and sign-extended before the xor (fastText 0.9's behaviour, which
/// its `.bin` files depend on: bytes >= 0x80 xor in 0xFFFFFFxx).
std::uint32_t subwordHash(std::string_view bytes);

/// The character n-grams fastText uses for `word`: the substrings of `<word>` of
/// `minn` to `maxn` UTF-8 characters, in fastText's order (by first character, then
/// by length). The whole `<word>` is one of them when it has at most `maxn`
/// characters; the one-character strings "<" and ">" never are. None for the
/// end-of-sentence token "</s>". Bytes that are not valid UTF-8 are grouped as
/// fastText groups them (a byte 10xxxxxx continues the previous character).
std::vector<std::string> characterNgrams(std::string_view word, int minn, int maxn);

/// The input-matrix rows of the n-grams of `word`, in characterNgrams() order with
/// repeats kept: `nwords + subwordHash(ngram) % bucket` each. None when `bucket` is 0.
std::vector<std::int64_t> ngramRows(std::string_view word, int minn, int maxn, std::uint32_t bucket,
                                    std::int64_t nwords);

/// A fastText unsupervised model (skip-gram or CBOW) read from fastText's `.bin`
/// file (version 12, as fastText 0.9 writes it): its vocabulary, its n-gram settings
/// and its input matrix (nwords + bucket rows). The output matrix is checked but not
/// kept. Immutable after load(), so the const members may be called from any number
/// of threads at once.
class SubwordModel {
 public:
  /// Reads `path`. Throws IoError when it cannot be read; FormatError with one line
  /// naming the path and the problem when it is not a fastText `.bin`, has another
  /// version, is a supervised or quantized (`.ftz`) model, or is truncated or
  /// corrupt (every header field is checked against the file size before anything
  /// is allocated).
  static SubwordModel load(const std::string& path);
  /// Like load(), with the same checks, but leaves the input matrix in the file:
  /// vector() reads the rows it needs with positioned reads (a file that shrinks
  /// meanwhile gives an IoError, never a crash). A model of any size opens at once;
  /// meant for looking up some words. input() is empty then.
  static SubwordModel open(const std::string& path);
  /// True when `path` starts with fastText's magic number (the file is not checked further).
  static bool isFastTextFile(const std::string& path);

  /// The vocabulary in fastText's order (`</s>` first, then by count).
  const std::vector<std::string>& words() const { return words_; }
  /// The corpus count of each word, in words() order.
  const std::vector<std::int64_t>& counts() const { return counts_; }
  /// Dimension of the vectors.
  std::size_t dim() const { return dim_; }
  /// Shortest n-gram, in characters.
  int minn() const { return minn_; }
  /// Longest n-gram, in characters (0: the model has no n-grams).
  int maxn() const { return maxn_; }
  /// Number of hash buckets for n-grams.
  std::uint32_t bucket() const { return bucket_; }
  /// The input matrix: one row per word, then one per bucket (empty after open()).
  const MatrixF& input() const { return input_; }

  /// The row of `word` when it is in the vocabulary.
  std::optional<WordId> find(std::string_view word) const;
  /// The rows whose mean is the vector of `word` (fastText's getSubwords): its own
  /// row first when it is in the vocabulary, then its n-gram rows.
  std::vector<std::int64_t> rows(std::string_view word) const;
  /// The vector of any word (fastText's getWordVector): the mean of rows(word);
  /// zeros when there are none (an unknown word shorter than the shortest n-gram).
  Eigen::RowVectorXf vector(std::string_view word) const;
  /// The vectors of the whole vocabulary, composed as vector() composes them (what
  /// fastText's `.vec` file holds), for queries such as nearest words.
  Embeddings wordVectors() const;

 private:
  struct RowFile;
  static SubwordModel read(const std::string& path, bool matrix);
  std::vector<std::string> words_;
  std::vector<std::int64_t> counts_;
  std::unordered_map<std::string, WordId> index_;
  // fastText's pruned-bucket map (quantized models only; -1 when absent).
  std::int64_t pruneSize_ = -1;
  std::unordered_map<std::int32_t, std::int32_t> prune_;
  int minn_ = 0, maxn_ = 0;
  std::uint32_t bucket_ = 0;
  std::size_t dim_ = 0;
  MatrixF input_;
  // After open(): the file and the offset of the input matrix's first value.
  std::shared_ptr<const RowFile> file_;
  std::uint64_t inputAt_ = 0;
};

}  // namespace posvec
