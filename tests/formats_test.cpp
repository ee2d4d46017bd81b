#include "posvec/formats.hpp"

#include <catch2/catch.hpp>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

#include "posvec/error.hpp"
#include "exit_code.hpp"
#include "test_util.hpp"

using namespace posvec;
using posvec::test::quote;
using posvec::test::readText;
using posvec::test::runCli;
using posvec::test::TempDir;
using posvec::test::writeText;

namespace {

// Words with 2-, 3- and 4-byte UTF-8 characters, and one longer than word2vec.c's 100 bytes.
std::vector<std::string> sampleWords() {
  std::string longWord;
  for (int i = 0; i < 60; ++i) longWord += "\xC3\xA9";  // é x 60 = 120 bytes
  return {"the",
          "caf\xC3\xA9",
          "\xE6\x97\xA5\xE6\x9C\xAC",
          "\xF0\x9F\x98\x80",
          "na\xC3\xAFve",
          longWord,
          "x"};
}

// Random values plus awkward ones: -0, denormal, the float extremes, values
// whose shortest decimal form needs 9 digits.
MatrixF sampleMatrix(std::size_t rows, std::size_t cols, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  MatrixF m(rows, cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) m(i, j) = dist(rng);
  const float special[] = {-0.0f,
                           std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::max(),
                           std::numeric_limits<float>::lowest(),
                           std::numeric_limits<float>::min(),
                           0.1f,
                           16777217.0f,
                           1.00000012f};
  for (std::size_t k = 0; k < std::size(special) && k < rows * cols; ++k) m.data()[k] = special[k];
  return m;
}

Embeddings sample() {
  auto w = sampleWords();
  return Embeddings(w, sampleMatrix(w.size(), 5), {70, 60, 50, 40, 30, 20, 10});
}

// Bitwise equality (so -0 and 0 differ, as they should after a round trip).
bool sameBits(const MatrixF& a, const MatrixF& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0;
}

std::string leBytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    for (int k = 0; k < 4; ++k) s += static_cast<char>((u >> (8 * k)) & 0xFF);
  }
  return s;
}

bool havePython(const std::string& module) {
  return std::system(("/usr/bin/python3 -c 'import " + module + "' >/dev/null 2>&1").c_str()) == 0;
}

// Runs a Python script; returns its stdout (and fails the test on a non-zero exit).
std::string runPython(const TempDir& dir, const std::string& script) {
  const std::string py = dir.file("script.py"), out = dir.file("py.out");
  writeText(py, script);
  const int rc =
      std::system(("/usr/bin/python3 " + quote(py) + " >" + quote(out) + " 2>&1").c_str());
  const std::string text = readText(out);
  INFO(text);
  REQUIRE(rc == 0);
  return text;
}

