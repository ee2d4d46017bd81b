#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "ascii_space.hpp"
#include "corpus_detail.hpp"
#include "input.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "posvec/tokenizer.hpp"
#include "utf8.hpp"

namespace posvec::detail {

namespace {

std::string tempDir() {
  std::error_code ec;
  auto p = std::filesystem::temp_directory_path(ec);
  return ec ? std::string("/tmp") : p.string();
}

}  // namespace

IdStream::IdStream(bool inMemory) : inMemory_(inMemory) {
  if (inMemory_) return;
  std::string tmpl = tempDir() + "/posvec-corpus-XXXXXX";
  fd_ = ::mkstemp(tmpl.data());
  if (fd_ < 0)
    throw IoError("cannot create a temporary file in '" + tempDir() + "': " + std::strerror(errno) +
                  " (set TMPDIR to a writable directory)");
  // Unlinked at once: the space is returned even if the process dies.
  ::unlink(tmpl.c_str());
  buffer_.reserve(kChunk);
}

IdStream::~IdStream() {
  if (fd_ >= 0) ::close(fd_);
}

IdStream::IdStream(IdStream&& o) noexcept
    : inMemory_(o.inMemory_),
      fd_(o.fd_),
      size_(o.size_),
      words_(o.words_),
      buffer_(std::move(o.buffer_)),
      starts_(std::move(o.starts_)) {
  o.fd_ = -1;
}

IdStream& IdStream::operator=(IdStream&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    inMemory_ = o.inMemory_;
    fd_ = o.fd_;
    size_ = o.size_;
    words_ = o.words_;
    buffer_ = std::move(o.buffer_);
    starts_ = std::move(o.starts_);
    o.fd_ = -1;
  }
  return *this;
}

void IdStream::writeAt(std::int64_t pos, const std::int32_t* data, std::size_t n) {
  const char* p = reinterpret_cast<const char*>(data);
  std::size_t left = n * sizeof(std::int32_t);
  off_t off = static_cast<off_t>(pos) * static_cast<off_t>(sizeof(std::int32_t));
  while (left > 0) {
    const ssize_t w = ::pwrite(fd_, p, left, off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      throw IoError("cannot write the temporary corpus file in '" + tempDir() +
                    "': " + std::strerror(errno) + " (disk full? set TMPDIR elsewhere)");
    p += w;
    off += w;
    left -= static_cast<std::size_t>(w);
  }
}

void IdStream::flush() {
  if (inMemory_) return;
  if (buffer_.empty()) return;
  writeAt(size_, buffer_.data(), buffer_.size());
  size_ += static_cast<std::int64_t>(buffer_.size());
  buffer_.clear();
}

std::size_t IdStream::read(std::int64_t pos, std::int32_t* out, std::size_t n) const {
  const std::int64_t total = inMemory_ ? static_cast<std::int64_t>(buffer_.size()) : size_;
  if (pos >= total) return 0;
  n = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(n), total - pos));
  if (inMemory_) {
    std::memcpy(out, buffer_.data() + pos, n * sizeof(std::int32_t));
    return n;
  }
  char* p = reinterpret_cast<char*>(out);
  std::size_t left = n * sizeof(std::int32_t);
  off_t off = static_cast<off_t>(pos) * static_cast<off_t>(sizeof(std::int32_t));
  while (left > 0) {
    const ssize_t r = ::pread(fd_, p, left, off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw IoError(std::string("cannot read the temporary corpus file: ") +
                    (r == 0 ? "it was truncated" : std::strerror(errno)));
    p += r;
    off += r;
    left -= static_cast<std::size_t>(r);
  }
  return n;
}

void IdStream::remap(const std::vector<WordId>& map, std::int64_t indexStep) {
  flush();
  remap(std::vector<Segment>{{0, size(), &map}}, indexStep);
}

void IdStream::setExtent(std::int64_t size) {
  flush();
  size_ = size;
}

