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

/// fastText's loss functions, with the numbers its `.bin` files store.
enum class FastTextLoss : std::int32_t {
  HierarchicalSoftmax = 1,  ///< `hs`
  NegativeSampling = 2,     ///< `ns`
  Softmax = 3,              ///< `softmax`
  OneVsAll = 4              ///< `ova` (supervised models)
};
/// fastText's model kinds, with the numbers its `.bin` files store (the supervised
/// kind, 3, is neither read nor written).
enum class FastTextModel : std::int32_t {
  Cbow = 1,     ///< continuous bag of words
  SkipGram = 2  ///< skip-gram
};

/// The training settings a fastText `.bin` file records (fastText's Args block,
/// plus the corpus size its dictionary records), with fastText 0.9.2's defaults
/// for an unsupervised model. Only dim, bucket, minn and maxn change the vectors a
/// reader computes; the others describe the training for tools that continue it.
struct FastTextArgs {
  std::int32_t dim = 100;       ///< vector dimension (the matrices' column count)
  std::int32_t ws = 5;          ///< context window
  std::int32_t epoch = 5;       ///< passes over the corpus
  std::int32_t minCount = 5;    ///< rarest word kept
  std::int32_t neg = 5;         ///< negatives per positive
  std::int32_t wordNgrams = 1;  ///< word n-grams (1 for word vectors)
  FastTextLoss loss = FastTextLoss::NegativeSampling;  ///< output layer
  FastTextModel model = FastTextModel::SkipGram;       ///< skip-gram or CBOW
  std::int32_t bucket = 2000000;    ///< n-gram hash buckets (input rows after the words)
  std::int32_t minn = 3;            ///< shortest character n-gram
  std::int32_t maxn = 6;            ///< longest character n-gram (0: none)
  std::int32_t lrUpdateRate = 100;  ///< tokens between learning-rate updates
  double t = 1e-4;                  ///< subsampling threshold
  /// Tokens of the corpus the dictionary was counted on (fastText's ntokens);
  /// -1 writes the sum of the word counts.
  std::int64_t ntokens = -1;
};

/// Writes fastText's `.bin` (version 12, as fastText 0.9.2 writes an unsupervised
/// model: magic, version, `args`, the dictionary with no labels and no pruning, the
/// input matrix, the output matrix, both unquantized), atomically; "-" streams to
/// standard output. `fasttext print-word-vectors`/`nn` and gensim's
/// `load_facebook_model` read it.
/// \param path   the file to write ("-": standard output)
/// \param words  the vocabulary, in row order (non-empty, no NUL byte, no repeats)
/// \param counts the corpus count of each word (as many as words, none negative)
/// \param input  nwords + args.bucket rows of args.dim values: the word rows, then
///               the n-gram buckets
/// \param output nwords rows of args.dim values (negative sampling, softmax); for
///               hierarchical softmax nwords - 1 rows (word2vec.c's inner nodes)
///               are accepted and a zero row completes them; no rows at all
///               writes zeros (a model whose output layer is unknown)
/// \param args   the settings to record; dim and bucket must match the
///               matrices (dim their columns, bucket the input rows after the words)
/// \throws InputError naming the inconsistency (row or column counts against
///         `args`, a bad word or count); IoError when the file cannot be written.
void saveFastText(const std::string& path, const std::vector<std::string>& words,
                  const std::vector<std::int64_t>& counts, const MatrixF& input,
                  const MatrixF& output, const FastTextArgs& args);

/// The input-matrix rows of the n-grams of `word`, in characterNgrams() order with
/// repeats kept: `nwords + subwordHash(ngram) % bucket` each. None when `bucket` is 0.
std::vector<std::int64_t> ngramRows(std::string_view word, int minn, int maxn, std::uint32_t bucket,
                                    std::int64_t nwords);

/// A fastText unsupervised model (skip-gram or CBOW) read from fastText's `.bin`
/// file (version 12, as fastText 0.9 writes it): its vocabulary, its n-gram settings
/// and its input matrix (nwords + bucket rows); load() keeps the output matrix and
/// the training settings too, so save() writes the file back as it was. Immutable after load(), so
/// the const members may be called from any number of threads at once.
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
  /// A model made from rows in memory, as a posvec subword model holds them: `input`
  /// has a row per word of `words`, then `bucket` n-gram rows. It has no output
  /// matrix, so save() refuses it. \throws FormatError when `input` has another
  /// number of rows or the n-gram settings are out of range.
  static SubwordModel fromRows(std::vector<std::string> words, std::vector<std::int64_t> counts,
                               MatrixF input, int minn, int maxn, std::uint32_t bucket);
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
  /// The output matrix: one row per word (empty after open()).
  const MatrixF& output() const { return output_; }
  /// The training settings and corpus size the file records.
  const FastTextArgs& args() const { return args_; }
  /// Writes the model with saveFastText(): a model load() read from a fastText
  /// `.bin` is written back byte for byte.
  /// \throws ConfigError after open() (the matrices are not in memory); as
  ///         saveFastText() otherwise.
  void save(const std::string& path) const;

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
  MatrixF output_;
  FastTextArgs args_;
  // After open(): the file and the offset of the input matrix's first value.
  std::shared_ptr<const RowFile> file_;
  std::uint64_t inputAt_ = 0;
};

}  // namespace posvec
