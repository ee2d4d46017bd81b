// Word segmentation of one sentence: ICU's word BreakIterator for any text, and an
// ASCII segmenter that reproduces its boundaries on ASCII-only text without ICU.
#include <unicode/brkiter.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/utext.h>
#include <unicode/utf8.h>

#include <array>
#include <string>

#include "posvec/error.hpp"
#include "tokenizer_detail.hpp"

namespace posvec::detail {

namespace {

// Whitespace, controls and format characters (ZWSP, a stray BOM) separate
// tokens and are never tokens themselves.
bool allSpace(const char* s, std::size_t n) {
  std::int32_t i = 0;
  const auto len = static_cast<std::int32_t>(n);
  while (i < len) {
    UChar32 c;
    U8_NEXT(s, i, len, c);
    if (c == ' ' || c == '\n') continue;
    if (c < 0) return false;
    if (u_isUWhiteSpace(c)) continue;
    const auto type = u_charType(c);
    if (type == U_CONTROL_CHAR || type == U_FORMAT_CHAR) continue;
    return false;
  }
  return true;
}

}  // namespace

void icuPieces(icu::BreakIterator& word, UText*& ut, const char* s, std::size_t n,
               std::vector<Piece>& pieces) {
  UErrorCode status = U_ZERO_ERROR;
  ut = utext_openUTF8(ut, s, static_cast<std::int64_t>(n), &status);
  word.setText(ut, status);
  if (U_FAILURE(status))
    throw InputError(std::string("ICU word segmentation failed: ") + u_errorName(status));
  pieces.clear();
  bool gap = true;
  std::int32_t start = word.first();
  for (std::int32_t end = word.next(); end != icu::BreakIterator::DONE;
       start = end, end = word.next()) {
    const auto b = static_cast<std::uint32_t>(start), e = static_cast<std::uint32_t>(end);
    if (word.getRuleStatus() >= UBRK_WORD_NONE_LIMIT) {
      pieces.push_back(Piece{b, e, PieceKind::Word, gap, false});
      gap = false;
      continue;
    }
    if (allSpace(s + b, e - b)) {
      gap = true;
      continue;
    }
    // ICU keeps a space together with the combining marks after it (UAX #29 WB4:
    // " \u0301", " \u05C5" are one segment), but no token may contain whitespace:
    // such a segment splits at its whitespace, which counts as a gap.
    std::int32_t i = start, run = -1;
    auto push = [&](std::int32_t from, std::int32_t to) {
      const auto f = static_cast<std::uint32_t>(from), t = static_cast<std::uint32_t>(to);
      pieces.push_back(Piece{f, t, PieceKind::Other, gap, allPunctuation(s + f, t - f)});
      gap = false;
    };
    while (i < end) {
      const std::int32_t at = i;
      UChar32 c;
      U8_NEXT(s, i, end, c);
      if (c >= 0 && (u_isUWhiteSpace(c) || u_charType(c) == U_CONTROL_CHAR)) {
        if (run >= 0) push(run, at);
        run = -1;
        gap = true;
      } else if (run < 0) {
        run = at;
      }
    }
    if (run >= 0) push(run, end);
  }
}

namespace {

// ICU's word-break classes of the ASCII characters (measured on ICU 72 with
// the differential test in tests/tokenizer_test.cpp): '@' joins like a letter,
// '_' like ExtendNumLet, '.' and '\'' join letters or digits, ',' and ';'
// join digits only, spaces join each other, anything else stands alone.
enum AsciiClass : std::uint8_t {
  kOther,
  kLetter,
  kDigit,
  kUnderscore,
  kMidNumLet,
  kMidNum,
  kSpace,
  kNewline
};

constexpr std::array<std::uint8_t, 128> makeAsciiClasses() {
  std::array<std::uint8_t, 128> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kLetter;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kLetter;
  for (int c = '0'; c <= '9'; ++c) t[c] = kDigit;
  t['@'] = kLetter;
  t['_'] = kUnderscore;
  t['.'] = kMidNumLet;
  t['\''] = kMidNumLet;
  t[','] = kMidNum;
  t[';'] = kMidNum;
  t[' '] = kSpace;
  t['\n'] = kNewline;  // paragraph break: a segment of its own
  return t;
}
constexpr std::array<std::uint8_t, 128> kAsciiClass = makeAsciiClasses();

constexpr bool wordChar(std::uint8_t c) { return c == kLetter || c == kDigit || c == kUnderscore; }

}  // namespace

void asciiPieces(const char* s, std::size_t n, std::vector<Piece>& pieces) {
  pieces.clear();
  auto cls = [&](std::size_t i) -> std::uint8_t {
    return i < n ? kAsciiClass[static_cast<unsigned char>(s[i])] : std::uint8_t{kOther};
  };
  // UAX #29 rules WB3d, WB5-WB13b restricted to these classes.
  auto joined = [&](std::size_t i) {  // no boundary between s[i-1] and s[i]
    const std::uint8_t a = cls(i - 1), b = cls(i);
    if (a == kSpace) return b == kSpace;
    if (wordChar(a) && wordChar(b)) return true;
    if (a == kLetter && b == kMidNumLet) return cls(i + 1) == kLetter;
    if (a == kMidNumLet && b == kLetter) return i >= 2 && cls(i - 2) == kLetter;
    if (a == kDigit && (b == kMidNum || b == kMidNumLet)) return cls(i + 1) == kDigit;
    if ((a == kMidNum || a == kMidNumLet) && b == kDigit) return i >= 2 && cls(i - 2) == kDigit;
    return false;
  };
  bool gap = true;
  std::size_t start = 0;
  while (start < n) {
    std::size_t end = start + 1;
    while (end < n && joined(end)) ++end;
    const std::uint8_t first = cls(start);
    if (first == kSpace || first == kNewline) {
      gap = true;
    } else {
      bool alnum = false;
      for (std::size_t i = start; i < end && !alnum; ++i)
        alnum = cls(i) == kLetter || cls(i) == kDigit;
      // A lone '_' is not a word for ICU, "__" is.
      const bool word = alnum || (first == kUnderscore && end - start > 1);
      Piece p{static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(end),
              word ? PieceKind::Word : PieceKind::Other, gap, false};
      if (!word) p.punct = u_ispunct(static_cast<unsigned char>(s[start]));
      pieces.push_back(p);
      gap = false;
    }
    start = end;
  }
}

}  // namespace posvec::detail
