// Shared pieces of the file-format readers and writers (src/formats_*.cpp): the
// bounded sequential reader, overflow-checked size arithmetic, little-endian
// fixed-width values, token splitting and number parsing, and the checks every
// loaded word and vector passes. Internal to the library.
#pragma once

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ascii_space.hpp"
#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/subwords.hpp"
#include "utf8.hpp"

namespace posvec::detail {

// ConfigError when `model`'s rows are not placed yet (ModelState::unplacedRows):
// `use` says what needed them ("save model 'm.posvec'").
void requirePlaced(const ModelState& model, const std::string& use);
// The complete input matrix of a model whose rows are not placed, as float32 to
// `out`, 4 MiB at a time (the input matrix itself is never touched).
void writeUnplacedRows(std::ostream& out, const ModelState& model);

inline constexpr char kModelMagic[8] = {'P', 'O', 'S', 'V', 'E', 'C', 'M', '1'};
inline constexpr char kNpyMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
// A word longer than this in a binary file means we are reading vector bytes as text.
inline constexpr std::size_t kMaxWordBytes = 1 << 16;
inline constexpr std::size_t kChunkBytes = 4 << 20;

inline std::string inQuotes(const std::string& path) { return "'" + path + "'"; }

// Shows a word from a possibly corrupt file without flooding the terminal: at
// most 40 characters, control bytes and bytes that are not valid UTF-8 escaped
// as \xNN (never written raw, so a message is always valid UTF-8).
std::string shown(std::string_view word);

// Applies LoadOptions::unicodeErrors to a word that isValidUtf8 rejected: the
// repaired word (U+FFFD per maximal invalid subsequence, or the bytes dropped),
// as Python's bytes.decode("utf-8", errors) gives. Strict is the caller's job.
std::string repairUtf8(std::string_view word, UnicodeErrors mode);
// Offset of the first byte of `word` that starts an invalid sequence (word.size() if none).
std::size_t firstInvalidUtf8(std::string_view word);

// The whole file, read-only, mapped into memory (read into a buffer where mapping
// is not possible). `willReadAll` asks the kernel to map every page up front,
// which spares one page fault per 4 KiB when the file is read to the end.
//
// A file that shrinks while it is mapped (another program rewriting it in place)
// would kill the process with SIGBUS at the first page past its new end. A
// process-wide SIGBUS handler recognises a fault inside a live MappedFile, puts
// zero pages in place of the rest of the mapping and marks it; the reader then
// runs on and `checkIntact` (called by readMapped whatever the parse did) reports
// the file as truncated. Faults elsewhere go to the handler that was there before.
class MappedFile {
 public:
  MappedFile(const std::string& path, bool willReadAll);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::string_view view() const { return {data_, size_}; }
  // Throws IoError when the file shrank (or faulted) since it was mapped.
  void checkIntact(const std::string& path) const;

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  void* map_ = nullptr;
  int fd_ = -1;    // kept open to see the file's size at the end
  int slot_ = -1;  // in the SIGBUS handler's table of live mappings
  std::vector<char> copy_;
};

// Runs `parse` over a mapped file; whether it returns or throws, a file that
// shrank meanwhile is reported as truncated instead (its last pages read as zeros).
template <typename F>
auto readMapped(const MappedFile& f, const std::string& path, F&& parse) {
  try {
    auto result = std::forward<F>(parse)();
    f.checkIntact(path);
    return result;
  } catch (...) {
    f.checkIntact(path);
    throw;
  }
}

// An uninitialised rows x dim matrix (every row is written before it is read).
// A large one is on 4 KiB pages, faulted in by one call before the loader writes
// it when `willWriteAll` (the caller knows every row will be filled: not a text
// file whose header may promise more rows than it holds). Not on 2 MiB pages: in a virtual machine that hands free 2 MiB blocks back
// to its host (virtio-balloon free page reporting, about 2 s after they are
// freed), a fresh 2 MiB page is faulted in again by the host, and a 100k x 512
// load took 0.05 s of CPU right after another process freed memory but 0.3-0.4 s
// a few seconds later; 4 KiB pages take a steady 0.11-0.13 s (docs/benchmarks.md).
MatrixF uninitialisedMatrix(std::uint64_t rows, std::uint64_t dim, bool willWriteAll);

// A set of rows of `words` keyed by the word (open addressing, no allocation per
// word): how loaders keep a repeated word's first vector, as gensim does.
class FirstOccurrence {
 public:
  explicit FirstOccurrence(std::size_t expected);
  // True when `word` was not seen before; then index `id` of `words` is recorded
  // (the caller stores `word` at words[id]).
  bool insert(const std::vector<std::string>& words, std::string_view word, std::size_t id);

