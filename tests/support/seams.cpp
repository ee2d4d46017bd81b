// The test seams of src/base/test_seams.hpp, linked into the test programs only
// (posvec_tests and the test CLI posvec-seams), where they replace the library's
// empty definitions: with POSVEC_TEST_RESIZE_INPUT=N every input file is truncated
// or extended to N bytes right after its size is taken; with
// POSVEC_TEST_SHRINK_MAPPED=N every mapped vectors file is truncated to N bytes
// right after it is mapped.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "posvec/error.hpp"
#include "test_seams.hpp"

namespace posvec::detail {
namespace {

void resizeTo(const char* variable, const std::string& path) {
  const char* env = std::getenv(variable);
  if (!env || !*env || path == "-") return;
  if (::truncate(path.c_str(), static_cast<off_t>(std::strtoull(env, nullptr, 10))) != 0)
    throw IoError(std::string("test seam ") + variable + ": cannot resize '" + path + "'");
}

}  // namespace

void resizeInputForTest(const std::string& path) { resizeTo("POSVEC_TEST_RESIZE_INPUT", path); }
void shrinkMappedForTest(const std::string& path) { resizeTo("POSVEC_TEST_SHRINK_MAPPED", path); }

}  // namespace posvec::detail