template <typename F>
void requireError(F&& f, const std::string& mustContain) {
  try {
    f();
    FAIL("no exception; expected one mentioning: " << mustContain);
  } catch (const FormatError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(mustContain) != std::string::npos);
  } catch (const IoError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(mustContain) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("formats: word2vec binary, text and npy round-trip exactly with UTF-8 words",
          "[formats]") {
  TempDir dir;
  const Embeddings e = sample();
  for (const char* name : {"v.bin", "v.txt", "v.vec", "v.npy"}) {
    const std::string path = dir.file(name);
    saveVectors(e, path);
    const Embeddings back = loadVectors(path);
    INFO(name);
    CHECK(back.words() == e.words());
    CHECK(sameBits(back.vectors(), e.vectors()));
    if (std::string(name) == "v.npy") CHECK(back.counts() == e.counts());
  }
  CHECK(std::filesystem::exists(dir.file("v.vocab")));
}

TEST_CASE("formats: the format is detected from the content, not the name", "[formats]") {
  TempDir dir;
  const Embeddings e = sample();
  saveVectors(e, dir.file("a.txt"), VectorFormat::Word2VecBinary);
  saveVectors(e, dir.file("b.bin"), VectorFormat::Word2VecText);
  CHECK(detectFormat(dir.file("a.txt")) == VectorFormat::Word2VecBinary);
  CHECK(detectFormat(dir.file("b.bin")) == VectorFormat::Word2VecText);
  CHECK(sameBits(loadVectors(dir.file("a.txt")).vectors(), e.vectors()));
  CHECK(sameBits(loadVectors(dir.file("b.bin")).vectors(), e.vectors()));
  CHECK_THROWS_AS(saveVectors(e, dir.file("c.weird")), ConfigError);
  CHECK_THROWS_AS(saveVectors(e, dir.file("c.posvec")), ConfigError);
  CHECK(parseVectorFormat("txt") == VectorFormat::Word2VecText);
  CHECK(parseVectorFormat("bin") == VectorFormat::Word2VecBinary);
  CHECK_THROWS_AS(parseVectorFormat("csv"), ConfigError);
  CHECK(npyVocabularyPath("/a/b.npy") == "/a/b.vocab");
  CHECK(npyVocabularyPath("/a/b.dat") == "/a/b.dat.vocab");
}

TEST_CASE("formats: binary bytes are exactly word2vec.c's layout", "[formats]") {
  TempDir dir;
  MatrixF m(2, 2);
  m << 1.5f, -2.0f, 0.25f, 3.0f;
  saveVectors(Embeddings({"ab", "\xC3\xA9"}, m), dir.file("g.bin"));
  const std::string expected =
      "2 2\nab " + leBytes({1.5f, -2.0f}) + "\n\xC3\xA9 " + leBytes({0.25f, 3.0f}) + "\n";
  CHECK(readText(dir.file("g.bin")) == expected);
}

TEST_CASE("formats: text uses the shortest float32 round-trip digits", "[formats]") {
  TempDir dir;
  MatrixF m(2, 3);
  m << 0.1f, -1e-5f, 3.0f, 16777216.0f, 1.00000012f, -0.0f;
  saveVectors(Embeddings({"a", "b"}, m), dir.file("g.txt"));
  CHECK(readText(dir.file("g.txt")) == "2 3\na 0.1 -1e-05 3\nb 16777216 1.0000001 -0\n");
}

TEST_CASE("formats: readers accept what word2vec.c and gensim write", "[formats]") {
  TempDir dir;
  // gensim's binary writer puts no newline after a vector; word2vec.c's text
  // writer ends each value with a space ("%lf ").
  writeText(dir.file("g.bin"),
            "2 2\nab " + leBytes({1.5f, -2.0f}) + "cd " + leBytes({0.25f, 3.0f}));
  const Embeddings b = loadVectors(dir.file("g.bin"));
  REQUIRE(b.size() == 2);
  CHECK(b.words()[1] == "cd");
  CHECK(b.vectors()(1, 1) == 3.0f);
  writeText(dir.file("c.txt"), "2 3\r\nab 0.100000 -2.000000 +1e3 \r\ncd 1.0 2 3   \n\n");
  const Embeddings t = loadVectors(dir.file("c.txt"));
  REQUIRE(t.size() == 2);
  CHECK(t.vectors()(0, 0) == 0.1f);
  CHECK(t.vectors()(0, 2) == 1000.0f);
  CHECK(t.words()[1] == "cd");
  // gensim keeps the first vector of a repeated word.
  writeText(dir.file("d.txt"), "3 1\na 1\nb 2\na 3\n");
  const Embeddings d = loadVectors(dir.file("d.txt"));
  REQUIRE(d.size() == 2);
  CHECK(d.vectors()(0, 0) == 1.0f);
  // An empty vocabulary is refused: nothing backs its dimension (see the test below).
  writeText(dir.file("e.txt"), "0 4\n");
  CHECK_THROWS_AS(loadVectors(dir.file("e.txt")), FormatError);
}

TEST_CASE("formats: model files keep the full training state", "[formats]") {
  TempDir dir;
  ModelState m;
  m.words = sampleWords();
  m.counts = {9, 8, 7, 6, 5, 4, 3};
  m.input = sampleMatrix(7, 4, 1);
  m.output = sampleMatrix(6, 4, 2);  // hierarchical softmax: V - 1 rows
  m.config = "dim=4\nwindow=5\n";
  m.epochsDone = 3;
  m.epochLosses = {2.5, 2.25, 0.1};
  saveModel(m, dir.file("m.posvec"));
  const ModelState r = loadModel(dir.file("m.posvec"));
  CHECK(r.words == m.words);
  CHECK(r.counts == m.counts);
  CHECK(sameBits(r.input, m.input));
  CHECK(sameBits(r.output, m.output));
  CHECK(r.config == m.config);
  CHECK(r.epochsDone == 3);
  CHECK(r.epochLosses == m.epochLosses);
  CHECK(detectFormat(dir.file("m.posvec")) == VectorFormat::Model);
  const Embeddings e = loadVectors(dir.file("m.posvec"));
  CHECK(e.words() == m.words);
  CHECK(sameBits(e.vectors(), m.input));
  CHECK(e.counts() == m.counts);
  // The file layout: magic then version 1, little-endian.
  const std::string bytes = readText(dir.file("m.posvec"));
  CHECK(bytes.substr(0, 12) == std::string("POSVECM1\x01\0\0\0", 12));
  // A vector file is not a model.
  saveVectors(e, dir.file("v.bin"));
  requireError([&] { loadModel(dir.file("v.bin")); }, "not a posvec model");
  // Inconsistent states are refused before writing.
  ModelState bad = m;
  bad.words.pop_back();
  CHECK_THROWS_AS(saveModel(bad, dir.file("bad.posvec")), InputError);
  CHECK_FALSE(std::filesystem::exists(dir.file("bad.posvec")));
}

TEST_CASE("formats: corrupt model headers are rejected without allocating", "[formats]") {
  TempDir dir;
  ModelState m;
  m.words = {"a", "b"};
  m.input = sampleMatrix(2, 3);
  m.output = sampleMatrix(2, 3, 3);
  saveModel(m, dir.file("m.posvec"));
  const std::string good = readText(dir.file("m.posvec"));
  auto patched = [&](std::size_t offset, std::uint64_t value, int bytes) {
    std::string s = good;
    for (int k = 0; k < bytes; ++k) s[offset + k] = static_cast<char>((value >> (8 * k)) & 0xFF);
    writeText(dir.file("p.posvec"), s);
    return dir.file("p.posvec");
  };
  requireError([&] { loadModel(patched(0, 'X', 1)); }, "bad magic");
  requireError([&] { loadModel(patched(8, 7, 4)); }, "version 7");
  requireError([&] { loadModel(patched(16, std::uint64_t(1) << 40, 8)); }, "truncated or corrupt");
  requireError([&] { loadModel(patched(24, std::uint64_t(1) << 62, 8)); }, "truncated or corrupt");
  requireError([&] { loadModel(patched(40, ~std::uint64_t(0), 8)); }, "truncated or corrupt");
  requireError([&] { loadModel(patched(32, 3, 8)); }, "output rows");
  requireError([&] { loadVectors(patched(16, std::uint64_t(1) << 40, 8)); },
               "truncated or corrupt");
}

TEST_CASE("formats: truncated files of every format fail cleanly", "[formats]") {
  TempDir dir;
  auto w = sampleWords();
  const Embeddings e(w, sampleMatrix(w.size(), 6, 11));
  ModelState m;
  m.words = w;
  m.input = e.vectors();
  m.output = sampleMatrix(w.size(), 6, 12);
  saveModel(m, dir.file("full.posvec"));
  saveVectors(e, dir.file("full.bin"));
  saveVectors(e, dir.file("full.txt"));
  saveVectors(e, dir.file("full.npy"));
  for (const char* name : {"full.posvec", "full.bin", "full.txt", "full.npy"}) {
    const std::string bytes = readText(dir.file(name));
    const std::string ext = std::filesystem::path(name).extension().string();
    // Text files can lose digits of their last value and stay valid (gensim reads them
    // too); a binary file may lose its final newline.
    std::size_t mustFailBelow = bytes.size();
    if (ext == ".txt") mustFailBelow = bytes.rfind(' ') + 1;
    if (ext == ".bin") mustFailBelow = bytes.size() - 1;
    for (std::size_t cut = 0; cut < bytes.size(); cut += 7) {
      const std::string path = dir.file("cut" + ext);
      writeText(path, bytes.substr(0, cut));
      if (ext == ".npy")
        std::filesystem::copy_file(dir.file("full.vocab"), dir.file("cut.vocab"),
                                   std::filesystem::copy_options::overwrite_existing);
      INFO(name << " cut at " << cut << " of " << bytes.size());
      bool threw = false;
      try {
        loadVectors(path);
      } catch (const FormatError&) {
        threw = true;
      } catch (const IoError&) {
        threw = true;
      }
      if (cut < mustFailBelow) CHECK(threw);
    }
  }
}

TEST_CASE("formats: corrupt vector files name the file and the place", "[formats]") {
  TempDir dir;
  const std::string p = dir.file("x.txt");
  requireError([&] { loadVectors(dir.file("missing.bin")); }, "no such file");
  requireError([&] { loadVectors(dir.path().string()); }, "directory");
  writeText(p, "10 2\na 1 2\nb 3 4\nc 5 6\n");
  requireError([&] { loadVectors(p); }, "header says 10 words but the file ends after 3");
  writeText(p, "3 2\na 1 2\nb nan 4\nc 5 6\n");
  requireError([&] { loadVectors(p); }, "line 3: value 1 of 'b' is NaN");
  writeText(p, "3 2\na 1 2\nb 3 4\nc 5 1e39\n");
  requireError([&] { loadVectors(p); }, "line 4: value 2 of 'c' is infinite");
  writeText(p, "3 2\na 1 2\nb 3\nc 5 6\n");
  requireError([&] { loadVectors(p); }, "line 3: expected 2 values after 'b', found 1");
  writeText(p, "2 2\na 1 2\nb 3 x4\n");
  requireError([&] { loadVectors(p); }, "line 3: value 2 of 'b' ('x4') is not a number");
  writeText(p, "hello world\n");
  requireError([&] { loadVectors(p); }, "not a word2vec file");
  writeText(p, "");
  requireError([&] { loadVectors(p); }, "not a word2vec file");
  writeText(p, "1000000000000 300\na 1\n");
  requireError([&] { loadVectors(p); }, "dimension 300 but the file has only 4 bytes after it");
  const std::string b = dir.file("x.bin");
  writeText(b, "3 2\nab " + leBytes({1, 2}) + "\ncd " + leBytes({3}));
  requireError([&] { loadVectors(b); }, "word 2 (byte offset");
  requireError([&] { loadVectors(b); }, "middle of the vector of 'cd'");
  writeText(b, "2 2\nab " + leBytes({1, 2}) + "\n\xC3 " + leBytes({3, 4}) + "\n");
  requireError([&] { loadVectors(b); }, "not valid UTF-8");
  writeText(b, "2 1\nab " + leBytes({1}) + "\ncd " + leBytes({std::nanf("")}) + "\n");
  requireError([&] { loadVectors(b); }, "word 2 (byte offset 12): value 1 of 'cd' is NaN");
  writeText(b, "4000000000 300\nab " + leBytes({1, 2}) + "\n");
  requireError([&] { loadVectors(b); },
               "dimension 300 (1200 bytes a vector) but the file has only 12");
  writeText(b, "4000000000 2\nab " + leBytes({1, 2}) + "\n");
  requireError([&] { loadVectors(b); }, "header says 4000000000 words but the file ends after 1");
  writeText(p, "2 100000000000\na 1\n");
  requireError([&] { loadVectors(p); }, "too few for one vector");
  writeText(b, "1 4000000000\nab " + leBytes({1, 2}) + "\n");
  requireError([&] { loadVectors(b); },
               "header says dimension 4000000000 (16000000000 bytes a vector)");
  writeText(b, "1 4611686018427387904\nab " + leBytes({1, 2}) + "\n");
  requireError([&] { loadVectors(b); }, "too many bytes a vector");
  writeText(b, "40000000000000000000 300\n");
  requireError([&] { loadVectors(b); }, "not a word2vec file");
  // .npy: missing vocabulary, wrong dtype.
  saveVectors(sample(), dir.file("n.npy"));
  std::filesystem::remove(dir.file("n.vocab"));
  requireError([&] { loadVectors(dir.file("n.npy")); }, "vocabulary file");
}

TEST_CASE("formats: refuses to save what cannot be read back", "[formats]") {
  TempDir dir;
  MatrixF m(1, 2);
  m << 1.0f, std::nanf("");
  CHECK_THROWS_AS(saveVectors(Embeddings({"a"}, m), dir.file("n.bin")), InputError);
  CHECK_FALSE(std::filesystem::exists(dir.file("n.bin")));
  m << 1.0f, 2.0f;
  CHECK_THROWS_AS(saveVectors(Embeddings({"\xFF"}, m), dir.file("u.txt")), InputError);
}

TEST_CASE("formats: gensim reads posvec files and posvec reads gensim files", "[formats][gensim]") {
  if (!havePython("gensim")) POSVEC_SKIP("gensim is not installed for /usr/bin/python3");
  TempDir dir;
  const Embeddings e = sample();
  saveVectors(e, dir.file("p.bin"));
  saveVectors(e, dir.file("p.txt"));
  // The expected values as raw little-endian bytes, written without the format code.
  writeText(dir.file("expected.f32"), std::string(reinterpret_cast<const char*>(e.vectors().data()),
                                                  e.vectors().size() * sizeof(float)));
  std::string words;
  for (const auto& w : e.words()) words += w + "\n";
  writeText(dir.file("words.txt"), words);
  const std::string out = runPython(dir, R"(
import numpy as np, sys
from gensim.models import KeyedVectors
d = )" + quote(dir.path().string()) + R"(
words = open(d + '/words.txt', encoding='utf-8').read().split('\n')[:-1]
expected = np.fromfile(d + '/expected.f32', dtype='<f4').reshape(len(words), -1)
for name, binary in (('p.bin', True), ('p.txt', False)):
    kv = KeyedVectors.load_word2vec_format(d + '/' + name, binary=binary)
    assert kv.index_to_key == words, (name, kv.index_to_key)
    assert np.array_equal(kv.vectors.view(np.uint32), expected.view(np.uint32)), name
# Now gensim writes (deterministic values), and posvec must read the same bits.
rng = np.random.default_rng(3)
vecs = rng.standard_normal((6, 9)).astype(np.float32)
kv = KeyedVectors(9)
kv.add_vectors(['w%d\u00e9' % i for i in range(6)], vecs)
kv.save_word2vec_format(d + '/g.bin', binary=True)
kv.save_word2vec_format(d + '/g.txt', binary=False)
vecs.astype('<f4').tofile(d + '/g.f32')
print('ok')
)");
  CHECK(out.find("ok") != std::string::npos);
  const std::string raw = readText(dir.file("g.f32"));
  for (const char* name : {"g.bin", "g.txt"}) {
    const Embeddings g = loadVectors(dir.file(name));
    INFO(name);
    REQUIRE(g.size() == 6);
    REQUIRE(g.dim() == 9);
    CHECK(g.words()[5] == "w5\xC3\xA9");
    CHECK(std::memcmp(g.vectors().data(), raw.data(), raw.size()) == 0);
  }
}

TEST_CASE("formats: numpy.load reads the .npy file and its vocabulary", "[formats][gensim]") {
  if (!havePython("numpy")) POSVEC_SKIP("numpy is not installed for /usr/bin/python3");
  TempDir dir;
  const Embeddings e = sample();
  saveVectors(e, dir.file("p.npy"));
  writeText(dir.file("expected.f32"), std::string(reinterpret_cast<const char*>(e.vectors().data()),
                                                  e.vectors().size() * sizeof(float)));
  const std::string out = runPython(dir, R"(
import numpy as np
d = )" + quote(dir.path().string()) + R"(
a = np.load(d + '/p.npy')
assert a.dtype == np.dtype('<f4') and a.shape == (7, 5) and a.flags['C_CONTIGUOUS'], (a.dtype, a.shape)
assert np.array_equal(a.view(np.uint32), np.fromfile(d + '/expected.f32', dtype='<f4').reshape(7, 5).view(np.uint32))
vocab = [l.split(' ') for l in open(d + '/p.vocab', encoding='utf-8').read().split('\n')[:-1]]
assert [int(c) for w, c in vocab] == [70, 60, 50, 40, 30, 20, 10], vocab
assert vocab[1][0] == 'caf\u00e9'
# numpy's own files (float64, Fortran order) load too.
np.save(d + '/f.npy', np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)))
open(d + '/f.vocab', 'w').write('a 1\nb 2\n')
print('ok')
)");
  CHECK(out.find("ok") != std::string::npos);
  const Embeddings f = loadVectors(dir.file("f.npy"));
  REQUIRE(f.size() == 2);
  REQUIRE(f.dim() == 3);
  CHECK(f.vectors()(1, 0) == 3.0f);
  CHECK(f.vectors()(0, 2) == 2.0f);
  CHECK(f.counts() == std::vector<std::int64_t>{1, 2});
}

