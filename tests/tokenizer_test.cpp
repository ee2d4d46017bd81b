#include "posvec/tokenizer.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "posvec/error.hpp"
#include "test_util.hpp"
#include "tokenizer_detail.hpp"
#include "utf8.hpp"

using namespace posvec;
using posvec::test::TempDir;
using Sentences = std::vector<Sentence>;

namespace {

Sentences tok(const std::string& text, TokenizerOptions o = {}) {
  return Tokenizer(o).tokenize(text);
}

TokenizerOptions withLocale(const std::string& locale) {
  TokenizerOptions o;
  o.locale = locale;
  return o;
}

// Streams `text` through an istream with the given chunk size.
Sentences streamed(const std::string& text, TokenizerOptions o) {
  Sentences out;
  std::istringstream in(text);
  Tokenizer(o).tokenize(in, [&](Sentence&& s) { out.push_back(std::move(s)); });
  return out;
}

// Text mixing everything the chunked reader must carry over: multi-byte
// characters (2, 3 and 4 bytes), abbreviations, line breaks inside paragraphs,
// paragraph breaks, CRLF, quotes, "rug.The" joins.
const std::string kMixed =
    "The black cat sat on the rug.The dog did not.\r\nMr. Smith went to the U.S. in 1999. "
    "\"Don't,\" she said.\n\n"
    "¿Dónde está el niño? ¡Aquí! Die Straße ist groß... 😀 👍🏽 ok.\n"
    "我喜欢自然语言处理。今天天气很好！ Prices rose 3.14% to 1,000 dollars\n"
    "\n\n  Last paragraph without an end";

}  // namespace

TEST_CASE("tokenizer: English prose as NLTK's sent_tokenize + word_tokenize + lower()",
          "[tokenizer]") {
  // Expected lists written by hand from NLTK's conventions.
  CHECK(tok("The black cat sat on the rug.The cat did not cross. It was wet.") ==
        Sentences{{"the", "black", "cat", "sat", "on", "the", "rug.the", "cat", "did", "not",
                   "cross", "."},
                  {"it", "was", "wet", "."}});
  CHECK(tok("Mr. Smith went to the U.S. yesterday.") ==
        Sentences{{"mr.", "smith", "went", "to", "the", "u.s.", "yesterday", "."}});
  CHECK(tok("I don't know; they're sure the cat's toy can't fit.") ==
        Sentences{{"i", "do", "n't", "know", ";", "they", "'re", "sure", "the", "cat", "'s", "toy",
                   "ca", "n't", "fit", "."}});
  CHECK(
      tok("You shouldn't've. I'm sure we'll go, I'd say; it\u2019s fine. We cannot, gonna try.") ==
      Sentences{{"you", "should", "n't", "'ve", "."},
                {"i", "'m", "sure", "we", "'ll", "go", ",", "i", "'d", "say", ";", "it", "\u2019s",
                 "fine", "."},
                {"we", "can", "not", ",", "gon", "na", "try", "."}});
  CHECK(tok("O'Neil's rock'n'roll isn't 'quoted' ok") ==
        Sentences{{"o'neil", "'s", "rock'n'roll", "is", "n't", "'", "quoted", "'", "ok"}});
  CHECK(tok("\"Hello,\" he said (quietly).") ==
        Sentences{{"``", "hello", ",", "''", "he", "said", "(", "quietly", ")", "."}});
  CHECK(tok("He said `` no evidence '' today.") ==
        Sentences{{"he", "said", "``", "no", "evidence", "''", "today", "."}});
  CHECK(tok("A well-known fact... and/or not -- maybe!") ==
        Sentences{{"a", "well-known", "fact", "...", "and/or", "not", "--", "maybe", "!"}});
  CHECK(tok("At 10:30: tea") == Sentences{{"at", "10:30", ":", "tea"}});
  CHECK(tok("Pi is 3.14 and 1,000 people paid $5.") ==
        Sentences{{"pi", "is", "3.14", "and", "1,000", "people", "paid", "$", "5", "."}});
}

