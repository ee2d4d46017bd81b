// fastText's subword scheme and .bin reader. Expected n-grams are worked out by
// hand from fastText's published rule (n-grams of "<word>" over UTF-8 characters,
// by start then length, lone "<" and ">" excluded); hashes come from a second
// FNV-1a written here with 64-bit arithmetic and explicit sign extension, checked
// itself against published FNV-1a constants.
#include "posvec/subwords.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "posvec/error.hpp"
#include "test_util.hpp"

using namespace posvec;
using posvec::test::TempDir;
namespace fs = std::filesystem;

namespace {

// FNV-1a 32 with fastText's quirk, written independently: bytes >= 0x80 become
// 0xFFFFFF00 | byte before the xor; the product is reduced modulo 2^32 by hand.
std::uint32_t refHash(const std::string& s) {
  std::uint64_t h = 2166136261ull;
  for (unsigned char b : s) {
    const std::uint64_t x = b >= 0x80 ? (0xFFFFFF00ull | b) : b;
    h = ((h ^ x) * 16777619ull) % 4294967296ull;
  }
  return static_cast<std::uint32_t>(h);
}

// A fastText version-12 .bin, written field by field as fastText 0.9 lays it out.
struct BinSpec {
  std::int32_t dim = 2, loss = 2 /*ns*/, model = 2 /*skipgram*/, bucket = 5, minn = 2, maxn = 3;
  std::vector<std::string> words = {"</s>", "ab", "\xC3\xA9"};
  std::int32_t nlabels = 0;
  std::int8_t lastType = 0;
  std::uint8_t quantIn = 0, quantOut = 0;
  /// 12 or 11: fastText 0.9's layout with that version; 0: the layout before 0.9 (no
  /// magic, no version, no pruned-bucket size, no quantisation flags).
  std::int32_t version = 12;
};

template <typename T>
void put(std::string& b, T v) {
  b.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Input row r holds (r + 1, -(r + 1) / 4); the output matrix is all 0.5.
std::string makeBin(const BinSpec& s) {
  std::string b;
  const bool old = s.version == 0;
  if (!old) {
    put<std::int32_t>(b, 793712314);
    put<std::int32_t>(b, s.version);
  }
  const std::int32_t args[12] = {s.dim,  5,       1,        1,      5,      1,
                                 s.loss, s.model, s.bucket, s.minn, s.maxn, 100};
  for (auto a : args) put(b, a);
  put<double>(b, 1e-4);
  const auto n = static_cast<std::int32_t>(s.words.size());
  put<std::int32_t>(b, n);
  put<std::int32_t>(b, n - s.nlabels);
  put<std::int32_t>(b, s.nlabels);
  put<std::int64_t>(b, 1000);
  if (!old) put<std::int64_t>(b, -1);
  for (std::size_t i = 0; i < s.words.size(); ++i) {
    b += s.words[i];
    b += '\0';
    put<std::int64_t>(b, 100 - static_cast<std::int64_t>(i));
    put<std::int8_t>(b, i + 1 == s.words.size() ? s.lastType : 0);
  }
  if (!old) put<std::uint8_t>(b, s.quantIn);
  const std::int64_t rows = n + s.bucket;
  put<std::int64_t>(b, rows);
  put<std::int64_t>(b, s.dim);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int32_t c = 0; c < s.dim; ++c)
      put<float>(b, c == 0 ? static_cast<float>(r + 1) : -static_cast<float>(r + 1) / 4);
  if (!old) put<std::uint8_t>(b, s.quantOut);
  put<std::int64_t>(b, n);
  put<std::int64_t>(b, s.dim);
  for (std::int64_t i = 0; i < std::int64_t{n} * s.dim; ++i) put<float>(b, 0.5f);
  return b;
}

std::string loadError(const std::string& path) {
  try {
    SubwordModel::load(path);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "(loaded)";
}

template <typename T>
void patch(std::string& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

}  // namespace

TEST_CASE("subword hash is FNV-1a 32 with fastText's sign-extended bytes", "[subwords]") {
  // The reference agrees with published FNV-1a 32 values on ASCII.
  CHECK(refHash("") == 2166136261u);
  CHECK(refHash("a") == 0xE40C292Cu);
  CHECK(refHash("foobar") == 0xBF9CF968u);
  for (const std::string s : {"", "a", "foobar", "<wh", "where>"})
    CHECK(subwordHash(s) == refHash(s));
  // Beyond ASCII the quirk changes the value: e-acute (C3 A9), CJK, an emoji.
  for (const std::string s :
       {"\xC3\xA9", "<\xC3\xA9>", "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x98\x80"})
    CHECK(subwordHash(s) == refHash(s));
  // Standard FNV-1a of the single byte 0xE9 differs from fastText's: xor 0xE9 vs 0xFFFFFFE9.
  const std::uint32_t standard = (2166136261u ^ 0xE9u) * 16777619u;
  CHECK(subwordHash("\xE9") != standard);
  CHECK(subwordHash("\xE9") == (2166136261u ^ 0xFFFFFFE9u) * 16777619u);
}

TEST_CASE("character n-grams follow fastText's rule on hand-worked words", "[subwords]") {
  using V = std::vector<std::string>;
  // <where>, 3..6 characters, by start then length.
  CHECK(characterNgrams("where", 3, 6) == V{"<wh", "<whe", "<wher", "<where", "whe", "wher",
                                            "where", "where>", "her", "here", "here>", "ere",
                                            "ere>", "re>"});
  // Accented, 1..2: "é" alone is an n-gram, the lone "<" and ">" are not.
  CHECK(characterNgrams("\xC3\xA9", 1, 2) == V{"<\xC3\xA9", "\xC3\xA9", "\xC3\xA9>"});
  // CJK 日本, 2..3: characters, not bytes.
  CHECK(characterNgrams("\xE6\x97\xA5\xE6\x9C\xAC", 2, 3) ==
        V{"<\xE6\x97\xA5", "<\xE6\x97\xA5\xE6\x9C\xAC", "\xE6\x97\xA5\xE6\x9C\xAC",
          "\xE6\x97\xA5\xE6\x9C\xAC>", "\xE6\x9C\xAC>"});
  // An emoji (4 bytes) with 3..6: the whole <😀> is its only n-gram.
  CHECK(characterNgrams("\xF0\x9F\x98\x80", 3, 6) == V{"<\xF0\x9F\x98\x80>"});
  // The whole <word> is kept when it fits in maxn: "ab" -> <ab> is 4 characters.
  CHECK(characterNgrams("ab", 4, 4) == V{"<ab>"});
  CHECK(characterNgrams("</s>", 3, 6).empty());
  CHECK(characterNgrams("where", 3, 0).empty());
}

TEST_CASE("n-gram rows are nwords plus the hash modulo the bucket count", "[subwords]") {
  const std::vector<std::string> grams = {"<\xE6\x97\xA5", "<\xE6\x97\xA5\xE6\x9C\xAC",
                                          "\xE6\x97\xA5\xE6\x9C\xAC", "\xE6\x97\xA5\xE6\x9C\xAC>",
                                          "\xE6\x9C\xAC>"};
  std::vector<std::int64_t> want;
  for (const auto& g : grams) want.push_back(7 + refHash(g) % 1000);
  CHECK(ngramRows("\xE6\x97\xA5\xE6\x9C\xAC", 2, 3, 1000, 7) == want);
  CHECK(ngramRows("where", 3, 6, 0, 7).empty());
}

TEST_CASE("fastText .bin: word and unknown-word vectors are means of their rows", "[subwords]") {
  TempDir tmp;
  const std::string path = tmp.file("m.bin");
  BinSpec spec;
  posvec::test::writeText(path, makeBin(spec));
  REQUIRE(SubwordModel::isFastTextFile(path));
  const SubwordModel m = SubwordModel::load(path);
  CHECK(m.words() == spec.words);
  CHECK(m.dim() == 2);
  CHECK(m.minn() == 2);
  CHECK(m.maxn() == 3);
  CHECK(m.bucket() == 5);
  // Row r of the input matrix is (r + 1, -(r + 1) / 4); a vector is the mean.
  auto expected = [&](std::vector<std::int64_t> rows) {
    double s = 0;
    for (auto r : rows) s += static_cast<double>(r + 1);
    return std::pair<double, double>{s / rows.size(), -s / rows.size() / 4};
  };
  auto gramRows = [&](const std::vector<std::string>& grams) {
    std::vector<std::int64_t> rows;
    for (const auto& g : grams) rows.push_back(3 + refHash(g) % 5);
    return rows;
  };
  // In the vocabulary: "ab" is row 1, its n-grams <a <ab ab ab> b>.
  auto rowsAb = gramRows({"<a", "<ab", "ab", "ab>", "b>"});
  rowsAb.insert(rowsAb.begin(), 1);
  CHECK(m.rows("ab") == rowsAb);
  const auto [x, y] = expected(rowsAb);
  CHECK(m.vector("ab")[0] == Approx(x).epsilon(1e-6));
  CHECK(m.vector("ab")[1] == Approx(y).epsilon(1e-6));
  // Unknown: "zzé" has n-grams only.
  const auto rowsZ =
      gramRows({"<z", "<zz", "zz", "zz\xC3\xA9", "z\xC3\xA9", "z\xC3\xA9>", "\xC3\xA9>"});
  CHECK(m.rows("zz\xC3\xA9") == rowsZ);
  const auto [xz, yz] = expected(rowsZ);
  CHECK(m.vector("zz\xC3\xA9")[0] == Approx(xz).epsilon(1e-6));
  CHECK(m.vector("zz\xC3\xA9")[1] == Approx(yz).epsilon(1e-6));
  // "</s>" is its own row only.
  CHECK(m.rows("</s>") == std::vector<std::int64_t>{0});
  // The composed vocabulary holds the same vectors.
  const Embeddings e = m.wordVectors();
  CHECK(e.vectors()(1, 0) == Approx(x).epsilon(1e-6));

  // open() reads the same rows from the file; a file that shrinks gives an IoError.
  {
    const SubwordModel lazy = SubwordModel::open(path);
    CHECK(lazy.input().size() == 0);
    CHECK(lazy.dim() == 2);
    CHECK(lazy.vector("ab") == m.vector("ab"));
    CHECK(lazy.vector("zz\xC3\xA9") == m.vector("zz\xC3\xA9"));
    fs::resize_file(path, 120);
    CHECK_THROWS_AS(lazy.vector("ab"), IoError);
  }

  // Without n-grams an unknown word is the zero vector.
  spec.maxn = 0;
  spec.minn = 0;
  posvec::test::writeText(path, makeBin(spec));
  const SubwordModel plain = SubwordModel::load(path);
  CHECK(plain.vector("unknown").isZero());
  CHECK(plain.vector("ab")[0] == 2.0f);
}

TEST_CASE("fastText .bin: every header field and every truncation gives one clear line",
          "[subwords]") {
  TempDir tmp;
  const std::string path = tmp.file("m.bin");
  const std::string good = makeBin(BinSpec{});
  auto errorOf = [&](const std::string& bytes) {
    posvec::test::writeText(path, bytes);
    return loadError(path);
  };
  using Catch::Matchers::Contains;
  auto with = [&](std::size_t at, auto v) {
    std::string b = good;
    patch(b, at, v);
    return errorOf(b);
  };
  CHECK_THAT(with(0, std::int32_t{1234}), Contains("bad magic"));
  CHECK_THAT(with(4, std::int32_t{10}), Contains("version 10 is not supported"));
  CHECK_THAT(with(8, std::int32_t{0}), Contains("dimension 0"));
  CHECK_THAT(with(8, std::int32_t{3}), Contains("input matrix is"));
  CHECK_THAT(with(32, std::int32_t{9}), Contains("unknown loss 9"));
  CHECK_THAT(with(36, std::int32_t{3}), Contains("supervised model"));
  CHECK_THAT(with(36, std::int32_t{7}), Contains("unknown model type 7"));
  CHECK_THAT(with(40, std::int32_t{-1}), Contains("bucket count -1"));
  CHECK_THAT(with(40, std::int32_t{6}), Contains("input matrix is"));
  CHECK_THAT(with(44, std::int32_t{4}), Contains("n-gram lengths 4..3"));
  CHECK_THAT(with(48, std::int32_t{-2}), Contains("n-gram lengths"));
  CHECK_THAT(with(64, std::int32_t{-1}), Contains("dictionary header says"));
  CHECK_THAT(with(64, std::int32_t{2000000000}), Contains("dictionary header says"));
  CHECK_THAT(with(68, std::int32_t{2}), Contains("dictionary header says"));
  CHECK_THAT(with(72, std::int32_t{1}), Contains("supervised model"));
  CHECK_THAT(with(76, std::int64_t{-5}), Contains("dictionary header says"));
  CHECK_THAT(with(84, std::int64_t{-7}), Contains("dictionary header says"));
  CHECK_THAT(with(84, std::int64_t{1} << 60), Contains("pruned-bucket table"));
  {
    // Both size fields of the dictionary lie together: checked before reserving.
    std::string b = good;
    patch(b, 64, std::int32_t{2000000000});
    patch(b, 68, std::int32_t{2000000000});
    CHECK_THAT(errorOf(b), Contains("dictionary says 2000000000 words"));
  }
  // Entries: "</s>\0" count type, "ab\0" count type, "é\0" count type.
  const std::size_t entries = 92;
  CHECK_THAT(with(entries + 5, std::int64_t{-3}), Contains("has count -3"));
  CHECK_THAT(with(entries + 13, std::int8_t{4}), Contains("type 4"));
  {
    BinSpec s;
    s.lastType = 1;
    CHECK_THAT(errorOf(makeBin(s)), Contains("supervised model"));
    s = BinSpec{};
    s.words = {"</s>", "ab", "ab"};
    CHECK_THAT(errorOf(makeBin(s)), Contains("appears twice"));
    s = BinSpec{};
    s.quantIn = 1;
    CHECK_THAT(errorOf(makeBin(s)), Contains("quantized model (.ftz)"));
    s = BinSpec{};
    s.quantOut = 1;
    CHECK_THAT(errorOf(makeBin(s)), Contains("quantized model (.ftz)"));
  }
  const std::size_t matrix = entries + (5 + 9) + (3 + 9) + (3 + 9);
  CHECK_THAT(with(matrix + 1, std::int64_t{9}), Contains("input matrix is 9 x 2"));
  CHECK_THAT(with(matrix + 9, std::int64_t{3}), Contains("input matrix is 8 x 3"));
  const std::size_t output = matrix + 17 + 8 * 2 * 4;
  CHECK_THAT(with(output + 1, std::int64_t{4}), Contains("output matrix is 4 x 2"));
  CHECK_THAT(with(output + 9, std::int64_t{1}), Contains("output matrix is 3 x 1"));
  {
    // A lying matrix size: bucket and rows agree on 2^31 - 1 buckets (8 GiB of
    // floats) but the file is small. Refused before anything is allocated.
    std::string b = good;
    patch(b, 40, std::int32_t{0x7FFFFFFF});
    patch(b, matrix + 1, std::int64_t{3} + 0x7FFFFFFF);
    CHECK_THAT(errorOf(b), Contains("bytes follow (truncated or corrupt)"));
  }
  CHECK_THAT(errorOf(good + "x"), Contains("bytes follow"));
  // Every truncation: one FormatError, never a crash.
  for (std::size_t len = 0; len < good.size(); ++len) {
    INFO("length " << len);
    const std::string err = errorOf(good.substr(0, len));
    CHECK(err.rfind("'" + path + "': ", 0) == 0);
    CHECK(err.find('\n') == std::string::npos);
  }
  CHECK(errorOf(good) == "(loaded)");
}

TEST_CASE("fastText interop: posvec reads a .bin trained by fastText's CLI",
          "[subwords][interop]") {
  if (posvec::test::runShell("command -v fasttext").status != 0)
    POSVEC_SKIP("fasttext is not on PATH (Debian package 'fasttext' 0.9.2 provides it)");
  TempDir tmp;
  // A small generated corpus: 40 words (some accented, some CJK) in random lines.
  const std::vector<std::string> stems = {"walk",
                                          "talk",
                                          "run",
                                          "jump",
                                          "caf\xC3\xA9",
                                          "na\xC3\xAFve",
                                          "\xE6\x97\xA5\xE6\x9C\xAC",
                                          "\xE6\x9D\xB1\xE4\xBA\xAC"};
  const std::vector<std::string> endings = {"", "s", "ed", "ing", "er"};
  std::vector<std::string> vocab;
  for (const auto& s : stems)
    for (const auto& e : endings) vocab.push_back(s + e);
  std::string corpus;
  std::uint64_t x = 12345;
  for (int line = 0; line < 400; ++line) {
    for (int w = 0; w < 12; ++w) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      corpus += vocab[(x >> 33) % vocab.size()] + (w == 11 ? "\n" : " ");
    }
  }
  posvec::test::writeText(tmp.file("corpus.txt"), corpus);
  const std::string model = tmp.file("m");
  const auto train = posvec::test::runShell(
      "fasttext skipgram -input " + posvec::test::quote(tmp.file("corpus.txt")) + " -output " +
      posvec::test::quote(model) +
      " -dim 10 -epoch 1 -minCount 1 -thread 1 -bucket 1000 -minn 2 -maxn 5 -verbose 0");
  REQUIRE(train.status == 0);
  // In-vocabulary words, unknown words (new inflections, accents, CJK, an emoji)
  // and a word too short for any n-gram but with the markers it has "<x>".
  std::vector<std::string> queries = {"walk",
                                      "running",
                                      "caf\xC3\xA9s",
                                      "walkers",
                                      "jumpy",
                                      "na\xC3\xAFvely",
                                      "\xE6\x97\xA5\xE6\x9C\xAC\xE4\xBA\xBA",
                                      "\xF0\x9F\x98\x80",
                                      "x",
                                      "</s>",
                                      "zzzz"};
  std::string words;
  for (const auto& q : queries) words += q + "\n";
  posvec::test::writeText(tmp.file("words.txt"), words);
  const auto printed = posvec::test::runShell(
      "fasttext print-word-vectors " + posvec::test::quote(model + ".bin"), tmp.file("words.txt"));
  REQUIRE(printed.status == 0);
  const SubwordModel m = SubwordModel::load(model + ".bin");
  const SubwordModel lazy = SubwordModel::open(model + ".bin");
  REQUIRE(m.dim() == 10);
  CHECK(m.bucket() == 1000);
  CHECK(m.find("walk"));
  CHECK_FALSE(m.find("walkers"));
  std::istringstream lines(printed.out);
  std::string line;
  std::size_t seen = 0;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string word;
    fields >> word;
    REQUIRE(seen < queries.size());
    CHECK(word == queries[seen]);
    const Eigen::RowVectorXf v = m.vector(word);
    CHECK(lazy.vector(word) == v);
    std::size_t i = 0;
    double value;
    while (fields >> value) {
      INFO(word << " value " << i);
      REQUIRE(i < 10);
      // fastText prints 5 significant digits: equal to 1e-5 within that rounding.
      CHECK(std::abs(v[static_cast<Eigen::Index>(i)] - value) <= 1e-5 + 5e-5 * std::abs(value));
      ++i;
    }
    CHECK(i == 10);
    ++seen;
  }
  CHECK(seen == queries.size());
}

