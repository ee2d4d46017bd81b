// Per-sentence behaviour of training, measured: which words subsampling keeps, the
// noise distribution negative sampling draws from, and the learning rate at each
// point of the schedule (fresh, resumed, one or two threads).
#include "sampling.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "posvec/trainer.hpp"

using namespace posvec;

namespace {

Vocabulary sampleVocabulary() {
  // Counts spanning kept-always to kept-rarely at sample 1e-3 (total 200000).
  return Vocabulary({"a", "b", "c", "d", "e", "f"}, {120000, 50000, 20000, 8000, 1900, 100});
}

}  // namespace

TEST_CASE("sampling subsampling keeps each word with word2vec's probability, measured",
          "[sampling]") {
  const Vocabulary vocab = sampleVocabulary();
  const double total = 200000;
  for (const double sample : {1e-3, 1e-2}) {
    const detail::Subsampler sub(vocab, sample);
    detail::Rng rng(5);
    const std::vector<std::int32_t> sentence{0, 1, 2, 3, 4, 5};
    std::vector<std::int32_t> kept;
    std::vector<int> hits(sentence.size(), 0);
    const int trials = 200000;
    for (int t = 0; t < trials; ++t) {
      kept.clear();
      sub.apply(sentence, rng, kept);
      for (const std::int32_t id : kept) ++hits[static_cast<std::size_t>(id)];
    }
    for (std::size_t id = 0; id < sentence.size(); ++id) {
      // word2vec.c: keep with (sqrt(cn / (sample * train_words)) + 1) * (sample * train_words) / cn.
      const double f = static_cast<double>(vocab.count(static_cast<WordId>(id)));
      const double st = sample * total;
      const double p = std::min(1.0, (std::sqrt(f / st) + 1.0) * st / f);
      INFO("sample " << sample << " word " << id << " count " << f << " keep probability " << p
                     << " measured " << hits[id] / double(trials));
      if (p >= 1.0) {
        CHECK(hits[id] == trials);
      } else {
        const double sd = std::sqrt(trials * p * (1 - p));
        CHECK(std::abs(hits[id] - trials * p) <= 5 * sd);
      }
    }
  }
  // Sample 0 keeps everything.
  const detail::Subsampler none(vocab, 0);
  detail::Rng rng(1);
  std::vector<std::int32_t> kept;
  none.apply({0, 0, 0, 1}, rng, kept);
  CHECK(kept == std::vector<std::int32_t>{0, 0, 0, 1});
}

TEST_CASE("sampling subsampling draws once per word it may drop, as the branching rule does",
          "[sampling]") {
  // The rule written out: a word whose keep probability is below 1 takes one draw
  // and is kept when its top 32 bits fall below the probability in 2^-32 units;
  // the others are kept without a draw. Probabilities come from word2vec.c's
  // formula here, not from the Subsampler.
  const Vocabulary vocab = sampleVocabulary();
  const double sample = 1e-3, st = sample * 200000;
  std::vector<std::uint64_t> threshold;
  for (WordId id = 0; id < static_cast<WordId>(vocab.size()); ++id) {
    const double f = static_cast<double>(vocab.count(id));
    threshold.push_back(static_cast<std::uint64_t>(
        std::ldexp(std::min(1.0, (std::sqrt(f / st) + 1.0) * st / f), 32)));
  }
  REQUIRE(threshold[5] >= (1ull << 32));  // the rarest word never draws
  REQUIRE(threshold[0] < (1ull << 32));
  const detail::Subsampler sub(vocab, sample);
  std::mt19937 gen(11);
  detail::Rng rng(7), reference(7);
  std::vector<std::int32_t> kept{-1};  // apply appends after what is there
  std::size_t draws = 0;
  for (int t = 0; t < 2000; ++t) {
    std::vector<std::int32_t> sentence(gen() % 40);
    for (auto& id : sentence) id = static_cast<std::int32_t>(gen() % vocab.size());
    std::vector<std::int32_t> expected{-1};
    for (const std::int32_t id : sentence) {
      const std::uint64_t k = threshold[static_cast<std::size_t>(id)];
      if (k >= (1ull << 32)) {
        expected.push_back(id);
      } else {
        ++draws;
        if ((reference.next() >> 32) < k) expected.push_back(id);
      }
    }
    kept.resize(1);
    sub.apply(sentence, rng, kept);
    REQUIRE(kept == expected);
    REQUIRE(rng.state == reference.state);
  }
  CHECK(draws > 10000);
}

TEST_CASE("sampling the training noise draws words with probability counts^0.75, measured",
          "[sampling]") {
  const Vocabulary vocab = sampleVocabulary();
  const NoiseSampler noise = detail::trainingNoise(vocab);
  double z = 0;
  for (const auto c : vocab.counts()) z += std::pow(static_cast<double>(c), 0.75);
  // The trainer's own generator feeds the draws.
  detail::Rng rng(17);
  const int draws = 400000;
  std::vector<int> hits(vocab.size(), 0);
  for (int i = 0; i < draws; ++i) ++hits[static_cast<std::size_t>(noise.draw(rng.next()))];
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    const double p = std::pow(static_cast<double>(vocab.counts()[i]), 0.75) / z;
    const double sd = std::sqrt(draws * p * (1 - p));
    INFO("word " << i << " p " << p << " measured " << hits[i] / double(draws));
    CHECK(std::abs(hits[i] - draws * p) <= 5 * sd);
  }
}

