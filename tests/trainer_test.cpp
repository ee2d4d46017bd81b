#include "posvec/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "kernels.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "exit_code.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {

constexpr int kClasses = 6, kPerClass = 12;

// Words in a corpus of sentences, counted here rather than by the trainer under test.
std::int64_t wordsIn(const std::vector<Sentence>& sentences) {
  std::int64_t n = 0;
  for (const auto& s : sentences) n += static_cast<std::int64_t>(s.size());
  return n;
}

std::string wordOf(int cls, int i) {
  std::string w = "c";
  w += std::to_string(cls);
  w += 'w';
  w += std::to_string(i);
  return w;
}

// Planted structure: each sentence talks about one class (its words share
// contexts), sprinkled with function words every class uses.
std::vector<Sentence> plantedCorpus(unsigned seed, int sentences = 2500) {
  std::mt19937 gen(seed);
  const std::vector<std::string> function{"the", "a", "of", "and"};
  std::vector<Sentence> out;
  for (int s = 0; s < sentences; ++s) {
    const int cls = static_cast<int>(gen() % kClasses);
    const int len = 6 + static_cast<int>(gen() % 8);
    Sentence sent;
    for (int t = 0; t < len; ++t) {
      if (gen() % 5 == 0)
        sent.push_back(function[gen() % function.size()]);
      else
        sent.push_back(wordOf(cls, static_cast<int>(gen() % kPerClass)));
    }
    out.push_back(std::move(sent));
  }
  return out;
}

// Fraction of class words whose nearest neighbour (cosine, all words) is in the same class.
double plantedAccuracy(const ModelState& model) {
  const Embeddings e = embeddingsOf(model);
  int good = 0, total = 0;
  for (int c = 0; c < kClasses; ++c) {
    for (int i = 0; i < kPerClass; ++i) {
      const auto nn = e.nearest(wordOf(c, i), 1);
      REQUIRE(nn.size() == 1);
      ++total;
      good += nn[0].word.rfind("c" + std::to_string(c) + "w", 0) == 0;
    }
  }
  return static_cast<double>(good) / total;
}

TrainConfig smallConfig() {
  TrainConfig c;
  c.dim = 24;
  c.epochs = 5;
  c.minCount = 1;
  c.sample = 0;
  c.threads = 1;
  c.seed = 7;
  return c;
}

bool sameMatrix(const MatrixF& a, const MatrixF& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0;
}

}  // namespace

TEST_CASE("trainer skip-gram puts planted classes together and the loss falls", "[trainer]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(1, 500));
  std::vector<EpochReport> reports;
  TrainObserver obs;
  obs.epochEnd = [&](const EpochReport& r) { reports.push_back(r); };
  const ModelState m = train(corpus, smallConfig(), obs);
  CHECK(m.words.size() == kClasses * kPerClass + 4);
  CHECK(m.epochsDone == 5);
  REQUIRE(m.epochLosses.size() == 5);
  REQUIRE(reports.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(reports[i].loss == m.epochLosses[i]);
    CHECK(reports[i].words ==
          static_cast<std::int64_t>(
              m.counts.size() ? std::accumulate(m.counts.begin(), m.counts.end(), std::int64_t{0})
                              : 0));
  }
  // The untrained loss is (1 + negative) * log 2 (all dot products start at 0); it must fall.
  CHECK(m.epochLosses[0] < 6 * std::log(2.0));
  for (std::size_t i = 1; i < 5; ++i) CHECK(m.epochLosses[i] < m.epochLosses[i - 1]);
  CHECK(plantedAccuracy(m) >= 0.9);
}

TEST_CASE("trainer epoch reports count the skip-gram pairs trained", "[trainer]") {
  // Window 1 never shrinks (the reach is 1 - a draw below 1), and with subsampling
  // off every word is kept: a sentence of L words has 2 (L - 1) (context, centre)
  // pairs in every epoch, whichever kernel and however many threads.
  std::vector<Sentence> sentences;
  std::int64_t pairs = 0;
  std::mt19937 gen(5);
  for (int s = 0; s < 300; ++s) {
    Sentence sent;
    const int len = 1 + static_cast<int>(gen() % 12);
    for (int t = 0; t < len; ++t) sent.push_back("w" + std::to_string(gen() % 40));
    pairs += 2 * (len - 1);
    sentences.push_back(std::move(sent));
  }
  // Batched one window per block, batched in blocks of 8 centre words, classic.
  for (const int variant : {0, 1, 2})
    for (const int threads : {1, 2}) {
      const Kernel kernel = variant == 2 ? Kernel::Classic : Kernel::Batched;
      INFO("kernel " << static_cast<int>(kernel) << " variant " << variant << " threads "
                     << threads);
      TrainConfig c = smallConfig();
      c.window = 1;
      c.epochs = 2;
      c.kernel = kernel;
      c.combine = variant == 1 ? 8 : 1;
      c.threads = threads;
      std::vector<EpochReport> reports;
      TrainObserver obs;
      obs.epochEnd = [&](const EpochReport& r) { reports.push_back(r); };
      train(CorpusSource::fromSentences(sentences), c, obs);
      REQUIRE(reports.size() == 2);
      for (const EpochReport& r : reports) CHECK(r.predictions == pairs);
    }
}

TEST_CASE("trainer CBOW and hierarchical softmax also find the planted classes", "[trainer]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(2));
  struct Case {
    Architecture arch;
    Loss loss;
    double alpha;
  };
  for (const Case k : {Case{Architecture::SkipGram, Loss::HierarchicalSoftmax, 0.025},
                       Case{Architecture::Cbow, Loss::NegativeSampling, 0.05},
                       Case{Architecture::Cbow, Loss::HierarchicalSoftmax, 0.05}}) {
    TrainConfig c = smallConfig();
    c.architecture = k.arch;
    c.loss = k.loss;
    c.alpha = k.alpha;
    const ModelState m = train(corpus, c);
    INFO("architecture " << static_cast<int>(k.arch) << " loss " << static_cast<int>(k.loss));
    if (k.loss == Loss::HierarchicalSoftmax)
      CHECK(m.output.rows() == static_cast<Eigen::Index>(m.words.size()) - 1);
    CHECK(m.epochLosses.back() < m.epochLosses.front());
    CHECK(plantedAccuracy(m) >= 0.9);
  }
}

TEST_CASE("trainer with one thread is bitwise deterministic", "[trainer]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(3, 1500));
  TrainConfig c = smallConfig();
  c.sample = 1e-2;
  c.epochs = 2;
  const ModelState a = train(corpus, c), b = train(corpus, c);
  CHECK(sameMatrix(a.input, b.input));
  CHECK(sameMatrix(a.output, b.output));
  CHECK(a.epochLosses == b.epochLosses);
  c.seed = 8;
  const ModelState other = train(corpus, c);
  CHECK_FALSE(sameMatrix(a.input, other.input));
}

TEST_CASE("trainer with two threads still learns", "[trainer]") {
  TrainConfig c = smallConfig();
  c.seed = 8;
  c.threads = 2;
  c.epochs = 5;
  c.sample = 0;
  const ModelState two = train(CorpusSource::fromSentences(plantedCorpus(1)), c);
  CHECK(plantedAccuracy(two) >= 0.9);
}

TEST_CASE("trainer initialisation depends on the seed, not on the thread count", "[trainer]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(4, 300));
  TrainConfig c = smallConfig();
  TrainObserver stopAtOnce;
  stopAtOnce.stopRequested = [] { return true; };
  c.threads = 1;
  const ModelState one = train(corpus, c, stopAtOnce);
  c.threads = 2;
  const ModelState two = train(corpus, c, stopAtOnce);
  c.threads = 5;
  const ModelState five = train(corpus, c, stopAtOnce);
  CHECK(one.epochsDone == 0);
  CHECK(sameMatrix(one.input, two.input));
  CHECK(sameMatrix(one.input, five.input));
  CHECK(one.output.isZero());
  // Uniform in [-1/dim, 1/dim) as in gensim and fastText, no row left at zero, mean near 0.
  const float bound = 1.0f / static_cast<float>(c.dim);
  CHECK(one.input.maxCoeff() < bound);
  CHECK(one.input.minCoeff() >= -bound);
  for (Eigen::Index r = 0; r < one.input.rows(); ++r) CHECK(one.input.row(r).squaredNorm() > 0);
  CHECK(std::abs(one.input.mean()) < bound / 10);
}

