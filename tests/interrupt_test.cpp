// Ctrl-C and SIGTERM during `posvec train`, and --checkpoint-every: the CLI runs as a
// child process on a corpus that trains for several seconds, gets a signal, and must
// leave a checkpoint from which the printed command finishes the same training.
// Waits follow the child's stderr and exit (tests/child_process.hpp); the time a
// child may take after a signal is measured in its CPU seconds, which a loaded
// machine does not inflate.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <random>
#include <thread>

#include "posvec/formats.hpp"
#include "posvec/trainer.hpp"
#include "child_process.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {


// Zipf-like random words, 25 a line: about a second an epoch at dim 50 on one thread.
std::string writeBigCorpus(const test::TempDir& dir, int lines) {
  std::mt19937 gen(11);
  std::vector<double> weights;
  for (int i = 0; i < 3000; ++i) weights.push_back(1.0 / (i + 1));
  std::discrete_distribution<int> pick(weights.begin(), weights.end());
  std::string text;
  for (int l = 0; l < lines; ++l) {
    for (int t = 0; t < 25; ++t) text += (t ? " w" : "w") + std::to_string(pick(gen));
    text += '\n';
  }
  const std::string path = dir.file("corpus.txt");
  test::writeText(path, text);
  return path;
}

using test::Child;

bool anyTemporary(const test::TempDir& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) return true;
  return false;
}

const std::vector<std::string> kTrain = {"train", "--pretokenized", "--dim", "50", "--threads",
                                         "1",     "--min-count",    "1"};

std::vector<std::string> trainArgs(const std::string& corpus, int epochs, const std::string& out) {
  std::vector<std::string> a = kTrain;
  a.insert(a.begin() + 1, corpus);
  a.insert(a.end(), {"--epochs", std::to_string(epochs), "-o", out});
  return a;
}

}  // namespace

TEST_CASE(
    "interrupt SIGINT saves a checkpoint inside an epoch and the printed command "
    "finishes the same training bitwise",
    "[interrupt][cli]") {
  test::TempDir dir;
  const int kEpochs = 3;
  // 300k tokens (100k under AddressSanitizer, where an epoch still takes about a second):
  // the signal lands inside the second epoch whatever the build.
  const std::string corpus = writeBigCorpus(dir, test::kAddressSanitizer ? 4000 : 12000);
  const std::string out = dir.file("vectors.bin");
  // Three epochs, each trained three times below (stopped and resumed, whole,
  // checkpointed): the second is one that starts from a finished epoch and is cut
  // inside, the third one that the resumed run trains from its start.
  Child child(trainArgs(corpus, kEpochs, out), dir.file("err"));
  // Well inside training, whatever the machine's speed: just after the first epoch
  // ends, so the signal lands early in the second.
  REQUIRE(child.waitFor("epoch 1 done"));
  const double cpuBefore = child.cpuSeconds();
  REQUIRE(::kill(child.pid, SIGINT) == 0);
  const int code = child.waitExit();
  INFO(child.err());
  REQUIRE(code == 130);
  // A safe point comes every 10,000 words (milliseconds here); the checkpoint is
  // 1.2 MB. An epoch is about a CPU second: the stop must not wait for its end.
  CHECK(child.cpuAtExit - cpuBefore < 5.0);
  const std::string checkpoint = dir.file("vectors.posvec");
  REQUIRE(std::filesystem::exists(checkpoint));
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK_FALSE(anyTemporary(dir));
  const ModelState stopped = loadModel(checkpoint);
  CHECK(stopped.epochsDone < kEpochs);
  CHECK(epochsLeft(stopped) == kEpochs - stopped.epochsDone);

  // The printed command, run as printed (with this build's binary for "posvec").
  const std::string err = child.err();
  const std::string marker = "to continue: posvec ";
  const auto at = err.find(marker);
  REQUIRE(at != std::string::npos);
  const std::string command =
      err.substr(at + marker.size(), err.find('\n', at) - at - marker.size());
  CHECK(command.find("--resume " + checkpoint) != std::string::npos);
  auto resumed = test::runCli(command);
  INFO(resumed.err);
  REQUIRE(resumed.status == 0);
  // The checkpoint now holds the finished state, not the stopped one.
  CHECK(loadModel(checkpoint).epochsDone == kEpochs);
  CHECK_FALSE(loadModel(checkpoint).partial.active());

  // An uninterrupted run of the same epochs.
  auto a = trainArgs(corpus, kEpochs, dir.file("whole.bin"));
  std::string args;
  for (const auto& s : a) args += " " + test::quote(s);
  auto whole = test::runCli("-q" + args);
  REQUIRE(whole.status == 0);
  const std::string x = test::readText(out), y = test::readText(dir.file("whole.bin"));
  REQUIRE(x.size() == y.size());
  CHECK(x == y);

  // Checkpoints every 0.01 s (the three epochs take about 0.1 s on the idle machine)
  // pause the threads at safe points and change nothing.
  a = trainArgs(corpus, kEpochs, dir.file("checkpointed.bin"));
  args.clear();
  for (const auto& s : a) args += " " + test::quote(s);
  auto checkpointed = test::runCli(args + " --checkpoint-every 0.01s");
  INFO(checkpointed.err);
  REQUIRE(checkpointed.status == 0);
  CHECK(checkpointed.err.find("checkpoint inside epoch") != std::string::npos);
  CHECK(test::readText(dir.file("checkpointed.bin")) == y);
  CHECK(loadModel(dir.file("checkpointed.posvec")).epochsDone == kEpochs);
}

