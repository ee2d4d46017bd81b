/// \file
/// A posvec training state written as fastText's `.bin`: the training settings in
/// fastText's terms and the call that writes a model trained with subwords.
#pragma once

#include <string>

#include "posvec/model_state.hpp"
#include "posvec/subwords.hpp"
#include "posvec/train_config.hpp"

namespace posvec {

/// The fastText record of a training configuration: dimension, window, epochs,
/// minimum count, negatives, loss, skip-gram or CBOW, n-gram lengths and buckets,
/// subsampling threshold (fastText's learning-rate update interval, which posvec
/// has no counterpart for, keeps fastText's default).
/// \throws ConfigError when `config` does not train subwords (a word-only model has
///         no n-gram rows to write) or has more buckets than fastText's 2^31 - 1.
FastTextArgs fastTextArgs(const TrainConfig& config);

/// Writes `model`, trained with subwords, as fastText's `.bin` (saveFastText()):
/// its input matrix holds the word rows then the bucket rows, its configuration
/// (ModelState::config) gives the settings. Atomic; "-" streams to standard output.
/// With hierarchical softmax the output rows are written negated: fastText builds
/// the same Huffman tree from the counts but trains each inner node towards the
/// opposite label (its code, where word2vec.c and posvec use 1 - code).
/// \throws ConfigError when the model was trained on whole words only (the
///         message says subword training is needed); FormatError when its
///         configuration cannot be read; InputError when its matrices do not match the
///         configuration; IoError when the file cannot be written.
void saveFastTextModel(const ModelState& model, const std::string& path);

}  // namespace posvec
