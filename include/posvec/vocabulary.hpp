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

// The streaming counting pass. Each distinct word gets a provisional id in
// first-seen order (what add() returns, so a caller can record the corpus as ids
// in the same pass); finish() sorts, applies min-count and max-vocab, and returns
// the map from provisional ids to final ids (-1: dropped).
class VocabularyBuilder {
 public:
  // When the table holds more than `maxTableSize` distinct words, words seen at
  // most `n` times are forgotten (n = 1, 2, ... on each pruning), as word2vec.c
  // does: memory stays bounded on huge corpora at the price of slightly low counts
  // for words that were forgotten and came back. 0: never prune.
  explicit VocabularyBuilder(std::size_t maxTableSize = 20'000'000);

  std::int32_t add(std::string_view word);
  std::size_t distinct() const { return table_.size(); }
  std::int64_t tokens() const { return tokens_; }
  int prunings() const { return prunings_; }

  // Every counted word with its provisional id and count (to merge the counts of
  // several processes), and how many provisional ids were handed out.
  void forEachWord(const std::function<void(std::string_view word, std::int32_t id,
                                            std::int64_t count)>& f) const {
    for (const auto& [word, e] : table_) f(word, e.id, e.count);
  }
  std::int32_t provisionalIds() const { return nextId_; }

  // Throws InputError when no word reaches minCount (or nothing was added).
  Vocabulary finish(std::int64_t minCount, std::size_t maxVocab,
                    std::vector<WordId>* provisionalToFinal = nullptr);

 private:
  struct Entry {
    std::int32_t id;
    std::int64_t count;
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  void prune();

  std::unordered_map<std::string, Entry, Hash, std::equal_to<>> table_;
  std::size_t maxTableSize_;
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
    return static_cast<std::uint32_t>(bits) < threshold_[col] ? static_cast<WordId>(col)
                                                              : alias_[col];
  }
  std::size_t size() const { return static_cast<std::size_t>(size_); }
  // The exact probability draw() gives `id` (what the table realises).
  double probability(WordId id) const;

 private:
  std::uint64_t size_ = 0;
  std::vector<std::uint32_t> threshold_;  // keep the column's own word when low bits < this
  std::vector<WordId> alias_;
};

}  // namespace posvec