namespace {

// An .npy file with a hand-written shape and `dataBytes` zero bytes of float32 data.
std::string npyWithShape(const TempDir& dir, const std::string& name, const std::string& shape,
                         std::size_t dataBytes) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string s = std::string("\x93NUMPY\x01\x00", 8);
  s += static_cast<char>(dict.size() & 0xFF);
  s += static_cast<char>(dict.size() >> 8);
  s += dict + std::string(dataBytes, '\0');
  const std::string path = dir.file(name);
  writeText(path, s);
  return path;
}

}  // namespace

TEST_CASE("formats: empty vocabularies and dimensions no data backs are refused", "[formats]") {
  TempDir dir;
  // 13 bytes that used to load as 0 words of dimension 10^9.
  writeText(dir.file("empty.txt"), "0 1000000000\n");
  requireError([&] { loadVectors(dir.file("empty.txt")); }, "header says 0 words");
  writeText(dir.file("empty0.txt"), "0 0\n");
  requireError([&] { loadVectors(dir.file("empty0.txt")); }, "header says 0 words");
  // A model of 0 words whose header claims dimension 2^40.
  ModelState m;
  m.input = MatrixF(0, 0);
  saveModel(m, dir.file("m.posvec"));
  std::string model = readText(dir.file("m.posvec"));
  for (int k = 0; k < 8; ++k)
    model[24 + k] = static_cast<char>(((std::uint64_t(1) << 40) >> (8 * k)) & 0xFF);
  writeText(dir.file("m.posvec"), model);
  requireError([&] { loadVectors(dir.file("m.posvec")); },
               "has 0 words of dimension 1099511627776");
  requireError([&] { loadModel(dir.file("m.posvec")); }, "has 0 words");
}

