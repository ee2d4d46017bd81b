// The counting pass on several threads. Each pre-tokenized file is cut into one
// byte range per thread at line starts; every thread counts its range in a table
// of its own (ids in its own first-seen order) and writes its ids to a region of
// the id stream that no other thread writes (a range of B bytes holds at most
// B + 1 ids: every id is a word of at least one byte or the end of a line).
// The tables are then merged in corpus order: a word's provisional id is its
// first occurrence in the whole corpus and its count the sum, exactly what one
// thread counting the files from the start gives. remap() then maps every
// region through its own table and packs the stream, so the stream, the
// vocabulary and the shard index are bit for bit those of the one-thread pass.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <istream>
#include <streambuf>

#include "corpus_detail.hpp"
#include "input.hpp"
#include "parallel.hpp"
#include "posvec/error.hpp"

namespace posvec::detail {

namespace {

// Reads bytes [begin, end) of a file (pread: threads share nothing).
class RangeBuf final : public std::streambuf {
 public:
  RangeBuf(int fd, std::int64_t begin, std::int64_t end)
      : fd_(fd), pos_(begin), end_(end), buf_(1 << 20) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (pos_ >= end_) return traits_type::eof();
    const auto want =
        static_cast<std::size_t>(std::min<std::int64_t>(end_ - pos_, std::ssize(buf_)));
    ssize_t got;
    do {
      got = ::pread(fd_, buf_.data(), want, static_cast<off_t>(pos_));
    } while (got < 0 && errno == EINTR);
    // The istream turns the exception into badbit; the reader reports it.
    if (got <= 0) throw IoError("read failed");
    pos_ += got;
    setg(buf_.data(), buf_.data(), buf_.data() + got);
    return traits_type::to_int_type(*gptr());
  }

