// Phrases::findAndJoin: gensim's counting, scoring and rewriting (phrases.cpp) over word
// ids instead of joined strings. The corpus is read once, by the counting pass training
// uses (prepareCorpus: the same words and sentences, bit for bit at any thread count);
// the spans "start (connectors) end" are counted per thread in a table of id spans and
// merged, scored, and the id stream is rewritten block by block on the threads and
// written in order. A span of ids is its joined string exactly when no word holds a byte
// of the delimiter, which is checked; pruning, which depends on the order the sentences
// are counted in, is reproduced by the string path instead (the counts the threads
// merge never exceed max_vocab_size then, so gensim's pass would not have pruned).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <ostream>
#include <unordered_set>

#include "corpus_detail.hpp"
#include "parallel.hpp"
#include "phrase_counts.hpp"
#include "posvec/phrases.hpp"

namespace posvec {
namespace {

using detail::IdStream;

std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t pairKey(std::int32_t a, std::int32_t b) {
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

// Reads ids [begin, end) of `stream` a chunk at a time, calling f(id) for each; stops
// (returning false) when stop() says so after a chunk.
template <typename F, typename Stop>
bool forEachId(const IdStream& stream, std::int64_t begin, std::int64_t end, F&& f, Stop&& stop) {
  std::vector<std::int32_t> buf(IdStream::kChunk);
  for (std::int64_t pos = begin; pos < end;) {
    const auto want = static_cast<std::size_t>(
        std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), end - pos));
    const std::size_t got = stream.read(pos, buf.data(), want);
    if (got == 0) break;
    for (std::size_t i = 0; i < got; ++i) f(buf[i]);
    pos += static_cast<std::int64_t>(got);
    if (stop()) return false;
  }
  return true;
}

template <typename F>
void forEachId(const IdStream& stream, std::int64_t begin, std::int64_t end, F&& f) {
  forEachId(stream, begin, end, std::forward<F>(f), [] { return false; });
}

// What the passes need to know of a word id, one byte each: a connector word; the start
// of a two-word phrase (set after the counting).
enum WordFlags : char { kConnector = 1, kStartsPair = 2 };

// gensim's learn_vocab on ids: each "start (connectors) end" span of a sentence, counted;
// spans with connector words between their ends go to `spans`, the others to `pairs`.
// `carry` (word2phrase's counting): a sentence's first word pairs with the last word
// before it, in this shard or the one before. Stops, returning false, once the tables
// hold more than `limit` spans (memory stays bounded by max_vocab_size).
bool countSpans(const IdStream& stream, std::int64_t begin, std::int64_t end,
                const std::vector<char>& flags, bool carry, std::size_t limit, PairCounts& pairs,
                SpanTable& spans) {
  std::int32_t start = -1;
  if (carry)
    for (std::int64_t at = begin - 1; at >= 0 && start < 0; --at)
      if (stream.read(at, &start, 1) != 1) start = -1;  // kEnd reads as -1 too: go on back
  std::vector<std::int32_t> between;
  const auto count = [&](std::int32_t id) {
    if (id == IdStream::kEnd) {
      if (!carry) start = -1;
      between.clear();
    } else if (!(flags[static_cast<std::size_t>(id)] & kConnector)) {
      if (start >= 0) {
        if (between.empty())
          pairs.add(pairKey(start, id));
        else
          ++spans.at(start, between.data(), static_cast<std::uint32_t>(between.size()), id);
      }
      start = id;
      between.clear();
    } else if (start >= 0) {
      between.push_back(id);
    }
  };
  const bool whole =
      forEachId(stream, begin, end, count, [&] { return pairs.size() + spans.size() > limit; });
  pairs.finish();
  return whole;
}

// A Bloom filter over pair keys (two bits a key, 128 KiB: it stays in cache where the
// table of phrases does not): most word pairs are no phrase, and most are told so here.
class PairFilter {
 public:
  void add(std::uint64_t hash) {
    bits_[(hash & kMask) >> 6] |= std::uint64_t{1} << (hash & 63);
    bits_[((hash >> 32) & kMask) >> 6] |= std::uint64_t{1} << ((hash >> 32) & 63);
  }
  bool mayHold(std::uint64_t hash) const {
    return (bits_[(hash & kMask) >> 6] >> (hash & 63) & 1) &&
           (bits_[((hash >> 32) & kMask) >> 6] >> ((hash >> 32) & 63) & 1);
  }

 private:
  static constexpr std::uint64_t kMask = (std::uint64_t{1} << 20) - 1;
  std::vector<std::uint64_t> bits_ = std::vector<std::uint64_t>((kMask + 1) / 64, 0);
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
};

// Text built a token at a time into a buffer that grows: a token of up to 16 bytes is
// copied as 16 (a fixed-size copy, no call), which the buffer's and TokenText's slack allow.
class TextOut {
 public:
  void put(const char* s, std::size_t n) {
    reserve(n);
    if (n <= 16)
      std::memcpy(buf_.data() + used_, s, 16);
    else
      std::memcpy(buf_.data() + used_, s, n);
    used_ += n;
  }
  void put(char c) {
    reserve(1);
    buf_[used_++] = c;
  }
  std::string_view text() const { return {buf_.data(), used_}; }
  void clear() { used_ = 0; }

