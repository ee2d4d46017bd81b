// The exit codes of the posvec command (0 is success). The library never exits and
// knows no exit code: it throws an error of a kind (posvec::ErrorKind), and this is
// the one place that maps a kind to its code. A refused option is a usage error (2),
// like a command-line syntax error.
#pragma once

#include <exception>

#include "posvec/error.hpp"

namespace posvec::cli {

enum class ExitCode : int {
  Failure = 1,  // any other failure (out of memory, an unexpected error)
  Usage = 2,    // a ConfigError, or a command line that could not be parsed
  Io = 3,       // an IoError
  Format = 4,   // a FormatError
  Input = 5     // an InputError
};

// The exit code of an error of `kind`.
constexpr ExitCode exitCode(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::Config:
      return ExitCode::Usage;
    case ErrorKind::Io:
      return ExitCode::Io;
    case ErrorKind::Format:
      return ExitCode::Format;
    case ErrorKind::Input:
      return ExitCode::Input;
    default:
      return ExitCode::Failure;
  }
}

// The exit code of the exception `e`.
inline ExitCode exitCodeOf(const std::exception& e) noexcept { return exitCode(errorKind(e)); }

}  // namespace posvec::cli