TEST_CASE("formats: npy counts are bounded by what the files hold before any reservation",
          "[formats]") {
  TempDir dir;
  writeText(dir.file("a.vocab"), "");
  writeText(dir.file("b.vocab"), "");
  writeText(dir.file("c.vocab"), "");
  writeText(dir.file("d.vocab"), "a 1\n");
  // (10^12, 0) with an empty vocabulary used to reserve 32 TB of strings.
  requireError([&] { loadVectors(npyWithShape(dir, "a.npy", "(1000000000000, 0)", 0)); },
               "holds no vectors");
  requireError([&] { loadVectors(npyWithShape(dir, "b.npy", "(9223372036854775808, 0)", 0)); },
               "holds no vectors");
  requireError([&] { loadVectors(npyWithShape(dir, "c.npy", "(0, 1000000000)", 0)); },
               "holds no vectors");
  // 5 rows of data but a 4-byte vocabulary: refused before reading the words.
  requireError([&] { loadVectors(npyWithShape(dir, "d.npy", "(5, 2)", 5 * 2 * 4)); },
               "has 4 bytes, too few for the 5 words");
}

TEST_CASE("formats: a binary file whose float bytes are printable is read as binary", "[formats]") {
  TempDir dir;
  // 16 bytes that also read as the text record "1.25 2.5 3.75 4".
  const std::string bytes = "1.25 2.5 3.75 4 ";
  REQUIRE(bytes.size() == 16);
  float expected[4];
  std::memcpy(expected, bytes.data(), 16);  // little-endian host: the file's floats
  for (const std::string& tail : {std::string(), std::string("\n")}) {  // gensim, word2vec.c
    writeText(dir.file("p.bin"), "1 4\nx " + bytes + tail);
    const Embeddings e = loadVectors(dir.file("p.bin"));
    REQUIRE(e.size() == 1);
    REQUIRE(e.dim() == 4);
    for (int j = 0; j < 4; ++j) CHECK(e.vectors()(0, j) == expected[j]);
  }
  // Two gensim records of printable bytes that are not numbers at all.
  const std::string x = "abcdefghijklmnop", y = "qrstuvwxyzABCDEF";
  writeText(dir.file("q.bin"), "2 4\nx " + x + "y " + y);
  const Embeddings q = loadVectors(dir.file("q.bin"));
  REQUIRE(q.size() == 2);
  float qy[4];
  std::memcpy(qy, y.data(), 16);
  CHECK(q.words()[1] == "y");
  for (int j = 0; j < 4; ++j) CHECK(q.vectors()(1, j) == qy[j]);
  // Real text files stay text, also when one line has the binary record's length.
  writeText(dir.file("t.txt"), "2 4\nx 1.25 2.5 3.75 4\ny 0.5 0.25 1 2\n");
  const Embeddings t = loadVectors(dir.file("t.txt"));
  CHECK(t.vectors()(0, 1) == 2.5f);
  CHECK(t.vectors()(1, 0) == 0.5f);
}

