// The phrase model's count table: every unigram and joined bigram with its count, in one
// open-addressing table of fixed-size slots over an arena of key bytes (a node-based map
// spent two thirds of a Brown pass on its pointer chases). Keys are compared whole, so the
// table counts exactly what gensim's dict counts.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace posvec {
struct PhraseOptions;
}

namespace posvec::detail {

// gensim's scorers (original_scorer, npmi_scorer) for a span counted `cab` times whose two
// ends were counted `ca` and `cb` times, among `keys` unigrams and bigrams counted over
// `words` words read: the options' scorer, -infinity where gensim's gives it.
double phraseScore(const PhraseOptions& options, std::int64_t ca, std::int64_t cb, std::int64_t cab,
                   std::size_t keys, std::int64_t words);

class PhraseCounts {
 public:
  PhraseCounts() { slots_.resize(1024); }

  /// Adds one to `key`'s count (a new key starts at 0).
  void increment(std::string_view key) { ++slot(key, true)->count; }
  /// `key`'s count; 0 when absent.
  std::int64_t get(std::string_view key) const {
    const Slot* s = const_cast<PhraseCounts*>(this)->slot(key, false);
    return s ? s->count : 0;
  }
  /// Keys held.
  std::size_t size() const { return size_; }
  /// Drops every key counted fewer than `minimum` times.
  void pruneBelow(std::int64_t minimum) {
    std::vector<Slot> old;
    old.swap(slots_);
    std::string oldArena;
    oldArena.swap(arena_);
    slots_.assign(old.size(), Slot{});
    size_ = 0;
    for (const Slot& s : old)
      if (s.used() && s.count >= minimum) place(std::string_view(oldArena).substr(s.at, s.len), s);
  }
  /// Calls f(key, count) for every key, in no particular order.
  template <typename F>
  void forEach(F&& f) const {
    for (const Slot& s : slots_)
      if (s.used()) f(std::string_view(arena_).substr(s.at, s.len), s.count);
  }

 private:
  static constexpr std::uint32_t kEmpty = std::numeric_limits<std::uint32_t>::max();
  struct Slot {
    std::uint64_t hash = 0;
    std::uint64_t at = 0;     // the key's first byte in the arena
    std::uint32_t len = kEmpty;  // kEmpty: an unused slot
    std::int64_t count = 0;
    bool used() const { return len != kEmpty; }
  };

  static std::uint64_t hashOf(std::string_view key) { return std::hash<std::string_view>{}(key); }

  // The slot of `key`; a new one (count 0) when absent and `insert`, else nullptr.
  Slot* slot(std::string_view key, bool insert) {
    const std::uint64_t h = hashOf(key);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (!s.used()) {
        if (!insert) return nullptr;
        if ((size_ + 1) * 2 > slots_.size()) {
          grow();
          return slot(key, true);
        }
        s.hash = h;
        s.at = arena_.size();
        s.len = static_cast<std::uint32_t>(key.size());
        s.count = 0;
        arena_.append(key);
        ++size_;
        return &s;
      }
      if (s.hash == h && s.len == key.size() && arena_.compare(s.at, s.len, key) == 0) return &s;
    }
  }

  // Puts an existing key (from another arena) into this table, keeping its count.
  void place(std::string_view key, const Slot& from) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = from.hash & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.used()) continue;
      s = from;
      s.at = arena_.size();
      arena_.append(key);
      ++size_;
      return;
    }
  }

  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (!s.used()) continue;
      for (std::size_t i = s.hash & mask;; i = (i + 1) & mask)
        if (!slots_[i].used()) {
          slots_[i] = s;
          break;
        }
    }
  }

  std::vector<Slot> slots_;
  std::string arena_;
  std::size_t size_ = 0;
};

}  // namespace posvec::detail