TEST_CASE("trainer resume continues the schedule bitwise", "[trainer]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(5, 800));
  TrainConfig c = smallConfig();
  c.epochs = 3;
  c.sample = 1e-2;
  const ModelState full = train(corpus, c);

  int asked = 0;
  TrainObserver stopAfterTwo;
  stopAfterTwo.stopRequested = [&] { return asked++ == 2; };
  ModelState part = train(corpus, c, stopAfterTwo);
  REQUIRE(part.epochsDone == 2);
  CHECK_FALSE(sameMatrix(part.input, full.input));
  resumeTraining(part, corpus, 1);
  CHECK(part.epochsDone == 3);
  CHECK(sameMatrix(part.input, full.input));
  CHECK(sameMatrix(part.output, full.output));
  CHECK(part.epochLosses == full.epochLosses);
  CHECK(part.config == full.config);

  // Resuming a finished 3-epoch model for 2 more: the stored schedule becomes 5 epochs
  // and the learning rate goes on from where 3 of 5 epochs put it. Progress reports
  // come when the words of an epoch pass 10000 (at a sentence end), so this part
  // needs a corpus of more than 10000 words.
  const std::vector<Sentence> sentences = plantedCorpus(5, 3000);
  const auto bigger = CorpusSource::fromSentences(sentences);
  ModelState more = train(bigger, c);
  // One thread publishes its count at the first sentence end where the words since
  // the last publication reach 10000: those are the only points a report can show.
  std::vector<std::int64_t> flushes;
  std::int64_t epochWords = 0, pending = 0;
  for (const auto& s : sentences) {
    epochWords += static_cast<std::int64_t>(s.size());
    pending += static_cast<std::int64_t>(s.size());
    if (pending >= 10000) {
      flushes.push_back(epochWords);
      pending = 0;
    }
  }
  REQUIRE(flushes.size() >= 2);
  std::vector<TrainProgress> reports;
  TrainObserver watch;
  watch.progress = [&](const TrainProgress& p) { reports.push_back(p); };
  resumeTraining(more, bigger, 2, watch);
  CHECK(more.epochsDone == 5);
  CHECK(TrainConfig::deserialize(more.config).epochs == 5);
  CHECK(more.epochLosses.size() == 5);
  std::vector<double> alphas;
  REQUIRE_FALSE(reports.empty());
  for (const TrainProgress& p : reports) {
    INFO("epoch " << p.epoch << " words " << p.wordsProcessed << " alpha " << p.alpha);
    REQUIRE((p.epoch == 4 || p.epoch == 5));
    const std::int64_t done = p.wordsProcessed - epochWords * (p.epoch - 4);
    CHECK(std::find(flushes.begin(), flushes.end(), done) != flushes.end());
    // Linear decay over all 5 epochs, from alpha to minAlpha (word2vec.c).
    const double at = static_cast<double>(epochWords * (p.epoch - 1) + done) / (5.0 * epochWords);
    CHECK(p.fraction == Approx(at).epsilon(1e-12));
    CHECK(p.alpha == Approx(c.alpha - (c.alpha - c.minAlpha) * at).epsilon(1e-6));
    alphas.push_back(p.alpha);
  }
  // Both resumed epochs report (the first publication of an epoch always does), the
  // rate keeps falling, and it stays above what the end of a 3-epoch schedule gives.
  CHECK(std::count_if(reports.begin(), reports.end(), [](const TrainProgress& p) { return p.epoch == 4; }) >= 1);
  CHECK(std::count_if(reports.begin(), reports.end(), [](const TrainProgress& p) { return p.epoch == 5; }) >= 1);
  CHECK(std::is_sorted(alphas.rbegin(), alphas.rend()));
  CHECK(alphas.front() > c.minAlpha + (c.alpha - c.minAlpha) * 0.2 - 1e-9);
  CHECK_THROWS_AS(resumeTraining(more, corpus, 0), ConfigError);
}

TEST_CASE("trainer reads pre-tokenized files exactly like the same sentences in memory",
          "[trainer]") {
  test::TempDir dir;
  const auto sentences = plantedCorpus(6, 600);
  std::string text;
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    // Varied whitespace, CRLF and blank lines must not matter.
    for (std::size_t j = 0; j < sentences[i].size(); ++j)
      text += (j ? (j % 3 ? " " : " \t ") : "") + sentences[i][j];
    text += i % 4 == 0 ? "\r\n\n" : "\n";
  }
  // Split over two files at a sentence boundary.
  const auto half = text.find('\n', text.size() / 2) + 1;
  test::writeText(dir.file("a.txt"), text.substr(0, half));
  test::writeText(dir.file("b.txt"), text.substr(half));
  TrainConfig c = smallConfig();
  c.epochs = 2;
  c.minCount = 2;
  const ModelState fromFiles =
      train(CorpusSource::fromFiles({dir.file("a.txt"), dir.file("b.txt")}, true), c);
  const ModelState fromMemory = train(CorpusSource::fromSentences(sentences), c);
  CHECK(fromFiles.words == fromMemory.words);
  CHECK(fromFiles.counts == fromMemory.counts);
  CHECK(sameMatrix(fromFiles.input, fromMemory.input));
}

TEST_CASE("trainer reports unusable input with clear errors", "[trainer]") {
  test::TempDir dir;
  TrainConfig c = smallConfig();
  CHECK_THROWS_AS(train(CorpusSource::fromFiles({dir.file("missing.txt")}, true), c), IoError);
  test::writeText(dir.file("empty.txt"), "\n  \n\t\n");
  try {
    train(CorpusSource::fromFiles({dir.file("empty.txt")}, true), c);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("empty.txt") != std::string::npos);
  }
  c.minCount = 50;
  CHECK_THROWS_AS(train(CorpusSource::fromSentences({{"a", "b"}, {"a"}}), c), InputError);
  c = smallConfig();
  c.dim = 0;
  CHECK_THROWS_AS(train(CorpusSource::fromSentences({{"a", "b"}}), c), ConfigError);
  c = smallConfig();
  c.loss = Loss::HierarchicalSoftmax;
  CHECK_THROWS_AS(train(CorpusSource::fromSentences({{"a", "a"}}), c), InputError);

  // A model whose matrices don't match its vocabulary is refused, not trained.
  ModelState m = train(CorpusSource::fromSentences(plantedCorpus(7, 100)), smallConfig());
  ModelState broken = m;
  broken.input.conservativeResize(broken.input.rows() - 1, Eigen::NoChange);
  CHECK_THROWS_AS(resumeTraining(broken, CorpusSource::fromSentences(plantedCorpus(7, 100)), 1),
                  FormatError);
  broken = m;
  broken.config = "dim=12\n";
  CHECK_THROWS_AS(resumeTraining(broken, CorpusSource::fromSentences(plantedCorpus(7, 100)), 1),
                  FormatError);
  broken = m;
  broken.config = "garbage";
  CHECK_THROWS_AS(resumeTraining(broken, CorpusSource::fromSentences(plantedCorpus(7, 100)), 1),
                  FormatError);
  // Exceptions thrown by the observer inside the OpenMP region reach the caller.
  TrainObserver throwing;
  throwing.epochEnd = [](const EpochReport&) { throw InputError("stop"); };
  CHECK_THROWS_AS(
      train(CorpusSource::fromSentences(plantedCorpus(7, 100)), smallConfig(), throwing),
      InputError);
  TrainObserver throwingProgress;
  throwingProgress.progress = [](const TrainProgress&) { throw IoError("progress failed"); };
  TrainConfig twoThreads = smallConfig();
  twoThreads.threads = 2;
  CHECK_THROWS_AS(
      train(CorpusSource::fromSentences(plantedCorpus(7, 3000)), twoThreads, throwingProgress),
      IoError);
}