TEST_CASE("formats: .npy and .vocab are written as one transaction", "[formats]") {
  TempDir dir;
  const Embeddings e({"a", "b"}, sampleMatrix(2, 3));
  // The matrix cannot be written (its name is a directory): the old vocabulary stays.
  std::filesystem::create_directory(dir.file("v.npy"));
  writeText(dir.file("v.vocab"), "old 1\n");
  CHECK_THROWS_AS(saveVectors(e, dir.file("v.npy")), IoError);
  CHECK(readText(dir.file("v.vocab")) == "old 1\n");
  // A full device: nothing appears beside it.
  if (!std::filesystem::exists("/dev/full")) POSVEC_SKIP("no /dev/full on this system");
  if (std::filesystem::exists("/dev/full.vocab")) POSVEC_SKIP("/dev/full.vocab already exists");
  const auto r =
      test::runCli("-q train " + quote(test::sourcePath("corpus/posvec-corpus.txt")) +
                   " --min-count 1 --epochs 1 --dim 4 --threads 1 -o /dev/full --format npy");
  const bool created = std::filesystem::exists("/dev/full.vocab");
  if (created) std::filesystem::remove("/dev/full.vocab");
  CHECK(r.status == 3);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(created);
}

// ---- vector-file options (LoadOptions) ----------------------------------------