 private:
  void grow(const std::vector<std::string>& words);
  std::vector<std::uint32_t> slots_;  // id + 1, 0 for empty
  std::size_t used_ = 0;
};

inline std::uint64_t mulChecked(std::uint64_t a, std::uint64_t b, bool& overflow) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflow = true;
  return r;
}
inline std::uint64_t addChecked(std::uint64_t a, std::uint64_t b, bool& overflow) {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) overflow = true;
  return r;
}

// Little-endian fixed-width values, whatever the host's byte order.
template <typename T>
T fromLittle(T v) {
  if constexpr (std::endian::native == std::endian::big) {
    auto* b = reinterpret_cast<unsigned char*>(&v);
    std::reverse(b, b + sizeof(T));
  }
  return v;
}

inline void swapFloatsIfBigEndian([[maybe_unused]] float* data, [[maybe_unused]] std::size_t n) {
  if constexpr (std::endian::native == std::endian::big)
    for (std::size_t i = 0; i < n; ++i) data[i] = fromLittle(data[i]);
}

// Writes floats as little-endian bytes.
void writeFloats(std::ostream& out, const float* data, std::size_t n);

template <typename T>
void put(std::string& buf, T v) {
  v = fromLittle(v);
  buf.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Sequential reader over a file in large blocks: lines and space-terminated
// words as views into the block, raw bytes copied straight into the destination.
class ChunkReader {
 public:
  // `bufferBytes`: the initial buffer (it grows when a record needs more); small
  // for readers that look at the start of a file only.
  explicit ChunkReader(const std::string& path, std::size_t bufferBytes = kChunkBytes);

  std::uint64_t fileSize() const { return size_; }
  // File offset of the next unread byte.
  std::uint64_t offset() const { return base_ + begin_; }
  std::uint64_t remaining() const { return size_ > offset() ? size_ - offset() : 0; }

  // Makes at least `n` bytes available (fewer only at the end of the file).
  std::size_t ensure(std::size_t n) {
    while (end_ - begin_ < n && !eof_) refill(n);
    return end_ - begin_;
  }
  const char* data() const { return buf_.data() + begin_; }
  void skip(std::size_t n) { begin_ += n; }
  // Skips up to `n` bytes (fewer at the end of the file); returns how many.
  std::uint64_t discard(std::uint64_t n) {
    std::uint64_t done = 0;
    while (done < n) {
      const std::size_t avail = ensure(1);
      if (avail == 0) break;
      const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(avail, n - done));
      begin_ += take;
      done += take;
    }
    return done;
  }

  // The bytes up to (not including) `delim`; the delimiter is consumed. At the
  // end of the file, the rest (if any). False when nothing is left. When
  // `maxBytes` pass without a delimiter, returns false with `tooLong` set.
  bool until(char delim, std::string_view& out, std::size_t maxBytes, bool& tooLong) {
    tooLong = false;
    std::size_t scanned = 0;
    for (;;) {
      const char* start = buf_.data() + begin_;
      const std::size_t avail = end_ - begin_;
      if (const void* hit = std::memchr(start + scanned, delim, avail - scanned)) {
        const std::size_t len = static_cast<const char*>(hit) - start;
        if (len > maxBytes) return tooLong = true, false;
        out = std::string_view(start, len);
        begin_ += len + 1;
        return true;
      }
      scanned = avail;
      if (scanned > maxBytes) return tooLong = true, false;
      if (eof_) {
        if (avail == 0) return false;
        out = std::string_view(start, avail);
        begin_ = end_;
        return true;
      }
      refill(avail + 1);
    }
  }

  // Copies exactly `n` bytes to `dst`; returns how many were available.
  std::size_t read(char* dst, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      if (begin_ == end_) {
        if (eof_) break;
        refill(1);
        continue;
      }
      const std::size_t take = std::min(n - done, end_ - begin_);
      std::memcpy(dst + done, buf_.data() + begin_, take);
      begin_ += take;
      done += take;
    }
    return done;
  }

 private:
  // Moves unread bytes to the front, grows the buffer to hold `need` bytes, reads more.
  void refill(std::size_t need);

  std::string path_;
  std::ifstream in_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  std::uint64_t base_ = 0;  // file offset of buf_[0]
  std::uint64_t size_ = 0;
  bool eof_ = false;
};

// Calls f for each field of a line, fields being separated by runs of ASCII
// whitespace (isAsciiSpace).
template <typename F>
void forEachField(std::string_view line, F&& f) {
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && isAsciiSpace(line[i])) ++i;
    if (i >= line.size()) break;
    std::size_t j = i;
    while (j < line.size() && !isAsciiSpace(line[j])) ++j;
    f(line.substr(i, j - i));
    i = j;
  }
}

inline bool parseFloat(std::string_view token, float& out) {
  if (!token.empty() && token[0] == '+') token.remove_prefix(1);
  double d;
  // Through double, as gensim (Python float, then float32) reads text values.
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), d);
  if (ec != std::errc() || ptr != token.data() + token.size()) return false;
  out = static_cast<float>(d);
  return true;
}

