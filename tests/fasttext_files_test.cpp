// Writing fastText's .bin. The bytes are decoded here field by field from
// fastText 0.9.2's layout (written out below, independently of the writer), the
// expected values worked out by hand; fastText's own CLI then reads posvec's files
// (skipped with the reason when `fasttext` is not installed).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "posvec/error.hpp"
#include "posvec/fasttext_export.hpp"
#include "posvec/formats.hpp"
#include "posvec/subwords.hpp"
#include "posvec/trainer.hpp"
#include "test_util.hpp"

using namespace posvec;
using posvec::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Reads the little-endian fields of a file in order.
struct Decoder {
  std::string bytes;
  std::size_t at = 0;
  template <typename T>
  T get() {
    REQUIRE(at + sizeof(T) <= bytes.size());
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string cstring() {
    const std::size_t end = bytes.find('\0', at);
    REQUIRE(end != std::string::npos);
    std::string s = bytes.substr(at, end - at);
    at = end + 1;
    return s;
  }
};

// FNV-1a 32 with fastText's sign-extended bytes, written again here.
std::uint32_t refHash(const std::string& s) {
  std::uint64_t h = 2166136261ull;
  for (unsigned char b : s) {
    const std::uint64_t x = b >= 0x80 ? (0xFFFFFF00ull | b) : b;
    h = ((h ^ x) * 16777619ull) % 4294967296ull;
  }
  return static_cast<std::uint32_t>(h);
}

// A small model: "the" and "café", dimension 2, 3 buckets, n-grams of 2 to 4.
struct Small {
  std::vector<std::string> words = {"the", "caf\xC3\xA9"};
  std::vector<std::int64_t> counts = {7, 3};
  MatrixF input{5, 2};
  MatrixF output{2, 2};
  FastTextArgs args;
  Small() {
    for (int r = 0; r < 5; ++r)
      for (int c = 0; c < 2; ++c) input(r, c) = static_cast<float>(10 * r + c);
    output << 0.25f, -0.5f, 1.5f, 2.0f;
    args.dim = 2;
    args.ws = 4;
    args.epoch = 3;
    args.minCount = 2;
    args.neg = 6;
    args.loss = FastTextLoss::NegativeSampling;
    args.model = FastTextModel::Cbow;
    args.bucket = 3;
    args.minn = 2;
    args.maxn = 4;
    args.lrUpdateRate = 50;
    args.t = 1e-3;
  }
};

bool rowsEqual(const MatrixF& a, const MatrixF& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && a == b;
}

std::string inputError(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace

TEST_CASE("fastText writer: every field of the .bin decoded independently", "[subwords][write]") {
  TempDir tmp;
  const std::string path = tmp.file("small.bin");
  Small s;
  saveFastText(path, s.words, s.counts, s.input, s.output, s.args);
  Decoder d{posvec::test::readText(path)};
  CHECK(d.get<std::int32_t>() == 793712314);
  CHECK(d.get<std::int32_t>() == 12);
  // Args: dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate t.
  const std::int32_t args[12] = {2, 4, 3, 2, 6, 1, 2 /*ns*/, 1 /*cbow*/, 3, 2, 4, 50};
  for (std::int32_t want : args) CHECK(d.get<std::int32_t>() == want);
  CHECK(d.get<double>() == 1e-3);
  // Dictionary: size, nwords, nlabels, ntokens (7 + 3), no pruned table.
  CHECK(d.get<std::int32_t>() == 2);
  CHECK(d.get<std::int32_t>() == 2);
  CHECK(d.get<std::int32_t>() == 0);
  CHECK(d.get<std::int64_t>() == 10);
  CHECK(d.get<std::int64_t>() == -1);
  CHECK(d.cstring() == "the");
  CHECK(d.get<std::int64_t>() == 7);
  CHECK(d.get<std::int8_t>() == 0);
  CHECK(d.cstring() == "caf\xC3\xA9");
  CHECK(d.get<std::int64_t>() == 3);
  CHECK(d.get<std::int8_t>() == 0);
  // Input: not quantized, 5 x 2, row r = (10r, 10r + 1).
  CHECK(d.get<std::uint8_t>() == 0);
  CHECK(d.get<std::int64_t>() == 5);
  CHECK(d.get<std::int64_t>() == 2);
  for (int r = 0; r < 5; ++r) {
    CHECK(d.get<float>() == 10.0f * r);
    CHECK(d.get<float>() == 10.0f * r + 1);
  }
  // Output: not quantized, 2 x 2.
  CHECK(d.get<std::uint8_t>() == 0);
  CHECK(d.get<std::int64_t>() == 2);
  CHECK(d.get<std::int64_t>() == 2);
  for (float want : {0.25f, -0.5f, 1.5f, 2.0f}) CHECK(d.get<float>() == want);
  // Nothing after: 8 + 56 + 28 + (4 + 9) + (6 + 9) + 17 + 40 + 17 + 16 bytes.
  CHECK(d.at == d.bytes.size());
  CHECK(d.bytes.size() == 210);

  // An explicit token count is written as given.
  s.args.ntokens = 12345;
  saveFastText(path, s.words, s.counts, s.input, s.output, s.args);
  Decoder e{posvec::test::readText(path)};
  e.at = 8 + 56 + 12;
  CHECK(e.get<std::int64_t>() == 12345);
}

TEST_CASE("fastText writer: posvec reads its file back, and writes a read file unchanged",
          "[subwords][write]") {
  TempDir tmp;
  const std::string path = tmp.file("small.bin");
  Small s;
  saveFastText(path, s.words, s.counts, s.input, s.output, s.args);
  const SubwordModel m = SubwordModel::load(path);
  CHECK(m.words() == s.words);
  CHECK(m.counts() == s.counts);
  CHECK(rowsEqual(m.input(), s.input));
  CHECK(rowsEqual(m.output(), s.output));
  CHECK(m.args().ws == 4);
  CHECK(m.args().model == FastTextModel::Cbow);
  CHECK(m.args().lrUpdateRate == 50);
  CHECK(m.args().ntokens == 10);
  // "the": its row 0 and the rows 2 + h % 3 of <t <th <the th the the> he he> e>.
  double x = 0;
  const std::vector<std::string> grams = {"<t",   "<th", "<the", "th", "the",
                                          "the>", "he",  "he>",  "e>"};
  for (const auto& g : grams) x += 10.0 * (2 + refHash(g) % 3);
  x /= static_cast<double>(grams.size() + 1);
  CHECK(m.vector("the")[0] == Approx(x).epsilon(1e-6));

  // load() then save(): the same bytes.
  const std::string again = tmp.file("again.bin");
  m.save(again);
  CHECK(posvec::test::readText(again) == posvec::test::readText(path));
  // open() keeps the matrices in the file: nothing to save from.
  CHECK_THROWS_AS(SubwordModel::open(path).save(tmp.file("x.bin")), ConfigError);
  CHECK_FALSE(fs::exists(tmp.file("x.bin")));

  // Hierarchical softmax: word2vec.c's nwords - 1 inner nodes and a zero row.
  s.args.loss = FastTextLoss::HierarchicalSoftmax;
  MatrixF inner(1, 2);
  inner << 3.0f, 4.0f;
  saveFastText(path, s.words, s.counts, s.input, inner, s.args);
  MatrixF padded(2, 2);
  padded << 3.0f, 4.0f, 0.0f, 0.0f;
  CHECK(rowsEqual(SubwordModel::load(path).output(), padded));
  // No output layer at all: zeros.
  saveFastText(path, s.words, s.counts, s.input, MatrixF(), s.args);
  CHECK(SubwordModel::load(path).output().isZero());
  CHECK(SubwordModel::load(path).output().rows() == 2);
}

TEST_CASE("fastText writer: an inconsistent model is one line and no file", "[subwords][write]") {
  TempDir tmp;
  const std::string path = tmp.file("bad.bin");
  using Catch::Matchers::Contains;
  auto saved = [&](auto change) {
    Small s;
    change(s);
    return inputError([&] { saveFastText(path, s.words, s.counts, s.input, s.output, s.args); });
  };
  CHECK_THAT(
      saved([](Small& s) { s.input = MatrixF::Zero(4, 2); }),
      Contains("the input matrix is 4 x 2 but 2 words and 3 buckets of dimension 2 need 5 x 2"));
  CHECK_THAT(saved([](Small& s) { s.args.bucket = 4; }), Contains("need 6 x 2"));
  CHECK_THAT(saved([](Small& s) { s.args.dim = 3; }), Contains("need 5 x 3"));
  CHECK_THAT(saved([](Small& s) { s.output = MatrixF::Zero(3, 2); }),
             Contains("the output matrix is 3 x 2, expected 2 x 2"));
  CHECK_THAT(saved([](Small& s) { s.output = MatrixF::Zero(1, 2); }),
             Contains("the output matrix is 1 x 2"));
  CHECK_THAT(saved([](Small& s) { s.counts.pop_back(); }), Contains("2 words but 1 counts"));
  CHECK_THAT(saved([](Small& s) { s.counts[1] = -1; }), Contains("negative count"));
  CHECK_THAT(saved([](Small& s) { s.words[1] = ""; }), Contains("word 2 ('') is empty"));
  CHECK_THAT(saved([](Small& s) { s.words[1] = std::string("a\0b", 3); }),
             Contains("contains a NUL byte"));
  CHECK_THAT(saved([](Small& s) { s.words[1] = "the"; }), Contains("'the' appears twice"));
  CHECK_THAT(saved([](Small& s) { s.args.minn = 5; }), Contains("n-gram lengths 5..4"));
  CHECK_THAT(saved([](Small& s) { s.args.dim = 0; }), Contains("dimension 0"));
  CHECK_THAT(saved([](Small& s) { s.args.loss = static_cast<FastTextLoss>(7); }),
             Contains("unknown loss 7"));
  CHECK_THAT(saved([](Small& s) { s.args.model = static_cast<FastTextModel>(3); }),
             Contains("unknown model kind 3"));
  CHECK(saved([](Small&) {}) == "(no InputError)");
  fs::remove(path);
  CHECK(saved([](Small& s) { s.counts[0] = -2; }).rfind("cannot save fastText model '" + path, 0) ==
        0);
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("fastText writer: a training state with subwords, its settings in fastText's terms",
          "[subwords][write]") {
  TempDir tmp;
  const std::string path = tmp.file("state.bin");
  TrainConfig c;
  c.dim = 2;
  c.window = 7;
  c.epochs = 9;
  c.minCount = 1;
  c.negative = 4;
  c.sample = 2e-4;
  c.loss = Loss::HierarchicalSoftmax;
  c.architecture = Architecture::Cbow;
  c.subwords = true;
  c.minn = 2;
  c.maxn = 5;
  c.bucket = 3;
  ModelState m;
  m.words = {"a", "b", "c"};
  m.counts = {5, 4, 1};
  m.input = MatrixF::Constant(6, 2, 0.5f);
  m.output = MatrixF::Constant(2, 2, -1.0f);  // hierarchical softmax: V - 1 inner nodes
  m.config = c.serialize() + "corpus.lowercase=1\n";
  saveFastTextModel(m, path);
  Decoder d{posvec::test::readText(path)};
  d.at = 8;
  // dim ws epoch minCount neg wordNgrams loss(hs) model(cbow) bucket minn maxn lrUpdateRate t.
  const std::int32_t args[12] = {2, 7, 9, 1, 4, 1, 1, 1, 3, 2, 5, 100};
  for (std::int32_t want : args) CHECK(d.get<std::int32_t>() == want);
  CHECK(d.get<double>() == 2e-4);
  CHECK(d.get<std::int32_t>() == 3);
  d.at += 8;
  CHECK(d.get<std::int64_t>() == 10);  // ntokens: the counts' sum
  const SubwordModel back = SubwordModel::load(path);
  CHECK(back.words() == m.words);
  CHECK(back.input() == m.input);
  // fastText's hierarchical softmax labels an inner node by its code, posvec by 1 - code.
  CHECK(back.output().topRows(2) == MatrixF::Constant(2, 2, 1.0f));
  CHECK(back.output().row(2).isZero());

  // Skip-gram with negative sampling.
  c.loss = Loss::NegativeSampling;
  c.architecture = Architecture::SkipGram;
  CHECK(fastTextArgs(c).loss == FastTextLoss::NegativeSampling);
  CHECK(fastTextArgs(c).model == FastTextModel::SkipGram);
  // A word-only model has no n-gram rows: refused before anything is written.
  c.subwords = false;
  m.config = c.serialize();
  fs::remove(path);
  try {
    saveFastTextModel(m, path);
    FAIL("a word-only model was written");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("needs subword training"));
  }
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("fastText writer: a model trained in 16 bits is written as its widened rows",
          "[subwords][write][half]") {
  TempDir tmp;
  TrainConfig c;
  c.dim = 40;  // 20,000 buckets of 40: the writer widens the input matrix in 4 chunks
  c.epochs = 1;
  c.minCount = 1;
  c.threads = 1;
  c.subwords = true;
  c.bucket = 20000;
  for (const WeightType type : {WeightType::Bf16, WeightType::Fp16}) {
    c.weights = type;
    std::vector<Sentence> text;
    for (int i = 0; i < 50; ++i) text.push_back({"the", "black", "cat", "sat", "on", "a", "mat"});
    const ModelState m = train(CorpusSource::fromSentences(text), c);
    REQUIRE(m.packed != PackedWeights::None);
    const std::string path = tmp.file(std::string("h-") + weightTypeName(type) + ".bin");
    saveFastTextModel(m, path);
    const SubwordModel back = SubwordModel::load(path);
    REQUIRE(back.input().rows() == m.input.rows());
    REQUIRE(back.output().rows() == m.output.rows());
    // Each stored 16-bit value widened: bfloat16 its bits shifted, binary16 converted
    // by the bit layout (sign, 5-bit exponent, 10-bit fraction) in float64.
    auto widen = [&](const MatrixF& matrix, Eigen::Index r, Eigen::Index j) {
      const auto* h = reinterpret_cast<const std::uint16_t*>(matrix.data());
      const std::uint16_t x = h[static_cast<std::size_t>(r * matrix.cols() + j)];
      if (type == WeightType::Bf16) {
        const std::uint32_t bits = static_cast<std::uint32_t>(x) << 16;
        float f;
        std::memcpy(&f, &bits, 4);
        return static_cast<double>(f);
      }
      const int e = (x >> 10) & 31, frac = x & 1023;
      const double v = e == 0 ? std::ldexp(frac, -24) : std::ldexp(1024 + frac, e - 25);
      return (x & 0x8000) ? -v : v;
    };
    for (Eigen::Index r = 0; r < m.input.rows(); ++r)
      for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(c.dim); ++j)
        REQUIRE(static_cast<double>(back.input()(r, j)) == widen(m.input, r, j));
    for (Eigen::Index r = 0; r < m.output.rows(); ++r)
      for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(c.dim); ++j)
        REQUIRE(static_cast<double>(back.output()(r, j)) == widen(m.output, r, j));
  }
}

TEST_CASE("posvec train --format fasttext refuses a word-only training in one line",
          "[subwords][write][cli]") {
  TempDir tmp;
  posvec::test::writeText(tmp.file("c.txt"), "a b c a b a\n");
  const auto r = posvec::test::runCli("train " + posvec::test::quote(tmp.file("c.txt")) + " -o " +
                                      posvec::test::quote(tmp.file("m.bin")) +
                                      " --format fasttext --dim 4 --min-count 1");
  CHECK(r.status != 0);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Matchers::Contains("--subwords"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(tmp.file("m.bin")));
}

namespace {

// Parses `fasttext print-word-vectors` output: word -> values.
std::vector<std::pair<std::string, std::vector<double>>> parsePrinted(const std::string& text) {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string word;
    fields >> word;
    std::vector<double> v;
    for (double x; fields >> x;) v.push_back(x);
    out.emplace_back(word, v);
  }
  return out;
}

// fastText prints 5 significant digits: equal to 1e-5 within that rounding.
bool closeTo(double a, double b) { return std::abs(a - b) <= 1e-5 + 5e-5 * std::abs(b); }

bool haveFastText() { return posvec::test::runShell("command -v fasttext").status == 0; }

}  // namespace