namespace {

// The same records as word2vec binary and as text.
void writeBoth(const TempDir& dir,
               const std::vector<std::pair<std::string, std::vector<float>>>& recs,
               std::size_t dim) {
  std::string bin = std::to_string(recs.size()) + " " + std::to_string(dim) + "\n";
  std::string txt = bin;
  for (const auto& [w, v] : recs) {
    bin += w + " ";
    txt += w;
    for (float x : v) {
      bin += leBytes({x});
      txt += " " + std::to_string(x);
    }
    bin += "\n";
    txt += "\n";
  }
  writeText(dir.file("v.bin"), bin);
  writeText(dir.file("v.txt"), txt);
}

LoadOptions unicode(UnicodeErrors mode) {
  LoadOptions o;
  o.unicodeErrors = mode;
  return o;
}

}  // namespace

TEST_CASE("formats: unicode errors strict refuses a 0x97 word and shows it escaped", "[formats]") {
  TempDir dir;
  // gensim's pang_lee_polarity_fasttext.vec has such a word: a cp1252 em dash.
  writeBoth(dir, {{"ca\x97t", {1, 2}}, {"dog", {3, 4}}}, 2);
  for (const char* f : {"v.bin", "v.txt"}) {
    try {
      loadVectors(dir.file(f));
      FAIL("a word with a lone 0x97 byte loaded under strict");
    } catch (const FormatError& e) {
      const std::string msg = e.what();
      CHECK(msg.find("'ca\\x97t' is not valid UTF-8") != std::string::npos);
      CHECK(msg.find("byte \\x97 at offset 2") != std::string::npos);
      CHECK(msg.find('\x97') == std::string::npos);  // never the raw byte
      CHECK(msg.find("replace") != std::string::npos);
    }
  }
}

