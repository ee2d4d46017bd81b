// Fuzzes the full-state model loader (loadModel, as `train --resume` uses it).
// Input: the file's bytes. A model that loads keeps its shapes consistent and
// saves and loads back unchanged.
#include "fuzz_util.hpp"

namespace {

bool sameModel(const posvec::ModelState& a, const posvec::ModelState& b) {
  auto same = [](const posvec::MatrixF& x, const posvec::MatrixF& y) {
    return x.rows() == y.rows() && x.cols() == y.cols() &&
           (x.size() == 0 || std::memcmp(x.data(), y.data(), sizeof(float) * x.size()) == 0);
  };
  return a.words == b.words && a.counts == b.counts && same(a.input, b.input) &&
         same(a.output, b.output) && a.config == b.config && a.epochsDone == b.epochsDone &&
         a.epochLosses.size() == b.epochLosses.size() &&
         (a.epochLosses.empty() || std::memcmp(a.epochLosses.data(), b.epochLosses.data(),
                                               sizeof(double) * a.epochLosses.size()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posvec;
  const auto& scratch = fuzz::scratch();
  const std::string path = scratch.write(
      "input.posvec", fuzz::withModelChecksum({reinterpret_cast<const char*>(data), size}));
  ModelState m;
  if (!fuzz::refusesCleanly([&] { m = loadModel(path); })) return 0;
  fuzz::check(!m.words.empty(), "a model without words");
  fuzz::check(m.counts.size() == m.words.size(), "one count per word");
  fuzz::check(m.input.rows() == static_cast<Eigen::Index>(m.words.size()),
              "one input row per word");
  fuzz::check(m.output.rows() == 0 || m.output.cols() == m.input.cols(),
              "output rows as wide as input rows");
  ModelState again;
  const bool roundTrip = fuzz::refusesCleanly([&] {
    saveModel(m, scratch.path("saved.posvec"));
    again = loadModel(scratch.path("saved.posvec"));
  });
  fuzz::check(roundTrip, "a model that loaded does not save and load back");
  fuzz::check(sameModel(m, again), "a model changed in a save/load round trip");
  return 0;
}
