// The study stage: runStudy through the library, and `posvec study` end to end
// through the command line.
#include "posvec/study.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "posvec/error.hpp"
#include "posvec/report.hpp"
#include "posvec/tokenizer.hpp"
#include "test_util.hpp"

using namespace posvec;
using nlohmann::json;

namespace {

std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// A small corpus holding the study's sentence (fast to train at a small d_model).
std::string smallCorpus(const test::TempDir& tmp) {
  std::string text;
  for (int i = 0; i < 20; ++i)
    text +=
        "The black cat sat on the couch and the brown dog slept on the rug. The dog sat near the "
        "rug.\n";
  const std::string path = tmp.file("corpus.txt");
  test::writeText(path, text);
  return path;
}

}  // namespace

TEST_CASE("study cli: --json gives the three similarities and the settings", "[study]") {
  test::TempDir tmp;
  const auto r = test::runCli("-q study --corpus " + test::quote(smallCorpus(tmp)) +
                              " --dim 16 --epochs 2 --json");
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  for (const char* key :
       {"word_similarity", "positional_similarity", "combined_similarity", "settings", "pairs"})
    CHECK(j.contains(key));
  CHECK(j["encoding"] == "book");
  CHECK(j["settings"]["dim"] == 16);
  CHECK(j["settings"]["epochs"] == 2);
  CHECK(j["settings"]["window"] == 5);
  CHECK(j["settings"]["min_count"] == 1);
  CHECK(j["pairs"].size() == 2);  // book and interleaved
  CHECK(r.err.empty());
}

TEST_CASE("study cli: more than two pairs are reported pairwise", "[study]") {
  test::TempDir tmp;
  const auto r = test::runCli(
      "-q study --corpus " + test::quote(smallCorpus(tmp)) +
      " --dim 16 --epochs 1 --json --encoding interleaved --pair black:2 --pair brown:10"
      " --pair cat:3");
  REQUIRE(r.status == 0);
  CHECK(json::parse(r.out)["pairs"].size() == 3);
}

TEST_CASE("study cli: bad input gives one error line and no output", "[study]") {
  test::TempDir tmp;
  const std::string corpus = test::quote(smallCorpus(tmp));
  const std::string report = tmp.file("report");
  struct Case {
    std::string args;
    int status;
    std::string needle;
  };
  const Case cases[] = {
      {"study --pair black --pair brown:10", 2, "colon"},
      {"study --pair black:two --pair brown:10", 2, "not a non-negative integer"},
      {"study --corpus " + test::quote(tmp.file("missing.txt")), 3, "missing.txt"},
      {"study --corpus " + corpus + " --vectors " + corpus, 2, "cannot be used together"},
      {"-q study --corpus " + corpus + " --dim 16 --epochs 1 --pair zebra:3 --pair black:2", 5,
       "zebra"},
      {"study --corpus " + corpus + " --dim 15", 2, "15"},
      {"study --corpus " + corpus + " --encoding nope", 2, "nope"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const auto r = test::runCli(c.args + " --report " + test::quote(report));
    CHECK(r.status == c.status);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.rfind("posvec: error: ", 0) == 0);
    CHECK(r.err.find(c.needle) != std::string::npos);
    CHECK(r.out.empty());
    CHECK_FALSE(std::filesystem::exists(report));
  }
}

TEST_CASE("study cli: --report writes the page, the figures and results.json", "[study]") {
  test::TempDir tmp;
  const std::string dir = tmp.file("report");
  const auto r = test::runCli("-q study --corpus " + test::quote(smallCorpus(tmp)) +
                              " --dim 16 --epochs 2 --report " + test::quote(dir));
  REQUIRE(r.status == 0);
  CHECK(r.out.find("black:2 ~ brown:10") != std::string::npos);
  for (const char* f :
       {"index.html", "results.json", "study-similarities.svg", "distance-profile.svg",
        "pe-heatmap-interleaved.svg", "binary-counting.svg", "training.svg"})
    CHECK(std::filesystem::exists(dir + "/" + f));
  const json j = json::parse(test::readText(dir + "/results.json"));
  CHECK(j["training"].size() == 18);  // epochs 1, 2, 5, 10, 20, 50 on three corpus fractions
}

