// The vocabulary the evaluation harnesses score against: a few words whose
// upper-casing collides (Case/case, ß/SS, İ/i̇), a zero vector, and near
// duplicates, so case folding, restriction and ties are all reached.
#pragma once

#include "fuzz_util.hpp"
#include "posvec/evaluation.hpp"

namespace posvec::fuzz {

inline const Embeddings& evalVocabulary() {
  static const Embeddings e = [] {
    const std::vector<std::string> words = {"the",  "a", "man", "woman", "king", "queen", "Case",
                                            "case", "ß", "SS",  "İ",     "i̇",    "zero",  "x"};
    MatrixF v(static_cast<Eigen::Index>(words.size()), 3);
    for (Eigen::Index r = 0; r < v.rows(); ++r)
      v.row(r) << static_cast<float>(r % 5) - 2.0f, static_cast<float>(r % 3), 1.0f / (1.0f + r);
    v.row(12).setZero();
    v.row(13) = v.row(0);
    return Embeddings(words, v);
  }();
  return e;
}

// First byte: restrictVocab (low nibble, 0-15 words) and case folding (bit 4).
inline EvalOptions evalOptions(std::uint8_t byte) {
  EvalOptions o;
  o.restrictVocab = byte & 15;
  o.caseInsensitive = (byte & 16) != 0;
  return o;
}

}  // namespace posvec::fuzz
