#include "posvec/corpus.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "corpus_detail.hpp"
#include "posvec/error.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {

// The token stream as one list, "|" standing for each sentence end.
std::vector<std::string> tokensOf(const CorpusSource& corpus) {
  std::vector<std::string> out;
  detail::forEachToken(
      corpus, [&](std::string_view w) { out.emplace_back(w); }, [&] { out.emplace_back("|"); });
  return out;
}

using Tokens = std::vector<std::string>;

}  // namespace

TEST_CASE("corpus source: describes files or sentences", "[corpus]") {
  CHECK_THROWS_AS(CorpusSource::fromFiles({}), InputError);
  const CorpusSource files = CorpusSource::fromFiles({"a.txt", "b.txt"}, true);
  CHECK_FALSE(files.inMemory());
  CHECK(files.pretokenized());
  CHECK(files.paths() == std::vector<std::string>{"a.txt", "b.txt"});
  const CorpusSource mem = CorpusSource::fromSentences({{"x", "y"}, {"z"}});
  CHECK(mem.inMemory());
  CHECK(mem.sentences().size() == 2);
}

TEST_CASE("corpus: pre-tokenized lines split on ASCII whitespace, one sentence a line",
          "[corpus]") {
  test::TempDir dir;
  const std::string path = dir.file("c.txt");
  // CRLF ends, tabs, a blank line (no sentence), padded words, no final newline.
  test::writeText(path, "a b\tc\r\n\n  d  \ne");
  CHECK(tokensOf(CorpusSource::fromFiles({path}, true)) ==
        Tokens{"a", "b", "c", "|", "d", "|", "e", "|"});
  // A non-breaking space (U+00A0) is not ASCII whitespace: it stays inside the word.
  test::writeText(path, "x\xc2\xa0y z\n");
  CHECK(tokensOf(CorpusSource::fromFiles({path}, true)) == Tokens{"x\xc2\xa0y", "z", "|"});
}

TEST_CASE("corpus: a pre-tokenized word across the 1 MiB read block stays whole", "[corpus]") {
  test::TempDir dir;
  const std::string path = dir.file("c.txt");
  // The reader takes 1 MiB blocks: "bcdef" starts 2 bytes before the first block ends
  // (spaces fill the block: a word keeps at most kMaxWordBytes).
  const std::size_t block = std::size_t{1} << 20;
  const std::string first = "x" + std::string(block - 4, ' ');
  test::writeText(path, first + " bcdef\ng\n");
  CHECK(tokensOf(CorpusSource::fromFiles({path}, true)) == Tokens{"x", "bcdef", "|", "g", "|"});
}

TEST_CASE("corpus: raw text goes through the tokenizer, several files in order", "[corpus]") {
  test::TempDir dir;
  test::writeText(dir.file("1.txt"), "The cat sat. A dog ran!\n");
  test::writeText(dir.file("2.txt"), "Birds fly.");
  const CorpusSource raw = CorpusSource::fromFiles({dir.file("1.txt"), dir.file("2.txt")});
  CHECK(tokensOf(raw) == Tokens{"the", "cat", "sat", ".", "|", "a", "dog", "ran", "!", "|", "birds",
                                "fly", ".", "|"});
  TokenizerOptions keep;
  keep.lowercase = false;
  CHECK(tokensOf(CorpusSource::fromFiles({dir.file("2.txt")}, false, keep)) ==
        Tokens{"Birds", "fly", ".", "|"});
}

