// Subword (fastText) training: one update against a double-precision reference,
// composed vectors against an n-gram list computed here from the published
// algorithm, planted classes, unknown words, determinism, resume and bad settings.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "half.hpp"
#include "kernel_factory.hpp"
#include "kernel_subword.hpp"
#include "posvec/error.hpp"
#include "posvec/fasttext_export.hpp"
#include "posvec/formats.hpp"
#include "posvec/memory_estimate.hpp"
#include "posvec/trainer.hpp"
#include "posvec/word_lookup.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {

// fastText's n-grams of `word`, written from its description: the substrings of
// "<word>" of minn..maxn UTF-8 characters (a character: a byte and the 10xxxxxx
// bytes after it), by first character then length, without the one-character
// "<" and ">".
std::vector<std::string> referenceNgrams(const std::string& word, int minn, int maxn) {
  const std::string w = "<" + word + ">";
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < w.size(); ++i)
    if ((static_cast<unsigned char>(w[i]) & 0xC0) != 0x80) starts.push_back(i);
  starts.push_back(w.size());
  const std::size_t chars = starts.size() - 1;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < chars; ++i)
    for (std::size_t n = 1; n <= static_cast<std::size_t>(maxn) && i + n <= chars; ++n) {
      if (n < static_cast<std::size_t>(minn)) continue;
      if (n == 1 && (i == 0 || i + n == chars)) continue;
      out.push_back(w.substr(starts[i], starts[i + n] - starts[i]));
    }
  return out;
}

// 32-bit FNV-1a with each byte sign-extended (fastText's hash).
std::uint32_t referenceHash(const std::string& s) {
  std::uint32_t h = 2166136261u;
  for (const char c : s) {
    h ^= static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<signed char>(c)));
    h *= 16777619u;
  }
  return h;
}

std::vector<std::int64_t> referenceRows(const std::string& word, std::int64_t self, int minn,
                                        int maxn, std::uint32_t bucket, std::int64_t nwords) {
  std::vector<std::int64_t> rows{self};
  for (const auto& g : referenceNgrams(word, minn, maxn))
    rows.push_back(nwords + referenceHash(g) % bucket);
  return rows;
}

constexpr int kClasses = 5, kPerClass = 10;

std::string wordOf(int cls, int i) { return "k" + std::to_string(cls) + "x" + std::to_string(i); }

// Each sentence draws its words from one class, with function words mixed in.
std::vector<Sentence> plantedCorpus(unsigned seed, int sentences) {
  std::mt19937 gen(seed);
  const std::vector<std::string> function{"the", "a", "of", "and"};
  std::vector<Sentence> out;
  for (int s = 0; s < sentences; ++s) {
    const int cls = static_cast<int>(gen() % kClasses);
    const int len = 6 + static_cast<int>(gen() % 8);
    Sentence sent;
    for (int t = 0; t < len; ++t)
      sent.push_back(gen() % 5 == 0 ? function[gen() % function.size()]
                                    : wordOf(cls, static_cast<int>(gen() % kPerClass)));
    out.push_back(std::move(sent));
  }
  return out;
}

// bfloat16 rounding to nearest, even on ties, written from its definition.
float bf16Nearest(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  float y;
  std::memcpy(&y, &u, 4);
  return y;
}

TrainConfig subwordConfig() {
  TrainConfig c;
  c.dim = 24;
  c.epochs = 5;
  c.minCount = 1;
  c.sample = 0;
  c.threads = 1;
  c.seed = 11;
  c.subwords = true;
  c.minn = 2;
  c.maxn = 4;
  c.bucket = 5000;
  return c;
}

double cosine(const Eigen::RowVectorXf& a, const Eigen::RowVectorXf& b) {
  return static_cast<double>(a.dot(b)) / (static_cast<double>(a.norm()) * b.norm() + 1e-30);
}

std::size_t indexOf(const ModelState& m, const std::string& w) {
  for (std::size_t i = 0; i < m.words.size(); ++i)
    if (m.words[i] == w) return i;
  FAIL("word " << w << " missing");
  return 0;
}

// Fraction of class words whose nearest neighbour is in the same class.
double plantedAccuracy(const ModelState& model) {
  const Embeddings e = embeddingsOf(model);
  int good = 0, total = 0;
  for (int c = 0; c < kClasses; ++c)
    for (int i = 0; i < kPerClass; ++i) {
      const auto nn = e.nearest(wordOf(c, i), 1);
      REQUIRE(nn.size() == 1);
      ++total;
      good += nn[0].word.rfind("k" + std::to_string(c) + "x", 0) == 0;
    }
  return static_cast<double>(good) / total;
}

bool sameMatrix(const MatrixF& a, const MatrixF& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0;
}

}  // namespace

