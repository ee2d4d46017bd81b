/// \file
/// posvec: text to transformer input. One include for the whole library.
/// Link the CMake target posvec::posvec (or use `pkg-config --cflags --libs posvec`).
#pragma once

/// \namespace posvec
/// Everything the library declares. Its stages, lowest first: base (error.hpp,
/// io.hpp, types.hpp, vector_math.hpp), text (tokenizer.hpp, corpus.hpp,
/// vocabulary.hpp), vectors (embeddings.hpp, evaluation.hpp, formats.hpp,
/// model_state.hpp), train (train_config.hpp, trainer.hpp, distributed.hpp),
/// transformer (positional.hpp, attention.hpp) and analysis (analysis.hpp,
/// study.hpp, study_results.hpp, report.hpp). Failures are thrown as the kinds of
/// posvec::Error; nothing prints or exits.

#include "posvec/analysis.hpp"
#include "posvec/attention.hpp"
#include "posvec/corpus.hpp"
#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/evaluation.hpp"
#include "posvec/fasttext_export.hpp"
#include "posvec/formats.hpp"
#include "posvec/io.hpp"
#include "posvec/memory_estimate.hpp"
#include "posvec/model_state.hpp"
#include "posvec/positional.hpp"
#include "posvec/report.hpp"
#include "posvec/rope.hpp"
#include "posvec/setting_tables.hpp"
#include "posvec/settings.hpp"
#include "posvec/study.hpp"
#include "posvec/study_results.hpp"
#include "posvec/subwords.hpp"
#include "posvec/tokenizer.hpp"
#include "posvec/train_config.hpp"
#include "posvec/trainer.hpp"
#include "posvec/types.hpp"
#include "posvec/vector_math.hpp"
#include "posvec/vocabulary.hpp"
