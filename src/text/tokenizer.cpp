// The tokenizer's options, its shared ICU prototypes, and the stream: text
// normalised chunk by chunk (utf8.hpp), cut into sentences (ICU, in parallel
// blocks) or lines (pre-tokenized), each handed to the word stage
// (tokenizer_words.cpp) on several threads, in order.
#include "posvec/tokenizer.hpp"

#include <omp.h>
#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/utext.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string_view>

#include "input.hpp"
#include "parallel.hpp"
#include "posvec/error.hpp"
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

// English abbreviations after which a sentence does not end. ICU's own list
// (the ss=standard keyword) holds Mr., Mrs., Prof. and the like but not Dr., St.
// or Jr., and its filter lets "U.S." end a sentence before a capital; NLTK's
// splitter keeps all of these inside the sentence. Case matters, as in ICU.
bool isAbbreviation(std::string_view word) {
  static const std::string_view kWords[] = {
      "Mr.",  "Mrs.", "Ms.",   "Messrs.", "Mme.",  "Dr.",   "Prof.",  "Rev.",  "St.",
      "Jr.",  "Sr.",  "Gen.",  "Gov.",    "Sen.",  "Rep.",  "Pres.",  "Capt.", "Col.",
      "Lt.",  "Sgt.", "Maj.",  "Cmdr.",   "Adm.",  "Supt.", "Atty.",  "Hon.",  "Mt.",
      "Ft.",  "Ave.", "Blvd.", "Co.",     "Corp.", "Bros.", "No.",    "Nos.",  "vs.",
      "e.g.", "i.e.", "cf.",   "U.S.",    "U.K.",  "U.N.",  "U.S.A.", "Jan.",  "Feb.",
      "Apr.", "Aug.", "Sept.", "Sep.",    "Oct.",  "Nov.",  "Dec."};
  for (std::string_view w : kWords)
    if (word == w) return true;
  return false;
}

// Whether the sentence boundary ICU found at `at` follows an abbreviation (the
// last word before it, spaces skipped; never across a line break, which is a
// paragraph break in prose, nor at the end of the text).
bool afterAbbreviation(const std::string& text, std::size_t at) {
  if (at >= text.size()) return false;
  std::size_t end = at;
  while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
  if (end == 0 || text[end - 1] != '.') return false;
  std::size_t begin = end;
  while (begin > 0 && text[begin - 1] != ' ' && text[begin - 1] != '\n' && text[begin - 1] != '(' &&
         text[begin - 1] != '"' && end - begin < 8)
    --begin;
  return isAbbreviation(std::string_view(text).substr(begin, end - begin));
}

}  // namespace

void TokenizerOptions::validate() const {
  checkSettings(kTokenizerSettings, *this);
  if (locale.empty())
    throw ConfigError(ErrorText("tokenizer locale is empty (use e.g. ")
                      << settingNamed(kTokenizerSettings, "locale") << " en)");
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

TokenizerCore::TokenizerCore(TokenizerOptions o) : opt(std::move(o)) {
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

std::unique_ptr<icu::BreakIterator> TokenizerCore::clone(const icu::BreakIterator& proto) {
  std::lock_guard<std::mutex> lock(protoMutex);
  return std::unique_ptr<icu::BreakIterator>(proto.clone());
}

}  // namespace detail

namespace {

using detail::icuError;
using detail::TokenizerCore;
using detail::WordWorker;

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
        if (impl_.english && afterAbbreviation(text_, at)) continue;
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
      workers_.push_back(detail::makeWordWorker(impl_));
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