TEST_CASE("tokenizer: newlines inside a paragraph are spaces, blank lines end sentences",
          "[tokenizer]") {
  CHECK(tok("The cat\nsat on\r\nthe mat.\n") ==
        Sentences{{"the", "cat", "sat", "on", "the", "mat", "."}});
  CHECK(tok("Title line\n\n   \nBody text here") ==
        Sentences{{"title", "line"}, {"body", "text", "here"}});
  CHECK(tok("one\rtwo") == Sentences{{"one", "two"}});
}

TEST_CASE("tokenizer: the study text gives NLTK's 149 sentences and 23 distinct tokens",
          "[tokenizer]") {
  const std::string path = posvec::test::sharedData("study-text.txt");
  if (path.empty()) POSVEC_SKIP("shared data study-text.txt is absent");
  std::size_t sentences = 0;
  std::set<std::string> vocab;
  Tokenizer().tokenizeFile(path, [&](Sentence&& s) {
    ++sentences;
    vocab.insert(s.begin(), s.end());
  });
  CHECK(sentences == 149);
  CHECK(vocab.size() == 23);
  CHECK(vocab.count("rug.the") == 1);
  CHECK(vocab.count("wet.the") == 1);
  CHECK(vocab.count(".") == 1);
}

TEST_CASE("tokenizer: keep case, no punctuation, whitespace mode", "[tokenizer]") {
  TokenizerOptions keep;
  keep.lowercase = false;
  CHECK(tok("The Cat's HAT.", keep) == Sentences{{"The", "Cat", "'s", "HAT", "."}});

  TokenizerOptions noPunct;
  noPunct.keepPunctuation = false;
  CHECK(tok("\"Hi,\" she said... Really?! $5 (ok).", noPunct) ==
        Sentences{{"hi", "she", "said"}, {"really"}, {"$", "5", "ok"}});

  TokenizerOptions ws;
  ws.mode = TokenizerOptions::Mode::Whitespace;
  CHECK(tok("The cat's  rug.The\tDog\r\n\n  Über , x\n", ws) ==
        Sentences{{"the", "cat's", "rug.the", "dog"}, {"über", ",", "x"}});
  ws.keepPunctuation = false;
  ws.lowercase = false;
  CHECK(tok("A , B .\n", ws) == Sentences{{"A", "B"}});
}

TEST_CASE("tokenizer: Spanish, German, French accents and case mapping", "[tokenizer]") {
  CHECK(tok("¿Dónde está el niño? ¡Qué bien!", withLocale("es")) ==
        Sentences{{"¿", "dónde", "está", "el", "niño", "?"}, {"¡", "qué", "bien", "!"}});
  // ẞ (capital sharp s) lowercases to ß; STRASSE to strasse (full case mapping).
  CHECK(tok("Die STRASSE und ẞ sind groß.", withLocale("de")) ==
        Sentences{{"die", "strasse", "und", "ß", "sind", "groß", "."}});
  CHECK(tok("C'est « ÉTÉ » à Paris.", withLocale("fr")) ==
        Sentences{{"c'est", "«", "été", "»", "à", "paris", "."}});
  // Locale-specific lowercasing: dotted/dotless i in Turkish, combining dot elsewhere.
  CHECK(tok("İSTANBUL DIŞ", withLocale("tr")) == Sentences{{"istanbul", "dış"}});
  CHECK(tok("İ", withLocale("en")) == Sentences{{"i\xCC\x87"}});
}

TEST_CASE("tokenizer: Chinese and Japanese use ICU's dictionary segmentation", "[tokenizer]") {
  CHECK(tok("我喜欢自然语言处理。今天天气很好！", withLocale("zh")) ==
        Sentences{{"我", "喜欢", "自然", "语言", "处理", "。"}, {"今天", "天气", "很好", "！"}});
  const auto ja = tok("東京に住んでいます。日本語を勉強します。", withLocale("ja"));
  REQUIRE(ja.size() == 2);
  CHECK(ja[0].front() == "東京");
  CHECK(ja[0].back() == "。");
  CHECK(ja[1].front() == "日本語");
}

