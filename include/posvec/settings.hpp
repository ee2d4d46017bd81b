/// \file
/// Settings tables: each options struct lists its settings once, a row each
/// (member, key in the configuration text, meaning in messages, range, help, and
/// the front ends' spellings); its default is the member's initializer. validate()'s
/// range checks and their messages, the model file's configuration text, the
/// command line's options, the Python keywords and the docs' option tables all
/// follow from the rows (docs/design/architecture.md, "Settings tables").
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "posvec/error.hpp"

namespace posvec {

/// When the configuration text (TrainConfig::serialize) has a setting's line.
enum class Stored {
  Always,     ///< always
  IfChanged,  ///< only when it differs from the default (files older versions still read)
  IfApplies,  ///< only when the row's `applies` holds (subword settings for subword models)
  Never       ///< a property of the run or of the machine, not of the model
};

/// The range a number must be in, and the words of the message that refuses the rest.
/// "dimension must be between 1 and 100000 (got 0)"; "subsampling threshold must be in
/// [0, 1) (0 disables subsampling; got 2)"; "n-gram buckets must be at least 1 (got 0)".
struct Bounds {
  bool checked = false;     ///< false: any value of the member's type
  long double lo = 0;       ///< lowest value (or the open end)
  long double hi = 0;       ///< highest value (or the open end), when hasHi
  bool hasHi = true;        ///< false: no upper end
  bool loOpen = false;      ///< lo itself is refused: "in (lo, hi]"
  bool hiOpen = false;      ///< hi itself is refused: "in [lo, hi)"
  std::string_view loNote;  ///< what lo means, after it: "between 0 (all cores) and 4096"
  std::string_view note;    ///< a hint before the value: "(word2vec's is 0.75; got 11)"
};

/// [lo, hi], with what lo means and a hint for the message.
constexpr Bounds between(long double lo, long double hi, std::string_view loNote = {},
                         std::string_view note = {}) {
  return {true, lo, hi, true, false, false, loNote, note};
}
/// [lo, infinity), with what lo means.
constexpr Bounds atLeast(long double lo, std::string_view loNote = {}) {
  return {true, lo, 0, false, false, false, loNote, {}};
}
/// An interval written with its brackets, "(0, 10]" or "[0, 1)", with a hint.
constexpr Bounds interval(char open, long double lo, long double hi, char close,
                          std::string_view note = {}) {
  return {true, lo, hi, true, open == '(', close == ')', {}, note};
}

/// One value of an enumeration setting and its name in text ("batched").
template <typename E>
struct Choice {
  E value;                ///< the value
  std::string_view name;  ///< its name in configuration text, flags and keywords
};

/// How the front ends spell a setting, where they take it.
struct Spelling {
  std::string_view flag = {};     ///< the command line's option ("--min-count"), "" when it has none
  std::string_view keyword = {};  ///< the Python keyword ("min_count"), "" when it has none
  /// What the command line writes where a message names the setting, when not the
  /// flag alone ("--memory-limit or POSVEC_MEMORY_LIMIT").
  std::string_view flagInText = {};
  std::string_view alias = {};  ///< the flag's one-letter form ("-t"), "" when none
  /// What Python writes where a message names the setting, when not the keyword
  /// alone ("no_header=True", "unicode_errors=").
  std::string_view keywordInText = {};
};

/// What a switch selects: the value for a number, bool or enumeration; nothing for
/// a member no switch sets (a string, a list), which keeps the tables constexpr.
struct NoSwitchValue {
  /// All equal: there is one value.
  friend constexpr bool operator==(NoSwitchValue, NoSwitchValue) { return true; }
};
/// The type of SettingRow::flagValue and keywordValue for a member of type T.
template <typename T>
using SwitchValue =
    std::conditional_t<std::is_arithmetic_v<T> || std::is_enum_v<T>, T, NoSwitchValue>;

/// One setting of the options struct S, a member of type T.
template <typename S, typename T>
struct SettingRow {
  T S::*member;              ///< the struct's member; its initializer is the default
  Setting setting;           ///< the member's name and its meaning in messages ("minimum count")
  std::string_view key = {};  ///< its key in configuration text ("min_count"), "" when none
  Spelling spelled = {};      ///< the front ends' spellings
  std::string_view help = {};  ///< what it does, in a line (the command line's help)
  Bounds bounds = {};        ///< the range validate() checks
  /// When the setting takes part (checked, stored with Stored::IfApplies); null: always.
  bool (*applies)(const S&) = nullptr;
  /// The names of an enumeration's values (or of a bool's, when it is not 0/1).
  std::span<const Choice<T>> choices = {};
  Stored stored = Stored::Always;           ///< when the configuration text has it
  /// A command-line switch without a value selecting `flagValue` (`--hs`, `--cbow`);
  /// false: the flag takes a value (a bool setting's flag is always a switch).
  bool flagSwitch = false;
  SwitchValue<T> flagValue{};  ///< what the switch selects
  /// A Python keyword taking 0 or 1, where 1 selects `keywordValue` and 0 the other
  /// of two choices (gensim's `sg`, `hs`); false: the keyword takes the choice's name.
  bool keywordSwitch = false;
  SwitchValue<T> keywordValue{};  ///< what the keyword's 1 selects
  /// The command line reads the flag itself (a size with units): registering
  /// the table's flags passes it over.
  bool customFlag = false;
  /// The Python package's default where it differs from the struct's (gensim's
  /// vector_size 100); "" when the same. Text, as Python writes it.
  std::string_view keywordDefault = {};
};

/// A setting that is a function's argument, not an options struct's member (the
/// positions an encoder's matrix covers, the format a file is written in): named
/// once, with its meaning and spellings, for the messages that refuse it.
struct ArgumentRow {
  Setting setting;             ///< its name and meaning in messages ("the start position")
  Spelling spelled = {};       ///< the front ends' spellings
  std::string_view help = {};  ///< what it does, in a line
};

/// Calls f(row) for each row of a table (a std::tuple of SettingRow or ArgumentRow).
template <typename Table, typename F>
constexpr void forEachSetting(const Table& table, F&& f) {
  std::apply([&](const auto&... row) { (f(row), ...); }, table);
}

/// The Setting (name and meaning) of the row of `table` named `name` ({} when none).
template <typename Table>
constexpr Setting settingNamed(const Table& table, std::string_view name) {
  Setting found{};
  forEachSetting(table, [&](const auto& row) {
    if (row.setting.name == name) found = row.setting;
  });
  return found;
}

/// The text of a number as messages and configuration text write it: integers in
/// full, doubles with 17 significant digits (they read back as the same double).
std::string settingNumberText(long double value, bool integer);

/// Throws the ConfigError about `setting` that refuses `got` for `bounds`
/// ("dimension must be between 1 and 100000 (got 0)"; Error::about() names it).
[[noreturn]] void refuseSetting(const Setting& setting, const Bounds& bounds,
                                const std::string& got);

/// The text of a row's value in `s`: a number, 0/1 for a bool, a choice's name.
template <typename S, typename T>
std::string settingText(const SettingRow<S, T>& row, const S& s) {
  const T& v = s.*(row.member);
  if constexpr (std::is_enum_v<T> || std::is_same_v<T, bool>) {
    for (const auto& c : row.choices)
      if (c.value == v) return std::string(c.name);
    if constexpr (std::is_same_v<T, bool>) return v ? "1" : "0";
    return {};
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return settingNumberText(static_cast<long double>(v), false);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else {
    return {};  // a list (the study's placed words): its own text, written by its owner
  }
}

/// Reads `text` into the row's member of `s`; false when it is not a value of the
/// setting's type (a number, 0/1, a choice's name). The range is validate()'s.
template <typename S, typename T>
bool readSetting(const SettingRow<S, T>& row, std::string_view text, S& s);

/// Checks the row's range for `s` (when it applies); throws refuseSetting's error.
template <typename S, typename T>
void checkSetting(const SettingRow<S, T>& row, const S& s) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (!row.bounds.checked || (row.applies && !row.applies(s))) return;
    const auto v = static_cast<long double>(s.*(row.member));
    const Bounds& b = row.bounds;
    // Written so that NaN fails every comparison and is refused.
    const bool aboveLo = b.loOpen ? v > b.lo : v >= b.lo;
    const bool belowHi = !b.hasHi || (b.hiOpen ? v < b.hi : v <= b.hi);
    if (!(aboveLo && belowHi)) refuseSetting(row.setting, b, settingText(row, s));
  }
}

