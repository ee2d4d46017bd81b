// posvec: text to transformer input. One include for the whole library.
#pragma once

#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "posvec/types.hpp"
