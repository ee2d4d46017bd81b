// Internals of the tokenizer shared with its tests: the word segmenters. ICU's
// word BreakIterator handles any text; the ASCII segmenter reproduces its
// boundaries on ASCII-only text about ten times faster.
#pragma once

#include <unicode/brkiter.h>
#include <unicode/utext.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace posvec::detail {

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

}  // namespace posvec::detail