TEST_CASE("formats: unicode errors replace and ignore decode words as Python does", "[formats]") {
  TempDir dir;
  const std::string fffd = "\xEF\xBF\xBD";
  // Expected words worked out by hand from the Unicode "maximal subpart" rule that
  // Python's decoder follows: a surrogate's ED A0 80 is three subparts (A0 cannot
  // follow ED), F0 80 is two (80 cannot follow F0), a truncated E2 82 is one.
  struct Case {
    std::string raw, replaced, ignored;
  };
  const std::vector<Case> cases = {
      {"ca\x97t", "ca" + fffd + "t", "cat"},
      {"\xED\xA0\x80x", fffd + fffd + fffd + "x", "x"},
      {"y\xF0\x80", "y" + fffd + fffd, "y"},
      {"z\xE2\x82", "z" + fffd, "z"},
      {"\xC0\xAFq\xC3\xA9", fffd + fffd + "q\xC3\xA9", "q\xC3\xA9"},
  };
  std::vector<std::pair<std::string, std::vector<float>>> recs;
  for (std::size_t i = 0; i < cases.size(); ++i)
    recs.push_back({cases[i].raw, {float(i), float(i) + 0.5f}});
  writeBoth(dir, recs, 2);
  for (const char* f : {"v.bin", "v.txt"}) {
    INFO(f);
    const Embeddings r = loadVectors(dir.file(f), unicode(UnicodeErrors::Replace));
    const Embeddings g = loadVectors(dir.file(f), unicode(UnicodeErrors::Ignore));
    REQUIRE(r.size() == cases.size());
    REQUIRE(g.size() == cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      CHECK(r.words()[i] == cases[i].replaced);
      CHECK(g.words()[i] == cases[i].ignored);
      CHECK(r.vectors()(i, 1) == float(i) + 0.5f);
    }
  }
  // A word that becomes another one keeps the first vector (gensim's rule for
  // repeats); a word that becomes empty is an error, not a silent "".
  writeBoth(dir, {{"ca\x97t", {1, 2}}, {"cat", {3, 4}}, {"dog", {5, 6}}}, 2);
  const Embeddings g = loadVectors(dir.file("v.bin"), unicode(UnicodeErrors::Ignore));
  REQUIRE(g.words() == std::vector<std::string>{"cat", "dog"});
  CHECK(g.vectors()(0, 0) == 1.0f);
  CHECK(g.vectors()(1, 1) == 6.0f);
  writeBoth(dir, {{"\x97\x97", {1, 2}}}, 2);
  requireError([&] { loadVectors(dir.file("v.txt"), unicode(UnicodeErrors::Ignore)); },
               "nothing is left of the word '\\x97\\x97'");
  CHECK(parseUnicodeErrors("replace") == UnicodeErrors::Replace);
  CHECK_THROWS_AS(parseUnicodeErrors("surrogateescape"), ConfigError);
}

TEST_CASE("formats: limit reads the first N records and nothing after them", "[formats]") {
  TempDir dir;
  // Record 3 is broken (NaN, and the text file is cut short after it): only a
  // reader that stops after the limit loads these files.
  writeText(dir.file("l.bin"), "5 2\naa " + leBytes({1, 2}) + "\nbb " + leBytes({3, 4}) + "\ncc " +
                                   leBytes({std::nanf(""), 0}) + "\ndd ");
  writeText(dir.file("l.txt"), "5 2\naa 1 2\nbb 3 4\ncc nan 0\n");
  for (const char* f : {"l.bin", "l.txt"}) {
    INFO(f);
    LoadOptions o;
    o.limit = 2;
    const Embeddings e = loadVectors(dir.file(f), o);
    REQUIRE(e.words() == std::vector<std::string>{"aa", "bb"});
    CHECK(e.vectors()(1, 0) == 3.0f);
    CHECK(e.vectors()(1, 1) == 4.0f);
    o.limit = 3;
    requireError([&] { loadVectors(dir.file(f), o); }, "'cc' is NaN");
  }
  // The limit counts records, as gensim's does: a repeat inside it uses one up.
  writeText(dir.file("r.txt"), "4 1\na 1\na 2\nb 3\nc 4\n");
  LoadOptions o;
  o.limit = 3;
  const Embeddings r = loadVectors(dir.file("r.txt"), o);
  CHECK(r.words() == std::vector<std::string>{"a", "b"});
  // A limit above the count reads everything; .npy and models keep their first rows.
  o.limit = 100;
  CHECK(loadVectors(dir.file("r.txt"), o).size() == 3);
  saveVectors(sample(), dir.file("s.npy"));
  o.limit = 3;
  const Embeddings n = loadVectors(dir.file("s.npy"), o);
  const Embeddings full = sample();
  REQUIRE(n.size() == 3);
  CHECK(n.words()[2] == full.words()[2]);
  CHECK(sameBits(n.vectors(), full.vectors().topRows(3)));
  CHECK(n.counts() == std::vector<std::int64_t>{70, 60, 50});
}

