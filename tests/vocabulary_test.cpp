#include "posvec/vocabulary.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <queue>
#include <random>

#include "corpus_detail.hpp"
#include "kernels.hpp"
#include "posvec/error.hpp"
#include "posvec/train_config.hpp"
#include "test_util.hpp"

using namespace posvec;

namespace {

Vocabulary build(const std::vector<std::string>& tokens, std::int64_t minCount,
                 std::size_t maxVocab, std::vector<WordId>* map = nullptr,
                 std::vector<std::int32_t>* ids = nullptr) {
  VocabularyBuilder b;
  for (const auto& t : tokens) {
    const auto id = b.add(t);
    if (ids) ids->push_back(id);
  }
  return b.finish(minCount, maxVocab, map);
}

}  // namespace

TEST_CASE("vocabulary sorts by count with ties in first-seen order", "[vocabulary]") {
  // counts: c=3, a=2, d=2, b=1, e=1 ; a seen before d, b before e
  std::vector<WordId> map;
  std::vector<std::int32_t> ids;
  auto v = build({"a", "b", "c", "c", "d", "a", "e", "c", "d"}, 1, 0, &map, &ids);
  REQUIRE(v.size() == 5);
  CHECK(v.words() == std::vector<std::string>{"c", "a", "d", "b", "e"});
  CHECK(v.counts() == std::vector<std::int64_t>{3, 2, 2, 1, 1});
  CHECK(v.totalCount() == 9);
  CHECK(v.find("d") == 2);
  CHECK(v.find("zzz") == -1);
  // Provisional ids are first-seen order: a0 b1 c2 d3 e4.
  CHECK(ids == std::vector<std::int32_t>{0, 1, 2, 2, 3, 0, 4, 2, 3});
  CHECK(map == std::vector<WordId>{1, 3, 0, 2, 4});

  auto v2 = build({"a", "b", "c", "c", "d", "a", "e", "c", "d"}, 2, 0, &map);
  CHECK(v2.words() == std::vector<std::string>{"c", "a", "d"});
  CHECK(map == std::vector<WordId>{1, -1, 0, 2, -1});
  auto v3 = build({"a", "b", "c", "c", "d", "a", "e", "c", "d"}, 1, 2);
  CHECK(v3.words() == std::vector<std::string>{"c", "a"});
}

TEST_CASE("vocabulary reports empty corpora and unreachable min-count", "[vocabulary]") {
  VocabularyBuilder empty;
  CHECK_THROWS_AS(empty.finish(1, 0), InputError);
  VocabularyBuilder b;
  b.add("x");
  b.add("y");
  b.add("x");
  try {
    b.finish(5, 0);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("5 times") != std::string::npos);
    CHECK(std::string(e.what()).find("occurs 2") != std::string::npos);
  }
  CHECK_THROWS_AS(Vocabulary({"a", "a"}, {2, 1}), InputError);
  CHECK_THROWS_AS(Vocabulary({"a"}, {0}), InputError);
}

TEST_CASE("vocabulary refuses counts whose total does not fit in 64 bits", "[vocabulary]") {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  // Exactly at the limit is fine: kMax - 1 + 1 == kMax.
  CHECK(Vocabulary({"a", "b"}, {kMax - 1, 1}).totalCount() == kMax);
  try {
    Vocabulary({"a", "b", "c"}, {kMax / 2 + 1, kMax / 2, 1});
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("add up to more than 2^63 - 1") != std::string::npos);
    CHECK(std::string(e.what()).find("'c'") != std::string::npos);
  }
}

TEST_CASE("vocabulary builder prunes rare words to bound its table", "[vocabulary]") {
  VocabularyBuilder b(100);
  // A frequent core of 10 words interleaved with 1000 distinct hapaxes.
  for (int i = 0; i < 1000; ++i) {
    b.add("core" + std::to_string(i % 10));
    b.add("rare" + std::to_string(i));
    CHECK(b.distinct() <= 101);
  }
  CHECK(b.prunings() >= 1);
  auto v = b.finish(50, 0);
  REQUIRE(v.size() == 10);
  // Core words are never pruned (count >= 2 before the first pruning), so counts are exact.
  for (std::size_t i = 0; i < 10; ++i) CHECK(v.count(static_cast<WordId>(i)) == 100);
}

