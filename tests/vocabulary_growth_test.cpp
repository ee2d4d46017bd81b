// initialModel / extendVocabulary (gensim's build_vocab and build_vocab(update=True)),
// restricted neighbour searches, and the options stored with them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/trainer.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {

TrainConfig tiny(Loss loss = Loss::NegativeSampling) {
  TrainConfig c;
  c.dim = 4;
  c.seed = 7;
  c.threads = 1;
  c.minCount = 1;
  c.loss = loss;
  return c;
}

}  // namespace

TEST_CASE("a restricted search returns k words when the inputs lie outside the rows",
          "[embeddings]") {
  MatrixF m(5, 2);
  m << 1, 0, 0.8f, 0.6f, 0, 1, -1, 0, 0.6f, 0.8f;
  const Embeddings e({"a", "b", "c", "d", "q"}, m);
  const Eigen::RowVectorXf query = m.row(4);
  // Rows 0..2 only; the input (row 4) is outside them, so all 3 rows answer.
  const auto three = e.nearestTo(query, 3, {4}, 3);
  REQUIRE(three.size() == 3);
  CHECK(three[0].word == "b");  // cos 0.96
  CHECK(three[1].word == "c");  // cos 0.8
  CHECK(three[2].word == "a");  // cos 0.6
  // An input inside the rows takes its place away: 2 of the first 3.
  CHECK(e.nearestTo(query, 3, {1}, 3).size() == 2);
  // The same input twice counts once.
  CHECK(e.nearestTo(query, 3, {1, 1}, 3).size() == 2);
}

TEST_CASE("initialModel initialises rows as training does and trains nothing", "[trainer]") {
  const Vocabulary v({"x", "y", "z"}, {3, 2, 1});
  const ModelState m = initialModel(v, tiny());
  CHECK(m.epochsDone == 0);
  CHECK(m.words == v.words());
  CHECK(m.output.rows() == 3);
  CHECK(m.output.isZero());
  const ModelState hs = initialModel(v, tiny(Loss::HierarchicalSoftmax));
  CHECK(hs.output.rows() == 2);
  CHECK(hs.input == m.input);  // rows depend on (seed, row), not on the loss
  // A different seed, different rows.
  TrainConfig other = tiny();
  other.seed = 8;
  CHECK(initialModel(v, other).input != m.input);
}

TEST_CASE("extendVocabulary adds counts, appends words and re-sorts rows with them", "[trainer]") {
  ModelState m = initialModel(Vocabulary({"a", "b"}, {5, 3}), tiny());
  m.input.row(0).setConstant(1.0f);  // as if trained
  m.input.row(1).setConstant(2.0f);
  m.output.row(0).setConstant(-1.0f);
  m.output.row(1).setConstant(-2.0f);
  // The rows new words must get: those of rows 2 and 3 of a model of four words.
  const ModelState four = initialModel(Vocabulary({"a", "b", "c", "d"}, {4, 3, 2, 1}), tiny());

  CHECK(extendVocabulary(m, {"c", "b", "d"}, {10, 1, 1}) == 2);
  // counts a 5, b 3 + 1, c 10, d 1: sorted c, a, b, d
  CHECK(m.words == std::vector<std::string>{"c", "a", "b", "d"});
  CHECK(m.counts == std::vector<std::int64_t>{10, 5, 4, 1});
  CHECK(m.input.row(0) == four.input.row(2));  // c was the first word added
  CHECK(m.input.row(1).isConstant(1.0f));
  CHECK(m.input.row(2).isConstant(2.0f));
  CHECK(m.input.row(3) == four.input.row(3));
  CHECK(m.output.row(0).isZero());
  CHECK(m.output.row(1).isConstant(-1.0f));
  CHECK(m.output.row(2).isConstant(-2.0f));
  CHECK(m.output.row(3).isZero());

  // Hierarchical softmax: the inner nodes' rows stay, one zero row per new word.
  ModelState hs = initialModel(Vocabulary({"a", "b"}, {5, 3}), tiny(Loss::HierarchicalSoftmax));
  hs.output.setConstant(3.0f);
  extendVocabulary(hs, {"c"}, {1});
  REQUIRE(hs.output.rows() == 2);
  CHECK(hs.output.row(0).isConstant(3.0f));
  CHECK(hs.output.row(1).isZero());

  CHECK_THROWS_AS(extendVocabulary(m, {"e"}, {0}), InputError);
  CHECK_THROWS_AS(extendVocabulary(m, {""}, {1}), InputError);
  m.partial.shards.push_back({});
  CHECK_THROWS_AS(extendVocabulary(m, {"e"}, {1}), ConfigError);
}