TEST_CASE("subword training: one 16-bit skip-gram window against a float64 reference",
          "[subword][half]") {
  // As the float32 window below, on 16-bit rows: centre "where" (0) predicts contexts
  // "here" (1) and "there" (2), one negative each ("these" (3) and "where"'s own
  // output row 0), so every output row is read and rounded once; the composed vector
  // moves after the first pair as subwordWindow's does. The reference works in
  // float64 from the stored (widened) values. The kernel's float32 result y of each
  // weight is within delta of it (the sigmoid table's 1e-5 times alpha and the
  // partner's magnitude, plus float32 rounding, 1e-5 relative of the magnitudes
  // involved); stochastic rounding then stores one of y's two 16-bit neighbours, less
  // than one step away: step <= 2^-7 |y| (bfloat16) or 2^-10 |y| + 2^-24 (binary16). An
  // input row listed in "where"'s list, once or more, takes the gradient once, rounded
  // once: one step at most, at a magnitude of at most |old| + |grad| + delta.
  const std::vector<std::string> words{"where", "here", "there", "these"};
  TrainConfig config;
  config.subwords = true;
  config.minn = 2;
  config.maxn = 3;
  config.bucket = 5;  // 11 n-grams in 5 buckets: rows listed twice
  const std::int64_t nwords = 4;
  const detail::SubwordRows rows = detail::subwordRowsOf(words, config, 1);
  const auto listed = referenceRows("where", 0, 2, 3, 5, nwords);
  const double alpha = 0.05, scale = 0.5;
  static const detail::Sigmoid sigmoid;
  const std::int32_t contexts[] = {1, 2};
  const std::int32_t negatives[] = {3, 0};
  const std::vector<std::pair<int, double>> steps{{1, 1.0}, {3, 0.0}, {2, 1.0}, {0, 0.0}};
  // Tails of every kind for the AVX-512 loops' 32-value steps: a partial first half
  // (8, 37, 100, 300) and a partial second half (50).
  for (const std::size_t dim :
       {std::size_t{8}, std::size_t{37}, std::size_t{50}, std::size_t{100}, std::size_t{300}}) {
    for (const WeightType type : {WeightType::Bf16, WeightType::Fp16}) {
      INFO(weightTypeName(type) << " dim " << dim);
      const bool bf16 = type == WeightType::Bf16;
      const double rel = bf16 ? 0x1p-7 : 0x1p-10, absStep = bf16 ? 0.0 : 0x1p-24;
      auto pack = [&](float x) { return bf16 ? detail::floatToBf16(x) : detail::floatToFp16(x); };
      auto value = [&](std::uint16_t h) {
        return static_cast<double>(bf16 ? detail::bf16ToFloat(h) : detail::fp16ToFloat(h));
      };
      std::mt19937 gen(9);
      std::uniform_real_distribution<float> u(-static_cast<float>(scale), static_cast<float>(scale));
      std::vector<std::uint16_t> in((nwords + 5) * dim), out(nwords * dim);
      for (auto& x : in) x = pack(u(gen));
      for (auto& x : out) x = pack(u(gen));

      std::vector<int> times(in.size() / dim, 0);
      for (const auto r : listed) ++times[static_cast<std::size_t>(r)];
      REQUIRE(*std::max_element(times.begin(), times.end()) >= 2);
      // After each pair the mean moves as composing it again from rows that took the
      // pair's gradient once each would move it: sum over rows of times x gradient /
      // length, the gradient itself.
      const double moves = 1.0;
      std::vector<double> h(dim, 0.0), grad(dim, 0.0), refOut(out.size());
      for (const auto r : listed)
        for (std::size_t j = 0; j < dim; ++j) h[j] += value(in[static_cast<std::size_t>(r) * dim + j]);
      for (auto& x : h) x /= static_cast<double>(listed.size());
      for (std::size_t i = 0; i < out.size(); ++i) refOut[i] = value(out[i]);
      for (std::size_t pair = 0; pair < 2; ++pair) {
        std::vector<double> pairGrad(dim, 0.0);
        for (std::size_t q = 0; q < 2; ++q) {
          const auto& [target, label] = steps[2 * pair + q];
          const std::size_t t = static_cast<std::size_t>(target) * dim;
          double sc = 0;
          for (std::size_t j = 0; j < dim; ++j) sc += h[j] * value(out[t + j]);
          const double g = alpha * (label - 1.0 / (1.0 + std::exp(-sc)));
          for (std::size_t j = 0; j < dim; ++j) pairGrad[j] += g * value(out[t + j]);
          for (std::size_t j = 0; j < dim; ++j) refOut[t + j] += g * h[j];
        }
        for (std::size_t j = 0; j < dim; ++j) {
          grad[j] += pairGrad[j];
          h[j] += moves * pairGrad[j];
        }
      }

      std::vector<std::vector<std::uint16_t>> results;
      for (const auto path : {detail::BatchedPath::Portable, detail::BatchedPath::Auto}) {
        std::vector<std::uint16_t> kin = in, kout = out;
        std::vector<float> hidden(2 * dim), g(dim), wide(dim);
        detail::RoundingBits bits(12345);
        const double loss = detail::subwordWindow16(
            kin.data(), kout.data(), dim, rows, 0, contexts, 2, negatives, 1,
            static_cast<float>(alpha), sigmoid, type, hidden.data(), g.data(), wide.data(), bits,
            path);
        CHECK(loss > 0);
        const double delta = 4 * alpha * 1e-5 * scale;
        std::size_t moved = 0;
        for (std::size_t r = 0; r < times.size(); ++r)
          for (std::size_t j = 0; j < dim; ++j) {
            const std::size_t i = r * dim + j;
            const double old = value(in[i]), k = times[r] > 0 ? 1 : 0;
            if (k == 0) {
              REQUIRE(kin[i] == in[i]);
              continue;
            }
            const double ref = old + k * grad[j];
            const double d = delta + 1e-5 * (std::fabs(old) + k * std::fabs(grad[j]));
            const double magnitude = std::fabs(old) + k * std::fabs(grad[j]) + d;
            REQUIRE(std::fabs(value(kin[i]) - ref) <= k * (rel * magnitude + absStep) + d);
            moved += kin[i] != in[i];
          }
        for (std::size_t i = 0; i < out.size(); ++i) {
          const double d = delta + 1e-5 * (std::fabs(value(out[i])) + std::fabs(refOut[i]));
          REQUIRE(std::fabs(value(kout[i]) - refOut[i]) <=
                  rel * (std::fabs(refOut[i]) + d) + absStep + d);
          moved += kout[i] != out[i];
        }
        CHECK(moved > dim);  // the step moved weights (it is larger than a 16-bit step)
        kin.insert(kin.end(), kout.begin(), kout.end());
        results.push_back(kin);
      }
      // The AVX-512 loops round with the same bits as the portable ones.
      CHECK(results[0] == results[1]);
    }
  }
}