TEST_CASE("fastText interop: fastText reads posvec's .bin of its own model unchanged",
          "[subwords][write][interop]") {
  if (!haveFastText())
    POSVEC_SKIP("fasttext is not on PATH (Debian package 'fasttext' 0.9.2 provides it)");
  TempDir tmp;
  std::string corpus;
  const std::vector<std::string> vocab = {"walk",   "walks",       "walked",       "talk", "talks",
                                          "talked", "caf\xC3\xA9", "caf\xC3\xA9s", "run",  "runs"};
  std::uint64_t x = 99;
  for (int line = 0; line < 300; ++line)
    for (int w = 0; w < 10; ++w) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      corpus += vocab[(x >> 33) % vocab.size()] + (w == 9 ? "\n" : " ");
    }
  posvec::test::writeText(tmp.file("corpus.txt"), corpus);
  const std::string theirs = tmp.file("ft");
  REQUIRE(posvec::test::runShell("fasttext cbow -input " +
                                 posvec::test::quote(tmp.file("corpus.txt")) + " -output " +
                                 posvec::test::quote(theirs) +
                                 " -dim 8 -epoch 1 -minCount 1 -thread 1 -bucket 500 -minn 2 "
                                 "-maxn 4 -verbose 0")
              .status == 0);
  const std::string ours = tmp.file("posvec.bin");
  const SubwordModel m = SubwordModel::load(theirs + ".bin");
  m.save(ours);
  // The same model written by posvec is the same file.
  CHECK(posvec::test::readText(ours) == posvec::test::readText(theirs + ".bin"));

  // Vectors of known and unknown words, as fastText prints them from each file.
  posvec::test::writeText(tmp.file("q.txt"),
                          "walk\ncaf\xC3\xA9s\nwalking\nunknownish\n\xE6\x97\xA5\nx\n");
  const auto a = posvec::test::runShell(
      "fasttext print-word-vectors " + posvec::test::quote(theirs + ".bin"), tmp.file("q.txt"));
  const auto b = posvec::test::runShell("fasttext print-word-vectors " + posvec::test::quote(ours),
                                        tmp.file("q.txt"));
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  CHECK(a.out == b.out);
  const auto printed = parsePrinted(b.out);
  REQUIRE(printed.size() == 6);
  for (const auto& [word, values] : printed) {
    INFO(word);
    REQUIRE(values.size() == 8);
    const Eigen::RowVectorXf v = m.vector(word);
    for (std::size_t i = 0; i < 8; ++i) CHECK(closeTo(v[static_cast<Eigen::Index>(i)], values[i]));
  }
  // Nearest neighbours from posvec's file.
  posvec::test::writeText(tmp.file("nn.txt"), "walks\n");
  const auto nn =
      posvec::test::runShell("fasttext nn " + posvec::test::quote(ours) + " 3", tmp.file("nn.txt"));
  CHECK(nn.status == 0);
  CHECK(nn.out.find("walk") != std::string::npos);
}

