// Phrase detection: counts and scores of a corpus small enough to count by hand, scored
// here with gensim's published formulas (original_scorer, npmi_scorer); the rewriting rules
// with connector words; and gensim's pruning. The differential test against gensim itself
// is tests/python/test_phrases.py.
#include "posvec/phrases.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "posvec/error.hpp"

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

}  // namespace

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
