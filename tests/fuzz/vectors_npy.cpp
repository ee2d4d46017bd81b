// Fuzzes the .npy + .vocab loader on its own (no format detection).
// Input: the .npy file's bytes, then a "\n#vocab#\n" line and the .vocab file's.
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  posvec::fuzz::fuzzVectorFile({reinterpret_cast<const char*>(data), size},
                               posvec::VectorFormat::Npy);
  return 0;
}