namespace {

constexpr int kSentenceLength = 10, kSentences = 2500;
constexpr std::int64_t kEpochWords = kSentenceLength * kSentences;  // 25000
// The trainer publishes its word count every 10000 words (at the first sentence end
// past it) and reports progress at the first publication of each epoch; with
// 10-word sentences and one thread, publications fall at 10000 and 20000 words.
constexpr std::int64_t kFlush = 10000;

std::vector<Sentence> fixedLengthCorpus() {
  std::mt19937 gen(3);
  std::vector<Sentence> out(kSentences);
  for (auto& s : out)
    for (int t = 0; t < kSentenceLength; ++t) s.push_back("w" + std::to_string(gen() % 40));
  return out;
}

TrainConfig scheduleConfig(int threads) {
  TrainConfig c;
  c.dim = 8;
  c.epochs = 3;
  c.minCount = 1;  // every token is trained on: an epoch is exactly kEpochWords
  c.sample = 0;
  c.threads = threads;
  c.alpha = 0.05;
  c.minAlpha = 0.001;
  c.seed = 3;
  return c;
}

// word2vec.c's schedule: alpha falls linearly from alpha to minAlpha over all the
// words of all epochs.
double scheduled(const TrainConfig& c, double wordsDone, double allWords) {
  return c.alpha - (c.alpha - c.minAlpha) * (wordsDone / allWords);
}

}  // namespace

TEST_CASE("sampling the learning rate follows the linear schedule at every report", "[sampling]") {
  const auto corpus = CorpusSource::fromSentences(fixedLengthCorpus());
  for (const int threads : {1, 2}) {
    INFO(threads << " threads");
    const TrainConfig c = scheduleConfig(threads);
    std::vector<TrainProgress> seen;
    TrainObserver watch;
    watch.progress = [&](const TrainProgress& p) { seen.push_back(p); };
    ModelState model = train(corpus, c, watch);
    std::vector<int> perEpoch(static_cast<std::size_t>(c.epochs), 0);
    const double all = static_cast<double>(kEpochWords) * c.epochs;
    for (const TrainProgress& p : seen) {
      REQUIRE(p.epoch >= 1);
      REQUIRE(p.epoch <= c.epochs);
      const std::int64_t base = kEpochWords * (p.epoch - 1);
      const std::int64_t done = p.wordsProcessed - base;  // words of this epoch
      INFO("epoch " << p.epoch << " words " << p.wordsProcessed << " alpha " << p.alpha);
      if (threads == 1) {
        CHECK((done == kFlush || done == 2 * kFlush));
        if (perEpoch[static_cast<std::size_t>(p.epoch - 1)] == 0) CHECK(done == kFlush);
      } else {
        // Thread 0 reports once its own count passes 10000; the other thread's
        // published words may come on top.
        CHECK(done >= kFlush);
        CHECK(done <= kEpochWords);
      }
      ++perEpoch[static_cast<std::size_t>(p.epoch - 1)];
      CHECK(p.fraction == Approx(static_cast<double>(base + done) / all).epsilon(1e-12));
      // alpha is held as a float: 1e-6 relative.
      CHECK(p.alpha == Approx(scheduled(c, static_cast<double>(base + done), all)).epsilon(1e-6));
    }
    for (int e = 0; e < c.epochs; ++e) {
      INFO("epoch " << e + 1);
      CHECK(perEpoch[static_cast<std::size_t>(e)] >= 1);
    }

    // Resumed: epochs 4 and 5 of a schedule that now spans 5 epochs.
    seen.clear();
    resumeTraining(model, corpus, 2, watch);
    const double all5 = static_cast<double>(kEpochWords) * 5;
    std::vector<int> resumedEpochs(2, 0);
    for (const TrainProgress& p : seen) {
      REQUIRE(p.epoch >= 4);
      REQUIRE(p.epoch <= 5);
      CHECK(p.epochs == 5);
      // wordsProcessed counts the words of this run only.
      const std::int64_t done = p.wordsProcessed - kEpochWords * (p.epoch - 4);
      INFO("resumed epoch " << p.epoch << " words " << p.wordsProcessed << " alpha " << p.alpha);
      if (threads == 1) CHECK((done == kFlush || done == 2 * kFlush));
      CHECK(done >= kFlush);
      const double at = static_cast<double>(kEpochWords * (p.epoch - 1) + done);
      CHECK(p.fraction == Approx(at / all5).epsilon(1e-12));
      CHECK(p.alpha == Approx(scheduled(c, at, all5)).epsilon(1e-6));
      ++resumedEpochs[static_cast<std::size_t>(p.epoch - 4)];
    }
    CHECK(resumedEpochs[0] >= 1);
    CHECK(resumedEpochs[1] >= 1);
  }
}