 private:
  void reserve(std::size_t n) {
    if (used_ + n + 16 > buf_.size()) buf_.resize(std::max(2 * buf_.size(), used_ + n + (1 << 20)));
  }
  std::vector<char> buf_;
  std::size_t used_ = 0;
};

// Phrases::apply on ids, appending each sentence of [begin, end) as a line of text.
// `pairPhrases` and `spanPhrases` number each phrase with its index in the found
// phrases, plus one.
void joinSpans(const IdStream& stream, std::int64_t begin, std::int64_t end,
               const std::vector<char>& flags, const TokenText& tokens,
               const PairFilter& pairFilter, const PairTable& pairPhrases,
               const SpanTable& spanPhrases, TextOut& text) {
  const std::size_t words = flags.size();
  std::int32_t start = -1;
  std::vector<std::int32_t> between;
  bool lineOpen = false;
  const auto emit = [&](std::size_t token) {
    if (lineOpen) text.put(' ');
    text.put(tokens.chars.data() + tokens.at[token], tokens.at[token + 1] - tokens.at[token]);
    lineOpen = true;
  };
  const auto giveBack = [&] {
    emit(static_cast<std::size_t>(start));
    for (const std::int32_t c : between) emit(static_cast<std::size_t>(c));
    between.clear();
  };
  forEachId(stream, begin, end, [&](std::int32_t id) {
    if (id == IdStream::kEnd) {
      if (start >= 0) giveBack();
      start = -1;
      if (lineOpen) text.put('\n');
      lineOpen = false;
      return;
    }
    const char f = flags[static_cast<std::size_t>(id)];
    if (!(f & kConnector)) {
      if (start >= 0) {
        const std::int64_t* phrase = nullptr;
        if (!between.empty()) {
          phrase = spanPhrases.find(start, between.data(),
                                    static_cast<std::uint32_t>(between.size()), id);
        } else if (flags[static_cast<std::size_t>(start)] & kStartsPair) {
          const std::uint64_t key = pairKey(start, id), hash = mix64(key);
          if (pairFilter.mayHold(hash)) phrase = pairPhrases.find(key, hash);
        }
        if (phrase) {
          emit(words + static_cast<std::size_t>(*phrase - 1));
          start = -1;
          between.clear();
        } else {
          giveBack();
          start = id;
        }
      } else {
        start = id;
      }
    } else if (start >= 0) {
      between.push_back(id);
    } else {
      emit(static_cast<std::size_t>(id));
    }
  });
}

}  // namespace

