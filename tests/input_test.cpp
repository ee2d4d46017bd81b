// Opening inputs: compressed data recognised from its content, "-" as standard
// input, directories as corpora. Compressed files are made by the system's own
// compressors (gzip, bzip2, xz, zstd), so the expected text is the original.
#include "input.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "corpus_detail.hpp"
#include "posvec/corpus.hpp"
#include "posvec/error.hpp"
#include "posvec/evaluation.hpp"
#include "posvec/io.hpp"
#include "posvec/tokenizer.hpp"
#include "test_util.hpp"

using namespace posvec;
using posvec::test::quote;
using posvec::test::readText;
using posvec::test::runCli;
using posvec::test::RunResult;
using posvec::test::TempDir;
using posvec::test::writeText;

namespace {

namespace fs = std::filesystem;

struct Compressor {
  const char* name;     // as detectCompression says it
  const char* command;  // compresses stdin to stdout
  const char* suffix;
};
const std::vector<Compressor> kCompressors{{"gzip", "gzip -c", ".gz"},
                                           {"bzip2", "bzip2 -c", ".bz2"},
                                           {"xz", "xz -c", ".xz"},
                                           {"zstd", "zstd -q -c", ".zst"}};

bool haveTool(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// `plain` compressed into `target` by the system tool; false when it is not installed.
bool compress(const Compressor& c, const std::string& plain, const std::string& target) {
  const std::string tool = std::string(c.command).substr(0, std::string(c.command).find(' '));
  if (!haveTool(tool)) return false;
  const std::string cmd = std::string(c.command) + " <" + quote(plain) + " >" + quote(target);
  REQUIRE(std::system(cmd.c_str()) == 0);
  return true;
}

std::vector<std::string> tokensOf(const CorpusSource& corpus) {
  std::vector<std::string> out;
  detail::forEachToken(
      corpus, [&](std::string_view w) { out.emplace_back(w); }, [&] { out.emplace_back("|"); });
  return out;
}

using Tokens = std::vector<std::string>;

// Enough text to span several of libarchive's blocks and the reader's 1 MiB blocks.
std::string bigCorpus() {
  std::string text;
  for (int i = 0; i < 40000; ++i)
    text += "line " + std::to_string(i) + " of the corpus with some words\n";
  return text;
}

}  // namespace

TEST_CASE("input: compression is recognised from the first bytes", "[input]") {
  const unsigned char gz[] = {0x1f, 0x8b, 8, 0};
  const unsigned char bz[] = {'B', 'Z', 'h', '9', 0x31, 0x41};
  const unsigned char xz[] = {0xfd, '7', 'z', 'X', 'Z', 0};
  const unsigned char zst[] = {0x28, 0xb5, 0x2f, 0xfd};
  const unsigned char text[] = {'B', 'Z', 'h', 'x', ' ', 'a'};
  CHECK(detail::detectCompression(gz, sizeof gz) == "gzip");
  CHECK(detail::detectCompression(bz, sizeof bz) == "bzip2");
  CHECK(detail::detectCompression(xz, sizeof xz) == "xz");
  CHECK(detail::detectCompression(zst, sizeof zst) == "zstd");
  CHECK(detail::detectCompression(text, sizeof text).empty());
  CHECK(detail::detectCompression(gz, 1).empty());
}

TEST_CASE("input: gzip, bzip2, xz and zstd corpora read as their text", "[input]") {
  TempDir dir;
  const std::string plain = dir.file("corpus.txt");
  const std::string text = bigCorpus();
  writeText(plain, text);
  const Tokens expected = tokensOf(CorpusSource::fromFiles({plain}, true));
  REQUIRE(expected.size() == 40000u * 9u);  // 8 words and a sentence end a line
  const Tokens expectedRaw = tokensOf(CorpusSource::fromFiles({plain}));
  // One pass over the compressors (not a SECTION each, which tokenized the plain file
  // twice again for every one). A missing tool skips the test case once the installed
  // ones were checked, and only when they all passed (a skip would hide a failure).
  std::string missing;
  bool allSame = true;
  for (const Compressor& c : kCompressors) {
    INFO(c.name);
    // A misleading name: the content decides.
    const std::string packed = dir.file(std::string("corpus-") + c.name + ".txt");
    if (!compress(c, plain, packed)) {
      missing += std::string(missing.empty() ? "" : ", ") + c.name;
      continue;
    }
    const bool sameTokens = tokensOf(CorpusSource::fromFiles({packed}, true)) == expected;
    const bool sameText = readFile(packed) == text;
    // Raw text goes through the tokenizer the same way.
    const bool sameRawTokens = tokensOf(CorpusSource::fromFiles({packed})) == expectedRaw;
    CHECK(sameTokens);
    CHECK(sameText);
    CHECK(sameRawTokens);
    allSame = allSame && sameTokens && sameText && sameRawTokens;
  }
  if (!missing.empty() && allSame)
    POSVEC_SKIP(missing << " not installed (tools/scripts/setup.sh --test)");
}

TEST_CASE("input: corrupt or truncated compressed data is an error naming the file", "[input]") {
  TempDir dir;
  const std::string plain = dir.file("c.txt");
  writeText(plain, bigCorpus());
  const std::string packed = dir.file("c.txt.gz");
  if (!compress(kCompressors[0], plain, packed)) POSVEC_SKIP("gzip is not installed");
  const std::string bytes = readText(packed);
  writeText(packed, bytes.substr(0, bytes.size() / 2));
  try {
    tokensOf(CorpusSource::fromFiles({packed}, true));
    FAIL("a truncated gzip file was read without error");
  } catch (const IoError& e) {
    const std::string what = e.what();
    CHECK(what.find(packed) != std::string::npos);
    CHECK(what.find("gzip") != std::string::npos);
  }
}

TEST_CASE("input: an empty compressed file is an empty corpus, an empty plain file too",
          "[input]") {
  TempDir dir;
  const std::string plain = dir.file("empty.txt");
  writeText(plain, "");
  const std::string packed = dir.file("empty.gz");
  if (!compress(kCompressors[0], plain, packed)) POSVEC_SKIP("gzip is not installed");
  CHECK(tokensOf(CorpusSource::fromFiles({packed}, true)).empty());
  CHECK(tokensOf(CorpusSource::fromFiles({plain}, true)).empty());
  CHECK(readFile(packed).empty());
}

TEST_CASE("input: evaluation files may be compressed", "[input]") {
  TempDir dir;
  const std::string pairs = dir.file("pairs.tsv");
  writeText(pairs, "a\tb\t1\na\tc\t2\nb\tc\t3\n");
  const std::string packed = dir.file("pairs.tsv.xz");
  if (!compress(kCompressors[2], pairs, packed)) POSVEC_SKIP("xz is not installed");
  MatrixF m(3, 2);
  m << 1, 0, 0.8f, 0.6f, 0, 1;
  const Embeddings e({"a", "b", "c"}, m);
  const WordPairResult want = evaluateWordPairs(e, pairs);
  const WordPairResult got = evaluateWordPairs(e, packed);
  CHECK(got.pairs == 3);
  CHECK(got.spearman == want.spearman);
  CHECK(got.pearson == want.pearson);
}

TEST_CASE("input: a directory is its regular files sorted by name", "[input]") {
  TempDir dir;
  const std::string corpus = dir.file("corpus");
  fs::create_directories(corpus + "/sub/deeper");
  writeText(corpus + "/b.txt", "two\n");
  writeText(corpus + "/a.txt", "one\n");
  writeText(corpus + "/c.txt", "three\n");
  writeText(corpus + "/sub/a.txt", "four\n");
  writeText(corpus + "/sub/deeper/z.txt", "five\n");
  CHECK(tokensOf(CorpusSource::fromFiles({corpus}, true)) ==
        Tokens{"one", "|", "two", "|", "three", "|"});
  CHECK(tokensOf(CorpusSource::fromFiles({corpus}, true, {}, true)) ==
        Tokens{"one", "|", "two", "|", "three", "|", "four", "|", "five", "|"});
  // Files and directories mix, each in the order given.
  writeText(dir.file("first.txt"), "zero\n");
  const CorpusSource mixed =
      CorpusSource::fromFiles({dir.file("first.txt"), corpus + "/sub"}, true);
  CHECK(mixed.paths() == std::vector<std::string>{dir.file("first.txt"), corpus + "/sub/a.txt"});
}

TEST_CASE("input: a directory without files is a clear error", "[input]") {
  TempDir dir;
  fs::create_directories(dir.file("empty"));
  fs::create_directories(dir.file("nested/inner"));
  writeText(dir.file("nested/inner/x.txt"), "x\n");
  try {
    CorpusSource::fromFiles({dir.file("empty")}, true);
    FAIL("an empty directory was accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(dir.file("empty")) != std::string::npos);
    CHECK(std::string(e.what()).find("no regular files") != std::string::npos);
  }
  CHECK_THROWS_WITH(CorpusSource::fromFiles({dir.file("nested")}, true),
                    Catch::Contains("subdirectories"));
  CHECK(CorpusSource::fromFiles({dir.file("nested")}, true, {}, true).paths().size() == 1);
  const RunResult r =
      runCli("train " + quote(dir.file("empty")) + " -o " + quote(dir.file("v.txt")));
  CHECK(r.status == 5);
  CHECK(r.err.rfind("posvec: error: directory '", 0) == 0);
}

TEST_CASE("input: the CLI reads compressed corpora and directories, from stdin too", "[input]") {
  TempDir dir;
  const std::string plain = dir.file("raw.txt");
  writeText(plain, "The cat sat. The dog ran!\nA cat and a dog.\n");
  const std::string packed = dir.file("raw.zst");
  if (!compress(kCompressors[3], plain, packed)) POSVEC_SKIP("zstd is not installed");
  const RunResult want = runCli("tokenize " + quote(plain));
  REQUIRE(want.status == 0);
  REQUIRE(want.out == "the cat sat .\nthe dog ran !\na cat and a dog .\n");
  const RunResult file = runCli("tokenize " + quote(packed));
  CHECK(file.status == 0);
  CHECK(file.out == want.out);
  const RunResult piped = runCli("tokenize -", packed);
  CHECK(piped.status == 0);
  CHECK(piped.out == want.out);
  // A directory with the plain and the compressed copy: both, in name order.
  fs::create_directories(dir.file("d"));
  fs::copy_file(plain, dir.file("d/1.txt"));
  fs::copy_file(packed, dir.file("d/2.zst"));
  const RunResult both = runCli("tokenize " + quote(dir.file("d")));
  CHECK(both.status == 0);
  CHECK(both.out == want.out + want.out);
  // train: the same vocabulary from the compressed corpus on stdin as from the file.
  const RunResult a =
      runCli("-q train " + quote(plain) + " --min-count 1 --dim 4 --epochs 1 -t 1 -o " +
             quote(dir.file("a.txt")));
  const RunResult b = runCli(
      "-q train - --min-count 1 --dim 4 --epochs 1 -t 1 -o " + quote(dir.file("b.txt")), packed);
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  CHECK(readText(dir.file("a.txt")) == readText(dir.file("b.txt")));
}

namespace {
// A message that says the data is not a stream the detected decompressor takes.
void requireRefusedAsCorrupt(const std::string& path, const std::string& kind) {
  try {
    const std::string text = readFile(path);
    FAIL("read " << text.size() << " bytes from a corrupt " << kind << " file");
  } catch (const IoError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find(path) != std::string::npos);
    CHECK(what.find(kind) != std::string::npos);
    CHECK(what.find("corrupt or unsupported compressed file") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}
}  // namespace

TEST_CASE("input: only the detected decompressor runs, and a header it refuses is an error",
          "[input]") {
  TempDir dir;
  const std::string plain = dir.file("p.txt");
  writeText(plain, "one two three\nfour five six\n");
  SECTION("a gzip header with an unknown method byte") {
    const std::string packed = dir.file("p.gz");
    if (!compress(kCompressors[0], plain, packed)) POSVEC_SKIP("gzip is not installed");
    std::string bytes = readText(packed);
    REQUIRE(static_cast<unsigned char>(bytes[2]) == 8);  // deflate, RFC 1952
    bytes[2] = 7;
    writeText(packed, bytes);
    requireRefusedAsCorrupt(packed, "gzip");
    // Through the CLI with --replace-invalid: still refused, one line, not trained on.
    const RunResult r = runCli("-q train " + quote(packed) +
                               " --replace-invalid --min-count 1 --dim 4 --epochs 1 -o " +
                               quote(dir.file("v.txt")));
    CHECK(r.status != 0);
    CHECK(r.err.find("corrupt or unsupported compressed file") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(dir.file("v.txt")));
  }
  SECTION("a bzip2 stream whose first block magic is wrong") {
    const std::string packed = dir.file("p.bz2");
    if (!compress(kCompressors[1], plain, packed)) POSVEC_SKIP("bzip2 is not installed");
    std::string bytes = readText(packed);
    REQUIRE(bytes.substr(4, 6) == "1AY&SY");  // the block magic 0x314159265359
    bytes[4] = '2';
    writeText(packed, bytes);
    requireRefusedAsCorrupt(packed, "bzip2");
  }
  SECTION("decompressed text that starts like a uuencoded file is not decoded again") {
    const std::string text =
        "begin 644 name\nthe first line\nsecond line\nthird\nfourth\nfifth\nsixth\n";
    writeText(plain, text);
    const std::string packed = dir.file("uu.gz");
    if (!compress(kCompressors[0], plain, packed)) POSVEC_SKIP("gzip is not installed");
    CHECK(readFile(packed) == text);
    CHECK(tokensOf(CorpusSource::fromFiles({packed}, true)) ==
          tokensOf(CorpusSource::fromFiles({plain}, true)));
  }
  SECTION("an xz file whose content looks like an lzma header") {
    // 0x5d, a 64 KiB dictionary and an unknown size: the header xz --format=lzma writes.
    const std::string text = std::string("\x5d\x00\x00\x01\x00\xff\xff\xff\xff\xff\xff\xff\xff", 13) +
                             "and then plain words follow\n";
    writeText(plain, text);
    const std::string packed = dir.file("l.xz");
    if (!compress(kCompressors[2], plain, packed)) POSVEC_SKIP("xz is not installed");
    CHECK(readFile(packed) == text);
  }
}