TEST_CASE("fastText interop: fastText reads a model posvec composed itself",
          "[subwords][write][interop]") {
  if (!haveFastText())
    POSVEC_SKIP("fasttext is not on PATH (Debian package 'fasttext' 0.9.2 provides it)");
  TempDir tmp;
  const std::string path = tmp.file("composed.bin");
  // Three words, dimension 3, 7 buckets, n-grams 3..5; row r = (r, r / 2, -r / 4).
  const std::vector<std::string> words = {"</s>", "apple", "\xC3\xA9t\xC3\xA9"};
  const std::vector<std::int64_t> counts = {9, 5, 2};
  MatrixF input(10, 3);
  for (int r = 0; r < 10; ++r) input.row(r) << r, r / 2.0f, -r / 4.0f;
  FastTextArgs args;
  args.dim = 3;
  args.bucket = 7;
  args.minn = 3;
  args.maxn = 5;
  args.loss = FastTextLoss::HierarchicalSoftmax;  // fastText builds its tree from the counts
  saveFastText(path, words, counts, input, MatrixF(), args);
  const std::vector<std::string> queries = {"apple", "\xC3\xA9t\xC3\xA9", "apples", "zz"};
  std::string q;
  for (const auto& w : queries) q += w + "\n";
  posvec::test::writeText(tmp.file("q.txt"), q);
  const auto r = posvec::test::runShell("fasttext print-word-vectors " + posvec::test::quote(path),
                                        tmp.file("q.txt"));
  REQUIRE(r.status == 0);
  const auto printed = parsePrinted(r.out);
  REQUIRE(printed.size() == queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const std::string& w = queries[i];
    INFO(w);
    CHECK(printed[i].first == w);
    // The mean of the word's own row (if any) and its n-gram rows 3 + h % 7,
    // the n-grams listed by hand from "<w>".
    std::vector<int> rows;
    std::vector<std::string> grams;
    if (w == "apple") {
      rows.push_back(1);
      grams = {"<ap", "<app", "<appl", "app", "appl", "apple",
               "ppl", "pple", "pple>", "ple", "ple>", "le>"};
    } else if (w == "\xC3\xA9t\xC3\xA9") {
      rows.push_back(2);
      grams = {"<\xC3\xA9t",        "<\xC3\xA9t\xC3\xA9", "<\xC3\xA9t\xC3\xA9>",
               "\xC3\xA9t\xC3\xA9", "\xC3\xA9t\xC3\xA9>", "t\xC3\xA9>"};
    } else if (w == "apples") {
      grams = {"<ap",   "<app", "<appl", "app",   "appl", "apple", "ppl", "pple",
               "pples", "ple",  "ples",  "ples>", "les",  "les>",  "es>"};
    } else {
      grams = {"<zz", "<zz>", "zz>"};
    }
    for (const auto& g : grams) rows.push_back(3 + static_cast<int>(refHash(g) % 7));
    double sum = 0;
    for (int row : rows) sum += row;
    const double mean = sum / static_cast<double>(rows.size());
    REQUIRE(printed[i].second.size() == 3);
    CHECK(closeTo(mean, printed[i].second[0]));
    CHECK(closeTo(mean / 2, printed[i].second[1]));
    CHECK(closeTo(-mean / 4, printed[i].second[2]));
  }
}

