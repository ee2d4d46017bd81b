// Unknown words in encode, attend and study --pair with a fastText model: a
// model trained by fastText's own CLI in the test, the unknown word's row checked
// against the vector fastText's print-word-vectors gives (scaled and
// position-encoded by a formula written here), and the note on stderr.
#include "posvec/word_lookup.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.hpp"

using posvec::test::quote;
using posvec::test::runCli;
using posvec::test::runShell;
using posvec::test::TempDir;

namespace {

constexpr int kDim = 10;

// "word v1 ... vd" lines (fastText's print-word-vectors, posvec vector) by word.
std::map<std::string, std::vector<double>> vectorLines(const std::string& text) {
  std::map<std::string, std::vector<double>> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string word;
    fields >> word;
    double v;
    while (fields >> v) out[word].push_back(v);
  }
  return out;
}

// Vaswani et al.'s encoding, written out: PE(p, 2i) = sin(p / 10000^(2i/d)),
// PE(p, 2i + 1) = cos(the same angle).
double pe(int position, int column, int d) {
  const int i = column / 2;
  const double angle = position / std::pow(10000.0, 2.0 * i / d);
  return column % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

// The float64 rows of an .npy file posvec wrote ('<f8', version 1.0 header).
std::vector<double> npyDoubles(const std::string& path) {
  const std::string b = posvec::test::readText(path);
  REQUIRE(b.size() > 10);
  REQUIRE(b.find("'<f8'") != std::string::npos);
  const std::size_t header = static_cast<unsigned char>(b[8]) |
                             (static_cast<std::size_t>(static_cast<unsigned char>(b[9])) << 8);
  const std::size_t at = 10 + header;
  std::vector<double> v((b.size() - at) / sizeof(double));
  std::memcpy(v.data(), b.data() + at, v.size() * sizeof(double));
  return v;
}

// A skip-gram model trained by fastText on a generated corpus of inflected stems:
// "walkers" is not in its vocabulary, "walk" is.
struct FastTextModel {
  TempDir tmp;
  std::string bin, vec;
  std::map<std::string, std::vector<double>> reference;  // fastText's own vectors
  FastTextModel() {
    const std::vector<std::string> stems = {"walk", "talk", "run", "jump", "caf\xC3\xA9"};
    const std::vector<std::string> endings = {"", "s", "ed", "ing", "er"};
    std::vector<std::string> vocab;
    for (const auto& s : stems)
      for (const auto& e : endings) vocab.push_back(s + e);
    std::string corpus;
    std::uint64_t x = 777;
    for (int line = 0; line < 300; ++line)
      for (int w = 0; w < 12; ++w) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        corpus += vocab[(x >> 33) % vocab.size()] + (w == 11 ? "\n" : " ");
      }
    posvec::test::writeText(tmp.file("corpus.txt"), corpus);
    const std::string out = tmp.file("m");
    const auto train = runShell("fasttext skipgram -input " + quote(tmp.file("corpus.txt")) +
                                " -output " + quote(out) + " -dim " + std::to_string(kDim) +
                                " -epoch 1 -minCount 1 -thread 1 -bucket 1000 -minn 2 -maxn 5 "
                                "-verbose 0");
    REQUIRE(train.status == 0);
    bin = out + ".bin";
    vec = out + ".vec";
    posvec::test::writeText(tmp.file("words.txt"), "walk\nwalkers\ntalk\n");
    const auto printed = runShell("fasttext print-word-vectors " + quote(bin), tmp.file("words.txt"));
    REQUIRE(printed.status == 0);
    reference = vectorLines(printed.out);
    REQUIRE(reference["walkers"].size() == static_cast<std::size_t>(kDim));
  }
};

// fastText prints 5 significant digits: equal within that rounding (times `scale`).
bool near(double got, double want, double scale = 1) {
  return std::abs(got - want) <= scale * (1e-5 + 5e-5 * std::abs(want / scale));
}

const char* const kNote = "note: not in the vocabulary, built from character n-grams: walkers\n";

}  // namespace

