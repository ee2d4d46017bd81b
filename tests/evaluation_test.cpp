#include "posvec/evaluation.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "test_util.hpp"

using namespace posvec;
using posvec::test::quote;
using posvec::test::readText;
using posvec::test::runCli;
using posvec::test::TempDir;
using posvec::test::writeText;

namespace {

// man/woman/king/queen where queen = king - man + woman exactly, plus case
// variants and distractors.
Embeddings royalty() {
  MatrixF m(8, 3);
  m << 1, 0, 0,          // man
      0.9f, 0.4f, 0,     // woman
      2, 1, 0.2f,        // king
      1.9f, 1.4f, 0.2f,  // queen
      -1, 0.2f, 0.5f,    // far
      0, 0, 1,           // up
      0.5f, 1.5f, 1.0f,  // Queen (after queen: loses the case-folding tie)
      0.3f, -1, 0;       // rare
  return Embeddings({"man", "woman", "king", "queen", "far", "up", "Queen", "rare"}, m);
}

int countLines(const std::string& s, const std::string& prefix) {
  int n = 0;
  std::size_t p = 0;
  while ((p = s.find(prefix, p)) != std::string::npos) ++n, ++p;
  return n;
}

bool havePython(const std::string& module) {
  return std::system(("/usr/bin/python3 -c 'import " + module + "' >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace

TEST_CASE("evaluation: ranks, Spearman and Pearson match hand-derived values", "[evaluation]") {
  CHECK(averageRanks({10, 20, 20, 30}) == std::vector<double>{1, 2.5, 2.5, 4});
  CHECK(averageRanks({5, 5, 5}) == std::vector<double>{2, 2, 2});
  CHECK(averageRanks({3, 1, 2}) == std::vector<double>{3, 1, 2});
  // No ties: rho = 1 - 6 sum(d^2) / (n (n^2 - 1)) = 1 - 6*4/120.
  CHECK(spearman({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}) == Approx(0.8));
  // Ties: Pearson of ranks {1,2,3,4} and {1,2.5,2.5,4} = 4.5 / sqrt(5 * 4.5) = 3/sqrt(10).
  CHECK(spearman({1, 2, 3, 4}, {1, 2, 2, 3}) == Approx(3 / std::sqrt(10.0)));
  CHECK(spearman({1, 2, 3}, {30, 20, 10}) == Approx(-1.0));
  // Pearson of {1,2,3} and {2,4,7}: sxy = 5, sxx = 2, syy = 114/9.
  CHECK(pearson({1, 2, 3}, {2, 4, 7}) == Approx(5 / std::sqrt(2 * 114.0 / 9)));
  CHECK(std::isnan(pearson({1, 1, 1}, {1, 2, 3})));
  CHECK(std::isnan(pearson({1}, {1})));
}

TEST_CASE("evaluation: upper-casing follows Python's str.upper", "[evaluation]") {
  CHECK(upperCase("queen") == "QUEEN");
  CHECK(upperCase("stra\xC3\x9F"
                  "e") == "STRASSE");                            // ß -> SS
  CHECK(upperCase("\xC3\xA9t\xC3\xA9") == "\xC3\x89T\xC3\x89");  // été -> ÉTÉ
  CHECK(upperCase("\xCE\xB1\xCE\xB2") == "\xCE\x91\xCE\x92");    // αβ -> ΑΒ
}

TEST_CASE("evaluation: analogies resolve, skip OOV questions and count sections", "[evaluation]") {
  TempDir dir;
  const std::string f = dir.file("q.txt");
  writeText(f,
            ": royalty\n"
            "MAN KING woman queen\n"    // resolves (case-insensitive)
            "man woman king Queen\n"    // queen again, via the case-folded key
            "man king woman nowhere\n"  // OOV: skipped
            "man king woman\n"          // not 4 words: ignored
            "\n"
            ": empty\n"
            ": other\n"
            "man king woman far\n");  // answer is queen: incorrect
  const AnalogyResult r = evaluateAnalogies(royalty(), f);
  REQUIRE(r.sections.size() == 3);
  CHECK(r.sections[0].name == "royalty");
  CHECK(r.sections[0].correct == 2);
  CHECK(r.sections[0].incorrect == 0);
  CHECK(r.sections[0].skipped == 1);
  CHECK(r.sections[1].evaluated() == 0);
  CHECK(r.sections[1].accuracy() == 0.0);
  CHECK(r.sections[2].correct == 0);
  CHECK(r.sections[2].incorrect == 1);
  CHECK(r.total.correct == 2);
  CHECK(r.total.evaluated() == 3);
  CHECK(r.total.accuracy() == Approx(2.0 / 3));
  CHECK(r.total.skipped == 1);
  CHECK(r.questions == 4);
  CHECK(r.invalidLines == 1);
  CHECK(r.oovPercent() == Approx(25.0));
  // Case-sensitive: MAN and KING are unknown, Queen is a different word from queen.
  EvalOptions cs;
  cs.caseInsensitive = false;
  const AnalogyResult s = evaluateAnalogies(royalty(), f, cs);
  CHECK(s.sections[0].skipped == 2);
  CHECK(s.sections[0].incorrect == 1);  // answer queen, expected Queen
  // Restricted to the first 3 words: queen is out, so are the questions.
  EvalOptions small;
  small.restrictVocab = 3;
  CHECK(evaluateAnalogies(royalty(), f, small).total.skipped == 4);
}

TEST_CASE("evaluation: analogy files with errors", "[evaluation]") {
  TempDir dir;
  const std::string f = dir.file("q.txt");
  writeText(f, "man king woman queen\n");
  try {
    evaluateAnalogies(royalty(), f);
    FAIL("no error");
  } catch (const FormatError& e) {
    CHECK(std::string(e.what()).find("line 1: question before the first ': section'") !=
          std::string::npos);
  }
  writeText(f, ": s\n");
  CHECK_THROWS_AS(evaluateAnalogies(royalty(), f), InputError);
  writeText(f, ": s\nman king \xFF queen\n");
  CHECK_THROWS_WITH(evaluateAnalogies(royalty(), f), Catch::Contains("line 2: not valid UTF-8"));
  CHECK_THROWS_AS(evaluateAnalogies(royalty(), dir.file("missing.txt")), IoError);
}

TEST_CASE("evaluation: word pairs drop OOV pairs, skip comments and bad lines", "[evaluation]") {
  TempDir dir;
  const std::string f = dir.file("p.tsv");
  writeText(f,
            "# comment\n"
            "MAN\twoman\t8.5\r\n"
            "king\tqueen\t9\n"
            "man\tfar\t1.5\n"
            "king\tnowhere\t3\n"  // OOV
            "man woman 3\n"       // not tab-separated: invalid
            "up\tfar\tabc\n"      // not a number: invalid
            "up\trare\t0.5\n");
  const Embeddings e = royalty();
  const WordPairResult r = evaluateWordPairs(e, f);
  CHECK(r.pairs == 4);
  CHECK(r.oov == 1);
  CHECK(r.invalidLines == 2);
  CHECK(r.oovPercent() == Approx(20.0));
  const std::vector<double> gold{8.5, 9, 1.5, 0.5};
  const std::vector<double> model{e.similarity("man", "woman"), e.similarity("king", "queen"),
                                  e.similarity("man", "far"), e.similarity("up", "rare")};
  CHECK(r.spearman == Approx(spearman(gold, model)));
  CHECK(r.pearson == Approx(pearson(gold, model)));
  writeText(f, "# nothing\nnone\tnada\t1\n");
  CHECK_THROWS_AS(evaluateWordPairs(e, f), InputError);
}

TEST_CASE("evaluation: word pairs refuse scores that are not finite numbers", "[evaluation]") {
  TempDir dir;
  const std::string f = dir.file("p.tsv");
  const Embeddings e = royalty();
  for (const std::string bad : {"nan", "inf", "-Infinity", " NaN "}) {
    INFO(bad);
    writeText(f, "man\twoman\t8.5\nking\tqueen\t" + bad + "\nman\tfar\t1.5\n");
    try {
      evaluateWordPairs(e, f);
      FAIL("expected FormatError");
    } catch (const FormatError& err) {
      CHECK(std::string(err.what()).find("line 2: score '" + bad + "' is not a finite number") !=
            std::string::npos);
    }
  }
}

TEST_CASE("evaluation: numbers match gensim's evaluate_word_analogies and evaluate_word_pairs",
          "[evaluation][gensim]") {
  if (!havePython("gensim")) POSVEC_SKIP("gensim is not installed for /usr/bin/python3");
  TempDir dir;
  // 60 random base words (with case variants that fold together, ß among them)
  // and 30 answer words placed near b - a + c of a random triple.
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0, 1);
  const int base = 60, answers = 30, dim = 8;
  std::vector<std::string> words;
  for (int i = 0; i < base; ++i) words.push_back(std::string(1, 'w').append(std::to_string(i)));
  words[7] =
      "Stra\xC3\x9F"
      "e";
  words[40] = "STRASSE";
  words[12] = "Paris";
  words[50] = "paris";
  for (int i = 0; i < answers; ++i) words.push_back("ans" + std::to_string(i));
  MatrixF m(base + answers, dim);
  for (int i = 0; i < base; ++i)
    for (int j = 0; j < dim; ++j) m(i, j) = g(rng);
  std::uniform_int_distribution<int> pick(0, base - 1);
  std::string questions = ": built\n", pairs = "# w1\tw2\tscore\n";
  for (int i = 0; i < answers; ++i) {
    const int a = pick(rng), b = pick(rng), c = pick(rng);
    Eigen::RowVectorXf v = m.row(b).normalized() - m.row(a).normalized() + m.row(c).normalized();
    for (int j = 0; j < dim; ++j) v[j] += 0.6f * g(rng);
    m.row(base + i) = v;
    questions += words[a] + " " + words[b] + " " + words[c] + " ans" + std::to_string(i) + "\n";
    if (i == 10) questions += ": random\n";
  }
  questions += ": mixed-case\n";
  for (int i = 0; i < 40; ++i) {
    std::string q;
    for (int k = 0; k < 4; ++k) q += (k ? " " : "") + words[pick(rng)];
    questions += q + "\n";
  }
  questions += "PARIS strasse w3 w4\nw1 w2 w3 w99\nw1 w2 w3\nparis w1 w2 ans3\n";
  std::uniform_real_distribution<float> score(0, 10);
  for (int i = 0; i < 50; ++i)
    pairs += words[pick(rng)] + "\t" + words[pick(rng)] + "\t" + std::to_string(score(rng)) + "\n";
  pairs += "PARIS\tstrasse\t7\nw1\tunknown\t3\nbad line\n";
  const Embeddings e(words, m);
  saveVectors(e, dir.file("v.txt"));
  writeText(dir.file("q.txt"), questions);
  writeText(dir.file("p.tsv"), pairs);
  const std::string script = dir.file("eval.py"), out = dir.file("eval.json");
  writeText(script, R"(
import json, sys, logging
from gensim.models import KeyedVectors
d = sys.argv[1]
kv = KeyedVectors.load_word2vec_format(d + '/v.txt')
res = {}
for restrict in (300000, 70):
    score, sections = kv.evaluate_word_analogies(d + '/q.txt', restrict_vocab=restrict)
    p, s, oov = kv.evaluate_word_pairs(d + '/p.tsv', restrict_vocab=restrict)
    res[str(restrict)] = {'score': score, 'sections': [[x['section'], len(x['correct']), len(x['incorrect'])] for x in sections],
                          'pearson': p[0], 'spearman': s[0], 'oov': oov}
json.dump(res, open(d + '/eval.json', 'w'))
)");
  REQUIRE(std::system(("/usr/bin/python3 " + quote(script) + " " + quote(dir.path().string()) +
                       " 2>/dev/null")
                          .c_str()) == 0);
  const auto expected = nlohmann::json::parse(readText(out));
  for (std::size_t restrict : {300000, 70}) {
    INFO("restrict " << restrict);
    const auto& x = expected[std::to_string(restrict)];
    EvalOptions o;
    o.restrictVocab = restrict;
    const AnalogyResult r = evaluateAnalogies(e, dir.file("q.txt"), o);
    REQUIRE(x["sections"].size() == r.sections.size() + 1);
    for (std::size_t i = 0; i < r.sections.size(); ++i) {
      INFO(r.sections[i].name);
      CHECK(x["sections"][i][0].get<std::string>() == r.sections[i].name);
      CHECK(x["sections"][i][1].get<std::size_t>() == r.sections[i].correct);
      CHECK(x["sections"][i][2].get<std::size_t>() == r.sections[i].incorrect);
    }
    CHECK(x["sections"].back()[1].get<std::size_t>() == r.total.correct);
    CHECK(x["score"].get<double>() == Approx(r.total.accuracy()));
    if (restrict == 300000) CHECK(r.total.correct > 5);  // the built section really resolves
    const WordPairResult p = evaluateWordPairs(e, dir.file("p.tsv"), o);
    CHECK(x["pearson"].get<double>() == Approx(p.pearson).margin(1e-6));
    CHECK(x["spearman"].get<double>() == Approx(p.spearman).margin(1e-6));
    CHECK(x["oov"].get<double>() == Approx(p.oovPercent()));
  }
}

TEST_CASE("cli vectors: similarity, similar, analogy and eval print tables and JSON",
          "[evaluation][cli]") {
  TempDir dir;
  const std::string v = dir.file("v.bin");
  saveVectors(royalty(), v);
  auto r = runCli("similarity " + quote(v) + " man woman");
  CHECK(r.status == 0);
  char expect[64];
  std::snprintf(expect, sizeof expect, "%.6f", 0.9 / std::sqrt(0.81 + 0.16));
  CHECK(r.out == "cosine(man, woman) = " + std::string(expect) + "\n");
  r = runCli("similarity " + quote(v) + " man woman --json");
  CHECK(nlohmann::json::parse(r.out)["similarity"].get<double>() == Approx(0.9 / std::sqrt(0.97)));
  r = runCli("similar " + quote(v) + " queen -k 2 --json");
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["neighbours"].size() == 2);
  CHECK(j["neighbours"][0]["word"] == "king");  // cos 0.9855, woman 0.973
  CHECK(j["neighbours"][1]["word"] == "woman");
  r = runCli("similar " + quote(v) + " queen -k 2");
  CHECK(r.out.substr(0, 4) == "word");
  CHECK(r.out.find("\nking   0.98") != std::string::npos);
  r = runCli("analogy " + quote(v) + " man king woman -k 1");
  CHECK(r.status == 0);
  CHECK(r.out.find("queen") != std::string::npos);
  writeText(dir.file("q.txt"), ": royalty\nman king woman queen\n");
  writeText(dir.file("p.tsv"), "man\twoman\t8\nking\tqueen\t9\nman\tfar\t1\n");
  r = runCli("eval " + quote(v) + " --analogies " + quote(dir.file("q.txt")) + " --pairs " +
             quote(dir.file("p.tsv")) + " --json");
  REQUIRE(r.status == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["analogies"]["total"]["correct"] == 1);
  CHECK(j["analogies"]["total"]["accuracy"] == 1.0);
  CHECK(j["pairs"][0]["pairs"] == 3);
  r = runCli("eval " + quote(v) + " --analogies " + quote(dir.file("q.txt")));
  CHECK(r.out.find("Total accuracy") != std::string::npos);
}

TEST_CASE("cli vectors: eval --json with a file name that is not UTF-8", "[evaluation][cli]") {
  TempDir dir;
  const std::string v = dir.file("v\xE9.bin");  // Latin-1 e-acute: not UTF-8
  saveVectors(royalty(), v);
  writeText(dir.file("p.tsv"), "man\twoman\t8\nking\tqueen\t9\nman\tfar\t1\n");
  const auto r = runCli("eval " + quote(v) + " --pairs " + quote(dir.file("p.tsv")) + " --json");
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  // The byte that is not UTF-8 shows as U+FFFD; the rest of the name is kept.
  const std::string shown = j["vectors"].get<std::string>();
  CHECK(shown.size() >= 8);
  CHECK(shown.substr(shown.size() - 8) == "v\xEF\xBF\xBD.bin");
  CHECK(j["pairs"][0]["pairs"] == 3);
}

TEST_CASE("cli vectors: bad input gives one error line and the right exit code",
          "[evaluation][cli]") {
  TempDir dir;
  const std::string v = dir.file("v.txt");
  saveVectors(royalty(), v);
  struct Case {
    std::string args;
    int status;
    std::string says;
  };
  writeText(dir.file("bad.txt"), "3 3\nman 1 2 3\nwoman 1 2\n");
  writeText(dir.file("p.tsv"), "man\twoman\t8\n");
  writeText(dir.file("nan.tsv"), "man\twoman\tnan\nking\tqueen\t9\n");
  const std::vector<Case> cases{
      {"similarity " + quote(v) + " man nobody", 5, "unknown word 'nobody'"},
      {"similarity " + quote(v) + " MAN king", 5, "did you mean 'man'?"},
      {"similar " + quote(dir.file("missing.bin")) + " man", 3, "no such file"},
      {"similar " + quote(dir.path().string()) + " man", 3, "directory"},
      {"similar " + quote(dir.file("bad.txt")) + " man", 4,
       "line 3: expected 3 values after 'woman', found 2"},
      {"analogy " + quote(v) + " man king", 2, ""},
      {"similar " + quote(v) + " man -k 0", 2, ""},
      {"eval " + quote(v), 2, "nothing to evaluate"},
      {"eval " + quote(v) + " --restrict -1 --pairs " + quote(dir.file("p.tsv")), 2,
       "--restrict: must not be negative (got -1)"},
      {"analogy " + quote(v) + " man king woman --restrict -1", 2,
       "--restrict: must not be negative (got -1)"},
      {"eval " + quote(v) + " --pairs " + quote(dir.file("nan.tsv")), 4,
       "line 1: score 'nan' is not a finite number"},
      {"eval " + quote(v) + " --pairs " + quote(dir.file("none.tsv")), 3, "none.tsv"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const auto r = runCli(c.args);
    INFO(r.err);
    CHECK(r.status == c.status);
    CHECK(r.out.empty());
    CHECK(countLines(r.err, "posvec: error:") == 1);
    CHECK(countLines(r.err, "\n") == 1);
    CHECK(r.err.find(c.says) != std::string::npos);
  }
}

namespace {

// 3CosAdd in double, written out: cos(x, b^ - a^ + c^) for every row.
std::vector<double> cosAdd(const Embeddings& e, WordId a, WordId b, WordId c) {
  auto unit = [&](WordId i) {
    Eigen::RowVectorXd v = e.vectors().row(i).cast<double>();
    return Eigen::RowVectorXd(v / v.norm());
  };
  const Eigen::RowVectorXd q = unit(b) - unit(a) + unit(c);
  std::vector<double> out;
  for (std::size_t i = 0; i < e.size(); ++i) out.push_back(unit(static_cast<WordId>(i)).dot(q) / q.norm());
  return out;
}

// Rows ordered by descending score.
std::vector<std::string> ranking(const Embeddings& e, const std::vector<double>& score) {
  std::vector<std::size_t> order(score.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return score[x] > score[y]; });
  std::vector<std::string> out;
  for (const std::size_t i : order) out.push_back(e.words()[i]);
  return out;
}

// man : king :: woman : queen where the query lands nearest king itself, then its
// case variants, then woman and its variant; queen is the best word that is not an
// input or an input's case variant.
Embeddings inputsWin() {
  MatrixF m(8, 3);
  m << 1, 0, 0,                // man
      0, 1, 0,                 // king
      0.6f, 0.8f, 0,           // woman
      -0.6f, 0.5f, 0.6f,       // queen
      0.05f, 1, 0.05f,         // King
      0.04f, 1, -0.05f,        // KING
      0.62f, 0.8f, 0.02f,      // Woman
      0, 0, 1;                 // far
  return Embeddings({"man", "king", "woman", "queen", "King", "KING", "Woman", "far"}, m);
}

}  // namespace

TEST_CASE("evaluation: analogies exclude the inputs and their case variants where they would win",
          "[evaluation]") {
  const Embeddings e = inputsWin();
  const std::vector<double> score = cosAdd(e, 0, 1, 2);
  const std::vector<std::string> rank = ranking(e, score);
  INFO("3CosAdd ranking: " << rank[0] << " " << rank[1] << " " << rank[2] << " " << rank[3] << " "
                           << rank[4] << " " << rank[5]);
  // Preconditions of the case, checked on the double computation above: the five best
  // rows are all inputs or their case variants (so an evaluation without any exclusion,
  // or with only one of the two, answers with an input), and queen comes next.
  REQUIRE(rank[0] == "king");
  for (int i = 0; i < 5; ++i) REQUIRE(upperCase(rank[static_cast<std::size_t>(i)]) != "QUEEN");
  for (int i = 0; i < 5; ++i) REQUIRE(upperCase(rank[static_cast<std::size_t>(i)]) != "MAN");
  REQUIRE(rank[5] == "queen");

  TempDir dir;
  const std::string f = dir.file("q.txt");
  writeText(f, ": royalty\nman king woman queen\nMAN KING WOMAN QUEEN\n");
  // gensim's rule: skip the inputs' rows, take the first of the best 5 whose
  // case-folded key is not an input's: queen for both questions.
  const AnalogyResult r = evaluateAnalogies(e, f);
  CHECK(r.total.correct == 2);
  CHECK(r.total.incorrect == 0);

  // The library call and posvec analogy exclude the three input words themselves:
  // without that, king (cosine rank[0]) would be the answer.
  const auto an = e.analogy("man", "king", "woman", 1);
  REQUIRE(an.size() == 1);
  CHECK(an[0].word != "king");
  CHECK(an[0].word == rank[1]);  // the best row that is not an input word
  CHECK(an[0].similarity == Approx(score[static_cast<std::size_t>(e.id(rank[1]))]).epsilon(1e-5));
  const std::string v = dir.file("v.bin");
  saveVectors(e, v);
  const auto cli = runCli("analogy " + quote(v) + " man king woman -k 3 --json");
  REQUIRE(cli.status == 0);
  const auto j = nlohmann::json::parse(cli.out);
  std::vector<std::string> got;
  for (const auto& row : j["answers"]) got.push_back(row["word"].get<std::string>());
  // rank without man, king and woman.
  std::vector<std::string> want;
  for (const auto& w : rank)
    if (w != "man" && w != "king" && w != "woman" && want.size() < 3) want.push_back(w);
  CHECK(got == want);
  const auto ev = runCli("eval " + quote(v) + " --analogies " + quote(f) + " --json");
  REQUIRE(ev.status == 0);
  CHECK(nlohmann::json::parse(ev.out)["analogies"]["total"]["correct"] == 2);
}
