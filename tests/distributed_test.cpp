// Distributed training (src/train/distributed.cpp) through the CLI under mpirun, two
// to eight ranks on this machine (oversubscribed). Skips when the build has no MPI or mpirun is
// missing.
#include "posvec/distributed.hpp"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <tuple>

#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "exit_code.hpp"
#include "test_util.hpp"

using namespace posvec;
using namespace posvec::test;

namespace {

std::string mpirunPath() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t at = 0;
  while (at <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', at), dirs.size());
    const fs::path p = fs::path(dirs.substr(at, end - at)) / "mpirun";
    if (::access(p.c_str(), X_OK) == 0) return p.string();
    at = end + 1;
  }
  return {};
}

// Why the distributed tests cannot run here, or empty.
std::string cannotRun() {
  if (!POSVEC_TEST_MPI) return "this build has no MPI (POSVEC_MPI=OFF)";
  if (mpirunPath().empty())
    return "mpirun is not installed (tools/scripts/setup.sh installs Open MPI)";
  return {};
}

// The flags the tests need on a shared machine where they run as root; users
// run plain `mpirun -np N`. `apps` is one or more "-np K posvec-args" blocks
// joined by " : " (MPMD), with POSVEC for the CLI path. The timeout turns a
// hang into a failure.
RunResult mpirun(const std::string& apps) {
  std::string expanded = apps;
  for (std::size_t at; (at = expanded.find("POSVEC")) != std::string::npos;)
    expanded.replace(at, 6, quote(POSVEC_CLI));
  // A session directory of its own: jobs started at once (CTest -j, other users'
  // tests) race to create /tmp/ompi.HOST.UID, and the loser fails in orte_init.
  const TempDir session;
  return runShell("timeout 120 " + quote(mpirunPath()) + " --allow-run-as-root --oversubscribe " +
                  "--mca orte_tmpdir_base " + quote(session.path().string()) + " " + expanded);
}

constexpr int kClasses = 6, kPerClass = 12;

// Planted structure, one sentence a line: each sentence talks about one class
// (its words share contexts), sprinkled with function words every class uses.
void writePlanted(const std::string& path, unsigned seed, int sentences) {
  std::mt19937 gen(seed);
  const std::vector<std::string> function{"the", "a", "of", "and"};
  std::ofstream out(path);
  for (int s = 0; s < sentences; ++s) {
    const int cls = static_cast<int>(gen() % kClasses);
    const int len = 6 + static_cast<int>(gen() % 8);
    for (int t = 0; t < len; ++t) {
      if (t) out << ' ';
      if (gen() % 5 == 0)
        out << function[gen() % function.size()];
      else
        out << 'c' << cls << 'w' << gen() % kPerClass;
    }
    out << '\n';
  }
}

// Fraction of class words whose nearest neighbour is in the same class.
double plantedAccuracy(const Embeddings& e) {
  int good = 0, total = 0;
  for (int c = 0; c < kClasses; ++c) {
    for (int i = 0; i < kPerClass; ++i) {
      const std::string w = "c" + std::to_string(c) + "w" + std::to_string(i);
      const auto nn = e.nearest(w, 1);
      REQUIRE(nn.size() == 1);
      ++total;
      good += nn[0].word.rfind("c" + std::to_string(c) + "w", 0) == 0;
    }
  }
  return static_cast<double>(good) / total;
}

// The planted corpus of 3,000 sentences in `dir`, and the arguments that train on it
// (one thread, seed 7, 5 epochs, the JSON summary on stdout) up to the output.
std::string plantedTraining(const TempDir& dir) {
  const std::string corpus = dir.file("planted.txt");
  writePlanted(corpus, 1, 3000);
  return " train " + quote(corpus) +
         " --pretokenized --dim 24 --min-count 1 --sample 0 --threads 1 --seed 7 --epochs 5 --json";
}

// What the planted-class runs train with (one thread, seed 7, 5 epochs, 1,000-word
// rounds, the JSON summary on stdout), after the corpus and before any other flag.
constexpr const char* kPlantedRounds =
    " --pretokenized --dim 24 --min-count 1 --sample 0 --threads 1 --seed 7 --epochs 5 "
    "--sync-words 1000 --json";
#define REQUIRE_MPI()                                                        \
  do {                                                                       \
    if (const std::string why = cannotRun(); !why.empty()) POSVEC_SKIP(why); \
  } while (0)

}  // namespace

TEST_CASE("distributed training on 2 ranks recovers the planted classes as one process does",
          "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  const std::string common = plantedTraining(dir);
  const RunResult one = runCli(common + " -o " + quote(dir.file("one.txt")));
  REQUIRE(one.status == 0);
  // 1000 words between synchronisations: about 14 in each rank's share of 14k words.
  const RunResult two =
      mpirun("-np 2 POSVEC" + common + " --sync-words 1000 -o " + quote(dir.file("two.txt")));
  INFO(two.err);
  REQUIRE(two.status == 0);
  const auto summary = nlohmann::json::parse(two.out);
  CHECK(summary["ranks"] == 2);
  CHECK(summary["epochs_done"] == 5);
  // Progress and summaries come once, from rank 0.
  const std::regex syncs(
      "sync: ([0-9]+) rounds, ([0-9.]+) MB sent per rank, ([0-9.]+) % of wall time waiting\n");
  std::smatch m;
  REQUIRE(std::regex_search(two.err, m, syncs));
  CHECK(std::stoi(m[1]) >= 10);
  CHECK(std::stod(m[2]) > 0);
  CHECK(std::stod(m[3]) <= 100);
  CHECK(two.err.find("sync:", static_cast<std::size_t>(m.position(0)) + 1) == std::string::npos);
  CHECK(std::count(two.out.begin(), two.out.end(), '{') == 1);

  const Embeddings a = loadVectors(dir.file("one.txt"));
  const Embeddings b = loadVectors(dir.file("two.txt"));
  CHECK(a.words() == b.words());
  const double accOne = plantedAccuracy(a), accTwo = plantedAccuracy(b);
  CHECK(accOne >= 0.9);
  CHECK(accTwo >= 0.9);
  // Each rank trains half the words per epoch, and combining must not lose them:
  // the last epoch's loss lands near the one-process loss, far below the untrained
  // (1 + negative) log 2. On this 76-word corpus with 1,000-word rounds, 2 ranks end
  // at about 1.2 times the one-process loss with the default blocks of 4 centre
  // words (1.1 with one window per block); a rank whose changes were lost would end
  // near the untrained value.
  const double lossOne = nlohmann::json::parse(one.out)["epoch_losses"].back();
  const double lossTwo = summary["epoch_losses"].back();
  CHECK(lossTwo < 0.6 * 6 * std::log(2.0));
  CHECK(lossTwo < lossOne * 1.3);
}