void IdStream::remap(const std::vector<Segment>& segments, std::int64_t indexStep) {
  flush();
  std::int64_t total = 0;
  for (const auto& seg : segments) total += seg.end - seg.begin;
  // About a thousand shard points, whatever the size (small in-memory corpora too).
  if (indexStep <= 0) indexStep = 1 << 16;
  indexStep = std::clamp<std::int64_t>(total / 1024, 64, indexStep);
  starts_.assign(1, 0);
  std::int64_t nextMark = indexStep;
  std::int64_t writePos = 0;
  std::vector<std::int32_t> in(inMemory_ ? 0 : kChunk), out;
  out.reserve(kChunk);
  bool sentenceOpen = false;  // current output sentence has at least one id
  std::int64_t words = 0;
  auto emit = [&](std::int32_t id) {
    if (inMemory_) {
      buffer_[static_cast<std::size_t>(writePos)] = id;
    } else {
      out.push_back(id);
      if (out.size() == kChunk) {
        writeAt(writePos - static_cast<std::int64_t>(out.size()) + 1, out.data(), out.size());
        out.clear();
      }
    }
    ++writePos;
  };
  // Output never overtakes input (segments are in increasing order), so in place.
  for (const auto& seg : segments) {
    const std::vector<WordId>& map = *seg.map;
    std::int64_t readPos = seg.begin;
    while (readPos < seg.end) {
      const std::int32_t* chunk;
      std::size_t n;
      if (inMemory_) {
        chunk = buffer_.data() + readPos;
        n = static_cast<std::size_t>(seg.end - readPos);
      } else {
        n = read(readPos, in.data(),
                 static_cast<std::size_t>(std::min<std::int64_t>(kChunk, seg.end - readPos)));
        if (n == 0) throw IoError("the temporary corpus file is shorter than written");
        chunk = in.data();
      }
      for (std::size_t i = 0; i < n; ++i) {
        const std::int32_t id = chunk[i];
        if (id == kEnd) {
          if (sentenceOpen) {
            emit(kEnd);
            sentenceOpen = false;
            if (writePos >= nextMark) {
              starts_.push_back(writePos);
              nextMark = writePos + indexStep;
            }
          }
          continue;
        }
        const WordId mapped = map[static_cast<std::size_t>(id)];
        if (mapped < 0) continue;
        emit(mapped);
        ++words;
        sentenceOpen = true;
      }
      readPos += static_cast<std::int64_t>(n);
    }
  }
  if (sentenceOpen) emit(kEnd);
  if (inMemory_) {
    buffer_.resize(static_cast<std::size_t>(writePos));
    buffer_.shrink_to_fit();
  } else {
    if (!out.empty())
      writeAt(writePos - static_cast<std::int64_t>(out.size()), out.data(), out.size());
    if (::ftruncate(fd_, static_cast<off_t>(writePos) * static_cast<off_t>(sizeof(std::int32_t))) !=
        0)
      throw IoError(std::string("cannot shrink the temporary corpus file: ") +
                    std::strerror(errno));
    size_ = writePos;
  }
  if (starts_.back() >= writePos && starts_.size() > 1) starts_.pop_back();
  words_ = words;
}

std::pair<std::int64_t, std::int64_t> IdStream::shard(int k, int n) const {
  const std::int64_t total = size();
  auto boundary = [&](int j) -> std::int64_t {
    if (j <= 0) return 0;
    if (j >= n) return total;
    const std::int64_t target = total * j / n;
    auto it = std::lower_bound(starts_.begin(), starts_.end(), target);
    return it == starts_.end() ? total : *it;
  };
  return {boundary(k), boundary(k + 1)};
}

ShardReader::ShardReader(const IdStream& stream, std::int64_t begin, std::int64_t end)
    : stream_(stream), pos_(begin), end_(end), buf_(IdStream::kChunk) {}

bool ShardReader::fill() {
  if (pos_ >= end_) return false;
  const auto want = static_cast<std::size_t>(
      std::min<std::int64_t>(static_cast<std::int64_t>(buf_.size()), end_ - pos_));
  have_ = stream_.read(pos_, buf_.data(), want);
  at_ = 0;
  pos_ += static_cast<std::int64_t>(have_);
  return have_ > 0;
}

bool ShardReader::next(std::vector<std::int32_t>& sentence) {
  sentence.clear();
  for (;;) {
    if (at_ == have_ && !fill()) return !sentence.empty();
    while (at_ < have_) {
      const std::int32_t id = buf_[at_++];
      if (id == IdStream::kEnd) {
        if (!sentence.empty()) return true;
        continue;
      }
      sentence.push_back(id);
      if (sentence.size() == kMaxSentence) return true;
    }
  }
}

namespace {

// Offset of the first byte of `s` that does not start a well-formed character.
std::size_t firstInvalidByte(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (i + len > s.size() || !isValidUtf8(s.substr(i, len))) return i;
    i += len;
  }
  return std::string_view::npos;
}

