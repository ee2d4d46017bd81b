// The tables the phrase passes count and look up spans of word ids in (phrase_pass.cpp
// over the counting pass's id stream, phrase_text_pass.cpp over the text itself), the
// scoring that turns the counts into phrases, and the rewriting of a sentence of ids with
// them (gensim's Phrases[sentence]). Spans of ids stand for their joined strings: the
// passes check that no word holds a byte of the delimiter.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "posvec/phrases.hpp"

namespace posvec::detail {

inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline std::uint64_t pairKey(std::int32_t a, std::int32_t b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
         static_cast<std::uint32_t>(b);
}

// A number for each span of word ids "a mid... b": open addressing, the two ends in the
// slot, the connector ids between them (rarer) in an arena.
class SpanTable {
 public:
  SpanTable() : slots_(1 << 12) {}

  // The span's number, inserted as 0 when absent.
  std::int64_t& at(std::int32_t a, const std::int32_t* mid, std::uint32_t n, std::int32_t b) {
    for (;;) {
      const std::size_t mask = slots_.size() - 1;
      for (std::size_t i = hashOf(a, mid, n, b) & mask;; i = (i + 1) & mask) {
        Slot& s = slots_[i];
        if (s.a < 0) {
          if ((size_ + 1) * 2 > slots_.size()) break;  // grow, then look again
          s.a = a;
          s.b = b;
          s.n = n;
          s.mid = mids_.size();
          mids_.insert(mids_.end(), mid, mid + n);
          ++size_;
          return s.value;
        }
        if (same(s, a, mid, n, b)) return s.value;
      }
      grow();
    }
  }
  // The span's number, or nullptr when absent.
  const std::int64_t* find(std::int32_t a, const std::int32_t* mid, std::uint32_t n,
                           std::int32_t b) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hashOf(a, mid, n, b) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.a < 0) return nullptr;
      if (same(s, a, mid, n, b)) return &s.value;
    }
  }
  std::size_t size() const { return size_; }
  // f(a, mid, n, b, number) for every span.
  template <typename F>
  void forEach(F&& f) const {
    for (const Slot& s : slots_)
      if (s.a >= 0) f(s.a, mids_.data() + s.mid, s.n, s.b, s.value);
  }

 private:
  struct Slot {
    std::int32_t a = -1, b = 0;  // a < 0: unused
    std::uint32_t n = 0;         // connector ids between the ends
    std::uint64_t mid = 0;       // where they start in mids_
    std::int64_t value = 0;
  };

  static std::uint64_t hashOf(std::int32_t a, const std::int32_t* mid, std::uint32_t n,
                              std::int32_t b) {
    std::uint64_t h = mix64(pairKey(a, b));
    for (std::uint32_t j = 0; j < n; ++j) h = mix64(h ^ static_cast<std::uint32_t>(mid[j]));
    return h;
  }
  bool same(const Slot& s, std::int32_t a, const std::int32_t* mid, std::uint32_t n,
            std::int32_t b) const {
    return s.a == a && s.b == b && s.n == n &&
           (n == 0 || std::memcmp(mids_.data() + s.mid, mid, n * sizeof(std::int32_t)) == 0);
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.a < 0) continue;
      std::size_t i = hashOf(s.a, mids_.data() + s.mid, s.n, s.b) & mask;
      while (slots_[i].a >= 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  std::vector<std::int32_t> mids_;
  std::size_t size_ = 0;
};

// A number for each key (a pair of word ids), open addressing over 16-byte slots.
class PairTable {
 public:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // no pair of ids below 2^31
  explicit PairTable(std::size_t expected = 16) {
    std::size_t n = 16;
    while (n < expected * 2) n *= 2;
    slots_.resize(n);
  }
  // The key's number (hash: mix64(key)), inserted as 0 when absent.
  std::int64_t& at(std::uint64_t key, std::uint64_t hash) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.key == key) return s.value;
      if (s.key == kEmpty) {
        s.key = key;
        ++size_;
        return s.value;
      }
    }
  }
  const std::int64_t* find(std::uint64_t key, std::uint64_t hash) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmpty) return nullptr;
    }
  }
  std::size_t size() const { return size_; }
  template <typename F>
  void forEach(F&& f) const {
    for (const Slot& s : slots_)
      if (s.key != kEmpty) f(s.key, s.value);
  }

 private:
  struct Slot {
    std::uint64_t key = kEmpty;
    std::int64_t value = 0;
  };
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.key == kEmpty) continue;
      std::size_t i = mix64(s.key) & mask;
      while (slots_[i].key != kEmpty) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

