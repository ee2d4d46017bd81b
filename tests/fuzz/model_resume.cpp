// Fuzzes resuming a model file (`train --resume`, Word2Vec.load(...).train()):
// whatever loadModel accepts, resumeTraining on a small corpus either trains one
// more epoch, keeping the model's shapes, or refuses with a posvec::Error; never
// a crash (as the 65,536 thread positions libgomp could not run), a hang or a
// huge allocation. Input: the model file's bytes (its checksum is set right).
#include "corpus_detail.hpp"
#include "fuzz_util.hpp"
#include "posvec/corpus.hpp"
#include "posvec/trainer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posvec;
  const auto& scratch = fuzz::scratch();
  const std::string path = scratch.write(
      "input.posvec", fuzz::withModelChecksum({reinterpret_cast<const char*>(data), size}));
  ModelState m;
  if (!fuzz::refusesCleanly([&] { m = loadModel(path); })) return 0;
  // Training time grows with the matrices: skip models larger than a fuzz input
  // could describe cheaply (the loader's own limits were checked above).
  if (m.input.size() > (1 << 20)) return 0;
  // The seeds' words and a few others, in two short sentences.
  std::vector<Sentence> sentences{{"the", "cat", "sat", "on", "the", "mat"},
                                  {"a", "dog", "ran", m.words.front(), "the", "park"}};
  const auto words = m.words.size();
  const auto dim = m.input.cols();
  const int before = m.epochsDone;
  const CorpusSource corpus = CorpusSource::fromSentences(sentences);
  const bool trained = fuzz::refusesCleanly([&] {
    TrainConfig c = TrainConfig::deserialize(m.config);
    c.threads = 2;
    m.config = c.serialize();
    // An unfinished epoch is resumed only on a corpus of its stream's size: give
    // it this corpus's, so that the fuzzed thread positions are what is checked.
    if (m.partial.active())
      m.partial.streamSize =
          detail::prepareCorpus(corpus, Vocabulary(m.words, m.counts)).stream.size();
    resumeTraining(m, corpus, 1);
  });
  if (!trained) return 0;
  fuzz::check(m.words.size() == words && m.input.rows() == static_cast<Eigen::Index>(words) &&
                  m.input.cols() == dim,
              "resuming changed the model's shape");
  fuzz::check(m.epochsDone == before + 1, "resuming one epoch did not finish one epoch");
  fuzz::check(!m.partial.active(), "a finished resume left an unfinished epoch");
  return 0;
}
