// posvec: one binary, one subcommand per stage. Library errors arrive here as
// posvec exceptions and leave as one "posvec: error: ..." line and an exit code.
// main() itself is in main.cpp, so that the option-parsing fuzzer can call
// runCommandLine.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"

namespace posvec::cli {

std::vector<Command>& commands() {
  static std::vector<Command> list;
  return list;
}

Globals& globals() {
  static Globals g;
  return g;
}

void refuseOutputOverInput(const std::string& output, const std::string& option,
                           const std::vector<std::string>& inputs) {
  struct stat out {};
  if (output.empty() || output == "-" || ::stat(output.c_str(), &out) != 0) return;
  for (const std::string& input : inputs) {
    struct stat in {};
    if (input.empty() || input == "-" || ::stat(input.c_str(), &in) != 0) continue;
    if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      throw ConfigError(option + " '" + output + "' is the input file '" + input +
                        "'; writing it would replace the input: choose another output file");
  }
}

std::vector<std::string> sentencesOf(const std::vector<std::string>& given, const std::string& inputFile) {
  std::vector<std::string> texts = given;
  if (inputFile.empty()) return texts;
  const std::string all = readFile(inputFile);
  std::size_t pos = 0;
  while (pos < all.size()) {
    std::size_t nl = all.find('\n', pos);
    if (nl == std::string::npos) nl = all.size();
    std::string line = all.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) texts.push_back(std::move(line));
    pos = nl + 1;
  }
  return texts;
}

void writeOutput(const std::string& path, const std::string& data) {
  writeToPathOrStdout(path, [&](std::ostream& out) {
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  });
}

void withFlagNames(const FlagNames& flags, const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    for (const auto& [meaning, flag] : flags)
      if (message.rfind(meaning, 0) == 0) throw ConfigError(flag + ": " + message);
    throw;
  }
}

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

ProgressLine::ProgressLine(double minIntervalSeconds)
    : tty_(isatty(STDERR_FILENO) != 0), interval_(minIntervalSeconds) {}

ProgressLine::~ProgressLine() {
  if (active_ && tty_) std::fputc('\n', stderr);
}

void ProgressLine::update(const std::string& text, bool force) {
  if (globals().quiet) return;
  const double t = now();
  if (tty_) {
    if (!force && t - last_ < 0.1) return;
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
  } else {
    if (!force && t - last_ < interval_) return;
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
  last_ = t;
  active_ = true;
}

void ProgressLine::finish(const std::string& text) {
  if (globals().quiet) return;
  if (!text.empty()) update(text, true);
  if (active_ && tty_) std::fputc('\n', stderr);
  active_ = false;
}

int runCommandLine(int argc, char** argv) {
  CLI::App app{"posvec: text to transformer input (tokenizer, skip-gram embeddings, "
               "sinusoidal positions, similarity analysis)"};
  app.set_version_flag("--version", std::string("posvec ") + POSVEC_VERSION);
  app.add_flag("-q,--quiet", globals().quiet, "No progress output on stderr");
  app.require_subcommand(1);
  app.fallthrough();
  auto cmds = commands();
  std::stable_sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (auto& c : cmds) c.add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "posvec: error: " << e.what() << " (see posvec --help)\n";
    return static_cast<int>(ExitCode::Usage);
  } catch (const ConfigError& e) {
    std::cerr << "posvec: error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::Usage);
  } catch (const IoError& e) {
    std::cerr << "posvec: error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::Io);
  } catch (const FormatError& e) {
    std::cerr << "posvec: error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::Format);
  } catch (const InputError& e) {
    std::cerr << "posvec: error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::Input);
  } catch (const std::bad_alloc&) {
    std::cerr << "posvec: error: out of memory (try a smaller --dim, --max-vocab or --len)\n";
    return static_cast<int>(ExitCode::Failure);
  } catch (const std::exception& e) {
    std::cerr << "posvec: error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::Failure);
  }
  return 0;
}

}  // namespace posvec::cli