TEST_CASE("corpus: counting pass builds vocabulary and id stream", "[corpus]") {
  // a: 3, b: 2, c: 1. With min-count 2, c goes, and its sentence becomes empty and is dropped.
  const CorpusSource corpus = CorpusSource::fromSentences({{"a", "b", "a"}, {"c"}, {"a", "b"}});
  const detail::PreparedCorpus p = detail::prepareCorpus(corpus, 2, 0);
  CHECK(p.vocabulary.words() == std::vector<std::string>{"a", "b"});
  CHECK(p.vocabulary.counts() == std::vector<std::int64_t>{3, 2});
  CHECK(p.tokens == 6);
  CHECK(p.distinctWords == 3);
  CHECK(p.stream.words() == 5);
  const std::int32_t E = detail::IdStream::kEnd;
  const std::vector<std::int32_t> want{0, 1, 0, E, 0, 1, E};
  std::vector<std::int32_t> got(want.size() + 4, 99);
  REQUIRE(p.stream.read(0, got.data(), got.size()) == want.size());
  got.resize(want.size());
  CHECK(got == want);

  // Resuming: a fixed vocabulary, other words skipped.
  const Vocabulary fixed({"b", "c"}, {5, 4});
  const detail::PreparedCorpus r = detail::prepareCorpus(corpus, fixed);
  CHECK(r.tokens == 6);
  CHECK(r.stream.words() == 3);  // b, c, b
  CHECK_THROWS_AS(detail::prepareCorpus(CorpusSource::fromSentences({{"zzz"}}), fixed), InputError);
  CHECK_THROWS_AS(detail::prepareCorpus(CorpusSource::fromSentences({{}, {}}), 1, 0), InputError);
}

TEST_CASE("corpus: shards start at sentence starts, in memory and on disk alike", "[corpus]") {
  for (const bool inMemory : {true, false}) {
    INFO("in memory: " << inMemory);
    // 100 sentences of 9 words: each takes 10 ids with its end marker, 1000 in all.
    detail::IdStream s(inMemory);
    std::vector<WordId> identity(9);
    for (int i = 0; i < 9; ++i) identity[static_cast<std::size_t>(i)] = i;
    for (int k = 0; k < 100; ++k) {
      for (int w = 0; w < 9; ++w) s.push(w);
      s.push(detail::IdStream::kEnd);
    }
    s.remap(identity);
    CHECK(s.size() == 1000);
    CHECK(s.words() == 900);
    // A shard point is recorded at the first sentence end at least 64 ids after the
    // last one (64 is the smallest step): every 70 ids. Half of 1000 is 500, and the
    // first shard point at or after it is 560.
    CHECK(s.shard(0, 1) == std::pair<std::int64_t, std::int64_t>{0, 1000});
    CHECK(s.shard(0, 2) == std::pair<std::int64_t, std::int64_t>{0, 560});
    CHECK(s.shard(1, 2) == std::pair<std::int64_t, std::int64_t>{560, 1000});
    // Four shards: targets 250, 500, 750 -> 280, 560, 770.
    CHECK(s.shard(1, 4) == std::pair<std::int64_t, std::int64_t>{280, 560});
    CHECK(s.shard(3, 4) == std::pair<std::int64_t, std::int64_t>{770, 1000});
    // Reading a shard gives whole sentences: (1000 - 560) / 10 = 44 of them.
    const auto [b, e] = s.shard(1, 2);
    detail::ShardReader reader(s, b, e);
    std::vector<std::int32_t> sentence;
    int sentences = 0;
    while (reader.next(sentence)) {
      ++sentences;
      CHECK(sentence == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8});
      sentence.clear();
    }
    CHECK(sentences == 44);
  }
}

TEST_CASE("corpus finds invalid UTF-8 in pre-tokenized files while counting, with line and offset",
          "[corpus]") {
  test::TempDir dir;
  // Line 3, the bad byte at offset 9 + 9 + 6 = 24 ("ok words\n" "new line\n" "fine b").
  const std::string path = dir.file("bad.txt");
  test::writeText(path,
                  "ok words\nnew line\nfine b\x97"
                  "d end\nmore\n");
  const auto corpus = CorpusSource::fromFiles({path}, true);
  int words = 0;
  try {
    detail::forEachToken(
        corpus, [&](std::string_view) { ++words; }, [] {});
    FAIL("no error for invalid UTF-8");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CHECK(m.find("line 3") != std::string::npos);
    CHECK(m.find("byte offset 24") != std::string::npos);
    CHECK(m.find("\\x97") != std::string::npos);
    CHECK(m.find("replace bad bytes with U+FFFD: the replace-invalid option") != std::string::npos);
    REQUIRE(e.mentions().size() == 1);
    CHECK(e.mentions()[0].setting == "replaceInvalid");
  }
  CHECK(words == 5);  // "ok words new line fine": the counting pass stopped at the bad word

  // The bad byte as the tail of a word cut by the reader's 1 MiB block boundary.
  std::string big(1 << 20, 'a');
  big[(1 << 20) - 3] = ' ';
  big += "\xC3\x28 z\n";  // a lead byte followed by '(' : invalid at offset 2^20
  test::writeText(path, big);
  CHECK_THROWS_WITH(detail::forEachToken(
                        CorpusSource::fromFiles({path}, true), [](std::string_view) {}, [] {}),
                    Catch::Contains("byte offset 1048576") && Catch::Contains("line 1"));

  // With replaceInvalid the word is kept with U+FFFD.
  test::writeText(path,
                  "fine b\x97"
                  "d\n");
  TokenizerOptions replace;
  replace.replaceInvalid = true;
  std::vector<std::string> seen;
  detail::forEachToken(
      CorpusSource::fromFiles({path}, true, replace),
      [&](std::string_view w) { seen.emplace_back(w); }, [] {});
  CHECK(seen == std::vector<std::string>{"fine",
                                         "b\xEF\xBF\xBD"
                                         "d"});
}

