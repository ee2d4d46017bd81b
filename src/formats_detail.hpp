// Internals of the vector formats shared with the fuzz harnesses: loading a
// file as one given format, without content detection, so that each loader
// can be fuzzed on its own.
#pragma once

#include <string>

#include "posvec/embeddings.hpp"
#include "posvec/formats.hpp"

namespace posvec::detail {

// Auto is refused (FormatError); Model yields the model's input vectors.
Embeddings loadVectorsAs(const std::string& path, VectorFormat format);

}  // namespace posvec::detail