TEST_CASE("distributed warm-up rounds are counted from the largest share", "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  const std::string corpus = dir.file("planted.txt");
  writePlanted(corpus, 3, 2000);
  // The two shares as the test cuts them: at the first line start at or after half the bytes.
  const std::string text = readText(corpus);
  const std::size_t cut =
      text[text.size() / 2 - 1] == '\n' ? text.size() / 2 : text.find('\n', text.size() / 2) + 1;
  auto wordsIn = [](const std::string& part) {
    std::istringstream in(part);
    std::int64_t n = 0;
    for (std::string w; in >> w;) ++n;
    return n;
  };
  const std::int64_t most = std::max(wordsIn(text.substr(0, cut)), wordsIn(text.substr(cut)));
  // Points strictly inside the share: every 4000 words later, and from 1000 doubling first.
  std::int64_t later = 0, first = 0;
  for (std::int64_t at = 4000; at < most; at += 4000) ++later;
  for (std::int64_t at = 0, step = 1000; at + step < most;
       step = std::min<std::int64_t>(4000, 2 * step)) {
    at += step;
    ++first;
  }
  REQUIRE(first > later);
  const RunResult two = mpirun("-np 2 POSVEC train " + quote(corpus) +
                               " --pretokenized --dim 8 --min-count 1 --sample 0 --threads 1 "
                               "--epochs 2 --sync-words 4000 --sync-warmup 1000 "
                               "--sync-schedule dense -o " +
                               quote(dir.file("w.txt")));
  INFO(two.err);
  REQUIRE(two.status == 0);
  const std::regex line(
      "synchronisation: ([0-9]+) rounds .* per epoch: .*warm-up adds ([0-9]+) rounds\\)");
  std::smatch m;
  REQUIRE(std::regex_search(two.err, m, line));
  CHECK(std::stoll(m[1]) == later);
  CHECK(std::stoll(m[2]) == first - later);
}

TEST_CASE("distributed vocabulary is the one-process vocabulary in order and counts",
          "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  // Raw text through the tokenizer, two files cut by three ranks (cuts inside
  // files); min-count 1 keeps the many ties in count, whose order is first occurrence.
  const std::string text = readText(sourcePath("corpus/posvec-corpus.txt"));
  const std::size_t half = text.find('\n', text.size() / 3) + 1;
  writeText(dir.file("a.txt"), text.substr(0, half));
  writeText(dir.file("b.txt"), text.substr(half));
  const std::string common = " -q train " + quote(dir.file("a.txt")) + " " +
                             quote(dir.file("b.txt")) +
                             " --dim 8 --epochs 1 --min-count 1 --threads 1 -o ";
  REQUIRE(runCli(common + quote(dir.file("one.posvec"))).status == 0);
  const RunResult three = mpirun("-np 3 POSVEC" + common + quote(dir.file("three.posvec")));
  INFO(three.err);
  REQUIRE(three.status == 0);
  const ModelState one = loadModel(dir.file("one.posvec"));
  const ModelState dist = loadModel(dir.file("three.posvec"));
  CHECK(one.words.size() > 500);
  CHECK(dist.words == one.words);
  CHECK(dist.counts == one.counts);
}

TEST_CASE("distributed counts match counts computed by the test", "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  // Pre-tokenized lines: the expected vocabulary is counted here, with ties in
  // first-occurrence order, and min-count 3 applied.
  std::mt19937 gen(11);
  std::ostringstream text;
  std::map<std::string, std::pair<std::int64_t, int>> counted;  // count, first position
  int position = 0;
  for (int line = 0; line < 4000; ++line) {
    const int len = 1 + static_cast<int>(gen() % 9);
    for (int t = 0; t < len; ++t) {
      // Zipf-like: small ids often, many ties among the rare ones.
      const unsigned id = static_cast<unsigned>(gen() % 40) * static_cast<unsigned>(gen() % 40) / 8;
      const std::string w = "w" + std::to_string(id);
      text << (t ? "\t" : "") << w;
      auto [it, fresh] = counted.try_emplace(w, 0, position++);
      ++it->second.first;
    }
    text << "\n";
  }
  writeText(dir.file("c.txt"), text.str());
  std::vector<std::tuple<std::int64_t, int, std::string>> expected;
  for (const auto& [w, cp] : counted)
    if (cp.first >= 3) expected.emplace_back(-cp.first, cp.second, w);
  std::sort(expected.begin(), expected.end());
  const RunResult two = mpirun("-np 2 POSVEC -q train " + quote(dir.file("c.txt")) +
                               " --pretokenized --dim 4 --epochs 1 --min-count 3 --threads 1 -o " +
                               quote(dir.file("c.posvec")));
  INFO(two.err);
  REQUIRE(two.status == 0);
  const ModelState m = loadModel(dir.file("c.posvec"));
  REQUIRE(m.words.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(m.words[i] == std::get<2>(expected[i]));
    CHECK(m.counts[i] == -std::get<0>(expected[i]));
  }
}

