// Phrase detection: counts and scores of a corpus small enough to count by hand, scored
// here with gensim's published formulas (original_scorer, npmi_scorer); the rewriting rules
// with connector words; and gensim's pruning. The differential test against gensim itself
// is tests/python/test_phrases.py.
#include "posvec/phrases.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "phrase_tables.hpp"
#include "posvec/error.hpp"
#include "posvec/tokenizer.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {

using Words = std::vector<std::string>;

Words split(const std::string& s) {
  Words out;
  std::string w;
  for (char c : s) {
    if (c == ' ') {
      if (!w.empty()) out.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) out.push_back(w);
  return out;
}

// Sentences of random words (2,000 of them) with collocations ("new york", "bank of america")
// and connector words among them; `odd` adds a word that holds the delimiter.
std::string generatedText(unsigned seed, int sentences, bool odd = false) {
  std::mt19937 gen(seed);
  const std::vector<std::string> colloc = {"new york", "machine learning", "bank of america",
                                           "the white house", "san francisco bay"};
  const std::vector<std::string> connectors = {"the", "of", "and", "a", "in"};
  std::ostringstream text;
  for (int s = 0; s < sentences; ++s) {
    const int len = 2 + static_cast<int>(gen() % 14);
    for (int t = 0; t < len; ++t) {
      const unsigned r = gen() % 100;
      if (t > 0) text << ' ';
      if (r < 8)
        text << colloc[gen() % colloc.size()];
      else if (r < 25)
        text << connectors[gen() % connectors.size()];
      else if (odd && r < 27)
        text << "new_york";
      else
        text << 'w' << gen() % 2000;
    }
    text << '\n';
    if (s % 97 == 0) text << '\n';  // an empty line now and then
  }
  return text.str();
}

// What addCorpus and applyCorpus give (gensim's Phrases and Phrases[sentence]): the
// phrases and the lines written.
std::pair<std::vector<FoundPhrase>, std::string> viaStrings(const CorpusSource& corpus,
                                                            const PhraseOptions& o) {
  Phrases p(o);
  p.addCorpus(corpus);
  std::string lines;
  p.applyCorpus(corpus, [&](const Words& joined) {
    std::string line;
    for (const auto& w : joined) line += (line.empty() ? "" : " ") + w;
    if (!line.empty()) lines += line + "\n";
  });
  return {p.exportPhrases(), lines};
}

void checkSamePhrases(const std::vector<FoundPhrase>& got, const std::vector<FoundPhrase>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].phrase == want[i].phrase);
    CHECK(got[i].count == want[i].count);
    CHECK(got[i].score == want[i].score);  // the same formula on the same counts: bit for bit
  }
}

// A scorer with its threshold, with gensim's English connector words or none.
struct ScoringCase {
  const char* name;
  PhraseScoring scoring;
  double threshold;
  bool connectors;
  PhraseOptions options() const {
    PhraseOptions o;
    o.scoring = scoring;
    o.threshold = threshold;
    if (connectors) o.connectorWords = englishConnectorWords();
    return o;
  }
};

const ScoringCase kEveryScoring[] = {{"default", PhraseScoring::Default, 10, false},
                                     {"npmi", PhraseScoring::Npmi, 0.3, false},
                                     {"default, connector words", PhraseScoring::Default, 5, true},
                                     {"npmi, connector words", PhraseScoring::Npmi, 0.2, true},
                                     {"word2phrase", PhraseScoring::Word2phrase, 30, false}};

}  // namespace

TEST_CASE("phrases: findAndJoin gives the counting model's phrases and lines at any thread count",
          "[phrases]") {
  test::TempDir dir;
  // Pre-tokenized files go through the text pass (phrase_text_pass.cpp), raw text through
  // the tokenizer and the id pass (phrase_pass.cpp): a smaller file, the tokenizer being
  // the slower reader (under ASan above all).
  const std::string text = dir.file("corpus.txt"), raw = dir.file("raw.txt");
  test::writeText(text, generatedText(3, test::kAddressSanitizer ? 1500 : 4000));
  test::writeText(raw, generatedText(3, 1500));
  for (const bool pretokenized : {true, false}) {
    INFO((pretokenized ? "pre-tokenized" : "raw text"));
    const CorpusSource corpus = CorpusSource::fromFiles({pretokenized ? text : raw}, pretokenized);
    for (const ScoringCase& c : kEveryScoring) {
      INFO(c.name);
      PhraseOptions o = c.options();
      const auto [want, wantLines] = viaStrings(corpus, o);
      REQUIRE(want.size() > 3);
      Phrases counted(o);
      counted.addCorpus(corpus);
      for (const int threads : {1, 2, 3}) {
        INFO(threads << " threads");
        o.threads = threads;
        std::ostringstream out;
        const Phrases got = Phrases::findAndJoin(corpus, o, out);
        CHECK(got.isFrozen());
        checkSamePhrases(got.exportPhrases(), want);
        CHECK(out.str() == wantLines);
        CHECK(got.corpusWords() == counted.corpusWords());
        CHECK(got.vocabularySize() == counted.vocabularySize());
      }
    }
  }
}

