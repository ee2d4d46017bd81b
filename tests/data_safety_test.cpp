// Data safety of the command line: outputs that would replace one another, the
// resume command and the settings a model records, small option mistakes, and
// files that change or fail while they are used (docs/data-safety.md).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "child_process.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/vocabulary.hpp"
#include "test_util.hpp"

using posvec::test::quote;
using posvec::test::readText;
using posvec::test::runCli;
using posvec::test::runShell;
using posvec::test::RunResult;
using posvec::test::TempDir;
using posvec::test::writeText;

namespace fs = std::filesystem;

namespace {

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

// 200 lines of a small pre-tokenized corpus: every word occurs often enough to count.
std::string writeCorpus(const TempDir& dir, const std::string& name = "corpus.txt") {
  std::string text;
  const char* words[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"};
  for (int i = 0; i < 200; ++i) {
    for (int j = 0; j < 8; ++j) text += std::string(words[(i * 3 + j * 5) % 8]) + " ";
    text += "\n";
  }
  writeText(dir.file(name), text);
  return dir.file(name);
}

const std::string kSmall = " --pretokenized --min-count 1 --dim 4 --epochs 1 -t 1 ";

}  // namespace

TEST_CASE("data safety: two outputs that are one file are refused before training", "[cli][data-safety]") {
  TempDir dir;
  const std::string corpus = writeCorpus(dir);
  fs::create_symlink(dir.file("x.bin"), dir.file("link.bin"));  // dangling until written
  const std::string same = (dir.path() / "." / "x.bin").string();
  for (const std::string& outputs :
       {"-o " + quote(dir.file("x.bin")) + " --save-model " + quote(dir.file("x.bin")),
        "-o " + quote(dir.file("x.bin")) + " --save-model " + quote(same),
        "-o " + quote(dir.file("x.bin")) + " --save-model " + quote(dir.file("link.bin")),
        "-o " + quote(dir.file("w.npy")) + " --save-vocab " + quote(dir.file("w.vocab")),
        "-o " + quote(dir.file("x.bin")) + " --save-vocab " + quote(dir.file("x.bin")),
        "-o " + quote(dir.file("v.txt")) + " --save-vocab " + quote(dir.file("v.posvec"))}) {
    INFO(outputs);
    const RunResult r = runCli("train " + quote(corpus) + kSmall + outputs);
    CHECK(r.status == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find("are the same file") != std::string::npos);
    CHECK_FALSE(fs::exists(dir.file("x.bin")));
    CHECK_FALSE(fs::exists(dir.file("w.npy")));
    CHECK_FALSE(fs::exists(dir.file("v.txt")));
  }
  // A hard link to an existing file: the same inode under another name.
  writeText(dir.file("old.bin"), "keep me");
  fs::create_hard_link(dir.file("old.bin"), dir.file("hard.bin"));
  const RunResult r = runCli("train " + quote(corpus) + kSmall + "-o " + quote(dir.file("old.bin")) +
                             " --save-model " + quote(dir.file("hard.bin")));
  CHECK(r.status == 2);
  CHECK(r.err.find("are the same file") != std::string::npos);
  CHECK(readText(dir.file("old.bin")) == "keep me");
  // Different files still pass.
  const RunResult ok = runCli("train " + quote(corpus) + kSmall + "-o " + quote(dir.file("a.bin")) +
                              " --save-model " + quote(dir.file("a.posvec")) + " --save-vocab " +
                              quote(dir.file("a.vocab")));
  CHECK(ok.status == 0);
  CHECK(fs::exists(dir.file("a.vocab")));
}

TEST_CASE("data safety: --save-vocab - writes the vocabulary to standard output", "[cli][data-safety]") {
  TempDir dir;
  const std::string corpus = writeCorpus(dir);
  const RunResult r = runShell("cd " + quote(dir.path().string()) + " && '" + POSVEC_CLI +
                               "' -q train " + quote(corpus) + kSmall + "-o v.txt --save-vocab -");
  CHECK(r.status == 0);
  // 200 sentences; each of the 8 words 200 times (every line holds each word once).
  CHECK(r.out.rfind("</s> 200\n", 0) == 0);
  CHECK(lines(r.out) == 9);
  CHECK(r.out.find("alpha 200\n") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("-")));
  const RunResult both = runCli("-q train " + quote(corpus) + kSmall + "-o - --save-vocab -");
  CHECK(both.status == 2);
  CHECK(both.err.find("standard output") != std::string::npos);
}

