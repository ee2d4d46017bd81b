// The limits of input reading (docs/input-limits.md): files that change while they
// are read, directory cycles, word and line lengths, whole-file reads, and the
// memory the positional stage and attention ask for, refused before any work.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "posvec/attention.hpp"
#include "posvec/corpus.hpp"
#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/positional.hpp"
#include "posvec/tokenizer.hpp"
#include "posvec/vocabulary.hpp"
#include "corpus_detail.hpp"
#include "exit_code.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {

// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// 3,000 words of dimension 50: about 630 KB in binary, 1.6 MB in text, so a cut at
// 64 KiB leaves most pages past the new end.
Embeddings manyVectors() {
  std::vector<std::string> words;
  MatrixF m(3000, 50);
  for (int i = 0; i < 3000; ++i) {
    words.push_back("w" + std::to_string(i));
    for (int j = 0; j < 50; ++j) m(i, j) = static_cast<float>(i % 97) * 0.25f + static_cast<float>(j);
  }
  return Embeddings(std::move(words), std::move(m));
}

}  // namespace

TEST_CASE("limits: a vectors file that shrinks while it is mapped is reported as truncated",
          "[limits]") {
  // Before: the reader died of SIGBUS at the first page past the new end. The test
  // seam truncates the file right after it is mapped, so no timing is involved.
  test::TempDir dir;
  const Embeddings e = manyVectors();
  for (const std::string name : {"v.bin", "v.txt"}) {
    // 65536 is a page boundary (the pages after it fault); 70001 cuts inside a page
    // (its tail reads as zeros); 0 leaves nothing.
    for (const std::string cut : {"65536", "70001", "0"}) {
      INFO(name << " cut at " << cut);
      const std::string file = dir.file(name);
      saveVectors(e, file);
      const ScopedEnv seam("POSVEC_TEST_SHRINK_MAPPED", cut);
      CHECK_THROWS_AS(loadVectors(file), IoError);
      saveVectors(e, file);
      CHECK_THROWS_WITH(loadVectors(file),
                        Catch::Contains("was truncated while it was being read") &&
                            Catch::Contains(cut + " now"));
    }
  }
  // Without the seam the same file loads whole.
  const std::string file = dir.file("v.bin");
  saveVectors(e, file);
  CHECK(loadVectors(file).size() == 3000);

  // The CLI: one line, exit code below 128 (no signal), for both formats.
  for (const std::string name : {"v.bin", "v.txt"}) {
    saveVectors(e, dir.file(name));
    const auto r = test::runSeamsCli("similar " + test::quote(dir.file(name)) + " w1",
                                     "POSVEC_TEST_SHRINK_MAPPED=65536");
    INFO(r.err);
    CHECK(r.status != 0);
    CHECK(r.status < 128);
    CHECK(r.err.find("was truncated while it was being read") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("limits: reading a directory recursively takes each directory and file once",
          "[limits]") {
  // Before: a link back to an ancestor was followed until the kernel's ELOOP (the
  // tree read 41 times, silently); two such links listed about 2^40 paths.
  test::TempDir dir;
  namespace fs = std::filesystem;
  const fs::path c = dir.path() / "c";
  fs::create_directories(c / "sub");
  test::writeText((c / "a.txt").string(), "alpha beta\n");
  test::writeText((c / "sub" / "b.txt").string(), "gamma delta\n");
  fs::create_directory_symlink("..", c / "sub" / "loop");  // a cycle
  fs::create_directory_symlink("sub", c / "again");        // a second way to sub
  fs::create_symlink("a.txt", c / "same.txt");              // a second way to a file

  const auto corpus = CorpusSource::fromFiles({c.string()}, true, {}, true);
  // Depth first in name order: a.txt, again (= sub: b.txt, loop = c), same.txt, sub.
  const std::vector<std::string> want{(c / "a.txt").string(), (c / "again" / "b.txt").string()};
  REQUIRE(corpus.paths() == want);
  const std::vector<std::string> skipped{
      "'" + (c / "again" / "loop").string() + "' is '" + c.string() + "' again",
      "'" + (c / "same.txt").string() + "' is '" + (c / "a.txt").string() + "' again",
      "'" + (c / "sub").string() + "' is '" + (c / "again").string() + "' again"};
  CHECK(corpus.skippedPaths() == skipped);

  // Two cycles: still each directory once.
  fs::create_directory_symlink("..", c / "sub" / "loop2");
  CHECK(CorpusSource::fromFiles({c.string()}, true, {}, true).paths() == want);
  // Without recursion: the files of the directory itself, the linked file once.
  CHECK(CorpusSource::fromFiles({c.string()}, true, {}, false).paths() ==
        std::vector<std::string>{(c / "a.txt").string()});
  // Paths given twice are read twice, as asked.
  CHECK(CorpusSource::fromFiles({c.string(), c.string()}, true, {}, true).paths().size() == 4);

  // The CLI: the words once, and one note line on stderr.
  const auto r = test::runCli("-q tokenize --recursive " + test::quote(c.string()));
  CHECK(r.status == 0);
  CHECK(r.out == "alpha beta\ngamma delta\n");
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find("posvec: note: repeated paths are read once: '" + (c / "again" / "loop").string() +
                   "' is '" + c.string() + "' again, and 3 more") == 0);
}

namespace {
// Runs the CLI and returns its result with the wall time it took.
std::pair<test::RunResult, double> timedCli(const std::string& args) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = test::runCli(args);
  return {r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}
}  // namespace

TEST_CASE("limits: the positional stage refuses sizes before building anything", "[limits]") {
  // Before: a 2^62-wide encoder died in vector::_M_default_append, 2^40 asked for 8 TB
  // of tables; pe built five per-dimension tables before its check (52 s and 12 GB
  // for --dim 2e9, 27 s for --dim 1e8 --len 1e8).
  for (const std::size_t dim : {std::size_t{1} << 40, std::size_t{1} << 62}) {
    PositionalOptions o;
    o.dim = dim;
    INFO(dim);
    CHECK_THROWS_AS(PositionalEncoder(o), ConfigError);
    CHECK_THROWS_WITH(PositionalEncoder(o),
                      Catch::StartsWith("d_model " + std::to_string(dim) + " needs ") &&
                          Catch::Contains(" GB for its frequency tables, more than this machine's"));
    CHECK_THROWS_WITH(checkPositionalMemory(o, 0, 1, 4), Catch::Contains("frequency tables"));
  }
  PositionalOptions o;
  o.dim = 100'000'000;
  CHECK_THROWS_WITH(checkPositionalMemory(o, 0, 100'000'000, 4),
                    Catch::StartsWith("a 100000000 x 100000000 matrix of float32 needs 4e+07 GB"));
  // A d x d rotation: 10^6 x 10^6 doubles are 8 TB (the encoder's tables are 28 MB).
  o.dim = 1'000'000;
  CHECK_THROWS_WITH(PositionalEncoder(o).relativeShift(1),
                    Catch::StartsWith("a 1000000 x 1000000 matrix of float64 needs 8e+03 GB"));

  // The CLI: one line, the usage exit code, in far less time than building the tables.
  for (const std::string args : {"pe --dim 2000000000 --len 1", "pe --dim 100000000 --len 100000000",
                                 "pe --dim 4611686018427387904 --len 1"}) {
    INFO(args);
    const auto [r, seconds] = timedCli(args);
    CHECK(r.status == 2);
    CHECK(r.err.find(" needs ") != std::string::npos);
    CHECK(r.err.find(" GB") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(seconds < 5.0);
  }
}

TEST_CASE("limits: attention refuses a sentence whose maps cannot fit, naming its length",
          "[limits]") {
  // Before: no estimate; a 50,000-token sentence would exhaust the machine. The check
  // is arithmetic on the sizes: (heads + 1) T^2 doubles and T-row matrices.
  AttentionOptions ao;
  ao.heads = 2;
  const Attention a(8, ao);
  const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                        static_cast<double>(::sysconf(_SC_PAGESIZE));
  // The smallest T whose two kept maps alone exceed the machine, and 1,000 tokens
  // (16 MB), which fits anywhere.
  const auto big = static_cast<std::size_t>(std::sqrt(memory / 16.0)) + 1;
  CHECK_NOTHROW(a.checkMemory(1000));
  CHECK_THROWS_AS(a.checkMemory(big), ConfigError);
  CHECK_THROWS_WITH(a.checkMemory(big),
                    Catch::StartsWith("attention over a sentence of " + std::to_string(big) +
                                      " tokens needs ") &&
                        Catch::Contains("(2 maps of " + std::to_string(big) + " x " +
                                        std::to_string(big) + " weights), more than this machine's"));
  // compute() checks before it allocates: a big x 8 input is only big * 64 bytes.
  const MatrixD x = MatrixD::Constant(static_cast<Eigen::Index>(big), 8, 0.5);
  CHECK_THROWS_WITH(a.compute(x), Catch::StartsWith("attention over a sentence of " +
                                                    std::to_string(big) + " tokens needs "));

  // The CLI, with a sentence of that many tokens: one line naming the length.
  test::TempDir dir;
  std::vector<std::string> words{"a", "b"};
  MatrixF m(2, 8);
  m.setConstant(0.25f);
  saveVectors(Embeddings(words, m), dir.file("v.bin"));
  std::string sentence;
  sentence.reserve(2 * big);
  for (std::size_t i = 0; i < big; ++i) sentence += i % 2 ? "b " : "a ";
  test::writeText(dir.file("s.txt"), sentence + "\n");
  const auto r = test::runCli("attend " + test::quote(dir.file("v.bin")) + " -i " +
                              test::quote(dir.file("s.txt")) + " --heads 2 -o " +
                              test::quote(dir.file("out.tsv")));
  CHECK(r.status == 2);
  CHECK(r.err.find("attention over a sentence of " + std::to_string(big) + " tokens needs") !=
        std::string::npos);
}

TEST_CASE("limits: a word keeps at most kMaxWordBytes, cut at a character boundary", "[limits]") {
  // Before: a word without whitespace grew one string (a 10 MB gzip of zeros: out of memory).
  REQUIRE(kMaxWordBytes == 1024);
  std::string euro;  // 3-byte characters: 1,024 bytes end inside the 342nd
  for (int i = 0; i < 2000; ++i) euro += "\xE2\x82\xAC";
  std::string kept;
  for (int i = 0; i < 341; ++i) kept += "\xE2\x82\xAC";
  const std::string zeros(3'000'000, '0');

  // The tokenizer of raw text: ICU's words (a Hangul word of 3-byte syllables; raw
  // sentences are cut at 1 MiB, so 5,000 zeros stay in one).
  std::string hangul, hangulKept;
  for (int i = 0; i < 2000; ++i) hangul += "\xEA\xB0\x80";
  for (int i = 0; i < 341; ++i) hangulKept += "\xEA\xB0\x80";
  TokenizerOptions raw;
  const auto s = Tokenizer(raw).tokenize("go " + hangul + " now " + std::string(5000, '0') + ".");
  REQUIRE(s.size() == 1);
  REQUIRE(s[0].size() >= 4);
  CHECK(s[0][1] == hangulKept);
  CHECK(s[0][3] == std::string(1024, '0'));

  // Pre-tokenized files on one and two threads (byte ranges), and compressed (a stream).
  test::TempDir dir;
  const std::string text = "go " + euro + " now\n" + zeros + "\n" + zeros + " end\n";
  test::writeText(dir.file("a.txt"), text);
  const std::string gz = dir.file("a.txt.gz");
  const bool haveGzip = test::runShell("gzip -kf " + test::quote(dir.file("a.txt"))).status == 0;
  std::vector<std::string> files{dir.file("a.txt")};
  if (haveGzip) files.push_back(gz);
  for (const std::string& f : files) {
    for (const int threads : {1, 2}) {
      INFO(f << ", " << threads << " threads");
      const auto p = detail::prepareCorpus(CorpusSource::fromFiles({f}, true), 1, 0, 20'000'000,
                                           threads);
      CHECK(p.tokens == 6);
      CHECK(p.vocabulary.find(kept) >= 0);
      CHECK(p.vocabulary.find(std::string(1024, '0')) >= 0);
      CHECK(p.vocabulary.count(p.vocabulary.find(std::string(1024, '0'))) == 2);
      CHECK(p.vocabulary.size() == 5);
    }
  }
}

TEST_CASE("limits: the counting table is bounded by bytes as well as by words", "[limits]") {
  // Before: only the number of words was bounded (unique 1 KB tokens: 2.9 GB and dead).
  VocabularyBuilder b(0, 64 * 1024);
  const std::string common = "the";
  std::uint64_t most = 0;
  for (int i = 0; i < 2000; ++i) {
    b.add(common);
    b.add(std::string(1000, 'x') + std::to_string(i));  // unique, about 1 KB
    most = std::max(most, b.bytes());
  }
  // Each word costs its characters and kBytesPerEntry; pruning starts past the limit.
  CHECK(most <= 64 * 1024 + 1004 + VocabularyBuilder::kBytesPerEntry);
  CHECK(b.prunings() > 0);
  const Vocabulary v = b.finish(2, 0);
  CHECK(v.words() == std::vector<std::string>{"the"});
  CHECK(v.counts() == std::vector<std::int64_t>{2000});
}

TEST_CASE("limits: whole-file reads stop at their limit with one line", "[limits]") {
  // Before: --read-vocab, eval --analogies/--pairs and attend/encode -i read /dev/zero
  // (or a decompression bomb) until memory ran out.
  if (!std::filesystem::exists("/dev/zero")) POSVEC_SKIP("no /dev/zero");
  test::TempDir dir;
  std::vector<std::string> words{"a", "b"};
  MatrixF m(2, 4);
  m << 1, 0, 0, 0, 0, 1, 0, 0;
  saveVectors(Embeddings(words, m), dir.file("v.bin"));
  test::writeText(dir.file("c.txt"), "a b a b\n");
  const std::string v = test::quote(dir.file("v.bin"));
  const struct {
    std::string args, limit, what;
  } cases[] = {
      {"eval " + v + " --pairs /dev/zero", "256 MiB", "file of word pairs"},
      {"eval " + v + " --analogies /dev/zero", "256 MiB", "file of analogy questions"},
      {"attend " + v + " -i /dev/zero", "64 MiB", "file of sentences"},
      {"encode " + v + " -i /dev/zero", "64 MiB", "file of sentences"},
      {"train " + test::quote(dir.file("c.txt")) + " --pretokenized --min-count 1 --read-vocab "
       "/dev/zero -o " + test::quote(dir.file("o.bin")),
       "1024 MiB", "vocabulary file"},
  };
  for (const auto& c : cases) {
    // Under ASan+UBSan only the two 64 MiB cases: every case reads through the same
    // readFile(path, limit, what), the others only pass it a larger limit, and
    // reading their 1.5 GiB of zeros there took a minute (the Release run checks all).
    if (test::kAddressSanitizer && c.limit != "64 MiB") continue;
    INFO(c.args);
    const auto r = test::runCli(c.args);
    CHECK(r.status == static_cast<int>(cli::ExitCode::Input));
    CHECK(r.err == "posvec: error: '/dev/zero' holds more than " + c.limit + ", more than a " +
                       c.what + " may (is it the right file?)\n");
  }
}

TEST_CASE("limits: running out of memory names the remedy of the command that ran", "[limits]") {
  // Before: every command suggested --dim, --max-vocab or --len.
  if (test::kAddressSanitizer) POSVEC_SKIP("ulimit -v does not combine with AddressSanitizer");
  test::TempDir dir;
  std::vector<std::string> words{"a", "b"};
  MatrixF m(2, 4);
  m << 1, 0, 0, 0, 0, 1, 0, 0;
  saveVectors(Embeddings(words, m), dir.file("v.bin"));
  // 6,000 tokens: two heads' maps are 576 MB, over a 400 MB address-space limit but
  // within any machine's memory, so the estimate lets it through and allocation fails.
  std::string sentence;
  for (int i = 0; i < 6000; ++i) sentence += i % 2 ? "b " : "a ";
  test::writeText(dir.file("s.txt"), sentence + "\n");
  const auto r = test::runShell("ulimit -v 400000; '" + std::string(POSVEC_CLI) + "' attend " +
                                test::quote(dir.file("v.bin")) + " -i " +
                                test::quote(dir.file("s.txt")) + " --heads 2 -o " +
                                test::quote(dir.file("out.tsv")));
  CHECK(r.status == 1);
  CHECK(r.err == "posvec: error: out of memory (try shorter sentences or fewer --heads)\n");
}
