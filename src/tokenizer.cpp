#include "posvec/tokenizer.hpp"

#include "input.hpp"

#include <omp.h>
#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/ubrk.h>
#include <unicode/ucasemap.h>
#include <unicode/uchar.h>
#include <unicode/utext.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>

#include "posvec/error.hpp"
#include "parallel.hpp"
#include "posvec/io.hpp"
#include "tokenizer_detail.hpp"
#include "utf8.hpp"

namespace posvec {

namespace {

// A sentence (or pre-tokenized line) longer than this is cut at a space, so
// that memory stays bounded on text without sentence ends. The cut depends only
// on the text, never on chunk size or threads.
constexpr std::size_t kMaxSentenceBytes = std::size_t{1} << 20;
// Sentence ends this far before the end of the buffered text are final even
// when fewer than two sentences follow them (ICU's look-ahead is far shorter).
constexpr std::size_t kLookaheadBytes = 4096;

std::string icuError(UErrorCode status) { return u_errorName(status); }

bool isAscii(const char* s, std::size_t n) {
  unsigned char acc = 0;
  for (std::size_t i = 0; i < n; ++i) acc |= static_cast<unsigned char>(s[i]);
  return acc < 0x80;
}

// True when every code point is Unicode punctuation (general category P*).
bool allPunctuation(const char* s, std::size_t n) {
  std::int32_t i = 0;
  const auto len = static_cast<std::int32_t>(n);
  while (i < len) {
    UChar32 c;
    U8_NEXT(s, i, len, c);
    if (c < 0 || !u_ispunct(c)) return false;
  }
  return n > 0;
}

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

// Last byte position <= limit where a forced cut may go: a space if there is
// one after `begin`, else a character boundary.
std::size_t forcedCut(const std::string& text, std::size_t begin, std::size_t limit) {
  for (std::size_t i = limit; i > begin; --i)
    if (text[i] == ' ') return i;
  std::size_t i = limit;
  while (i > begin + 1 && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
  return i;
}

struct Range {
  std::size_t begin, end;
};

}  // namespace

void TokenizerOptions::validate() const {
  if (chunkBytes < 1 || chunkBytes > (std::size_t{1} << 30))
    throw ConfigError("tokenizer chunk size must be between 1 byte and 1 GiB, got " +
                      std::to_string(chunkBytes));
  if (threads < 0 || threads > 1024)
    throw ConfigError("tokenizer threads must be between 0 (all cores) and 1024, got " +
                      std::to_string(threads));
  if (locale.empty()) throw ConfigError("tokenizer locale is empty (use e.g. --locale en)");
  // ICU accepts any string and falls back to the root locale; catch typos here.
  icu::Locale loc(locale.c_str());
  const std::string lang = loc.getLanguage();
  bool known = false;
  if (!loc.isBogus() && lang.size() == 3) {
    known = std::all_of(lang.begin(), lang.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  } else if (!loc.isBogus() && lang.size() == 2) {
    for (const char* const* l = icu::Locale::getISOLanguages(); *l && !known; ++l)
      known = lang == *l;
  }
  if (!known)
    throw ConfigError(
        "tokenizer locale '" + locale +
        "' does not start with a known language code (use e.g. en, de, es_ES, zh, ja)");
}

namespace detail {

// Shared, read-only after construction: options and prototype ICU iterators.
struct TokenizerCore {
  TokenizerOptions opt;
  std::unique_ptr<icu::BreakIterator> sentenceProto, wordProto;
  bool english = false;    // split English clitics as NLTK does
  bool asciiLower = true;  // ASCII lowercases byte-wise (not in tr/az: I -> ı)
  std::mutex protoMutex;   // clone() is called from concurrent tokenize() calls

  explicit TokenizerCore(TokenizerOptions o) : opt(std::move(o)) {
    opt.validate();
    icu::Locale loc(opt.locale.c_str());
    const std::string lang = loc.getLanguage();
    english = lang == "en";
    asciiLower = lang != "tr" && lang != "az";
    if (opt.mode != TokenizerOptions::Mode::Icu) return;
    UErrorCode status = U_ZERO_ERROR;
    // ss=standard: ICU's list of abbreviations (Mr., U.S., ...) that end no sentence.
    icu::Locale sentLoc(loc);
    sentLoc.setKeywordValue("ss", "standard", status);
    sentenceProto.reset(icu::BreakIterator::createSentenceInstance(sentLoc, status));
    if (U_FAILURE(status) || !sentenceProto) {
      status = U_ZERO_ERROR;
      sentenceProto.reset(icu::BreakIterator::createSentenceInstance(loc, status));
    }
    if (U_SUCCESS(status)) wordProto.reset(icu::BreakIterator::createWordInstance(loc, status));
    if (U_FAILURE(status) || !sentenceProto || !wordProto)
      throw ConfigError("cannot create ICU segmentation for locale '" + opt.locale +
                        "': " + icuError(status) + " (is the ICU data package installed?)");
  }

  std::unique_ptr<icu::BreakIterator> clone(const icu::BreakIterator& proto) {
    std::lock_guard<std::mutex> lock(protoMutex);
    return std::unique_ptr<icu::BreakIterator>(proto.clone());
  }
};

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

}  // namespace detail

namespace {

using detail::TokenizerCore;

// Per-thread state of the word stage: one sentence (or line) in, tokens out.
class WordWorker {
 public:
  WordWorker(TokenizerCore& impl) : impl_(impl), opt_(impl.opt) {
    UErrorCode status = U_ZERO_ERROR;
    caseMap_ = ucasemap_open(opt_.locale.c_str(), 0, &status);
    if (U_FAILURE(status))
      throw ConfigError("cannot create ICU case mapping for locale '" + opt_.locale +
                        "': " + icuError(status));
    if (impl.wordProto) word_ = impl.clone(*impl.wordProto);
  }
  ~WordWorker() {
    utext_close(ut_);
    ucasemap_close(caseMap_);
  }
  WordWorker(const WordWorker&) = delete;
  WordWorker& operator=(const WordWorker&) = delete;

  void run(const char* s, std::size_t n, Sentence& out) {
    out.clear();
    if (opt_.mode == TokenizerOptions::Mode::Whitespace)
      whitespace(s, n, out);
    else
      icuWords(s, n, out);
  }

 private:
  using Kind = detail::PieceKind;
  using Piece = detail::Piece;

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
      detail::asciiPieces(s, n, pieces_);
    else
      detail::icuPieces(*word_, ut_, s, n, pieces_);
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

  void emit(const char* s, std::size_t n, Sentence& out) {
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

// One pass over one input: normalised text accumulates in text_, complete
// sentences are cut off its front and tokenized (in parallel when asked), the
// unfinished tail waits for the next chunk.
class Stream {
 public:
  Stream(TokenizerCore& impl, const SentenceSink& sink, const std::string& source)
      : impl_(impl),
        opt_(impl.opt),
        sink_(sink),
        norm_(impl.opt.mode == TokenizerOptions::Mode::Whitespace, impl.opt.replaceInvalid, source),
        threads_(static_cast<std::size_t>(detail::resolveThreads(opt_.threads))),
        threshold_(opt_.chunkBytes) {}
  ~Stream() {
    for (UText* ut : uts_) utext_close(ut);
  }

  void feed(const char* data, std::size_t n) {
    norm_.feed(data, n, text_);
    if (text_.size() >= threshold_) process(false);
  }

  void finish() {
    norm_.finish(text_);
    process(true);
  }

 private:
  void process(bool final) {
    ranges_.clear();
    const std::size_t committed =
        opt_.mode == TokenizerOptions::Mode::Whitespace ? cutLines(final) : cutSentences(final);
    tokenizeRanges();
    text_.erase(0, committed);
    threshold_ = std::max(opt_.chunkBytes, 2 * text_.size());
  }

  // Pre-tokenized input: every complete line is a sentence.
  std::size_t cutLines(bool final) {
    const std::size_t n = text_.size();
    std::size_t pos = 0;
    while (pos < n) {
      std::size_t e = text_.find('\n', pos);
      if (e == std::string::npos) {
        if (final) {
          e = n;
        } else if (n - pos > kMaxSentenceBytes) {
          e = forcedCut(text_, pos, pos + kMaxSentenceBytes);
        } else {
          break;
        }
      }
      if (e - pos > kMaxSentenceBytes) e = forcedCut(text_, pos, pos + kMaxSentenceBytes);
      ranges_.push_back({pos, e});
      pos = (e < n && text_[e] == '\n') ? e + 1 : e;
    }
    return pos;
  }

  // Prose: ICU sentence boundaries. A boundary is final when a paragraph break
  // follows it, when two more sentences follow it, or at the end of input;
  // otherwise the text from it on is carried over to the next chunk.
  std::size_t cutSentences(bool final) {
    const std::size_t n = text_.size();
    const std::size_t lastBreak = text_.rfind('\n');
    const std::size_t paraEnd = final ? n : (lastBreak == std::string::npos ? 0 : lastBreak + 1);
    std::size_t pos = 0;
    bool restart = true;
    while (restart && pos < n) {
      restart = false;
      findBounds(pos, n);
      std::size_t a = pos;
      for (std::size_t k = 0; k < bounds_.size(); ++k) {
        const std::size_t e = bounds_[k];
        if (e - a > kMaxSentenceBytes && (final || n - a > kMaxSentenceBytes + kLookaheadBytes)) {
          const std::size_t cut = forcedCut(text_, a, a + kMaxSentenceBytes);
          ranges_.push_back({a, cut});
          pos = cut;
          restart = true;  // ICU starts afresh after the cut, whatever the chunking
          break;
        }
        const bool done =
            final || e <= paraEnd || k + 2 < bounds_.size() || n - e >= kLookaheadBytes;
        if (!done) break;
        ranges_.push_back({a, e});
        a = pos = e;
      }
    }
    return pos;
  }

  // ICU sentence boundaries after `pos` (a boundary) up to the end of the text,
  // into bounds_. On several threads, block k > 0 starts segmenting at a guess
  // s_k; its boundaries are trusted from the first one that block k-1 (whose
  // start is trusted) also finds past s_k, since ICU's forward pass from a
  // boundary depends only on the text after it. So the result is exactly that
  // of one pass; if no such common boundary shows up, one pass finishes the job.
  void findBounds(std::size_t pos, std::size_t n) {
    constexpr std::size_t kMinBlock = 32 << 10;
    constexpr std::size_t kOverlap = 4 << 10;  // how far block k-1 runs past s_k
    const std::size_t len = n - pos;
    // A few blocks per thread, so that a thread the OS preempts holds up little.
    const std::size_t blocks =
        threads_ <= 1 ? 1 : std::max<std::size_t>(1, std::min(threads_ * 4, len / kMinBlock));
    while (sentences_.size() < blocks) sentences_.push_back(impl_.clone(*impl_.sentenceProto));
    uts_.resize(blocks, nullptr);
    parts_.resize(blocks);
    starts_.assign(blocks + 1, n);
    starts_[0] = pos;
    for (std::size_t k = 1; k < blocks; ++k) {
      std::size_t g = pos + k * len / blocks;
      const std::size_t space = text_.find(' ', g);
      g = space < pos + (k + 1) * len / blocks ? space + 1 : g;
      while (g < n && (static_cast<unsigned char>(text_[g]) & 0xC0) == 0x80) ++g;
      starts_[k] = std::max(g, starts_[k - 1] + 1);
    }
    // Boundaries from starts_[k] until kOverlap past starts_[k + 1] (or the end).
    // Boundaries of [from, until]; ICU sees kLookaheadBytes past `until` (the
    // text's end when until == n), so that it never scans a long stretch
    // without sentence ends twice.
    auto block = [&](std::size_t k, std::size_t from, std::size_t until) {
      const std::size_t end = until >= n ? n : std::min(n, until + kLookaheadBytes);
      UErrorCode status = U_ZERO_ERROR;
      uts_[k] = utext_openUTF8(uts_[k], text_.data() + from, static_cast<std::int64_t>(end - from),
                               &status);
      icu::BreakIterator& it = *sentences_[k];
      it.setText(uts_[k], status);
      if (U_FAILURE(status))
        throw InputError("ICU sentence segmentation failed: " + icuError(status));
      std::vector<std::size_t>& out = parts_[k];
      out.clear();
      for (std::int32_t b = it.next(); b != icu::BreakIterator::DONE; b = it.next()) {
        const std::size_t at = from + static_cast<std::size_t>(b);
        if (at > until) break;  // includes the artificial end of a truncated text
        out.push_back(at);
      }
    };
    auto until = [&](std::size_t k) { return k + 1 < blocks ? starts_[k + 1] + kOverlap : n; };
    if (blocks == 1) {
      block(0, pos, n);
      bounds_.swap(parts_[0]);
      return;
    }
    detail::ParallelErrors errors;
#pragma omp parallel for num_threads(static_cast <int>(std::min(blocks, threads_))) \
    schedule(dynamic, 1)
    for (std::size_t k = 0; k < blocks; ++k) errors.run([&] { block(k, starts_[k], until(k)); });
    errors.rethrow();
    bounds_.clear();
    std::size_t k = 0, i = 0;  // following parts_[k] from index i
    while (true) {
      const std::vector<std::size_t>& cur = parts_[k];
      if (k + 1 == blocks) {
        bounds_.insert(bounds_.end(), cur.begin() + static_cast<std::ptrdiff_t>(i), cur.end());
        return;
      }
      const std::size_t next = starts_[k + 1];
      const std::vector<std::size_t>& nxt = parts_[k + 1];
      bool synced = false;
      for (; i < cur.size(); ++i) {
        bounds_.push_back(cur[i]);
        if (cur[i] > next) {
          const auto it = std::lower_bound(nxt.begin(), nxt.end(), cur[i]);
          if (it != nxt.end() && *it == cur[i]) {
            i = static_cast<std::size_t>(it - nxt.begin()) + 1;
            synced = true;
            break;
          }
        }
      }
      if (!synced) {
        // No common boundary within the overlap: one pass from the last trusted one.
        const std::size_t from = bounds_.empty() ? pos : bounds_.back();
        if (from < n) {
          block(0, from, n);
          bounds_.insert(bounds_.end(), parts_[0].begin(), parts_[0].end());
        }
        return;
      }
      ++k;
    }
  }

  void tokenizeRanges() {
    const std::size_t m = ranges_.size();
    if (m == 0) return;
    const int threads = static_cast<int>(std::min<std::size_t>(threads_, (m + 63) / 64));
    while (static_cast<int>(workers_.size()) < std::max(threads, 1))
      workers_.push_back(std::make_unique<WordWorker>(impl_));
    if (threads <= 1) {
      for (const Range& r : ranges_) {
        workers_[0]->run(text_.data() + r.begin, r.end - r.begin, one_);
        if (!one_.empty()) sink_(std::move(one_));
      }
      return;
    }
    if (results_.size() < m) results_.resize(m);
    detail::ParallelErrors errors;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 32)
    for (std::size_t i = 0; i < m; ++i) {
      errors.run([&] {
        workers_[static_cast<std::size_t>(omp_get_thread_num())]->run(
            text_.data() + ranges_[i].begin, ranges_[i].end - ranges_[i].begin, results_[i]);
      });
    }
    errors.rethrow();
    for (std::size_t i = 0; i < m; ++i)
      if (!results_[i].empty()) sink_(std::move(results_[i]));
  }

  TokenizerCore& impl_;
  const TokenizerOptions& opt_;
  const SentenceSink& sink_;
  detail::TextNormalizer norm_;
  std::size_t threads_;
  std::size_t threshold_;
  std::string text_;
  std::vector<std::unique_ptr<icu::BreakIterator>> sentences_;  // one per block
  std::vector<UText*> uts_;
  std::vector<std::vector<std::size_t>> parts_;
  std::vector<std::size_t> starts_;
  std::vector<std::size_t> bounds_;
  std::vector<Range> ranges_;
  std::vector<std::unique_ptr<WordWorker>> workers_;
  std::vector<Sentence> results_;
  Sentence one_;
};

}  // namespace

Tokenizer::Tokenizer(TokenizerOptions options)
    : impl_(std::make_unique<detail::TokenizerCore>(std::move(options))) {}
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

const TokenizerOptions& Tokenizer::options() const { return impl_->opt; }

std::vector<Sentence> Tokenizer::tokenize(std::string_view utf8) const {
  std::vector<Sentence> out;
  const SentenceSink sink = [&](Sentence&& s) { out.push_back(std::move(s)); };
  Stream stream(*impl_, sink, "<text>");
  const std::size_t step = impl_->opt.chunkBytes;
  for (std::size_t i = 0; i < utf8.size(); i += step)
    stream.feed(utf8.data() + i, std::min(step, utf8.size() - i));
  stream.finish();
  return out;
}

void Tokenizer::tokenize(std::istream& in, const SentenceSink& sink,
                         const std::string& sourceName) const {
  Stream stream(*impl_, sink, sourceName);
  std::vector<char> buf(impl_->opt.chunkBytes);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got > 0) stream.feed(buf.data(), got);
  }
  if (in.bad()) throw IoError("error while reading '" + sourceName + "'");
  stream.finish();
}

void Tokenizer::tokenizeFile(const std::string& path, const SentenceSink& sink) const {
  const auto in = detail::openInput(path);
  tokenize(*in, sink, detail::inputName(path));
}

}  // namespace posvec