TEST_CASE("subword training: one fastText skip-gram window equals a double-precision reference",
          "[subword]") {
  // Centre "where" (0) with contexts "here" (1) and "there" (2), two negatives per pair:
  // 2 and 1 for context 1 (the 1 equals its context and is skipped), 0 and 1 for
  // context 2 (output row 1, the first pair's positive, is read again after its
  // update: fastText updates output rows at once). "where"'s list repeats rows (3
  // buckets for its n-grams): the second pair's mean must still be the first's
  // rows after their update.
  const std::vector<std::string> words{"where", "here", "there"};
  TrainConfig config;
  config.subwords = true;
  config.minn = 2;
  config.maxn = 3;
  config.bucket = 7;
  const std::size_t dim = 8, negative = 2;
  const std::int64_t nwords = 3;
  const detail::SubwordRows rows = detail::subwordRowsOf(words, config, 1);
  const auto where = referenceRows("where", 0, 2, 3, 7, nwords);

  std::mt19937 gen(9);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<float> in((nwords + 7) * dim), out(nwords * dim);
  for (auto& x : in) x = u(gen);
  for (auto& x : out) x = u(gen);
  const double alpha = 0.05;

  // The reference, in double, as fastText runs it but for repeated rows: for each
  // pair the centre's mean composed afresh from its rows, the pair's targets in order
  // (each output row updated at once), then the pair's gradient added to each distinct
  // listed row once (fastText adds it once per listing, which makes a word that lists
  // a row many times diverge).
  std::vector<double> refIn(in.begin(), in.end()), refOut(out.begin(), out.end());
  const std::vector<std::vector<std::pair<int, double>>> pairs{{{1, 1.0}, {2, 0.0}},
                                                               {{2, 1.0}, {0, 0.0}, {1, 0.0}}};
  for (const auto& steps : pairs) {
    std::vector<double> h(dim, 0.0), grad(dim, 0.0);
    for (const auto r : where)
      for (std::size_t d = 0; d < dim; ++d) h[d] += refIn[static_cast<std::size_t>(r) * dim + d];
    for (auto& x : h) x /= static_cast<double>(where.size());
    for (const auto& [target, label] : steps) {
      double s = 0;
      for (std::size_t d = 0; d < dim; ++d) s += h[d] * refOut[target * dim + d];
      const double g = alpha * (label - 1.0 / (1.0 + std::exp(-s)));
      for (std::size_t d = 0; d < dim; ++d) grad[d] += g * refOut[target * dim + d];
      for (std::size_t d = 0; d < dim; ++d) refOut[target * dim + d] += g * h[d];
    }
    const std::set<std::int64_t> distinct(where.begin(), where.end());
    REQUIRE(distinct.size() < where.size());  // the case of repeated rows is tested
    for (const auto r : distinct)
      for (std::size_t d = 0; d < dim; ++d)
        refIn[static_cast<std::size_t>(r) * dim + d] += grad[d];
  }

  std::vector<float> kin = in, kout = out, hidden(2 * dim), g(dim);
  const std::int32_t contexts[] = {1, 2};
  const std::int32_t negatives[] = {2, 1, 0, 1};
  static const detail::Sigmoid sigmoid;
  const double loss =
      detail::subwordWindow(kin.data(), kout.data(), dim, rows, 0, contexts, 2, negatives,
                            negative, static_cast<float>(alpha), sigmoid, hidden.data(), g.data());
  CHECK(loss > 0);
  // Tolerance: the sigmoid table is within 1e-5 of the function (times alpha, five
  // terms, rows below 0.6), plus float rounding of sums of ~20 values below 0.5.
  const double tol = 5 * alpha * 1e-5 * 0.6 + 40 * FLT_EPSILON * 0.5;
  double moved = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    CHECK(std::fabs(kin[i] - refIn[i]) <= tol);
    moved = std::max(moved, std::fabs(refIn[i] - in[i]));
  }
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(std::fabs(kout[i] - refOut[i]) <= tol);
  CHECK(moved > 100 * tol);  // the step is far larger than the tolerance
  // Rows outside "where"'s list did not move ("here"'s own row 1 is not in it).
  for (std::size_t d = 0; d < dim; ++d) CHECK(kin[dim + d] == in[dim + d]);
}