namespace {

// generatedText's sentences written as a person's files might hold them: every kind of
// ASCII whitespace between words, CRLF and blank lines, leading spaces, and collocations
// of words past 8 and 16 bytes and of UTF-8 words.
std::string untidy(const std::string& text, unsigned seed) {
  std::mt19937 gen(seed);
  const std::vector<std::string> spaces = {" ", "  ", "\t", " \t ", "\v", "\f", "\r "};
  const std::vector<std::string> colloc = {"internationalisation framework", "naïve façade",
                                           "überlange·wörter überall",
                                           "twelve-bytes sixteen-bytes-xyz1"};
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' && gen() % 4 == 0) {
      out += spaces[gen() % spaces.size()];
    } else if (c == ' ' && gen() % 10 == 0) {
      out += ' ' + colloc[gen() % colloc.size()] + ' ';
    } else if (c == '\n') {
      const unsigned r = gen() % 8;
      out += r == 0 ? "\r\n" : r == 1 ? "\n  " : "\n";
    } else {
      out += c;
    }
  }
  return out;
}

// Phrases and lines of the text pass, which must run (not hand the corpus back), reading
// `block` bytes at a time.
std::pair<std::vector<FoundPhrase>, std::string> viaTextPass(const CorpusSource& corpus,
                                                             const PhraseOptions& o, int threads,
                                                             std::size_t block) {
  std::ostringstream out;
  bool strings = true;
  const std::optional<Phrases> got =
      detail::findAndJoinText(corpus, o, threads, out, strings, block);
  REQUIRE(got);
  CHECK_FALSE(strings);
  return {got->exportPhrases(), out.str()};
}

}  // namespace

TEST_CASE("phrases: the text pass splits files as the pre-tokenized reader does", "[phrases]") {
  test::TempDir dir;
  // Three files as one corpus: untidy text; an empty file; a file whose last line has no
  // line break (word2phrase's counting pairs words across the files' ends too).
  const std::string a = dir.file("a.txt"), b = dir.file("b.txt"), c = dir.file("c.txt");
  test::writeText(a, untidy(generatedText(6, test::kAddressSanitizer ? 1200 : 2500), 1));
  test::writeText(b, "");
  std::string last = untidy(generatedText(7, test::kAddressSanitizer ? 700 : 1500), 2);
  while (!last.empty() && (last.back() == '\n' || last.back() == ' ')) last.pop_back();
  test::writeText(c, last);
  const CorpusSource corpus = CorpusSource::fromFiles({a, b, c}, true);
  for (const std::size_t i : {0, 3, 4}) {  // default; npmi, connector words; word2phrase
    const ScoringCase& k = kEveryScoring[i];
    INFO(k.name);
    const PhraseOptions o = k.options();
    const auto [want, wantLines] = viaStrings(corpus, o);
    REQUIRE(want.size() > 3);
    // The long and UTF-8 collocations are among the phrases.
    CHECK(std::count_if(want.begin(), want.end(), [](const FoundPhrase& f) {
            return f.phrase == "naïve_façade" || f.phrase == "twelve-bytes_sixteen-bytes-xyz1";
          }) == 2);
    // Reads of a few bytes cut words and spans of connector words between reads.
    for (const auto& [threads, block] : {std::pair{1, detail::kTextBlock}, std::pair{2, 4096ul},
                                         std::pair{3, 37ul}, std::pair{7, 1000ul}}) {
      INFO(threads << " threads, " << block << "-byte reads");
      const auto [got, lines] = viaTextPass(corpus, o, threads, block);
      checkSamePhrases(got, want);
      CHECK(lines == wantLines);
    }
  }
}

