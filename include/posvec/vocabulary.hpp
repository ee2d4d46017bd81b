// Vocabulary: the words a model knows, with their corpus counts, sorted by count
// (ties in first-seen order), built in one streaming counting pass. Also the two
// distributions training draws from: subsampling keep-probabilities and the
// unigram^0.75 noise distribution of negative sampling.
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

class Vocabulary {
 public:
  Vocabulary() = default;
  // Words most frequent first; counts one per word, > 0. Throws InputError on a
  // size mismatch, an empty or duplicate word or a non-positive count.
  Vocabulary(std::vector<std::string> words, std::vector<std::int64_t> counts);

  std::size_t size() const { return words_.size(); }
  const std::string& word(WordId id) const { return words_[static_cast<std::size_t>(id)]; }
  std::int64_t count(WordId id) const { return counts_[static_cast<std::size_t>(id)]; }
  const std::vector<std::string>& words() const { return words_; }
  const std::vector<std::int64_t>& counts() const { return counts_; }
  // Sum of the counts: the number of corpus tokens training sees per epoch.
  std::int64_t totalCount() const { return total_; }
  // -1 when absent.
  WordId find(std::string_view word) const;

  // word2vec.c's subsampling: keep probability (sqrt(f/(s*T)) + 1) * (s*T)/f for a
  // word of count f among T tokens, capped at 1; sample = 0 keeps everything.
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

// word2vec.c's vocabulary file (-save-vocab / -read-vocab): one "word count" line
// per word, in vocabulary order, after a first line "</s> N" for word2vec.c's
// sentence-end token (N = the number of sentences). Written atomically.
void saveWord2vecVocabulary(const Vocabulary& vocabulary, std::int64_t sentences,
                            const std::string& path);
// Reads such a file (the "</s>" line, if any, is skipped, as are blank lines and
// words of count 0) and sorts it by count, ties in file order, as word2vec.c
// does. InputError naming the file and line for anything else.
Vocabulary readWord2vecVocabulary(const std::string& path);

// The streaming counting pass. Each distinct word gets a provisional id in
// first-seen order (what add() returns, so a caller can record the corpus as ids
// in the same pass); finish() sorts, applies min-count and max-vocab, and returns
// the map from provisional ids to final ids (-1: dropped).
class VocabularyBuilder {
 public:
  // When the table holds more than `maxTableSize` distinct words, or its words
  // take more than `maxTableBytes` (bytes(): their characters and the table's
  // own cost per word), words seen at most `n` times are forgotten (n = 1, 2, ...
  // on each pruning), as word2vec.c does: memory stays bounded on huge corpora at
  // the price of slightly low counts for words that were forgotten and came back.
  // 0: no such limit.
  explicit VocabularyBuilder(std::size_t maxTableSize = 20'000'000,
                             std::uint64_t maxTableBytes = kDefaultTableBytes);
  /// The default byte limit of the counting table: 2 GiB, about 20 million words of
  /// 30 bytes (the word limit's size) or 1.9 million of 1 KiB.
  static constexpr std::uint64_t kDefaultTableBytes = std::uint64_t{2} << 30;
  /// What a word costs the table besides its characters (string, hash, id, count, slots).
  static constexpr std::uint64_t kBytesPerEntry = 32 + 8 + 4 + 8 + 16;
  /// The table's size in bytes: its words' characters and kBytesPerEntry a word.
  std::uint64_t bytes() const { return wordBytes_ + kBytesPerEntry * words_.size(); }

  std::int32_t add(std::string_view word);
  // `count` occurrences of `word` at once (count >= 1): merging tables counted
  // separately (threads, ranks) in corpus order gives the provisional ids and
  // counts one table would have given.
  std::int32_t addCount(std::string_view word, std::int64_t count);
  // Every word with its provisional id and count, in provisional-id (first-seen) order.
  void forEachInIdOrder(
      const std::function<void(std::string_view, std::int32_t, std::int64_t)>& visit) const;
  std::size_t distinct() const { return words_.size(); }
  std::int64_t tokens() const { return tokens_; }
  int prunings() const { return prunings_; }

  // How many provisional ids were handed out (pruned words keep theirs).
  std::int32_t provisionalIds() const { return nextId_; }

  // Throws InputError when no word reaches minCount (or nothing was added).
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

// Walker's alias table over count^power (0.75 for negative sampling): O(1) draws
// from one 64-bit random number, O(V) memory (no 10^8-entry table).
class NoiseSampler {
 public:
  NoiseSampler() = default;
  NoiseSampler(const std::vector<std::int64_t>& counts, double power = 0.75);

  // `bits` uniform over 64 bits: the high half picks a column, the low half
  // decides between the column's word and its alias.
  WordId draw(std::uint64_t bits) const {
    const std::uint64_t col = ((bits >> 32) * size_) >> 32;
    const Column c = columns_[col];
    return static_cast<std::uint32_t>(bits) < c.threshold ? static_cast<WordId>(col) : c.alias;
  }
  std::size_t size() const { return static_cast<std::size_t>(size_); }
  // The exact probability draw() gives `id` (what the table realises).
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