inline bool parseUnsigned(std::string_view token, std::uint64_t& out) {
  if (!token.empty() && token[0] == '+') token.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
  return ec == std::errc() && ptr == token.data() + token.size() && !token.empty();
}

// `where` builds the location part of the message, only when there is an error.
template <typename Where>
void checkWord(std::string_view word, Where&& where) {
  if (word.empty()) throw FormatError(where() + ": empty word");
  if (!detail::isValidUtf8(word))
    throw FormatError(where() + ": word '" + shown(word) + "' is not valid UTF-8");
  for (char c : word)
    if (isAsciiSpace(c))
      throw FormatError(where() + ": word '" + shown(word) + "' contains whitespace");
}

template <typename Where>
void checkFinite(const float* v, std::size_t n, std::string_view word, Where&& where) {
  // Branch-free scan of the exponent bits (vectorises); the slow loop only names the culprit.
  std::uint32_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, v + i, sizeof u);
    bad |= static_cast<std::uint32_t>((u & 0x7f800000u) == 0x7f800000u);
  }
  if (!bad) return;
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]))
      throw FormatError(where() + ": value " + std::to_string(i + 1) + " of '" + shown(word) +
                        "' is " + (std::isnan(v[i]) ? "NaN" : "infinite (or beyond float32)"));
}

// Words must be non-empty valid UTF-8 and values finite before anything is written.
void checkSavable(const Embeddings& e);

// Per-format entry points (formats_word2vec.cpp, formats_npy.cpp, formats_model.cpp).
struct Word2VecHeader {
  std::uint64_t words = 0;
  std::uint64_t dim = 0;
};
// Reads the "V D" line; FormatError when the file does not start with one.
Word2VecHeader readWord2VecHeader(ChunkReader& r, const std::string& path);
// True when `line` is "word v1 ... vD" with D parseable numbers.
bool looksLikeTextRecord(std::string_view line, std::uint64_t dim);
// True when the file, read as word2vec binary, holds exactly the header's records
// (word, space, 4 x dim bytes, optional newlines) and nothing after them.
bool binaryReadingIsExact(const std::string& path, const Word2VecHeader& h);
Embeddings loadWord2VecText(const std::string& path, const LoadOptions& options = {});
Embeddings loadWord2VecBinary(const std::string& path, const LoadOptions& options = {});
void writeWord2VecBinary(const Embeddings& e, std::ostream& out);
void writeWord2VecText(const Embeddings& e, std::ostream& out);
Embeddings loadNpy(const std::string& path);
// FILE.npy and its FILE.vocab, written as one transaction (both or neither).
void writeNpy(const Embeddings& e, const std::string& path, bool float16 = false);
// A model's words, counts, losses and input vectors; the output weights only with `withOutput`.
ModelState readModel(const std::string& path, bool withOutput);

// A posvec model trained with subwords, as a SubwordModel of its input rows (for
// words outside its vocabulary); nullopt for any other file or a word-only model.
std::optional<SubwordModel> posvecSubwordModel(const std::string& path);
// The 64-bit checksum that ends a model file (over every byte before it), fed in
// pieces of any size. Not cryptographic: it catches damage, not tampering; a
// change confined to 8 aligned bytes (any single flipped byte) always shows.
class ModelChecksum {
 public:
  void update(const char* data, std::size_t n);
  std::uint64_t value() const;

 private:
  void block(const unsigned char* p);
  std::uint64_t lane_[4] = {0x243F6A8885A308D3ULL, 0x13198A2E03707344ULL, 0xA4093822299F31D0ULL,
                            0x082EFA98EC4E6C89ULL};
  unsigned char tail_[32] = {};
  std::size_t pending_ = 0;
  std::uint64_t total_ = 0;
};

// Loads `path` as the given format, without content detection (the fuzz
// harnesses drive each loader on its own). Auto is refused (FormatError); Model
// yields the model's input vectors.
Embeddings loadVectorsAs(const std::string& path, VectorFormat format,
                         const LoadOptions& options = {});

// A matrix for saveFastTextMatrices(): its shape and how its rows x cols float32
// values reach the stream (a float32 matrix as it is, 16-bit rows widened a chunk at
// a time).
struct FastTextMatrix {
  Eigen::Index rows = 0, cols = 0;
  std::function<void(std::ostream&)> write;
};
FastTextMatrix fastTextMatrix(const MatrixF& m);
// saveFastText() with matrices given as FastTextMatrix.
void saveFastTextMatrices(const std::string& path, const std::vector<std::string>& words,
                          const std::vector<std::int64_t>& counts, const FastTextMatrix& input,
                          const FastTextMatrix& output, const FastTextArgs& args);

}  // namespace posvec::detail