TEST_CASE("vocabulary subsampling keep-probabilities follow word2vec's formula", "[vocabulary]") {
  Vocabulary v({"the", "of", "cat", "rare"}, {600000, 200000, 1000, 5});
  const long double total = 801005.0L;
  for (double s : {1e-3, 1e-4, 1e-5}) {
    for (WordId id = 0; id < 4; ++id) {
      const long double f = v.count(id);
      // Written as word2vec.c does: (sqrt(cn / (sample * train_words)) + 1) * (sample *
      // train_words) / cn
      long double expected = (std::sqrt(f / (s * total)) + 1.0L) * (s * total) / f;
      if (expected > 1) expected = 1;
      CHECK(v.keepProbability(id, s) == Approx(static_cast<double>(expected)).epsilon(1e-12));
    }
  }
  CHECK(v.keepProbability(0, 0.0) == 1.0);
  CHECK(v.keepProbability(3, 1e-3) == 1.0);
  CHECK(v.keepProbability(0, 1e-3) < 0.05);
}

TEST_CASE("noise sampler realises counts^0.75", "[vocabulary]") {
  const std::vector<std::int64_t> counts{1000, 500, 500, 100, 37, 5, 1, 1};
  NoiseSampler noise(counts, 0.75);
  long double z = 0;
  for (auto c : counts) z += std::pow(static_cast<long double>(c), 0.75L);
  double sum = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const long double want = std::pow(static_cast<long double>(counts[i]), 0.75L) / z;
    const double got = noise.probability(static_cast<WordId>(i));
    CHECK(got == Approx(static_cast<double>(want)).epsilon(1e-6));
    sum += got;
  }
  CHECK(sum == Approx(1.0).epsilon(1e-9));
  // Empirical frequencies from independent random bits, within 5 standard deviations.
  std::mt19937_64 gen(42);
  const int draws = 400000;
  std::vector<int> hits(counts.size());
  for (int i = 0; i < draws; ++i) ++hits[static_cast<std::size_t>(noise.draw(gen()))];
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double p = static_cast<double>(std::pow(static_cast<long double>(counts[i]), 0.75L) / z);
    const double sd = std::sqrt(draws * p * (1 - p));
    CHECK(std::abs(hits[i] - draws * p) <= 5 * sd + 1);
  }
}

TEST_CASE("vocabulary Huffman tree is prefix-free and optimal", "[vocabulary]") {
  const std::vector<std::int64_t> counts{45, 16, 13, 12, 9, 5, 5, 3, 1};
  const auto tree = detail::buildHuffmanTree(counts);
  const std::size_t v = counts.size();
  // Optimal weighted path length from an independent priority-queue Huffman.
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> pq(counts.begin(),
                                                                                  counts.end());
  std::int64_t optimal = 0;
  while (pq.size() > 1) {
    const auto a = pq.top();
    pq.pop();
    const auto b = pq.top();
    pq.pop();
    optimal += a + b;
    pq.push(a + b);
  }
  std::int64_t cost = 0;
  std::vector<std::string> codes;
  for (std::size_t w = 0; w < v; ++w) {
    cost += counts[w] * static_cast<std::int64_t>(tree.depth(static_cast<WordId>(w)));
    std::string code;
    for (auto j = tree.offsets[w]; j < tree.offsets[w + 1]; ++j) {
      code += static_cast<char>('0' + tree.codes[static_cast<std::size_t>(j)]);
      CHECK(tree.points[static_cast<std::size_t>(j)] >= 0);
      CHECK(tree.points[static_cast<std::size_t>(j)] < static_cast<std::int32_t>(v - 1));
    }
    // Every path starts at the root, the last inner node made.
    CHECK(tree.points[static_cast<std::size_t>(tree.offsets[w])] ==
          static_cast<std::int32_t>(v - 2));
    codes.push_back(code);
  }
  CHECK(cost == optimal);
  for (std::size_t a = 0; a < v; ++a)
    for (std::size_t b = 0; b < v; ++b)
      if (a != b) CHECK(codes[b].rfind(codes[a], 0) != 0);  // no code is a prefix of another
}

