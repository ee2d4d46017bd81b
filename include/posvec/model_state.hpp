// ModelState: everything needed to continue training (words, counts, both
// weight matrices, the serialised configuration, the epochs done and their
// losses). The trainer produces and resumes it; formats.hpp saves and loads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "posvec/types.hpp"

namespace posvec {

// The trainer owns the meaning of `config` (a serialised TrainConfig, key=value
// lines); the file format just stores it.
struct ModelState {
  std::vector<std::string> words;
  std::vector<std::int64_t> counts;
  MatrixF input;   // word vectors (V x D)
  MatrixF output;  // output weights: negative sampling (V x D) or HS inner nodes ((V-1) x D)
  std::string config;
  std::int32_t epochsDone = 0;
  std::vector<double> epochLosses;  // mean loss of each epoch done
};

}  // namespace posvec
