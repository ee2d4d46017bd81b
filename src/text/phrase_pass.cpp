// Phrases::findAndJoin: gensim's counting, scoring and rewriting (phrases.cpp) over word
// ids instead of joined strings. Pre-tokenized files go to the text pass
// (phrase_text_pass.cpp), which reads them twice and keeps no ids. Other input is read
// once, by the counting pass training uses (prepareCorpus: the same words and
// sentences, bit for bit at any thread count);
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
#include "phrase_tables.hpp"
#include "posvec/phrases.hpp"

namespace posvec {

namespace detail {

PhraseIndex scoreSpans(const PhraseOptions& options, const PairCounts& pairs,
                       const SpanTable& spans, const std::vector<std::string_view>& words,
                       const std::vector<std::int64_t>& counts, std::size_t keys,
                       std::int64_t tokens, std::vector<char>& flags) {
  // Every span that scores above the threshold, numbered: two-word spans first (the
  // i-th of them is found[i]), then the spans with connector words.
  PhraseIndex index;
  std::vector<std::uint64_t> foundPairs;
  const auto score = [&](std::int32_t a, const std::int32_t* mid, std::uint32_t n, std::int32_t b,
                         std::int64_t c) {
    const double s = phraseScore(options, counts[static_cast<std::size_t>(a)],
                                 counts[static_cast<std::size_t>(b)], c, keys, tokens);
    if (!(s > options.threshold)) return;
    std::string phrase(words[static_cast<std::size_t>(a)]);
    for (std::uint32_t j = 0; j < n; ++j)
      phrase.append(options.delimiter).append(words[static_cast<std::size_t>(mid[j])]);
    phrase.append(options.delimiter).append(words[static_cast<std::size_t>(b)]);
    index.found.push_back(FoundPhrase{std::move(phrase), s, c});
    if (n == 0) {
      foundPairs.push_back(pairKey(a, b));
      flags[static_cast<std::size_t>(a)] |= kStartsPair;
    } else {
      index.spans.at(a, mid, n, b) = static_cast<std::int64_t>(index.found.size());
    }
  };
  pairs.forEach([&](std::uint64_t key, std::int64_t c) {
    score(static_cast<std::int32_t>(key >> 32), nullptr, 0,
          static_cast<std::int32_t>(key & 0xFFFFFFFFu), c);
  });
  spans.forEach(score);
  index.pairs = PairTable(foundPairs.size());
  for (std::size_t i = 0; i < foundPairs.size(); ++i) {
    const std::uint64_t hash = mix64(foundPairs[i]);
    index.pairs.at(foundPairs[i], hash) = static_cast<std::int64_t>(i + 1);
    index.pairFilter.add(hash);
  }
  for (const FoundPhrase& f : index.found) index.text.add(f.phrase);
  index.text.finish();
  return index;
}

}  // namespace detail

PhraseMemoryBound phraseMemoryBound(const PhraseOptions& options) {
  options.validate();
  PhraseMemoryBound b;
  b.threads = detail::resolveThreads(options.threads);
  // A span with connector words: a 32-byte slot at a quarter of its table's load after a
  // grow, its connector ids; a word: a 16-byte slot likewise, its bytes and 8 of slack, its
  // count and place; a key of the string path: a 32-byte slot likewise and its bytes.
  b.keyBytes = 160;
  const auto threads = static_cast<std::uint64_t>(b.threads);
  b.counts = (threads + 1) * static_cast<std::uint64_t>(options.maxVocab) * b.keyBytes;
  // Reading (a block and a word's slack), counting pairs (256 buffers of 4,096 keys),
  // writing (a block of text, up to twice its size).
  b.buffers = threads * ((detail::kTextBlock + 2048) + 256 * 4096 * 8 + 2 * detail::kTextBlock);
  return b;
}

namespace {

using namespace detail;

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

// Phrases::apply on ids, appending each sentence of [begin, end) as a line of text.
void joinSpans(const IdStream& stream, std::int64_t begin, std::int64_t end,
               const std::vector<char>& flags, const TokenText& words, const PhraseIndex& index,
               TextOut& text) {
  SpanJoiner joiner(flags, index, text);
  forEachId(stream, begin, end, [&](std::int32_t id) {
    if (id == IdStream::kEnd) {
      joiner.end();
    } else {
      const auto w = static_cast<std::size_t>(id);
      joiner.word(id, words.data(w), words.size(w));
    }
  });
}

}  // namespace

Phrases Phrases::findAndJoin(const CorpusSource& corpus, PhraseOptions options,
                             std::ostream& sink) {
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
      if (!line.empty()) sink << line << '\n';
    });
    return counting.freeze();
  };

  bool strings = false;
  if (std::optional<Phrases> done = findAndJoinText(corpus, options, threads, sink, strings))
    return std::move(*done);
  if (strings) return viaStrings();
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

  std::vector<std::string_view> text(words.size());
  std::vector<std::int64_t> counts(words.size());
  for (std::size_t w = 0; w < words.size(); ++w) {
    text[w] = words.words()[w];
    counts[w] = words.count(static_cast<WordId>(w));
  }
  PhraseIndex index =
      scoreSpans(options, pairs[0], spans[0], text, counts, keys, prepared.tokens, flags);
  pairs.clear();
  spans.clear();
  TokenText tokens;
  for (const std::string_view w : text) tokens.add(w);
  tokens.finish();
  // Rewrite: blocks of 256k ids, their text written while still in cache; the threads
  // take them in turn and write them in corpus order (one writes while the next builds).
  const std::int64_t blocks =
      std::max<std::int64_t>(threads, (stream.size() + (1 << 18) - 1) >> 18);
  std::vector<TextOut> out(static_cast<std::size_t>(threads));
#pragma omp parallel for ordered num_threads(threads) schedule(static, 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    TextOut& t = out[static_cast<std::size_t>(omp_get_thread_num())];
    errors.run([&] {
      t.clear();
      if (errors.failed()) return;
      const auto [begin, end] = stream.shard(static_cast<int>(b), static_cast<int>(blocks));
      joinSpans(stream, begin, end, flags, tokens, index, t);
    });
#pragma omp ordered
    if (!errors.failed())
      sink.write(t.text().data(), static_cast<std::streamsize>(t.text().size()));
  }
  errors.rethrow();

  return frozen(std::move(options), index.found, prepared.tokens, keys);
}

}  // namespace posvec