TEST_CASE("tokenizer: emoji and numbers stay whole", "[tokenizer]") {
  CHECK(tok("Great 😀 👍🏽 👨‍👩‍👧 🇫🇷 day") ==
        Sentences{{"great", "😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "day"}});
  CHECK(tok("It costs 1,000.50 or 3.14 or 10%") ==
        Sentences{{"it", "costs", "1,000.50", "or", "3.14", "or", "10", "%"}});
}

TEST_CASE("tokenizer: the same sentences whatever the chunk size", "[tokenizer]") {
  const Sentences whole = tok(kMixed);
  // kMixed by hand: "The black ... not." (no split inside "rug.The"), "Mr. Smith ... 1999.",
  // "\"Don't,\" she said.", "¿Dónde está el niño?", "¡Aquí!", "Die Straße ist groß... 😀 👍🏽
  // ok." (an ellipsis before a lower-case word does not end it), "我喜欢自然语言处理。",
  // "今天天气很好！", "Prices ... dollars" (ended by the blank line), "Last paragraph ...": 10.
  REQUIRE(whole.size() == 10);
  CHECK(whole[0] ==
        Sentence{"the", "black", "cat", "sat", "on", "the", "rug.the", "dog", "did", "not", "."});
  CHECK(whole[1] == Sentence{"mr.", "smith", "went", "to", "the", "u.s.", "in", "1999", "."});
  CHECK(whole.back() == Sentence{"last", "paragraph", "without", "an", "end"});
  for (std::size_t chunk = 1; chunk <= 64; ++chunk) {
    TokenizerOptions o;
    o.chunkBytes = chunk;
    INFO("chunk " << chunk);
    CHECK(streamed(kMixed, o) == whole);
    o.mode = TokenizerOptions::Mode::Whitespace;
    TokenizerOptions wsWhole;
    wsWhole.mode = TokenizerOptions::Mode::Whitespace;
    CHECK(streamed(kMixed, o) == tok(kMixed, wsWhole));
  }
}

TEST_CASE("tokenizer: threads give the same output as one thread", "[tokenizer]") {
  // Many small batches with many sentences each, so the parallel path runs.
  std::string text;
  for (int i = 0; i < 300; ++i) text += kMixed + (i % 3 ? " " : "\n\n");
  // Chunks big enough for parallel sentence segmentation (blocks of >= 32 KiB)
  // and a small one for many batches.
  for (std::size_t chunk : {std::size_t{200000}, std::size_t{7777}}) {
    TokenizerOptions one;
    one.chunkBytes = chunk;
    const Sentences expected = streamed(text, one);
    REQUIRE(expected.size() > 2000);
    for (int threads : {2, 3}) {
      TokenizerOptions o = one;
      o.threads = threads;
      CHECK(streamed(text, o) == expected);
      o.mode = TokenizerOptions::Mode::Whitespace;
      one.mode = TokenizerOptions::Mode::Whitespace;
      CHECK(streamed(text, o) == streamed(text, one));
      one.mode = TokenizerOptions::Mode::Icu;
    }
  }
}

TEST_CASE("tokenizer: threads agree on sentences longer than the block overlap", "[tokenizer]") {
  // 40 KB sentences: the parallel sentence pass finds no common boundary within
  // its overlap and falls back to one pass.
  std::string text;
  for (int i = 0; i < 8; ++i) {
    for (int w = 0; w < 8000; ++w) text += (w % 7 ? "word " : "Mr. Big ");
    text += "end. ";
  }
  TokenizerOptions one;
  one.chunkBytes = 1 << 20;
  const Sentences expected = streamed(text, one);
  REQUIRE(expected.size() == 8);
  TokenizerOptions two = one;
  two.threads = 2;
  CHECK(streamed(text, two) == expected);
}

TEST_CASE("tokenizer: a text without sentence ends is cut, memory stays bounded", "[tokenizer]") {
  std::string text;
  while (text.size() < 2500000) text += "word ";
  TokenizerOptions o;
  o.chunkBytes = 65536;
  const Sentences s = streamed(text, o);
  REQUIRE(s.size() == 3);  // 1 MiB, 1 MiB, the rest
  std::size_t words = 0;
  for (const auto& x : s) words += x.size();
  CHECK(words == 500000);
  o.chunkBytes = 1 << 20;
  CHECK(streamed(text, o) == s);
}

TEST_CASE("tokenizer: a word with 340000 clitics splits without deep recursion", "[tokenizer]") {
  // 680 KB in one word (the sentence limit is 1 MiB): a stack frame per clitic
  // overflows an 8 MB stack.
  constexpr int kClitics = 340000;
  std::string text = "a";
  for (int i = 0; i < kClitics; ++i) text += "'s";
  Sentence expected{"a"};
  expected.insert(expected.end(), kClitics, "'s");
  CHECK(tok(text) == Sentences{expected});
  // The order of mixed clitics is kept (should n't 've, then 's).
  CHECK(tok("shouldn't've's") == Sentences{{"should", "n't", "'ve", "'s"}});
}

// Runs of the characters the tokenizer glues into one token ("...", "--", "''"):
// each run is one token however long (kept to its first kMaxWordBytes bytes).
// Quadratic work (re-reading the token at each new character) takes minutes here;
// the test's CTest timeout catches that.
TEST_CASE("tokenizer: long runs of . - ' take linear time", "[.][linear-time]") {
  constexpr std::size_t kRun = 1000000;  // just below the 1 MiB sentence cut
  for (const char c : {'.', '-', '\''}) {
    for (const std::string prefix : {"x ", "\xC3\xA9 "}) {  // ASCII and ICU segmenters
      INFO("run of " << c << " after " << prefix);
      const Sentences s = tok(prefix + std::string(kRun, c));
      REQUIRE(s.size() == 1);
      REQUIRE(s[0].size() == 2);
      CHECK(s[0][1] == std::string(kMaxWordBytes, c));
    }
  }
}

TEST_CASE("tokenizer: a space before a combining mark is a gap and never part of a token",
          "[tokenizer]") {
  // ICU segments " \u0301" and " \u05C5" (a space, then a mark) as one piece.
  const std::string acute = "\xCC\x81", hebrew = "\xD7\x85";
  for (const std::string& text :
       {"caf\xC3\xA9 " + acute + "x y", "a " + hebrew + "b " + hebrew + " c", "\xC3\xA9 " + acute,
        "\xC3\xA9  " + acute + acute + "   z"}) {
    INFO(text);
    const Sentences s = tok(text);
    REQUIRE_FALSE(s.empty());
    for (const Sentence& sent : s)
      for (const std::string& t : sent) {
        CHECK_FALSE(t.empty());
        CHECK(t.find_first_of(" \t\n\r") == std::string::npos);
      }
  }
  CHECK(tok("caf\xC3\xA9 " + acute + "x y") == Sentences{{"caf\xC3\xA9", acute, "x", "y"}});
}

TEST_CASE("tokenizer: the line normaliser counts any number of line breaks without overflow",
          "[tokenizer]") {
  // A file of 2^31 line breaks is too big for a test; start the count near the
  // largest value its type holds instead, then read two more breaks.
  using Normalizer = detail::TextNormalizer;
  const auto nearLimit = std::numeric_limits<Normalizer::BreakCount>::max() - 1;
  for (const std::string& more : {std::string("\n\n"), std::string("\r\n\r"), std::string()}) {
    Normalizer n(false, false, "<test>");
    std::string out;
    n.feed("a", 1, out);
    n.setPendingBreaksForTest(nearLimit);
    n.feed(more.data(), more.size(), out);
    n.feed("b", 1, out);
    n.finish(out);
    CHECK(out == "a\nb");  // a paragraph break, not one word "ab"
  }
  // The same through the public path with a hundred thousand breaks.
  CHECK(tok("a" + std::string(100000, '\n') + "b") == Sentences{{"a"}, {"b"}});
}

TEST_CASE("tokenizer: invalid UTF-8, BOM, empty input", "[tokenizer]") {
  try {
    tok("abc d\xC3(e");
    FAIL("no exception");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("byte offset 5") != std::string::npos);
  }
  // Truncated sequence at the end, overlong form, surrogate.
  CHECK_THROWS_AS(tok("abc\xE2\x82"), InputError);
  CHECK_THROWS_AS(tok("a\xC0\xAF"), InputError);
  CHECK_THROWS_AS(tok("a\xED\xA0\x80"), InputError);
  TokenizerOptions rep;
  rep.replaceInvalid = true;
  rep.keepPunctuation = false;
  // One U+FFFD per maximal invalid subpart (E2 82 is one, FF is another).
  CHECK(tok("ab\xE2\x82 c\xFF", rep) == Sentences{{"ab", "\xEF\xBF\xBD", "c", "\xEF\xBF\xBD"}});
  CHECK(tok("\xEF\xBB\xBFHello world") == Sentences{{"hello", "world"}});
  CHECK(tok("").empty());
  CHECK(tok("\xEF\xBB\xBF \n\n \r\n").empty());
  // Offsets count from the start of the stream, across chunks.
  TokenizerOptions small;
  small.chunkBytes = 3;
  try {
    streamed("Hello world. \xF0\x9F\x98\x80 ok \x80", small);
    FAIL("no exception");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("byte offset 21") != std::string::npos);
  }
}

TEST_CASE("tokenizer: files, stdin name, missing files and directories", "[tokenizer]") {
  TempDir dir;
  posvec::test::writeText(dir.file("a.txt"), "One two. Three!");
  Sentences got;
  Tokenizer().tokenizeFile(dir.file("a.txt"), [&](Sentence&& s) { got.push_back(s); });
  CHECK(got == Sentences{{"one", "two", "."}, {"three", "!"}});
  const auto sink = [](Sentence&&) {};
  CHECK_THROWS_AS(Tokenizer().tokenizeFile(dir.file("missing.txt"), sink), IoError);
  CHECK_THROWS_AS(Tokenizer().tokenizeFile(dir.path().string(), sink), IoError);
}

TEST_CASE("tokenizer: options are validated", "[tokenizer]") {
  TokenizerOptions o;
  o.chunkBytes = 0;
  CHECK_THROWS_AS(Tokenizer(o), ConfigError);
  o = {};
  o.threads = -1;
  CHECK_THROWS_AS(Tokenizer(o), ConfigError);
  o = {};
  o.locale = "";
  CHECK_THROWS_AS(Tokenizer(o), ConfigError);
  for (const char* bad : {"!!", "xx", "english", "e"}) {
    o.locale = bad;
    CHECK_THROWS_AS(Tokenizer(o), ConfigError);
  }
  for (const char* good :
       {"en", "en_US", "de-DE", "tr", "zh_Hant", "ja", "yue", "fr@ss=standard"}) {
    o.locale = good;
    CHECK_NOTHROW(Tokenizer(o));
  }
}

TEST_CASE("tokenizer: the ASCII word segmenter reproduces ICU's boundaries", "[tokenizer]") {
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::BreakIterator> word(
      icu::BreakIterator::createWordInstance(icu::Locale("en"), status));
  REQUIRE(U_SUCCESS(status));
  UText* ut = nullptr;
  std::vector<detail::Piece> fast, icu;
  auto same = [&](const std::string& s) {
    detail::asciiPieces(s.data(), s.size(), fast);
    detail::icuPieces(*word, ut, s.data(), s.size(), icu);
    bool eq = fast.size() == icu.size();
    for (std::size_t i = 0; eq && i < fast.size(); ++i)
      eq = fast[i].begin == icu[i].begin && fast[i].end == icu[i].end &&
           fast[i].kind == icu[i].kind && fast[i].gap == icu[i].gap &&
           fast[i].punct == icu[i].punct;
    return eq;
  };
  // Every string of up to 3 characters over the classes that matter, then random
  // longer strings; ICU is the reference.
  const std::string alphabet = "aZ5_@.',; -\"!$(`\n";
  std::vector<std::string> cases{""};
  for (int len = 1; len <= 3; ++len) {
    std::vector<std::string> next;
    for (const auto& c : cases)
      if (static_cast<int>(c.size()) == len - 1)
        for (char a : alphabet) next.push_back(c + a);
    cases.insert(cases.end(), next.begin(), next.end());
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    std::string s(1 + rng() % 14, ' ');
    for (auto& c : s)
      c = static_cast<char>(rng() % 2 ? alphabet[rng() % alphabet.size()] : 32 + rng() % 95);
    cases.push_back(s);
  }
  std::size_t mismatches = 0;
  for (const auto& s : cases) {
    if (!same(s)) {
      if (++mismatches <= 5) FAIL_CHECK("ASCII segmenter differs from ICU on [" << s << "]");
    }
  }
  CHECK(mismatches == 0);
  utext_close(ut);
}

namespace {
std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}
}  // namespace