TEST_CASE("distributed ranks started with different options are refused", "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  writePlanted(dir.file("p.txt"), 2, 200);
  const std::string args = " -q train " + quote(dir.file("p.txt")) +
                           " --pretokenized --min-count 1 --epochs 1 -o " +
                           quote(dir.file("out.txt"));
  const RunResult r =
      mpirun("-np 1 POSVEC" + args + " --dim 8 : -np 1 POSVEC" + args + " --dim 12");
  INFO(r.err);
  CHECK(r.status == static_cast<int>(cli::ExitCode::Usage));
  CHECK(r.err.find("posvec: error: rank 1 of 2: started with other options than rank 0 "
                   "('dim=12' where rank 0 has 'dim=8')") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("out.txt")));
  // The thread count may differ (machines differ): that run trains.
  const RunResult threads = mpirun("-np 1 POSVEC" + args + " --dim 8 --threads 1 : -np 1 POSVEC" +
                                   args + " --dim 8 --threads 2");
  INFO(threads.err);
  CHECK(threads.status == 0);
  CHECK(fs::exists(dir.file("out.txt")));
}

TEST_CASE("distributed train beside another command in one job is refused, not left waiting",
          "[distributed]") {
  // Before: mpirun -np 1 posvec train ... : -np 1 posvec vector ... left the train rank
  // waiting forever for a rank that never joined (here the timeout would fail it).
  REQUIRE_MPI();
  TempDir dir;
  writePlanted(dir.file("p.txt"), 2, 200);
  writeText(dir.file("v.txt"), "2 2\na 1 0\nb 0 1\n");
  const std::string train = " -q train " + quote(dir.file("p.txt")) +
                            " --pretokenized --min-count 1 --epochs 1 --dim 8 -o " +
                            quote(dir.file("out.txt"));
  const std::string vector = " vector " + quote(dir.file("v.txt")) + " a";
  for (const auto& [apps, expected] : std::vector<std::pair<std::string, std::string>>{
           {"-np 1 POSVEC" + train + " : -np 1 POSVEC" + vector,
            "('command=vector' where rank 0 has 'command=train')"},
           {"-np 1 POSVEC" + vector + " : -np 1 POSVEC" + train,
            "('command=train' where rank 0 has 'command=vector')"}}) {
    INFO(apps);
    const RunResult r = mpirun(apps);
    INFO(r.err);
    CHECK(r.status == static_cast<int>(cli::ExitCode::Usage));
    CHECK(r.err.find("posvec: error: rank 1 of 2: started with other options than rank 0 " +
                     expected) != std::string::npos);
    CHECK_FALSE(fs::exists(dir.file("out.txt")));
  }
}

TEST_CASE("distributed training whose loss leaves its range stops and names the combining rule",
          "[distributed]") {
  // Before: only a NaN stopped a run; 4 ranks summing their changes reached a loss of
  // 1.9e12 on Brown x16 and wrote their vectors with exit 0. Here the learning rate
  // makes the loss leave its range within the first stretches.
  REQUIRE_MPI();
  TempDir dir;
  const std::string text = readText(sourcePath("corpus/posvec-corpus.txt"));
  std::string many;
  for (int i = 0; i < 16; ++i) many += text;
  writeText(dir.file("c.txt"), many);
  const std::string args = " -q train " + quote(dir.file("c.txt")) +
                           " --min-count 1 --dim 16 --epochs 1 --threads 1 --alpha 0.2 -o " +
                           quote(dir.file("v.npy"));
  const RunResult sum = mpirun("-np 4 POSVEC" + args + " --sync-combine sum");
  INFO(sum.err);
  CHECK(sum.status != 0);
  CHECK(sum.err.find("training diverged at epoch 1 (loss ") != std::string::npos);
  CHECK(sum.err.find("combine their changes with the momentum rule (--sync-combine momentum, the "
                     "default) or lower the learning rate (--alpha, now 0.2)") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("v.npy")));
}

TEST_CASE("a failing distributed rank ends the job with an error naming it", "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  writePlanted(dir.file("good.txt"), 3, 400);
  // Rank 1 reads the second file, whose second line is not UTF-8.
  writeText(dir.file("bad.txt"),
            "fine words here\nbroken \xff\xfe bytes\n" + readText(dir.file("good.txt")));
  const RunResult r = mpirun("-np 2 POSVEC -q train " + quote(dir.file("good.txt")) + " " +
                             quote(dir.file("bad.txt")) + " --min-count 1 --dim 8 -o " +
                             quote(dir.file("out.txt")));
  INFO(r.err);
  CHECK(r.status == static_cast<int>(cli::ExitCode::Input));
  CHECK(r.err.find("posvec: error: rank 1 of 2: ") != std::string::npos);
  CHECK(r.err.find("invalid UTF-8") != std::string::npos);
  CHECK(r.err.find("rank 0 of 2") == std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("out.txt")));

  // Missing for every rank: one error line from rank 0, the file named.
  const RunResult missing = mpirun("-np 2 POSVEC -q train " + quote(dir.file("none.txt")) + " -o " +
                                   quote(dir.file("out.txt")));
  CHECK(missing.status == static_cast<int>(cli::ExitCode::Io));
  CHECK(missing.err.find("none.txt") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("out.txt")));
}

TEST_CASE("a killed distributed rank ends the job without output", "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  writePlanted(dir.file("p.txt"), 4, 3000);
  const std::string args = " -q train " + quote(dir.file("p.txt")) +
                           " --pretokenized --min-count 1 --dim 24 --epochs 20000 --threads 1 -o " +
                           quote(dir.file("out.txt"));
  // Rank 1 is killed (SIGKILL) a second into training (the 20,000 epochs would take about
  // 20 s with blocks of 4 on the fast host; 1,000 ended before the kill there).
  const RunResult r = mpirun("-np 1 POSVEC" + args + " : -np 1 sh -c " +
                             quote("(sleep 1; kill -9 $$) & exec " + quote(POSVEC_CLI) + args));
  INFO(r.err);
  CHECK(r.status != 0);
  CHECK(r.status != 124);  // not the timeout: the job ended by itself
  CHECK(r.err.find("rank 1") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("out.txt")));
}