namespace {

std::vector<std::int32_t> allIds(const detail::IdStream& s) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(s.size()));
  REQUIRE(s.read(0, ids.data(), ids.size()) == ids.size());
  return ids;
}

// Deterministic text with blank lines, space-only lines, tabs, CRLF, long lines
// and a skewed word distribution (many words below the min-count).
std::string syntheticText(std::uint64_t seed, int lines, bool finalNewline) {
  std::string s;
  std::uint64_t x = seed;
  auto next = [&] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  for (int l = 0; l < lines; ++l) {
    const auto kind = next() % 20;
    if (kind == 0) {
      s += "\n";
      continue;
    }
    if (kind == 1) {
      s += "  \t \n";
      continue;
    }
    const auto n = kind == 2 ? 300 + next() % 200 : 1 + next() % 15;
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto r = next() % 1000;
      s += "w" + std::to_string(r * r / 1000 / (1 + next() % 7));
      s += (next() % 9 == 0) ? "\t" : " ";
    }
    s += (next() % 11 == 0) ? "\r\n" : "\n";
  }
  if (!finalNewline) s += "tail words here";
  return s;
}

}  // namespace

TEST_CASE("corpus: counting on several threads gives the one-thread vocabulary and ids",
          "[corpus]") {
  test::TempDir dir;
  test::writeText(dir.file("a.txt"), syntheticText(1, 3000, true));
  test::writeText(dir.file("b.txt"), syntheticText(2, 17, false));  // shorter than the threads
  test::writeText(dir.file("c.txt"), "");                           // empty file
  test::writeText(dir.file("d.txt"), syntheticText(3, 2000, true));
  const CorpusSource corpus = CorpusSource::fromFiles(
      {dir.file("a.txt"), dir.file("b.txt"), dir.file("c.txt"), dir.file("d.txt")}, true);

  // Independent count of the text: first-seen order and totals, by a plain map.
  std::map<std::string, std::int64_t> counts;
  std::int64_t tokens = 0;
  detail::forEachToken(
      corpus,
      [&](std::string_view w) {
        ++counts[std::string(w)];
        ++tokens;
      },
      [] {});

  for (const std::int64_t minCount : {1, 5}) {
    const detail::PreparedCorpus one = detail::prepareCorpus(corpus, minCount, 0, 20'000'000, 1);
    CHECK(one.tokens == tokens);
    CHECK(one.distinctWords == static_cast<std::int64_t>(counts.size()));
    for (std::size_t i = 0; i < one.vocabulary.size(); ++i)
      CHECK(one.vocabulary.count(static_cast<WordId>(i)) == counts.at(one.vocabulary.words()[i]));
    for (const int threads : {2, 3, 8}) {
      INFO("threads " << threads << ", min-count " << minCount);
      const auto many = detail::countInParallel(corpus, minCount, 0, 20'000'000, threads);
      REQUIRE(many);  // the parallel path ran
      CHECK(many->vocabulary.words() == one.vocabulary.words());
      CHECK(many->vocabulary.counts() == one.vocabulary.counts());
      CHECK(many->tokens == one.tokens);
      CHECK(many->distinctWords == one.distinctWords);
      CHECK(many->sentences == one.sentences);
      CHECK(many->stream.words() == one.stream.words());
      CHECK(allIds(many->stream) == allIds(one.stream));
      for (int n : {1, 2, 3})
        for (int k = 0; k < n; ++k) CHECK(many->stream.shard(k, n) == one.stream.shard(k, n));
      // Through the public entry point too.
      const auto viaPrepare = detail::prepareCorpus(corpus, minCount, 0, 20'000'000, threads);
      CHECK(allIds(viaPrepare.stream) == allIds(one.stream));
    }
  }
  // max-vocab cuts the same words.
  const auto oneCut = detail::prepareCorpus(corpus, 1, 10, 20'000'000, 1);
  const auto manyCut = detail::countInParallel(corpus, 1, 10, 20'000'000, 2);
  REQUIRE(manyCut);
  CHECK(manyCut->vocabulary.words() == oneCut.vocabulary.words());
  CHECK(allIds(manyCut->stream) == allIds(oneCut.stream));
}