namespace {
posvec::ModelState smallModel() {
  posvec::ModelState m;
  m.words = {"the", "cat", "sat"};
  m.counts = {30, 20, 10};
  m.input = posvec::MatrixF(3, 4);
  m.output = posvec::MatrixF(3, 4);
  for (int i = 0; i < 12; ++i) {
    m.input.data()[i] = 0.25f * static_cast<float>(i) - 1.0f;
    m.output.data()[i] = 0.5f - 0.125f * static_cast<float>(i);
  }
  m.config = "dim=4\n";
  m.epochsDone = 2;
  m.epochLosses = {3.5, 2.75};
  return m;
}
}  // namespace

TEST_CASE("data safety: every single-byte change of a model file is refused, old files still load",
          "[formats][data-safety]") {
  using namespace posvec;
  TempDir dir;
  const ModelState m = smallModel();
  saveModel(m, dir.file("m.posvec"));
  const std::string good = readText(dir.file("m.posvec"));
  // Header 72, config 6, words 3 x 4 + 9, counts 24, losses 16, two 3 x 4 float
  // matrices 96, and the 8-byte checksum.
  REQUIRE(good.size() == 72 + 6 + 21 + 24 + 16 + 96 + 8);
  std::size_t refused = 0, byChecksum = 0;
  for (std::size_t at = 0; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    writeText(dir.file("bad.posvec"), bad);
    try {
      loadModel(dir.file("bad.posvec"));
      FAIL_CHECK("a model with byte " << at << " changed loaded");
    } catch (const FormatError& e) {
      ++refused;
      const std::string what = e.what();
      byChecksum += what.find("checksum") != std::string::npos;
      CHECK(what.find('\n') == std::string::npos);
    }
  }
  CHECK(refused == good.size());
  // The matrices and counts have no other check: the checksum finds those.
  CHECK(byChecksum >= 96 + 24);
  // The vectors alone (loadVectors) are checked too.
  std::string flipped = good;
  flipped[good.size() - 8 - 1] ^= 0x01;  // inside the output weights, which loadVectors skips
  writeText(dir.file("bad.posvec"), flipped);
  CHECK_THROWS_WITH(loadVectors(dir.file("bad.posvec")), Catch::Contains("checksum"));
  // A file from before the checksum: flags 0 and no trailer. It loads as it is.
  std::string old = good.substr(0, good.size() - 8);
  old[12] = 0;
  writeText(dir.file("old.posvec"), old);
  const ModelState back = loadModel(dir.file("old.posvec"));
  CHECK(back.words == m.words);
  CHECK(back.counts == m.counts);
  CHECK(back.epochLosses == m.epochLosses);
  CHECK(back.output(2, 3) == m.output(2, 3));
  CHECK(loadVectors(dir.file("old.posvec")).words() == m.words);
}

TEST_CASE("data safety: a periodic checkpoint that cannot be written warns and training goes on",
          "[cli][data-safety]") {
  if (!fs::exists("/dev/full")) POSVEC_SKIP("no /dev/full to stand for a full disk");
  TempDir dir;
  const std::string corpus = writeCorpus(dir);
  // The checkpoint beside the output is a link to a device that is always full.
  fs::create_symlink("/dev/full", dir.file("v.posvec"));
  const RunResult r = runCli("train " + quote(corpus) +
                             " --pretokenized --min-count 1 --dim 4 --epochs 3 -t 1 -o " +
                             quote(dir.file("v.txt")) + " --checkpoint-every 1epochs");
  INFO(r.err);
  // Every epoch trained; the checkpoints after epochs 1 and 2 were warnings...
  CHECK(r.err.find("epoch 3 done") != std::string::npos);
  CHECK(r.err.find("warning: checkpoint not written") != std::string::npos);
  CHECK(r.err.find("training goes on") != std::string::npos);
  // ...and the final state, which cannot be written either, fails the run at the end.
  CHECK(r.status == 3);
  CHECK(r.err.find("posvec: error: ") != std::string::npos);
  CHECK(r.err.find("to continue") == std::string::npos);
}

