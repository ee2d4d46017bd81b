// posvec::Error and its kinds: everything the library throws. Messages say what
// went wrong and what to do about it; the CLI maps each kind to an exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace posvec {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file could not be opened, read, written or renamed.
class IoError : public Error {
 public:
  using Error::Error;
};

// A file's content is not what its format requires (corrupt, truncated, wrong magic).
class FormatError : public Error {
 public:
  using Error::Error;
};

// The data is unusable: invalid UTF-8, empty corpus, unknown word, ...
class InputError : public Error {
 public:
  using Error::Error;
};

// An option or parameter is out of range or inconsistent.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// Exit codes used by the command line for each kind (0 is success).
enum class ExitCode : int { Failure = 1, Usage = 2, Io = 3, Format = 4, Input = 5 };

}  // namespace posvec
