// Internals of the tokenizer shared by its source files and its tests: the
// shared ICU prototypes, the word segmenters (ICU's word BreakIterator handles
// any text; the ASCII segmenter reproduces its boundaries on ASCII-only text
// about ten times faster) and the word stage that turns one sentence into tokens.
#pragma once

#include <unicode/brkiter.h>
#include <unicode/uchar.h>
#include <unicode/utext.h>
#include <unicode/utf8.h>
#include <unicode/utypes.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "posvec/tokenizer.hpp"

namespace posvec::detail {

inline std::string icuError(UErrorCode status) { return u_errorName(status); }

// Inline: the word stage asks these for every token.
inline bool isAscii(const char* s, std::size_t n) {
  unsigned char acc = 0;
  for (std::size_t i = 0; i < n; ++i) acc |= static_cast<unsigned char>(s[i]);
  return acc < 0x80;
}

// True when every code point is Unicode punctuation (general category P*).
inline bool allPunctuation(const char* s, std::size_t n) {
  std::int32_t i = 0;
  const auto len = static_cast<std::int32_t>(n);
  while (i < len) {
    UChar32 c;
    U8_NEXT(s, i, len, c);
    if (c < 0 || !u_ispunct(c)) return false;
  }
  return n > 0;
}

// Shared, read-only after construction: options and prototype ICU iterators.
struct TokenizerCore {
  TokenizerOptions opt;
  std::unique_ptr<icu::BreakIterator> sentenceProto, wordProto;
  bool english = false;    // split English clitics as NLTK does
  bool asciiLower = true;  // ASCII lowercases byte-wise (not in tr/az: I -> ı)
  std::mutex protoMutex;   // clone() is called from concurrent tokenize() calls

  explicit TokenizerCore(TokenizerOptions o);
  std::unique_ptr<icu::BreakIterator> clone(const icu::BreakIterator& proto);
};

enum class PieceKind : std::uint8_t {
  Word,  // letters, digits (ICU rule status NUMBER, LETTER, KANA, IDEO)
  Other  // punctuation, symbols, emoji
};

// One word-break segment of a sentence; whitespace segments are not kept.
struct Piece {
  std::uint32_t begin, end;  // byte range in the sentence
  PieceKind kind;
  bool gap;                // whitespace (or the sentence start) right before
  bool punct;              // only punctuation characters (general category P*)
  std::uint8_t quote = 0;  // set by the tokenizer: 1 opening ``, 2 closing ''
};

// Segments UTF-8 `s` with ICU (`ut` is reused across calls; the caller closes it).
void icuPieces(icu::BreakIterator& word, UText*& ut, const char* s, std::size_t n,
               std::vector<Piece>& pieces);
// Same result as icuPieces for ASCII-only `s`, without ICU.
void asciiPieces(const char* s, std::size_t n, std::vector<Piece>& pieces);

// The word stage (tokenizer_words.cpp), one per thread: one sentence (or line)
// in, tokens out. An interface so that its implementation stays in one file,
// where the compiler inlines the per-token path; one virtual call per sentence.
class WordWorker {
 public:
  virtual ~WordWorker() = default;
  virtual void run(const char* s, std::size_t n, Sentence& out) = 0;
};
std::unique_ptr<WordWorker> makeWordWorker(TokenizerCore& core);

}  // namespace posvec::detail