TEST_CASE("encode, attend and study build unknown words from a fastText model's n-grams",
          "[subwords][cli][interop]") {
  if (runShell("command -v fasttext").status != 0)
    POSVEC_SKIP("fasttext is not on PATH (Debian package 'fasttext' 0.9.2 provides it)");
  FastTextModel m;
  const auto& walk = m.reference["walk"];
  const auto& walkers = m.reference["walkers"];
  const double s = std::sqrt(static_cast<double>(kDim));

  SECTION("posvec vector gives fastText's vector for the unknown word") {
    const auto r = runCli("vector " + quote(m.bin) + " walkers");
    REQUIRE(r.status == 0);
    const auto v = vectorLines(r.out)["walkers"];
    REQUIRE(v.size() == walkers.size());
    for (std::size_t c = 0; c < v.size(); ++c) CHECK(near(v[c], walkers[c]));
  }

  SECTION("encode: the row is the n-gram vector x sqrt(d) + PE") {
    const auto r =
        runCli("encode " + quote(m.bin) + " -s 'walk walkers' --format tsv --precision double");
    REQUIRE(r.status == 0);
    CHECK(r.err == kNote);
    std::istringstream rows(r.out);
    std::vector<std::vector<double>> got;
    std::string line;
    while (std::getline(rows, line)) {
      std::istringstream fields(line);
      got.emplace_back();
      double v;
      while (fields >> v) got.back().push_back(v);
    }
    REQUIRE(got.size() == 2);
    for (int c = 0; c < kDim; ++c) {
      INFO("column " << c);
      CHECK(near(got[0][c] - pe(0, c, kDim), s * walk[c], s));
      CHECK(near(got[1][c] - pe(1, c, kDim), s * walkers[c], s));
    }
  }

  SECTION("attend: the input row of the unknown word is built the same way") {
    const std::string dir = m.tmp.file("proj");
    const auto r = runCli("attend " + quote(m.bin) + " -s 'walk walkers' --save-projections " +
                          quote(dir) + " -o " + quote(m.tmp.file("maps.tsv")));
    REQUIRE(r.status == 0);
    CHECK(r.err == kNote);
    const std::vector<double> x = npyDoubles(dir + "/input.npy");
    REQUIRE(x.size() == 2u * kDim);
    for (int c = 0; c < kDim; ++c) {
      INFO("column " << c);
      CHECK(near(x[c] - pe(0, c, kDim), s * walk[c], s));
      CHECK(near(x[kDim + c] - pe(1, c, kDim), s * walkers[c], s));
    }
  }

  SECTION("study --pair: the word similarity of a known and an unknown word") {
    const auto r =
        runCli("study --vectors " + quote(m.bin) + " --pair walk:2 --pair walkers:10 --json");
    REQUIRE(r.status == 0);
    CHECK(r.err == kNote);
    const auto j = nlohmann::json::parse(r.out);
    double dot = 0, na = 0, nb = 0;
    for (int c = 0; c < kDim; ++c) {
      dot += walk[c] * walkers[c];
      na += walk[c] * walk[c];
      nb += walkers[c] * walkers[c];
    }
    CHECK(j["word_similarity"].get<double>() ==
          Approx(dot / std::sqrt(na * nb)).margin(1e-4));
    CHECK(j["settings"]["built_from_ngrams"] == nlohmann::json::array({"walkers"}));
    // The vocabulary is the model's (the .vec beside it starts "WORDS DIM"), without the built word.
    std::istringstream head(posvec::test::readText(m.vec));
    std::size_t words = 0;
    head >> words;
    CHECK(j["settings"]["vocabulary"].get<std::size_t>() == words);
  }

  SECTION("words in the vocabulary are not noted") {
    const auto r = runCli("encode " + quote(m.bin) + " -s 'walk talk'");
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
  }

  SECTION("the .vec beside the model has no n-grams: unknown words are refused as before") {
    const auto r = runCli("encode " + quote(m.vec) + " -s 'walk walkers'");
    CHECK(r.status != 0);
    CHECK(r.err.find("unknown word 'walkers'") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    const auto a = runCli("attend " + quote(m.vec) + " -s 'walk walkers'");
    CHECK(a.status != 0);
    CHECK(a.err.find("unknown word 'walkers'") != std::string::npos);
    const auto z = runCli("encode " + quote(m.vec) + " -s 'walk walkers' --unk zero");
    CHECK(z.status == 0);
    CHECK(z.err.empty());
  }
}

TEST_CASE("LookupVectors: a word2vec file knows its words only", "[subwords]") {
  TempDir tmp;
  posvec::test::writeText(tmp.file("v.txt"), "2 2\nab 1 2\ncd 0.5 -0.25\n");
  const posvec::LookupVectors v = posvec::loadLookupVectors(tmp.file("v.txt"));
  CHECK_FALSE(v.subwords);
  REQUIRE(v.vector("cd"));
  CHECK((*v.vector("cd"))[1] == -0.25f);
  CHECK_FALSE(v.vector("zz"));
  CHECK_FALSE(v.builds("zz"));
}

TEST_CASE("LookupVectors: a fastText model's vocabulary, its rows read whole or as needed",
          "[subwords]") {
  // Three words with 3-character n-grams: 4 to 6 rows each. With 5000 buckets they list
  // under an eighth of the input matrix (read as needed); with 5 buckets far more (read
  // whole). Either way each word's vector is the mean of its rows, computed here from
  // the rows the test wrote.
  TempDir tmp;
  const std::vector<std::string> words{"ab", "abc", "xyz"};
  const std::vector<std::int64_t> counts{5, 3, 2};
  for (const std::int32_t bucket : {5000, 5}) {
    INFO("buckets " << bucket);
    posvec::FastTextArgs args;
    args.dim = 4;
    args.bucket = bucket;
    args.minn = 3;
    args.maxn = 3;
    posvec::MatrixF input(3 + bucket, 4), output(3, 4);
    for (Eigen::Index r = 0; r < input.rows(); ++r)
      for (Eigen::Index j = 0; j < 4; ++j) input(r, j) = static_cast<float>(r * 4 + j) / 1000.0f;
    output.setZero();
    const std::string path = tmp.file("m" + std::to_string(bucket) + ".bin");
    posvec::saveFastText(path, words, counts, input, output, args);
    const posvec::LookupVectors v = posvec::loadLookupVectors(path);
    REQUIRE(v.subwords);
    CHECK(v.subwords->input().size() == (bucket == 5000 ? 0 : input.size()));
    REQUIRE(v.vectors.size() == 3);
    for (std::size_t w = 0; w < words.size(); ++w) {
      const auto rows = posvec::ngramRows(words[w], 3, 3, static_cast<std::uint32_t>(bucket), 3);
      for (Eigen::Index j = 0; j < 4; ++j) {
        double sum = input(static_cast<Eigen::Index>(w), j);
        for (const auto r : rows) sum += input(static_cast<Eigen::Index>(r), j);
        const double mean = sum / static_cast<double>(rows.size() + 1);
        CHECK(v.vectors.vectors()(static_cast<Eigen::Index>(w), j) == Approx(mean).margin(1e-6));
      }
    }
    // Unknown words still come from the n-gram rows, and are the ones noted.
    CHECK(v.builds("abd"));
    CHECK_FALSE(v.builds("abc"));
  }
}
