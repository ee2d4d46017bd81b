// posvec::Error: messages that name settings by meaning, and where, so that each
// front end can spell them its own way.
#include "posvec/error.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <stdexcept>
#include <string>

#include "exit_code.hpp"

using namespace posvec;

TEST_CASE("error: a message names settings by meaning, and a front end spells them", "[error]") {
  const InputError e(ErrorText("no word occurs at least 5 times; lower ")
                     << Setting{"minCount", "the minimum count"} << " or raise "
                     << Setting{"dim", "the dimension"} << ".");
  // Library users read the meaning.
  CHECK(std::string(e.what()) ==
        "no word occurs at least 5 times; lower the minimum count or raise the dimension.");
  REQUIRE(e.mentions().size() == 2);
  // "no word occurs at least 5 times; lower " is 39 characters, "the minimum count" 17.
  CHECK(e.mentions()[0].offset == 39);
  CHECK(e.mentions()[0].length == 17);
  CHECK(e.mentions()[0].setting == "minCount");
  CHECK(e.mentions()[1].offset == 39 + 17 + 10);
  CHECK(e.mentions()[1].setting == "dim");
  // A front end puts its spelling in their place, longer or shorter than the meaning;
  // a setting it does not know keeps its meaning.
  const std::map<std::string, std::string> flags{{"minCount", "--min-count"}};
  const auto spell = [&](const std::string& s) {
    const auto it = flags.find(s);
    return it == flags.end() ? std::string() : it->second;
  };
  CHECK(e.spelled(spell) == "no word occurs at least 5 times; lower --min-count or raise the dimension.");
  CHECK(e.spelled([](const std::string& s) { return s == "dim" ? "vector_size" : ""; }) ==
        "no word occurs at least 5 times; lower the minimum count or raise vector_size.");
  // Plain messages have no mentions and spell as they are.
  const ConfigError plain("dimension must be between 1 and 100000 (got 0)");
  CHECK(plain.mentions().empty());
  CHECK(plain.spelled(spell) == plain.what());
  // Copies (a rethrow, an exception_ptr) keep the mentions.
  const Error copy = e;
  CHECK(copy.spelled(spell) == e.spelled(spell));
}

TEST_CASE("cli: each error kind has one exit code", "[error][cli]") {
  // The codes the command line documents (tools/posvec/exit_code.hpp; the library
  // knows none): 2 a refused option, 3 a file that cannot be read or written, 4 a
  // malformed file, 5 unusable data, 1 anything else.
  using cli::ExitCode;
  using cli::exitCodeOf;
  CHECK(exitCodeOf(ConfigError("x")) == ExitCode::Usage);
  CHECK(exitCodeOf(IoError("x")) == ExitCode::Io);
  CHECK(exitCodeOf(FormatError("x")) == ExitCode::Format);
  CHECK(exitCodeOf(InputError("x")) == ExitCode::Input);
  CHECK(exitCodeOf(Error("x")) == ExitCode::Failure);
  CHECK(exitCodeOf(std::runtime_error("x")) == ExitCode::Failure);
  CHECK(static_cast<int>(ExitCode::Failure) == 1);
  CHECK(static_cast<int>(ExitCode::Usage) == 2);
  CHECK(static_cast<int>(ExitCode::Io) == 3);
  CHECK(static_cast<int>(ExitCode::Format) == 4);
  CHECK(static_cast<int>(ExitCode::Input) == 5);
}

TEST_CASE("error: a kind travels as a value", "[error]") {
  // A kind sent as an integer (between MPI ranks) comes back as the same exception.
  for (const ErrorKind kind : {ErrorKind::Other, ErrorKind::Config, ErrorKind::Io,
                               ErrorKind::Format, ErrorKind::Input}) {
    const auto sent = static_cast<ErrorKind>(static_cast<int>(kind));
    try {
      throwError(sent, "message");
    } catch (const Error& e) {
      CHECK(errorKind(e) == kind);
      CHECK(std::string(e.what()) == "message");
    }
  }
}