// Counts of two-word spans (no connector between their ends). A table over every pair
// would miss the cache on almost every word, so each key first goes to one of 256
// partitions (its hash's top byte), a buffer each, and a full buffer is added to its
// partition's table, small enough to stay in cache.
class PairCounts {
 public:
  PairCounts() : tables_(kParts), buffers_(kParts) {
    for (auto& b : buffers_) b.reserve(kBuffer);
  }
  void add(std::uint64_t key) {
    const std::size_t part = mix64(key) >> 56;
    std::vector<std::uint64_t>& b = buffers_[part];
    b.push_back(key);
    if (b.size() == kBuffer) flush(part);
  }
  // Adds `count` to the key's count directly (merging; the buffers are for counting).
  void add(std::uint64_t key, std::int64_t count) {
    const std::uint64_t hash = mix64(key);
    tables_[hash >> 56].at(key, hash) += count;
  }
  // Adds what the buffers hold to the tables.
  void finish() {
    for (std::size_t p = 0; p < kParts; ++p) flush(p);
  }
  // Adds another counter's counts (finished) to this one's (finished).
  void merge(const PairCounts& other) {
    for (std::size_t p = 0; p < kParts; ++p)
      other.tables_[p].forEach(
          [&](std::uint64_t key, std::int64_t c) { tables_[p].at(key, mix64(key)) += c; });
  }
  // Adds another counter's counts (finished) to this one's (finished), each key's two ids
  // mapped through `map` first.
  void mergeMapped(const PairCounts& other, const std::vector<std::int32_t>& map) {
    other.forEach([&](std::uint64_t key, std::int64_t c) {
      add(pairKey(map[key >> 32], map[key & 0xFFFFFFFFu]), c);
    });
  }
  std::size_t size() const {
    std::size_t n = 0;
    for (const auto& t : tables_) n += t.size();
    return n;
  }
  template <typename F>
  void forEach(F&& f) const {
    for (const auto& t : tables_) t.forEach(f);
  }

 private:
  static constexpr std::size_t kParts = 256, kBuffer = 4096;
  void flush(std::size_t part) {
    PairTable& t = tables_[part];
    for (const std::uint64_t key : buffers_[part]) ++t.at(key, mix64(key));
    buffers_[part].clear();
  }
  std::vector<PairTable> tables_;
  std::vector<std::vector<std::uint64_t>> buffers_;
};

// What the passes need to know of a word id, one byte each: a connector word; the start
// of a two-word phrase (set by scoreSpans).
enum WordFlags : char { kConnector = 1, kStartsPair = 2 };

// A Bloom filter over pair keys (two bits a key, both in one 64-bit word, 128 KiB: it
// stays in cache where the table of phrases does not, and a test reads one word): most
// word pairs are no phrase, and most are told so here.
class PairFilter {
 public:
  void add(std::uint64_t hash) { bits_[(hash >> 12) & kMask] |= bitsOf(hash); }
  bool mayHold(std::uint64_t hash) const {
    const std::uint64_t b = bitsOf(hash);
    return (bits_[(hash >> 12) & kMask] & b) == b;
  }

 private:
  static constexpr std::uint64_t kMask = (std::uint64_t{1} << 14) - 1;  // 16,384 words
  static std::uint64_t bitsOf(std::uint64_t hash) {
    return (std::uint64_t{1} << (hash & 63)) | (std::uint64_t{1} << ((hash >> 6) & 63));
  }
  std::vector<std::uint64_t> bits_ = std::vector<std::uint64_t>(kMask + 1, 0);
};

// The text of each word id (0 to V - 1) and of each phrase (V + its index in the found
// phrases), one after another in one array: the rewriting copies a token from there.
struct TokenText {
  std::string chars;
  std::vector<std::uint64_t> at{0};  // token t is chars[at[t], at[t + 1])
  void add(std::string_view token) {
    chars.append(token);
    at.push_back(chars.size());
  }
  // After the last add(): 16 bytes to read past the last token (TextOut::put).
  void finish() { chars.append(16, '\0'); }
  const char* data(std::size_t t) const { return chars.data() + at[t]; }
  std::uint32_t size(std::size_t t) const { return static_cast<std::uint32_t>(at[t + 1] - at[t]); }
};

// Text built a token at a time into a buffer that grows.
class TextOut {
 public:
  // A space unless the line is empty, then the token (n bytes at s): one of up to 16
  // bytes is copied as 16 (a fixed-size copy, no call), so 16 bytes must be readable at s.
  void token(const char* s, std::size_t n, bool space) {
    if (used_ + n + 17 > buf_.size()) grow(n + 1);
    char* w = buf_.data() + used_;
    *w = ' ';
    w += space;
    if (n <= 16)
      std::memcpy(w, s, 16);
    else
      std::memcpy(w, s, n);
    used_ += n + space;
  }
  void put(char c) {
    if (used_ + 17 > buf_.size()) grow(1);
    buf_[used_++] = c;
  }
  std::string_view text() const { return {buf_.data(), used_}; }
  void clear() { used_ = 0; }

 private:
  void grow(std::size_t n) { buf_.resize(std::max(2 * buf_.size(), used_ + n + (1 << 20))); }
  std::vector<char> buf_;
  std::size_t used_ = 0;
};