TEST_CASE("vocabulary id stream shards at sentence starts and cuts long sentences",
          "[vocabulary]") {
  for (bool inMemory : {true, false}) {
    detail::IdStream s(inMemory);
    // 3000 sentences of 1..50 ids (provisional ids 0..9), one empty sentence, one of 25000.
    std::mt19937 gen(7);
    std::int64_t expectWords = 0, expectPieces = 3;  // the long one gives 10000+10000+5000
    for (int i = 0; i < 3000; ++i) {
      const int len = 1 + static_cast<int>(gen() % 50);
      int kept = 0;
      for (int j = 0; j < len; ++j) {
        const auto id = static_cast<std::int32_t>(gen() % 10);
        s.push(id);
        kept += id != 9;
      }
      s.push(detail::IdStream::kEnd);
      expectWords += kept;
      expectPieces += kept > 0;
    }
    s.push(detail::IdStream::kEnd);
    for (int j = 0; j < 25000; ++j) s.push(j % 2);
    s.push(detail::IdStream::kEnd);
    expectWords += 25000;
    // Drop id 9 (about a tenth of the short-sentence words).
    std::vector<WordId> map{0, 1, 2, 3, 4, 5, 6, 7, 8, -1};
    s.remap(map);
    std::vector<std::int32_t> all(static_cast<std::size_t>(s.size()));
    REQUIRE(s.read(0, all.data(), all.size()) == all.size());
    CHECK(std::count(all.begin(), all.end(), 9) == 0);
    CHECK(s.words() == expectWords);
    CHECK(s.size() ==
          expectWords + expectPieces - 2);  // one end per sentence; the long one has one
    for (int n : {1, 2, 3, 7}) {
      std::int64_t words = 0, pieces = 0, longest = 0, prevEnd = 0;
      for (int k = 0; k < n; ++k) {
        auto [b, e] = s.shard(k, n);
        CHECK(b == prevEnd);
        prevEnd = e;
        CHECK((b == 0 || all[static_cast<std::size_t>(b - 1)] == detail::IdStream::kEnd));
        detail::ShardReader r(s, b, e);
        std::vector<std::int32_t> sent;
        while (r.next(sent)) {
          REQUIRE(!sent.empty());
          words += static_cast<std::int64_t>(sent.size());
          longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(sent.size()));
          ++pieces;
        }
      }
      CHECK(prevEnd == s.size());
      CHECK(words == s.words());
      CHECK(longest == static_cast<std::int64_t>(detail::kMaxSentence));
      CHECK(pieces == expectPieces);
    }
  }
}