/// Checks every row of `table` for `s`, in the table's order.
template <typename Table, typename S>
void checkSettings(const Table& table, const S& s) {
  forEachSetting(table, [&](const auto& row) { checkSetting(row, s); });
}

/// Whether the configuration text of `s` has the row's line.
template <typename S, typename T>
bool settingStored(const SettingRow<S, T>& row, const S& s) {
  switch (row.stored) {
    case Stored::Always:
      return !row.key.empty();
    case Stored::IfChanged:
      return !row.key.empty() && !(s.*(row.member) == S{}.*(row.member));
    case Stored::IfApplies:
      return !row.key.empty() && (!row.applies || row.applies(s));
    case Stored::Never:
      break;
  }
  return false;
}

/// key=value lines of the rows of `table` that `s` stores, in the table's order.
template <typename Table, typename S>
std::string settingsText(const Table& table, const S& s) {
  std::string out;
  forEachSetting(table, [&](const auto& row) {
    if (settingStored(row, s)) out += std::string(row.key) + "=" + settingText(row, s) + "\n";
  });
  return out;
}

/// Finds the row of `table` whose key is `key` and reads `value` into `s`.
/// Returns 0 when no row has the key, 1 when read, -1 when the value is invalid.
template <typename Table, typename S>
int readSettingByKey(const Table& table, std::string_view key, std::string_view value, S& s) {
  int result = 0;
  forEachSetting(table, [&](const auto& row) {
    if (result == 0 && !row.key.empty() && row.key == key && row.stored != Stored::Never)
      result = readSetting(row, value, s) ? 1 : -1;
  });
  return result;
}

