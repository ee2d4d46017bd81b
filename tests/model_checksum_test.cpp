// The checksum that ends a posvec model file (.posvec, magic POSVECM1), pinned from
// its definition rather than from the code that writes it: each build only checks
// its own files, so a change to the checksum would pass every round trip and then
// refuse every model an earlier posvec wrote.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "formats_detail.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/model_state.hpp"
#include "test_util.hpp"

using namespace posvec;
using posvec::test::readText;
using posvec::test::TempDir;
using posvec::test::writeText;

namespace {

std::uint64_t littleU64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::uint64_t rotateLeft(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// The checksum's definition, written again over a whole buffer: four 64-bit lanes
// start at the first digits of pi; each 32-byte block gives one little-endian word
// to each lane, lane = rotl((lane ^ word) * P1, 29); a last partial block is padded
// with zeros; then h = length * P2, each lane folded in by h = rotl((h ^ lane) * P2,
// 31), and h ^= h >> 33, h *= P1, h ^ (h >> 29). P1, P2: xxHash64's first two primes.
std::uint64_t referenceChecksum(const std::string& bytes) {
  constexpr std::uint64_t P1 = 0x9E3779B97F4A7C15ULL, P2 = 0xC2B2AE3D27D4EB4FULL;
  std::uint64_t lane[4] = {0x243F6A8885A308D3ULL, 0x13198A2E03707344ULL, 0xA4093822299F31D0ULL,
                           0x082EFA98EC4E6C89ULL};
  std::string padded = bytes;
  padded.resize((bytes.size() + 31) / 32 * 32, '\0');
  const auto* p = reinterpret_cast<const unsigned char*>(padded.data());
  for (std::size_t block = 0; block < padded.size(); block += 32)
    for (int k = 0; k < 4; ++k)
      lane[k] = rotateLeft((lane[k] ^ littleU64(p + block + 8 * k)) * P1, 29);
  std::uint64_t h = static_cast<std::uint64_t>(bytes.size()) * P2;
  for (std::uint64_t l : lane) h = rotateLeft((h ^ l) * P2, 31);
  h ^= h >> 33;
  h *= P1;
  return h ^ (h >> 29);
}

// The checksum field: the file's last 8 bytes, little-endian.
std::uint64_t storedChecksum(const std::string& file) {
  REQUIRE(file.size() >= 8);
  return littleU64(reinterpret_cast<const unsigned char*>(file.data() + file.size() - 8));
}

std::uint32_t headerFlags(const std::string& file) {
  REQUIRE(file.size() >= 16);
  const auto* p = reinterpret_cast<const unsigned char*>(file.data() + 12);
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

ModelState tinyModel(Eigen::Index words, Eigen::Index dim, Eigen::Index outputRows) {
  ModelState m;
  for (Eigen::Index i = 0; i < words; ++i) {
    m.words.push_back("w" + std::to_string(i));
    m.counts.push_back(100 - i);
  }
  m.input = MatrixF(words, dim);
  m.output = MatrixF(outputRows, outputRows > 0 ? dim : 0);
  for (Eigen::Index i = 0; i < m.input.size(); ++i)
    m.input.data()[i] = 0.125f * static_cast<float>(i) - 0.5f;
  for (Eigen::Index i = 0; i < m.output.size(); ++i)
    m.output.data()[i] = 0.75f - 0.0625f * static_cast<float>(i);
  m.config = "dim=" + std::to_string(dim) + "\n";
  m.epochsDone = 1;
  m.epochLosses = {2.5};
  return m;
}

// A model saveModel wrote (v1.posvec) before this test: the words the, cat, sat with
// counts 30, 20, 10; 4-dimensional input rows 0.25 i - 1 and output rows 0.5 - 0.125 i
// (i = 0..11 in row order); config "dim=4\n"; 2 epochs done, losses 3.5 and 2.75.
// Version 1, flags 1 (checksummed), 243 bytes, checksum 0x3aebd28e01d0b380.
constexpr const char* kGoldenModelHex =
    "504f535645434d310100000001000000030000000000000004000000000000000300000000000000"
    "060000000000000009000000000000000200000000000000020000000000000064696d3d340a0300"
    "000074686503000000636174030000007361741e0000000000000014000000000000000a00000000"
    "0000000000000000000c400000000000000640000080bf000040bf000000bf000080be0000000000"
    "00803e0000003f0000403f0000803f0000a03f0000c03f0000e03f0000003f0000c03e0000803e00"
    "00003e00000000000000be000080be0000c0be000000bf000020bf000040bf000060bf80b3d0018e"
    "d2eb3a";
constexpr std::uint64_t kGoldenChecksum = 0x3aebd28e01d0b380ULL;

std::string fromHex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

}  // namespace

TEST_CASE("model checksum: the definition gives known values", "[formats][checksum]") {
  // Computed by a third implementation (Python, from the same definition).
  std::string counting;
  for (int i = 0; i < 100; ++i) counting.push_back(static_cast<char>(i));
  CHECK(referenceChecksum("") == 0x85383500a4c71e61ULL);
  CHECK(referenceChecksum("a") == 0xf050192f333647ccULL);
  CHECK(referenceChecksum("POSVECM1") == 0x2f4f6a390419d64cULL);
  CHECK(referenceChecksum(counting.substr(0, 32)) == 0xf9e07de2e4220a6dULL);
  CHECK(referenceChecksum(counting) == 0x863c44f1818dfc19ULL);
  // The length is part of it: trailing zeros are not padding.
  CHECK(referenceChecksum("ab") != referenceChecksum(std::string("ab\0", 3)));

  // The library's streaming form agrees, fed in pieces of any size.
  std::mt19937 rng(45);
  for (std::size_t n : {0u, 1u, 31u, 32u, 33u, 64u, 100u, 1000u}) {
    std::string bytes(n, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    detail::ModelChecksum sum;
    for (std::size_t at = 0; at < n;) {
      const std::size_t piece = std::min<std::size_t>(n - at, rng() % 40);
      sum.update(bytes.data() + at, piece);
      at += piece;
    }
    INFO(n << " bytes");
    CHECK(sum.value() == referenceChecksum(bytes));
  }
}

TEST_CASE("model checksum: the stored field is the checksum of every byte before it",
          "[formats][checksum]") {
  TempDir dir;
  const std::string path = dir.file("m.posvec");
  auto check = [&](const ModelState& m, const std::string& what) {
    INFO(what);
    saveModel(m, path);
    const std::string file = readText(path);
    REQUIRE(file.size() > 72 + 8);
    CHECK(file.compare(0, 8, "POSVECM1") == 0);
    CHECK((headerFlags(file) & 1u) != 0);  // the file says it ends with a checksum
    CHECK(storedChecksum(file) == referenceChecksum(file.substr(0, file.size() - 8)));
    CHECK(loadModel(path).words == m.words);
  };
  // Every length modulo the 32-byte block: the config text grows a byte at a time.
  for (int extra = 0; extra < 32; ++extra) {
    ModelState m = tinyModel(3, 4, 3);
    m.config += std::string(static_cast<std::size_t>(extra), 'x');
    check(m, "config of " + std::to_string(m.config.size()) + " bytes");
  }
  check(tinyModel(5, 7, 0), "no output rows");
  check(tinyModel(6, 3, 5), "hierarchical softmax's V - 1 output rows");

  ModelState partial = tinyModel(4, 4, 4);  // version 2: stopped inside an epoch
  partial.partial.words = 17;
  partial.partial.streamSize = 40;
  partial.partial.shards = {{3, 20, 0x1234567890abcdefULL, 1.5, 6}, {25, 40, 42, 0.25, 2}};
  check(partial, "stopped inside an epoch");

  ModelState subwords = tinyModel(3, 4, 3);  // input rows past the words': n-gram buckets
  subwords.config = "dim=4\nsubwords=1\n";
  subwords.input = MatrixF(3 + 5, 4);
  for (Eigen::Index i = 0; i < subwords.input.size(); ++i)
    subwords.input.data()[i] = 0.01f * static_cast<float>(i);
  check(subwords, "subword rows");

  ModelState half = tinyModel(4, 8, 4);
  packWeights(half, PackedWeights::Bf16);
  check(half, "bfloat16 weights, written as float32");
}

TEST_CASE("model checksum: a model file an earlier posvec wrote still loads",
          "[formats][checksum]") {
  TempDir dir;
  const std::string golden = fromHex(kGoldenModelHex);
  REQUIRE(golden.size() == 243);
  CHECK(storedChecksum(golden) == kGoldenChecksum);
  CHECK(referenceChecksum(golden.substr(0, golden.size() - 8)) == kGoldenChecksum);
  writeText(dir.file("v1.posvec"), golden);
  const ModelState m = loadModel(dir.file("v1.posvec"));
  CHECK(m.words == std::vector<std::string>{"the", "cat", "sat"});
  CHECK(m.counts == std::vector<std::int64_t>{30, 20, 10});
  CHECK(m.config == "dim=4\n");
  CHECK(m.epochsDone == 2);
  CHECK(m.epochLosses == std::vector<double>{3.5, 2.75});
  REQUIRE(m.input.rows() == 3);
  REQUIRE(m.input.cols() == 4);
  REQUIRE(m.output.rows() == 3);
  for (int i = 0; i < 12; ++i) {
    CHECK(m.input.data()[i] == 0.25f * static_cast<float>(i) - 1.0f);
    CHECK(m.output.data()[i] == 0.5f - 0.125f * static_cast<float>(i));
  }
  CHECK(loadVectors(dir.file("v1.posvec")).words() == m.words);
  // Its checksum is checked: one bit of a weight changed is refused.
  std::string damaged = golden;
  damaged[golden.size() - 8 - 20] ^= 0x01;
  writeText(dir.file("bad.posvec"), damaged);
  CHECK_THROWS_WITH(loadModel(dir.file("bad.posvec")), Catch::Contains("checksum"));
}
