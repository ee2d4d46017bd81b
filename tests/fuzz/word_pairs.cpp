// Fuzzes the word-pair file parser and correlations (evaluateWordPairs, `posvec
// eval --pairs`). Input: one options byte (see eval_common.hpp), then the file.
#include <cmath>

#include "eval_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posvec;
  if (size < 1) return 0;
  const std::string path =
      fuzz::scratch().write("pairs.tsv", {reinterpret_cast<const char*>(data + 1), size - 1});
  WordPairResult r;
  if (!fuzz::refusesCleanly(
          [&] { r = evaluateWordPairs(fuzz::evalVocabulary(), path, fuzz::evalOptions(data[0])); }))
    return 0;
  fuzz::check(r.pairs > 0, "a result without pairs");
  // NaN is the documented answer for a constant side; anything else is a correlation.
  for (const double c : {r.spearman, r.pearson})
    fuzz::check(std::isnan(c) || (c >= -1 && c <= 1), "correlation outside [-1, 1]");
  fuzz::check(r.oovPercent() >= 0 && r.oovPercent() <= 100, "OOV percentage outside [0, 100]");
  return 0;
}