TEST_CASE("trainer sigmoid and softplus tables match the exact functions", "[trainer]") {
  detail::Sigmoid s;
  for (double x = -12; x <= 12; x += 0.0137) {
    const double sig = 1 / (1 + std::exp(-x));
    const double sp = std::log1p(std::exp(x));
    if (std::abs(x) < 8) CHECK(std::abs(s.sigmoid(static_cast<float>(x)) - sig) < 2e-5);
    CHECK(std::abs(s.softplus(static_cast<float>(x)) - sp) < 2e-5 * std::max(1.0, std::abs(sp)));
  }
}

TEST_CASE("trainer sigmoid and softplus hold at the table's last cell", "[trainer]") {
  detail::Sigmoid s;
  // 8 - 2^-21 + 8 rounds to 16 (a tie, to even): the cell index is the table's last
  // point, with fraction 0. The value there is the function at 8.
  float x = 8.0f;
  for (int k = 0; k < 8; ++k) {
    x = std::nextafter(x, 0.0f);
    INFO("x = 8 - " << k + 1 << " ulp");
    CHECK(s.sigmoid(x) == Approx(1 / (1 + std::exp(-8.0))).epsilon(1e-6));
    CHECK(s.softplus(x) == Approx(std::log1p(std::exp(8.0))).epsilon(1e-6));
  }
  // The vector kernels' pair tables: (f(p_i), f(p_i+1)) at p_i = -8 + i / 128.
  const float* sig = s.sigmoidPairs();
  const float* sp = s.softplusPairs();
  for (int i = 0; i <= detail::Sigmoid::kSize; ++i) {
    const double p = -8.0 + i / 128.0, q = std::min(8.0, p + 1 / 128.0);
    INFO("point " << i);
    CHECK(sig[2 * i] == Approx(1 / (1 + std::exp(-p))).epsilon(1e-6));
    CHECK(sig[2 * i + 1] == Approx(1 / (1 + std::exp(-q))).epsilon(1e-6));
    CHECK(sp[2 * i] == Approx(std::log1p(std::exp(p))).epsilon(1e-6));
    CHECK(sp[2 * i + 1] == Approx(std::log1p(std::exp(q))).epsilon(1e-6));
  }
}

TEST_CASE("trainer sigmoid and softplus pass NaN through instead of indexing with it",
          "[trainer]") {
  detail::Sigmoid s;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(std::isnan(s.sigmoid(nan)));
  CHECK(std::isnan(s.softplus(nan)));
  // Clipped at +-8 like every large score.
  CHECK(s.sigmoid(inf) == Approx(1 / (1 + std::exp(-8.0))).epsilon(1e-5));
  CHECK(s.sigmoid(-inf) == Approx(1 / (1 + std::exp(8.0))).epsilon(1e-3));
  CHECK(std::isinf(s.softplus(inf)));
  CHECK(s.softplus(-inf) == 0.0f);
}

