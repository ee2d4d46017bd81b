/// \file
/// posvec::Error and its kinds: everything the library throws. Messages say what
/// went wrong and what to do about it; the CLI maps each kind to an exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace posvec {

/// The base of every exception the library throws on purpose. what() is one
/// line that names the file, value or setting concerned (a setting by its meaning,
/// e.g. "dimension", never a command-line flag) and, where there is one, the fix.
/// Catch Error to handle all of them; catch a kind below to tell them apart.
/// Besides these the library lets std::bad_alloc through (and, rarely, another
/// std::exception from the standard library).
class Error : public std::runtime_error {
 public:
  /// Constructs with the message what() returns.
  using std::runtime_error::runtime_error;
};

/// A file could not be opened, read, written or renamed (missing, a directory,
/// no permission, disk full, a corrupt compressed stream); the message names the path.
class IoError : public Error {
 public:
  /// Constructs with the message what() returns.
  using Error::Error;
};

/// A file's content is not what its format requires (corrupt, truncated, wrong
/// magic, unsupported version); the message names the path and what is wrong.
class FormatError : public Error {
 public:
  /// Constructs with the message what() returns.
  using Error::Error;
};

/// The data is unusable: invalid UTF-8, empty corpus, unknown word, mismatched
/// sizes of arguments, ...
class InputError : public Error {
 public:
  /// Constructs with the message what() returns.
  using Error::Error;
};

/// An option or parameter is out of range or inconsistent, or the work it asks
/// for cannot be done here (would not fit in memory, needs MPI in the build).
/// Thrown by the validate() of every option struct, before any work starts.
class ConfigError : public Error {
 public:
  /// Constructs with the message what() returns.
  using Error::Error;
};

/// Exit codes used by the command line for each kind (0 is success). The library
/// itself never exits; front ends may use the same mapping.
enum class ExitCode : int { Failure = 1, Usage = 2, Io = 3, Format = 4, Input = 5 };
/// \var ExitCode::Failure
/// Any other failure (out of memory, an unexpected error).
/// \var ExitCode::Usage
/// A ConfigError, or a command line that could not be parsed.
/// \var ExitCode::Io
/// An IoError.
/// \var ExitCode::Format
/// A FormatError.
/// \var ExitCode::Input
/// An InputError.

}  // namespace posvec