TEST_CASE("posvec train --subwords -o FILE.bin writes fastText's format, with its n-gram rows",
          "[subwords][write][cli]") {
  TempDir tmp;
  posvec::test::writeText(tmp.file("c.txt"),
                          "the black cat sat on the mat\nthe brown dog sat on the rug\n");
  const std::string c = posvec::test::quote(tmp.file("c.txt"));
  const auto r = posvec::test::runCli("train " + c + " --subwords -o " +
                                      posvec::test::quote(tmp.file("sub.bin")) +
                                      " --dim 4 --min-count 1 --bucket 100 --epochs 1 -t 1");
  REQUIRE(r.status == 0);
  CHECK_THAT(r.err, Catch::Matchers::Contains("(fasttext)"));
  // fastText's magic number, then an unseen word answered from its n-grams.
  std::ifstream in(tmp.file("sub.bin"), std::ios::binary);
  std::int32_t magic = 0;
  in.read(reinterpret_cast<char*>(&magic), sizeof magic);
  CHECK(magic == 793712314);
  const auto q = posvec::test::runCli("similar " + posvec::test::quote(tmp.file("sub.bin")) +
                                      " blackest -k 1");
  CHECK(q.status == 0);
  CHECK_THAT(q.err, Catch::Matchers::Contains("built from character n-grams: blackest"));
  // An explicit --format bin keeps word2vec's format and says what it leaves out.
  const auto w = posvec::test::runCli("train " + c + " --subwords --format bin -o " +
                                      posvec::test::quote(tmp.file("w.bin")) +
                                      " --dim 4 --min-count 1 --bucket 100 --epochs 1 -t 1");
  REQUIRE(w.status == 0);
  CHECK_THAT(w.err, Catch::Matchers::Contains("note: word vectors only; the n-gram rows"));
  // word2vec binary: "V D" with the 9 distinct words of the two lines, counted by hand.
  CHECK(posvec::test::readText(tmp.file("w.bin")).rfind("9 4\n", 0) == 0);
}