TEST_CASE("extendVocabulary refuses a bad word before changing anything", "[trainer]") {
  // Before: a word holding whitespace was added (with the words before it), and then
  // every save failed ("word ... contains whitespace"): the state could not be kept.
  std::vector<Sentence> first(200, Sentence{"the", "black", "cat", "sat"});
  TrainConfig c = tiny();
  c.epochs = 1;
  ModelState m = train(CorpusSource::fromSentences(first), c);
  const ModelState before = m;
  for (const std::string bad : {"tab\there", "sp ace", "new\nline"}) {
    INFO(bad);
    CHECK_THROWS_WITH(extendVocabulary(m, {"fine", bad}, {3, 3}),
                      Catch::Contains("'" + bad + "' contains whitespace"));
    CHECK(m.words == before.words);
    CHECK(m.counts == before.counts);
    CHECK(m.input == before.input);
  }
  // A count that would overflow a known word's count is refused as a whole too.
  CHECK_THROWS_AS(extendVocabulary(m, {"fine", "the"}, {3, std::numeric_limits<std::int64_t>::max()}),
                  InputError);
  CHECK(m.words == before.words);
  CHECK(m.counts == before.counts);
  // The model still saves and grows.
  test::TempDir dir;
  CHECK_NOTHROW(saveModel(m, dir.file("m.posvec")));
  CHECK(extendVocabulary(m, {"fine"}, {3}) == 1);
}

TEST_CASE("a grown model resumes training on the new words", "[trainer]") {
  std::vector<Sentence> first, second;
  for (int i = 0; i < 200; ++i) {
    first.push_back({"the", "black", "cat", "sat"});
    second.push_back({"the", "black", "kitten", "sat"});
  }
  TrainConfig c = tiny();
  c.epochs = 1;
  ModelState m = train(CorpusSource::fromSentences(first), c);
  const auto sizeBefore = m.words.size();
  CHECK(extendVocabulary(m, CorpusSource::fromSentences(second)) == 1);
  REQUIRE(m.words.size() == sizeBefore + 1);
  const auto row = [&](const std::string& w) {
    const auto at = std::find(m.words.begin(), m.words.end(), w);
    REQUIRE(at != m.words.end());
    return m.input.row(at - m.words.begin()).eval();
  };
  const Eigen::RowVectorXf kitten = row("kitten");
  resumeTraining(m, CorpusSource::fromSentences(second), 1);
  CHECK(m.epochsDone == 2);
  CHECK(row("kitten") != kitten);  // trained
}

TEST_CASE("ns_exponent and shrink_windows are stored only when changed", "[trainer]") {
  TrainConfig c;
  CHECK(c.serialize().find("ns_exponent") == std::string::npos);
  CHECK(c.serialize().find("shrink_windows") == std::string::npos);
  c.nsExponent = -1;
  c.shrinkWindows = false;
  const TrainConfig back = TrainConfig::deserialize(c.serialize());
  CHECK(back.nsExponent == -1);
  CHECK_FALSE(back.shrinkWindows);
  c.nsExponent = 11;
  CHECK_THROWS_AS(c.validate(), ConfigError);
}