TEST_CASE("posvec vector prints fastText vectors, unknown words from n-grams", "[subwords][cli]") {
  TempDir tmp;
  const std::string bin = tmp.file("m.bin");
  posvec::test::writeText(bin, makeBin(BinSpec{}));
  // "ab" is row 1 and its n-grams; "zz" has n-grams <z <zz zz zz> z> only (rows 3 + h % 5).
  auto meanOf = [](std::vector<std::int64_t> rows) {
    double s = 0;
    for (auto r : rows) s += static_cast<double>(r + 1);
    return s / rows.size();
  };
  std::vector<std::int64_t> zz;
  for (const std::string g : {"<z", "<zz", "zz", "zz>", "z>"}) zz.push_back(3 + refHash(g) % 5);
  std::vector<std::int64_t> ab = {1};
  for (const std::string g : {"<a", "<ab", "ab", "ab>", "b>"}) ab.push_back(3 + refHash(g) % 5);
  auto line = [](const std::string& w, double x) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s %.6g %.6g\n", w.c_str(), x, -x / 4);
    return std::string(buf);
  };
  const std::string want = line("ab", meanOf(ab)) + line("zz", meanOf(zz));
  const auto r = posvec::test::runCli("vector " + posvec::test::quote(bin) + " ab zz");
  CHECK(r.status == 0);
  CHECK(r.out == want);
  // Words from stdin, several on a line.
  posvec::test::writeText(tmp.file("words"), "ab  zz\n");
  const auto s = posvec::test::runCli("vector " + posvec::test::quote(bin), tmp.file("words"));
  CHECK(s.status == 0);
  CHECK(s.out == want);
  // similarity with an unknown word: noted on stderr.
  const auto sim = posvec::test::runCli("similarity " + posvec::test::quote(bin) + " ab zz");
  CHECK(sim.status == 0);
  CHECK(sim.err == "note: not in the vocabulary, built from character n-grams: zz\n");
  // Both vectors lie on the line (x, -x/4): cosine 1.
  CHECK(sim.out == "cosine(ab, zz) = 1.000000\n");

  // similar and analogy with an unknown word: searched among the composed vocabulary.
  const auto near = posvec::test::runCli("similar " + posvec::test::quote(bin) + " zz -k 3");
  CHECK(near.status == 0);
  CHECK(near.err == "note: not in the vocabulary, built from character n-grams: zz\n");
  CHECK(near.out.find("\nab ") != std::string::npos);
  const auto an = posvec::test::runCli("analogy " + posvec::test::quote(bin) + " ab zz ab -k 1");
  CHECK(an.status == 0);
  CHECK(an.err == "note: not in the vocabulary, built from character n-grams: zz\n");
  // The inputs in the vocabulary ("ab") are excluded: the answer is another word.
  CHECK(an.out.find("\nab ") == std::string::npos);

  // A word2vec text file: its words only; an unknown word is one error line.
  const std::string txt = tmp.file("v.txt");
  posvec::test::writeText(txt, "2 2\nab 1 2\ncd 0.5 -0.25\n");
  const auto ok = posvec::test::runCli("vector " + posvec::test::quote(txt) + " cd");
  CHECK(ok.status == 0);
  CHECK(ok.out == "cd 0.5 -0.25\n");
  const auto bad = posvec::test::runCli("vector " + posvec::test::quote(txt) + " zz");
  CHECK(bad.status == 5);
  CHECK(bad.out.empty());
  CHECK(bad.err.rfind("posvec: error: unknown word 'zz'", 0) == 0);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  // A supervised model is refused with one line.
  BinSpec sup;
  sup.model = 3;
  posvec::test::writeText(bin, makeBin(sup));
  const auto refused = posvec::test::runCli("vector " + posvec::test::quote(bin) + " ab");
  CHECK(refused.status == 4);
  CHECK(refused.err.find("supervised model") != std::string::npos);
  CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
}