TEST_CASE("study cli: --vectors uses existing vectors without training", "[study]") {
  test::TempDir tmp;
  // word2vec text format, d = 4: black and brown orthogonal, so word similarity 0.
  const std::string vec = tmp.file("v.txt");
  test::writeText(vec, "3 4\nblack 1 0 0 0\nbrown 0 1 0 0\ncat 1 1 0 0\n");
  const auto r = test::runCli("study --vectors " + test::quote(vec) + " --json --scale none");
  REQUIRE(r.status == 0);
  const json j = json::parse(r.out);
  CHECK(j["word_similarity"].get<double>() == Approx(0.0).margin(1e-12));
  CHECK(j["settings"]["trained"] == false);
  CHECK(j["settings"]["dim"] == 4);
  // Hand-computed, d = 4, book: column 2 uses 10000^(2·2/4), so PE[p] = (sin p, cos p,
  // sin(p/10000), cos(p/10000)); scale 1.
  auto pe = [](double p) {
    return std::array<double, 4>{std::sin(p), std::cos(p), std::sin(p / 10000),
                                 std::cos(p / 10000)};
  };
  const auto a = pe(2), b = pe(10);
  const std::array<double, 4> x{1 + a[0], a[1], a[2], a[3]}, y{b[0], 1 + b[1], b[2], b[3]};
  double dot = 0, nx = 0, ny = 0;
  for (int i = 0; i < 4; ++i) dot += x[i] * y[i], nx += x[i] * x[i], ny += y[i] * y[i];
  CHECK(j["combined_similarity"].get<double>() == Approx(dot / std::sqrt(nx * ny)).epsilon(1e-6));
  const auto bad = test::runCli("study --vectors " + test::quote(vec) + " --dim 8");
  CHECK(bad.status == 2);
  CHECK(lines(bad.err) == 1);
  CHECK(bad.err.find("--dim") != std::string::npos);
}

TEST_CASE("study cli: --base reaches the training sweep and the captions", "[study]") {
  // The sweep's model at the full corpus and the study's own epoch count is the
  // study's model (same sentences, config and seed, one thread), so its combined
  // similarity must equal the study's at the requested base, not at 10000.
  test::TempDir tmp;
  const std::string dir = tmp.file("report");
  const auto r = test::runCli("-q study --corpus " + test::quote(smallCorpus(tmp)) +
                              " --dim 16 --epochs 2 --base 500 --encoding interleaved,book"
                              " --report " +
                              test::quote(dir));
  REQUIRE(r.status == 0);
  const json j = json::parse(test::readText(dir + "/results.json"));
  CHECK(j["settings"]["base"] == 500.0);
  const json* full = nullptr;
  for (const auto& t : j["training"])
    if (t["corpus_fraction"] == 1.0 && t["epochs"] == 2) full = &t;
  REQUIRE(full != nullptr);
  CHECK((*full)["word_similarity"].get<double>() == j["word_similarity"].get<double>());
  for (const auto& p : j["pairs"]) {
    INFO(p["encoding"]);
    const std::string key = "combined_" + p["encoding"].get<std::string>();
    REQUIRE(full->contains(key));
    CHECK((*full)[key].get<double>() ==
          Approx(p["combined_similarity"].get<double>()).margin(1e-12));
  }
  const std::string html = test::readText(dir + "/index.html");
  CHECK(html.find("10000^") == std::string::npos);
  CHECK(html.find("sin(p / 500^(2k/d))") != std::string::npos);
  CHECK(html.find("(500^(\u22122k/d))") != std::string::npos);
  // The requested encodings, first one solid, in the captions and the training table.
  CHECK(html.find("Solid: interleaved, dashed: book.") != std::string::npos);
  CHECK(html.find("combined (interleaved)") != std::string::npos);
}

namespace {

// The study's sentences of smallCorpus, read back the way the study reads them.
std::vector<Sentence> sentencesOf(const std::string& path) {
  std::vector<Sentence> out;
  Tokenizer().tokenizeFile(path, [&](Sentence&& s) {
    if (!s.empty()) out.push_back(std::move(s));
  });
  return out;
}

// cos(a·s + PE[pa], b·s + PE[pb]) for the interleaved layout at `base`, from the
// formula in long double (not the encoder).
double referenceCombined(const Eigen::RowVectorXf& a, std::int64_t pa, const Eigen::RowVectorXf& b,
                         std::int64_t pb, double s, double base) {
  const auto d = static_cast<std::size_t>(a.size());
  long double dot = 0, nx = 0, ny = 0;
  for (std::size_t i = 0; i < d; i += 2) {
    const long double f =
        std::pow(static_cast<long double>(base), -static_cast<long double>(i) / d);
    for (std::size_t k = 0; k < 2; ++k) {
      const long double x =
          s * a[static_cast<Eigen::Index>(i + k)] + (k ? std::cos(pa * f) : std::sin(pa * f));
      const long double y =
          s * b[static_cast<Eigen::Index>(i + k)] + (k ? std::cos(pb * f) : std::sin(pb * f));
      dot += x * y, nx += x * x, ny += y * y;
    }
  }
  return static_cast<double>(dot / std::sqrt(nx * ny));
}

}  // namespace