TEST_CASE("subword training of a word that lists one n-gram row a thousand times stays in range",
          "[subword][cli]") {
  // A 1000-letter run lists "aaa", "aaaa", "aaaaa" and "aaaaaa" at almost every
  // position. Before: each listing took the gradient, so the word's mean moved about
  // 1000 times the gradient a pair and training diverged (loss 42,047 per prediction
  // on 20,000 Brown lines, exit 0). Each distinct row now takes it once.
  test::TempDir dir;
  std::istringstream lines(test::readText(test::sourcePath("corpus/posvec-corpus.txt")));
  std::string line, text;
  for (int i = 0; std::getline(lines, line); ++i)
    if (!line.empty()) text += line + (i % 20 == 0 ? " " + std::string(1000, 'a') : "") + "\n";
  const std::string corpus = dir.file("runs.txt");
  test::writeText(corpus, text + text + text + text);
  const auto r = test::runCli("-q train " + test::quote(corpus) +
                              " --subwords --bucket 10000 --min-count 1 --dim 16 --epochs 1 -t 1 "
                              "--json -o " + test::quote(dir.file("v.bin")));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const double loss = nlohmann::json::parse(r.out)["epoch_losses"][0].get<double>();
  // Below the untrained model's 6 ln 2 per prediction: the run learned.
  CHECK(loss < 6 * std::log(2.0));
}

TEST_CASE("subword training: a word's vector is the mean of the rows an independent n-gram "
          "list names",
          "[subword]") {
  std::vector<Sentence> sentences;
  for (int i = 0; i < 40; ++i)
    sentences.push_back({"café", "naïve", "tea", "x", "straße", "tea", "café"});
  TrainConfig c = subwordConfig();
  c.epochs = 2;
  c.minn = 3;
  c.maxn = 6;
  c.bucket = 1000;
  const ModelState m = train(CorpusSource::fromSentences(sentences), c);
  const auto nwords = static_cast<std::int64_t>(m.words.size());
  REQUIRE(m.input.rows() == nwords + 1000);
  const Embeddings e = embeddingsOf(m);
  for (std::size_t w = 0; w < m.words.size(); ++w) {
    INFO(m.words[w]);
    const auto rows = referenceRows(m.words[w], static_cast<std::int64_t>(w), 3, 6, 1000, nwords);
    for (std::size_t d = 0; d < c.dim; ++d) {
      double mean = 0;
      for (const auto r : rows) mean += m.input(r, static_cast<Eigen::Index>(d));
      mean /= static_cast<double>(rows.size());
      CHECK(std::fabs(e.vectors()(static_cast<Eigen::Index>(w), static_cast<Eigen::Index>(d)) -
                      mean) <= 1e-6);
    }
  }
  // "x" has one n-gram of 3 characters, "<x>".
  CHECK(referenceNgrams("x", 3, 6) == std::vector<std::string>{"<x>"});
}

TEST_CASE("subword training puts planted classes together and an unknown word near its class",
          "[subword]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(3, 1500));
  for (const auto arch : {Architecture::SkipGram, Architecture::Cbow}) {
    INFO((arch == Architecture::SkipGram ? "skip-gram" : "CBOW"));
    TrainConfig c = subwordConfig();
    c.architecture = arch;
    if (arch == Architecture::Cbow) c.alpha = 0.05;
    std::vector<double> losses;
    TrainObserver obs;
    obs.epochEnd = [&](const EpochReport& r) { losses.push_back(r.loss); };
    const ModelState m = train(corpus, c, obs);
    REQUIRE(losses.size() == 5);
    CHECK(losses.back() < losses.front());
    CHECK(plantedAccuracy(m) >= 0.9);
    // "k2x77" is not in the vocabulary: its vector is the mean of its n-gram rows,
    // some shared with class 2 ("<k2", "k2x", "<k2x").
    const auto nwords = static_cast<std::int64_t>(m.words.size());
    Eigen::RowVectorXf unknown = Eigen::RowVectorXf::Zero(static_cast<Eigen::Index>(c.dim));
    const auto grams = referenceNgrams("k2x77", c.minn, c.maxn);
    for (const auto& g : grams) unknown += m.input.row(nwords + referenceHash(g) % c.bucket);
    unknown /= static_cast<float>(grams.size());
    const Embeddings e = embeddingsOf(m);
    std::vector<double> meanSim(kClasses, 0.0);
    for (int cls = 0; cls < kClasses; ++cls)
      for (int i = 0; i < kPerClass; ++i)
        meanSim[static_cast<std::size_t>(cls)] +=
            cosine(unknown, e.vectors().row(static_cast<Eigen::Index>(indexOf(m, wordOf(cls, i)))));
    for (int cls = 0; cls < kClasses; ++cls)
      if (cls != 2) CHECK(meanSim[2] > meanSim[static_cast<std::size_t>(cls)]);
  }
}

