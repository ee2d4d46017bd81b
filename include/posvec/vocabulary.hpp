/// \file
/// Vocabulary: the words a model knows, with their corpus counts, sorted by count
/// (ties in first-seen order), built in one streaming counting pass. Also the two
/// distributions training draws from: subsampling keep-probabilities and the
/// unigram^0.75 noise distribution of negative sampling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "posvec/types.hpp"

namespace posvec {

/// The words a model knows with their corpus counts; a word's id is its index.
/// Immutable after construction: the const members may be called from any number
/// of threads at once.
class Vocabulary {
 public:
  /// An empty vocabulary.
  Vocabulary() = default;
  /// Words most frequent first; counts one per word, > 0. Throws InputError on a
  /// size mismatch, an empty or duplicate word, a non-positive count, or counts
  /// whose sum overflows 64 bits. The order given is kept (ids are indices).
  Vocabulary(std::vector<std::string> words, std::vector<std::int64_t> counts);

  /// Number of words.
  std::size_t size() const { return words_.size(); }
  /// The word of `id` (0 <= id < size(), unchecked).
  const std::string& word(WordId id) const { return words_[static_cast<std::size_t>(id)]; }
  /// The corpus count of `id` (0 <= id < size(), unchecked).
  std::int64_t count(WordId id) const { return counts_[static_cast<std::size_t>(id)]; }
  /// All words, in id order.
  const std::vector<std::string>& words() const { return words_; }
  /// All counts, in id order.
  const std::vector<std::int64_t>& counts() const { return counts_; }
  /// Sum of the counts: the number of corpus tokens training sees per epoch.
  std::int64_t totalCount() const { return total_; }
  /// The id of `word` (exact, case-sensitive match); -1 when absent.
  WordId find(std::string_view word) const;

  /// word2vec.c's subsampling: keep probability (sqrt(f/(s*T)) + 1) * (s*T)/f for a
  /// word of count f among T tokens, capped at 1; sample = 0 keeps everything.
  double keepProbability(WordId id, double sample) const;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> words_;
  std::vector<std::int64_t> counts_;
  std::int64_t total_ = 0;
  std::unordered_map<std::string, WordId, Hash, std::equal_to<>> index_;
};

/// word2vec.c's vocabulary file (-save-vocab / -read-vocab): one "word count" line
/// per word, in vocabulary order, after a first line "</s> N" for word2vec.c's
/// sentence-end token (N = the number of sentences). Written atomically; "-"
/// writes to standard output.
/// \throws IoError when `path` cannot be written.
void saveWord2vecVocabulary(const Vocabulary& vocabulary, std::int64_t sentences,
                            const std::string& path);
/// Reads such a file (the "</s>" line, if any, is skipped, as are blank lines and
/// words of count 0) and sorts it by count, ties in file order, as word2vec.c
/// does. InputError naming the file and line for anything else; IoError when
/// the file cannot be read.
Vocabulary readWord2vecVocabulary(const std::string& path);

/// The streaming counting pass. Each distinct word gets a provisional id in
/// first-seen order (what add() returns, so a caller can record the corpus as ids
/// in the same pass); finish() sorts, applies min-count and max-vocab, and returns
/// the map from provisional ids to final ids (-1: dropped).
/// Not thread-safe: one builder per thread, merged with addCount().
class VocabularyBuilder {
 public:
  /// When the table holds more than `maxTableSize` distinct words, or its words
  /// take more than `maxTableBytes` (bytes(): their characters and the table's
  /// own cost per word), words seen at most `n` times are forgotten (n = 1, 2, ...
  /// on each pruning), as word2vec.c does: memory stays bounded on huge corpora at
  /// the price of slightly low counts for words that were forgotten and came back.
  /// 0: no such limit.
  explicit VocabularyBuilder(std::size_t maxTableSize = 20'000'000,
                             std::uint64_t maxTableBytes = kDefaultTableBytes);
  /// The default byte limit of the counting table: 2 GiB, about 20 million words of
  /// 30 bytes (the word limit's size) or 1.9 million of 1 KiB.
  static constexpr std::uint64_t kDefaultTableBytes = std::uint64_t{2} << 30;
  /// What a word costs the table besides its characters (string, hash, id, count, slots).
  static constexpr std::uint64_t kBytesPerEntry = 32 + 8 + 4 + 8 + 16;
  /// The table's size in bytes: its words' characters and kBytesPerEntry a word.
  std::uint64_t bytes() const { return wordBytes_ + kBytesPerEntry * words_.size(); }