TEST_CASE("tokenizer: posvec tokenize writes one sentence a line", "[tokenizer][cli]") {
  using posvec::test::quote;
  using posvec::test::runCli;
  TempDir dir;
  const std::string in = dir.file("in.txt");
  posvec::test::writeText(in, "\xEF\xBB\xBFThe cat's hat.\r\nIt sat on the rug.The end!\r\n");
  auto r = runCli("-q tokenize " + quote(in));
  CHECK(r.status == 0);
  CHECK(r.out == "the cat 's hat .\nit sat on the rug.the end !\n");
  CHECK(r.err.empty());

  r = runCli("-q tokenize --keep-case --no-punct -t 2 " + quote(in));
  CHECK(r.out == "The cat 's hat\nIt sat on the rug.The end\n");

  posvec::test::writeText(dir.file("pre.txt"), "The  Cat .\n\nsat\tdown\n");
  r = runCli("-q tokenize --pretokenized " + quote(dir.file("pre.txt")));
  CHECK(r.out == "the cat .\nsat down\n");

  // stdin, and -o writes the file (atomically) instead of stdout.
  r = runCli("-q tokenize - -o " + quote(dir.file("out.txt")), in);
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(posvec::test::readText(dir.file("out.txt")) ==
        "the cat 's hat .\nit sat on the rug.the end !\n");

  // An empty file: no output, success.
  posvec::test::writeText(dir.file("empty.txt"), "");
  r = runCli("-q tokenize " + quote(dir.file("empty.txt")));
  CHECK(r.status == 0);
  CHECK(r.out.empty());

  r = runCli("-q tokenize --locale de " + quote(in) + " -o /dev/null");
  CHECK(r.status == 0);
}

