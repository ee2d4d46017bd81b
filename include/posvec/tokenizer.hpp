/// \file
/// Tokenizer: UTF-8 text to sentences of tokens, with ICU sentence and word
/// segmentation and ICU full Unicode lowercasing. Streams: bounded memory on any
/// input size, the same sentences whatever the chunk size or thread count.
/// Tokens follow NLTK's word_tokenize conventions on English (punctuation as
/// tokens, clitics split, "rug.The" kept whole); a single line break inside a
/// paragraph is a space, a blank line ends a sentence, and a sentence longer
/// than 1 MiB is cut at a space.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "posvec/settings.hpp"
#include "posvec/types.hpp"

namespace posvec {

/// The longest word kept, in bytes of UTF-8: a longer word (a run without
/// whitespace: a URL, a base64 blob, a file of zeros) keeps its first bytes up to
/// this limit, cut at a character boundary, and the rest of it is skipped; it still
/// counts as one word. Bounds the memory of reading any input (word2vec.c cuts at
/// 100 bytes, inside a character; see docs/input-limits.md).
inline constexpr std::size_t kMaxWordBytes = 1024;

/// How a Tokenizer segments text; every field has its default here.
struct TokenizerOptions {
  /// How text is cut into sentences and tokens.
  enum class Mode {
    Icu,        ///< ICU sentence + word segmentation (default)
    Whitespace  ///< pre-tokenized: one sentence a line, tokens split on whitespace
  };
  Mode mode = Mode::Icu;             ///< segmentation (default ICU)
  bool lowercase = true;             ///< ICU full case mapping (e.g. ẞ -> ß, İ -> i̇)
  bool keepPunctuation = true;       ///< punctuation marks as tokens, as NLTK's word_tokenize does
  bool replaceInvalid = false;       ///< invalid UTF-8 -> U+FFFD instead of an InputError
  std::size_t chunkBytes = 1 << 20;  ///< read size in bytes; output does not depend on it
  int threads = 1;                   ///< >1: parallel, same output as 1; 0: all cores
  std::string locale = "en";         ///< ICU locale for segmentation and case mapping
  /// Throws ConfigError for a setting outside its row's range in kTokenizerSettings
  /// (chunk size 1 byte to 1 GiB, threads 0 to 1024) or a locale that does not start
  /// with a known language code ("en", "de", "es_ES", "tr", ...).
  void validate() const;
};

/// The names of TokenizerOptions::Mode in text.
inline constexpr Choice<TokenizerOptions::Mode> kTokenizerModeNames[] = {
    {TokenizerOptions::Mode::Icu, "icu"}, {TokenizerOptions::Mode::Whitespace, "whitespace"}};

/// The settings of TokenizerOptions, one row each (settings.hpp). The commands that read
/// text (train, tokenize, study, attend) take these flags; Python's keywords follow.
inline constexpr auto kTokenizerSettings = std::tuple{
    SettingRow<TokenizerOptions, TokenizerOptions::Mode>{
        .member = &TokenizerOptions::mode, .setting = {"mode", "the segmentation"},
        .spelled = {.flag = "--pretokenized", .keyword = "pretokenized"},
        .help = "Corpus is one sentence a line, tokens split on whitespace (as word2vec.c reads)",
        .choices = kTokenizerModeNames, .flagSwitch = true,
        .flagValue = TokenizerOptions::Mode::Whitespace},
    SettingRow<TokenizerOptions, bool>{
        .member = &TokenizerOptions::lowercase, .setting = {"lowercase", "lowercasing"},
        .spelled = {.flag = "--keep-case", .keyword = "lowercase"},
        .help = "Raw text: do not lowercase", .flagSwitch = true, .flagValue = false},
    SettingRow<TokenizerOptions, bool>{
        .member = &TokenizerOptions::keepPunctuation,
        .setting = {"keepPunctuation", "punctuation tokens"},
        .spelled = {.flag = "--no-punct", .keyword = "punctuation",
                    .flagInText = "--no-punct to drop punctuation",
                    .keywordInText = "punctuation=False"},
        .help = "Raw text: drop tokens made only of punctuation", .flagSwitch = true,
        .flagValue = false},
    SettingRow<TokenizerOptions, bool>{
        .member = &TokenizerOptions::replaceInvalid,
        .setting = {"replaceInvalid", "the replace-invalid option"},
        .spelled = {.flag = "--replace-invalid", .keyword = "replace_invalid",
                    .keywordInText = "replace_invalid=True"},
        .help = "Replace invalid UTF-8 with U+FFFD instead of stopping with an error"},
    SettingRow<TokenizerOptions, std::size_t>{
        .member = &TokenizerOptions::chunkBytes,
        .setting = {"chunkBytes", "tokenizer chunk size"},
        .spelled = {.flag = "--chunk-size"},
        .help = "Bytes read at a time (the output does not depend on it)",
        .bounds = between(1, std::size_t{1} << 30)},
    SettingRow<TokenizerOptions, int>{
        .member = &TokenizerOptions::threads, .setting = {"tokenizerThreads", "tokenizer threads"},
        .spelled = {.flag = "--threads", .alias = "-t"},
        .help = "Threads (0: all cores; the output does not depend on it)",
        .bounds = between(0, 1024, "all cores")},
    SettingRow<TokenizerOptions, std::string>{
        .member = &TokenizerOptions::locale, .setting = {"locale", "the locale"},
        .spelled = {.flag = "--locale", .keyword = "locale", .keywordInText = "locale="},
        .help = "Raw text: ICU locale for segmentation and case mapping (en, de, tr, zh, ja...)"},
};

/// Receives each sentence once, in input order, on the thread that called
/// tokenize(); sentences are never empty. Exceptions it throws propagate.
using SentenceSink = std::function<void(Sentence&&)>;

namespace detail {
struct TokenizerCore;  // options and ICU prototypes, shared by all calls
}  // namespace detail

/// Segments UTF-8 text into sentences of tokens (see tokenizer.hpp for the rules).
/// Thread-safety: the const members may be called from several threads at once
/// on one Tokenizer (each call works on its own copies of the ICU iterators);
/// options.threads sets the threads one call uses internally. Movable, not copyable.
class Tokenizer {
 public:
  /// Validates `options` and prepares ICU's segmentation for its locale.
  /// \throws ConfigError for invalid options or when ICU has no data for the locale.
  explicit Tokenizer(TokenizerOptions options = {});
  /// Releases the ICU objects.
  ~Tokenizer();
  /// Takes over the state of the tokenizer moved from, which may then only be
  /// assigned or destroyed.
  Tokenizer(Tokenizer&&) noexcept;
  /// Takes over the state of the tokenizer moved from, which may then only be
  /// assigned or destroyed.
  Tokenizer& operator=(Tokenizer&&) noexcept;

  /// The options this tokenizer was built with.
  const TokenizerOptions& options() const;

  /// Whole text in memory: every sentence of `utf8`, in order.
  /// \throws InputError for invalid UTF-8 (unless replaceInvalid), naming the byte offset.
  std::vector<Sentence> tokenize(std::string_view utf8) const;
  /// Streaming: sentences are handed to `sink` in input order. A leading BOM is
  /// skipped; CRLF is handled; invalid UTF-8 throws InputError naming the byte
  /// offset (unless replaceInvalid). `sourceName` is used in error messages.
  /// Memory stays bounded (about chunkBytes plus the longest sentence).
  /// \throws IoError when reading `in` fails.
  void tokenize(std::istream& in, const SentenceSink& sink,
                const std::string& sourceName = "<stdin>") const;
  /// Streaming from a file ("-" is stdin; gzip, bzip2, xz and zstd content is
  /// decompressed); IoError when missing/unreadable/a directory or corrupt.
  void tokenizeFile(const std::string& path, const SentenceSink& sink) const;

 private:
  std::unique_ptr<detail::TokenizerCore> impl_;
};

}  // namespace posvec
