// Fuzzes the analogy file parser and scorer (evaluateAnalogies, `posvec eval
// --analogies`). Input: one options byte (see eval_common.hpp), then the file.
#include "eval_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posvec;
  if (size < 1) return 0;
  const std::string path =
      fuzz::scratch().write("questions.txt", {reinterpret_cast<const char*>(data + 1), size - 1});
  AnalogyResult r;
  if (!fuzz::refusesCleanly(
          [&] { r = evaluateAnalogies(fuzz::evalVocabulary(), path, fuzz::evalOptions(data[0])); }))
    return 0;
  std::size_t counted = 0;
  for (const AnalogySection& s : r.sections) {
    counted += s.correct + s.incorrect + s.skipped;
    fuzz::check(s.accuracy() >= 0 && s.accuracy() <= 1, "section accuracy outside [0, 1]");
  }
  fuzz::check(counted == r.questions, "every question counted in exactly one section");
  fuzz::check(r.total.correct + r.total.incorrect + r.total.skipped == r.questions,
              "total covers every question");
  fuzz::check(r.questions > 0, "a result without questions");
  return 0;
}