Phrases Phrases::findAndJoin(const CorpusSource& corpus, PhraseOptions options, std::ostream& out) {
  options.validate();
  const int threads = detail::resolveThreads(options.threads);
  const auto viaStrings = [&] {
    Phrases counting(options);
    counting.addCorpus(corpus);
    // The counting model rewrites (gensim's Phrases[sentence]): where words hold the
    // delimiter, the frozen phrases (export_phrases splits each key at every delimiter)
    // can decide otherwise, in gensim too.
    std::string line;
    counting.applyCorpus(corpus, [&](const std::vector<std::string>& joined) {
      line.clear();
      for (const std::string& t : joined) {
        if (!line.empty()) line += ' ';
        line += t;
      }
      if (!line.empty()) out << line << '\n';
    });
    return counting.freeze();
  };

  // Every word with its count (no minimum, no limit) and the corpus as ids.
  detail::PreparedCorpus prepared = detail::prepareCorpus(corpus, 1, 0, 20'000'000, threads);
  const Vocabulary& words = prepared.vocabulary;
  if (prepared.prunings > 0) return viaStrings();
  const std::unordered_set<std::string> connectorSet(options.connectorWords.begin(),
                                                     options.connectorWords.end());
  std::vector<char> flags(words.size(), 0);
  std::size_t unigrams = 0;
  for (std::size_t w = 0; w < words.size(); ++w) {
    const std::string& word = words.words()[w];
    // An empty word, or one holding a byte of the delimiter, may join to another
    // span's string: the string path counts those as gensim does.
    if (word.empty() || word.find_first_of(options.delimiter) != std::string::npos)
      return viaStrings();
    flags[w] = connectorSet.count(word) ? kConnector : 0;
    unigrams += flags[w] & kConnector ? 0 : 1;
  }

  // Count the spans: a table per thread over its shard of sentences, merged in order.
  const IdStream& stream = prepared.stream;
  std::vector<PairCounts> pairs(static_cast<std::size_t>(threads));
  std::vector<SpanTable> spans(static_cast<std::size_t>(threads));
  std::vector<char> whole(static_cast<std::size_t>(threads), 0);
  // A shard alone past the limit: the whole is too (its unigrams aside).
  const std::size_t limit = static_cast<std::size_t>(options.maxVocab) -
                            std::min(unigrams, static_cast<std::size_t>(options.maxVocab));
  detail::ParallelErrors errors;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int k = 0; k < threads; ++k)
    errors.run([&] {
      const auto [begin, end] = stream.shard(k, threads);
      const auto at = static_cast<std::size_t>(k);
      whole[at] =
          countSpans(stream, begin, end, flags, options.scoring == PhraseScoring::Word2phrase,
                     limit, pairs[at], spans[at]);
    });
  errors.rethrow();
  // More keys than the limit: gensim's pass pruned on the way, in sentence order.
  if (std::count(whole.begin(), whole.end(), 0) > 0) return viaStrings();
  for (std::size_t k = 1; k < spans.size(); ++k) {
    pairs[0].merge(pairs[k]);
    pairs[k] = PairCounts();
    spans[k].forEach([&](std::int32_t a, const std::int32_t* mid, std::uint32_t n, std::int32_t b,
                         std::int64_t c) { spans[0].at(a, mid, n, b) += c; });
    spans[k] = SpanTable();
  }
  const std::size_t keys = unigrams + pairs[0].size() + spans[0].size();
  // More keys than the limit: gensim's pass pruned on the way, in sentence order.
  if (keys > static_cast<std::size_t>(options.maxVocab)) return viaStrings();

  // Score every span; the phrases, numbered for the rewriting.
  std::vector<FoundPhrase> found;
  std::vector<std::uint64_t> foundPairs;
  SpanTable phraseSpans;
  const auto score = [&](std::int32_t a, const std::int32_t* mid, std::uint32_t n, std::int32_t b,
                         std::int64_t c) {
    const double s =
        detail::phraseScore(options, words.count(a), words.count(b), c, keys, prepared.tokens);
    if (!(s > options.threshold)) return;
    std::string phrase = words.word(a);
    for (std::uint32_t j = 0; j < n; ++j)
      phrase.append(options.delimiter).append(words.word(mid[j]));
    phrase.append(options.delimiter).append(words.word(b));
    found.push_back(FoundPhrase{std::move(phrase), s, c});
    if (n == 0) {
      foundPairs.push_back(pairKey(a, b));
      flags[static_cast<std::size_t>(a)] |= kStartsPair;
    } else
      phraseSpans.at(a, mid, n, b) = static_cast<std::int64_t>(found.size());
  };
  pairs[0].forEach([&](std::uint64_t key, std::int64_t c) {
    score(static_cast<std::int32_t>(key >> 32), nullptr, 0,
          static_cast<std::int32_t>(key & 0xFFFFFFFFu), c);
  });
  spans[0].forEach(score);
  pairs.clear();
  spans.clear();
  TokenText tokens;
  for (const std::string& w : words.words()) tokens.add(w);
  for (const FoundPhrase& f : found) tokens.add(f.phrase);
  tokens.finish();
  // The pairs were scored first: the i-th pair phrase is found[i].
  PairTable phrasePairs(foundPairs.size());
  PairFilter pairFilter;
  for (std::size_t i = 0; i < foundPairs.size(); ++i) {
    const std::uint64_t hash = mix64(foundPairs[i]);
    phrasePairs.at(foundPairs[i], hash) = static_cast<std::int64_t>(i + 1);
    pairFilter.add(hash);
  }
  // Rewrite: blocks of about a million ids, a round of one block a thread at a time,
  // written in corpus order.
  const std::int64_t blocks =
      std::max<std::int64_t>(threads, (stream.size() + (1 << 20) - 1) >> 20);
  std::vector<TextOut> text(static_cast<std::size_t>(threads));
  for (std::int64_t first = 0; first < blocks; first += threads) {
    const int round = static_cast<int>(std::min<std::int64_t>(threads, blocks - first));
#pragma omp parallel for num_threads(round) schedule(static, 1)
    for (int k = 0; k < round; ++k)
      errors.run([&] {
        TextOut& t = text[static_cast<std::size_t>(k)];
        t.clear();
        const auto [begin, end] =
            stream.shard(static_cast<int>(first + k), static_cast<int>(blocks));
        joinSpans(stream, begin, end, flags, tokens, pairFilter, phrasePairs, phraseSpans, t);
      });
    errors.rethrow();
    for (int k = 0; k < round; ++k) {
      const std::string_view t = text[static_cast<std::size_t>(k)].text();
      out.write(t.data(), static_cast<std::streamsize>(t.size()));
    }
  }

  std::sort(found.begin(), found.end(), [](const FoundPhrase& x, const FoundPhrase& y) {
    return x.score != y.score ? x.score > y.score : x.phrase < y.phrase;
  });
  return frozen(std::move(options), found, prepared.tokens, keys);
}

}  // namespace posvec