TEST_CASE("corpus: threads hand a corpus over the table limit to the one-thread pass", "[corpus]") {
  test::TempDir dir;
  test::writeText(dir.file("a.txt"), syntheticText(7, 2000, true));
  const CorpusSource corpus = CorpusSource::fromFiles({dir.file("a.txt")}, true);
  // 50 distinct words at most: one thread prunes, so threads must not count it.
  CHECK_FALSE(detail::countInParallel(corpus, 1, 0, 50, 2));
  const auto one = detail::prepareCorpus(corpus, 1, 0, 50, 1);
  const auto two = detail::prepareCorpus(corpus, 1, 0, 50, 2);
  CHECK(one.prunings > 0);
  CHECK(two.prunings == one.prunings);
  CHECK(two.vocabulary.words() == one.vocabulary.words());
  CHECK(allIds(two.stream) == allIds(one.stream));
  // Sources threads cannot split go to the one-thread pass.
  CHECK_FALSE(detail::countInParallel(CorpusSource::fromSentences({{"a"}}), 1, 0, 0, 2));
  CHECK_FALSE(
      detail::countInParallel(CorpusSource::fromFiles({dir.file("a.txt")}, false), 1, 0, 0, 2));
  CHECK_FALSE(detail::countInParallel(corpus, 1, 0, 0, 1));
  // A compressed file's byte ranges are not ranges of its text (gzip magic here).
  test::writeText(dir.file("z.gz"), std::string("\x1f\x8b\x08\x00rest", 8));
  CHECK_FALSE(
      detail::countInParallel(CorpusSource::fromFiles({dir.file("z.gz")}, true), 1, 0, 0, 2));
  // Errors are the one-thread pass's.
  test::writeText(dir.file("e.txt"), " \n\n");
  CHECK_THROWS_AS(
      detail::prepareCorpus(CorpusSource::fromFiles({dir.file("e.txt")}, true), 1, 0, 0, 2),
      InputError);
}

TEST_CASE("corpus: invalid UTF-8 found by the threads is reported at its place in the whole file",
          "[corpus]") {
  test::TempDir dir;
  // 400 clean lines of 10 bytes, then the bad byte on line 401 at offset 400 * 10 + 2:
  // in the second half of the file, so inside the second thread's part.
  std::string text;
  for (int i = 0; i < 400; ++i) text += "aaa bbb c\n";
  text += "x \x97y\nlast line\n";
  const std::string path = dir.file("bad.txt");
  test::writeText(path, text);
  const auto corpus = CorpusSource::fromFiles({path}, true);
  for (const int threads : {1, 2}) {
    INFO("threads " << threads);
    CHECK_THROWS_WITH(detail::prepareCorpus(corpus, 1, 0, 20'000'000, threads),
                      Catch::Contains("line 401") && Catch::Contains("byte offset 4002"));
  }
}

