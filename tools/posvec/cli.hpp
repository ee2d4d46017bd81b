// Shared plumbing of the posvec command line: subcommand registration, output
// helpers and the stderr progress line. Only the CLI prints or exits.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "posvec/formats.hpp"

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

// One line on stderr when listing the corpus directories skipped something read
// already (CorpusSource::skippedPaths: a symbolic link cycle or two links to one place).
void noteSkippedPaths(const std::vector<std::string>& skipped);

// The sentences of --sentence (in order), then the non-blank lines of --input FILE
// when given (CRLF endings accepted).
std::vector<std::string> sentencesOf(const std::vector<std::string>& given, const std::string& inputFile);

// --unicode-errors, --limit and --no-header (gensim's unicode_errors, limit and
// no_header) for a command that reads a vectors file (defined in cmd_vectors.cpp).
void addVectorLoadOptions(CLI::App* sub, LoadOptions& options);

// For inputs the library reads by path and may seek in (vector files, models):
// "-" is standard input, copied into an unlinked temporary file whose
// /proc/self/fd path is returned (messages show it as <stdin>); any other path
// is returned as it is. Only one input of a command can be standard input.
std::string seekableInput(const std::string& path);

// The closest of `names` to `typed` (edit distance at most a third of its
// length, at least 1 and at most 3), or "" when none is close.
std::string closestName(const std::string& typed, const std::vector<std::string>& names);

// Writes `data` to `path` atomically ("-" means stdout).
void writeOutput(const std::string& path, const std::string& data);

// Library errors name an option by its meaning ("dimension must be ..."): runs
// `f` and rethrows a ConfigError whose message starts with one of the meanings
// in `flags` ({meaning, flag}) with that flag in front ("--dim: dimension must ...").
using FlagNames = std::vector<std::pair<std::string, std::string>>;
void withFlagNames(const FlagNames& flags, const std::function<void()>& f);

// JSON text for stdout. A string that is not UTF-8 (a Latin-1 file name) shows as
// U+FFFD instead of aborting the command with the JSON library's exception.
inline std::string jsonText(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// For unsigned options: CLI11 reads "-1" as 2^64 - 1, so "--dim -1" said "got
// 18446744073709551615" and "--restrict -1" silently meant all words.
inline CLI::Validator notNegative() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const auto first = value.find_first_not_of(" \t");
        if (first != std::string::npos && value[first] == '-')
          return "must not be negative (got " + value + ")";
        return {};
      },
      "", "NOT_NEGATIVE");
}

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