TEST_CASE("study library: runStudy trains, measures and sweeps at the requested base", "[study]") {
  test::TempDir tmp;
  StudyOptions o;
  o.corpus = smallCorpus(tmp);
  o.dim = 16;
  o.epochs = 2;
  o.base = 300;
  o.encodings = {Encoding::Interleaved};
  o.pairs = {{"black", 2}, {"brown", 10}, {"dog", 11}};
  o.sweep = true;
  o.sweepEpochs = {1, 3};
  o.sweepFractions = {0.5, 1.0};
  std::vector<StudyProgress::Stage> stages;
  StudyObserver observer;
  observer.progress = [&](const StudyProgress& p) {
    if (p.finished) stages.push_back(p.stage);
  };
  const StudyResults r = runStudy(o, observer);

  // The model trained independently with the same configuration gives the same
  // vectors (one thread, seeded), hence the study's numbers from the formula.
  const auto sentences = sentencesOf(o.corpus);
  const Embeddings e = embeddingsOf(train(CorpusSource::fromSentences(sentences), o.trainConfig()));
  REQUIRE(r.settings.trained);
  CHECK(r.settings.dim == 16);
  CHECK(r.settings.base == 300);
  CHECK(r.settings.train.minCount == 1);
  CHECK(r.settings.vocabulary == e.size());
  REQUIRE(r.pairs.size() == 3);  // black~brown, black~dog, brown~dog; one encoding
  CHECK(r.pairs[1].b.word == "dog");
  const auto black = e.vector("black"), brown = e.vector("brown");
  CHECK(r.pairs[0].wordSimilarity == Approx(e.similarity("black", "brown")).margin(1e-6));
  CHECK(r.pairs[0].combinedSimilarity ==
        Approx(referenceCombined(black, 2, brown, 10, 4.0, 300)).margin(1e-9));

  // The sweep: per fraction, per epoch count, at base 300 and the requested encoding.
  REQUIRE(r.training.size() == 4);
  CHECK(r.training[0].fraction == 0.5);
  CHECK(r.training[0].sentences == (sentences.size() + 1) / 2);
  for (const auto& t : r.training) {
    INFO(t.fraction << " " << t.epochs);
    REQUIRE(t.combinedSimilarity.size() == 1);
    const std::vector<Sentence> part(sentences.begin(),
                                     sentences.begin() + static_cast<std::ptrdiff_t>(t.sentences));
    TrainConfig c = o.trainConfig();
    c.epochs = t.epochs;
    const Embeddings m = embeddingsOf(train(CorpusSource::fromSentences(part), c));
    CHECK(t.wordSimilarity == Approx(m.similarity("black", "brown")).margin(1e-6));
    CHECK(t.combinedSimilarity[0] ==
          Approx(referenceCombined(m.vector("black"), 2, m.vector("brown"), 10, 4.0, 300))
              .margin(1e-9));
  }
  // Experiments keyed by the requested encoding; the decomposition adds no
  // smaller model since 16 is below every sweep dimension.
  CHECK(r.experiments.profiles.size() == 1);
  CHECK(r.experiments.profiles[0].encoding == Encoding::Interleaved);
  CHECK(r.experiments.decompositions.size() == 4);
  CHECK(std::find(stages.begin(), stages.end(), StudyProgress::Stage::Trained) != stages.end());
  CHECK(std::find(stages.begin(), stages.end(), StudyProgress::Stage::TrainingSweep) !=
        stages.end());
}

