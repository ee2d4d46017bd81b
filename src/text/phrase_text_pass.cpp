// Phrases::findAndJoin for pre-tokenized files: the pass reads the text itself, twice,
// and keeps no id stream. The first read counts: each thread takes a byte range of the
// files cut at line starts, splits its words, numbers them in a table of its own and
// counts the spans "start (connectors) end" in tables of those numbers; the tables are
// merged into one numbering and scored (phrase_pass.cpp's scoreSpans). The second read
// rewrites: blocks of about a megabyte, cut at line starts, are split again, each word
// looked up in the merged table and joined by SpanJoiner, and written in corpus order.
// Each word is scanned once a read, and nothing but the tables grows with the corpus.
//
// The counts are those of the id pass and of gensim's (a sum over sentences does not
// depend on where the ranges are cut); what this reader does not reproduce goes back to
// the caller: a word longer than kMaxWordBytes or not valid UTF-8 (the general reader
// cuts, replaces or reports it with its line), and counts that gensim would have pruned
// or words holding a byte of the delimiter (the string path).
#include <fcntl.h>
#include <immintrin.h>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ostream>
#include <unordered_set>

#include "corpus_detail.hpp"
#include "input.hpp"
#include "parallel.hpp"
#include "phrase_tables.hpp"
#include "posvec/error.hpp"
#include "posvec/tokenizer.hpp"
#include "utf8.hpp"

namespace posvec::detail {
namespace phrase_text {  // named: the library builds as one unit per stage
namespace {

constexpr std::size_t kSlack = kMaxWordBytes + 1 + 64;  // a carried word, 32-byte loads past it

// The six ASCII whitespace bytes (ascii_space.hpp) as a table.
constexpr std::array<bool, 256> kSpace = [] {
  std::array<bool, 256> t{};
  for (const char c : {' ', '\t', '\n', '\v', '\f', '\r'}) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

std::uint64_t load8(const char* p) {
  std::uint64_t x;
  std::memcpy(&x, p, 8);
  return x;
}

// The first min(n, 8) bytes of a word, the rest zero: with its length, the whole of a word
// of up to 8 bytes. `p` must have 8 readable bytes.
std::uint64_t prefixOf(const char* p, std::size_t n) {
  const std::uint64_t x = load8(p);
  return n >= 8 ? x : x & ((std::uint64_t{1} << (8 * n)) - 1);
}

// The word's hash, whose high bits are the table's index (Fibonacci hashing); `p` must
// have readable bytes up to the next multiple of 8 past n.
std::uint64_t hashOf(const char* p, std::size_t n, std::uint64_t prefix) {
  std::uint64_t h = prefix ^ n;
  for (std::size_t i = 8; i < n; i += 8)
    h = (h * 0xbf58476d1ce4e5b9ULL) ^ (h >> 31) ^ prefixOf(p + i, n - i);
  return h * 0x9e3779b97f4a7c15ULL;
}

// The length of the word at `p` (its bytes up to the first ASCII whitespace byte, which
// must come), and whether a byte of it is above 0x7F. Reads 32 bytes at a time.
std::size_t wordLength(const char* p, bool& high) {
#ifdef __AVX2__
  std::size_t n = 0;
  unsigned top = 0;
  for (;;) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + n));
    const __m256i t = _mm256_sub_epi8(v, _mm256_set1_epi8(9));  // \t \n \v \f \r: 0 to 4
    const __m256i space =
        _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(' ')),
                        _mm256_cmpeq_epi8(_mm256_min_epu8(t, _mm256_set1_epi8(4)), t));
    const auto spaces = static_cast<std::uint32_t>(_mm256_movemask_epi8(space));
    const auto highs = static_cast<std::uint32_t>(_mm256_movemask_epi8(v));
    if (spaces != 0) {
      const unsigned len = static_cast<unsigned>(__builtin_ctz(spaces));
      top |= highs & ((std::uint32_t{1} << len) - 1);
      high = top != 0;
      return n + len;
    }
    top |= highs;
    n += 32;
  }
#else
  std::size_t n = 0;
  unsigned top = 0;
  while (!kSpace[static_cast<unsigned char>(p[n])]) top |= static_cast<unsigned char>(p[n++]);
  high = (top & 0x80) != 0;
  return n;
#endif
}

