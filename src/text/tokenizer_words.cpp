// The word stage of the tokenizer: one sentence (or pre-tokenized line) in, tokens
// out. NLTK's Treebank conventions on top of the word segments (tokenizer_segment.cpp),
// English clitics, punctuation dropping and locale-aware lowercasing.
#include <unicode/ucasemap.h>
#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "posvec/error.hpp"
#include "tokenizer_detail.hpp"
#include "utf8.hpp"

namespace posvec::detail {

namespace {

// The word stage behind WordWorker (one per thread).
class TokenWorker final : public WordWorker {
 public:
  explicit TokenWorker(TokenizerCore& impl) : impl_(impl), opt_(impl.opt) {
    UErrorCode status = U_ZERO_ERROR;
    caseMap_ = ucasemap_open(opt_.locale.c_str(), 0, &status);
    if (U_FAILURE(status))
      throw ConfigError("cannot create ICU case mapping for locale '" + opt_.locale +
                        "': " + icuError(status));
    if (impl.wordProto) word_ = impl.clone(*impl.wordProto);
  }
  ~TokenWorker() override {
    utext_close(ut_);
    ucasemap_close(caseMap_);
  }
  TokenWorker(const TokenWorker&) = delete;
  TokenWorker& operator=(const TokenWorker&) = delete;

  void run(const char* s, std::size_t n, Sentence& out) override {
    out.clear();
    if (opt_.mode == TokenizerOptions::Mode::Whitespace)
      whitespace(s, n, out);
    else
      icuWords(s, n, out);
  }

 private:
  using Kind = PieceKind;

  void whitespace(const char* s, std::size_t n, Sentence& out) {
    std::size_t i = 0;
    while (i < n) {
      while (i < n && s[i] == ' ') ++i;
      std::size_t j = i;
      while (j < n && s[j] != ' ') ++j;
      if (j > i && (opt_.keepPunctuation || !allPunctuation(s + i, j - i))) emit(s + i, j - i, out);
      i = j;
    }
  }

  void icuWords(const char* s, std::size_t n, Sentence& out) {
    if (isAscii(s, n))
      asciiPieces(s, n, pieces_);
    else
      icuPieces(*word_, ut_, s, n, pieces_);
    assemble(s);
    for (std::size_t k = 0; k < toks_.size(); ++k) {
      const Piece& t = toks_[k];
      if (!opt_.keepPunctuation && t.punct) continue;
      if (t.quote) {
        out.emplace_back(t.quote == 1 ? "``" : "''");
      } else if (impl_.english && t.kind == Kind::Word) {
        emitWithClitics(s + t.begin, t.end - t.begin, out);
      } else {
        emit(s + t.begin, t.end - t.begin, out);
      }
    }
  }

  // Closing brackets and quotes that may follow a sentence's final period
  // ("... on the rug.)"). Initial quotes count too: German closes with “.
  static bool isCloser(std::string_view t) {
    if (t == "\"" || t == "'" || t == ">") return true;
    std::int32_t i = 0;
    const auto len = static_cast<std::int32_t>(t.size());
    UChar32 c;
    U8_NEXT(t.data(), i, len, c);
    if (c < 0 || i != len) return false;
    const auto type = u_charType(c);
    return type == U_END_PUNCTUATION || type == U_FINAL_PUNCTUATION ||
           type == U_INITIAL_PUNCTUATION;
  }

  // NLTK (Treebank) conventions on top of ICU's word segments: "...", "--",
  // "``" and "''" are one token, hyphen/slash compounds and times (10:30) stay whole, a period
  // right after a word stays on it (Mr., U.S.) unless it ends the sentence, and straight double
  // quotes become `` or '' by position.
  void assemble(const char* s) {
    toks_.clear();
    const std::size_t np = pieces_.size();
    auto text = [&](const Piece& p) { return std::string_view(s + p.begin, p.end - p.begin); };
    auto attached = [&](std::size_t i) { return i < np && !pieces_[i].gap; };
    // The character toks_.back() repeats throughout, or 0: known without re-reading the
    // token, so a run of a million '.' costs a million steps, not half a trillion.
    char runOf = 0;
    for (std::size_t i = 0; i < np; ++i) {
      const Piece& p = pieces_[i];
      if (!toks_.empty() && !p.gap) {
        Piece& t = toks_.back();
        const std::string_view pt = text(p), tt = text(t);
        if (t.kind == Kind::Other && (pt == "." || pt == "-" || pt == "`" || pt == "'") &&
            runOf == pt[0]) {
          t.end = p.end;  // ellipsis, dash, `` and '' quotes
          continue;
        }
        runOf = 0;  // every other merge below makes a mixed token
        if (t.kind == Kind::Word && (pt == "-" || pt == "/") && attached(i + 1) &&
            pieces_[i + 1].kind == Kind::Word) {
          t.end = pieces_[i + 1].end;  // well-known, and/or
          ++i;
          continue;
        }
        auto isDigit = [](char c) { return c >= '0' && c <= '9'; };
        if (t.kind == Kind::Word && pt == ":" && isDigit(tt.back()) && attached(i + 1) &&
            isDigit(s[pieces_[i + 1].begin])) {
          t.end = pieces_[i + 1].end;  // 10:30
          ++i;
          continue;
        }
        if (t.kind == Kind::Word && pt == "." &&
            !(attached(i + 1) && text(pieces_[i + 1]) == ".")) {
          bool final = true;
          for (std::size_t j = i + 1; j < np && final; ++j) final = isCloser(text(pieces_[j]));
          if (!final) {
            t.end = p.end;  // Mr. Smith, the U.S. economy
            continue;
          }
        }
      }
      toks_.push_back(p);
      Piece& q = toks_.back();
      const std::string_view qt = text(q);
      runOf = qt.find_first_not_of(qt[0]) == std::string_view::npos ? qt[0] : 0;
      if (text(q) == "\"") {
        bool open = q.gap || toks_.size() == 1;
        if (!open) {
          const Piece& prev = toks_[toks_.size() - 2];
          const std::string_view pv = text(prev);
          open = prev.quote == 1 || pv == "(" || pv == "[" || pv == "{" || pv == "<";
        }
        q.quote = open ? 1 : 2;
      }
    }
  }

