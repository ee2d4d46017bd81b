// Fuzzes loadVectors as users call it: format detection, then the loader it
// picks. Input: the file's bytes (for .npy, a "\n#vocab#\n" line and the .vocab file).
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  posvec::fuzz::fuzzVectorFile({reinterpret_cast<const char*>(data), size},
                               posvec::VectorFormat::Auto);
  return 0;
}
