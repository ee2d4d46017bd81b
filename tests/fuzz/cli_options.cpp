// Fuzzes the command line's option parsing for `pe`, `encode` and `study`:
// CLI11 plus each command's own checks, in parse-only mode (nothing is read
// or computed). Input: one byte choosing the subcommand, then its arguments
// separated by NUL bytes. Every outcome is a success, or one "posvec: error:"
// message and the usage (2) or I/O (3, study's shipped corpus) exit code; exit
// code 1 means an exception that is not a posvec error got out of a command.
#include <iostream>
#include <sstream>
#include <vector>

#include "cli.hpp"
#include "fuzz_util.hpp"

namespace {

// Sends std::cout / std::cerr into a string while alive.
class Capture {
 public:
  explicit Capture(std::ostream& stream) : stream_(stream), old_(stream.rdbuf(text_.rdbuf())) {}
  ~Capture() { stream_.rdbuf(old_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostream& stream_;
  std::ostringstream text_;
  std::streambuf* old_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posvec;
  if (size < 1) return 0;
  static const char* const kCommands[] = {"pe", "encode", "study"};
  std::vector<std::string> args = {"posvec", kCommands[data[0] % 3]};
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  for (std::size_t pos = 0; !rest.empty();) {
    const std::size_t end = rest.find('\0', pos);
    args.emplace_back(rest.substr(pos, end == std::string_view::npos ? end : end - pos));
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  cli::globals() = {};
  cli::globals().parseOnly = true;
  int rc = 0;
  std::string err;
  {
    Capture out(std::cout), errors(std::cerr);
    rc = cli::runCommandLine(static_cast<int>(args.size()), argv.data());
    err = errors.text();
  }
  if (rc == 0) {
    fuzz::check(err.empty(), "success with a message on stderr: " + err);
    return 0;
  }
  fuzz::check(err.rfind("posvec: error: ", 0) == 0 && err.back() == '\n',
              "a failure without its 'posvec: error:' line: " + err);
  fuzz::check(rc == 2 || rc == 3, "exit code " + std::to_string(rc) + " for: " + err);
  // A negative count read into an unsigned option must not be reported as
  // 2^64 - n, a number the user never typed.
  if (err.find("18446744073") != std::string::npos) {
    bool typed = false;
    for (const std::string& a : args) typed = typed || a.find("18446744073") != std::string::npos;
    fuzz::check(typed, "a message quotes a wrapped negative number: " + err);
  }
  return 0;
}
