// The comparison of positions as models use them today: the paper's sinusoidal
// encoding, plain RoPE, each rotary scaling rule and ALiBi, measured the way the
// study measures the 2017 encodings (similarity of two positions against their
// distance, and the study pair under each).
#pragma once

#include "posvec/embeddings.hpp"
#include "posvec/study.hpp"
#include "posvec/study_results.hpp"

namespace posvec {

// Fills a PositionComparison for `embeddings` (the study pair's vectors) and the
// comparison options of `options` (validated by StudyOptions::validate).
PositionComparison comparePositions(const Embeddings& embeddings, const StudyOptions& options);

}  // namespace posvec
