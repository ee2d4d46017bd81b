/// \file
/// Every settings table (settings.hpp) in one list, for the front ends that look a
/// setting up by the name a message gives (Error::about(), Error::mentions()): the
/// CLI's flags and Python's keywords come from the row of that name.
#pragma once

#include <string>
#include <string_view>

#include "posvec/attention.hpp"
#include "posvec/distributed.hpp"
#include "posvec/formats.hpp"
#include "posvec/phrases.hpp"
#include "posvec/positional.hpp"
#include "posvec/rope.hpp"
#include "posvec/study.hpp"
#include "posvec/tokenizer.hpp"
#include "posvec/train_config.hpp"

namespace posvec {

/// Calls f(table) for each settings table, the options structs' and the arguments'.
template <typename F>
void forEachSettingsTable(F&& f) {
  f(kTrainSettings);
  f(kSyncSettings);
  f(kTokenizerSettings);
  f(kLoadSettings);
  f(kSaveArguments);
  f(kPositionalSettings);
  f(kPositionArguments);
  f(kRopeSettings);
  f(kRopeArguments);
  f(kAttentionSettings);
  f(kLookupArguments);
  f(kStudySettings);
  f(kStudyArguments);
  f(kPhraseSettings);
  f(kPhraseArguments);
}

/// The spelling of the setting named `name` (Setting::name) in the first table that
/// has it; nullptr when none does.
inline const Spelling* settingSpelling(std::string_view name) {
  const Spelling* found = nullptr;
  forEachSettingsTable([&](const auto& table) {
    forEachSetting(table, [&](const auto& row) {
      if (!found && row.setting.name == name) found = &row.spelled;
    });
  });
  return found;
}

}  // namespace posvec
