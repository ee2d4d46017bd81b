// Corpus: the training text as a compact stream of word ids (-1 ends a sentence),
// written once by the counting pass (raw text goes through the tokenizer only
// then) and read back every epoch in fixed-size chunks, split into per-thread
// shards at sentence starts.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "posvec/corpus.hpp"
#include "posvec/vocabulary.hpp"

namespace posvec::detail {

// Sentences longer than this are cut into pieces for training (gensim does the same).
inline constexpr std::size_t kMaxSentence = 10000;

// Ids in memory or in an unlinked temporary file (pread/pwrite, bounded RSS).
class IdStream {
 public:
  static constexpr std::int32_t kEnd = -1;
  explicit IdStream(bool inMemory);
  ~IdStream();
  IdStream(IdStream&&) noexcept;
  IdStream& operator=(IdStream&&) noexcept;

  void push(std::int32_t id) {
    buffer_.push_back(id);
    if (!inMemory_ && buffer_.size() >= kChunk) flush();
  }
  void flush();
  std::int64_t size() const {
    return inMemory_ ? static_cast<std::int64_t>(buffer_.size())
                     : size_ + static_cast<std::int64_t>(buffer_.size());
  }
  // Word ids (sentence ends excluded) after remap.
  std::int64_t words() const { return words_; }
  // Reads up to n ids at pos; returns how many were read.
  std::size_t read(std::int64_t pos, std::int32_t* out, std::size_t n) const;
  // Maps every id through `map` (-1: dropped), drops empty sentences, and records
  // a sentence start about every `indexStep` ids for sharding. Output never
  // outgrows input, so it runs in place.
  void remap(const std::vector<WordId>& map, std::int64_t indexStep = 1 << 16);
  // Ids [begin, end) of the stream, mapped through their own `map`.
  struct Segment {
    std::int64_t begin, end;
    const std::vector<WordId>* map;
  };
  // remap() over segments in increasing, disjoint order (the gaps between them
  // are skipped): the parallel counting pass leaves each thread's ids, in that
  // thread's own numbering, in a region of its own.
  void remap(const std::vector<Segment>& segments, std::int64_t indexStep = 1 << 16);
  // File streams: writes n ids at `pos`; safe from several threads at once for
  // disjoint ranges. Call setExtent() with the end of the written area after.
  void writeIds(std::int64_t pos, const std::int32_t* data, std::size_t n) {
    writeAt(pos, data, n);
  }
  void setExtent(std::int64_t size);
  bool inMemory() const { return inMemory_; }
  // [begin, end) of shard `k` of `n`, at sentence starts.
  std::pair<std::int64_t, std::int64_t> shard(int k, int n) const;

  static constexpr std::size_t kChunk = 1 << 16;

 private:
  void writeAt(std::int64_t pos, const std::int32_t* data, std::size_t n);
  bool inMemory_;
  int fd_ = -1;
  std::int64_t size_ = 0;  // ids stored (file: flushed)
  std::int64_t words_ = 0;
  std::vector<std::int32_t> buffer_;  // memory: all ids; file: pending ids
  std::vector<std::int64_t> starts_{0};
};

// Reads the sentences of one shard, one piece of at most kMaxSentence ids at a time.
class ShardReader {
 public:
  ShardReader(const IdStream& stream, std::int64_t begin, std::int64_t end);
  // False at the end of the shard; pieces are never empty.
  bool next(std::vector<std::int32_t>& sentence);
  // The next id to read: a reader started there reads the same pieces from here on.
  std::int64_t position() const { return pos_ - static_cast<std::int64_t>(have_ - at_); }

