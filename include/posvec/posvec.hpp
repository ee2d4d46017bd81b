// posvec: text to transformer input. One include for the whole library.
#pragma once

#include "posvec/analysis.hpp"
#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/evaluation.hpp"
#include "posvec/formats.hpp"
#include "posvec/io.hpp"
#include "posvec/positional.hpp"
#include "posvec/report.hpp"
#include "posvec/study.hpp"
#include "posvec/study_results.hpp"
#include "posvec/tokenizer.hpp"
#include "posvec/train_config.hpp"
#include "posvec/trainer.hpp"
#include "posvec/types.hpp"
#include "posvec/vocabulary.hpp"