// Whitespace-split lines, read in large blocks; a line is a sentence. Every word
// is checked as it is counted: invalid UTF-8 stops the counting pass with the file,
// line and byte offset (before any training), or becomes U+FFFD with replaceInvalid.
void readPretokenized(std::istream& in, const std::string& name, bool replaceInvalid,
                      const std::function<void(std::string_view)>& onWord,
                      const std::function<void()>& onEnd, std::uint64_t firstLine = 1,
                      std::uint64_t firstOffset = 0, bool startOpen = false,
                      bool lineGoesOn = false) {
  constexpr std::size_t kBlock = 1 << 20;
  // Not zeroed: a short stream (a counting block of a few bytes) touches one page of it.
  const std::unique_ptr<char[]> buf(new char[kBlock]);
  std::string carry;  // an unfinished word from the previous block
  std::uint64_t carryStart = 0, blockStart = firstOffset, line = firstLine;
  std::string fixed;
  auto word = [&](std::string_view w, std::uint64_t offset) {
    // A word longer than the limit keeps its first kMaxWordBytes bytes, cut at a
    // character boundary; `carry` holds one byte more than that, to see where the cut goes.
    w = w.substr(0, utf8Prefix(w, kMaxWordBytes));
    if (isValidUtf8(w)) return onWord(w);
    if (replaceInvalid) {
      fixed.clear();
      TextNormalizer normalizer(true, true, name);
      normalizer.feed(w.data(), w.size(), fixed);
      normalizer.finish(fixed);
      fixed.resize(utf8Prefix(fixed, kMaxWordBytes));  // U+FFFD takes three bytes
      return onWord(fixed);
    }
    const std::size_t at = firstInvalidByte(w);
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(w[at]));
    throw InputError(ErrorText("'" + name + "' line " + std::to_string(line) +
                               ": invalid UTF-8 at byte offset " + std::to_string(offset + at) +
                               " (byte " + hex +
                               "; convert the file to UTF-8, or replace bad bytes with U+FFFD: ")
                     << settingNamed(kTokenizerSettings, "replaceInvalid") << ")");
  };
  bool lineOpen = startOpen;
  for (;;) {
    in.read(buf.get(), static_cast<std::streamsize>(kBlock));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    std::size_t i = 0;
    while (i < got) {
      const unsigned char c = static_cast<unsigned char>(buf[i]);
      if (c == '\n') {
        if (!carry.empty()) {
          word(carry, carryStart);
          carry.clear();
        }
        if (lineOpen) onEnd();
        lineOpen = false;
        ++line;
        ++i;
      } else if (isAsciiSpace(static_cast<char>(c))) {
        if (!carry.empty()) {
          word(carry, carryStart);
          carry.clear();
        }
        ++i;
      } else {
        std::size_t j = i;
        while (j < got && buf[j] != '\n' && !isAsciiSpace(buf[j])) ++j;
        // What a carried word keeps: the bytes past kMaxWordBytes + 1 are dropped
        // as they arrive, so a word without end (a file of zeros) takes no memory.
        auto keep = [&](std::size_t n) { return std::min(n, kMaxWordBytes + 1 - carry.size()); };
        if (j == got) {
          if (carry.empty()) carryStart = blockStart + i;
          carry.append(buf.get() + i, keep(j - i));
        } else if (carry.empty()) {
          word(std::string_view(buf.get() + i, j - i), blockStart + i);
        } else {
          carry.append(buf.get() + i, keep(j - i));
          word(carry, carryStart);
          carry.clear();
        }
        lineOpen = true;
        i = j;
      }
    }
    blockStart += got;
  }
  if (in.bad()) throw IoError("error while reading '" + name + "'");
  if (!carry.empty()) word(carry, carryStart);
  if (lineOpen && !lineGoesOn) onEnd();
}

}  // namespace

void readPretokenizedStream(std::istream& in, const std::string& name, bool replaceInvalid,
                            const std::function<void(std::string_view)>& onWord,
                            const std::function<void()>& onEnd, std::uint64_t firstLine,
                            std::uint64_t firstOffset, bool lineOpen, bool lineGoesOn) {
  readPretokenized(in, name, replaceInvalid, onWord, onEnd, firstLine, firstOffset, lineOpen,
                   lineGoesOn);
}