TEST_CASE("distributed training resumes a saved model on 2 ranks", "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  writePlanted(dir.file("p.txt"), 5, 2000);
  const std::string corpus = " -q train " + quote(dir.file("p.txt")) + " --pretokenized --json";
  const RunResult first =
      mpirun("-np 2 POSVEC" + corpus + " --min-count 1 --dim 16 --epochs 2 --seed 3 -o " +
             quote(dir.file("m.posvec")));
  INFO(first.err);
  REQUIRE(first.status == 0);
  const RunResult more =
      mpirun("-np 2 POSVEC" + corpus + " --resume " + quote(dir.file("m.posvec")) +
             " --epochs 2 -o " + quote(dir.file("m2.posvec")));
  INFO(more.err);
  REQUIRE(more.status == 0);
  const ModelState before = loadModel(dir.file("m.posvec"));
  const ModelState after = loadModel(dir.file("m2.posvec"));
  CHECK(after.epochsDone == 4);
  REQUIRE(after.epochLosses.size() == 4);
  CHECK(
      std::equal(before.epochLosses.begin(), before.epochLosses.end(), after.epochLosses.begin()));
  CHECK(after.epochLosses[3] < after.epochLosses[1]);
  CHECK(after.words == before.words);
  CHECK(plantedAccuracy(embeddingsOf(after)) >= 0.9);
}

// Writing word vectors alone, rank 0 is the only rank that needs the result: the last
// round reduces the input rows to it (SyncOptions::Final::WriterVectors) instead of
// all-reducing both matrices. Its vectors are the ones the full last round gives (at
// 2 ranks each sum has one addition, in either order the same float), and fewer
// bytes travel: at least the output rows' changes that the full round sends.
TEST_CASE("distributed word vectors: the last round brings rank 0 the input rows only",
          "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  // 4,000 distinct words (so that the output matrix's share of the bytes shows in the
  // sync line's tenths of MB): 20,000 lines of 8 drawn with a fixed seed.
  std::mt19937 draw(12);
  std::uniform_int_distribution<int> word(0, 3999);
  std::string text;
  for (int line = 0; line < 20000; ++line) {
    for (int k = 0; k < 8; ++k) text += "w" + std::to_string(word(draw)) + (k < 7 ? " " : "\n");
  }
  writeText(dir.file("p.txt"), text);
  // Rounds far apart, most rows beyond the every-round ones: the last round carries
  // most of the trained rows, so what it leaves out shows.
  const std::string common = "-np 2 POSVEC train " + quote(dir.file("p.txt")) +
                             " --pretokenized --min-count 1 --dim 64 --epochs 1 -t 1 --seed 4 "
                             "--sync-words 100000 --sync-rows 256 ";
  const std::regex syncs("sync: ([0-9]+) rounds, ([0-9.]+) MB sent per rank");
  const auto megabytes = [&](const RunResult& r) {
    std::smatch m;
    REQUIRE(std::regex_search(r.err, m, syncs));
    return std::stod(m[2]);
  };
  const RunResult full = mpirun(common + "-o " + quote(dir.file("m.posvec")));
  INFO(full.err);
  REQUIRE(full.status == 0);
  const RunResult vectors = mpirun(common + "--format bin -o " + quote(dir.file("v.bin")));
  INFO(vectors.err);
  REQUIRE(vectors.status == 0);
  const ModelState model = loadModel(dir.file("m.posvec"));
  const Embeddings a = embeddingsOf(model);
  const Embeddings b = loadVectors(dir.file("v.bin"));
  REQUIRE(a.words() == b.words());
  CHECK((a.vectors().array() == b.vectors().array()).all());
  // The output matrix's trained rows, in bfloat16, no longer sent by either rank.
  std::int64_t trainedOut = 0;
  for (Eigen::Index r = 0; r < model.output.rows(); ++r)
    trainedOut += model.output.row(r).cwiseAbs().maxCoeff() > 0;
  const double outputMb = static_cast<double>(trainedOut * 64 * 2) / (1 << 20);
  REQUIRE(outputMb > 0.3);
  CHECK(megabytes(vectors) <= megabytes(full) - 0.9 * outputMb + 0.1);

  // Resumed from the checkpoint beside the vectors (v.posvec for v.txt), the run saves
  // its final state there too: that one needs the full last round, whose output rows
  // are the ones a model written as such gets.
  const std::string more = "-np 2 POSVEC -q train " + quote(dir.file("p.txt")) +
                           " --pretokenized -t 1 --epochs 1 --resume ";
  std::filesystem::copy_file(dir.file("m.posvec"), dir.file("v.posvec"));
  const RunResult resumedVectors =
      mpirun(more + quote(dir.file("v.posvec")) + " -o " + quote(dir.file("v.txt")));
  INFO(resumedVectors.err);
  REQUIRE(resumedVectors.status == 0);
  const RunResult resumedModel =
      mpirun(more + quote(dir.file("m.posvec")) + " -o " + quote(dir.file("m2.posvec")));
  INFO(resumedModel.err);
  REQUIRE(resumedModel.status == 0);
  const ModelState state = loadModel(dir.file("v.posvec"));
  const ModelState other = loadModel(dir.file("m2.posvec"));
  REQUIRE(state.epochsDone == 2);
  CHECK((state.output.array() == other.output.array()).all());
  CHECK((state.input.array() == other.input.array()).all());
}

TEST_CASE("without mpirun the cluster is not launched", "[distributed]") {
  // The test binary runs alone: training goes the one-process way.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK"))
    POSVEC_SKIP("the tests themselves run under an MPI launcher");
  CHECK_FALSE(Cluster::launched());
  CHECK(Cluster::available() == static_cast<bool>(POSVEC_TEST_MPI));
  SyncOptions s;
  CHECK_NOTHROW(s.validate());
  s.syncWords = 10;
  CHECK_THROWS_AS(s.validate(), ConfigError);
  s.syncWords = 1000;
  s.syncRows = -1;
  CHECK_THROWS_AS(s.validate(), ConfigError);
  s.syncRows = 0;
  s.syncWarmup = -1;
  CHECK_THROWS_AS(s.validate(), ConfigError);
  s.syncWarmup = 0;
  CHECK_NOTHROW(s.validate());
}