namespace {

// Text for the streamed counting pass: the synthetic lines, multi-byte words that
// straddle every 64-byte read boundary somewhere, and a line far longer than the
// small blocks the tests use (about 230 KB).
//
// `small`: a fifth of the lines and a 6.9 KB long line (about 50 KB), for the tests
// that count in small blocks under ASan+UBSan, where a 64-byte block costs about
// 2 ms (at 3,600 blocks a pass these tests took five minutes of that run). It keeps
// every feature above: hundreds of blocks, each wide word across a 64-byte
// boundary, a long line longer than every block size the tests use.
std::string streamedText(std::uint64_t seed, bool small = false) {
  std::string s = syntheticText(seed, small ? 300 : 1500, true);
  const char* wide[] = {"na\xC3\xAFve", "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x98\x80x",
                        "caf\xC3\xA9"};
  for (int shift = 0; shift < 70; ++shift) {
    s += std::string(static_cast<std::size_t>(shift % 5), 'k') + " " + wide[shift % 4] + " " +
         wide[(shift + 1) % 4] + (shift % 3 == 0 ? "\n" : " ");
  }
  // A multi-byte character across a read boundary, for certain: its second byte
  // lands on a multiple of 64.
  for (const char* w : wide) {
    s += "\npad";
    while ((s.size() + 1) % 64 != 0) s += ' ';
    s += w;
  }
  s += "\n";
  for (int i = 0; i < (small ? 1000 : 4000); ++i) s += "long" + std::to_string(i % 97) + " ";
  s += "\n" + syntheticText(seed + 1, small ? 60 : 300, true);
  return s;
}

void checkSameCounting(const detail::PreparedCorpus& many, const detail::PreparedCorpus& one) {
  CHECK(many.vocabulary.words() == one.vocabulary.words());
  CHECK(many.vocabulary.counts() == one.vocabulary.counts());
  CHECK(many.tokens == one.tokens);
  CHECK(many.distinctWords == one.distinctWords);
  CHECK(many.sentences == one.sentences);
  CHECK(many.prunings == one.prunings);
  CHECK(many.stream.words() == one.stream.words());
  CHECK(allIds(many.stream) == allIds(one.stream));
  for (int n : {1, 2, 3})
    for (int k = 0; k < n; ++k) CHECK(many.stream.shard(k, n) == one.stream.shard(k, n));
}

// The message of the error `f` throws ("" when none).
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE(
    "corpus: a stream counted in blocks on several threads gives the one-thread vocabulary and ids",
    "[corpus]") {
  test::TempDir dir;
  const std::string text = streamedText(11, test::kAddressSanitizer);
  // The read boundaries at multiples of 64 cut some multi-byte word; the long line
  // is longer than every block size below.
  bool cutsWide = false;
  for (std::size_t at = 64; at < text.size(); at += 64)
    cutsWide = cutsWide || (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80;
  REQUIRE(cutsWide);
  test::writeText(dir.file("a.txt"), text);
  test::writeText(dir.file("b.txt"), "");
  test::writeText(dir.file("c.txt"), syntheticText(5, 40, false));  // no final newline
  const CorpusSource corpus =
      CorpusSource::fromFiles({dir.file("a.txt"), dir.file("b.txt"), dir.file("c.txt")}, true);

  // Independent count: a plain map over the tokens.
  std::map<std::string, std::int64_t> counts;
  for (const auto& t : tokensOf(corpus))
    if (t != "|") ++counts[t];

  for (const std::int64_t minCount : {1, 4}) {
    const detail::PreparedCorpus one = detail::prepareCorpus(corpus, minCount, 0, 20'000'000, 1);
    CHECK(one.distinctWords == static_cast<std::int64_t>(counts.size()));
    for (std::size_t i = 0; i < one.vocabulary.size(); ++i)
      CHECK(one.vocabulary.count(static_cast<WordId>(i)) == counts.at(one.vocabulary.words()[i]));
    // Three threads on the smallest blocks only; under ASan+UBSan, where each
    // combination costs seconds, the first two.
    const std::vector<std::pair<int, std::size_t>> combinations{
        {2, 64}, {3, 1000}, {3, 64}, {2, std::size_t{1} << 20}};
    for (std::size_t k = 0; k < (test::kAddressSanitizer ? 2 : combinations.size()); ++k) {
      const int threads = combinations[k].first;
      const std::size_t block = combinations[k].second;
      INFO("threads " << threads << ", block " << block << ", min-count " << minCount);
      const auto many =
          detail::countStreamInParallel(corpus, minCount, 0, 20'000'000, threads, block);
      REQUIRE(many);
      checkSameCounting(*many, one);
    }
  }
  // Not for sources without pre-tokenized files, nor one thread.
  CHECK_FALSE(detail::countStreamInParallel(CorpusSource::fromSentences({{"a"}}), 1, 0, 0, 2));
  CHECK_FALSE(detail::countStreamInParallel(CorpusSource::fromFiles({dir.file("a.txt")}, false), 1,
                                            0, 0, 2));
  CHECK_FALSE(detail::countStreamInParallel(corpus, 1, 0, 0, 1));
  // Empty input: the one-thread message.
  const auto empty = CorpusSource::fromFiles({dir.file("b.txt")}, true);
  const std::string emptyMessage = errorOf([&] { detail::prepareCorpus(empty, 1, 0, 0, 1); });
  CHECK(emptyMessage.find("contains no words") != std::string::npos);
  CHECK(errorOf([&] { detail::countStreamInParallel(empty, 1, 0, 0, 2, 64); }) == emptyMessage);
}

TEST_CASE("corpus: a stream over the table limit prunes as the one-thread pass does", "[corpus]") {
  test::TempDir dir;
  test::writeText(dir.file("a.txt"), streamedText(21, test::kAddressSanitizer));
  const CorpusSource corpus = CorpusSource::fromFiles({dir.file("a.txt")}, true);
  const auto distinct = detail::prepareCorpus(corpus, 1, 0, 0, 1).distinctWords;
  // From the first block on, and after many blocks were merged by the threads.
  for (const std::size_t limit : {std::size_t{50}, static_cast<std::size_t>(distinct - 3)}) {
    const auto one = detail::prepareCorpus(corpus, 1, 0, limit, 1);
    REQUIRE(one.prunings > 0);
    // 64-byte blocks only in Release (about 2 ms a block under ASan+UBSan).
    const std::size_t smallest = test::kAddressSanitizer ? 1024 : 64;
    for (const std::size_t block : {smallest, std::size_t{4096}}) {
      INFO("limit " << limit << ", block " << block);
      const auto many = detail::countStreamInParallel(corpus, 1, 0, limit, 2, block);
      REQUIRE(many);
      checkSameCounting(*many, one);
    }
  }
}

TEST_CASE("corpus: invalid UTF-8 in a stream counted by threads has the one-thread message",
          "[corpus]") {
  test::TempDir dir;
  const std::string good = streamedText(31, test::kAddressSanitizer);
  // The bad byte: early, in a line after many blocks, inside the long line, as the
  // tail of a character cut by a read boundary, and in the second of two files.
  const std::size_t longLine = good.find("long0 ");
  REQUIRE(longLine != std::string::npos);
  REQUIRE(longLine > 20000);                             // 300 blocks of 64 bytes in
  REQUIRE(good.find('\n', longLine) > longLine + 5000);  // longer than the largest block
  std::vector<std::pair<std::string, std::string>> cases;
  cases.push_back({"x \x97y\n" + good, ""});
  cases.push_back({good.substr(0, 20000) + "\nbad w\xC3(rd\n" + good.substr(20000), ""});
  cases.push_back({good.substr(0, longLine + 3000) + "\xFF" + good.substr(longLine + 3000), ""});
  std::string cut(64 * 40 - 1, 'a');
  for (std::size_t i = 9; i < cut.size(); i += 10) cut[i] = (i % 30 == 29) ? '\n' : ' ';
  cases.push_back({cut + "\xE6\x97(\n" + good, ""});
  cases.push_back({good, "ok\nfine words\nno\xC0\x80pe\n"});
  for (std::size_t c = 0; c < cases.size(); ++c) {
    test::writeText(dir.file("a.txt"), cases[c].first);
    test::writeText(dir.file("b.txt"), cases[c].second);
    const CorpusSource corpus =
        CorpusSource::fromFiles({dir.file("a.txt"), dir.file("b.txt")}, true);
    const std::string want = errorOf([&] { detail::prepareCorpus(corpus, 1, 0, 20'000'000, 1); });
    INFO("case " << c << ": " << want);
    REQUIRE(want.find("invalid UTF-8 at byte offset") != std::string::npos);
    // 64-byte blocks put a boundary inside the cut character (case 3) and every few
    // words. 16-byte blocks added nothing to that, and all six combinations took
    // three minutes of the ASan+UBSan run (1.5 s in Release), where a 64-byte block
    // costs about 2 ms: there only the first combination runs.
    const std::vector<std::pair<int, std::size_t>> combinations{{2, 64}, {3, 64}, {2, 5000}};
    for (std::size_t k = 0; k < (test::kAddressSanitizer ? 1 : combinations.size()); ++k) {
      const int threads = combinations[k].first;
      const std::size_t block = combinations[k].second;
      INFO("threads " << threads << ", block " << block);
      CHECK(errorOf([&] {
              detail::countStreamInParallel(corpus, 1, 0, 20'000'000, threads, block);
            }) == want);
      // Over the table limit too: the calling thread then reads the blocks itself.
      CHECK(errorOf([&] { detail::countStreamInParallel(corpus, 1, 0, 10, threads, block); }) ==
            errorOf([&] { detail::prepareCorpus(corpus, 1, 0, 10, 1); }));
    }
  }
}

TEST_CASE("corpus: a pipe is counted on several threads like one thread counts it", "[corpus]") {
  test::TempDir dir;
  const std::string text = streamedText(41);
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Writes the text into the pipe once a reader opens it (gives up after 60 s
  // rather than hang when none does).
  auto feed = [&] {
    return std::thread([&] {
      int fd = -1;
      for (int i = 0; i < 6000 && fd < 0; ++i) {
        fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (fd < 0) return;
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      for (std::size_t at = 0; at < text.size();) {
        const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
        if (n <= 0) break;
        at += static_cast<std::size_t>(n);
      }
      ::close(fd);
    });
  };
  const CorpusSource corpus = CorpusSource::fromFiles({fifo}, true);
  CHECK_FALSE(detail::splittableCorpus(corpus));
  std::thread writer = feed();
  const auto one = detail::prepareCorpus(corpus, 2, 0, 20'000'000, 1);
  writer.join();
  writer = feed();
  const auto two = detail::prepareCorpus(corpus, 2, 0, 20'000'000, 2);  // the stream path
  writer.join();
  checkSameCounting(two, one);
  // The same text from a regular file, cut into byte ranges.
  test::writeText(dir.file("a.txt"), text);
  checkSameCounting(detail::prepareCorpus(CorpusSource::fromFiles({dir.file("a.txt")}, true), 2, 0,
                                          20'000'000, 2),
                    one);
}

TEST_CASE("corpus: a stream counted by threads holds a bounded block whatever its lines and words",
          "[corpus]") {
  // Before: a line without newline was held whole by the reader (a 10 GB line, 10 GB),
  // and so was a word without whitespace. Now a block ends after a word of a long
  // line, and a word keeps kMaxWordBytes (cut at a character boundary) as on one thread.
  test::TempDir dir;
  std::string longLine;
  for (int i = 0; i < 40000; ++i) longLine += "w" + std::to_string(i % 331) + " ";
  // A 300,000-byte word of 3-byte characters: it keeps 341 of them (1,023 bytes).
  std::string euro;
  for (int i = 0; i < 100000; ++i) euro += "\xE2\x82\xAC";
  const std::string text = "a b c\n" + longLine + "\n" + euro + " tail\nd e " + longLine +
                           euro;  // the last line ends in the long word, without newline
  test::writeText(dir.file("a.txt"), text);
  const CorpusSource corpus = CorpusSource::fromFiles({dir.file("a.txt")}, true);
  const auto one = detail::prepareCorpus(corpus, 1, 0, 20'000'000, 1);
  std::string kept;
  for (int i = 0; i < 341; ++i) kept += "\xE2\x82\xAC";
  REQUIRE(kept.size() == 1023);
  CHECK(one.vocabulary.find(kept) >= 0);
  CHECK(one.sentences == 4);
  CHECK(one.tokens == 3 + 40000 + 2 + 2 + 40000 + 1);
  for (const std::size_t block : {std::size_t{4096}, std::size_t{65536}}) {
    INFO("block " << block);
    const auto many = detail::countStreamInParallel(corpus, 1, 0, 20'000'000, 2, block);
    REQUIRE(many);
    checkSameCounting(*many, one);
    // A block is cut at `block` bytes or after a kept word, plus one read (of at most
    // `block` bytes): far below the 200 KB line and the 300 KB word.
    CHECK(many->largestBlock <= 3 * block + kMaxWordBytes);
  }
}
