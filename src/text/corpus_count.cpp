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
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <istream>
#include <mutex>
#include <streambuf>
#include <thread>

#include "ascii_space.hpp"
#include "corpus_detail.hpp"
#include "input.hpp"
#include "parallel.hpp"
#include "posvec/error.hpp"
#include "posvec/tokenizer.hpp"
#include "test_seams.hpp"

namespace posvec::detail {

Fd::Fd(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
  if (fd_ < 0) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
}

Fd::~Fd() { ::close(fd_); }

std::size_t readAt(int fd, char* buf, std::size_t n, std::int64_t pos, const std::string& path,
                   std::int64_t size) {
  ssize_t got;
  do {
    got = ::pread(fd, buf, n, static_cast<off_t>(pos));
  } while (got < 0 && errno == EINTR);
  if (got == 0) throwChangedWhileReading(path, fd, size);  // ends before its size
  if (got < 0) throw IoError("error while reading '" + path + "': " + std::strerror(errno));
  return static_cast<std::size_t>(got);
}

std::int64_t nextLineStart(int fd, std::int64_t from, std::int64_t size, const std::string& path) {
  if (from <= 0) return 0;
  char buf[4096];
  std::int64_t pos = from - 1;  // a range may start right after a '\n' at from - 1
  while (pos < size) {
    const std::size_t got = readAt(fd, buf, sizeof buf, pos, path, size);
    const void* nl = std::memchr(buf, '\n', got);
    if (nl) return pos + (static_cast<const char*>(nl) - buf) + 1;
    pos += static_cast<std::int64_t>(got);
  }
  return size;
}

namespace {

// Reads bytes [begin, end) of a file (pread: threads share nothing).
class RangeBuf final : public std::streambuf {
 public:
  RangeBuf(int fd, std::int64_t begin, std::int64_t end, const std::string& path,
           std::int64_t size)
      : fd_(fd), pos_(begin), end_(end), buf_(1 << 20), path_(path), size_(size) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (pos_ >= end_) return traits_type::eof();
    const auto want =
        static_cast<std::size_t>(std::min<std::int64_t>(end_ - pos_, std::ssize(buf_)));
    // The istream's exception mask includes badbit: readAt's errors reach the caller.
    const std::size_t got = readAt(fd_, buf_.data(), want, pos_, path_, size_);
    pos_ += static_cast<std::int64_t>(got);
    setg(buf_.data(), buf_.data(), buf_.data() + got);
    return traits_type::to_int_type(*gptr());
  }

 private:
  int fd_;
  std::int64_t pos_, end_;
  std::vector<char> buf_;
  const std::string& path_;
  std::int64_t size_;  // the file's size when the ranges were cut
};

// True when the file starts like a gzip, bzip2, xz or zstd stream: byte ranges
// of a compressed file are not ranges of its text.
bool looksCompressed(const std::string& path) {
  const auto kind = fileCompression(path);
  return !kind || !kind->empty();  // unreadable: let the one-thread pass report it
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
  VocabularyBuilder words{0, 0};    // never prunes: the limits are checked instead
  std::vector<WordId> map;          // local id -> provisional id, later -> final id
};

}  // namespace

// Files the threads can split: pre-tokenized, uncompressed regular files (not
// stdin, pipes, directories or raw text, whose tokenizer reads a file as a
// whole). A file that cannot be stat'ed goes to the one-thread pass, which
// reports the error.
bool splittableCorpus(const CorpusSource& corpus) {
  if (!corpus.pretokenized() || corpus.paths().empty() || corpus.generator()) return false;
  for (const auto& path : corpus.paths()) {
    struct stat st {};
    if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        looksCompressed(path))
      return false;
  }
  return true;
}