TEST_CASE("a fastText command line gets posvec's spelling, which trains what fastText reads",
          "[subwords][cli]") {
  // fastText's defaults (its Args): dim 100, lr 0.05, t 1e-4, minCount 5, ws 5, epoch 5,
  // neg 5, minn 3, maxn 6; posvec spells out those that differ from its own.
  const auto run = [](const std::string& line) { return posvec::test::runCli(line); };
  const auto r = run("train -input c.txt -output ft -minn 3 -maxn 6 -dim 50 -epoch 2");
  CHECK(r.status == 2);
  CHECK(r.err ==
        "posvec: error: train: these are fastText's options; in posvec's spelling: posvec train "
        "c.txt --subwords -o ft.bin --also-vec --minn 3 --maxn 6 --dim 50 --epochs 2 --alpha 0.05 "
        "--sample 0.0001\n");
  const auto sg = run("skipgram -input c.txt -output ft -lr 0.1 -t 0.001 -thread 2");
  CHECK(sg.status == 2);
  CHECK(sg.err ==
        "posvec: error: 'skipgram' is fastText's command; in posvec's spelling: posvec train "
        "c.txt --subwords -o ft.bin --also-vec --alpha 0.1 --sample 0.001 --threads 2 --dim "
        "100\n");
  const auto cb = run("cbow -input c.txt -output ft -loss hs -wordNgrams 2");
  CHECK_THAT(cb.err, Catch::Matchers::Contains(
                         "posvec train c.txt --subwords --cbow -o ft.bin --also-vec"));
  CHECK_THAT(cb.err, Catch::Matchers::Contains("-loss hs: posvec's subword training uses "
                                               "negative sampling"));
  CHECK_THAT(cb.err, Catch::Matchers::Contains("-wordNgrams is not used"));
  const auto bare = run("-input c.txt -output ft");
  CHECK(bare.status == 2);
  CHECK_THAT(bare.err, Catch::Matchers::StartsWith("posvec: error: these are fastText's options"));
  for (const char* cmd : {"nn ft.bin", "print-word-vectors ft.bin", "supervised -input x"}) {
    const auto other = run(cmd);
    INFO(cmd);
    CHECK(other.status == 2);
    CHECK_THAT(other.err, Catch::Matchers::Contains("is fastText's"));
    CHECK(std::count(other.err.begin(), other.err.end(), '\n') == 1);
  }
  // word2vec.c's lines keep their own translation.
  CHECK_THAT(run("train -train c.txt -output v.bin").err,
             Catch::Matchers::Contains("these are word2vec.c's options"));

  // The translation runs, and fastText's own CLI reads what it wrote.
  TempDir tmp;
  posvec::test::writeText(tmp.file("c.txt"),
                          "the black cat sat on the mat\nthe brown dog sat on the rug\n");
  const std::string translated = r.err.substr(r.err.find("posvec train ") + 13,
                                              r.err.size() - 1 - r.err.find("posvec train ") - 13);
  std::string line = translated;
  line.replace(line.find("c.txt"), 5, posvec::test::quote(tmp.file("c.txt")));
  line.replace(line.find("ft.bin"), 6, posvec::test::quote(tmp.file("ft.bin")));
  const auto trained = run("-q train " + line + " --min-count 1 --bucket 1000 -t 1");
  REQUIRE(trained.status == 0);
  // --also-vec: fastText's .vec beside the .bin, the vectors posvec vector prints.
  const std::string vec = posvec::test::readText(tmp.file("ft.vec"));
  const auto printed = run("vector " + posvec::test::quote(tmp.file("ft.bin")) + " black");
  REQUIRE(printed.status == 0);
  const std::size_t at = vec.find("\nblack ");
  REQUIRE(at != std::string::npos);
  std::istringstream fromVec(vec.substr(at + 7)), fromPrint(printed.out.substr(6));
  for (int i = 0; i < 50; ++i) {
    double a = 0, b = 0;
    fromVec >> a;
    fromPrint >> b;
    CHECK(std::abs(a - b) <= 1e-5 * std::max(1.0, std::abs(b)));
  }
  CHECK(run("train c.txt -o x.bin --also-vec").err.find("--also-vec writes FILE.vec") !=
        std::string::npos);
  if (posvec::test::runShell("command -v fasttext").status != 0) {
    WARN("skipped fastText's reading: `fasttext` is not installed (Debian package fasttext)");
    return;
  }
  posvec::test::writeText(tmp.file("words.txt"), "black blackest\n");
  const auto ft = posvec::test::runShell(
      "fasttext print-word-vectors " + posvec::test::quote(tmp.file("ft.bin")),
      tmp.file("words.txt"));
  REQUIRE(ft.status == 0);
  CHECK(std::count(ft.out.begin(), ft.out.end(), '\n') == 2);
}