TEST_CASE("formats: no-header reads GloVe text without the count line", "[formats]") {
  TempDir dir;
  writeText(dir.file("g.txt"), "the 0.5 -1 2\ncat 1e-3 0 4\n, 7 8 9");
  LoadOptions o;
  o.noHeader = true;
  VectorFormat found = VectorFormat::Auto;
  const Embeddings e = loadVectors(dir.file("g.txt"), o, &found);
  CHECK(found == VectorFormat::Word2VecText);
  REQUIRE(e.words() == std::vector<std::string>{"the", "cat", ","});
  REQUIRE(e.dim() == 3);
  CHECK(e.vectors()(0, 1) == -1.0f);
  CHECK(e.vectors()(1, 0) == 0.001f);
  CHECK(e.vectors()(2, 2) == 9.0f);
  o.limit = 2;
  CHECK(loadVectors(dir.file("g.txt"), o).words() == std::vector<std::string>{"the", "cat"});
  // Without the option the first line is not a header; the message says what to do.
  requireError([&] { loadVectors(dir.file("g.txt")); }, "loads with the no-header option");
  // A ragged line names its line number (1-based, no header line to skip).
  writeText(dir.file("h.txt"), "a 1 2\nb 3\n");
  o.limit = 0;
  requireError([&] { loadVectors(dir.file("h.txt"), o); }, "line 2: expected 2 values after 'b'");
  // Binary and .npy files have no headerless variant.
  saveVectors(sample(), dir.file("s.bin"));
  saveVectors(sample(), dir.file("s.npy"));
  CHECK_THROWS_AS(loadVectors(dir.file("s.bin"), o), Error);
  CHECK_THROWS_WITH(loadVectors(dir.file("s.npy"), o),
                    Catch::Matchers::Contains("no-header applies to word2vec text"));
}

TEST_CASE("formats: the CLI takes --unicode-errors, --limit and --no-header", "[formats][cli]") {
  TempDir dir;
  // Unit vectors at known angles: cos(a, b) is the cosine of the angle between them.
  writeText(dir.file("u.txt"), "3 2\nca\x97t 1 0\ndog 0.6 0.8\nrat 0 1\n");
  auto r = runCli("similarity " + quote(dir.file("u.txt")) + " dog rat");
  CHECK(r.status != 0);
  CHECK(r.err.find("'ca\\x97t' is not valid UTF-8") != std::string::npos);
  CHECK(r.err.find('\x97') == std::string::npos);
  r = runCli("similarity " + quote(dir.file("u.txt")) + " cat dog --unicode-errors ignore");
  CHECK(r.status == 0);
  CHECK(r.out == "cosine(cat, dog) = 0.600000\n");
  r = runCli("similarity " + quote(dir.file("u.txt")) +
             " ca\xEF\xBF\xBDt rat --unicode-errors replace");
  CHECK(r.out == "cosine(ca\xEF\xBF\xBDt, rat) = 0.000000\n");
  r = runCli("similar " + quote(dir.file("u.txt")) + " dog --unicode-errors replace --limit 2");
  CHECK(r.status == 0);
  CHECK(r.out.find("rat") == std::string::npos);  // beyond the limit
  CHECK(r.out.find("0.600000") != std::string::npos);
  writeText(dir.file("g.txt"), "dog 0.6 0.8\nrat 0 1\n");
  r = runCli("similarity " + quote(dir.file("g.txt")) + " dog rat --no-header");
  CHECK(r.out == "cosine(dog, rat) = 0.800000\n");
  // The library's message names the setting by meaning; the CLI puts its flag there.
  r = runCli("similarity " + quote(dir.file("g.txt")) + " dog rat");
  CHECK(r.status == static_cast<int>(cli::ExitCode::Format));
  CHECK(r.err.find("(GloVe) loads with --no-header\n") != std::string::npos);
  r = runCli("similarity " + quote(dir.file("g.txt")) + " dog rat --unicode-errors bogus");
  CHECK(r.status != 0);
  // The other commands that read vectors take the same options.
  for (const std::string cmd : {"eval", "encode", "attend"}) {
    r = runCli(cmd + " --help");
    CHECK(r.out.find("--unicode-errors") != std::string::npos);
    CHECK(r.out.find("--no-header") != std::string::npos);
  }
  r = runCli("study --help");
  CHECK(r.out.find("--limit") != std::string::npos);
}

TEST_CASE("formats: text output equals value-by-value formatting across buffer flushes",
          "[formats]") {
  TempDir dir;
  // One row longer than the writer's 4 MiB buffer (15-character values), then
  // rows that cross a flush boundary; the expected text is built independently,
  // one std::to_chars call and one string append per value.
  const float awkward[] = {-1.17549435e-38f, -3.40282347e+38f, 0.1f, -0.0f, 1.00000012f};
  const std::size_t wide = 300000;
  MatrixF m(4, wide);
  for (Eigen::Index i = 0; i < m.size(); ++i)
    m.data()[i] = awkward[i % 5] * (1.0f - 0.1f * static_cast<float>(i % 7));
  const Embeddings e({"a", "b", "c", "d"}, m);
  saveVectors(e, dir.file("w.txt"));
  std::string expected = "4 " + std::to_string(wide) + "\n";
  char num[64];
  for (std::size_t i = 0; i < 4; ++i) {
    expected += e.words()[i];
    for (std::size_t j = 0; j < wide; ++j) {
      expected += ' ';
      expected.append(num, std::to_chars(num, num + sizeof num, m(i, j)).ptr);
    }
    expected += '\n';
  }
  CHECK(readText(dir.file("w.txt")) == expected);
  CHECK(sameBits(loadVectors(dir.file("w.txt")).vectors(), m));
}