TEST_CASE("fastText .bin: a cut file names the field it ends in", "[subwords]") {
  TempDir tmp;
  const std::string path = tmp.file("m.bin");
  const std::string good = makeBin(BinSpec{});
  auto cutAt = [&](std::size_t len) {
    posvec::test::writeText(path, good.substr(0, len));
    return loadError(path);
  };
  using Catch::Matchers::Contains;
  // Field boundaries of the spec's file: magic 0-4, version 4-8, args 8-64,
  // dictionary header 64-92, entries 92-130, input matrix header 130-147, floats.
  CHECK_THAT(cutAt(0), Contains("bad magic number"));
  CHECK_THAT(cutAt(3), Contains("bad magic number"));
  for (std::size_t len : {4, 7}) CHECK_THAT(cutAt(len), Contains("ends inside the version"));
  for (std::size_t len : {8, 40, 56, 63})
    CHECK_THAT(cutAt(len), Contains("ends inside the training settings"));
  for (std::size_t len : {64, 72, 84, 91})
    CHECK_THAT(cutAt(len), Contains("ends inside the dictionary header"));
  // The entries: 11 bytes each at least, checked against what is left first.
  for (std::size_t len : {92, 100, 120}) CHECK_THAT(cutAt(len), Contains("dictionary"));
  CHECK_THAT(cutAt(129), Contains("dictionary entry 3 is cut short"));
  for (std::size_t len : {130, 131, 138, 146})
    CHECK_THAT(cutAt(len), Contains("ends inside the input matrix header"));
  // In the values: the sizes the header promises against the bytes there are.
  for (std::size_t len :
       {std::size_t{147}, std::size_t{180}, good.size() - 17 - 24, good.size() - 1})
    CHECK_THAT(cutAt(len), Contains("bytes follow (truncated or corrupt)"));
}