TEST_CASE("phrases: the text pass hands back what only another reader reads as gensim does",
          "[phrases]") {
  test::TempDir dir;
  const std::string path = dir.file("corpus.txt");
  const std::string text = generatedText(8, 2000);
  const CorpusSource corpus = CorpusSource::fromFiles({path}, true);
  PhraseOptions o;
  const auto handedBack = [&](bool wantStrings) {
    // Whole, and 64 bytes a read (a long word then spans many reads).
    for (const std::size_t block : {detail::kTextBlock, std::size_t{64}}) {
      std::ostringstream out;
      bool strings = !wantStrings;
      CHECK_FALSE(detail::findAndJoinText(corpus, o, 2, out, strings, block));
      CHECK(strings == wantStrings);
      CHECK(out.str().empty());  // nothing written before it hands the corpus back
    }
  };
  // A word longer than the reader keeps (it is cut), and the same file's phrases.
  test::writeText(path, text + std::string(kMaxWordBytes + 5, 'x') + " new york\n");
  handedBack(false);
  {
    const auto [want, wantLines] = viaStrings(corpus, o);
    std::ostringstream out;
    checkSamePhrases(Phrases::findAndJoin(corpus, o, out).exportPhrases(), want);
    CHECK(out.str() == wantLines);
  }
  // A byte that is not UTF-8: the general reader's error, with its line and offset.
  test::writeText(path, text + "new yo\xffrk\n");
  handedBack(false);
  std::string message;
  try {
    viaStrings(corpus, o);
  } catch (const InputError& e) {
    message = e.what();
  }
  const auto line = std::count(text.begin(), text.end(), '\n') + 1;
  REQUIRE_THAT(message, Catch::Contains("invalid UTF-8") &&
                            Catch::Contains("line " + std::to_string(line) + ":"));
  std::ostringstream out;
  CHECK_THROWS_WITH(Phrases::findAndJoin(corpus, o, out), message);
  // A word holding the delimiter, and more keys than max_vocab_size: the string path.
  test::writeText(path, text + "new_york\n");
  handedBack(true);
  test::writeText(path, text);
  o.maxVocab = 100;
  handedBack(true);
  // No words at all: the general reader says so.
  o = {};
  test::writeText(path, " \n\t\n");
  handedBack(false);
  CHECK_THROWS_WITH(Phrases::findAndJoin(corpus, o, out), Catch::Contains("contains no words"));
}

TEST_CASE("phrases: findAndJoin counts a word holding the delimiter, and prunes, as gensim does",
          "[phrases]") {
  test::TempDir dir;
  const std::string path = dir.file("corpus.txt");
  // "new_york" as a word is the key the pair "new york" joins to: one count between them.
  test::writeText(path, generatedText(4, 3000, true));
  const CorpusSource corpus = CorpusSource::fromFiles({path}, true);
  PhraseOptions o;
  {
    const auto [want, wantLines] = viaStrings(corpus, o);
    std::ostringstream out;
    checkSamePhrases(Phrases::findAndJoin(corpus, o, out).exportPhrases(), want);
    CHECK(out.str() == wantLines);
  }
  // Pruning, which depends on the order of the sentences.
  test::writeText(path, generatedText(5, 3000));
  o.maxVocab = 3000;
  o.minCount = 3;
  o.threshold = 1;
  Phrases counted(o);
  counted.addCorpus(corpus);
  REQUIRE(counted.vocabularySize() < 3000);  // it was pruned
  const auto [want, wantLines] = viaStrings(corpus, o);
  REQUIRE_FALSE(want.empty());
  std::ostringstream out;
  checkSamePhrases(Phrases::findAndJoin(corpus, o, out).exportPhrases(), want);
  CHECK(out.str() == wantLines);
}

TEST_CASE("phrases: hand-counted scores for both scorers", "[phrases]") {
  // "new york" 3 times, "new" 4 times, "york" 3 times; 4 sentences, 14 words.
  const std::vector<Words> corpus = {split("new york is big"), split("i love new york"),
                                     split("new york new ideas"), split("big ideas")};
  PhraseOptions o;
  o.minCount = 1;
  o.threshold = 1;
  Phrases p(o);
  for (const auto& s : corpus) p.addSentence(s);
  CHECK(p.corpusWords() == 14);
  CHECK(p.count("new") == 4);
  CHECK(p.count("york") == 3);
  CHECK(p.count("new_york") == 3);
  CHECK(p.count("york_new") == 1);
  // Unigrams: new york is big i love ideas = 7; bigrams: new_york york_is is_big i_love
  // love_new york_new new_ideas big_ideas = 8: 15 keys.
  CHECK(p.vocabularySize() == 15);
  // original_scorer: (3 - 1) / (4 * 3) * 15 = 2.5.
  auto s = p.score("new", "york");
  REQUIRE(s);
  CHECK(s->phrase == "new_york");
  CHECK(s->score == Approx(2.5).epsilon(1e-15));
  // york_new: (1 - 1) / 12 * 15 = 0, not above 1.
  CHECK_FALSE(p.score("york", "new"));
  CHECK(p.apply(split("i love new york")) == Words{"i", "love", "new_york"});
  // npmi_scorer: ln(pab / (pa pb)) / -ln(pab), p = count / 14.
  o.scoring = PhraseScoring::Npmi;
  o.threshold = 0.5;
  Phrases n(o);
  for (const auto& c : corpus) n.addSentence(c);
  const double pa = 4.0 / 14, pb = 3.0 / 14, pab = 3.0 / 14;
  const auto ns = n.score("new", "york");
  REQUIRE(ns);
  CHECK(ns->score == Approx(std::log(pab / (pa * pb)) / -std::log(pab)).epsilon(1e-14));
  // The exported list holds the phrases above the threshold, highest first.
  const auto all = p.exportPhrases();
  REQUIRE(!all.empty());
  CHECK(all.front().phrase == "new_york");
}

