// Incremental UTF-8 validation and line normalisation for the tokenizer: bytes
// arrive in chunks of any size (a chunk may end inside a character) and leave
// as well-formed UTF-8 with a fixed line convention, so what follows never
// depends on how the input was cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <string>
#include <string_view>

#include "posvec/error.hpp"

namespace posvec::detail {

// Whole-string check: well-formed UTF-8 (no overlong forms, surrogates or
// code points above U+10FFFF).
// Length of the longest prefix of s that is at most `max` bytes and does not end
// inside a UTF-8 character (the cut steps back over continuation bytes).
inline std::size_t utf8Prefix(std::string_view s, std::size_t max) {
  if (s.size() <= max) return s.size();
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

inline bool isValidUtf8(std::string_view s) {
  if (std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return true;
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    std::uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (int k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return false;
    i += len;
  }
  return true;
}

class TextNormalizer {
 public:
  // lines = true keeps every line break as '\n' (pre-tokenized input: one
  // sentence a line). lines = false is prose: a single line break becomes a
  // space, a blank line becomes one '\n' (a paragraph break), leading and
  // trailing line breaks vanish. Both modes: CRLF and lone CR count as one
  // line break, tabs and other C0 controls become spaces, a BOM at offset 0 is
  // skipped, invalid UTF-8 throws InputError naming the byte offset or, with
  // replaceInvalid, becomes U+FFFD (one per maximal invalid subpart).
  TextNormalizer(bool lines, bool replaceInvalid, std::string sourceName)
      : lines_(lines), replace_(replaceInvalid), source_(std::move(sourceName)) {}

  void feed(const char* data, std::size_t n, std::string& out) {
    const auto* p = reinterpret_cast<const unsigned char*>(data);
    std::size_t i = 0;
    while (i < n) {
      if (need_ == 0) {
        // Fast path: a run of printable ASCII needs no decoding and no line logic.
        if (pendingBreaks_ == 0 && p[i] >= 0x20 && p[i] < 0x7F) {
          std::size_t j = i + 1;
          while (j < n && p[j] >= 0x20 && p[j] < 0x7F) ++j;
          out.append(data + i, j - i);
          started_ = true;
          first_ = false;
          lastCr_ = false;
          i = j;
          continue;
        }
        const unsigned char b = p[i];
        if (b < 0x80) {
          emit(b, data + i, 1, out);
          ++i;
          continue;
        }
        seqStart_ = offset_ + i;
        seqLen_ = 1;
        seq_[0] = static_cast<char>(b);
        lo_ = 0x80;
        hi_ = 0xBF;
        if (b >= 0xC2 && b <= 0xDF) {
          need_ = 1;
        } else if (b >= 0xE0 && b <= 0xEF) {
          need_ = 2;
          if (b == 0xE0) lo_ = 0xA0;  // no overlong forms
          if (b == 0xED) hi_ = 0x9F;  // no surrogates
        } else if (b >= 0xF0 && b <= 0xF4) {
          need_ = 3;
          if (b == 0xF0) lo_ = 0x90;
          if (b == 0xF4) hi_ = 0x8F;  // nothing above U+10FFFF
        } else {
          invalid(seqStart_, out);
        }
        ++i;
        continue;
      }
      const unsigned char b = p[i];
      if (b < lo_ || b > hi_) {
        // The bytes so far are a maximal invalid subpart; b starts afresh.
        need_ = 0;
        invalid(seqStart_, out);
        continue;
      }
      seq_[seqLen_++] = static_cast<char>(b);
      lo_ = 0x80;
      hi_ = 0xBF;
      ++i;
      if (--need_ == 0) emit(decode(), seq_, seqLen_, out);
    }
    offset_ += n;
  }

  // End of input: a character cut off by the end of the file is invalid.
  void finish(std::string& out) {
    if (need_ > 0) {
      need_ = 0;
      invalid(seqStart_, out);
    }
    pendingBreaks_ = 0;
  }

  std::uint64_t bytesSeen() const { return offset_; }

  // Line breaks waiting for the next character decide between ' ' and '\n'. Only
  // "one" or "two or more" matters, so the count stops at 2: no file can overflow it
  // (an int wrapped after 2^31 breaks and glued two paragraphs into one token).
  using BreakCount = std::uint64_t;
  // For tests: as if `n` line breaks had just been read (no file of 2^31 of them needed).
  void setPendingBreaksForTest(BreakCount n) { pendingBreaks_ = n; }

 private:
  std::uint32_t decode() const {
    const auto* s = reinterpret_cast<const unsigned char*>(seq_);
    if (seqLen_ == 2) return ((s[0] & 0x1Fu) << 6) | (s[1] & 0x3Fu);
    if (seqLen_ == 3) return ((s[0] & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
    return ((s[0] & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
  }

  void invalid(std::uint64_t offset, std::string& out) {
    if (!replace_)
      throw InputError(ErrorText(source_ + ": invalid UTF-8 at byte offset " +
                                 std::to_string(offset) +
                                 " (convert the file to UTF-8, or replace bad bytes with U+FFFD: ")
                       << Setting{"replaceInvalid", "the replace-invalid option"} << ")");
    emit(0xFFFD, "\xEF\xBF\xBD", 3, out);
  }

  void emit(std::uint32_t cp, const char* bytes, int len, std::string& out) {
    const bool first = first_;
    first_ = false;
    if (first && cp == 0xFEFF) return;  // byte order mark
    if (cp == '\n' && lastCr_) {
      lastCr_ = false;
      return;
    }
    lastCr_ = cp == '\r';
    if (cp == '\n' || cp == '\r') {
      if (lines_) {
        out.push_back('\n');
      } else if (started_ && pendingBreaks_ < 2) {
        ++pendingBreaks_;
      }
      return;
    }
    if (cp < 0x20 || cp == 0x7F) {
      bytes = " ";
      len = 1;
      cp = ' ';
    }
    if (pendingBreaks_ > 0) {
      if (cp == ' ') return;  // indentation or a blank line made of spaces
      out.push_back(pendingBreaks_ >= 2 ? '\n' : ' ');
      pendingBreaks_ = 0;
    }
    out.append(bytes, static_cast<std::size_t>(len));
    started_ = true;
  }

  bool lines_;
  bool replace_;
  std::string source_;
  std::uint64_t offset_ = 0;  // bytes consumed before the current chunk
  // Current multi-byte sequence.
  int need_ = 0;
  int seqLen_ = 0;
  unsigned char lo_ = 0x80, hi_ = 0xBF;
  char seq_[4] = {};
  std::uint64_t seqStart_ = 0;
  // Line state.
  bool first_ = true;
  bool lastCr_ = false;
  bool started_ = false;
  BreakCount pendingBreaks_ = 0;
};

}  // namespace posvec::detail