TEST_CASE("fastText .bin: impossible values in each header field", "[subwords]") {
  TempDir tmp;
  const std::string path = tmp.file("m.bin");
  const std::string good = makeBin(BinSpec{});
  auto with = [&](std::size_t at, auto v) {
    std::string b = good;
    patch(b, at, v);
    posvec::test::writeText(path, b);
    return loadError(path);
  };
  using Catch::Matchers::Contains;
  CHECK_THAT(with(4, std::int32_t{-12}), Contains("version -12 is not supported"));
  CHECK_THAT(with(4, std::int32_t{13}), Contains("version 13 is not supported"));
  CHECK_THAT(with(8, std::int32_t{-3}), Contains("dimension -3 is not positive"));
  // A huge dimension cannot match the matrix header (2 columns).
  CHECK_THAT(with(8, std::int32_t{0x7FFFFFFF}), Contains("of dimension 2147483647"));
  for (std::int32_t loss : {0, -1, 5})
    CHECK_THAT(with(32, loss), Contains("unknown loss " + std::to_string(loss)));
  for (std::int32_t model : {0, -2, 4})
    CHECK_THAT(with(36, model), Contains("unknown model type " + std::to_string(model)));
  CHECK_THAT(with(40, std::int32_t{-2000000000}), Contains("bucket count -2000000000"));
  CHECK_THAT(with(48, std::int32_t{5000}), Contains("n-gram lengths 2..5000"));
  CHECK_THAT(with(44, std::int32_t{-1}), Contains("n-gram lengths -1..3"));
  // The sizes of the matrices, lying one way or the other.
  const std::size_t matrix = 130;
  CHECK_THAT(with(matrix + 1, std::int64_t{-8}), Contains("input matrix is -8 x 2"));
  CHECK_THAT(with(matrix + 9, std::int64_t{-1}), Contains("input matrix is 8 x -1"));
  CHECK_THAT(with(matrix + 1, std::int64_t{1} << 62), Contains("input matrix is"));
  const std::size_t output = matrix + 17 + 8 * 2 * 4;
  CHECK_THAT(with(output + 1, std::int64_t{-3}), Contains("output matrix is -3 x 2"));
  CHECK_THAT(with(output + 9, std::int64_t{1} << 40), Contains("output matrix is 3 x"));
  // The quantization flags: any non-zero byte.
  CHECK_THAT(with(matrix, std::uint8_t{0xFF}), Contains("quantized model (.ftz)"));
  CHECK_THAT(with(output, std::uint8_t{2}), Contains("quantized model (.ftz)"));
  CHECK(with(0, std::int32_t{793712314}) == "(loaded)");
}