// The phrases of a corpus's counts, numbered (found[i] is phrase i + 1), and the tables
// the rewriting finds them in.
struct PhraseIndex {
  std::vector<FoundPhrase> found;
  TokenText text;   // token i: found[i].phrase
  PairTable pairs;  // two-word phrases: key -> number
  PairFilter pairFilter;
  SpanTable spans;  // phrases with connector words: span -> number
};

// The counts of one corpus, words as ids 0 to V - 1: scores every span (gensim's
// score_candidate; `keys` counted keys, `tokens` words read) and marks the words that
// start a two-word phrase in `flags`.
PhraseIndex scoreSpans(const PhraseOptions& options, const PairCounts& pairs,
                       const SpanTable& spans, const std::vector<std::string_view>& words,
                       const std::vector<std::int64_t>& counts, std::size_t keys,
                       std::int64_t tokens, std::vector<char>& flags);

// Phrases::apply on ids, a word at a time, left to right: each sentence goes to `out` as
// a line of tokens (its words, and its phrases joined), a sentence without words as
// nothing. A word comes with its text, which must stay as it is (and 16 bytes past its
// end readable) until the next word() or end(), or a keep().
class SpanJoiner {
 public:
  SpanJoiner(const std::vector<char>& flags, const PhraseIndex& index, TextOut& out)
      : flags_(flags), index_(index), out_(out) {}

  void word(std::int32_t id, const char* text, std::uint32_t n) {
    const char f = flags_[static_cast<std::size_t>(id)];
    if (f & kConnector) {
      if (start_.id >= 0)
        between_.push_back(Held{id, n, text});
      else
        emit(text, n);
      return;
    }
    if (start_.id < 0) {
      start_ = Held{id, n, text};
      return;
    }
    const std::int64_t* phrase = nullptr;
    if (!between_.empty()) {
      ids_.clear();
      for (const Held& h : between_) ids_.push_back(h.id);
      phrase =
          index_.spans.find(start_.id, ids_.data(), static_cast<std::uint32_t>(ids_.size()), id);
    } else if (flags_[static_cast<std::size_t>(start_.id)] & kStartsPair) {
      const std::uint64_t key = pairKey(start_.id, id), hash = mix64(key);
      if (index_.pairFilter.mayHold(hash)) phrase = index_.pairs.find(key, hash);
    }
    if (phrase) {
      const auto i = static_cast<std::size_t>(*phrase - 1);
      emit(index_.text.data(i), index_.text.size(i));
      start_.id = -1;
      between_.clear();
    } else {
      giveBack();
      start_ = Held{id, n, text};
    }
  }
  // The sentence's end.
  void end() {
    if (start_.id >= 0) giveBack();
    start_.id = -1;
    if (lineOpen_) out_.put('\n');
    lineOpen_ = false;
  }
  // The text of the words held (the start of a span, and the connector words after it)
  // is about to change: keeps a copy.
  void keep() {
    std::size_t bytes = 16;
    if (start_.id >= 0) bytes += start_.n;
    for (const Held& h : between_) bytes += h.n;
    std::string copy;
    copy.reserve(bytes);
    const auto move = [&](Held& h) {
      const std::size_t at = copy.size();
      copy.append(h.text, h.n);
      h.text = copy.data() + at;
    };
    if (start_.id >= 0) move(start_);
    for (Held& h : between_) move(h);
    copy.append(16, '\0');
    kept_.swap(copy);
  }

 private:
  struct Held {
    std::int32_t id = -1;
    std::uint32_t n = 0;
    const char* text = nullptr;
  };
  void emit(const char* text, std::size_t n) {
    out_.token(text, n, lineOpen_);
    lineOpen_ = true;
  }
  void giveBack() {
    emit(start_.text, start_.n);
    for (const Held& h : between_) emit(h.text, h.n);
    between_.clear();
  }

  const std::vector<char>& flags_;
  const PhraseIndex& index_;
  TextOut& out_;
  Held start_;
  std::vector<Held> between_;
  std::vector<std::int32_t> ids_;
  std::string kept_;
  bool lineOpen_ = false;
};

// Phrases::findAndJoin for a corpus of pre-tokenized files, read twice and kept as no
// id stream (phrase_text_pass.cpp). nullopt, having written nothing, when the corpus is
// not such files or holds what the id pass reads otherwise (a word too long or not valid
// UTF-8, no words); `viaStrings` is then set when only the string path counts it as
// gensim does (pruned counts, a word holding a byte of the delimiter). The files are
// read `block` bytes at a time, and rewritten in blocks of about that size.
inline constexpr std::size_t kTextBlock = 1 << 20;
std::optional<Phrases> findAndJoinText(const CorpusSource& corpus, const PhraseOptions& options,
                                       int threads, std::ostream& out, bool& viaStrings,
                                       std::size_t block = kTextBlock);

}  // namespace posvec::detail