void forEachToken(const CorpusSource& corpus, const std::function<void(std::string_view)>& onWord,
                  const std::function<void()>& onEnd) {
  if (corpus.generator()) {
    corpus.generator()([&](Sentence&& s) {
      for (const auto& w : s) {
        if (!w.empty()) onWord(w);
      }
      onEnd();
    });
    return;
  }
  if (corpus.inMemory()) {
    for (const auto& s : corpus.sentences()) {
      for (const auto& w : s) {
        if (!w.empty()) onWord(w);
      }
      onEnd();
    }
    return;
  }
  for (const auto& path : corpus.paths()) {
    if (corpus.pretokenized()) {
      const auto in = openInput(path);
      readPretokenized(*in, inputName(path), corpus.tokenizer().replaceInvalid, onWord, onEnd);
    } else {
      Tokenizer tokenizer(corpus.tokenizer());
      tokenizer.tokenizeFile(path, [&](Sentence&& s) {
        for (const auto& w : s) onWord(w);
        onEnd();
      });
    }
  }
}

std::string describeCorpus(const CorpusSource& corpus) {
  if (corpus.paths().empty()) return "the corpus";
  std::string s;
  for (const auto& p : corpus.paths()) s += (s.empty() ? "'" : ", '") + p + "'";
  return (corpus.paths().size() == 1 ? "corpus " : "corpus files ") + s;
}

PreparedCorpus prepareCorpus(const CorpusSource& corpus, std::int64_t minCount,
                             std::size_t maxVocab, std::size_t maxTableSize, int threads,
                             const VocabularyMerge& merge) {
  // A distributed share is counted on one thread: its vocabulary is merged across processes.
  if (threads > 1 && !merge) {
    // Regular files are cut into byte ranges; what cannot be cut (standard input, pipes,
    // compressed files) is read on one thread and counted by the others in blocks.
    if (splittableCorpus(corpus)) {
      if (auto parallel = countInParallel(corpus, minCount, maxVocab, maxTableSize, threads))
        return std::move(*parallel);
    } else if (auto streamed =
                   countStreamInParallel(corpus, minCount, maxVocab, maxTableSize, threads)) {
      return std::move(*streamed);
    }
  }
  PreparedCorpus out;
  out.stream = IdStream(corpus.inMemory());
  VocabularyBuilder builder(maxTableSize);
  forEachToken(
      corpus, [&](std::string_view w) { out.stream.push(builder.add(w)); },
      [&] {
        out.stream.push(IdStream::kEnd);
        ++out.sentences;
      });
  if (builder.tokens() == 0 && !merge)
    throw InputError(describeCorpus(corpus) + " contains no words");
  out.distinctWords = static_cast<std::int64_t>(builder.distinct());
  out.tokens = builder.tokens();
  out.prunings = builder.prunings();
  std::vector<WordId> map;
  try {
    out.vocabulary =
        merge ? merge(builder, minCount, maxVocab, &map) : builder.finish(minCount, maxVocab, &map);
  } catch (const InputError& e) {
    throw InputError(describeCorpus(corpus) + ": " + e.what());
  }
  out.stream.remap(map);
  return out;
}

PreparedCorpus prepareCorpus(const CorpusSource& corpus, const Vocabulary& vocabulary,
                             bool shareOnly) {
  PreparedCorpus out;
  out.stream = IdStream(corpus.inMemory());
  out.vocabulary = vocabulary;
  std::int64_t kept = 0;
  forEachToken(
      corpus,
      [&](std::string_view w) {
        ++out.tokens;
        const WordId id = vocabulary.find(w);
        if (id >= 0) {
          out.stream.push(id);
          ++kept;
        }
      },
      [&] {
        out.stream.push(IdStream::kEnd);
        ++out.sentences;
      });
  if (kept == 0 && !shareOnly)
    throw InputError(describeCorpus(corpus) + " contains none of the " +
                     std::to_string(vocabulary.size()) + " words of the vocabulary");
  std::vector<WordId> identity(vocabulary.size());
  for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<WordId>(i);
  out.stream.remap(identity);  // drops empty sentences, builds the shard index
  return out;
}

}  // namespace posvec::detail

namespace posvec {

CorpusSource CorpusSource::fromFiles(std::vector<std::string> paths, bool pretokenized,
                                     TokenizerOptions tokenizer, bool recursive) {
  if (paths.empty()) throw InputError("no corpus file given");
  CorpusSource c;
  c.paths_ = detail::expandCorpusPaths(paths, recursive, &c.skipped_);
  c.pretokenized_ = pretokenized;
  c.tokenizer_ = std::move(tokenizer);
  return c;
}

CorpusSource CorpusSource::fromSentences(std::vector<Sentence> sentences) {
  CorpusSource c;
  c.sentences_ = std::move(sentences);
  return c;
}

CorpusSource CorpusSource::fromGenerator(Generator generate) {
  if (!generate) throw InputError("no sentence generator given");
  CorpusSource c;
  c.generator_ = std::move(generate);
  return c;
}

}  // namespace posvec
