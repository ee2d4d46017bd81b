// The rotary-configuration options shared by `posvec rope` and `posvec attend`:
// a config.json and/or the same settings spelled as options (an option given
// overrides the file's value).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "posvec/rope.hpp"

namespace posvec::cli {

struct RopeCliOptions {
  std::string config;   // config.json path ("" : options only)
  RopeConfig defaults;  // the values of options not given
  std::string type = "default";
  std::int64_t dim = 128;
  double partial = 1.0;
  double base = 10000.0;
  double factor = 1.0;
  std::int64_t maxPosition = 2048;
  std::int64_t originalMaxPosition = 0;
  double attentionFactor = 0;
  double betaFast = 32, betaSlow = 1;
  double lowFreqFactor = 1, highFreqFactor = 4;
  std::vector<double> shortFactor, longFactor;
  std::int64_t seqLen = 0;
  std::vector<CLI::Option*> given;  // the options above, to ask which were given
};

// Adds --type --dim --partial-rotary-factor --base --factor --max-position
// --original-max-position --attention-factor --beta-fast --beta-slow
// --low-freq-factor --high-freq-factor --short-factor --long-factor --seq-len.
// `dimName` spells the head-size option ("--dim" for rope; "" for none: attend
// rotates its own heads); `baseOption` false leaves --base to the caller.
void addRopeOptions(CLI::App* sub, RopeCliOptions& o, const std::string& dimName, bool baseOption);

// The configuration: the file's (when given) with the given options on top, or the
// options alone. `anyGiven` tells whether a config or any scaling option was given.
RopeConfig resolveRopeConfig(const RopeCliOptions& o, bool* anyGiven = nullptr);

}  // namespace posvec::cli