TEST_CASE("synchronisation points by hand, with and without the warm-up", "[distributed]") {
  SyncOptions s;
  s.syncWords = 100'000;
  s.syncWarmup = 5'000;
  // Later epochs: every 100k words, the epoch's end (250k) not among them.
  CHECK(s.points(250'000, false) == std::vector<std::int64_t>{100'000, 200'000});
  CHECK(s.points(200'000, false) == std::vector<std::int64_t>{100'000});
  CHECK(s.points(100'000, false).empty());
  CHECK(s.points(0, false).empty());
  // First epoch: intervals 5k, 10k, 20k, 40k, 80k, then 100k (160k capped).
  CHECK(s.points(400'000, true) ==
        std::vector<std::int64_t>{5'000, 15'000, 35'000, 75'000, 155'000, 255'000, 355'000});
  CHECK(s.points(5'000, true).empty());
  // No warm-up: 0, or a first interval of syncWords or more.
  s.syncWarmup = 0;
  CHECK(s.points(250'000, true) == s.points(250'000, false));
  s.syncWarmup = 300'000;
  CHECK(s.points(250'000, true) == s.points(250'000, false));
}

TEST_CASE("synchronisation points follow the doubling rule up to the largest options",
          "[distributed]") {
  // Checked against the rule itself: increasing, inside the share, each interval
  // twice the last until syncWords, then syncWords, and less than syncWords left.
  for (const auto& [words, warmup, share] :
       std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {1'000, 1'000, 123'456},
           {1'000'000'000'000LL, 1'000, 5'000'000'000'000LL},
           {1'000'000'000'000LL, 1'000, 1'000'000'000'000LL},
           {300'000, 7'000, 9'300'000}}) {
    SyncOptions s;
    s.syncWords = words;
    s.syncWarmup = warmup;
    REQUIRE_NOTHROW(s.validate());
    const auto p = s.points(share, true);
    INFO("syncWords " << words << ", warm-up " << warmup << ", share " << share);
    REQUIRE_FALSE(p.empty());
    CHECK(p.front() == std::min(warmup, words));
    std::int64_t last = 0, interval = 0;
    for (const std::int64_t at : p) {
      const std::int64_t next = at - last;
      if (interval > 0) CHECK(next == std::min(words, 2 * interval));
      CHECK(at < share);
      interval = next;
      last = at;
    }
    CHECK(share - last <= std::min(words, 2 * interval));
    // Intervals double from `warmup` while below syncWords: the warm-up has
    // ceil(log2(words / warmup)) of them.
    int doublings = 0;
    for (double w = static_cast<double>(warmup); w < static_cast<double>(words); w *= 2)
      ++doublings;
    const auto later = s.points(share, false);
    CHECK(static_cast<std::int64_t>(later.size()) == (share - 1) / words);
    if (doublings > 0 && static_cast<std::int64_t>(p.size()) > doublings)
      CHECK(p[static_cast<std::size_t>(doublings)] - p[static_cast<std::size_t>(doublings) - 1] ==
            words);
  }
}

TEST_CASE("distributed runs refuse compressed corpora and read invalid UTF-8 as one process does",
          "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  writePlanted(dir.file("p.txt"), 2, 200);
  // gzip's magic bytes, written by hand: the refusal comes from the content, not the name.
  {
    std::ofstream gz(dir.file("p.gz"), std::ios::binary);
    gz << "\x1f\x8b\x08" << std::string(64, '\0');
  }
  const RunResult compressed =
      mpirun("-np 2 POSVEC -q train " + quote(dir.file("p.gz")) +
             " --pretokenized --min-count 1 --epochs 1 -o " + quote(dir.file("out.txt")));
  INFO(compressed.err);
  CHECK(compressed.status == static_cast<int>(cli::ExitCode::Input));
  CHECK(compressed.err.find("is gzip-compressed") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("out.txt")));

  // A pre-tokenized share with an invalid byte: refused while counting, as one process
  // refuses it, and accepted with --replace-invalid.
  {
    std::ofstream bad(dir.file("bad.txt"), std::ios::binary);
    for (int i = 0; i < 50; ++i) bad << "aa bb cc dd\n";
    bad << "ee \x97 ff\n";
  }
  const std::string args = " -q train " + quote(dir.file("bad.txt")) +
                           " --pretokenized --min-count 1 --epochs 1 --dim 4 -o " +
                           quote(dir.file("bad.bin"));
  const RunResult invalid = mpirun("-np 2 POSVEC" + args);
  INFO(invalid.err);
  CHECK(invalid.status == static_cast<int>(cli::ExitCode::Input));
  CHECK(invalid.err.find("\\x97") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("bad.bin")));
  const RunResult replaced = mpirun("-np 2 POSVEC" + args + " --replace-invalid");
  INFO(replaced.err);
  CHECK(replaced.status == 0);
  CHECK(fs::exists(dir.file("bad.bin")));
}

TEST_CASE("distributed ranks whose copies of the corpus differ are refused, naming rank and file",
          "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  // Each rank runs in its own directory and reads "p.txt" there: the same command,
  // two copies of the file.
  fs::create_directories(dir.file("a"));
  fs::create_directories(dir.file("b"));
  writePlanted(dir.file("a/p.txt"), 6, 600);
  std::string text = readText(dir.file("a/p.txt"));
  const std::string args =
      " -q train p.txt --pretokenized --min-count 1 --dim 8 --epochs 1 -t 1 -o " +
      quote(dir.file("out.txt"));
  auto rankIn = [&](const std::string& sub) {
    return "-np 1 sh -c " +
           quote("cd " + quote(dir.file(sub)) + " && exec " + quote(POSVEC_CLI) + args);
  };
  for (const bool sameSize : {true, false}) {
    INFO((sameSize ? "one byte changed" : "one line more"));
    std::string other = text;
    if (sameSize)
      other[other.size() / 2] = other[other.size() / 2] == 'a' ? 'b' : 'a';
    else
      other += "c0w1 c0w2\n";
    writeText(dir.file("b/p.txt"), other);
    const RunResult r = mpirun(rankIn("a") + " : " + rankIn("b"));
    INFO(r.err);
    CHECK(r.status == static_cast<int>(cli::ExitCode::Input));
    CHECK(
        r.err.find("posvec: error: rank 1 of 2: corpus file 'p.txt' differs from rank 0's copy") !=
        std::string::npos);
    // One line from posvec (mpirun adds its own about the exit status).
    CHECK(r.err.find("posvec: error:") == r.err.rfind("posvec: error:"));
    CHECK_FALSE(fs::exists(dir.file("out.txt")));
  }
  // Identical copies train.
  writeText(dir.file("b/p.txt"), text);
  const RunResult same = mpirun(rankIn("a") + " : " + rankIn("b"));
  INFO(same.err);
  CHECK(same.status == 0);
  CHECK(fs::exists(dir.file("out.txt")));
}

TEST_CASE("distributed dense combine modes: average is half the sum when one rank changes nothing",
          "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  // Rank 0's share holds sentences; rank 1's only one-word lines, which give no
  // skip-gram pair, so its change to every row is exactly zero. The output
  // weights start at zero and the ranks meet only at the epoch's end (no
  // synchronisation inside it): summed, the output weights are rank 0's own;
  // averaged over 2 ranks, exactly half of them (a power of two: no rounding).
  writePlanted(dir.file("p.txt"), 7, 1500);
  std::string text = readText(dir.file("p.txt"));
  const std::size_t sentences = text.size();
  for (int i = 0; text.size() < 2 * sentences + 4096; ++i)
    text += "c" + std::to_string(i % kClasses) + "w" + std::to_string(i % kPerClass) + "\n";
  writeText(dir.file("p.txt"), text);
  const std::string args = "-np 2 POSVEC -q train " + quote(dir.file("p.txt")) +
                           " --pretokenized --min-count 1 --dim 8 --epochs 1 -t 1 --seed 5 "
                           "--sync-words 1000000000 --sync-warmup 0 --sample 0 "
                           "--sync-schedule dense -o ";
  const RunResult sum = mpirun(args + quote(dir.file("sum.posvec")) + " --sync-combine sum");
  const RunResult average =
      mpirun(args + quote(dir.file("average.posvec")) + " --sync-combine average");
  INFO(sum.err << average.err);
  REQUIRE(sum.status == 0);
  REQUIRE(average.status == 0);
  const ModelState s = loadModel(dir.file("sum.posvec"));
  const ModelState a = loadModel(dir.file("average.posvec"));
  REQUIRE(s.output.size() == a.output.size());
  REQUIRE(s.output.size() > 0);
  REQUIRE(s.output.cwiseAbs().maxCoeff() > 0);  // rank 0 trained
  std::size_t exact = 0;
  for (Eigen::Index i = 0; i < s.output.size(); ++i)
    exact += a.output.data()[i] == 0.5f * s.output.data()[i];
  CHECK(exact == static_cast<std::size_t>(s.output.size()));

  // With every row synchronised every 1000 words: summing rank 1's zero changes
  // leaves rank 0's rows as they were (up to rounding of base + change), while
  // averaging halves rank 0's progress at every point, so its rows grow less.
  const std::string often = "-np 2 POSVEC -q train " + quote(dir.file("p.txt")) +
                            " --pretokenized --min-count 1 --dim 8 --epochs 1 -t 1 --seed 5 "
                            "--sync-words 1000 --sync-warmup 0 --sync-rows 0 --sample 0 "
                            "--sync-schedule dense -o ";
  const RunResult sumOften = mpirun(often + quote(dir.file("so.posvec")) + " --sync-combine sum");
  const RunResult averageOften =
      mpirun(often + quote(dir.file("ao.posvec")) + " --sync-combine average");
  INFO(sumOften.err << averageOften.err);
  REQUIRE(sumOften.status == 0);
  REQUIRE(averageOften.status == 0);
  const ModelState so = loadModel(dir.file("so.posvec"));
  const ModelState ao = loadModel(dir.file("ao.posvec"));
  CHECK((so.output - s.output).cwiseAbs().maxCoeff() <= 1e-4f * s.output.cwiseAbs().maxCoeff());
  CHECK((so.input - s.input).cwiseAbs().maxCoeff() <= 1e-4f * s.input.cwiseAbs().maxCoeff());
  CHECK(ao.output.norm() < 0.75f * so.output.norm());
}

TEST_CASE("sparse combine modes: a row one rank changed keeps that rank's change whole",
          "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  // As above: rank 1 changes nothing, the output weights start at zero, and with
  // no round inside the epoch the ranks meet once, at the end. The bounded sum of
  // a row only rank 0 changed is rank 0's own change (the sum's result, exactly in
  // 32-bit floats), the average half of it; in bfloat16 the change is rounded to 8
  // significant bits (relative error at most 2^-8).
  writePlanted(dir.file("p.txt"), 7, 1500);
  std::string text = readText(dir.file("p.txt"));
  const std::size_t sentences = text.size();
  for (int i = 0; text.size() < 2 * sentences + 4096; ++i)
    text += "c" + std::to_string(i % kClasses) + "w" + std::to_string(i % kPerClass) + "\n";
  writeText(dir.file("p.txt"), text);
  const std::string args = "-np 2 POSVEC -q train " + quote(dir.file("p.txt")) +
                           " --pretokenized --min-count 1 --dim 8 --epochs 1 -t 1 --seed 5 "
                           "--sync-words 1000000000 --sync-warmup 0 --sample 0 -o ";
  auto run = [&](const std::string& name, const std::string& flags) {
    const RunResult r = mpirun(args + quote(dir.file(name)) + " " + flags);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return loadModel(dir.file(name));
  };
  const ModelState sum = run("s.posvec", "--sync-combine sum --sync-deltas fp32");
  const ModelState bounded = run("b.posvec", "--sync-combine bounded --sync-deltas fp32");
  const ModelState average = run("a.posvec", "--sync-combine average --sync-deltas fp32");
  // Momentum (the default): the mean change plus the row's previous step, which is
  // zero at the first exchange.
  const ModelState momentum = run("m.posvec", "--sync-deltas fp32");
  const ModelState half = run("h.posvec", "--sync-combine bounded");
  REQUIRE(sum.output.size() > 0);
  REQUIRE(sum.output.cwiseAbs().maxCoeff() > 0);
  std::size_t same = 0, halved = 0, first = 0, rounded = 0;
  for (Eigen::Index i = 0; i < sum.output.size(); ++i) {
    const float s = sum.output.data()[i];
    same += bounded.output.data()[i] == s;
    halved += average.output.data()[i] == 0.5f * s;
    first += momentum.output.data()[i] == 0.5f * s;
    rounded += std::abs(half.output.data()[i] - s) <= std::abs(s) / 256;
  }
  const auto n = static_cast<std::size_t>(sum.output.size());
  CHECK(same == n);
  CHECK(halved == n);
  CHECK(first == n);
  CHECK(rounded == n);
}

TEST_CASE("sparse rounds: rows by hand and every row at its rank-geometric interval",
          "[distributed]") {
  SyncOptions s;
  s.syncRows = 2;
  // 11 rows: 0-1 every round; 2-3 every 2nd, 4-7 every 4th, 8-10 every 8th round.
  CHECK(s.roundRows(0, 11) == std::vector<std::int64_t>{0, 1, 2, 4, 8});
  CHECK(s.roundRows(1, 11) == std::vector<std::int64_t>{0, 1, 3, 5, 9});
  CHECK(s.roundRows(3, 11) == std::vector<std::int64_t>{0, 1, 3, 7});
  CHECK(s.roundRows(8, 11) == s.roundRows(0, 11));
  CHECK(s.roundRows(0, 1) == std::vector<std::int64_t>{0});
  CHECK(s.roundRows(5, 0).empty());
  s.syncRows = 0;  // every row every round
  CHECK(s.roundRows(7, 4) == std::vector<std::int64_t>{0, 1, 2, 3});
  // Over 64 rounds, the row of rank r >= B is covered 64 / 2^t times, with t the
  // smallest power such that r < B 2^t.
  for (const std::int64_t b : {1, 3, 8}) {
    s.syncRows = b;
    const std::int64_t rows = 200;
    std::vector<int> seen(static_cast<std::size_t>(rows));
    for (std::int64_t round = 0; round < 64; ++round) {
      const auto r = s.roundRows(round, rows);
      CHECK(std::is_sorted(r.begin(), r.end()));
      for (const std::int64_t x : r) ++seen[static_cast<std::size_t>(x)];
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      std::int64_t every = 1;
      while (r >= b * every) every *= 2;
      if (every > 64) continue;
      INFO("B " << b << ", row " << r);
      CHECK(seen[static_cast<std::size_t>(r)] == 64 / every);
    }
  }
}

TEST_CASE(
    "bounded combine factor by hand: the sum for rarely trained rows, 1.5 times the mean for busy "
    "ones",
    "[distributed]") {
  using Catch::Matchers::WithinAbs;
  // x = occurrences / 100; factor (1 - e^(-n x)) / (n (1 - e^(-x))) within [1.5 / n, 1].
  CHECK(SyncOptions::boundedFactor(1, 1e6) == 1.0);  // one rank: its change whole
  CHECK(SyncOptions::boundedFactor(4, 0.0) == 1.0);  // no training counted: the sum
  // e^(-x) = 1/2: (1 - 1/16) / (4 (1 - 1/2)) = 15/32.
  CHECK_THAT(SyncOptions::boundedFactor(4, 100 * std::log(2.0)), WithinAbs(15.0 / 32, 1e-12));
  // e^(-x) = 3/4: (1 - 9/16) / (2 (1 - 3/4)) = 7/8.
  CHECK_THAT(SyncOptions::boundedFactor(2, 100 * std::log(4.0 / 3)), WithinAbs(7.0 / 8, 1e-12));
  // A row trained twice on each of 8 ranks: nearly the sum, (1 - e^-0.16) / (8 (1 - e^-0.02)).
  CHECK_THAT(SyncOptions::boundedFactor(8, 2.0), WithinAbs(0.933373, 1e-6));
  // Busy rows: the bound, 1.5 times the mean.
  CHECK_THAT(SyncOptions::boundedFactor(8, 1e6), WithinAbs(1.5 / 8, 1e-12));
  CHECK_THAT(SyncOptions::boundedFactor(4, 1000.0), WithinAbs(1.5 / 4, 1e-12));
  // Falls as the row is trained more, never below the bound nor above the sum.
  double last = 1.0;
  for (double occ = 0.5; occ < 5000; occ *= 1.5) {
    const double f = SyncOptions::boundedFactor(6, occ);
    CHECK(f <= last);
    CHECK(f >= 1.5 / 6);
    last = f;
  }
}

TEST_CASE("momentum by hand: 1 - 1 / (1.25 N) unless given, and the sparse schedule only",
          "[distributed]") {
  using Catch::Matchers::WithinAbs;
  SyncOptions s;
  CHECK(s.combine == SyncOptions::Combine::Momentum);
  // 1 / (1 - momentum) = 1.25 N: 2.5 rounds' worth at 2 ranks, 10 at 8.
  CHECK_THAT(s.momentumFor(2), WithinAbs(0.6, 1e-12));
  CHECK_THAT(s.momentumFor(4), WithinAbs(0.8, 1e-12));
  CHECK_THAT(s.momentumFor(8), WithinAbs(0.9, 1e-12));
  CHECK(s.momentumFor(1) == 0.0);
  s.syncMomentum = 0.5;
  CHECK(s.momentumFor(8) == 0.5);
  s.syncMomentum = 1.0;
  CHECK_THROWS_WITH(s.validate(),
                    Catch::Contains("momentum of the combined steps must be in [0, 1)"));
  s.syncMomentum = 0;
  s.schedule = SyncOptions::Schedule::Dense;
  CHECK_THROWS_WITH(s.validate(),
                    "the momentum combine needs the sparse synchronisation schedule; "
                    "with the dense schedule combine by sum or average");
}

TEST_CASE("momentum carries steps between rounds and settles where the sum overshoots",
          "[distributed]") {
  // A 76-word corpus every rank trains to saturation each round (2 ranks, 1,000-word
  // rounds, 95 in the run: the momentum is its automatic 0.6). The sum of the changes
  // overshoots (its loss rises from the third epoch); the mean is stable; momentum, a
  // heavy ball, must end as low as the mean and be a different model (the momentum
  // was applied: with none, its arithmetic is the mean's, bit for bit).
  REQUIRE_MPI();
  TempDir dir;
  const std::string corpus = dir.file("planted.txt");
  writePlanted(corpus, 11, 4000);
  auto run = [&](const std::string& combine) {
    const std::string out = dir.file(combine + ".posvec");
    const RunResult r = mpirun("-np 2 POSVEC -q train " + quote(corpus) + kPlantedRounds +
                               " --sync-combine " + combine + " -o " + quote(out));
    INFO(combine << ": " << r.err);
    REQUIRE(r.status == 0);
    const std::vector<double> losses = nlohmann::json::parse(r.out)["epoch_losses"];
    REQUIRE(losses.size() == 5);
    return std::pair{losses, loadModel(out)};
  };
  const auto [momentum, m] = run("momentum");
  const auto [average, a] = run("average");
  const auto [sum, s] = run("sum");
  CHECK(sum[4] > sum[2]);
  for (std::size_t e = 1; e < 5; ++e) CHECK(momentum[e] < momentum[e - 1]);
  CHECK(momentum[4] <= 1.02 * average[4]);
  CHECK((m.output.array() != a.output.array()).any());
}

TEST_CASE("distributed training at 2, 4 and 8 ranks finds the planted classes as the loss falls",
          "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  const std::string corpus = dir.file("planted.txt");
  writePlanted(corpus, 11, 4000);
  for (const int ranks : {2, 4, 8}) {
    const std::string out = dir.file("v" + std::to_string(ranks) + ".txt");
    const RunResult r = mpirun("-np " + std::to_string(ranks) + " POSVEC train " + quote(corpus) +
                               kPlantedRounds + " -o " + quote(out));
    INFO(ranks << " ranks: " << r.err);
    REQUIRE(r.status == 0);
    const auto summary = nlohmann::json::parse(r.out);
    CHECK(summary["ranks"] == ranks);
    const std::vector<double> losses = summary["epoch_losses"];
    REQUIRE(losses.size() == 5);
    // Falling every epoch, and well below the untrained (1 + negative) log 2.
    for (std::size_t e = 1; e < losses.size(); ++e) CHECK(losses[e] < losses[e - 1]);
    CHECK(losses.back() < 0.6 * 6 * std::log(2.0));
    CHECK(plantedAccuracy(loadVectors(out)) >= 0.9);
    CHECK(r.err.find("sync: ") != std::string::npos);
  }
}

TEST_CASE("distributed training with 16-bit weights recovers the planted classes as float32 does",
          "[distributed][half]") {
  // The sparse rounds read and write the rows in 16 bits: a combined row is rounded
  // stochastically with bits every rank draws alike, so the bases stay equal. Two
  // ranks must learn what one process learns, and as float32's two ranks do: a rank
  // whose changes were lost (a combined change rounded away, or bases that drift
  // apart) would end near the untrained loss.
  REQUIRE_MPI();
  TempDir dir;
  const std::string common = plantedTraining(dir);
  std::map<std::string, double> lossOf;
  for (const std::string weights : {"fp32", "bf16", "fp16"}) {
    INFO("weights " << weights);
    const RunResult two = mpirun("-np 2 POSVEC" + common + " --weights " + weights +
                                 " --sync-words 1000 -o " + quote(dir.file(weights + ".txt")));
    INFO(two.err);
    REQUIRE(two.status == 0);
    const auto summary = nlohmann::json::parse(two.out);
    CHECK(summary["ranks"] == 2);
    CHECK(plantedAccuracy(loadVectors(dir.file(weights + ".txt"))) >= 0.9);
    lossOf[weights] = summary["epoch_losses"].back();
  }
  const RunResult one = runCli(common + " --weights bf16 -o " + quote(dir.file("one.txt")));
  REQUIRE(one.status == 0);
  const double lossOne = nlohmann::json::parse(one.out)["epoch_losses"].back();
  for (const std::string weights : {"bf16", "fp16"}) {
    INFO("weights " << weights);
    CHECK(lossOf[weights] < 0.6 * 6 * std::log(2.0));
    CHECK(lossOf[weights] < lossOne * 1.3);
    CHECK(std::fabs(lossOf[weights] - lossOf["fp32"]) < 0.05 * lossOf["fp32"]);
  }
}

TEST_CASE("distributed 16-bit weights with the dense schedule are refused in one line",
          "[distributed][half]") {
  REQUIRE_MPI();
  TempDir dir;
  writePlanted(dir.file("p.txt"), 2, 200);
  const RunResult r = mpirun("-np 2 POSVEC -q train " + quote(dir.file("p.txt")) +
                             " --pretokenized --min-count 1 --epochs 1 --dim 8 --weights bf16"
                             " --sync-schedule dense -o " +
                             quote(dir.file("out.txt")));
  INFO(r.err);
  CHECK(r.status == static_cast<int>(cli::ExitCode::Usage));
  CHECK(r.err.find("posvec: error: rank 0 of 2: --weights bf16: the dense synchronisation "
                   "schedule combines float32 weights only") != std::string::npos);
  CHECK(r.err.find("rank 1 of 2") == std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("out.txt")));
}

TEST_CASE("distributed subword training is refused in one line before any work", "[distributed]") {
  REQUIRE_MPI();
  TempDir dir;
  writePlanted(dir.file("p.txt"), 2, 200);
  const RunResult r = mpirun("-np 2 POSVEC -q train " + quote(dir.file("p.txt")) +
                             " --pretokenized --min-count 1 --epochs 1 --dim 8 --subwords"
                             " --bucket 100 -o " +
                             quote(dir.file("out.txt")));
  INFO(r.err);
  CHECK(r.status == static_cast<int>(cli::ExitCode::Usage));
  CHECK(r.err.find("posvec: error: rank 0 of 2: --subwords: subword training runs in one "
                   "process only") != std::string::npos);
  CHECK(r.err.find("rank 1 of 2") == std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("out.txt")));
}
