// posvec: text to transformer input. One include for the whole library.
#pragma once

#include "posvec/analysis.hpp"
#include "posvec/corpus.hpp"
#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/evaluation.hpp"
#include "posvec/formats.hpp"
#include "posvec/io.hpp"
#include "posvec/model_state.hpp"
#include "posvec/positional.hpp"
#include "posvec/report.hpp"
#include "posvec/tokenizer.hpp"
#include "posvec/train_config.hpp"
#include "posvec/trainer.hpp"
#include "posvec/types.hpp"
#include "posvec/vector_math.hpp"
#include "posvec/vocabulary.hpp"