// Words numbered 0, 1, ... in the order first seen: open addressing over 16-byte slots
// (a word's first 8 bytes, its length, its number), the words' bytes in an arena (with
// 8 bytes of slack after each word, for hashOf).
class WordTable {
 public:
  WordTable() : slots_(std::size_t{1} << kFirstBits), mask_(slots_.size() - 1) {}

  // The word's number, inserted when absent (then `added` is set).
  [[gnu::always_inline]] std::int32_t add(const char* p, std::size_t n, bool& added) {
    const std::uint64_t prefix = prefixOf(p, n);
    for (std::size_t i = hashOf(p, n, prefix) >> shift_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.prefix == prefix && s.len == n && (n <= 8 || same(s, p, n))) {
        added = false;
        return s.id;
      }
      if (s.id < 0) {
        added = true;
        return insert(i, p, n, prefix);
      }
    }
  }
  // The word's number; -1 when absent.
  std::int32_t find(const char* p, std::size_t n) const {
    const std::uint64_t prefix = prefixOf(p, n);
    for (std::size_t i = hashOf(p, n, prefix) >> shift_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.prefix == prefix && s.len == n && (n <= 8 || same(s, p, n))) return s.id;
      if (s.id < 0) return -1;
    }
  }
  std::size_t size() const { return size_; }
  std::string_view word(std::size_t id) const {
    const std::size_t end = id + 1 < size_ ? at_[id + 1] - 8 : arena_.size() - 8;
    return std::string_view(arena_).substr(at_[id], end - at_[id]);
  }

 private:
  static constexpr int kFirstBits = 16;
  struct Slot {
    std::uint64_t prefix = 0;
    std::uint32_t len = 0;  // 0: unused (no word is empty)
    std::int32_t id = -1;
  };
  [[gnu::noinline]] std::int32_t insert(std::size_t i, const char* p, std::size_t n,
                                        std::uint64_t prefix) {
    const auto id = static_cast<std::int32_t>(size_++);
    slots_[i] = Slot{prefix, static_cast<std::uint32_t>(n), id};
    at_.push_back(arena_.size());
    arena_.append(p, n);
    arena_.append(8, '\0');
    if (size_ * 2 > slots_.size()) grow();
    return id;
  }
  // The bytes past the first 8 (equal) of a word of n > 8 bytes, 8 at a time.
  bool same(const Slot& s, const char* p, std::size_t n) const {
    const char* q = arena_.data() + at_[static_cast<std::size_t>(s.id)];
    for (std::size_t i = 8; i < n; i += 8)
      if (prefixOf(p + i, n - i) != prefixOf(q + i, n - i)) return false;
    return true;
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    --shift_;
    for (const Slot& s : old) {
      if (s.id < 0) continue;
      const char* p = arena_.data() + at_[static_cast<std::size_t>(s.id)];
      std::size_t i = hashOf(p, s.len, s.prefix) >> shift_;
      while (slots_[i].id >= 0) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_, size_ = 0;
  int shift_ = 64 - kFirstBits;
  std::vector<std::uint64_t> at_;  // word i starts at arena_[at_[i]]
  std::string arena_;
};

// An input file, open, with its size and time of change when the pass began.
struct TextFile {
  std::string path;
  std::unique_ptr<Fd> fd;
  std::int64_t size = 0;
  struct timespec changed {};
};

// Bytes [begin, end) of one file.
struct Segment {
  std::size_t file;
  std::int64_t begin, end;
};

// The files as one byte stream, cut into `n` pieces at line starts (pieces may be empty).
std::vector<std::vector<Segment>> cutAtLines(const std::vector<TextFile>& files, std::int64_t n) {
  std::vector<std::int64_t> fileStart{0};
  for (const TextFile& f : files) fileStart.push_back(fileStart.back() + f.size);
  const std::int64_t total = fileStart.back();
  std::vector<std::int64_t> cuts{0};
  for (std::int64_t j = 1; j < n; ++j) {
    const std::int64_t target = total / n * j + total % n * j / n;  // total * j may overflow
    const auto f = static_cast<std::size_t>(
        std::upper_bound(fileStart.begin(), fileStart.end(), target) - fileStart.begin() - 1);
    std::int64_t cut = total;
    if (f < files.size())
      cut = fileStart[f] +
            nextLineStart(files[f].fd->get(), target - fileStart[f], files[f].size, files[f].path);
    cuts.push_back(std::max(cuts.back(), cut));
  }
  cuts.push_back(total);
  std::vector<std::vector<Segment>> pieces(static_cast<std::size_t>(n));
  for (std::size_t j = 0; j + 1 < cuts.size(); ++j)
    for (std::size_t f = 0; f < files.size(); ++f) {
      const std::int64_t begin = std::max(cuts[j], fileStart[f]),
                         end = std::min(cuts[j + 1], fileStart[f + 1]);
      if (begin < end) pieces[j].push_back({f, begin - fileStart[f], end - fileStart[f]});
    }
  return pieces;
}

// Splits bytes [begin, end) of `file` into words as the pre-tokenized reader does (a
// line a sentence, words between ASCII whitespace): word(p, n) for each word, line()
// after each line that had words (a line the range ends inside ends there), keep() before
// the bytes of the words handed on change. False, at
// once, for a word the general reader would treat otherwise: longer than kMaxWordBytes,
// or not valid UTF-8. `buf`: `block` + kSlack bytes, `block` read at a time.
template <typename Word, typename Line, typename Keep>
bool scanSegment(const TextFile& file, std::int64_t begin, std::int64_t end, char* buf,
                 std::size_t block, Word&& word, Line&& line, Keep&& keep) {
  std::size_t have = 0;  // bytes of an unfinished word at the front of buf
  bool lineOpen = false;
  for (std::int64_t pos = begin; pos < end;) {
    const auto want = static_cast<std::size_t>(
        std::min<std::int64_t>(end - pos, static_cast<std::int64_t>(block)));
    const std::size_t got = readAt(file.fd->get(), buf + have, want, pos, file.path, file.size);
    pos += static_cast<std::int64_t>(got);
    const std::size_t n = have + got;
    // Words up to the last whitespace byte now; the rest once the next bytes are read.
    std::size_t cut = n;
    if (pos < end) {
      while (cut > 0 && !kSpace[static_cast<unsigned char>(buf[cut - 1])]) --cut;
      if (n - cut > kMaxWordBytes) return false;
    }
    const char saved = buf[cut];
    buf[cut] = ' ';  // stops the word loop below without a bound check
    for (std::size_t i = 0; i < cut;) {
      const auto c = static_cast<unsigned char>(buf[i]);
      if (kSpace[c]) {
        if (c == '\n' && lineOpen) {
          line();
          lineOpen = false;
        }
        ++i;
        continue;
      }
      bool high;
      const std::size_t len = wordLength(buf + i, high);
      if (len > kMaxWordBytes) return false;
      if (high && !isValidUtf8(std::string_view(buf + i, len))) return false;
      word(buf + i, len);
      lineOpen = true;
      i += len;
    }
    buf[cut] = saved;
    keep();  // the words' bytes move, or are read over
    have = n - cut;
    std::memmove(buf, buf + cut, have);
  }
  if (lineOpen) line();
  return true;
}

// One thread's share of the first read: its words numbered in its own table, their
// counts, and the spans counted in those numbers.
struct ShareCounts {
  WordTable words;
  std::vector<std::int64_t> counts;
  std::vector<char> flags;
  std::size_t unigrams = 0;  // non-connector words
  PairCounts pairs;
  SpanTable spans;
  std::int64_t tokens = 0;
  std::int32_t first = -1, last = -1;  // word2phrase's counting: the share's first and last word
};

enum class Outcome { Counted, General, Strings };

// gensim's learn_vocab over one share (countSpans in phrase_pass.cpp, on the text).
Outcome countShare(const std::vector<TextFile>& files, const std::vector<Segment>& share,
                   const std::unordered_set<std::string_view>& connectors, bool carry,
                   std::size_t maxKeys, std::size_t block, ShareCounts& c) {
  std::vector<char> buffer(block + kSlack);
  std::int32_t start = -1;
  std::vector<std::int32_t> between;
  bool tooMany = false;
  const auto word = [&](const char* p, std::size_t n) {
    bool added;
    const std::int32_t id = c.words.add(p, n, added);
    if (added) {
      const bool connector = connectors.count(std::string_view(p, n)) > 0;
      c.counts.push_back(0);
      c.flags.push_back(connector ? kConnector : 0);
      c.unigrams += connector ? 0 : 1;
    }
    ++c.counts[static_cast<std::size_t>(id)];
    if (++c.tokens % 65536 == 0 &&
        (c.words.size() > 20'000'000 || c.unigrams + c.pairs.size() + c.spans.size() > maxKeys))
      tooMany = true;
    if (c.flags[static_cast<std::size_t>(id)] & kConnector) {
      if (start >= 0) between.push_back(id);
      return;
    }
    if (start >= 0) {
      if (between.empty())
        c.pairs.add(pairKey(start, id));
      else
        ++c.spans.at(start, between.data(), static_cast<std::uint32_t>(between.size()), id);
    } else if (c.first < 0) {
      c.first = id;
    }
    start = id;
    c.last = id;
    between.clear();
  };
  const auto line = [&] {
    if (!carry) start = -1;
    between.clear();
  };
  for (const Segment& s : share) {
    if (!scanSegment(files[s.file], s.begin, s.end, buffer.data(), block, word, line, [] {}))
      return Outcome::General;
    if (tooMany) return Outcome::Strings;
  }
  c.pairs.finish();
  return Outcome::Counted;
}

}  // namespace
}  // namespace phrase_text