 private:
  int fd_;
  std::int64_t pos_, end_;
  std::vector<char> buf_;
};

class Fd {
 public:
  explicit Fd(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
  }
  ~Fd() { ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// The first line start at or after `from` (the file size when none).
std::int64_t nextLineStart(int fd, std::int64_t from, std::int64_t size, const std::string& path) {
  if (from <= 0) return 0;
  char buf[4096];
  std::int64_t pos = from - 1;  // a range may start right after a '\n' at from - 1
  while (pos < size) {
    const ssize_t got = ::pread(fd, buf, sizeof buf, static_cast<off_t>(pos));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw IoError("error while reading '" + path + "'");
    const void* nl = std::memchr(buf, '\n', static_cast<std::size_t>(got));
    if (nl) return pos + (static_cast<const char*>(nl) - buf) + 1;
    pos += got;
  }
  return size;
}

// True when the file starts like a gzip, bzip2, xz or zstd stream: byte ranges
// of a compressed file are not ranges of its text.
bool looksCompressed(const std::string& path) {
  const auto kind = fileCompression(path);
  return !kind || !kind->empty();  // unreadable: let the one-thread pass report it
}

// Files the threads can split: pre-tokenized, uncompressed regular files (not
// stdin, pipes, directories or raw text, whose tokenizer reads a file as a
// whole). A file that cannot be stat'ed goes to the one-thread pass, which
// reports the error.
bool splittable(const CorpusSource& corpus) {
  if (!corpus.pretokenized() || corpus.paths().empty() || corpus.generator()) return false;
  for (const auto& path : corpus.paths()) {
    struct stat st {};
    if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        looksCompressed(path))
      return false;
  }
  return true;
}

// Thrown inside a thread whose table outgrows the limit: the corpus is counted on one thread.
struct TooManyWords {};
// Thrown inside a thread whose part is not valid input: the one-thread pass reads the
// file again and reports the error with the line and byte offset in the whole file.
struct BadPart {};

struct Part {
  std::int64_t begin = 0, end = 0;  // bytes of the file
  std::int64_t base = 0;            // first id slot of this part's region
  std::int64_t written = 0;         // ids written
  std::int64_t sentences = 0;       // lines with words
  VocabularyBuilder words{0};       // never prunes: the limit is checked instead
  std::vector<WordId> map;          // local id -> provisional id, later -> final id
};

}  // namespace

std::unique_ptr<PreparedCorpus> countInParallel(const CorpusSource& corpus, std::int64_t minCount,
                                                std::size_t maxVocab, std::size_t maxTableSize,
                                                int threads) {
  if (threads < 2 || !splittable(corpus)) return nullptr;
  auto out = std::make_unique<PreparedCorpus>();
  out->stream = IdStream(false);
  VocabularyBuilder merged(0);
  std::vector<std::vector<WordId>> maps;  // one per part, in corpus order
  std::vector<IdStream::Segment> segments;
  std::int64_t nextBase = 0;
  const auto limit = maxTableSize > 0 ? maxTableSize : SIZE_MAX;

  for (const auto& path : corpus.paths()) {
    const Fd fd(path);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
      throw IoError("cannot read '" + path + "': " + std::strerror(errno));
    const std::int64_t size = st.st_size;
    std::vector<Part> parts(static_cast<std::size_t>(threads));
    for (int k = 0; k < threads; ++k) {
      Part& p = parts[static_cast<std::size_t>(k)];
      p.begin = k == 0 ? 0
                       : std::max(parts[static_cast<std::size_t>(k) - 1].begin,
                                  nextLineStart(fd.get(), size * k / threads, size, path));
      if (k > 0) parts[static_cast<std::size_t>(k) - 1].end = p.begin;
    }
    parts.back().end = size;
    for (auto& p : parts) {
      p.base = nextBase;
      nextBase += p.end - p.begin + 1;
    }

    ParallelErrors errors;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int k = 0; k < threads; ++k) {
      errors.run([&] {
        Part& p = parts[static_cast<std::size_t>(k)];
        if (p.begin == p.end) return;
        RangeBuf buf(fd.get(), p.begin, p.end);
        std::istream in(&buf);
        std::vector<std::int32_t> pending;
        pending.reserve(IdStream::kChunk);
        auto push = [&](std::int32_t id) {
          pending.push_back(id);
          if (pending.size() == IdStream::kChunk) {
            out->stream.writeIds(p.base + p.written, pending.data(), pending.size());
            p.written += static_cast<std::int64_t>(pending.size());
            pending.clear();
          }
        };
        try {
          readPretokenizedStream(
              in, path, corpus.tokenizer().replaceInvalid,
              [&](std::string_view w) {
                push(p.words.add(w));
                if (p.words.distinct() > limit) throw TooManyWords{};
              },
              [&] {
                push(IdStream::kEnd);
                ++p.sentences;
              });
        } catch (const InputError&) {
          throw BadPart{};
        }
        out->stream.writeIds(p.base + p.written, pending.data(), pending.size());
        p.written += static_cast<std::int64_t>(pending.size());
      });
    }
    try {
      errors.rethrow();
    } catch (const TooManyWords&) {
      return nullptr;
    } catch (const BadPart&) {
      return nullptr;
    }

    // Corpus order: part k's words come after every word of parts 0..k-1.
    for (auto& p : parts) {
      p.map.assign(p.words.distinct(), -1);
      p.words.forEachInIdOrder([&](std::string_view w, std::int32_t id, std::int64_t count) {
        p.map[static_cast<std::size_t>(id)] = merged.addCount(w, count);
      });
      if (merged.distinct() > limit) return nullptr;
      out->sentences += p.sentences;
      maps.push_back(std::move(p.map));
      segments.push_back({p.base, p.base + p.written, nullptr});
    }
  }

  if (merged.tokens() == 0) throw InputError(describeCorpus(corpus) + " contains no words");
  out->distinctWords = static_cast<std::int64_t>(merged.distinct());
  out->tokens = merged.tokens();
  std::vector<WordId> final;
  try {
    out->vocabulary = merged.finish(minCount, maxVocab, &final);
  } catch (const InputError& e) {
    throw InputError(describeCorpus(corpus) + ": " + e.what());
  }
  for (std::size_t i = 0; i < maps.size(); ++i) {
    for (auto& id : maps[i]) id = final[static_cast<std::size_t>(id)];
    segments[i].map = &maps[i];
  }
  out->stream.setExtent(nextBase);
  out->stream.remap(segments);
  return out;
}

}  // namespace posvec::detail