TEST_CASE("subword training in 16 bits: planted classes, one seed's bits, composed vectors",
          "[subword][half]") {
  // Under AddressSanitizer a fifth of the text: the memory checks need the 16-bit
  // kernels to run, not to learn; the planted classes are checked in Release.
  const auto corpus =
      CorpusSource::fromSentences(plantedCorpus(3, test::kAddressSanitizer ? 300 : 1500));
  for (const WeightType type : {WeightType::Bf16, WeightType::Fp16}) {
    INFO(weightTypeName(type));
    TrainConfig c = subwordConfig();
    c.weights = type;
    const ModelState m = train(corpus, c);
    REQUIRE(m.packed != PackedWeights::None);
    const auto nwords = static_cast<Eigen::Index>(m.words.size());
    REQUIRE(m.input.rows() == nwords + static_cast<Eigen::Index>(c.bucket));
    // The stored weights, widened (readWeightRow is exact: a 16-bit value is a float).
    const auto d = static_cast<std::size_t>(c.dim);
    MatrixF wide(m.input.rows(), m.input.cols());
    for (Eigen::Index r = 0; r < wide.rows(); ++r) readWeightRow(m, m.input, r, wide.row(r).data());
    // Each word's vector is the mean of its rows as an independent n-gram list names them.
    const Embeddings e = embeddingsOf(m);
    for (Eigen::Index w = 0; w < nwords; ++w) {
      const auto rows = referenceRows(m.words[static_cast<std::size_t>(w)], w, c.minn, c.maxn,
                                      c.bucket, nwords);
      for (std::size_t j = 0; j < d; ++j) {
        double mean = 0;
        for (const auto r : rows) mean += wide(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j));
        mean /= static_cast<double>(rows.size());
        REQUIRE(std::fabs(e.vectors()(w, static_cast<Eigen::Index>(j)) - mean) <=
                1e-6 * (1 + std::fabs(mean)));
      }
    }
    if (!test::kAddressSanitizer) CHECK(plantedAccuracy(m) >= 0.9);
    // One seed, one thread: the same bits.
    const ModelState again = train(corpus, c);
    CHECK(std::memcmp(m.input.data(), again.input.data(),
                      static_cast<std::size_t>(m.input.size()) * 2) == 0);
    CHECK(std::memcmp(m.output.data(), again.output.data(),
                      static_cast<std::size_t>(m.output.size()) * 2) == 0);
  }
}

TEST_CASE("subword training with one thread is bitwise deterministic", "[subword]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(4, 400));
  for (const auto arch : {Architecture::SkipGram, Architecture::Cbow}) {
    TrainConfig c = subwordConfig();
    c.architecture = arch;
    c.epochs = 2;
    const ModelState a = train(corpus, c), b = train(corpus, c);
    CHECK(sameMatrix(a.input, b.input));
    CHECK(sameMatrix(a.output, b.output));
  }
}

TEST_CASE("subword training resumed from a saved model equals an uninterrupted run",
          "[subword]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(5, 600));
  TrainConfig c = subwordConfig();
  c.epochs = 3;
  c.sample = 1e-2;
  const ModelState full = train(corpus, c);
  int asked = 0;
  TrainObserver stopAfterTwo;
  stopAfterTwo.stopRequested = [&] { return asked++ == 2; };
  const ModelState part = train(corpus, c, stopAfterTwo);
  REQUIRE(part.epochsDone == 2);
  test::TempDir dir;
  const std::string path = dir.file("m.posvec");
  saveModel(part, path);
  ModelState loaded = loadModel(path);
  CHECK(sameMatrix(loaded.input, part.input));
  resumeTraining(loaded, corpus, 1);
  CHECK(loaded.epochsDone == 3);
  CHECK(sameMatrix(loaded.input, full.input));
  CHECK(sameMatrix(loaded.output, full.output));
  CHECK(loaded.epochLosses == full.epochLosses);

  // Stopped inside an epoch (one thread): finishing it gives the same bits too.
  const auto big = CorpusSource::fromSentences(plantedCorpus(6, 3000));
  c.epochs = 1;
  const ModelState whole = train(big, c);
  int safePoints = 0;
  TrainObserver stopInside;
  stopInside.interrupt = [&] { return ++safePoints == 1 ? Interrupt::Stop : Interrupt::None; };
  ModelState inside = train(big, c, stopInside);
  REQUIRE(inside.partial.active());
  saveModel(inside, path);
  ModelState again = loadModel(path);
  resumeTraining(again, big, 1);
  CHECK(sameMatrix(again.input, whole.input));
  CHECK(sameMatrix(again.output, whole.output));

  // The model file's vectors are the composed ones.
  const Embeddings fromFile = loadVectors(path);
  const Embeddings composed = embeddingsOf(loadModel(path));
  CHECK(sameMatrix(fromFile.vectors(), composed.vectors()));
}