std::unique_ptr<PreparedCorpus> countInParallel(const CorpusSource& corpus, std::int64_t minCount,
                                                std::size_t maxVocab, std::size_t maxTableSize,
                                                int threads) {
  if (threads < 2 || !splittableCorpus(corpus)) return nullptr;
  auto out = std::make_unique<PreparedCorpus>();
  out->stream = IdStream(false);
  VocabularyBuilder merged(0, 0);
  std::vector<std::vector<WordId>> maps;  // one per part, in corpus order
  std::vector<IdStream::Segment> segments;
  std::int64_t nextBase = 0;
  const auto limit = maxTableSize > 0 ? maxTableSize : SIZE_MAX;
  const std::uint64_t byteLimit = VocabularyBuilder::kDefaultTableBytes;

  for (const auto& path : corpus.paths()) {
    const Fd fd(path);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
      throw IoError("cannot read '" + path + "': " + std::strerror(errno));
    const std::int64_t size = st.st_size;
    resizeInputForTest(path);
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
        RangeBuf buf(fd.get(), p.begin, p.end, path, size);
        std::istream in(&buf);
        in.exceptions(std::ios::badbit);  // a failed read's own message, not a generic one
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
                if (p.words.distinct() > limit || p.words.bytes() > byteLimit)
                  throw TooManyWords{};
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
    // Appended to while the ranges were read (a shorter file failed a read above).
    if (::fstat(fd.get(), &st) != 0 || st.st_size != size)
      throwChangedWhileReading(path, fd.get(), size);

    // Corpus order: part k's words come after every word of parts 0..k-1.
    for (auto& p : parts) {
      p.map.assign(p.words.distinct(), -1);
      p.words.forEachInIdOrder([&](std::string_view w, std::int32_t id, std::int64_t count) {
        p.map[static_cast<std::size_t>(id)] = merged.addCount(w, count);
      });
      if (merged.distinct() > limit || merged.bytes() > byteLimit) return nullptr;
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

// ---- input that cannot be cut into byte ranges ------------------------------
//
// One reader thread reads each input in order and hands on whole lines in blocks;
// workers count blocks into tables of their own; the calling thread takes the
// blocks back in corpus order and adds each table to the one-thread pass's table
// (provisional ids in first-seen order, counts summed) and the block's ids, mapped
// to those provisional ids, to the stream. The stream before remap() is then the
// one-thread pass's, id for id. A block is cut after a newline, so no word or line
// spans two blocks (a newline is never inside a UTF-8 character), and carries its
// first line number and byte offset in its input for error messages.

namespace {

struct StreamBlock {
  std::string text;  // whole lines (the last block of an input may end without a newline)
  const std::string* name = nullptr;
  std::uint64_t firstLine = 1, firstOffset = 0;
  // Filled in by the worker that counts it:
  VocabularyBuilder words{0, 0};  // this block's words in its own first-seen order
  std::vector<std::int32_t> ids;  // in that numbering, IdStream::kEnd after each line
  std::int64_t sentences = 0;
  // The block ends inside a line (a line longer than a block is cut after a word,
  // or after the kept part of an over-long word): its last line goes on in the next
  // block, so it ends no sentence; that block starts inside the line (startsOpen),
  // so its first newline, or its end, ends it.
  bool openEnd = false, startsOpen = false;
  std::exception_ptr error;  // invalid UTF-8: rethrown when the merge reaches the block
  bool counted = false;      // the worker is done with it (counted or, alone, skipped)
};

// A string as an input stream, without copying it.
class ViewBuf final : public std::streambuf {
 public:
  explicit ViewBuf(std::string& s) { setg(s.data(), s.data(), s.data() + s.size()); }
};

void countBlock(StreamBlock& b, bool replaceInvalid,
                const std::function<void(std::string_view)>& onWord,
                const std::function<void()>& onEnd) {
  ViewBuf buf(b.text);
  std::istream in(&buf);
  readPretokenizedStream(in, *b.name, replaceInvalid, onWord, onEnd, b.firstLine, b.firstOffset,
                         b.startsOpen, b.openEnd);
}

// The reader, the workers and the queue between them. Shared with the reader
// thread, which may still be waiting for input when the caller stops early (an
// error): it is then left to finish on its own instead of blocking the caller.
class StreamPipeline {
 public:
  static std::shared_ptr<StreamPipeline> start(const CorpusSource& corpus, int threads,
                                               std::size_t blockBytes) {
    auto p = std::shared_ptr<StreamPipeline>(new StreamPipeline(corpus, threads, blockBytes));
    p->reader_ = std::thread([p] { p->read(); });
    for (int t = 0; t < threads; ++t) p->workers_.emplace_back([raw = p.get()] { raw->work(); });
    return p;
  }

  // Stops the workers and lets the reader go: call before the last reference goes.
  void finish() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
    bool done;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done = readerDone_;
    }
    if (done)
      reader_.join();
    else
      reader_.detach();  // blocked on input that may never come; it holds its own reference
  }

  // The next block in corpus order once its worker is done with it; null at the end
  // of the input, or the reader's error after the blocks read before it.
  std::unique_ptr<StreamBlock> next() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] {
      return (!order_.empty() && order_.front()->counted) || (order_.empty() && readerDone_);
    });
    if (order_.empty()) {
      if (readerError_) std::rethrow_exception(readerError_);
      return nullptr;
    }
    std::unique_ptr<StreamBlock> b = std::move(order_.front());
    order_.pop_front();
    lock.unlock();
    changed_.notify_all();  // a free place for the reader
    return b;
  }

  // Workers stop counting: the caller counts the blocks itself from now on.
  void alone() {
    const std::lock_guard<std::mutex> lock(mutex_);
    alone_ = true;
  }

  bool replaceInvalid() const { return replaceInvalid_; }
  // After finish() (the reader then no longer writes it, or was left to itself).
  std::size_t largestBlock() const { return largestBlock_; }

 private:
  StreamPipeline(const CorpusSource& corpus, int threads, std::size_t blockBytes)
      : paths_(corpus.paths()),
        replaceInvalid_(corpus.tokenizer().replaceInvalid),
        blockBytes_(std::max<std::size_t>(blockBytes, 1)),
        // A block for each worker and one ready for the next; with the one being
        // merged and the one being read, threads + 3 blocks are held at most.
        maxInFlight_(static_cast<std::size_t>(threads) + 1) {
    for (const auto& path : paths_) names_.push_back(inputName(path));
  }

  // False when stopped.
  bool push(std::unique_ptr<StreamBlock> b) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || order_.size() < maxInFlight_; });
      if (stop_) return false;
      todo_.push_back(b.get());
      order_.push_back(std::move(b));
    }
    changed_.notify_all();
    return true;
  }

  bool pushText(std::string&& text, std::size_t file, std::uint64_t& line, std::uint64_t& offset,
                bool openEnd = false) {
    auto b = std::make_unique<StreamBlock>();
    b->startsOpen = lineOpen_;
    b->openEnd = lineOpen_ = openEnd;
    b->name = &names_[file];
    b->firstLine = line;
    b->firstOffset = offset;
    line += static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
    offset += text.size();
    if (text.size() > largestBlock_.load()) largestBlock_.store(text.size());
    b->text = std::move(text);
    return push(std::move(b));
  }

  void read() {
    // Reads of at most 1 MiB, as the one-thread reader makes them: when a read fails,
    // the words ended before it are counted (and checked) as that reader would.
    const std::size_t unit = std::min<std::size_t>(1 << 20, blockBytes_);
    try {
      for (std::size_t f = 0; f < paths_.size(); ++f) {
        const auto in = openInput(paths_[f]);
        std::string text;     // read, not yet handed on
        std::size_t cut = 0;  // just after the last newline in `text` (0: none)
        std::uint64_t line = 1, offset = 0;
        bool skipping = false;  // inside a word longer than kMaxWordBytes, past its kept part
        lineOpen_ = false;
        for (;;) {
          const std::size_t old = text.size();
          text.resize(old + unit);
          try {
            in->read(text.data() + old, static_cast<std::streamsize>(unit));
          } catch (...) {
            // The one-thread reader stops at the failed read having counted the words
            // ended by whitespace in the 1 MiB reads before it.
            const std::uint64_t whole = (offset + old) / (1u << 20) * (1u << 20);
            text.resize(whole > offset ? static_cast<std::size_t>(whole - offset) : 0);
            while (!text.empty() && !isAsciiSpace(text.back()) && text.back() != '\n')
              text.pop_back();
            if (!text.empty()) pushText(std::move(text), f, line, offset);
            throw;
          }
          const auto got = static_cast<std::size_t>(in->gcount());
          text.resize(old + got);
          if (skipping) {  // drop the rest of an over-long word, up to its end
            std::size_t p = old;
            while (p < text.size() && !isAsciiSpace(text[p])) ++p;
            offset += p - old;
            text.erase(old, p - old);
            skipping = p == old + got;
          }
          // The unfinished word at the end of the text: past kMaxWordBytes + 1 bytes
          // (the reader cuts it to kMaxWordBytes, as the one-thread pass does) the
          // kept part ends a block and the rest of the word is dropped as it arrives.
          std::size_t run = text.size();
          while (run > 0 && !isAsciiSpace(text[run - 1])) --run;
          if (text.size() - run > kMaxWordBytes + 1) {
            const std::size_t keep = run + kMaxWordBytes + 1;
            const std::uint64_t dropped = text.size() - keep;
            text.resize(keep);
            const bool more = got == unit;  // else the word and the input end here
            if (!pushText(std::move(text), f, line, offset, more)) return;
            offset += dropped;
            text.clear();
            cut = 0;
            skipping = more;
            if (!more) break;
            continue;
          }
          if (got < unit) break;  // the end of this input
          if (const void* nl = ::memrchr(text.data() + old, '\n', text.size() - old))
            cut = static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) + 1;
          if (text.size() < blockBytes_) continue;
          if (cut > 0) {
            std::string rest(text, cut);
            text.resize(cut);
            if (!pushText(std::move(text), f, line, offset)) return;
            text = std::move(rest);
            cut = 0;
            continue;
          }
          // A line longer than a block (memory stays bounded whatever the input): the
          // block ends after its last whole word and the line goes on in the next one.
          if (run == 0) continue;  // one unfinished word, at most kMaxWordBytes + 1 bytes
          std::string rest(text, run);
          text.resize(run);
          if (!pushText(std::move(text), f, line, offset, true)) return;
          text = std::move(rest);
        }
        if (in->bad()) throw IoError("error while reading '" + names_[f] + "'");
        // After a block that ended inside the last line, an empty block ends it.
        if ((!text.empty() || lineOpen_) && !pushText(std::move(text), f, line, offset)) return;
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      readerError_ = std::current_exception();
    }
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      readerDone_ = true;
    }
    changed_.notify_all();
  }

  void work() {
    for (;;) {
      StreamBlock* b = nullptr;
      bool skip = false;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || !todo_.empty() || readerDone_; });
        if (stop_ || todo_.empty()) return;
        b = todo_.front();
        todo_.pop_front();
        skip = alone_;
      }
      if (!skip) {
        try {
          countBlock(
              *b, replaceInvalid_, [b](std::string_view w) { b->ids.push_back(b->words.add(w)); },
              [b] {
                b->ids.push_back(IdStream::kEnd);
                ++b->sentences;
              });
        } catch (...) {
          b->error = std::current_exception();
        }
      }
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        b->counted = true;
      }
      changed_.notify_all();
    }
  }

  std::vector<std::string> paths_, names_;
  bool replaceInvalid_;
  std::size_t blockBytes_, maxInFlight_;
  std::atomic<std::size_t> largestBlock_{0};
  bool lineOpen_ = false;  // the reader's last block of this input ended inside a line
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<StreamBlock>> order_;  // read, not yet taken by next()
  std::deque<StreamBlock*> todo_;                   // of those, the ones no worker took yet
  bool readerDone_ = false, stop_ = false, alone_ = false;
  std::exception_ptr readerError_;
  std::thread reader_;
  std::vector<std::thread> workers_;
};

}  // namespace