std::optional<Phrases> findAndJoinText(const CorpusSource& corpus, const PhraseOptions& options,
                                       int threads, std::ostream& out, bool& viaStrings,
                                       std::size_t block) {
  using namespace phrase_text;
  viaStrings = false;
  if (!splittableCorpus(corpus)) return std::nullopt;
  std::vector<TextFile> files;
  for (const std::string& path : corpus.paths()) {
    TextFile f;
    f.path = path;
    f.fd = std::make_unique<Fd>(path);
    struct stat st {};
    if (::fstat(f.fd->get(), &st) != 0)
      throw IoError("cannot read '" + path + "': " + std::strerror(errno));
    f.size = st.st_size;
    f.changed = st.st_mtim;
    if (f.size > 0) files.push_back(std::move(f));
  }
  if (files.empty()) return std::nullopt;  // the general pass says the corpus is empty

  // First read: counts a share a thread.
  const std::unordered_set<std::string_view> connectors(options.connectorWords.begin(),
                                                        options.connectorWords.end());
  const bool carry = options.scoring == PhraseScoring::Word2phrase;
  const auto maxKeys = static_cast<std::size_t>(options.maxVocab);
  const std::vector<std::vector<Segment>> shares = cutAtLines(files, threads);
  std::vector<ShareCounts> counted(static_cast<std::size_t>(threads));
  std::vector<Outcome> outcome(static_cast<std::size_t>(threads), Outcome::Counted);
  ParallelErrors errors;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int k = 0; k < threads; ++k)
    errors.run([&] {
      const auto at = static_cast<std::size_t>(k);
      outcome[at] = countShare(files, shares[at], connectors, carry, maxKeys, block, counted[at]);
    });
  errors.rethrow();
  for (const Outcome o : outcome)
    if (o == Outcome::General) return std::nullopt;
  for (const Outcome o : outcome)
    if (o == Outcome::Strings) {
      viaStrings = true;
      return std::nullopt;
    }

  // One numbering: share 0's, then each later share's new words.
  ShareCounts& all = counted[0];
  std::int64_t tokens = all.tokens;
  std::int32_t last = all.last;
  for (std::size_t k = 1; k < counted.size(); ++k) {
    ShareCounts& c = counted[k];
    std::vector<std::int32_t> map(c.words.size());
    for (std::size_t w = 0; w < c.words.size(); ++w) {
      const std::string_view text = c.words.word(w);
      bool added;
      const std::int32_t id = all.words.add(text.data(), text.size(), added);
      if (added) {
        all.counts.push_back(0);
        all.flags.push_back(c.flags[w]);
        all.unigrams += c.flags[w] & kConnector ? 0 : 1;
      }
      all.counts[static_cast<std::size_t>(id)] += c.counts[w];
      map[w] = id;
    }

    all.pairs.mergeMapped(c.pairs, map);
    std::vector<std::int32_t> mid;
    c.spans.forEach([&](std::int32_t a, const std::int32_t* m, std::uint32_t n, std::int32_t b,
                        std::int64_t x) {
      mid.assign(m, m + n);
      for (auto& id : mid) id = map[static_cast<std::size_t>(id)];
      all.spans.at(map[static_cast<std::size_t>(a)], mid.data(), n,
                   map[static_cast<std::size_t>(b)]) += x;
    });
    // word2phrase's counting pairs a share's first word with the last word before it.
    if (c.first >= 0) {
      if (carry && last >= 0)
        all.pairs.add(pairKey(last, map[static_cast<std::size_t>(c.first)]), 1);
      last = map[static_cast<std::size_t>(c.last)];
    }
    tokens += c.tokens;
    c = ShareCounts();
    // More keys than the limit (or words than the reader keeps apart): the string path.
    if (all.words.size() > 20'000'000 ||
        all.unigrams + all.pairs.size() + all.spans.size() > maxKeys) {
      viaStrings = true;
      return std::nullopt;
    }
  }
  if (tokens == 0) return std::nullopt;  // the general pass says the corpus has no words
  const std::size_t words = all.words.size();
  std::vector<std::string_view> text(words);
  for (std::size_t w = 0; w < words; ++w) {
    text[w] = all.words.word(w);
    // A word holding a byte of the delimiter may join to another span's string.
    if (text[w].find_first_of(options.delimiter) != std::string_view::npos) {
      viaStrings = true;
      return std::nullopt;
    }
  }
  const std::size_t keys = all.unigrams + all.pairs.size() + all.spans.size();
  // More keys than the limit: gensim's pass pruned on the way, in sentence order.
  if (keys > maxKeys) {
    viaStrings = true;
    return std::nullopt;
  }
  PhraseIndex index =
      scoreSpans(options, all.pairs, all.spans, text, all.counts, keys, tokens, all.flags);

  all.pairs = PairCounts();
  all.spans = SpanTable();

  // Second read: blocks of about a megabyte, taken by the threads in turn and written in
  // corpus order (one thread writes while the next splits and joins).
  std::int64_t total = 0;
  for (const TextFile& f : files) total += f.size;
  const std::vector<std::vector<Segment>> blocks =
      cutAtLines(files, std::max<std::int64_t>(threads, total / static_cast<std::int64_t>(block)));
  std::vector<TextOut> texts(static_cast<std::size_t>(threads));
  std::vector<std::vector<char>> buffers(static_cast<std::size_t>(threads));
  const auto blockCount = static_cast<std::int64_t>(blocks.size());