TEST_CASE("phrases: connector words sit inside a phrase, never at its ends", "[phrases]") {
  PhraseOptions o;
  o.minCount = 1;
  o.threshold = 0.1;
  o.connectorWords = englishConnectorWords();
  Phrases p(o);
  for (int i = 0; i < 3; ++i) p.addSentence(split("the bank of america said"));
  // "the" starts nothing; "bank of america" is one key with "of" inside it.
  CHECK(p.count("the") == 0);
  CHECK(p.count("bank_of_america") == 3);
  CHECK(p.count("of_america") == 0);
  CHECK(p.apply(split("the bank of america said")) == Words{"the", "bank_of_america", "said"});
  // A connector run that is not a phrase is given back word by word.
  CHECK(p.apply(split("said of the bank")) == Words{"said", "of", "the", "bank"});
}

TEST_CASE("phrases: pruning drops counts below 1, then 2, ... as gensim's rule does",
          "[phrases]") {
  PhraseOptions o;
  o.maxVocab = 4;
  Phrases p(o);
  p.addSentence(split("a b"));  // a b a_b: 3 keys, no pruning
  CHECK(p.vocabularySize() == 3);
  p.addSentence(split("c d"));  // 6 keys > 4: prune below 1 (nothing), next time below 2
  CHECK(p.vocabularySize() == 6);
  p.addSentence(split("a b"));  // 6 keys > 4: prune below 2: a b a_b (2 each) stay
  CHECK(p.vocabularySize() == 3);
  CHECK(p.count("a_b") == 2);
  CHECK(p.count("c") == 0);
}

TEST_CASE("phrases: word2phrase scoring counts across sentence ends and scores in floats",
          "[phrases]") {
  // "b c" 3 times inside sentences and once across a sentence end ("... b" / "c ...").
  const std::vector<Words> corpus = {split("a b c d"), split("b c b"), split("c e b c"),
                                     split("e e")};
  PhraseOptions o;
  o.scoring = PhraseScoring::Word2phrase;
  o.minCount = 2;
  o.threshold = 1;
  Phrases p(o);
  for (const auto& s : corpus) p.addSentence(s);
  // 13 words; b 4, c 4, b_c 3 within sentences + 1 across ("b" ends sentence 2, "c" opens 3).
  CHECK(p.corpusWords() == 13);
  CHECK(p.count("b_c") == 4);
  CHECK(p.count("b_b") == 0);
  CHECK(p.count("b_e") == 0);  // "e e" follows "c", not "b"
  CHECK(p.count("c_e") == 2);  // once inside, once across ("c" ends sentence 3, "e" opens 4)
  // word2phrase.c: (pab - min_count) / pa / pb * train_words, each step in float.
  const float want = static_cast<float>(4 - 2) / 4.0f / 4.0f * 13.0f;
  const auto bc = p.score("b", "c");
  REQUIRE(bc);
  CHECK(bc->score == static_cast<double>(want));
  CHECK_FALSE(p.score("c", "e"));  // (2 - 2) / ...: 0, not above the threshold
  CHECK(p.apply(split("a b c d")) == Words{"a", "b_c", "d"});
  // The threshold is compared in float too: just above the score's float is no phrase.
  o.threshold = static_cast<double>(want);
  Phrases q(o);
  for (const auto& s : corpus) q.addSentence(s);
  CHECK_FALSE(q.score("b", "c"));
  // No connector words with word2phrase's rule.
  o.connectorWords = {"of"};
  CHECK_THROWS_WITH(Phrases(o), Catch::Contains("connector words"));
}

TEST_CASE("phrases: settings out of range are refused naming the setting", "[phrases]") {
  PhraseOptions o;
  o.scoring = PhraseScoring::Npmi;
  o.threshold = 1.5;
  CHECK_THROWS_WITH(Phrases(o), Catch::Contains("between -1 and 1"));
  o = {};
  o.threshold = 0;
  CHECK_THROWS_WITH(Phrases(o), Catch::Contains("above 0"));
  o = {};
  o.delimiter = "";
  CHECK_THROWS_AS(Phrases(o), ConfigError);
  o = {};
  o.minCount = 0;
  CHECK_THROWS_WITH(Phrases(o), Catch::Contains("minimum count"));
}
