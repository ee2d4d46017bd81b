// Fuzzes the word2vec text loader on its own (no format detection).
// Input: the file's bytes.
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  posvec::fuzz::fuzzVectorFile({reinterpret_cast<const char*>(data), size},
                               posvec::VectorFormat::Word2VecText);
  return 0;
}