// Training gathers the rows its words use into a dense matrix and draws a new
// model's other rows only when the model is seen: whether it is seen at the end,
// at a stop or at a checkpoint, the rows no word lists hold what drawing the whole
// matrix first gives (initInputMatrix, the path without the dense rows), and the
// listed ones what training gave them.
TEST_CASE("subword training keeps the rows no word uses at their drawn values",
          "[subword]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(7, 4000));
  // 20000 buckets: the words use under 1 % of the rows, which are gathered; 300:
  // they use about 40 %, which train in place (DenseRows::pays).
  for (const std::uint32_t buckets : {20000u, 300u})
  for (const auto weights : {WeightType::Fp32, WeightType::Bf16}) {
    CAPTURE(weightTypeName(weights), buckets);
    TrainConfig c = subwordConfig();
    c.epochs = 1;
    c.weights = weights;
    c.bucket = buckets;
    ModelState whole = train(corpus, c);
    const auto v = static_cast<std::int64_t>(whole.words.size());
    std::vector<char> listed(static_cast<std::size_t>(whole.input.rows()), 0);
    for (std::int64_t w = 0; w < v; ++w)
      for (const std::int64_t r : referenceRows(whole.words[static_cast<std::size_t>(w)], w, c.minn,
                                                c.maxn, c.bucket, v))
        listed[static_cast<std::size_t>(r)] = 1;
    MatrixF drawn(whole.input.rows(), whole.input.cols());
    detail::initInputMatrix(drawn, c.seed, 1);
    const auto unusedAtDraw = [&](ModelState m) {
      unpackWeights(m);
      std::int64_t unused = 0, unusedSame = 0, usedMoved = 0, used = 0;
      for (Eigen::Index r = 0; r < m.input.rows(); ++r) {
        bool same = true;
        for (Eigen::Index d = 0; d < m.input.cols(); ++d) {
          const float want = weights == WeightType::Fp32 ? drawn(r, d) : bf16Nearest(drawn(r, d));
          same = same && m.input(r, d) == want;
        }
        if (listed[static_cast<std::size_t>(r)]) {
          ++used;
          usedMoved += !same;
        } else {
          ++unused;
          unusedSame += same;
        }
      }
      CHECK(unused > static_cast<std::int64_t>(c.bucket) / 4);
      CHECK(unusedSame == unused);
      CHECK(usedMoved > used * 9 / 10);  // trained (a row only of rare words may not move)
    };
    unusedAtDraw(whole);

    // Stopped inside the epoch, and checkpointed at the same point and then finished:
    // the stopped model and the checkpoint are the same bits; the finished run equals
    // the uninterrupted one.
    ModelState checkpoint;
    int points = 0;
    TrainObserver takeOne;
    takeOne.interrupt = [&] { return ++points == 2 ? Interrupt::Checkpoint : Interrupt::None; };
    takeOne.checkpoint = [&](const ModelState& m) { checkpoint = m; };
    const ModelState finished = train(corpus, c, takeOne);
    REQUIRE(checkpoint.partial.active());
    // (16-bit matrices compared unpacked: a packed matrix's second half is not used.)
    const auto same = [](ModelState a, ModelState b) {
      unpackWeights(a);
      unpackWeights(b);
      return sameMatrix(a.input, b.input) && sameMatrix(a.output, b.output);
    };
    CHECK(same(finished, whole));
    int stops = 0;
    TrainObserver stopOne;
    stopOne.interrupt = [&] { return ++stops == 2 ? Interrupt::Stop : Interrupt::None; };
    const ModelState stopped = train(corpus, c, stopOne);
    REQUIRE(stopped.partial.active());
    CHECK(same(stopped, checkpoint));
    unusedAtDraw(stopped);
  }
}

// Trained to be written (TrainConfig::deferRows, what `posvec train --format
// fasttext` asks for), a new model keeps its words' rows gathered and never holds
// the bucket rows no word uses: its fastText file is drawn as it is written. The
// file is the one the model placed in full writes, its unused rows are an
// independent full draw, and placeRows() gives train()'s model.
TEST_CASE("a subword model trained to be written gives the placed model's fastText file",
          "[subword]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(9, 3000));
  test::TempDir dir;
  const auto bytesOf = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (const auto weights : {WeightType::Fp32, WeightType::Bf16})
  for (const auto arch : {Architecture::SkipGram, Architecture::Cbow}) {
    if (weights != WeightType::Fp32 && arch == Architecture::Cbow) continue;
    CAPTURE(weightTypeName(weights), arch == Architecture::Cbow);
    TrainConfig c = subwordConfig();
    c.epochs = 1;
    c.bucket = 20000;  // the words use under 1 % of the rows: gathered
    c.weights = weights;
    c.architecture = arch;
    const ModelState placed = train(corpus, c);
    CHECK_FALSE(placed.unplacedRows);
    c.deferRows = true;
    ModelState deferred = train(corpus, c);
    REQUIRE(deferred.unplacedRows);
    CHECK(deferred.input.rows() == placed.input.rows());

    const std::string a = dir.file("deferred.bin"), b = dir.file("placed.bin");
    saveFastTextModel(deferred, a);
    saveFastTextModel(placed, b);
    const std::string fileA = bytesOf(a);
    CHECK(fileA.size() > static_cast<std::size_t>(c.bucket) * c.dim * 4);
    CHECK(fileA == bytesOf(b));

    // The file's rows no word lists are the seed's draw (rounded for 16 bits).
    const SubwordModel read = SubwordModel::load(a);
    const auto v = static_cast<std::int64_t>(deferred.words.size());
    std::vector<char> listed(static_cast<std::size_t>(read.input().rows()), 0);
    for (std::int64_t w = 0; w < v; ++w)
      for (const std::int64_t r : referenceRows(deferred.words[static_cast<std::size_t>(w)], w,
                                                c.minn, c.maxn, c.bucket, v))
        listed[static_cast<std::size_t>(r)] = 1;
    MatrixF drawn(read.input().rows(), read.input().cols());
    detail::initInputMatrix(drawn, c.seed, 1);
    std::int64_t unused = 0, same = 0;
    for (Eigen::Index r = 0; r < drawn.rows(); ++r) {
      if (listed[static_cast<std::size_t>(r)]) continue;
      ++unused;
      bool equal = true;
      for (Eigen::Index d = 0; d < drawn.cols(); ++d) {
        const float want = weights == WeightType::Fp32 ? drawn(r, d) : bf16Nearest(drawn(r, d));
        equal = equal && read.input()(r, d) == want;
      }
      same += equal;
    }
    CHECK(unused > static_cast<std::int64_t>(c.bucket) / 2);
    CHECK(same == unused);
    // The estimate before training counts the rows held: the listed ones and the
    // output matrix when deferred, every row otherwise.
    const auto listedRows = static_cast<std::uint64_t>(
        std::count(listed.begin(), listed.end(), char{1}));
    const std::uint64_t bytes = weights == WeightType::Fp32 ? 4 : 2;
    const auto vu = static_cast<std::uint64_t>(v);
    CHECK(estimateTrainingMemory(corpus, c).matrices == (listedRows + vu) * c.dim * bytes);
    TrainConfig whole = c;
    whole.deferRows = false;
    CHECK(estimateTrainingMemory(corpus, whole).matrices ==
          (vu + c.bucket + vu) * c.dim * bytes);

    // The words' composed vectors and the model file come from the gathered rows as
    // they are; a weight conversion needs the rows placed, and says so.
    const Embeddings composed = embeddingsOf(deferred), composedPlaced = embeddingsOf(placed);
    CHECK(composed.words() == composedPlaced.words());
    CHECK(sameMatrix(composed.vectors(), composedPlaced.vectors()));
    saveModel(deferred, dir.file("deferred.posvec"));
    saveModel(placed, dir.file("placed.posvec"));
    CHECK(bytesOf(dir.file("deferred.posvec")) == bytesOf(dir.file("placed.posvec")));
    if (weights != WeightType::Fp32) {
      ModelState converted = deferred;
      CHECK_THROWS_AS(unpackWeights(converted), ConfigError);
    }
    // A copy shares the gathered rows; placing one leaves the other whole.
    ModelState copy = deferred;
    placeRows(deferred);
    CHECK_FALSE(deferred.unplacedRows);
    placeRows(copy);
    for (ModelState* m : {&deferred, &copy}) {
      ModelState x = *m, y = placed;
      unpackWeights(x);
      unpackWeights(y);
      CHECK(sameMatrix(x.input, y.input));
      CHECK(sameMatrix(x.output, y.output));
    }
    saveModel(deferred, dir.file("m.posvec"));
    CHECK(bytesOf(dir.file("m.posvec")) == bytesOf(dir.file("placed.posvec")));

    // A checkpoint completes the model there and then: the run ends placed, as it
    // would without deferred rows.
    int points = 0;
    TrainObserver takeOne;
    takeOne.interrupt = [&] { return ++points == 2 ? Interrupt::Checkpoint : Interrupt::None; };
    takeOne.checkpoint = [](const ModelState& m) { CHECK_FALSE(m.unplacedRows); };
    ModelState checkpointed = train(corpus, c, takeOne);
    REQUIRE(points >= 2);
    CHECK_FALSE(checkpointed.unplacedRows);
    {
      ModelState x = checkpointed, y = placed;
      unpackWeights(x);
      unpackWeights(y);
      CHECK(sameMatrix(x.input, y.input));
      CHECK(sameMatrix(x.output, y.output));
    }

    // Stopped inside the epoch, the state is saved from the gathered rows too, and
    // finishing it gives the uninterrupted run's model.
    int stops = 0;
    TrainObserver stopOne;
    stopOne.interrupt = [&] { return ++stops == 2 ? Interrupt::Stop : Interrupt::None; };
    const ModelState stopped = train(corpus, c, stopOne);
    REQUIRE(stopped.partial.active());
    CHECK(stopped.unplacedRows);
    saveModel(stopped, dir.file("stopped.posvec"));
    ModelState resumed = loadModel(dir.file("stopped.posvec"));
    resumeTraining(resumed, corpus, 1);
    ModelState uninterrupted = placed;
    unpackWeights(resumed);
    unpackWeights(uninterrupted);
    CHECK(sameMatrix(resumed.input, uninterrupted.input));
    CHECK(sameMatrix(resumed.output, uninterrupted.output));
  }
}