TEST_CASE("posvec vector: a corrupt or unsupported .bin is one error line", "[subwords][cli]") {
  TempDir tmp;
  const std::string path = tmp.file("m.bin");
  const std::string good = makeBin(BinSpec{});
  std::vector<std::pair<std::string, std::string>> cases;  // bytes, what the line says
  auto patched = [&](std::size_t at, auto v) {
    std::string b = good;
    patch(b, at, v);
    return b;
  };
  for (std::size_t len : {2, 6, 30, 80, 110, 140, 200}) cases.emplace_back(good.substr(0, len), "");
  cases.emplace_back(patched(0, std::int32_t{1}), "");
  cases.emplace_back(patched(4, std::int32_t{10}), "version 10");
  cases.emplace_back(patched(32, std::int32_t{9}), "unknown loss 9");
  cases.emplace_back(patched(36, std::int32_t{7}), "unknown model type 7");
  cases.emplace_back(patched(36, std::int32_t{3}), "supervised model");
  cases.emplace_back(patched(130, std::uint8_t{1}), "quantized model (.ftz)");
  {
    std::string b = patched(40, std::int32_t{0x7FFFFFFF});
    patch(b, 131, std::int64_t{3} + 0x7FFFFFFF);
    cases.emplace_back(b, "bytes follow (truncated or corrupt)");
  }
  for (const auto& [bytes, says] : cases) {
    INFO("bytes " << bytes.size() << ", expecting '" << says << "'");
    posvec::test::writeText(path, bytes);
    const auto r = posvec::test::runCli("vector " + posvec::test::quote(path) + " ab");
    CHECK(r.status != 0);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("posvec: error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(says) != std::string::npos);
  }
}

TEST_CASE("fastText .bin: version 11, the layout before 0.9 and the empty word are read",
          "[subwords]") {
  posvec::test::TempDir tmp;
  const auto write = [&](const std::string& name, const BinSpec& spec) {
    posvec::test::writeText(tmp.file(name), makeBin(spec));
    return tmp.file(name);
  };
  BinSpec v12;
  BinSpec v11 = v12;
  v11.version = 11;
  BinSpec pre = v12;
  pre.version = 0;
  const SubwordModel a = SubwordModel::load(write("v12.bin", v12));
  // The three layouts hold the same model: the same words and, word by word and for a
  // word built from n-grams alone, the same vectors.
  for (const auto& other :
       {SubwordModel::load(write("v11.bin", v11)), SubwordModel::load(write("pre.bin", pre))}) {
    CHECK(other.words() == a.words());
    for (const char* w : {"ab", "\xC3\xA9", "abab", "zz"}) {
      INFO(w);
      const Eigen::RowVectorXf x = a.vector(w), y = other.vector(w);
      REQUIRE(x.size() == y.size());
      CHECK((x - y).cwiseAbs().maxCoeff() == 0.0f);
    }
  }
  CHECK(SubwordModel::isFastTextFile(tmp.file("pre.bin")));
  // "ab" is word 1: its row is (2, -0.5); with n-grams of 2 to 3 its vector is the mean of
  // its row and its n-gram rows, so it differs from the row unless no n-gram exists.
  CHECK(a.vector("ab").size() == 2);
  // fastText writes an empty word for some -pretrainedVectors files: read, not refused.
  BinSpec empty = v12;
  empty.words = {"</s>", "", "ab"};
  const SubwordModel e = SubwordModel::load(write("empty.bin", empty));
  CHECK(e.words().size() == 3);
  CHECK(e.words()[1].empty());
  // A damaged file of the old layout says which layout it was read as.
  posvec::test::writeText(tmp.file("cut.bin"), makeBin(pre).substr(0, 100));
  CHECK_THROWS_WITH(SubwordModel::load(tmp.file("cut.bin")),
                    Catch::Contains("no magic number, read as fastText's layout from before 0.9"));
  // The CLI reads the old layout like the new.
  const auto r = posvec::test::runCli("vector " + posvec::test::quote(tmp.file("pre.bin")) + " ab");
  const auto s = posvec::test::runCli("vector " + posvec::test::quote(tmp.file("v12.bin")) + " ab");
  CHECK(r.status == 0);
  CHECK(r.out == s.out);
}