TEST_CASE("tokenizer: posvec tokenize rejects bad input with one error line", "[tokenizer][cli]") {
  using posvec::test::quote;
  using posvec::test::runCli;
  TempDir dir;
  const std::string out = dir.file("out.txt");

  auto r = runCli("-q tokenize " + quote(dir.file("missing.txt")) + " -o " + quote(out));
  CHECK(r.status == 3);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.rfind("posvec: error: ", 0) == 0);
  CHECK_FALSE(std::filesystem::exists(out));

  // A directory is a corpus (its files); an empty one is unusable data.
  r = runCli("-q tokenize " + quote(dir.path().string()));
  CHECK(r.status == 5);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find("holds no regular files") != std::string::npos);

  const std::string bad = dir.file("bad.txt");
  posvec::test::writeText(bad, std::string("Fine text here.\nthen \xC3\x28 broken"));
  r = runCli("-q tokenize " + quote(bad) + " -o " + quote(out));
  CHECK(r.status == 5);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find("byte offset 21") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));  // no partial output file

  r = runCli("-q tokenize --replace-invalid " + quote(bad));
  CHECK(r.status == 0);
  // A lowercase word after the period: no new sentence (ICU and Punkt agree).
  CHECK(r.out == "fine text here. then \xEF\xBF\xBD ( broken\n");

  r = runCli("-q tokenize --threads -3 " + quote(bad));
  CHECK(r.status == 2);
  CHECK(lines(r.err) == 1);
  r = runCli("-q tokenize --locale '' " + quote(bad));
  CHECK(r.status == 2);
  CHECK(lines(r.err) == 1);

  // The input as output (the same file by another path) is refused and stays as it was.
  const std::string text = dir.file("text.txt");
  posvec::test::writeText(text, "Some text. More text.\n");
  for (const std::string& same : {text, (dir.path() / "." / "text.txt").string()}) {
    r = runCli("-q tokenize " + quote(text) + " -o " + quote(same));
    CHECK(r.status == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find("is the input file") != std::string::npos);
    CHECK(posvec::test::readText(text) == "Some text. More text.\n");
  }
}