  // Position where an English clitic starts in `w` (n't 's 'm 'd 're 've 'll,
  // straight or curly apostrophe), or 0 when there is none.
  static std::size_t cliticStart(const char* w, std::size_t n) {
    // Every clitic has an apostrophe (' or the last byte of ’) in the last 5 bytes.
    const std::size_t tail = std::min<std::size_t>(n, 5);
    if (!std::memchr(w + n - tail, '\'', tail) && !std::memchr(w + n - tail, '\x99', tail))
      return 0;
    auto lower = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); };
    // Start of the apostrophe that ends right before `pos`, or npos.
    auto apostropheBefore = [&](std::size_t pos) -> std::size_t {
      if (pos >= 1 && w[pos - 1] == '\'') return pos - 1;
      if (pos >= 3 && std::string_view(w + pos - 3, 3) == "\u2019") return pos - 3;
      return std::string_view::npos;
    };
    if (lower(w[n - 1]) == 't') {
      const std::size_t a = apostropheBefore(n - 1);
      if (a != std::string_view::npos && a >= 2 && lower(w[a - 1]) == 'n') return a - 1;
    }
    const char last = lower(w[n - 1]);
    if (last == 's' || last == 'm' || last == 'd') {
      const std::size_t a = apostropheBefore(n - 1);
      if (a != std::string_view::npos && a >= 1) return a;
    }
    if (n >= 3) {
      const char a2 = lower(w[n - 2]);
      if ((a2 == 'r' && last == 'e') || (a2 == 'v' && last == 'e') || (a2 == 'l' && last == 'l')) {
        const std::size_t a = apostropheBefore(n - 2);
        if (a != std::string_view::npos && a >= 1) return a;
      }
    }
    return 0;
  }

  // Words that NLTK's Treebank tokenizer splits although they have no apostrophe.
  static std::size_t fusedWordCut(const char* w, std::size_t n) {
    if (n != 5 && n != 6) return 0;
    char l[6];
    for (std::size_t i = 0; i < n; ++i)
      l[i] = static_cast<char>(w[i] >= 'A' && w[i] <= 'Z' ? w[i] + 32 : w[i]);
    const std::string_view v(l, n);
    if (v == "cannot") return 3;
    if (v == "gonna" || v == "wanna" || v == "gimme" || v == "lemme") return 3;
    if (v == "gotta") return 3;
    return 0;
  }

  // Clitics come off the end one at a time (shouldn't've -> should n't 've). A loop,
  // not recursion: a word may carry any number of them (a's's's... in a 1 MB line).
  void emitWithClitics(const char* w, std::size_t n, Sentence& out) {
    cuts_.clear();
    cuts_.push_back(n);
    while (true) {
      std::size_t cut = cliticStart(w, n);
      if (cut == 0) cut = fusedWordCut(w, n);
      if (cut == 0) break;
      cuts_.push_back(cut);
      n = cut;
    }
    emit(w, n, out);
    for (std::size_t k = cuts_.size() - 1; k > 0; --k)
      emit(w + cuts_[k], cuts_[k - 1] - cuts_[k], out);
  }

  // A word longer than kMaxWordBytes keeps its first bytes, cut at a character
  // boundary (lowercasing may lengthen it: cut again after).
  void emit(const char* s, std::size_t n, Sentence& out) {
    n = utf8Prefix(std::string_view(s, n), kMaxWordBytes);
    emitWhole(s, n, out);
    std::string& t = out.back();
    if (t.size() > kMaxWordBytes) t.resize(utf8Prefix(t, kMaxWordBytes));
  }

  void emitWhole(const char* s, std::size_t n, Sentence& out) {
    std::string& t = out.emplace_back();
    if (!opt_.lowercase) {
      t.assign(s, n);
      return;
    }
    if (impl_.asciiLower && isAscii(s, n)) {
      t.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        const char c = s[i];
        t[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
      }
      return;
    }
    // Full case mapping can grow the text (İ -> i + combining dot).
    t.resize(n * 3 + 8);
    UErrorCode status = U_ZERO_ERROR;
    const std::int32_t len =
        ucasemap_utf8ToLower(caseMap_, t.data(), static_cast<std::int32_t>(t.size()), s,
                             static_cast<std::int32_t>(n), &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
      t.resize(static_cast<std::size_t>(len));
      status = U_ZERO_ERROR;
      ucasemap_utf8ToLower(caseMap_, t.data(), len, s, static_cast<std::int32_t>(n), &status);
    }
    if (U_FAILURE(status)) throw InputError("ICU lowercasing failed: " + icuError(status));
    t.resize(static_cast<std::size_t>(len));
  }

  TokenizerCore& impl_;
  const TokenizerOptions& opt_;
  std::unique_ptr<icu::BreakIterator> word_;
  UText* ut_ = nullptr;
  UCaseMap* caseMap_ = nullptr;
  std::vector<Piece> pieces_, toks_;
  std::vector<std::size_t> cuts_;  // clitic boundaries of one word, last first
};

}  // namespace

std::unique_ptr<WordWorker> makeWordWorker(TokenizerCore& core) {
  return std::make_unique<TokenWorker>(core);
}

}  // namespace posvec::detail