namespace {

std::string writeCorpus(const test::TempDir& dir, int sentences = 400) {
  std::string text;
  for (const auto& s : plantedCorpus(11, sentences)) {
    for (std::size_t j = 0; j < s.size(); ++j) text += (j ? " " : "") + s[j];
    text += "\n";
  }
  const std::string path = dir.file("corpus.txt");
  test::writeText(path, text);
  return path;
}

int lineCount(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST_CASE("trainer CLI stops a diverging run with a message in every kernel", "[trainer][cli]") {
  // The shipped corpus with a learning rate of 1 overflows the weights within the first
  // epoch, whichever update rule runs (CBOW averages its context, so it needs 5).
  test::TempDir dir;
  const std::string corpus = test::sourcePath("corpus/posvec-corpus.txt");
  const std::string out = dir.file("a.bin");
  for (const char* variant : {"--alpha 1", "--alpha 1 --kernel classic", "--alpha 1 --hs",
                              "--alpha 5 --cbow", "--alpha 1 --cbow --hs"}) {
    INFO(variant);
    const auto r = test::runCli("train " + test::quote(corpus) + " " + variant +
                                " --min-count 1 --epochs 1 --threads 1 --dim 8 -o " +
                                test::quote(out) + " --quiet");
    CHECK(r.status == 2);
    CHECK(lineCount(r.err) == 1);
    CHECK(r.err.find("training diverged at epoch 1 (loss ") != std::string::npos);
    CHECK(r.err.find("-nan") == std::string::npos);  // a NaN loss is "nan", whatever its sign bit
    CHECK(r.err.find("lower the learning rate (--alpha") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("trainer CLI stops a run whose loss leaves its range before writing anything",
          "[trainer][cli]") {
  // Before: only a NaN loss stopped training; at alpha 0.2 the batched kernel's loss
  // grew to 38 per prediction (Brown: 1e22) and the run exited 0 with vectors of 1e10.
  // The shipped corpus four times over: long enough for several stretches a thread.
  test::TempDir dir;
  const std::string text = test::readText(test::sourcePath("corpus/posvec-corpus.txt"));
  const std::string corpus = dir.file("c4.txt");
  test::writeText(corpus, text + text + text + text);
  const std::string out = dir.file("v.npy");
  const std::string common = "-q train " + test::quote(corpus) +
                             " --min-count 1 --epochs 1 --threads 1 --dim 16 -o " +
                             test::quote(out);
  // The untrained loss per prediction with 5 negatives: 6 ln 2.
  std::ostringstream untrained;
  untrained << 6 * std::log(2.0);
  for (const char* alpha : {"0.2", "0.25"}) {
    INFO("alpha " << alpha);
    const auto r = test::runCli(common + " --alpha " + alpha);
    CHECK(r.status == 2);
    CHECK(lineCount(r.err) == 1);
    CHECK(r.err.find("training diverged at epoch 1 (loss ") != std::string::npos);
    CHECK(r.err.find(" per prediction, against " + untrained.str() + " at the start)") !=
          std::string::npos);
    CHECK(r.err.find("lower the learning rate (--alpha, now " + std::string(alpha) +
                     "), or train with the classic kernel") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  }
  // The classic kernel's pair-by-pair updates take that rate, and the default trains.
  for (const char* ok : {" --alpha 0.2 --kernel classic", ""}) {
    INFO(ok);
    const auto r = test::runCli(common + ok);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(std::filesystem::exists(out));
    std::filesystem::remove(out);
  }
}

TEST_CASE("trainer CLI trains, writes vectors and a resumable model", "[trainer][cli]") {
  test::TempDir dir;
  const std::string corpus = writeCorpus(dir);
  const std::string common =
      " --pretokenized --dim 16 --min-count 1 --threads 1 --seed 3 --sample 0";
  auto r = test::runCli("--quiet train " + test::quote(corpus) + common + " --epochs 2 -o " +
                        test::quote(dir.file("v.txt")) + " --save-model " +
                        test::quote(dir.file("m.posvec")) + " --json");
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["epochs_done"] == 2);
  CHECK(j["epoch_losses"].size() == 2);
  const Embeddings e = loadVectors(dir.file("v.txt"));
  CHECK(e.dim() == 16);
  CHECK(e.size() == kClasses * kPerClass + 4);
  ModelState m = loadModel(dir.file("m.posvec"));
  CHECK(m.epochsDone == 2);

  // Resume for one more epoch: a 3-epoch schedule, model file and vectors written.
  r = test::runCli("train " + test::quote(corpus) +
                   " --pretokenized --threads 1 --epochs 1 --resume " +
                   test::quote(dir.file("m.posvec")) + " -o " + test::quote(dir.file("m3.posvec")));
  REQUIRE(r.status == 0);
  CHECK(r.err.find("epoch 3 done") != std::string::npos);
  m = loadModel(dir.file("m3.posvec"));
  CHECK(m.epochsDone == 3);
  CHECK(m.epochLosses.size() == 3);
}

TEST_CASE("trainer CLI refuses to resume a model whose counts overflow 64 bits", "[trainer][cli]") {
  test::TempDir dir;
  const std::string corpus = writeCorpus(dir, 50);
  TrainConfig c = smallConfig();
  ModelState m = train(CorpusSource::fromSentences(plantedCorpus(11, 50)), c);
  // Still sorted and positive, but the sum wraps past INT64_MAX.
  m.counts[0] = std::numeric_limits<std::int64_t>::max() - 1;
  m.counts[1] = m.counts[0];
  saveModel(m, dir.file("huge.posvec"));
  const std::string out = dir.file("out.bin");
  const auto r = test::runCli("train " + test::quote(corpus) + " --pretokenized --resume " +
                              test::quote(dir.file("huge.posvec")) + " -o " + test::quote(out));
  CHECK(r.status == 4);
  CHECK(lineCount(r.err) == 1);
  CHECK(r.err.find("word counts add up to more than 2^63 - 1") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("trainer CLI refuses bad input with one error line and no output", "[trainer][cli]") {
  test::TempDir dir;
  const std::string corpus = writeCorpus(dir, 50);
  const std::string out = dir.file("out.bin");
  test::writeText(dir.file("empty.txt"), "");
  test::writeText(dir.file("bad.posvec"), "POSVECM1 this is not a model");
  const std::vector<std::pair<std::string, int>> cases{
      {"train " + test::quote(dir.file("missing.txt")) + " --pretokenized -o " + test::quote(out),
       3},
      {"train " + test::quote(dir.file("empty.txt")) + " --pretokenized -o " + test::quote(out), 5},
      {"train " + test::quote(corpus) + " --pretokenized --min-count 100000 -o " + test::quote(out),
       5},
      {"train " + test::quote(corpus) + " --pretokenized --dim 0 -o " + test::quote(out), 2},
      {"train " + test::quote(corpus) + " --pretokenized --dim -5 -o " + test::quote(out), 2},
      {"train " + test::quote(corpus) + " --pretokenized --window 0 -o " + test::quote(out), 2},
      {"train " + test::quote(corpus) + " --pretokenized --epochs 0 -o " + test::quote(out), 2},
      {"train " + test::quote(corpus) + " --pretokenized --frobnicate -o " + test::quote(out), 2},
      {"train " + test::quote(corpus) + " --pretokenized -o " + test::quote(dir.file("x.weird")),
       2},
      {"train " + test::quote(corpus) + " --pretokenized -o " +
           test::quote(dir.file("no/such/dir/v.bin")),
       3},
      {"train " + test::quote(corpus) + " --pretokenized --resume " +
           test::quote(dir.file("bad.posvec")) + " -o " + test::quote(out),
       4},
  };
  for (const auto& [args, code] : cases) {
    INFO(args);
    const auto r = test::runCli(args);  // not quiet: still one line
    CHECK(r.status == code);
    CHECK(lineCount(r.err) == 1);
    CHECK(r.err.rfind("posvec: error: ", 0) == 0);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("trainer CLI says what is wrong with a negative size and an output over an input",
          "[trainer][cli]") {
  test::TempDir dir;
  const std::string corpus = writeCorpus(dir, 50);
  const std::string before = test::readText(corpus);
  for (const std::string option : {"--dim", "--max-vocab"}) {
    const auto r = test::runCli("train " + test::quote(corpus) + " --pretokenized " + option +
                                " -1 -o " + test::quote(dir.file("v.bin")));
    CHECK(r.status == 2);
    CHECK(lineCount(r.err) == 1);
    CHECK(r.err.find(option + ": must not be negative (got -1)") != std::string::npos);
    CHECK(r.err.find("18446744073709551615") == std::string::npos);
  }
  // The corpus as output (by another spelling, and through a hard link), or as --save-model.
  std::filesystem::create_hard_link(corpus, dir.file("link.txt"));
  const std::string dotted = (dir.path() / "." / "corpus.txt").string();
  for (const std::string& out :
       {"-o " + test::quote(corpus), "-o " + test::quote(dotted) + " --format text",
        "-o " + test::quote(dir.file("link.txt")) + " --format text",
        "-o " + test::quote(dir.file("v.bin")) + " --save-model " + test::quote(dotted)}) {
    INFO(out);
    const auto r = test::runCli("train " + test::quote(corpus) +
                                " --pretokenized --min-count 1 --dim 4 --epochs 1 " + out);
    CHECK(r.status == 2);
    CHECK(lineCount(r.err) == 1);
    CHECK(r.err.find("is the input file") != std::string::npos);
    CHECK(test::readText(corpus) == before);
    CHECK_FALSE(std::filesystem::exists(dir.file("v.bin")));
  }
}

TEST_CASE("trainer CLI refuses an output that is a file of a corpus directory",
          "[trainer][cli]") {
  namespace fs = std::filesystem;
  test::TempDir dir;
  const std::string corpus = writeCorpus(dir, 50);
  const std::string text = test::readText(corpus);
  const fs::path books = dir.path() / "books";
  fs::create_directories(books / "more");
  test::writeText((books / "a.txt").string(), text);
  test::writeText((books / "more" / "b.txt").string(), text);
  const std::string common = " --pretokenized --min-count 1 --dim 4 --epochs 1 --format text ";
  struct Case {
    std::string args, input;
  };
  // By its own name, by another spelling, as --save-model, and in a subdirectory read
  // with --recursive: each names a file the corpus directory stands for.
  const std::string a = (books / "a.txt").string(), b = (books / "more" / "b.txt").string();
  for (const Case& c :
       {Case{"-o " + test::quote(a), a},
        Case{"-o " + test::quote((books / "." / "more" / ".." / "a.txt").string()), a},
        Case{"-o " + test::quote(dir.file("v.txt")) + " --save-model " + test::quote(a), a},
        Case{"--recursive -o " + test::quote(b), b}}) {
    INFO(c.args);
    const auto r = test::runCli("train " + test::quote(books.string()) + common + c.args);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(lineCount(r.err) == 1);
    CHECK(r.err.find("is the input file '" + c.input + "'") != std::string::npos);
    CHECK(test::readText(a) == text);
    CHECK(test::readText(b) == text);
    CHECK_FALSE(fs::exists(dir.file("v.txt")));
  }
  // Without --recursive the subdirectory is not read: writing there is allowed.
  const auto ok = test::runCli("train " + test::quote(books.string()) + common + "-o " +
                               test::quote(b));
  INFO(ok.err);
  CHECK(ok.status == 0);
  CHECK(test::readText(b) != text);
  CHECK(test::readText(a) == text);
}

TEST_CASE("trainer reads raw text through the tokenizer", "[trainer]") {
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 30; ++i) text += "The Cat sat on the mat. The dog, however, ran! ";
  test::writeText(dir.file("raw.txt"), text);
  TrainConfig c = smallConfig();
  c.epochs = 1;
  const ModelState m = train(CorpusSource::fromFiles({dir.file("raw.txt")}), c);
  CHECK(m.words[0] == "the");
  CHECK(std::find(m.words.begin(), m.words.end(), "cat") != m.words.end());
  CHECK(std::find(m.words.begin(), m.words.end(), "Cat") == m.words.end());
  CHECK(std::find(m.words.begin(), m.words.end(), ",") != m.words.end());
}

TEST_CASE("trainer CLI names its flag in front of the library's option meaning",
          "[trainer][cli]") {
  test::TempDir dir;
  const std::string corpus = writeCorpus(dir, 20);
  const std::string out = dir.file("v.bin");
  // The library says what the option means; the command line adds the flag.
  const std::pair<const char*, const char*> cases[] = {
      {"--dim 0", "posvec: error: --dim: dimension must be between 1 and 100000 (got 0)"},
      {"--window 0", "posvec: error: --window: window must be between 1 and 1000 (got 0)"},
      {"--alpha 0", "posvec: error: --alpha: initial learning rate must be in (0, 10]"},
      {"--min-count 0", "posvec: error: --min-count: minimum count must be at least 1 (got 0)"},
  };
  for (const auto& [flags, message] : cases) {
    INFO(flags);
    const auto r = test::runCli("train " + test::quote(corpus) + " --pretokenized " + flags +
                                " -o " + test::quote(out));
    CHECK(r.status == 2);
    CHECK(r.err.rfind(message, 0) == 0);
  }
  // The same check in the library carries no flag.
  TrainConfig c;
  c.dim = 0;
  CHECK_THROWS_WITH(c.validate(), "dimension must be between 1 and 100000 (got 0)");
}

TEST_CASE("trainer stopped or checkpointed inside an epoch resumes bitwise at one thread",
          "[trainer]") {
  // Long enough for several safe points (one every 10,000 words) per epoch.
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(9, 6000));
  TrainConfig c = smallConfig();
  c.epochs = 3;
  c.sample = 1e-2;
  const ModelState full = train(corpus, c);

  // A checkpoint at the fourth safe point (inside epoch 1), training goes on unchanged.
  int asked = 0;
  std::optional<ModelState> saved;
  TrainObserver checkpointing;
  checkpointing.interrupt = [&] { return ++asked == 4 ? Interrupt::Checkpoint : Interrupt::None; };
  checkpointing.checkpoint = [&](const ModelState& m) { saved = m; };
  const ModelState through = train(corpus, c, checkpointing);
  CHECK(sameMatrix(through.input, full.input));
  CHECK(through.epochLosses == full.epochLosses);
  REQUIRE(saved);
  REQUIRE(saved->partial.active());
  CHECK(saved->epochsDone == 0);
  // Four flushes of at least 10,000 words each, cut at sentence ends (at most 13 words).
  CHECK(saved->partial.words >= 40000);
  CHECK(saved->partial.words < 40000 + 4 * 13);
  CHECK(epochsLeft(*saved) == 3);

  // Through the model file (version 2) and back, then the rest of the schedule.
  test::TempDir dir;
  saveModel(*saved, dir.file("ck.posvec"));
  ModelState resumed = loadModel(dir.file("ck.posvec"));
  REQUIRE(resumed.partial.shards.size() == 1);
  CHECK(resumed.partial.shards[0].rng == saved->partial.shards[0].rng);
  CHECK(resumed.partial.shards[0].loss == saved->partial.shards[0].loss);
  resumeTraining(resumed, corpus, epochsLeft(resumed));
  CHECK(resumed.epochsDone == 3);
  CHECK_FALSE(resumed.partial.active());
  CHECK(sameMatrix(resumed.input, full.input));
  CHECK(sameMatrix(resumed.output, full.output));
  CHECK(resumed.epochLosses == full.epochLosses);

  // Stop inside epoch 2 (the Stop arrives at a safe point of epoch 2).
  asked = 0;
  TrainObserver stopping;
  int epochsEnded = 0;
  stopping.epochEnd = [&](const EpochReport&) { ++epochsEnded; };
  stopping.interrupt = [&] {
    return epochsEnded == 1 && ++asked == 2 ? Interrupt::Stop : Interrupt::None;
  };
  ModelState stopped = train(corpus, c, stopping);
  CHECK(stopped.epochsDone == 1);
  REQUIRE(stopped.partial.active());
  CHECK(stopped.partial.words >= 10000);
  CHECK(stopped.partial.words < 10000 + 13);
  CHECK(stopped.epochLosses.size() == 1);
  resumeTraining(stopped, corpus, 2);
  CHECK(sameMatrix(stopped.input, full.input));
  CHECK(stopped.epochLosses == full.epochLosses);
}

TEST_CASE("trainer asks for an interrupt before its first progress report", "[trainer]") {
  // The CLI quits at once on a signal until the first safe point asks (nothing can
  // be saved before); a signal sent on seeing the first progress line must find a
  // state to save. So every report follows an ask, at one thread and at two.
  for (int threads : {1, 2}) {
    const auto corpus = CorpusSource::fromSentences(plantedCorpus(9, 3000));
    TrainConfig c = smallConfig();
    c.threads = threads;
    int asks = 0;
    std::vector<int> asksAtReport;
    TrainObserver watch;
    watch.interrupt = [&] {
      ++asks;
      return Interrupt::None;
    };
    watch.progress = [&](const TrainProgress&) { asksAtReport.push_back(asks); };
    INFO(threads << " threads");
    train(corpus, c, watch);
    REQUIRE_FALSE(asksAtReport.empty());
    CHECK(asksAtReport.front() >= 1);
  }
}

TEST_CASE("trainer with two threads stopped inside an epoch finishes it with both threads",
          "[trainer]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(10, 8000));
  TrainConfig c = smallConfig();
  c.epochs = 2;
  c.threads = 2;
  int asked = 0;
  TrainObserver stopping;
  stopping.interrupt = [&] { return ++asked == 2 ? Interrupt::Stop : Interrupt::None; };
  ModelState m = train(corpus, c, stopping);
  REQUIRE(m.partial.active());
  REQUIRE(m.partial.shards.size() == 2);
  CHECK(m.epochsDone == 0);
  // The first shard was stopped inside; the second starts where it ends.
  CHECK(m.partial.shards[0].position < m.partial.shards[0].end);
  CHECK(m.partial.shards[1].position >= m.partial.shards[0].end);
  CHECK(m.partial.shards[1].end == m.partial.streamSize);
  // Resumed with one thread: the unfinished epoch still runs its two shards.
  TrainConfig stored = TrainConfig::deserialize(m.config);
  stored.threads = 1;
  m.config = stored.serialize();
  std::int64_t words = 0;
  TrainObserver watch;
  watch.epochEnd = [&](const EpochReport& r) {
    if (r.epoch == 1) words = r.words;
  };
  resumeTraining(m, corpus, 2, watch);
  CHECK(m.epochsDone == 2);
  CHECK(m.epochLosses.size() == 2);
  CHECK(words == wordsIn(plantedCorpus(10, 8000)));
  CHECK(plantedAccuracy(m) >= 0.9);
}

TEST_CASE("trainer speed of a resumed epoch counts only the words this run trained",
          "[trainer]") {
  const std::vector<Sentence> sentences = plantedCorpus(3, 16000);
  const std::int64_t tokens = wordsIn(sentences);
  const auto corpus = CorpusSource::fromSentences(sentences);
  TrainConfig c = smallConfig();
  c.dim = 8;
  c.epochs = 1;
  // Stopped at the tenth safe point: about 100,000 of the ~150,000 words are done.
  int asked = 0;
  TrainObserver stopping;
  stopping.interrupt = [&] { return ++asked == 10 ? Interrupt::Stop : Interrupt::None; };
  ModelState m = train(corpus, c, stopping);
  REQUIRE(m.partial.active());
  const std::int64_t before = m.partial.words;
  REQUIRE(before >= 100000);
  const std::int64_t left = tokens - before;  // what the resumed run trains
  REQUIRE(left >= 40000);                     // four safe points or more

  // Every safe point of the resumed run sleeps 100 ms: the time spent in those
  // calls, measured here, is a lower bound on the run's elapsed time at each report.
  using Clock = std::chrono::steady_clock;
  double slept = 0;
  struct Seen {
    double wordsPerSecond, slept;
  };
  std::vector<Seen> seen;
  std::vector<EpochReport> reports;
  double sleptAtEnd = 0;
  TrainObserver watch;
  watch.interrupt = [&] {
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    slept += std::chrono::duration<double>(Clock::now() - t0).count();
    return Interrupt::None;
  };
  watch.progress = [&](const TrainProgress& p) { seen.push_back({p.wordsPerSecond, slept}); };
  watch.epochEnd = [&](const EpochReport& r) {
    reports.push_back(r);
    sleptAtEnd = slept;
  };
  resumeTraining(m, corpus, 1, watch);
  CHECK(m.epochsDone == 1);

  // Reports come at most every 0.25 s of this run: the first at once, then after the sleeps.
  REQUIRE(seen.size() >= 2);
  for (const Seen& s : seen) {
    INFO("words/s " << s.wordsPerSecond << " after " << s.slept << " s asleep");
    // words/s x (a lower bound on the elapsed time) <= the words this run trained.
    // Counting the earlier run's words too would make it about 2.5 times that.
    CHECK(s.wordsPerSecond * s.slept <= static_cast<double>(left));
  }
  // The epoch's report: all its words, of which `left` in this run, and the run's time.
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].words == tokens);
  CHECK(reports[0].runWords == left);
  CHECK(reports[0].seconds >= sleptAtEnd);  // the sleeps so far were inside the epoch

  // A run that was not resumed: every word of each epoch is its own.
  std::vector<EpochReport> fresh;
  TrainObserver plain;
  plain.epochEnd = [&](const EpochReport& r) { fresh.push_back(r); };
  train(corpus, c, plain);
  REQUIRE(fresh.size() == 1);
  CHECK(fresh[0].runWords == tokens);
  CHECK(fresh[0].words == tokens);
}

TEST_CASE("trainer refuses to finish an epoch on a different corpus", "[trainer]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(9, 6000));
  TrainConfig c = smallConfig();
  TrainObserver stopping;
  int asked = 0;
  stopping.interrupt = [&] { return ++asked == 2 ? Interrupt::Stop : Interrupt::None; };
  ModelState m = train(corpus, c, stopping);
  REQUIRE(m.partial.active());
  CHECK_THROWS_WITH(resumeTraining(m, CorpusSource::fromSentences(plantedCorpus(9, 5000)), 1),
                    Catch::Contains("different corpus"));
}

TEST_CASE("trainer model file keeps version 1 at epoch boundaries and 2 inside an epoch",
          "[trainer]") {
  const auto corpus = CorpusSource::fromSentences(plantedCorpus(9, 3000));
  TrainConfig c = smallConfig();
  c.epochs = 1;
  test::TempDir dir;
  const ModelState done = train(corpus, c);
  saveModel(done, dir.file("a.posvec"));
  TrainObserver stopping;
  stopping.interrupt = [] { return Interrupt::Stop; };
  const ModelState inside = train(corpus, c, stopping);
  REQUIRE(inside.partial.active());
  saveModel(inside, dir.file("b.posvec"));
  auto versionOf = [](const std::string& bytes) {
    std::uint32_t v;
    std::memcpy(&v, bytes.data() + 8, 4);
    return v;
  };
  const std::string a = test::readText(dir.file("a.posvec"));
  const std::string b = test::readText(dir.file("b.posvec"));
  CHECK(versionOf(a) == 1);
  CHECK(versionOf(b) == 2);
  // Version 2 adds 16 + 40 bytes a thread; `inside` has one epoch loss (8 bytes) fewer.
  CHECK(b.size() == a.size() + 16 + 40 - 8);
  // A version 2 file cut short is refused, not misread.
  test::writeText(dir.file("c.posvec"), b.substr(0, b.size() - 8));
  CHECK_THROWS_AS(loadModel(dir.file("c.posvec")), FormatError);
}

TEST_CASE("trainer CLI finds invalid UTF-8 before training and accepts --replace-invalid",
          "[trainer][cli]") {
  test::TempDir dir;
  std::string text = test::readText(writeCorpus(dir, 200));
  const std::size_t secondLine = text.find('\n') + 1;
  text.insert(secondLine + 2, "\x97");
  test::writeText(dir.file("bad.txt"), text);
  const std::string base = "train " + test::quote(dir.file("bad.txt")) +
                           " --pretokenized --dim 8 --min-count 1 --threads 1 -o " +
                           test::quote(dir.file("v.txt"));
  auto r = test::runCli(base);
  CHECK(r.status == static_cast<int>(cli::ExitCode::Input));
  CHECK(r.err.find("line 2: invalid UTF-8 at byte offset " + std::to_string(secondLine + 2)) !=
        std::string::npos);
  CHECK(r.err.find("training") == std::string::npos);  // found by the counting pass
  CHECK_FALSE(std::filesystem::exists(dir.file("v.txt")));
  r = test::runCli(base + " --replace-invalid");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(test::readText(dir.file("v.txt")).find("\xEF\xBF\xBD") != std::string::npos);
}

TEST_CASE("trainer CLI writes and reads word2vec.c vocabulary files", "[trainer][cli]") {
  test::TempDir dir;
  const std::string corpus = writeCorpus(dir, 300);
  // Expected counts, computed here: sorted by count, ties in first-seen order, min-count 3.
  std::vector<std::string> order;
  std::map<std::string, std::int64_t> counts;
  int lines = 0;
  for (const auto& s : plantedCorpus(11, 300)) {
    ++lines;
    for (const auto& w : s)
      if (counts[w]++ == 0) order.push_back(w);
  }
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return counts[a] > counts[b];
  });
  std::string expected = "</s> " + std::to_string(lines) + "\n";
  for (const auto& w : order)
    if (counts[w] >= 3) expected += w + " " + std::to_string(counts[w]) + "\n";
  const std::string common = " --pretokenized --dim 8 --threads 1 --epochs 1 -q";
  auto r = test::runCli("train " + test::quote(corpus) + common + " --min-count 3 -o " +
                        test::quote(dir.file("v.txt")) + " --save-vocab " +
                        test::quote(dir.file("vocab.txt")));
  REQUIRE(r.status == 0);
  CHECK(test::readText(dir.file("vocab.txt")) == expected);

  // Standard input through a pipe, counted on two threads: the same vocabulary file.
  // (A subshell: runShell's own stdin redirection must not replace the pipe.)
  r = test::runShell("(cat " + test::quote(corpus) + " | '" + POSVEC_CLI + "' train -" +
                     " --pretokenized --dim 8 --threads 2 --epochs 1 -q --min-count 3 -o " +
                     test::quote(dir.file("v2.txt")) + " --save-vocab " +
                     test::quote(dir.file("vocab2.txt")) + ")");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(test::readText(dir.file("vocab2.txt")) == expected);
  // Invalid UTF-8 there: the one-thread message, line and byte offset in the whole input.
  std::string bad = test::readText(corpus);
  const std::size_t line3 = bad.find('\n', bad.find('\n') + 1) + 1;
  bad.insert(line3 + 2, "\xF5");
  test::writeText(dir.file("bad.txt"), bad);
  for (const char* threads : {"1", "2"}) {
    const auto e = test::runShell("(cat " + test::quote(dir.file("bad.txt")) + " | '" + POSVEC_CLI +
                                  "' train - --pretokenized --dim 8 -q --threads " + threads +
                                  " -o " + test::quote(dir.file("v3.txt")) + ")");
    INFO(threads << " threads: " << e.err);
    CHECK(e.status == 5);
    CHECK(e.err.find("'<stdin>' line 3: invalid UTF-8 at byte offset " + std::to_string(line3 + 2) +
                     " (byte \\xF5") != std::string::npos);
  }

  // A hand-made vocabulary: only its words are trained, most frequent first; words
  // under --min-count (here 2) are dropped as word2vec.c does.
  test::writeText(dir.file("mine.txt"), "</s> 1\nc1w1 5\nthe 50\nnotthere 3\nrare 1\n");
  r = test::runCli("train " + test::quote(corpus) + common + " --min-count 2 --read-vocab " +
                   test::quote(dir.file("mine.txt")) + " -o " + test::quote(dir.file("m.txt")));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const Embeddings e = loadVectors(dir.file("m.txt"));
  CHECK(e.words() == std::vector<std::string>{"the", "c1w1", "notthere"});
  test::writeText(dir.file("broken.txt"), "the 5\nc1w1\n");
  r = test::runCli("train " + test::quote(corpus) + common + " --read-vocab " +
                   test::quote(dir.file("broken.txt")) + " -o " + test::quote(dir.file("b.txt")));
  CHECK(r.status == static_cast<int>(cli::ExitCode::Input));
  CHECK(r.err.find("line 2") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("b.txt")));
}

TEST_CASE("trainer CLI resume says how many tokens are outside the vocabulary and warns on --alpha",
          "[trainer][cli]") {
  test::TempDir dir;
  const std::string corpus = writeCorpus(dir, 200);
  auto r = test::runCli("-q train " + test::quote(corpus) +
                        " --pretokenized --dim 8 --min-count 1 --threads 1 --epochs 1 -o " +
                        test::quote(dir.file("m.posvec")));
  REQUIRE(r.status == 0);
  // The same corpus plus one line of 3 new words and 2 known ones.
  const std::string more = dir.file("more.txt");
  test::writeText(more, test::readText(corpus) + "brandnew the novel a unseen\n");
  const std::int64_t tokens = wordsIn(plantedCorpus(11, 200)) + 5;
  r = test::runCli("train " + test::quote(more) +
                   " --pretokenized --threads 1 --epochs 1 --alpha 0.05 --resume " +
                   test::quote(dir.file("m.posvec")) + " -o " + test::quote(dir.file("m2.posvec")));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("3 of " + std::to_string(tokens) + " corpus tokens") != std::string::npos);
  CHECK(r.err.find("outside it and skipped") != std::string::npos);
  CHECK(r.err.find("warning: --alpha 0.05 replaces the model's 0.025") != std::string::npos);
  const ModelState m = loadModel(dir.file("m2.posvec"));
  CHECK(TrainConfig::deserialize(m.config).alpha == 0.05);
}

TEST_CASE("trainer CLI dry run prints the memory estimate and trains nothing", "[trainer][cli]") {
  test::TempDir dir;
  const std::string corpus = writeCorpus(dir);
  // The vocabulary, counted here independently: words seen at least 3 times.
  std::map<std::string, int> counts;
  for (const auto& s : plantedCorpus(11, 400))
    for (const auto& w : s) ++counts[w];
  std::size_t v = 0, longHeap = 0;
  for (const auto& [w, n] : counts)
    if (n >= 3) {
      ++v;
      if (w.size() > 15) longHeap += 1;
    }
  REQUIRE(longHeap == 0);  // no heap strings: the vocabulary term is per word only
  const std::string out = dir.file("v.bin");
  for (const int dim : {16, 300}) {
    const auto r = test::runCli("--quiet train " + test::quote(corpus) +
                                " --pretokenized --min-count 3 --threads 2 --dry-run --json --dim " +
                                std::to_string(dim) + " -o " + test::quote(out));
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["words"] == v);
    CHECK(j["matrices_bytes"] == 2 * v * static_cast<std::size_t>(dim) * 4);
    // Vocabulary: at least the strings, counts and index nodes (over 100 bytes a word).
    CHECK(j["vocabulary_bytes"].get<std::uint64_t>() >= 100 * v);
    CHECK(j["vocabulary_bytes"].get<std::uint64_t>() <= 400 * v);
    CHECK(j["total_bytes"] == j["matrices_bytes"].get<std::uint64_t>() +
                                  j["vocabulary_bytes"].get<std::uint64_t>() +
                                  j["buffers_bytes"].get<std::uint64_t>());
    CHECK(j["fits"] == true);
    CHECK_FALSE(std::filesystem::exists(out));
  }
  // Plain text: the total in bytes on one line.
  const auto r = test::runCli("train " + test::quote(corpus) +
                              " --pretokenized --min-count 3 --dry-run --dim 16 -o " +
                              test::quote(out));
  REQUIRE(r.status == 0);
  CHECK(r.out.find("vocabulary: " + std::to_string(v) + " words, dim 16\n") != std::string::npos);
  CHECK(r.out.find("memory estimate: ") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("trainer refuses before training when the estimate exceeds the memory",
          "[trainer][cli]") {
  test::TempDir dir;
  const std::string corpus = writeCorpus(dir);
  const std::string out = dir.file("v.bin");
  const std::string common = " --pretokenized --min-count 1 --threads 1 --epochs 1 -o ";
  // 2 x V x 512 x 4 bytes of matrices alone exceed 64 KiB.
  auto r = test::runCli("train " + test::quote(corpus) + common + test::quote(out) +
                        " --dim 512 --memory-limit 64K");
  CHECK(r.status == 2);
  CHECK(lineCount(r.err) == 1);
  for (const char* option : {"--min-count", "--max-vocab", "--dim", "training needs about"})
    CHECK(r.err.find(option) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  // The same corpus fits in 1 GiB and trains.
  r = test::runCli("--quiet train " + test::quote(corpus) + common + test::quote(out) +
                   " --dim 8 --memory-limit 1G");
  CHECK(r.status == 0);
  CHECK(std::filesystem::exists(out));
  // A malformed limit is one clear error.
  r = test::runCli("train " + test::quote(corpus) + common + test::quote(out) +
                   " --dim 8 --memory-limit lots");
  CHECK(r.status != 0);
  CHECK(r.err.find("--memory-limit: memory limit must be a positive size") != std::string::npos);
  // The CLI also takes the limit from the environment; the library reads none.
  r = test::runCli("train " + test::quote(corpus) + common + test::quote(out) + " --dim 512",
                   "", "POSVEC_MEMORY_LIMIT=64K");
  CHECK(r.status == 2);
  CHECK(r.err.find("but only 64.0 KiB are allowed (--memory-limit or POSVEC_MEMORY_LIMIT)") !=
        std::string::npos);
  r = test::runCli("train " + test::quote(corpus) + common + test::quote(out) + " --dim 8",
                   "", "POSVEC_MEMORY_LIMIT=lots");
  CHECK(r.err.find("POSVEC_MEMORY_LIMIT: memory limit must be a positive size") !=
        std::string::npos);

  // The library: the same check through the config.
  TrainConfig c = smallConfig();
  c.dim = 512;
  c.memoryLimit = 64 * 1024;
  try {
    train(CorpusSource::fromSentences(plantedCorpus(11, 50)), c);
    FAIL("trained beyond the memory limit");
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    CHECK(m.find("but only 64.0 KiB are allowed (the memory limit); shrink the vocabulary with "
                 "the minimum count (now 1) or the vocabulary limit (now 0, 0: no limit), or "
                 "lower the dimension") != std::string::npos);
    std::vector<std::string> named;
    for (const SettingMention& s : e.mentions()) named.push_back(s.setting);
    CHECK(named == std::vector<std::string>{"memoryLimit", "minCount", "maxVocab", "dim"});
  }
  CHECK(estimateTrainingMemory(CorpusSource::fromSentences(plantedCorpus(11, 50)), c).available ==
        64 * 1024);
  // The environment is not read: the physical memory.
  ::setenv("POSVEC_MEMORY_LIMIT", "64K", 1);
  CHECK(availableMemory() > 64 * 1024);
  ::unsetenv("POSVEC_MEMORY_LIMIT");
  // Sizes: powers of 1024, an optional i/B.
  CHECK(parseMemorySize("64K") == 64 * 1024);
  CHECK(parseMemorySize("1.5GiB") == 3ull * 512 * 1024 * 1024);
  CHECK(parseMemorySize("1000000") == 1000000);
  CHECK_THROWS_AS(parseMemorySize("lots"), ConfigError);
  CHECK_THROWS_AS(parseMemorySize("-1G"), ConfigError);
}

namespace {

// A version-2 model file laid out here byte by byte from the format's description
// (header, config, words, counts, losses, input, output, the unfinished epoch), so the
// test does not depend on saveModel's own limits.
void writeModelV2(const ModelState& m, const std::string& path) {
  std::string b("POSVECM1", 8);
  auto put = [&](auto v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); };
  std::uint64_t wordBytes = 0;
  for (const auto& w : m.words) wordBytes += w.size();
  put(std::uint32_t{2});
  put(std::uint32_t{0});
  put(static_cast<std::uint64_t>(m.words.size()));
  put(static_cast<std::uint64_t>(m.input.cols()));
  put(static_cast<std::uint64_t>(m.output.rows()));
  put(static_cast<std::uint64_t>(m.config.size()));
  put(wordBytes);
  put(static_cast<std::uint64_t>(m.epochLosses.size()));
  put(static_cast<std::int32_t>(m.epochsDone));
  put(static_cast<std::uint32_t>(m.partial.shards.size()));
  b += m.config;
  for (const auto& w : m.words) {
    put(static_cast<std::uint32_t>(w.size()));
    b += w;
  }
  for (auto c : m.counts) put(static_cast<std::int64_t>(c));
  for (double l : m.epochLosses) put(l);
  b.append(reinterpret_cast<const char*>(m.input.data()), m.input.size() * sizeof(float));
  b.append(reinterpret_cast<const char*>(m.output.data()), m.output.size() * sizeof(float));
  put(m.partial.words);
  put(m.partial.streamSize);
  for (const ShardProgress& s : m.partial.shards) {
    put(s.position);
    put(s.end);
    put(s.rng);
    put(s.loss);
    put(s.predictions);
  }
  test::writeText(path, b);
}

// The model stopped inside its first epoch at one thread, then given `shards` thread
// positions: the first is the real one, the others empty ranges at the stream's end
// (each valid on its own).
ModelState withShards(ModelState m, std::size_t shards) {
  REQUIRE(m.partial.shards.size() == 1);
  ShardProgress empty;
  empty.position = empty.end = m.partial.streamSize;
  m.partial.shards.resize(shards, empty);
  return m;
}

}  // namespace

TEST_CASE("trainer refuses at load and at resume more thread positions than training runs",
          "[trainer]") {
  // Before: 65,536 recorded positions loaded and resuming crashed inside libgomp.
  test::TempDir dir;
  const std::string corpusFile = dir.file("corpus.txt");
  {
    std::string text;
    for (const auto& s : plantedCorpus(21, 3000)) {
      for (std::size_t i = 0; i < s.size(); ++i) text += (i ? " " : "") + s[i];
      text += "\n";
    }
    test::writeText(corpusFile, text);
  }
  const auto corpus = CorpusSource::fromFiles({corpusFile}, true);
  TrainConfig c = smallConfig();
  c.epochs = 1;
  c.threads = 1;
  int asked = 0;
  TrainObserver stopping;
  stopping.interrupt = [&] { return ++asked == 1 ? Interrupt::Stop : Interrupt::None; };
  const ModelState stopped = train(corpus, c, stopping);
  REQUIRE(stopped.partial.active());
  REQUIRE(kMaxTrainThreads == 4096);

  for (const std::size_t n : {std::size_t{4097}, std::size_t{65536}}) {
    INFO(n);
    const std::string file = dir.file("many.posvec");
    writeModelV2(withShards(stopped, n), file);
    CHECK_THROWS_AS(loadModel(file), FormatError);
    CHECK_THROWS_WITH(loadModel(file),
                      Catch::Contains(std::to_string(n) + " threads were inside an epoch") &&
                          Catch::Contains("at most 4096"));
    // The library's own entry point refuses a state built in memory too.
    ModelState m = withShards(stopped, n);
    CHECK_THROWS_WITH(resumeTraining(m, corpus, 1), Catch::Contains("at most 4096"));
    // The CLI: one line and a clean exit code, not a signal.
    const auto r = test::runCli("train " + test::quote(corpusFile) + " --pretokenized --resume " +
                                test::quote(file) + " -o " + test::quote(dir.file("out.bin")));
    CHECK(r.status != 0);
    CHECK(r.status < 128);
    CHECK(r.err.find("at most 4096") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }

  // Up to the limit a model loads; its positions are shared out over this run's threads
  // (here 2 run 64 positions) and the epoch ends with every corpus word trained once.
  const std::string file = dir.file("64.posvec");
  writeModelV2(withShards(stopped, 64), file);
  ModelState m = loadModel(file);
  REQUIRE(m.partial.shards.size() == 64);
  TrainConfig stored = TrainConfig::deserialize(m.config);
  stored.threads = 2;
  m.config = stored.serialize();
  std::int64_t words = 0;
  TrainObserver watch;
  watch.epochEnd = [&](const EpochReport& r) { words = r.words; };
  resumeTraining(m, corpus, 1, watch);
  CHECK(m.epochsDone == 1);
  CHECK_FALSE(m.partial.active());
  CHECK(words == wordsIn(plantedCorpus(21, 3000)));
}

namespace {

// The VmFlags line of the mapping of this process that holds address `p`
// (empty when /proc/self/smaps does not list it or gives no flags).
std::string mappingFlags(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(' ') > line.find('-')) {
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

// Whether the middle of a matrix lies in a mapping marked for huge pages ("hg").
bool asksHugePages(const MatrixF& m) {
  const std::string flags = mappingFlags(m.data() + m.size() / 2);
  INFO(flags);
  return flags.find(" hg") != std::string::npos;
}

}  // namespace

TEST_CASE("large training matrices ask for transparent huge pages", "[trainer]") {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled"))
    POSVEC_SKIP("this kernel has no transparent huge pages");
  {
    std::vector<std::string> words;
    std::vector<std::int64_t> counts;
    for (int i = 0; i < 3000; ++i) {
      words.push_back("w" + std::to_string(i));
      counts.push_back(10000 - i);
    }
    TrainConfig c;
    c.dim = 1024;  // 3000 x 1024 floats: 12 MB a matrix
    const ModelState fresh = initialModel(Vocabulary(words, counts), c);
    if (mappingFlags(fresh.input.data() + fresh.input.size() / 2).empty())
      POSVEC_SKIP("/proc/self/smaps gives no VmFlags");
    CHECK(asksHugePages(fresh.input));
    CHECK(asksHugePages(fresh.output));
  }
  // A training's matrices (n-gram buckets: 20,000 x 128 floats, 10 MB), and the
  // same model read back from its file.
  std::vector<Sentence> sentences(50, Sentence{"tea", "and", "café", "or", "tea"});
  TrainConfig c;
  c.dim = 128;
  c.epochs = 1;
  c.minCount = 1;
  c.threads = 1;
  c.subwords = true;
  c.bucket = 20000;
  const ModelState trained = train(CorpusSource::fromSentences(sentences), c);
  CHECK(asksHugePages(trained.input));
  test::TempDir dir;
  saveModel(trained, dir.file("m.posvec"));
  const ModelState loaded = loadModel(dir.file("m.posvec"));
  CHECK(asksHugePages(loaded.input));
  // Below 8 MB no advice is given: a 256 x 1024 matrix (1 MB) comes from the heap.
  std::vector<std::string> few(256);
  std::vector<std::int64_t> fewCounts(256);
  for (int i = 0; i < 256; ++i) {
    few[static_cast<std::size_t>(i)] = "x" + std::to_string(i);
    fewCounts[static_cast<std::size_t>(i)] = 1000 - i;
  }
  TrainConfig small;
  small.dim = 1024;
  CHECK_FALSE(asksHugePages(initialModel(Vocabulary(few, fewCounts), small).input));
}
