// posvec: one binary, one subcommand per stage. Library errors arrive here as
// posvec exceptions and leave as one "posvec: error: ..." line and an exit code.
// main() itself is in main.cpp, so that the option-parsing fuzzer can call
// runCommandLine.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

void noteSkippedPaths(const std::vector<std::string>& skipped) {
  if (skipped.empty()) return;
  std::fprintf(stderr,
               "posvec: note: %s read once: %s%s (symbolic links lead to the same directory "
               "or file twice)\n",
               skipped.size() == 1 ? "a repeated path is" : "repeated paths are",
               skipped.front().c_str(),
               skipped.size() == 1 ? ""
                                   : (", and " + std::to_string(skipped.size() - 1) + " more")
                                         .c_str());
}

namespace {
// The temporary files that stand for standard input, and how messages name them.
std::string& stdinCopy() {
  static std::string path;
  return path;
}

// Set once something has read standard input: a second reader would find it empty.
bool& stdinTaken() {
  static bool taken = false;
  return taken;
}

void takeStdin() {
  if (stdinTaken()) throw ConfigError("only one input can be '-' (standard input) in one command");
  stdinTaken() = true;
}

std::string shown(std::string message) {
  const std::string& tmp = stdinCopy();
  if (tmp.empty()) return message;
  for (std::size_t at = message.find(tmp); at != std::string::npos; at = message.find(tmp, at + 7))
    message.replace(at, tmp.size(), "<stdin>");
  return message;
}
}  // namespace

