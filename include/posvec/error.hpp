// posvec::Error and its kinds: everything the library throws. Messages say what
// went wrong and what to do about it; each kind has one exit code (exitCode()).
// A message names a setting by its meaning ("lower the minimum count") and
// records where (mentions()), so each front end can put its own spelling there
// (the CLI a flag, Python a keyword): the library knows no front end.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace posvec {

// A setting as an error message names it: the option struct's member name
// ("minCount", "dim", "unk") and the words that stand for it in the message
// ("the minimum count").
struct Setting {
  std::string_view name;
  std::string_view meaning;
};

// Where a message names a setting: what()[offset, offset + length) is its meaning.
struct SettingMention {
  std::size_t offset = 0;
  std::size_t length = 0;
  std::string setting;
};

// An error message being built: text, and the settings it names by meaning.
//   throw InputError(ErrorText("no word is frequent enough; lower ")
//                    << Setting{"minCount", "the minimum count"});
class ErrorText {
 public:
  ErrorText() = default;
  explicit ErrorText(std::string_view text) : text_(text) {}
  ErrorText& operator<<(std::string_view text) {
    text_ += text;
    return *this;
  }
  ErrorText& operator<<(const Setting& s) {
    mentions_.push_back({text_.size(), s.meaning.size(), std::string(s.name)});
    text_ += s.meaning;
    return *this;
  }
  const std::string& text() const { return text_; }
  const std::vector<SettingMention>& mentions() const { return mentions_; }

 private:
  std::string text_;
  std::vector<SettingMention> mentions_;
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  explicit Error(const char* message) : std::runtime_error(message) {}
  explicit Error(const ErrorText& message)
      : std::runtime_error(message.text()), mentions_(message.mentions()) {}
  // The settings the message names by meaning, in order.
  const std::vector<SettingMention>& mentions() const { return mentions_; }
  // The message with each mentioned setting in a front end's words: `spelling`
  // returns them for a setting's name ("minCount" -> "--min-count"), or "" to keep
  // the meaning.
  std::string spelled(const std::function<std::string(const std::string&)>& spelling) const {
    std::string out = what();
    // From the last mention back, so the earlier offsets stay valid.
    for (auto m = mentions_.rbegin(); m != mentions_.rend(); ++m) {
      const std::string word = spelling(m->setting);
      if (!word.empty() && m->offset + m->length <= out.size())
        out.replace(m->offset, m->length, word);
    }
    return out;
  }

 private:
  std::vector<SettingMention> mentions_;
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

// The kinds above as values: to send an error between processes (distributed
// training) and to choose an exit code. Other: any other exception.
enum class ErrorKind : int { Other = 0, Config = 1, Io = 2, Format = 3, Input = 4 };

inline ErrorKind errorKind(const std::exception& e) noexcept {
  if (dynamic_cast<const ConfigError*>(&e)) return ErrorKind::Config;
  if (dynamic_cast<const IoError*>(&e)) return ErrorKind::Io;
  if (dynamic_cast<const FormatError*>(&e)) return ErrorKind::Format;
  if (dynamic_cast<const InputError*>(&e)) return ErrorKind::Input;
  return ErrorKind::Other;
}

// Throws the exception of `kind` (Other: a plain Error) with `message`.
[[noreturn]] inline void throwError(ErrorKind kind, const std::string& message) {
  switch (kind) {
    case ErrorKind::Config:
      throw ConfigError(message);
    case ErrorKind::Io:
      throw IoError(message);
    case ErrorKind::Format:
      throw FormatError(message);
    case ErrorKind::Input:
      throw InputError(message);
    default:
      throw Error(message);
  }
}

// Exit codes of the command line (0 is success), and the one mapping from an
// error's kind to its code: a refused option is a usage error (2), like a
// command-line syntax error.
enum class ExitCode : int { Failure = 1, Usage = 2, Io = 3, Format = 4, Input = 5 };

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

inline ExitCode exitCodeOf(const std::exception& e) noexcept { return exitCode(errorKind(e)); }

}  // namespace posvec