TEST_CASE("study library: vectors, refused options and the report from results", "[study]") {
  test::TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  test::writeText(vec, "3 4\nblack 1 0 0 0\nbrown 0 1 0 0\ncat 1 1 0 0\n");
  StudyOptions o;
  o.vectors = vec;
  o.scale = Scale::parse("none");
  const StudyResults r = runStudy(o);
  CHECK_FALSE(r.settings.trained);
  CHECK(r.training.empty());  // nothing to sweep without a corpus
  REQUIRE(r.pairs.size() == 2);
  CHECK(r.pairs[0].encoding == Encoding::Book);
  CHECK(r.pairs[0].wordSimilarity == Approx(0.0).margin(1e-12));
  // cat = black + brown: cos 1/√2 with either.
  StudyOptions cats = o;
  cats.pairs = {{"black", 2}, {"cat", 3}};
  CHECK(runStudy(cats).pairs[0].wordSimilarity == Approx(1 / std::sqrt(2.0)).margin(1e-7));

  auto refusedOption = [](const StudyOptions& bad) {
    try {
      runStudy(bad);
    } catch (const StudyOptionError& e) {
      return e.option();
    }
    return std::string("(accepted)");
  };
  StudyOptions bad = o;
  bad.dim = 8;
  CHECK(refusedOption(bad) == "studyDim");
  bad = o;
  bad.pairs = {{"black", 2}};
  CHECK(refusedOption(bad) == "pairs");
  bad = o;
  bad.encodings = {Encoding::Book, Encoding::Book};
  CHECK(refusedOption(bad) == "encodings");
  bad = o;
  bad.base = 1;
  CHECK(refusedOption(bad) == "base");
  bad = o;
  bad.corpus = vec;
  CHECK(refusedOption(bad) == "vectors");
  bad = o;
  bad.pairs = {{"black", 2}, {"zebra", 3}};
  CHECK_THROWS_AS(runStudy(bad), InputError);

  // The report from the returned value, and runStudy writing it itself: same bytes.
  const std::string mine = tmp.file("mine"), theirs = tmp.file("theirs");
  writeReport(r, mine);
  StudyOptions withReport = o;
  withReport.reportDir = theirs;
  runStudy(withReport);
  for (const auto& f : studyFigures(r)) {
    INFO(f.file);
    CHECK(test::readText(mine + "/" + f.file) == f.svg);
    CHECK(test::readText(theirs + "/" + f.file) == f.svg);
  }
  CHECK(test::readText(mine + "/index.html") == test::readText(theirs + "/index.html"));
}

TEST_CASE("study library: a phrase table joins phrases in the corpus, so a pair may name one",
          "[study][phrases]") {
  test::TempDir tmp;
  std::string text;
  for (int i = 0; i < 20; ++i)
    text += "The black cat in New York sat on the couch and the brown dog slept in New York.\n";
  const std::string corpus = tmp.file("corpus.txt");
  test::writeText(corpus, text);
  const std::string table = tmp.file("phrases.tsv");
  test::writeText(table,
                  "# posvec phrases: min_count=5 threshold=10 scoring=default delimiter=_\n"
                  "# connector_words:\nnew_york\t40\t99.5\n");
  StudyOptions o;
  o.corpus = corpus;
  o.dim = 8;
  o.epochs = 1;
  o.encodings = {Encoding::Interleaved};
  o.pairs = {{"black", 2}, {"new_york", 5}};
  // Without the table "new_york" is no word of the corpus.
  CHECK_THROWS_WITH(runStudy(o), Catch::Contains("'new_york' is not in the vocabulary"));
  StudyOptions plain = o;
  plain.pairs = {{"black", 2}, {"cat", 3}};
  const std::int64_t tokens = runStudy(plain).settings.corpusTokens;
  o.phrases = table;
  const StudyResults r = runStudy(o);
  REQUIRE(r.pairs.size() == 1);
  CHECK(r.pairs[0].b.word == "new_york");
  // Every "new york" was joined, two a line: two tokens fewer a line.
  CHECK(r.settings.corpusTokens == tokens - 2 * 20);
  o.phrases = tmp.file("missing.tsv");
  CHECK_THROWS_AS(runStudy(o), IoError);
  o.phrases = table;
  o.corpus.clear();
  o.vectors = corpus;
  CHECK_THROWS_WITH(runStudy(o), Catch::Contains("phrase table"));
}