TEST_CASE("data safety: --resume - refuses a stream that is not a model before copying it",
          "[cli][data-safety]") {
  TempDir dir;
  const std::string corpus = writeCorpus(dir);
  // 20 MB after 8 wrong magic bytes: whatever posvec did not read is counted after it exits.
  const std::size_t bytes = 20'000'000;
  const RunResult r =
      runShell("( { printf NOTMODEL; head -c " + std::to_string(bytes) + " /dev/zero; } | { '" +
               POSVEC_CLI + "' train " + quote(corpus) + " --pretokenized -o " +
               quote(dir.file("v.txt")) + " --resume - ; echo \"status $?\" >&2; wc -c; } )");
  INFO(r.err);
  CHECK(r.err.find("status 4") != std::string::npos);
  CHECK(r.err.find("bad magic") != std::string::npos);
  CHECK(lines(r.err) == 2);  // the error and the status line
  // It read at most one block of the pipe (64 KiB), not the whole stream.
  CHECK(std::stoull(r.out) + 65536 >= bytes);
}

namespace {
// Raw text in a subdirectory (read only with --recursive), with punctuation and
// capital I's that Turkish lowercases to dotless ı: every reading option matters.
std::string writeRawTree(const TempDir& dir, int lines) {
  fs::create_directories(dir.file("tree/sub"));
  std::string text;
  for (int i = 0; i < lines; ++i)
    text += "Isik " + std::to_string(i % 97) + " yolda, IRMAK kenarinda! Bir iki uc.\n";
  writeText(dir.file("tree/sub/part.txt"), text);
  return dir.file("tree");
}
}  // namespace

TEST_CASE("data safety: the printed resume command keeps every reading option and resumes",
          "[cli][data-safety][interrupt]") {
  TempDir dir;
  const std::string tree = writeRawTree(dir, 20000);
  posvec::test::Child child({"train", tree, "--recursive", "--no-punct", "--locale", "tr",
                             "--min-count", "1", "--dim", "16", "-t", "1", "--epochs", "1000",
                             "-o", dir.file("v.txt")},
                            dir.file("err"));
  REQUIRE(child.waitFor("epoch 1/1000"));
  REQUIRE(::kill(child.pid, SIGINT) == 0);
  INFO(child.err());
  REQUIRE(child.waitExit() == 130);
  const std::string err = child.err();
  const std::string marker = "to continue: posvec ";
  const auto at = err.find(marker);
  REQUIRE(at != std::string::npos);
  const std::string command = err.substr(at + marker.size(), err.find('\n', at) - at - marker.size());
  CHECK(command.find(" --recursive") != std::string::npos);
  CHECK(command.find(" --no-punct") != std::string::npos);
  CHECK(command.find(" --locale tr") != std::string::npos);
  // Run as printed, for one more epoch (the schedule's 1000 would take minutes).
  const RunResult resumed = runCli("-q " + command + " --epochs 1");
  INFO(resumed.err);
  CHECK(resumed.status == 0);
}