// The query commands' vectors (loadLookupVectors) from a posvec model trained with
// subwords: any word, as from the same model written as a fastText .bin (read by
// the .bin reader), and an unknown word the mean of the rows of its n-grams listed
// and hashed here.
TEST_CASE("a posvec subword model builds unknown words as its fastText file does", "[subword]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(8, 600));
  TrainConfig c = subwordConfig();
  c.epochs = 2;
  const ModelState model = train(corpus, c);
  test::TempDir dir;
  const std::string posvecPath = dir.file("m.posvec"), binPath = dir.file("m.bin");
  saveModel(model, posvecPath);
  saveFastTextModel(model, binPath);
  const LookupVectors fromModel = loadLookupVectors(posvecPath);
  const LookupVectors fromBin = loadLookupVectors(binPath);
  REQUIRE(fromModel.subwords);
  CHECK(fromModel.vectors.size() == model.words.size());
  const auto v = static_cast<std::int64_t>(model.words.size());
  for (const std::string word : {"k1x99", "zk2x", "k3", "the", "k0x1"}) {
    CAPTURE(word);
    const bool known = std::find(model.words.begin(), model.words.end(), word) != model.words.end();
    CHECK(fromModel.builds(word) == !known);
    const auto a = fromModel.vector(word), b = fromBin.vector(word);
    REQUIRE(a);
    REQUIRE(b);
    CHECK((*a - *b).cwiseAbs().maxCoeff() <= 1e-6f);
    if (known) continue;
    std::vector<double> mean(static_cast<std::size_t>(c.dim), 0.0);
    const auto grams = referenceNgrams(word, c.minn, c.maxn);
    for (const auto& g : grams)
      for (std::size_t d = 0; d < mean.size(); ++d)
        mean[d] += model.input(v + referenceHash(g) % c.bucket, static_cast<Eigen::Index>(d));
    for (std::size_t d = 0; d < mean.size(); ++d)
      CHECK(std::fabs((*a)(static_cast<Eigen::Index>(d)) - mean[d] / grams.size()) <= 1e-5);
  }
  // Rows in memory have no output matrix to write.
  CHECK_THROWS_AS(fromModel.subwords->save(dir.file("again.bin")), ConfigError);

  // A word-only model knows its words only.
  TrainConfig words = c;
  words.subwords = false;
  saveModel(train(corpus, words), posvecPath);
  const LookupVectors plain = loadLookupVectors(posvecPath);
  CHECK_FALSE(plain.subwords);
  CHECK_FALSE(plain.vector("k1x99"));
}