TEST_CASE("posvec similar without words answers one query a line of standard input", "[cli]") {
  TempDir tmp;
  // Unit-length rows at known angles: b is nearest to a, c to b.
  posvec::test::writeText(tmp.file("v.txt"), "4 2\na 1 0\nb 0.8 0.6\nc 0 1\nd -1 0\n");
  posvec::test::writeText(tmp.file("q.txt"), "a\n\nb c\nnope\nc\n");
  const auto r = posvec::test::runCli("similar " + posvec::test::quote(tmp.file("v.txt")) + " -k 1",
                                      tmp.file("q.txt"));
  // cos(a, b) = 0.8; the mean of unit b and c is (0.4, 0.8) -> nearest of a, d is a
  // (cos 0.447214); c's nearest is b (0.6).
  CHECK(r.out ==
        "query: a\nword  similarity\nb     0.800000\n\n"
        "query: b c\nword  similarity\na     0.447214\n\n"
        "query: c\nword  similarity\nb     0.600000\n\n");
  CHECK(r.status != 0);
  CHECK(r.err == "posvec: error: query 3: unknown word 'nope': not in '" + tmp.file("v.txt") +
                     "' (4 words)\nposvec: error: 1 of 4 queries could not be answered (each named "
                     "above)\n");
  const auto neg = posvec::test::runCli(
      "similar " + posvec::test::quote(tmp.file("v.txt")) + " --negative a", tmp.file("q.txt"));
  CHECK(neg.status == 2);
}