namespace detail {
bool readNumber(std::string_view text, long long& out);
bool readNumber(std::string_view text, unsigned long long& out);
bool readNumber(std::string_view text, double& out);
}  // namespace detail

template <typename S, typename T>
bool readSetting(const SettingRow<S, T>& row, std::string_view text, S& s) {
  T& v = s.*(row.member);
  if constexpr (std::is_enum_v<T> || std::is_same_v<T, bool>) {
    for (const auto& c : row.choices)
      if (c.name == text) {
        v = c.value;
        return true;
      }
    if constexpr (std::is_same_v<T, bool>) {
      if (row.choices.empty() && (text == "0" || text == "1")) {
        v = text == "1";
        return true;
      }
    }
    return false;
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    long long n = 0;
    if (!detail::readNumber(text, n) || n < static_cast<long long>(std::numeric_limits<T>::min()) ||
        n > static_cast<long long>(std::numeric_limits<T>::max()))
      return false;
    v = static_cast<T>(n);
    return true;
  } else if constexpr (std::is_integral_v<T>) {
    unsigned long long n = 0;
    if (!detail::readNumber(text, n) ||
        n > static_cast<unsigned long long>(std::numeric_limits<T>::max()))
      return false;
    v = static_cast<T>(n);
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    double d = 0;
    if (!detail::readNumber(text, d)) return false;
    v = static_cast<T>(d);
    return true;
  } else if constexpr (std::is_same_v<T, std::string>) {
    v = std::string(text);
    return true;
  } else {
    return false;  // a list: read by its owner
  }
}

}  // namespace posvec