std::unique_ptr<PreparedCorpus> countStreamInParallel(const CorpusSource& corpus,
                                                      std::int64_t minCount, std::size_t maxVocab,
                                                      std::size_t maxTableSize, int threads,
                                                      std::size_t blockBytes) {
  if (threads < 2 || !corpus.pretokenized() || corpus.paths().empty() || corpus.generator() ||
      corpus.inMemory())
    return nullptr;
  auto out = std::make_unique<PreparedCorpus>();
  out->stream = IdStream(false);
  // The one-thread pass's table. The merge keeps it at or below the limit, so it
  // never prunes while the workers count; once a block could take it over, the
  // rest is counted here word by word and prunes exactly where that pass would.
  VocabularyBuilder merged(maxTableSize);
  const std::size_t limit = maxTableSize > 0 ? maxTableSize : SIZE_MAX;
  const std::uint64_t byteLimit = VocabularyBuilder::kDefaultTableBytes;
  bool alone = false;
  std::vector<WordId> local;
  const auto pipeline = StreamPipeline::start(corpus, threads, blockBytes);
  try {
    while (const auto block = pipeline->next()) {
      if (!alone && (block->words.distinct() > limit - merged.distinct() ||
                     block->words.bytes() + merged.bytes() > byteLimit)) {
        alone = true;
        pipeline->alone();
      }
      if (alone) {
        countBlock(
            *block, pipeline->replaceInvalid(),
            [&](std::string_view w) { out->stream.push(merged.add(w)); },
            [&] {
              out->stream.push(IdStream::kEnd);
              ++out->sentences;
            });
        continue;
      }
      if (block->error) std::rethrow_exception(block->error);
      local.assign(block->words.distinct(), -1);
      block->words.forEachInIdOrder([&](std::string_view w, std::int32_t id, std::int64_t count) {
        local[static_cast<std::size_t>(id)] = merged.addCount(w, count);
      });
      for (const std::int32_t id : block->ids)
        out->stream.push(id == IdStream::kEnd ? IdStream::kEnd
                                              : local[static_cast<std::size_t>(id)]);
      out->sentences += block->sentences;
    }
  } catch (...) {
    pipeline->finish();
    throw;
  }
  pipeline->finish();
  out->largestBlock = pipeline->largestBlock();

  if (merged.tokens() == 0) throw InputError(describeCorpus(corpus) + " contains no words");
  out->distinctWords = static_cast<std::int64_t>(merged.distinct());
  out->tokens = merged.tokens();
  out->prunings = merged.prunings();
  std::vector<WordId> map;
  try {
    out->vocabulary = merged.finish(minCount, maxVocab, &map);
  } catch (const InputError& e) {
    throw InputError(describeCorpus(corpus) + ": " + e.what());
  }
  out->stream.remap(map);
  return out;
}

}  // namespace posvec::detail
