// The one definition of whitespace for posvec's plain-text formats (word2vec
// text and binary words, .vocab files, pre-tokenized corpora, evaluation sets):
// the six ASCII whitespace bytes ' ', '\t', '\n', '\v', '\f', '\r' (C's isspace
// in the "C" locale). Bytes of UTF-8 sequences are never whitespace here, so a
// word such as "naïve" or one holding U+00A0 stays one word, as in word2vec.c.
// The raw-text tokenizer does not use this: it follows ICU's Unicode rules.
#pragma once

namespace posvec::detail {

constexpr bool isAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace posvec::detail
