// Shared plumbing of the posvec command line: subcommand registration, output
// helpers and the stderr progress line. Only the CLI prints or exits.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

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

// Writes `data` to `path` atomically ("-" means stdout).
void writeOutput(const std::string& path, const std::string& data);

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