 private:
  bool fill();
  const IdStream& stream_;
  std::int64_t pos_, end_;
  std::vector<std::int32_t> buf_;
  std::size_t at_ = 0, have_ = 0;
};

// Calls onWord for each token and onEnd after each sentence, for every source
// (in-memory sentences, pre-tokenized lines, raw text through the tokenizer).
void forEachToken(const CorpusSource& corpus, const std::function<void(std::string_view)>& onWord,
                  const std::function<void()>& onEnd);

// The pre-tokenized reader on any stream (a line is a sentence, tokens split on
// ASCII whitespace); `name` names it in error messages, which count lines from
// `firstLine` and bytes from `firstOffset` (a stream that is a later part of a file).
// `lineOpen`: the stream starts inside a line that has words already (its first
// newline, or its end, then ends that line's sentence); `lineGoesOn`: the stream
// ends inside a line that a later stream finishes (its end ends no sentence).
void readPretokenizedStream(std::istream& in, const std::string& name, bool replaceInvalid,
                            const std::function<void(std::string_view)>& onWord,
                            const std::function<void()>& onEnd, std::uint64_t firstLine = 1,
                            std::uint64_t firstOffset = 0, bool lineOpen = false,
                            bool lineGoesOn = false);

struct PreparedCorpus {
  Vocabulary vocabulary;
  IdStream stream{true};
  std::int64_t distinctWords = 0;  // before min-count
  std::int64_t tokens = 0;         // before min-count
  std::int64_t sentences = 0;      // lines of a pre-tokenized file, sentences of raw text
  int prunings = 0;
  // Counted by threads from a stream: the most bytes of text one block held (the
  // reader's memory stays bounded by the block size, whatever the lines).
  std::size_t largestBlock = 0;
};

// Replaces VocabularyBuilder::finish in a distributed run (distributed_mpi.cpp): the
// vocabulary of every process's counts; this process's share may be empty.
using VocabularyMerge =
    std::function<Vocabulary(VocabularyBuilder& local, std::int64_t minCount, std::size_t maxVocab,
                             std::vector<WordId>* provisionalToFinal)>;

// The counting pass: builds the vocabulary and the id stream in one read of the
// corpus. With threads > 1 and pre-tokenized regular files the files are split
// into one byte range per thread, counted at once and merged in corpus order
// (corpus_count.cpp): the vocabulary, ids and stream are the same as with one
// thread, bit for bit; other pre-tokenized input is counted by countStreamInParallel,
// also bit for bit. A distributed share (`merge` given) is counted on one thread.
PreparedCorpus prepareCorpus(const CorpusSource& corpus, std::int64_t minCount,
                             std::size_t maxVocab, std::size_t maxTableSize = 20'000'000,
                             int threads = 1, const VocabularyMerge& merge = {});
// "corpus 'a.txt'" / "corpus files 'a', 'b'" / "the corpus", for error messages.
std::string describeCorpus(const CorpusSource& corpus);
// Words and ids of one thread's part of the corpus, merged by countInParallel.
// Null when the corpus cannot be split (stdin, raw text, in-memory sentences, one
// thread) or counting it needs more distinct words than `maxTableSize` (one
// thread then prunes, in an order that threads would not reproduce): the caller
// counts it on one thread.
std::unique_ptr<PreparedCorpus> countInParallel(const CorpusSource& corpus, std::int64_t minCount,
                                                std::size_t maxVocab, std::size_t maxTableSize,
                                                int threads);
// A file open for reading (IoError naming it when it cannot be opened).
class Fd {
 public:
  explicit Fd(const std::string& path);
  ~Fd();
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};
// Reads up to n bytes at byte `pos` of a file `size` bytes long when it was opened (pread,
// retried when interrupted): how many, at least 1. A file that ends early throws the
// changed-while-reading error, a failed read IoError, both naming `path`.
std::size_t readAt(int fd, char* buf, std::size_t n, std::int64_t pos, const std::string& path,
                   std::int64_t size);
// The first line start at or after byte `from` of the file (`size` bytes, named `path` in
// errors): `size` when none.
std::int64_t nextLineStart(int fd, std::int64_t from, std::int64_t size, const std::string& path);
// True for pre-tokenized, uncompressed regular files: countInParallel can cut them
// into byte ranges. Anything else goes to countStreamInParallel or one thread.
bool splittableCorpus(const CorpusSource& corpus);
// Block size of countStreamInParallel: the reader hands whole lines of about this size.
inline constexpr std::size_t kStreamBlock = 4 << 20;
// The counting pass for pre-tokenized input that cannot be cut into byte ranges
// (standard input, pipes, compressed files): one thread reads each input in order
// in blocks of about `blockBytes`, cut after a newline (a longer line is cut after
// a word and goes on in the next block, so memory stays bounded), and `threads` workers count blocks into tables of their own,
// which are merged in corpus order as they complete, so the vocabulary, ids,
// stream and error messages (line and byte offset in the whole input) are those of
// the one-thread pass. When the merged table could outgrow `maxTableSize` within a
// block, the rest is counted on the calling thread with the one-thread pruning.
// Null when threads < 2 or the source is not pre-tokenized files (raw text,
// in-memory sentences, a generator).
std::unique_ptr<PreparedCorpus> countStreamInParallel(const CorpusSource& corpus,
                                                      std::int64_t minCount, std::size_t maxVocab,
                                                      std::size_t maxTableSize, int threads,
                                                      std::size_t blockBytes = kStreamBlock);
// For resuming: ids of a fixed vocabulary (other words are skipped). `shareOnly`:
// a distributed run's share, which may hold none of them.
PreparedCorpus prepareCorpus(const CorpusSource& corpus, const Vocabulary& vocabulary,
                             bool shareOnly = false);

}  // namespace posvec::detail
