// The rotary-configuration options shared by `posvec rope` and `posvec attend`:
// a config.json and/or the same settings spelled as options (an option given
// overrides the file's value).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "posvec/rope.hpp"

namespace posvec::cli {

struct RopeCliOptions {
  std::string config;  // config.json path ("" : options only)
  RopeConfig values;   // what the options read (the rows of kRopeSettings)
  std::string type = ropeTypeName(RopeConfig{}.type);  // --type, read by parseRopeType
  // Each registered option with its row's name, to ask which were given.
  std::vector<std::pair<std::string_view, CLI::Option*>> given;
};

// Adds the flags of the rows of kRopeSettings (--type --dim --partial-rotary-factor
// --base --factor --max-position ...), with their help. `dimName` spells the head-size option
// ("--dim" for rope; "" for none: attend rotates its own heads); `baseOption` false leaves --base
// to the caller.
void addRopeOptions(CLI::App* sub, RopeCliOptions& o, const std::string& dimName, bool baseOption);

// The configuration: the file's (when given) with the given options on top, or the
// options alone. `anyGiven` tells whether a config or any scaling option was given.
RopeConfig resolveRopeConfig(const RopeCliOptions& o, bool* anyGiven = nullptr);

}  // namespace posvec::cli