TEST_CASE("vocabulary train config validates, serialises and parses back", "[vocabulary]") {
  TrainConfig c;
  CHECK_NOTHROW(c.validate());
  c.dim = 64;
  c.loss = Loss::HierarchicalSoftmax;
  c.architecture = Architecture::Cbow;
  c.sample = 1e-4;
  c.alpha = 0.05;
  c.seed = 123456789012345ull;
  c.maxVocab = 1000;
  const auto back = TrainConfig::deserialize(c.serialize());
  CHECK(back.serialize() == c.serialize());
  CHECK(back.sample == c.sample);
  CHECK(back.alpha == c.alpha);
  CHECK(back.loss == Loss::HierarchicalSoftmax);
  CHECK(back.architecture == Architecture::Cbow);
  CHECK_THROWS_AS(TrainConfig::deserialize("dim=abc\n"), FormatError);
  CHECK_THROWS_AS(TrainConfig::deserialize("colour=blue\n"), FormatError);
  CHECK_THROWS_AS(TrainConfig::deserialize("dim=5\ndim=6\n"), FormatError);
  CHECK_THROWS_AS(TrainConfig::deserialize("loss=maybe\n"), FormatError);
  CHECK_THROWS_AS(TrainConfig::deserialize("just text\n"), FormatError);
  // Context combining: round trip, and a configuration stored before it (no key)
  // means one window per block, the kernel it was trained with.
  c.combine = 3;
  c.blockNegatives = 9;
  CHECK(TrainConfig::deserialize(c.serialize()).combine == 3);
  CHECK(TrainConfig::deserialize(c.serialize()).blockNegatives == 9);
  CHECK(TrainConfig::deserialize("dim=5\n").combine == 1);
  // Automatic shared negatives: 1.25 per centre word, never fewer than `negative`.
  TrainConfig a;
  a.combine = 16;
  CHECK(a.blockNegativesFor() == 20);
  a.combine = 2;
  CHECK(a.blockNegativesFor() == 5);
  a.blockNegatives = 3;
  CHECK(a.blockNegativesFor() == 3);

  auto expectOption = [](TrainConfig bad, const std::string& option) {
    try {
      bad.validate();
      FAIL("expected ConfigError for " << option);
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).find(option) != std::string::npos);
    }
  };
  TrainConfig b;
  b.dim = 0;
  expectOption(b, "dimension");
  b = {};
  b.window = 0;
  expectOption(b, "window");
  b = {};
  b.window = -3;
  expectOption(b, "window");
  b = {};
  b.epochs = 0;
  expectOption(b, "epochs");
  b = {};
  b.combine = 0;
  expectOption(b, "combine");
  b = {};
  b.blockNegatives = -1;
  expectOption(b, "noise words per block");
  b = {};
  b.negative = 0;
  expectOption(b, "negative samples");
  b = {};
  b.sample = -1;
  expectOption(b, "subsampling threshold");
  b = {};
  b.alpha = 0;
  expectOption(b, "initial learning rate");
  b = {};
  b.minAlpha = 1;
  expectOption(b, "final learning rate");
  b = {};
  b.minCount = 0;
  expectOption(b, "minimum count");
  b = {};
  b.threads = -1;
  expectOption(b, "threads");
}

TEST_CASE("vocabulary files in word2vec.c's format round-trip and read its quirks",
          "[vocabulary]") {
  test::TempDir dir;
  const Vocabulary v({"the", "cat", "sat", "mat"}, {9, 4, 4, 1});
  saveWord2vecVocabulary(v, 7, dir.file("v.txt"));
  CHECK(test::readText(dir.file("v.txt")) == "</s> 7\nthe 9\ncat 4\nsat 4\nmat 1\n");
  const Vocabulary back = readWord2vecVocabulary(dir.file("v.txt"));
  CHECK(back.words() == v.words());
  CHECK(back.counts() == v.counts());

  // Unsorted input is sorted by count, ties in file order; tabs, CRLF, blank lines and
  // count-0 words are accepted; </s> is word2vec.c's sentence end, not a word.
  test::writeText(dir.file("w.txt"), "b 2\r\n\nz\t5\r\n</s> 3\na 2\nzero 0\nc 7\n");
  const Vocabulary w = readWord2vecVocabulary(dir.file("w.txt"));
  CHECK(w.words() == std::vector<std::string>{"c", "z", "b", "a"});
  CHECK(w.counts() == std::vector<std::int64_t>{7, 5, 2, 2});

  const std::vector<std::pair<std::string, std::string>> bad{
      {"a 1\nb\n", "line 2"},       {"a 1\nb 2 3\n", "line 2"},      {"a x\n", "line 1"},
      {"a -3\n", "line 1"},         {"a 1\na 2\n", "appears twice"}, {"\n\n", "holds no words"},
      {"ok 1\nb\xFF 2\n", "line 2"}};
  for (const auto& [text, message] : bad) {
    test::writeText(dir.file("bad.txt"), text);
    INFO(text);
    CHECK_THROWS_WITH(readWord2vecVocabulary(dir.file("bad.txt")), Catch::Contains(message));
  }
  CHECK_THROWS_AS(readWord2vecVocabulary(dir.file("missing.txt")), IoError);
}