TEST_CASE("subword training refuses bad settings with one line", "[subword]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(7, 50));
  auto message = [&](const TrainConfig& c) {
    try {
      train(corpus, c);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  TrainConfig c = subwordConfig();
  c.minn = 5;
  c.maxn = 3;
  CHECK(message(c) == "shortest character n-gram must be between 1 and the longest (3; got 5)");
  c = subwordConfig();
  c.loss = Loss::HierarchicalSoftmax;
  CHECK(message(c).find("hierarchical softmax with subwords is not available") !=
        std::string::npos);
  c = subwordConfig();
  c.bucket = 4000000000u;
  CHECK(message(c).find("the n-gram buckets (4000000000) make more than 2^31 - 1 input rows") !=
        std::string::npos);
}

TEST_CASE("bucket 0 trains word vectors only, as fastText's and gensim's", "[subword]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(7, 200));
  TrainConfig c = subwordConfig();
  c.bucket = 0;
  const ModelState m = train(corpus, c);
  CHECK(m.input.rows() == static_cast<Eigen::Index>(m.words.size()));  // no n-gram rows
  // Each word's vector is its own row; an unknown word has none.
  test::TempDir dir;
  const std::string path = dir.file("m.bin");
  saveFastTextModel(m, path);
  const LookupVectors v = loadLookupVectors(path);
  REQUIRE(v.subwords);
  CHECK(v.subwords->bucket() == 0);
  const auto known = v.vector(m.words[3]);
  REQUIRE(known);
  CHECK(*known == m.input.row(3));
  CHECK_FALSE(v.vector("zz" + m.words[3]));
}

TEST_CASE("a subword model's vocabulary grows, its words' and n-grams' rows kept", "[subword]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(7, 200));
  const TrainConfig c = subwordConfig();
  ModelState m = train(corpus, c);
  const ModelState before = m;
  const auto oldWords = static_cast<Eigen::Index>(before.words.size());
  const std::string known = before.words.back();  // the rarest word: it gains a count
  REQUIRE(extendVocabulary(m, {"zzbrandnew", known}, {1, 1000}) == 1);
  REQUIRE(m.words.size() == before.words.size() + 1);
  CHECK(m.input.rows() == oldWords + 1 + static_cast<Eigen::Index>(c.bucket));
  CHECK(m.output.rows() == oldWords + 1);
  // The n-gram rows are the last `bucket` rows, as they were.
  CHECK(m.input.bottomRows(c.bucket) == before.input.bottomRows(c.bucket));
  // Every old word keeps its rows and count (plus what was added), wherever it moved.
  for (std::size_t i = 0; i < before.words.size(); ++i) {
    const auto at = static_cast<Eigen::Index>(
        std::find(m.words.begin(), m.words.end(), before.words[i]) - m.words.begin());
    REQUIRE(at < static_cast<Eigen::Index>(m.words.size()));
    CHECK(m.input.row(at) == before.input.row(static_cast<Eigen::Index>(i)));
    CHECK(m.output.row(at) == before.output.row(static_cast<Eigen::Index>(i)));
    CHECK(m.counts[static_cast<std::size_t>(at)] ==
          before.counts[i] + (before.words[i] == known ? 1000 : 0));
  }
  CHECK(m.words.front() == known);  // now the most frequent
  // The new word's row is drawn as rows are (uniform in [-1/dim, 1/dim)), unlike any other.
  const auto fresh = static_cast<Eigen::Index>(
      std::find(m.words.begin(), m.words.end(), "zzbrandnew") - m.words.begin());
  const float bound = 1.0f / static_cast<float>(c.dim);
  CHECK(m.input.row(fresh).cwiseAbs().maxCoeff() <= bound);
  CHECK(m.input.row(fresh).cwiseAbs().maxCoeff() > 0);
  for (Eigen::Index r = 0; r < m.input.rows(); ++r)
    if (r != fresh) CHECK_FALSE(m.input.row(r) == m.input.row(fresh));
  // Training goes on over the grown vocabulary.
  resumeTraining(m, CorpusSource::fromSentences({{"zzbrandnew", known, "zzbrandnew"}}), 1);
  CHECK(m.epochsDone == c.epochs + 1);
}

TEST_CASE("subword training runs the subword kernels whichever kernel is asked for",
          "[subword]") {
  for (const auto kernel : {Kernel::Batched, Kernel::Classic}) {
    TrainConfig c = subwordConfig();
    c.kernel = kernel;
    CHECK(detail::kernelFor(c) == detail::KernelKind::SubwordSkipGram);
    c.architecture = Architecture::Cbow;
    CHECK(detail::kernelFor(c) == detail::KernelKind::SubwordCbow);
    CHECK(detail::kernelName(detail::kernelFor(c)) == "subword");
  }
  // Classic and batched give the same subword model (one thread, one seed).
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(8, 200));
  TrainConfig a = subwordConfig(), b = subwordConfig();
  a.epochs = b.epochs = 1;
  b.kernel = Kernel::Classic;
  CHECK(sameMatrix(train(corpus, a).input, train(corpus, b).input));
}