TEST_CASE("tokenizer: posvec tokenize and train agree on a space before a combining mark",
          "[tokenizer][cli]") {
  using posvec::test::quote;
  using posvec::test::runCli;
  TempDir dir;
  const std::string in = dir.file("marks.txt");
  std::string text;
  for (int i = 0; i < 20; ++i) text += "Caf\xC3\xA9 \xCC\x81x and \xD7\x90 \xD7\x85\xD7\x91 here. ";
  posvec::test::writeText(in, text);
  auto r = runCli("-q tokenize " + quote(in));
  REQUIRE(r.status == 0);
  CHECK(r.out.find("  ") == std::string::npos);
  CHECK(r.out.find(" \n") == std::string::npos);
  r = runCli("-q train " + quote(in) + " --min-count 1 --epochs 1 --dim 4 --threads 1 -o " +
             quote(dir.file("v.txt")));
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(std::filesystem::exists(dir.file("v.txt")));
}

TEST_CASE("tokenizer: no sentence ends after Mr., Dr., St. or U.S.", "[tokenizer]") {
  // NLTK's sent_tokenize keeps each of these whole (its Punkt model knows the
  // abbreviations); the expected tokens are NLTK's word_tokenize of each sentence.
  CHECK(tok("Mr. Smith met Dr. Brown. The U.S. Army left.") ==
        Sentences{{"mr.", "smith", "met", "dr.", "brown", "."},
                  {"the", "u.s.", "army", "left", "."}});
  CHECK(tok("St. Mary's is old. It stands on Main St. near the river.") ==
        Sentences{{"st.", "mary", "'s", "is", "old", "."},
                  {"it", "stands", "on", "main", "st.", "near", "the", "river", "."}});
  CHECK(tok("John Smith Jr. wrote it, e.g. in 1990. Then he left.").size() == 2);
  // A sentence still ends at a period after an ordinary word, at a paragraph break
  // and at the end of the text, even after an abbreviation.
  CHECK(tok("He left. She stayed.").size() == 2);
  CHECK(tok("He met the Dr.\n\nThe end.").size() == 2);
  CHECK(tok("They moved to the U.S.").size() == 1);
  // Streamed in small chunks and on several threads: the same sentences.
  std::string text;
  for (int i = 0; i < 400; ++i)
    text += "Mr. Smith met Dr. Brown on St. James St. in the U.S. today. ";
  TokenizerOptions o;
  o.chunkBytes = 1000;
  o.threads = 3;
  const Sentences streamedOut = streamed(text, o);
  CHECK(streamedOut.size() == 400);
  CHECK(streamedOut == tok(text));
}
