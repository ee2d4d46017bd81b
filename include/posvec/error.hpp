/// \file
/// posvec::Error and its kinds: everything the library throws. Messages say what
/// went wrong and what to do about it. Exit codes are the front ends' business
/// (the CLI's tools/posvec/exit_code.hpp maps each ErrorKind to one).
/// A message names a setting by its meaning ("lower the minimum count") and
/// records where (Error::mentions()), so each front end can put its own spelling
/// there (the CLI a flag, Python a keyword): the library knows no front end.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace posvec {

/// A setting as an error message names it: the option struct's member name
/// ("minCount", "dim", "unk") and the words that stand for it in the message
/// ("the minimum count").
struct Setting {
  std::string_view name;     ///< the option struct's member name, e.g. "minCount"
  std::string_view meaning;  ///< the words the message uses for it, e.g. "the minimum count"
};

/// Where a message names a setting: what()[offset, offset + length) is its meaning.
struct SettingMention {
  std::size_t offset = 0;  ///< first byte of the setting's words in the message
  std::size_t length = 0;  ///< length of those words in bytes
  std::string setting;     ///< the setting's member name (Setting::name)
};

/// An error message being built: text, and the settings it names by meaning.
///
///     throw InputError(ErrorText("no word is frequent enough; lower ")
///                      << Setting{"minCount", "the minimum count"});
class ErrorText {
 public:
  /// An empty message.
  ErrorText() = default;
  /// A message that starts with `text`.
  explicit ErrorText(std::string_view text) : text_(text) {}
  /// A message that refuses the value of `s`: it starts with the setting's meaning
  /// ("dimension must be ..."), and Error::about() names it, so that a front end
  /// can put its own spelling in front ("--dim: dimension must be ...").
  static ErrorText about(const Setting& s) { return about(s, s.meaning); }
  /// A message about the value of `s` that starts with `text` ("unknown rope_type ...").
  static ErrorText about(const Setting& s, std::string_view text) {
    ErrorText t(text);
    t.about_ = s.name;
    return t;
  }
  /// Appends plain text.
  ErrorText& operator<<(std::string_view text) {
    text_ += text;
    return *this;
  }
  /// Appends a setting's meaning and records where it stands.
  ErrorText& operator<<(const Setting& s) {
    mentions_.push_back({text_.size(), s.meaning.size(), std::string(s.name)});
    text_ += s.meaning;
    return *this;
  }
  /// The message so far.
  const std::string& text() const { return text_; }
  /// The settings named so far, in order.
  const std::vector<SettingMention>& mentions() const { return mentions_; }
  /// The setting whose value the message refuses (Setting::name), or "".
  const std::string& about() const { return about_; }

 private:
  std::string text_;
  std::vector<SettingMention> mentions_;
  std::string about_;
};

/// The base of every exception the library throws on purpose. what() is one
/// line that names the file, value or setting concerned (a setting by its meaning,
/// e.g. "dimension", never a command-line flag) and, where there is one, the fix.
/// Catch Error to handle all of them; catch a kind below to tell them apart.
/// Besides these the library lets std::bad_alloc through (and, rarely, another
/// std::exception from the standard library).
class Error : public std::runtime_error {
 public:
  /// Constructs with the message what() returns.
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  /// Constructs with the message what() returns.
  explicit Error(const char* message) : std::runtime_error(message) {}
  /// Constructs with a built message, keeping where it names settings.
  explicit Error(const ErrorText& message)
      : std::runtime_error(message.text()),
        mentions_(message.mentions()),
        about_(message.about()) {}
  /// The settings the message names by meaning, in order.
  const std::vector<SettingMention>& mentions() const { return mentions_; }
  /// The setting whose value the message refuses (Setting::name; the message
  /// starts with its meaning), or "" (ErrorText::about).
  const std::string& about() const { return about_; }
  /// The message with each mentioned setting in a front end's words: `spelling`
  /// returns them for a setting's name ("minCount" -> "--min-count"), or "" to keep
  /// the meaning; the setting the message is about() goes in front, spelled by
  /// `front` when given, else by `spelling` ("--dim: dimension must be ...").
  std::string spelled(const std::function<std::string(const std::string&)>& spelling,
                      const std::function<std::string(const std::string&)>& front = {}) const {
    std::string out = what();
    // From the last mention back, so the earlier offsets stay valid.
    for (auto m = mentions_.rbegin(); m != mentions_.rend(); ++m) {
      const std::string word = spelling(m->setting);
      if (!word.empty() && m->offset + m->length <= out.size())
        out.replace(m->offset, m->length, word);
    }
    if (!about_.empty())
      if (const std::string word = front ? front(about_) : spelling(about_); !word.empty())
        out = word + ": " + out;
    return out;
  }

 private:
  std::vector<SettingMention> mentions_;
  std::string about_;
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

/// The kinds above as values: to send an error between processes (distributed
/// training), and for a front end to choose its answer (the CLI an exit code).
enum class ErrorKind : int {
  Other = 0,   ///< any other exception
  Config = 1,  ///< ConfigError
  Io = 2,      ///< IoError
  Format = 3,  ///< FormatError
  Input = 4    ///< InputError
};

/// The kind of `e` (Other for anything that is not one of the kinds above).
inline ErrorKind errorKind(const std::exception& e) noexcept {
  if (dynamic_cast<const ConfigError*>(&e)) return ErrorKind::Config;
  if (dynamic_cast<const IoError*>(&e)) return ErrorKind::Io;
  if (dynamic_cast<const FormatError*>(&e)) return ErrorKind::Format;
  if (dynamic_cast<const InputError*>(&e)) return ErrorKind::Input;
  return ErrorKind::Other;
}

/// Throws the exception of `kind` (Other: a plain Error) with `message`.
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

}  // namespace posvec