std::vector<std::string> sentencesOf(const std::vector<std::string>& given, const std::string& inputFile) {
  std::vector<std::string> texts = given;
  if (inputFile.empty()) return texts;
  if (inputFile == "-") takeStdin();
  // Sentences to encode or attend over are read whole; attention holds a T x T map
  // per sentence, so a file near this size is already far beyond what it can run.
  constexpr std::uint64_t kMaxSentenceFileBytes = std::uint64_t{64} << 20;
  const std::string all = readFile(inputFile, kMaxSentenceFileBytes, "file of sentences");
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

std::string seekableInput(const std::string& path) {
  if (path != "-") return path;
  takeStdin();
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/posvec-stdin-XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw IoError("cannot create a temporary file for standard input in '" +
                  std::string(dir && *dir ? dir : "/tmp") + "': " + std::strerror(errno));
  ::unlink(tmpl.c_str());  // gone with the process, however it ends
  std::vector<char> buf(1 << 16);
  for (;;) {
    const ssize_t got = ::read(STDIN_FILENO, buf.data(), buf.size());
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError(std::string("error while reading standard input: ") + std::strerror(errno));
    }
    for (ssize_t done = 0; done < got;) {
      const ssize_t w = ::write(fd, buf.data() + done, static_cast<std::size_t>(got - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0)
        throw IoError(std::string("cannot copy standard input to a temporary file: ") +
                      std::strerror(errno));
      done += w;
    }
  }
  stdinCopy() = "/proc/self/fd/" + std::to_string(fd);
  return stdinCopy();
}

std::string closestName(const std::string& typed, const std::vector<std::string>& names) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  // A swap of two neighbours ("trian") counts as one edit, not two.
  auto swapped = [](const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    std::size_t first = a.size(), count = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) {
        if (count++ == 0) first = i;
      }
    return count == 2 && first + 1 < a.size() && a[first] == b[first + 1] &&
           a[first + 1] == b[first];
  };
  const std::size_t limit = std::clamp<std::size_t>(typed.size() / 3, 1, 3);
  std::string best;
  std::size_t bestDistance = limit + 1;
  for (const std::string& name : names) {
    const std::size_t d = swapped(typed, name) ? 1 : distance(typed, name);
    if (d < bestDistance || (d == bestDistance && !best.empty() && name.size() < best.size())) {
      best = name;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : std::string();
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

namespace {
// What to change when `command` runs out of memory, as " (try ...)".
std::string outOfMemoryRemedy(const std::string& command) {
  if (command == "train")
    return " (try a smaller --max-vocab or --dim, or a larger --min-count; see "
           "docs/input-limits.md)";
  if (command == "pe" || command == "encode") return " (try a smaller --len or --dim)";
  if (command == "attend") return " (try shorter sentences or fewer --heads)";
  if (command == "similarity" || command == "similar" || command == "analogy" ||
      command == "eval")
    return " (the vectors do not fit: --limit N reads only the first N)";
  if (command == "study") return " (try a smaller --dim or corpus)";
  return "";
}
}  // namespace

int runCommandLine(int argc, char** argv) {
  CLI::App app{"posvec: text to transformer input (tokenizer, skip-gram embeddings, "
               "sinusoidal positions, similarity analysis)"};
  stdinTaken() = false;  // one command line a run (the option fuzzer runs many)
  stdinCopy().clear();
  app.set_version_flag("--version", std::string("posvec ") + POSVEC_VERSION);
  app.add_flag("-q,--quiet", globals().quiet, "No progress output on stderr");
  app.require_subcommand(1);
  app.fallthrough();
  auto cmds = commands();
  std::stable_sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (auto& c : cmds) c.add(app);
  // posvec help [COMMAND]: the same text as posvec COMMAND --help.
  std::string topic;
  auto* help = app.add_subcommand("help", "Show a command's options (posvec help train)");
  help->add_option("command", topic, "The command");
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  auto unknown = [&](const std::string& typed) {
    const std::string near = closestName(typed, names);
    std::cerr << "posvec: error: unknown command '" << typed << "'"
              << (near.empty() ? std::string() : "; did you mean '" + near + "'?")
              << " (see posvec --help)\n";
    return static_cast<int>(ExitCode::Usage);
  };
  // The command is the first argument that is not a global flag; CLI11 alone would
  // answer a typo with "The following arguments were not expected".
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-q" || arg == "--quiet") continue;
    if (!arg.empty() && arg[0] == '-') break;
    if (std::find(names.begin(), names.end(), arg) == names.end()) return unknown(arg);
    break;
  }
  try {
    app.parse(argc, argv);
    if (help->parsed()) {
      if (topic.empty()) {
        // app.help() would show the help of the selected subcommand: "help" itself.
        std::cout << app.get_formatter()->make_help(&app, app.get_name(),
                                                    CLI::AppFormatMode::Normal);
      } else {
        const CLI::App* sub = nullptr;
        for (const CLI::App* s : app.get_subcommands({}))
          if (s->get_name() == topic && s != help) sub = s;
        if (!sub) return unknown(topic);
        std::cout << sub->help(app.get_name());
      }
      return 0;
    }
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
    std::cerr << "posvec: error: " << shown(e.what()) << "\n";
    return static_cast<int>(ExitCode::Usage);
  } catch (const IoError& e) {
    std::cerr << "posvec: error: " << shown(e.what()) << "\n";
    return static_cast<int>(ExitCode::Io);
  } catch (const FormatError& e) {
    std::cerr << "posvec: error: " << shown(e.what()) << "\n";
    return static_cast<int>(ExitCode::Format);
  } catch (const InputError& e) {
    std::cerr << "posvec: error: " << shown(e.what()) << "\n";
    return static_cast<int>(ExitCode::Input);
  } catch (const std::bad_alloc&) {
    // The remedy depends on what the command was holding.
    const auto parsed = app.get_subcommands();
    const std::string cmd = parsed.empty() ? "" : parsed.front()->get_name();
    std::cerr << "posvec: error: out of memory" << outOfMemoryRemedy(cmd) << "\n";
    return static_cast<int>(ExitCode::Failure);
  } catch (const std::exception& e) {
    std::cerr << "posvec: error: " << shown(e.what()) << "\n";
    return static_cast<int>(ExitCode::Failure);
  }
  return 0;
}

}  // namespace posvec::cli