TEST_CASE("data safety: a model records how its corpus was read and refuses another reading",
          "[cli][data-safety]") {
  TempDir dir;
  const std::string tree = writeRawTree(dir, 300);
  const std::string train = "-q train " + quote(tree) + " --recursive -t 1 ";
  const RunResult first = runCli(train + "--min-count 1 --dim 4 --no-punct --locale tr --epochs 1 -o " +
                                 quote(dir.file("m.posvec")));
  REQUIRE(first.status == 0);
  // At an epoch boundary nothing else would notice: the tokens differ in silence.
  for (const auto& [options, meaning] :
       std::vector<std::pair<std::string, std::string>>{
           {"--no-punct", "with locale 'tr'"},
           {"--locale tr", "dropping punctuation tokens"},
           {"--no-punct --locale tr --keep-case", "lowercased"}}) {
    INFO(options);
    const RunResult r = runCli(train + options + " --epochs 1 -o " + quote(dir.file("more.posvec")) +
                               " --resume " + quote(dir.file("m.posvec")));
    CHECK(r.status == 5);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find(meaning) != std::string::npos);
    CHECK_FALSE(fs::exists(dir.file("more.posvec")));
  }
  // --update-vocab: refused before the corpus is counted for new words (it printed
  // "... new words added" first, against docs/data-safety.md).
  const RunResult grow = runCli("train " + quote(tree) + " --recursive -t 1 --no-punct " +
                                "--update-vocab --epochs 1 -o " + quote(dir.file("more.posvec")) +
                                " --resume " + quote(dir.file("m.posvec")));
  CHECK(grow.status == 5);
  CHECK(grow.err.find("new words added") == std::string::npos);
  CHECK(grow.err.find("with locale 'tr'") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("more.posvec")));
  const RunResult same = runCli(train + "--no-punct --locale tr --epochs 1 -o " +
                                quote(dir.file("more.posvec")) + " --resume " +
                                quote(dir.file("m.posvec")));
  INFO(same.err);
  CHECK(same.status == 0);
  CHECK(fs::exists(dir.file("more.posvec")));
}

TEST_CASE("data safety: small option mistakes are refused with what was typed",
          "[cli][data-safety]") {
  TempDir dir;
  const std::string corpus = writeCorpus(dir);
  writeText(dir.file("v.txt"), "2 2\na 1 0\nb 0 1\n");
  // --limit -1 is not "all" (that is 0).
  const RunResult limit = runCli("similarity " + quote(dir.file("v.txt")) + " a b --limit -1");
  CHECK(limit.status == 2);
  CHECK(limit.err.find("--limit") != std::string::npos);
  CHECK(limit.err.find("must not be negative (got -1)") != std::string::npos);
  // A 5000-digit dimension is quoted back as typed (shortened), not as 2^64 - 1.
  const std::string huge = "9" + std::string(4999, '1');
  const RunResult dim = runCli("train " + quote(corpus) + kSmall + "--dim " + huge + " -o " +
                               quote(dir.file("w.txt")));
  CHECK(dim.status == 2);
  CHECK(lines(dim.err) == 1);
  CHECK(dim.err.find("--dim") != std::string::npos);
  CHECK(dim.err.find("is too large (got 9111111111111111...1111111111111111, 5000 characters)") !=
        std::string::npos);
  CHECK(dim.err.find("18446744073709551615") == std::string::npos);
  // 2^64 - 1 itself passes this check (and is then refused as a dimension); 2^64 does not.
  CHECK(runCli("train " + quote(corpus) + kSmall + "--max-vocab 18446744073709551616 -o " +
               quote(dir.file("w.txt")))
            .err.find("is too large") != std::string::npos);
  // A checkpoint period no run reaches would never fire.
  for (const char* never : {"1e308m", "1e300s", "100000h"}) {
    INFO(never);
    const RunResult r = runCli("train " + quote(corpus) + kSmall + "-o " + quote(dir.file("w.txt")) +
                               " --checkpoint-every " + never);
    CHECK(r.status == 2);
    CHECK(r.err.find("--checkpoint-every: at most a year") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(dir.file("w.txt")));
}

TEST_CASE("data safety: study refuses an unusable report directory before it trains",
          "[cli][data-safety]") {
  TempDir dir;
  writeText(dir.file("file"), "not a directory");
  for (const std::string& report : {std::string("/dev/null"), dir.file("file"), dir.file("file/sub")}) {
    INFO(report);
    const RunResult r = runCli("study --report " + quote(report));
    CHECK(r.status == 3);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find("cannot create the report directory") != std::string::npos);
    // Nothing was trained or swept first.
    CHECK(r.err.find("epoch") == std::string::npos);
    CHECK(r.err.find("sweep") == std::string::npos);
  }
}