  /// One occurrence of `word`; returns its provisional id (the same id each time
  /// the word comes again, unless it was pruned in between).
  /// \throws InputError past 2^31 - 1 distinct words.
  std::int32_t add(std::string_view word);
  /// `count` occurrences of `word` at once (count >= 1): merging tables counted
  /// separately (threads, ranks) in corpus order gives the provisional ids and
  /// counts one table would have given. Returns the provisional id, as add().
  std::int32_t addCount(std::string_view word, std::int64_t count);
  /// Every word with its provisional id and count, in provisional-id (first-seen) order.
  void forEachInIdOrder(
      const std::function<void(std::string_view, std::int32_t, std::int64_t)>& visit) const;
  /// Distinct words in the table now (after any pruning).
  std::size_t distinct() const { return words_.size(); }
  /// Occurrences added so far, pruned words' included.
  std::int64_t tokens() const { return tokens_; }
  /// How many times the table was pruned.
  int prunings() const { return prunings_; }

  /// How many provisional ids were handed out (pruned words keep theirs).
  std::int32_t provisionalIds() const { return nextId_; }

  /// The vocabulary of the words counted at least `minCount` times, most frequent
  /// first (ties in first-seen order), cut to the first `maxVocab` words (0: no
  /// limit). When `provisionalToFinal` is given it receives, for each provisional
  /// id, the word's final id or -1 when it was dropped.
  /// Throws InputError when no word reaches minCount (or nothing was added).
  Vocabulary finish(std::int64_t minCount, std::size_t maxVocab,
                    std::vector<WordId>* provisionalToFinal = nullptr);

 private:
  // Open addressing over the words' hashes (linear probing, load <= 1/2): a
  // lookup is one slot and, on a hash match, one string compare; no node chains
  // and no division. Entries (word, provisional id, count) are kept in arrays.
  struct Slot {
    std::uint32_t tag;   // high half of the word's hash
    std::int32_t entry;  // -1: empty
  };
  std::size_t findSlot(std::string_view word, std::uint64_t hash) const;
  void rebuildSlots(std::size_t capacity);
  void prune();

  std::vector<Slot> slots_;
  std::vector<std::string> words_;
  std::vector<std::uint64_t> hashes_;
  std::vector<std::int32_t> ids_;
  std::vector<std::int64_t> counts_;
  std::size_t maxTableSize_;
  std::uint64_t maxTableBytes_;
  std::uint64_t wordBytes_ = 0;  // characters of the words in the table
  std::int64_t pruneBelow_ = 1;
  std::int32_t nextId_ = 0;
  std::int64_t tokens_ = 0;
  int prunings_ = 0;
};

/// Walker's alias table over count^power (0.75 for negative sampling): O(1) draws
/// from one 64-bit random number, O(V) memory (no 10^8-entry table).
/// Immutable after construction: draw() may be called from any number of threads
/// (each with its own random numbers).
class NoiseSampler {
 public:
  /// An empty sampler (size() 0; draw() must not be called).
  NoiseSampler() = default;
  /// The table for word i drawn with probability counts[i]^power / sum_j counts[j]^power
  /// (counts > 0, as a Vocabulary's).
  NoiseSampler(const std::vector<std::int64_t>& counts, double power = 0.75);

  /// A word id in [0, size()). `bits` uniform over 64 bits: the high half picks
  /// a column, the low half decides between the column's word and its alias.
  WordId draw(std::uint64_t bits) const {
    const std::uint64_t col = ((bits >> 32) * size_) >> 32;
    const Column c = columns_[col];
    return static_cast<std::uint32_t>(bits) < c.threshold ? static_cast<WordId>(col) : c.alias;
  }
  /// Number of words (columns).
  std::size_t size() const { return static_cast<std::size_t>(size_); }
  /// The exact probability draw() gives `id` (what the table realises); O(size()).
  double probability(WordId id) const;

 private:
  std::uint64_t size_ = 0;
  // Threshold and alias side by side: a draw is one random access (one cache miss
  // on a large vocabulary), not two.
  struct Column {
    std::uint32_t threshold;  // keep the column's own word when low bits < this
    WordId alias;
  };
  std::vector<Column> columns_;
};

}  // namespace posvec