#pragma omp parallel for ordered num_threads(threads) schedule(static, 1)
  for (std::int64_t b = 0; b < blockCount; ++b) {
    const auto me = static_cast<std::size_t>(omp_get_thread_num());
    TextOut& t = texts[me];
    errors.run([&] {
      t.clear();
      if (errors.failed()) return;
      std::vector<char>& buf = buffers[me];
      if (buf.empty()) buf.resize(block + kSlack);
      SpanJoiner joiner(all.flags, index, t);
      for (const Segment& s : blocks[static_cast<std::size_t>(b)]) {
        const TextFile& f = files[s.file];
        const auto word = [&](const char* p, std::size_t n) {
          const std::int32_t id = all.words.find(p, n);
          if (id < 0) throwChangedWhileReading(f.path, f.fd->get(), f.size);  // a new word
          joiner.word(id, p, static_cast<std::uint32_t>(n));
        };
        if (!scanSegment(
                f, s.begin, s.end, buf.data(), block, word, [&] { joiner.end(); },
                [&] { joiner.keep(); }))
          throwChangedWhileReading(f.path, f.fd->get(), f.size);  // read whole the first time
      }
    });
#pragma omp ordered
    if (!errors.failed()) out.write(t.text().data(), static_cast<std::streamsize>(t.text().size()));
  }
  errors.rethrow();
  for (const TextFile& f : files) {
    struct stat st {};
    if (::fstat(f.fd->get(), &st) != 0 || st.st_size != f.size ||
        st.st_mtim.tv_sec != f.changed.tv_sec || st.st_mtim.tv_nsec != f.changed.tv_nsec)
      throwChangedWhileReading(f.path, f.fd->get(), f.size);
  }
  return Phrases::frozen(options, index.found, tokens, keys);
}

}  // namespace posvec::detail
