// Shared plumbing of the posvec command line: subcommand registration, output
// helpers and the stderr progress line. Only the CLI prints or exits.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "posvec/formats.hpp"
#include "posvec/settings.hpp"

namespace posvec {
class Phrases;
class Tokenizer;
}  // namespace posvec

namespace posvec::cli {

// Each cmd_*.cpp registers its subcommands with a static Registrar; `order` sorts --help.
using Registration = std::function<void(CLI::App&)>;
struct Command {
  int order;
  Registration add;
};
std::vector<Command>& commands();
struct Registrar {
  Registrar(int order, Registration add) { commands().push_back({order, std::move(add)}); }
};

// Refuses to write `output` when it is one of `inputs` (the same file by device and
// inode, so "x", "./x" and a hard link all count): the atomic rename would replace
// the input with the output. `option` names the output in the message. Checked
// before any work starts; "-" and outputs that do not exist yet always pass.
void refuseOutputOverInput(const std::string& output, const std::string& option,
                           const std::vector<std::string>& inputs);

// Refuses two outputs of one command that are the same file: the same path, a
// symlink to the other (followed even when its target does not exist yet), or
// one file by device and inode (a hard link). The later write would silently
// replace the earlier. `outputs` are {path, option name}; "-" and "" are skipped.
void refuseSameOutputs(const std::vector<std::pair<std::string, std::string>>& outputs);
// One line on stderr when listing the corpus directories skipped something read
// already (CorpusSource::skippedPaths: a symbolic link cycle or two links to one place).
void noteSkippedPaths(const std::vector<std::string>& skipped);

// The sentences of --sentence (in order), then the non-blank lines of --input FILE
// when given (CRLF endings accepted).
std::vector<std::string> sentencesOf(const std::vector<std::string>& given, const std::string& inputFile);

// --phrases TABLE of encode and attend (a table posvec phrases --save-table wrote).
void addPhrasesOption(CLI::App* sub, std::string& table);
// The tokens of one text for encode and attend: its sentences (for ICU) in one sequence,
// with the phrases of `phrases` joined when given.
std::vector<std::string> textTokens(const Tokenizer& tokenizer, const std::string& text,
                                    const Phrases* phrases);

// --unicode-errors, --limit and --no-header (gensim's unicode_errors, limit and
// no_header) for a command that reads a vectors file (defined in cmd_vectors.cpp).
void addVectorLoadOptions(CLI::App* sub, LoadOptions& options);

// Help text of a command's word-vectors argument: the formats read, a fastText .bin
// included (defined in cmd_vectors.cpp, as are the two helpers below).
extern const char* const kVectorsHelp;

// Adds `word` to `built` (the words built from character n-grams, in order of first
// use) unless it is there already.
void addBuiltWord(std::vector<std::string>& built, const std::string& word);
// One stderr line naming the words built from character n-grams ("note: not in the
// vocabulary, built from character n-grams: a b"); nothing when there are none.
void noteBuiltWords(const std::vector<std::string>& built);

// For inputs the library reads by path and may seek in (vector files, models):
// "-" is standard input, copied into an unlinked temporary file whose
// /proc/self/fd path is returned (messages show it as <stdin>); any other path
// is returned as it is. Only one input of a command can be standard input.
// `checkHead`, when given, sees the first 64 bytes of standard input (fewer if it
// is shorter) before the rest is copied, and may throw: a stream that is not the
// expected kind of file is refused at once, not after copying all of it.
std::string seekableInput(const std::string& path,
                          const std::function<void(std::string_view head)>& checkHead = {});

// The closest of `names` to `typed` (edit distance at most a third of its
// length, at least 1 and at most 3), or "" when none is close.
std::string closestName(const std::string& typed, const std::vector<std::string>& names);

// The error for options of `sub` (its arguments `args`) that are not posvec's: the
// posvec spelling of word2vec.c's command line and of gensim's parameter names, or
// the nearest option; "" when every option is known.
std::string optionHint(const CLI::App* sub, const std::vector<std::string>& args);

// A CLI11 parse error in a user's words, naming the command `sub` (null: none parsed).
std::string parseErrorText(const CLI::ParseError& e, const CLI::App* sub);

// Writes `data` to `path` atomically ("-" means stdout).
void writeOutput(const std::string& path, const std::string& data);

// Library messages also name settings inside the text ("lower the minimum count",
// Error::mentions()): the message of `e` with each of them as this command line
// spells it ("lower --min-count"). Any other exception: its what().
std::string spelledMessage(const std::exception& e);

// JSON text for stdout. A string that is not UTF-8 (a Latin-1 file name) shows as
// U+FFFD instead of aborting the command with the JSON library's exception.
inline std::string jsonText(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// For unsigned options: CLI11 reads "-1" as 2^64 - 1, so "--dim -1" said "got
// 18446744073709551615" and "--restrict -1" silently meant all words.
// A number too large for 64 bits was read as 2^64 - 1 and quoted back as that:
// it is refused here, quoting (the ends of) what was typed.
// For options narrower than 64 bits (after notNegative): a number past `max` is
// refused with its value, where CLI11's conversion would say only "expects a number".
inline CLI::Validator atMost(std::uint64_t max) {
  return CLI::Validator(
      [max](std::string& value) -> std::string {
        std::uint64_t v = 0;
        const char* end = value.data() + value.size();
        const auto [p, ec] = std::from_chars(value.data(), end, v);
        if (ec == std::errc() && p == end && v <= max) return {};
        if (ec == std::errc::invalid_argument || (ec == std::errc() && p != end)) return {};
        return "must be at most " + std::to_string(max) + " (got " + value + ")";
      },
      "", "at most");
}

inline CLI::Validator notNegative() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const std::string shown =
            value.size() <= 40 ? value
                               : value.substr(0, 16) + "..." + value.substr(value.size() - 16) +
                                     ", " + std::to_string(value.size()) + " characters";
        const auto first = value.find_first_not_of(" \t");
        if (first != std::string::npos && value[first] == '-')
          return "must not be negative (got " + shown + ")";
        if (first != std::string::npos && value.find_first_not_of("0123456789", first) ==
                                              std::string::npos) {
          const std::size_t digits = value.find_first_not_of('0', first) == std::string::npos
                                         ? 0
                                         : value.size() - value.find_first_not_of('0', first);
          if (digits > 20 || (digits == 20 && value.substr(value.size() - 20) >
                                                  "18446744073709551615"))
            return "is too large (got " + shown + ")";
        }
        return {};
      },
      "", "NOT_NEGATIVE");
}