TEST_CASE("data safety: a byte-order mark does not become part of a vocabulary file's first word",
          "[data-safety]") {
  TempDir dir;
  writeText(dir.file("v.vocab"), "\xEF\xBB\xBFthe 10\ncat 4\n");
  const posvec::Vocabulary v = posvec::readWord2vecVocabulary(dir.file("v.vocab"));
  CHECK(v.words() == std::vector<std::string>{"the", "cat"});
  CHECK(v.counts() == std::vector<std::int64_t>{10, 4});
}

TEST_CASE("data safety: a corpus file that changes size while it is counted is refused naming it",
          "[cli][data-safety]") {
  // Before: a file truncated while it was counted trained on what was left in
  // silence at one thread, and at two failed with "error while reading" and no
  // reason. The test seam POSVEC_TEST_RESIZE_INPUT truncates (or extends) every
  // input right after its size is taken when it is opened, so no timing is involved.
  TempDir dir;
  const std::string corpus = writeCorpus(dir);
  const auto size = static_cast<std::uintmax_t>(fs::file_size(corpus));
  const std::string text = readText(corpus);  // written again before each run
  // 100: inside the first of two byte ranges; size - 10: inside the last; size + 100:
  // appended to (the extension reads as NUL bytes, never trained on).
  for (const std::uintmax_t now : {std::uintmax_t{100}, size - 10, size + 100, std::uintmax_t{0}}) {
    const std::string expected = "posvec: error: '" + corpus + "' changed while being read (" +
                                 std::to_string(size) + " bytes when opened, " +
                                 std::to_string(now) + " bytes now)";
    for (const std::string reading : {" --pretokenized -t 1", " --pretokenized -t 2", " -t 1"}) {
      INFO("size now " << now << ", reading" << reading);
      writeText(corpus, text);
      const RunResult r = posvec::test::runSeamsCli(
          "train " + quote(corpus) + reading + " --min-count 1 --dim 4 --epochs 1 -o " +
              quote(dir.file("v.txt")),
          "POSVEC_TEST_RESIZE_INPUT=" + std::to_string(now));
      INFO(r.err);
      CHECK(r.status != 0);
      CHECK(r.status < 128);
      CHECK(r.err.rfind(expected, 0) == 0);
      CHECK(lines(r.err) == 1);
      CHECK_FALSE(fs::exists(dir.file("v.txt")));
    }
  }
  // Unchanged, the same file trains at one and two threads.
  for (const std::string threads : {"1", "2"}) {
    writeText(corpus, text);
    const RunResult r = runCli("train " + quote(corpus) +
                               " --pretokenized --min-count 1 --dim 4 --epochs 1 -t " + threads +
                               " -o " + quote(dir.file("v.txt")));
    INFO(r.err);
    CHECK(r.status == 0);
    fs::remove(dir.file("v.txt"));
  }
}

TEST_CASE("data safety: the posvec users run never truncates a file for a test variable",
          "[cli][data-safety]") {
  // Before: the library read POSVEC_TEST_RESIZE_INPUT and POSVEC_TEST_SHRINK_MAPPED
  // in every build, so a user's posvec started with either set truncated the user's
  // corpus or vectors file. The seams now exist only in the test programs.
  TempDir dir;
  const std::string corpus = writeCorpus(dir);
  const std::string text = readText(corpus);
  const RunResult r = runCli("train " + quote(corpus) +
                                 " --pretokenized --min-count 1 --dim 4 --epochs 1 -t 1 -o " +
                                 quote(dir.file("v.txt")),
                             "", "POSVEC_TEST_RESIZE_INPUT=0 POSVEC_TEST_SHRINK_MAPPED=0");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(readText(corpus) == text);
  const std::string vectors = readText(dir.file("v.txt"));
  const RunResult q = runCli("similar " + quote(dir.file("v.txt")) + " alpha -k 1", "",
                             "POSVEC_TEST_SHRINK_MAPPED=0 POSVEC_TEST_RESIZE_INPUT=0");
  INFO(q.err);
  CHECK(q.status == 0);
  CHECK(readText(dir.file("v.txt")) == vectors);
}