TEST_CASE("interrupt SIGTERM exits 143 with a loadable checkpoint at --save-model",
          "[interrupt][cli]") {
  test::TempDir dir;
  const std::string corpus = writeBigCorpus(dir, 20000);
  auto args = trainArgs(corpus, 20, dir.file("v.txt"));
  args.insert(args.end(), {"--save-model", dir.file("state.posvec")});
  Child child(args, dir.file("err"));
  REQUIRE(child.waitFor("epoch 1/20"));
  REQUIRE(::kill(child.pid, SIGTERM) == 0);
  INFO(child.err());
  REQUIRE(child.waitExit() == 143);
  const ModelState m = loadModel(dir.file("state.posvec"));
  CHECK(m.epochsDone < 20);
  CHECK(child.err().find("--save-model " + dir.file("state.posvec")) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("v.txt")));
  CHECK_FALSE(anyTemporary(dir));
}

TEST_CASE("interrupt a second Ctrl-C exits at once and leaves no partial file",
          "[interrupt][cli]") {
  test::TempDir dir;
  const std::string corpus = writeBigCorpus(dir, 20000);
  // A large model, so the checkpoint takes a while to write.
  auto args = trainArgs(corpus, 20, dir.file("v.bin"));
  args[4] = "400";  // --dim
  Child child(args, dir.file("err"));
  REQUIRE(child.waitFor("epoch 1/20"));
  REQUIRE(::kill(child.pid, SIGINT) == 0);
  // However long a loaded machine takes to show it: the child prints it, or exits.
  REQUIRE(child.waitFor("stopping at the next safe point"));
  const double cpuBefore = child.cpuSeconds();
  REQUIRE(::kill(child.pid, SIGINT) == 0);
  const int code = child.waitExit();
  INFO(child.err());
  CHECK(code == 130);
  // At once: well under the CPU time of the 20 epochs left (about a second each).
  CHECK(child.cpuAtExit - cpuBefore < 1.0);
  CHECK_FALSE(anyTemporary(dir));
  CHECK_FALSE(std::filesystem::exists(dir.file("v.bin")));
  // Either the checkpoint was complete before the second signal, or there is none.
  if (std::filesystem::exists(dir.file("v.posvec"))) CHECK_NOTHROW(loadModel(dir.file("v.posvec")));
}

TEST_CASE("interrupt Ctrl-C while the corpus is counted exits at once", "[interrupt][cli]") {
  test::TempDir dir;
  // A raw-text corpus (the tokenizer is slower than training), counted for seconds.
  std::string text;
  for (int i = 0; i < 400000; ++i) text += "The quick brown fox jumps over the lazy dog. ";
  test::writeText(dir.file("raw.txt"), text);
  Child child({"train", dir.file("raw.txt"), "--dim", "8", "-o", dir.file("v.bin")},
              dir.file("err"));
  // Counting has begun when the child holds the corpus open; it has ended when the
  // vocabulary is logged.
  if (!child.waitUntil([&] { return child.hasOpen(dir.file("raw.txt")); }))
    POSVEC_SKIP("the corpus was counted before the test saw it open");
  REQUIRE(::kill(child.pid, SIGINT) == 0);
  if (child.err().find("vocabulary:") != std::string::npos)
    POSVEC_SKIP("the corpus was counted before the signal arrived");
  CHECK(child.waitExit() == 130);
  CHECK_FALSE(std::filesystem::exists(dir.file("v.bin")));
  CHECK_FALSE(std::filesystem::exists(dir.file("v.posvec")));
}

TEST_CASE("interrupt checkpoint-every writes checkpoints by epochs and rejects bad values",
          "[interrupt][cli]") {
  test::TempDir dir;
  const std::string corpus = writeBigCorpus(dir, 2000);
  auto args = trainArgs(corpus, 3, dir.file("v.bin"));
  args.insert(args.end(), {"--checkpoint-every", "1epochs"});
  std::string line;
  for (const auto& s : args) line += " " + test::quote(s);
  auto r = test::runCli(line);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("checkpoint after epoch 1 written to " + dir.file("v.posvec")) !=
        std::string::npos);
  CHECK(r.err.find("checkpoint after epoch 2 written") != std::string::npos);
  // After a finished run the checkpoint holds the final state.
  const ModelState m = loadModel(dir.file("v.posvec"));
  CHECK(m.epochsDone == 3);
  CHECK_FALSE(m.partial.active());
  for (const char* bad : {"10", "10x", "0s", "-1m", "1.5epochs", "epochs"}) {
    r = test::runCli("train " + test::quote(corpus) + " --pretokenized -o " +
                     test::quote(dir.file("w.bin")) + " --checkpoint-every " + bad);
    INFO(bad);
    CHECK(r.status == 2);
    CHECK(r.err.find("--checkpoint-every") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("w.bin")));
  }
}