TEST_CASE("study library: the attention section of the study sentence", "[study][attention]") {
  test::TempDir tmp;
  const std::string vec = tmp.file("v.txt");
  // Every word of the sentence but "couch" (which becomes the mean row, "<unk>").
  test::writeText(
      vec,
      "11 4\nthe 0.5 0.1 -0.2 0.3\nblack 1 0 0.4 0\nbrown 0.9 0.1 0.5 0\ncat 0 1 0 0.2\n"
      "dog 0.1 0.9 0 0.3\nsat -0.5 0.2 0.1 0.3\nslept -0.4 0.3 0.2 0.2\non 0.2 -0.3 0.6 0\n"
      "and 0 0 -0.5 0.5\nrug 0.3 0.3 0.3 -0.3\n. 0 0 0 0.1\n");
  StudyOptions o;
  o.vectors = vec;
  o.scale = Scale::parse("none");
  const StudyResults r = runStudy(o);
  const AttentionStudy& a = r.attention;
  REQUIRE(a.tokens.size() == 16);
  CHECK(a.tokens[6] == "<unk>");
  CHECK(a.repeatedWord == "the");
  CHECK(a.repeatedAt == std::vector<std::size_t>{0, 5, 8, 13});
  REQUIRE(a.maps.size() == 7);
  const MatrixD& words = a.maps[0].weights;
  // Word vectors only: row q = softmax_k(e_q · e_k / 2), computed here from the file's numbers.
  const std::vector<std::vector<double>> e = {
      {0.5, 0.1, -0.2, 0.3}, {1, 0, 0.4, 0},        {0, 1, 0, 0.2},        {-0.5, 0.2, 0.1, 0.3},
      {0.2, -0.3, 0.6, 0},   {0, 0, 0, 0},          {0, 0, -0.5, 0.5},     {0.5, 0.1, -0.2, 0.3},
      {0.9, 0.1, 0.5, 0},    {0.1, 0.9, 0, 0.3},    {-0.4, 0.3, 0.2, 0.2}, {0.2, -0.3, 0.6, 0},
      {0.5, 0.1, -0.2, 0.3}, {0.3, 0.3, 0.3, -0.3}, {0, 0, 0, 0.1}};
  std::vector<std::vector<double>> rows = {e[0], e[1], e[2], e[3],  e[4], e[0], e[5],  e[6],
                                           e[0], e[8], e[9], e[10], e[4], e[0], e[13], e[14]};
  // "<unk>" is the mean of the 11 vectors (in file order).
  const double mean[4] = {(0.5 + 1 + 0.9 + 0 + 0.1 - 0.5 - 0.4 + 0.2 + 0 + 0.3 + 0) / 11,
                          (0.1 + 0 + 0.1 + 1 + 0.9 + 0.2 + 0.3 - 0.3 + 0 + 0.3 + 0) / 11,
                          (-0.2 + 0.4 + 0.5 + 0 + 0 + 0.1 + 0.2 + 0.6 - 0.5 + 0.3 + 0) / 11,
                          (0.3 + 0 + 0 + 0.2 + 0.3 + 0.3 + 0.2 + 0 + 0.5 - 0.3 + 0.1) / 11};
  rows[6].assign(mean, mean + 4);
  for (std::size_t q = 0; q < 16; ++q) {
    std::vector<double> s(16);
    double m = -1e300, sum = 0;
    for (std::size_t k = 0; k < 16; ++k) {
      for (int c = 0; c < 4; ++c) s[k] += rows[q][c] * rows[k][c] / 2.0;
      m = std::max(m, s[k]);
    }
    for (double& v : s) sum += (v = std::exp(v - m));
    for (std::size_t k = 0; k < 16; ++k)
      CHECK(std::abs(words(static_cast<Eigen::Index>(q), static_cast<Eigen::Index>(k)) -
                     s[k] / sum) < 1e-6);
  }
  CHECK(a.repeatedRowsDiffWords == 0.0);
  CHECK(a.repeatedRowsDiffAdditive > 1e-3);
  const MatrixD& causal = a.maps[3].weights;
  const AttentionMapResult& after = a.maps[4];
  CHECK(after.maskAfterSoftmax);
  for (Eigen::Index i = 0; i < 16; ++i) {
    CHECK(std::abs(causal.row(i).sum() - 1) < 1e-12);
    for (Eigen::Index j = i + 1; j < 16; ++j) CHECK(causal(i, j) == 0.0);
    CHECK(after.rowSums[static_cast<std::size_t>(i)] == Approx(after.weights.row(i).sum()));
    if (i < 15) CHECK(after.rowSums[static_cast<std::size_t>(i)] < 1 - 1e-6);
    // Renormalised, the mistake is the causal map.
    CHECK(
        (after.weights.row(i) / after.weights.row(i).sum() - causal.row(i)).cwiseAbs().maxCoeff() <
        1e-12);
  }
  CHECK((a.maps[5].weights - a.maps[6].weights).cwiseAbs().maxCoeff() > 1e-3);  // two heads differ
  // The figures: one per map, words on both axes.
  const auto figures = studyFigures(r);
  std::size_t found = 0;
  for (const Figure& f : figures)
    if (f.file.rfind("attention-", 0) == 0) {
      ++found;
      CHECK(f.svg.find(">brown</text>") != std::string::npos);
      CHECK(f.svg.find("attention weight") != std::string::npos);
    }
  CHECK(found == 7);
  const json j = json::parse(resultsJson(r));
  CHECK(j["attention"]["maps"].size() == 7);
  CHECK(j["attention"]["repeated_word"] == "the");
}