// Registers the rows of a settings table (posvec/settings.hpp) that have a flag as
// options of `sub` writing into `s`, with the row's help and the struct's default:
// a bool row is a switch, a choice row takes one of its names (or is a switch when
// the row says so), an unsigned number refuses a sign and values past its type.
// Rows with customFlag are the command's own.
// `skip`: the rows (by name) the command registers itself, when its flag sets more
// than the row (attend's --base is the additive encoding's base as well as the
// rotary one).
template <typename Table, typename S>
void addSettings(CLI::App* sub, const Table& table, S& s,
                 std::initializer_list<std::string_view> skip = {}) {
  forEachSetting(table, [&](const auto& row) {
    using T = std::remove_cvref_t<decltype(s.*(row.member))>;
    if (row.spelled.flag.empty() || row.customFlag) return;
    if (std::find(skip.begin(), skip.end(), row.setting.name) != skip.end()) return;
    const std::string name = (row.spelled.alias.empty() ? std::string()
                                                        : std::string(row.spelled.alias) + ",") +
                             std::string(row.spelled.flag);
    const std::string help(row.help);
    T& value = s.*(row.member);
    if constexpr (std::is_same_v<T, bool> || std::is_enum_v<T>) {
      if (row.flagSwitch) {  // selects the row's value (--hs; --fixed-windows: off)
        sub->add_flag_callback(name, [&value, v = row.flagValue] { value = v; }, help);
      } else if (row.choices.empty()) {  // a bool without names: a switch that turns it on
        if constexpr (std::is_same_v<T, bool>) sub->add_flag(name, value, help);
      } else {
        std::vector<std::string> names;
        for (const auto& c : row.choices) names.emplace_back(c.name);
        sub->add_option_function<std::string>(
               name, [&value, &row](const std::string& text) {
                 S parsed;
                 readSetting(row, text, parsed);  // a member of the names checked below
                 value = parsed.*(row.member);
               },
               help)
            ->check(CLI::IsMember(names))
            ->default_str(settingText(row, s));
      }
    } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>) {
      CLI::Option* opt = sub->add_option(name, value, help)->capture_default_str();
      if constexpr (std::is_unsigned_v<T>) {
        opt->check(notNegative());
        if constexpr (sizeof(T) < sizeof(std::uint64_t))
          opt->check(atMost(std::numeric_limits<T>::max()));
      }
    }
  });
}

// Thrown to end the command with `code` once everything is saved (a training stopped
// by a signal: 130, or the signal's code): main() returns it. `immediate`: the process
// ends at once, without static destructors (a rank under mpirun after MPI is finalised).
struct ExitNow {
  int code = 0;
  bool immediate = false;
};

// Global flags, set by main before a subcommand runs.
struct Globals {
  bool quiet = false;
  // Parse and validate the options, then return before any file is read or
  // anything computed (honoured by pe, encode and study; the option fuzzer sets it).
  bool parseOnly = false;
};
Globals& globals();

// The whole command line: parses argv, runs the subcommand, and turns every
// error into one "posvec: error: ..." line on stderr and the exit code returned.
int runCommandLine(int argc, char** argv);

// A progress line on stderr: redrawn in place on a terminal, otherwise printed at
// most every few seconds. Silent with --quiet.
class ProgressLine {
 public:
  explicit ProgressLine(double minIntervalSeconds = 3.0);
  ~ProgressLine();
  void update(const std::string& text, bool force = false);
  void finish(const std::string& text = {});

 private:
  bool tty_;
  bool active_ = false;
  double interval_;
  double last_ = -1e9;
};

}  // namespace posvec::cli
