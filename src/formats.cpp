#include "posvec/formats.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <ostream>
#include <string_view>
#include <unordered_set>

#include "formats_detail.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "utf8.hpp"

namespace posvec {

namespace {

namespace fs = std::filesystem;

constexpr char kModelMagic[8] = {'P', 'O', 'S', 'V', 'E', 'C', 'M', '1'};
constexpr std::uint32_t kModelVersion = 1;
constexpr std::uint64_t kModelHeaderBytes = 72;
constexpr char kNpyMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
// A word longer than this in a binary file means we are reading vector bytes as text.
constexpr std::size_t kMaxWordBytes = 1 << 16;
constexpr std::size_t kChunkBytes = 4 << 20;

std::string inQuotes(const std::string& path) { return "'" + path + "'"; }

// Shows a word from a possibly corrupt file without flooding the terminal.
std::string shown(std::string_view word) {
  std::string out;
  for (unsigned char c : word.substr(0, 40)) out += (c < 0x20 || c == 0x7f) ? '?' : char(c);
  if (word.size() > 40) out += "...";
  return out;
}

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::uint64_t mulChecked(std::uint64_t a, std::uint64_t b, bool& overflow) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflow = true;
  return r;
}
std::uint64_t addChecked(std::uint64_t a, std::uint64_t b, bool& overflow) {
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

void swapFloatsIfBigEndian([[maybe_unused]] float* data, [[maybe_unused]] std::size_t n) {
  if constexpr (std::endian::native == std::endian::big)
    for (std::size_t i = 0; i < n; ++i) data[i] = fromLittle(data[i]);
}

// Writes floats as little-endian bytes.
void writeFloats(std::ostream& out, const float* data, std::size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * sizeof(float)));
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const float v = fromLittle(data[i]);
      out.write(reinterpret_cast<const char*>(&v), sizeof v);
    }
  }
}

template <typename T>
void put(std::string& buf, T v) {
  v = fromLittle(v);
  buf.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Sequential reader over a file in large blocks: lines and space-terminated
// words as views into the block, raw bytes copied straight into the destination.
class ChunkReader {
 public:
  explicit ChunkReader(const std::string& path) : path_(path) {
    openForReading(path, in_);
    std::error_code ec;
    size_ = fs::file_size(path, ec);
    if (ec) throw IoError("cannot read " + inQuotes(path) + ": " + ec.message());
    // No 4 MiB buffer for a small file (the buffer grows when a record needs it):
    // detection and loading open a file several times.
    buf_.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, size_ + 1)));
  }

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
  void refill(std::size_t need) {
    if (begin_ > 0) {
      std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
      base_ += begin_;
      end_ -= begin_;
      begin_ = 0;
    }
    if (need > buf_.size()) buf_.resize(std::max(need, buf_.size() * 2));
    in_.read(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - end_));
    const auto got = static_cast<std::size_t>(in_.gcount());
    if (in_.bad()) throw IoError("error while reading " + inQuotes(path_));
    end_ += got;
    if (got == 0 || in_.eof()) eof_ = true;
  }

  std::string path_;
  std::ifstream in_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  std::uint64_t base_ = 0;  // file offset of buf_[0]
  std::uint64_t size_ = 0;
  bool eof_ = false;
};

// Splits on runs of spaces and tabs (and a trailing '\r').
template <typename F>
void forEachToken(std::string_view line, F&& f) {
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && isSpace(line[i])) ++i;
    if (i >= line.size()) break;
    std::size_t j = i;
    while (j < line.size() && !isSpace(line[j])) ++j;
    f(line.substr(i, j - i));
    i = j;
  }
}

bool parseFloat(std::string_view token, float& out) {
  if (!token.empty() && token[0] == '+') token.remove_prefix(1);
  double d;
  // Through double, as gensim (Python float, then float32) reads text values.
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), d);
  if (ec != std::errc() || ptr != token.data() + token.size()) return false;
  out = static_cast<float>(d);
  return true;
}

bool parseUnsigned(std::string_view token, std::uint64_t& out) {
  if (!token.empty() && token[0] == '+') token.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
  return ec == std::errc() && ptr == token.data() + token.size() && !token.empty();
}

struct Header {
  std::uint64_t words = 0;
  std::uint64_t dim = 0;
};

// Parses the word2vec "V D" line; false when it is not one.
bool parseHeader(std::string_view line, Header& h) {
  std::vector<std::string_view> parts;
  forEachToken(line, [&](std::string_view t) { parts.push_back(t); });
  return parts.size() == 2 && parseUnsigned(parts[0], h.words) && parseUnsigned(parts[1], h.dim);
}

// True when `line` is "word v1 ... vD" with D parseable numbers.
bool looksLikeTextRecord(std::string_view line, std::uint64_t dim) {
  std::uint64_t tokens = 0;
  bool numbers = true;
  forEachToken(line, [&](std::string_view t) {
    float v;
    if (tokens++ > 0 && numbers && !parseFloat(t, v)) numbers = false;
  });
  return numbers && tokens == dim + 1;
}

// `where` builds the location part of the message, only when there is an error.
template <typename Where>
void checkWord(std::string_view word, Where&& where) {
  if (word.empty()) throw FormatError(where() + ": empty word");
  if (!detail::isValidUtf8(word))
    throw FormatError(where() + ": word '" + shown(word) + "' is not valid UTF-8");
  for (char c : word)
    if (isSpace(c)) throw FormatError(where() + ": word '" + shown(word) + "' contains whitespace");
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

// Collects words and rows, dropping repeated words (gensim keeps the first).
class Collector {
 public:
  // `rows` rows are allocated up front; more are added if needed.
  Collector(std::uint64_t rows, std::uint64_t dim) : vectors_(rows, dim) {
    words_.reserve(rows);
    seen_.reserve(rows);
  }
  float* nextRow() {
    const auto n = static_cast<Eigen::Index>(words_.size());
    if (n == vectors_.rows())
      vectors_.conservativeResize(std::max<Eigen::Index>(2 * n, 16), vectors_.cols());
    return vectors_.row(n).data();
  }
  void commit(std::string_view word) {
    if (seen_.count(word)) return;
    // words_ never grows past its reservation, so views of its strings stay valid.
    if (words_.size() == words_.capacity()) rebuildSeen(words_.size() * 2 + 16);
    seen_.insert(words_.emplace_back(word));
  }
  Embeddings finish(const std::string& path) {
    vectors_.conservativeResize(static_cast<Eigen::Index>(words_.size()), vectors_.cols());
    try {
      return Embeddings(std::move(words_), std::move(vectors_));
    } catch (const InputError& e) {
      throw FormatError(inQuotes(path) + ": " + e.what());
    }
  }

 private:
  void rebuildSeen(std::size_t capacity) {
    words_.reserve(capacity);
    seen_.clear();
    for (const auto& w : words_) seen_.insert(w);
  }

  MatrixF vectors_;
  std::vector<std::string> words_;
  std::unordered_set<std::string_view> seen_;
};

Header readWord2VecHeader(ChunkReader& r, const std::string& path) {
  std::string_view line;
  bool tooLong = false;
  Header h;
  if (!r.until('\n', line, 4096, tooLong) || !parseHeader(line, h))
    throw FormatError(inQuotes(path) +
                      ": not a word2vec file (the first line should be 'WORDS DIMENSION'), "
                      "nor an .npy or posvec model file");
  if (h.dim == 0 && h.words > 0)
    throw FormatError(inQuotes(path) + ": header says dimension 0 for " + std::to_string(h.words) +
                      " words");
  return h;
}

Embeddings loadWord2VecText(const std::string& path) {
  ChunkReader r(path);
  const Header h = readWord2VecHeader(r, path);
  // Each record needs a word, and per value a separator and a digit: the file
  // size bounds how many rows can be present, so a lying header cannot make us
  // allocate more than that (the parse below then says where the file ends).
  bool overflow = false;
  const std::uint64_t minRecord = addChecked(mulChecked(h.dim, 2, overflow), 2, overflow);
  if (h.words > 0 && (overflow || minRecord - 1 > r.remaining()))
    throw FormatError(inQuotes(path) + ": header says dimension " + std::to_string(h.dim) +
                      " but the file has only " + std::to_string(r.remaining()) +
                      " bytes after it, too few for one vector (wrong header?)");
  const std::uint64_t fit = (r.remaining() + 1) / minRecord + 1;
  Collector c(std::min(h.words, fit), h.dim);
  std::string_view line;
  bool tooLong = false;
  for (std::uint64_t i = 0; i < h.words; ++i) {
    const auto where = [&] { return inQuotes(path) + " line " + std::to_string(i + 2); };
    if (!r.until('\n', line, std::numeric_limits<std::size_t>::max(), tooLong))
      throw FormatError(inQuotes(path) + ": header says " + std::to_string(h.words) +
                        " words but the file ends after " + std::to_string(i) +
                        " (truncated file or wrong header)");
    float* row = c.nextRow();
    std::uint64_t n = 0;
    std::string_view word;
    forEachToken(line, [&](std::string_view t) {
      if (n == 0) {
        word = t;
      } else if (n <= h.dim) {
        if (!parseFloat(t, row[n - 1]))
          throw FormatError(where() + ": value " + std::to_string(n) + " of '" + shown(word) +
                            "' ('" + shown(t) + "') is not a number");
      }
      ++n;
    });
    if (n == 0) throw FormatError(where() + ": empty line where a word and its vector should be");
    if (n - 1 != h.dim)
      throw FormatError(where() + ": expected " + std::to_string(h.dim) + " values after '" +
                        shown(word) + "', found " + std::to_string(n - 1));
    checkWord(word, where);
    checkFinite(row, h.dim, word, where);
    c.commit(word);
  }
  return c.finish(path);
}

Embeddings loadWord2VecBinary(const std::string& path) {
  ChunkReader r(path);
  const Header h = readWord2VecHeader(r, path);
  bool overflow = false;
  const std::uint64_t rowBytes = mulChecked(h.dim, sizeof(float), overflow);
  // Bounds the rows to allocate by what the file size can hold (see the text reader).
  const std::uint64_t minRecord = addChecked(rowBytes, 2, overflow);
  if (h.words > 0 && (overflow || minRecord > r.remaining()))
    throw FormatError(inQuotes(path) + ": header says dimension " + std::to_string(h.dim) + " (" +
                      (overflow ? std::string("too many") : std::to_string(rowBytes)) +
                      " bytes a vector) but the file has only " + std::to_string(r.remaining()) +
                      " bytes after it (truncated file or wrong header)");
  const std::uint64_t fit = r.remaining() / minRecord + 1;
  Collector c(std::min(h.words, fit), h.dim);
  std::string_view word;
  bool tooLong = false;
  for (std::uint64_t i = 0; i < h.words; ++i) {
    // word2vec.c writes "\n" after each vector, gensim does not: accept both.
    while (r.ensure(1) > 0 && r.data()[0] == '\n') r.skip(1);
    const std::uint64_t at = r.offset();
    const auto where = [&] {
      return inQuotes(path) + " word " + std::to_string(i + 1) + " (byte offset " +
             std::to_string(at) + ")";
    };
    if (r.ensure(1) == 0 || !r.until(' ', word, kMaxWordBytes, tooLong)) {
      if (tooLong)
        throw FormatError(where() + ": no space after " + std::to_string(kMaxWordBytes) +
                          " bytes (corrupt file?)");
      throw FormatError(inQuotes(path) + ": header says " + std::to_string(h.words) +
                        " words but the file ends after " + std::to_string(i) +
                        " (truncated file?)");
    }
    const std::string w(word);  // the view dies at the next read
    float* row = c.nextRow();
    const std::size_t got = r.read(reinterpret_cast<char*>(row), rowBytes);
    if (got != rowBytes)
      throw FormatError(where() + ": file ends in the middle of the vector of '" + shown(w) +
                        "' (" + std::to_string(got) + " of " + std::to_string(rowBytes) +
                        " bytes; truncated file?)");
    swapFloatsIfBigEndian(row, h.dim);
    checkWord(w, where);
    checkFinite(row, h.dim, w, where);
    c.commit(w);
  }
  return c.finish(path);
}

// ---- .npy ------------------------------------------------------------------

struct NpyHeader {
  std::string descr;
  bool fortran = false;
  std::vector<std::uint64_t> shape;
  std::uint64_t dataOffset = 0;
};

// Value text after 'key': in the header dict (up to the next top-level comma or brace).
std::string_view npyField(std::string_view dict, std::string_view key) {
  std::string k1(key.size() + 2, '\'');
  k1.replace(1, key.size(), key);
  std::size_t p = dict.find(k1);
  if (p == std::string_view::npos) return {};
  p = dict.find(':', p + k1.size());
  if (p == std::string_view::npos) return {};
  ++p;
  while (p < dict.size() && dict[p] == ' ') ++p;
  std::size_t e = p;
  if (e < dict.size() && dict[e] == '(') {
    e = dict.find(')', e);
    return e == std::string_view::npos ? std::string_view{} : dict.substr(p, e - p + 1);
  }
  while (e < dict.size() && dict[e] != ',' && dict[e] != '}') ++e;
  std::string_view v = dict.substr(p, e - p);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return v;
}

NpyHeader readNpyHeader(ChunkReader& r, const std::string& path) {
  unsigned char pre[10];
  if (r.read(reinterpret_cast<char*>(pre), 8) != 8 || std::memcmp(pre, kNpyMagic, 6) != 0)
    throw FormatError(inQuotes(path) + ": not an .npy file (bad magic)");
  const int major = pre[6];
  std::uint64_t len;
  std::uint64_t prefix;
  if (major == 1) {
    if (r.read(reinterpret_cast<char*>(pre + 8), 2) != 2)
      throw FormatError(inQuotes(path) + ": truncated .npy header");
    len = pre[8] | (std::uint64_t(pre[9]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    unsigned char l[4];
    if (r.read(reinterpret_cast<char*>(l), 4) != 4)
      throw FormatError(inQuotes(path) + ": truncated .npy header");
    len = l[0] | (std::uint64_t(l[1]) << 8) | (std::uint64_t(l[2]) << 16) |
          (std::uint64_t(l[3]) << 24);
    prefix = 12;
  } else {
    throw FormatError(inQuotes(path) + ": .npy format version " + std::to_string(major) +
                      " is not supported (1, 2 or 3)");
  }
  if (len > r.remaining() || len > (1u << 20))
    throw FormatError(inQuotes(path) + ": .npy header length " + std::to_string(len) +
                      " is beyond the file");
  std::string dict(len, '\0');
  r.read(dict.data(), len);
  NpyHeader h;
  h.dataOffset = prefix + len;
  std::string_view descr = npyField(dict, "descr");
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"'))
    descr = descr.substr(1, descr.size() - 2);
  h.descr = descr;
  const std::string_view fortran = npyField(dict, "fortran_order");
  if (fortran != "False" && fortran != "True")
    throw FormatError(inQuotes(path) + ": .npy header has no valid 'fortran_order'");
  h.fortran = fortran == "True";
  std::string_view shape = npyField(dict, "shape");
  if (shape.size() < 2 || shape.front() != '(')
    throw FormatError(inQuotes(path) + ": .npy header has no valid 'shape'");
  shape = shape.substr(1, shape.size() - 2);
  bool bad = false;
  std::size_t i = 0;
  while (i < shape.size()) {
    std::size_t j = shape.find(',', i);
    if (j == std::string_view::npos) j = shape.size();
    std::string_view t = shape.substr(i, j - i);
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == 'L')) t.remove_suffix(1);
    if (!t.empty()) {
      std::uint64_t v;
      if (!parseUnsigned(t, v)) bad = true;
      h.shape.push_back(v);
    }
    i = j + 1;
  }
  if (bad) throw FormatError(inQuotes(path) + ": .npy header has an invalid 'shape'");
  return h;
}

Embeddings loadNpy(const std::string& path) {
  ChunkReader r(path);
  const NpyHeader h = readNpyHeader(r, path);
  if (h.descr != "<f4" && h.descr != "<f8")
    throw FormatError(inQuotes(path) + ": .npy dtype '" + h.descr +
                      "' is not supported (save float32 '<f4' or float64 '<f8')");
  if (h.shape.size() != 2)
    throw FormatError(inQuotes(path) + ": .npy array has " + std::to_string(h.shape.size()) +
                      " dimensions; word vectors need shape (words, dimension)");
  const std::uint64_t rows = h.shape[0], cols = h.shape[1];
  const std::uint64_t item = h.descr == "<f4" ? 4 : 8;
  bool overflow = false;
  const std::uint64_t bytes = mulChecked(mulChecked(rows, cols, overflow), item, overflow);
  if (overflow || bytes != r.remaining())
    throw FormatError(
        inQuotes(path) + ": .npy shape (" + std::to_string(rows) + ", " + std::to_string(cols) +
        ") needs " + (overflow ? "more than 2^64" : std::to_string(bytes)) +
        " bytes of data but the file has " + std::to_string(r.remaining()) + " (truncated?)");
  MatrixF m(rows, cols);
  if (item == 4) {
    r.read(reinterpret_cast<char*>(m.data()), bytes);
    swapFloatsIfBigEndian(m.data(), rows * cols);
  } else {
    std::vector<double> row(cols == 0 ? 1 : cols);
    for (std::uint64_t i = 0; i < rows; ++i) {
      r.read(reinterpret_cast<char*>(row.data()), cols * 8);
      for (std::uint64_t j = 0; j < cols; ++j) m(i, j) = static_cast<float>(fromLittle(row[j]));
    }
  }
  if (h.fortran) {
    // Column-major data: what we read row-major is the transpose, shaped (cols, rows).
    Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>> col(
        m.data(), rows, cols);
    MatrixF t = col;
    m.swap(t);
  }

  const std::string vocabPath = npyVocabularyPath(path);
  std::error_code ec;
  if (!fs::exists(vocabPath, ec))
    throw IoError("cannot load " + inQuotes(path) + ": its vocabulary file " + inQuotes(vocabPath) +
                  " (one 'word count' line per row) is missing");
  ChunkReader v(vocabPath);
  std::vector<std::string> words;
  std::vector<std::int64_t> counts;
  words.reserve(rows);
  counts.reserve(rows);
  std::string_view line;
  bool tooLong = false;
  std::uint64_t lineNo = 0;
  bool anyCount = false;
  while (v.until('\n', line, std::numeric_limits<std::size_t>::max(), tooLong)) {
    ++lineNo;
    std::vector<std::string_view> parts;
    forEachToken(line, [&](std::string_view t) { parts.push_back(t); });
    if (parts.empty()) continue;
    const auto where = [&] { return inQuotes(vocabPath) + " line " + std::to_string(lineNo); };
    std::uint64_t count;
    if (parts.size() != 2 || !parseUnsigned(parts[1], count) ||
        count > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      throw FormatError(where() + ": expected 'word count'");
    checkWord(parts[0], where);
    if (words.size() == rows)
      throw FormatError(inQuotes(vocabPath) + " has more words than the " + std::to_string(rows) +
                        " rows of " + inQuotes(path));
    words.emplace_back(parts[0]);
    counts.push_back(static_cast<std::int64_t>(count));
    anyCount = anyCount || count > 0;
  }
  if (words.size() != rows)
    throw FormatError(inQuotes(vocabPath) + " has " + std::to_string(words.size()) + " words but " +
                      inQuotes(path) + " has " + std::to_string(rows) + " rows");
  for (std::uint64_t i = 0; i < rows; ++i)
    checkFinite(m.row(i).data(), cols, words[i],
                [&] { return inQuotes(path) + " row " + std::to_string(i + 1); });
  if (!anyCount) counts.clear();
  try {
    return Embeddings(std::move(words), std::move(m), std::move(counts));
  } catch (const InputError& e) {
    throw FormatError(inQuotes(vocabPath) + ": " + e.what());
  }
}

// ---- writers -----------------------------------------------------------------

void checkSavable(const Embeddings& e) {
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (!detail::isValidUtf8(e.words()[i]))
      throw InputError("cannot save word " + std::to_string(i + 1) + " ('" + shown(e.words()[i]) +
                       "'): it is not valid UTF-8");
    const float* row = e.vectors().row(static_cast<Eigen::Index>(i)).data();
    for (std::size_t j = 0; j < e.dim(); ++j)
      if (!std::isfinite(row[j]))
        throw InputError("cannot save the vector of '" + shown(e.words()[i]) +
                         "': it contains NaN or infinity (training diverged?)");
  }
}

std::string w2vHeader(const Embeddings& e) {
  return std::to_string(e.size()) + " " + std::to_string(e.dim()) + "\n";
}

void writeBinary(const Embeddings& e, std::ostream& out) {
  std::string chunk = w2vHeader(e);
  chunk.reserve(kChunkBytes + 4096);
  const std::size_t d = e.dim();
  for (std::size_t i = 0; i < e.size(); ++i) {
    chunk += e.words()[i];
    chunk += ' ';
    const float* row = e.vectors().row(static_cast<Eigen::Index>(i)).data();
    if constexpr (std::endian::native == std::endian::little) {
      chunk.append(reinterpret_cast<const char*>(row), d * sizeof(float));
    } else {
      for (std::size_t j = 0; j < d; ++j) put(chunk, row[j]);
    }
    chunk += '\n';  // as word2vec.c writes it
    if (chunk.size() >= kChunkBytes) {
      out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      chunk.clear();
    }
  }
  out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
}

void writeText(const Embeddings& e, std::ostream& out) {
  std::string chunk = w2vHeader(e);
  chunk.reserve(kChunkBytes + 65536);
  const std::size_t d = e.dim();
  char num[64];
  for (std::size_t i = 0; i < e.size(); ++i) {
    chunk += e.words()[i];
    const float* row = e.vectors().row(static_cast<Eigen::Index>(i)).data();
    for (std::size_t j = 0; j < d; ++j) {
      // Shortest representation that reads back as the same float32.
      const auto res = std::to_chars(num, num + sizeof num, row[j]);
      chunk += ' ';
      chunk.append(num, res.ptr);
    }
    chunk += '\n';
    if (chunk.size() >= kChunkBytes) {
      out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      chunk.clear();
    }
  }
  out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
}

void writeNpy(const Embeddings& e, const std::string& path) {
  const std::string vocabPath = npyVocabularyPath(path);
  writeFileAtomically(vocabPath, [&](std::ostream& out) {
    std::string buf;
    for (std::size_t i = 0; i < e.size(); ++i) {
      buf += e.words()[i];
      buf += ' ';
      buf += std::to_string(e.counts().empty() ? 0 : e.counts()[i]);
      buf += '\n';
    }
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  });
  writeFileAtomically(path, [&](std::ostream& out) {
    writeNpyArray(out, e.vectors().data(), {e.size(), e.dim()});
  });
}

// NumPy format 1.0: magic, version, little-endian header length, a Python dict
// literal padded with spaces so the data starts on a 64-byte boundary, the data.
template <typename T>
void writeNpyImpl(std::ostream& out, const T* data, const std::vector<std::size_t>& shape) {
  std::string dims;
  std::size_t count = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    dims += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) dims += ',';
    if (i + 1 < shape.size()) dims += ' ';
    count *= shape[i];
  }
  std::string dict = std::string("{'descr': '") + (sizeof(T) == 4 ? "<f4" : "<f8") +
                     "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t total = 10 + dict.size() + 1;  // magic + version + length, dict, '\n'
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string pre(kNpyMagic, 6);
  pre += '\x01';
  pre += '\x00';
  put(pre, static_cast<std::uint16_t>(dict.size()));
  out.write(pre.data(), static_cast<std::streamsize>(pre.size()));
  out.write(dict.data(), static_cast<std::streamsize>(dict.size()));
  if constexpr (std::endian::native == std::endian::little) {
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * sizeof(T)));
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      const T v = fromLittle(data[i]);
      out.write(reinterpret_cast<const char*>(&v), sizeof v);
    }
  }
}

// ---- model -------------------------------------------------------------------

struct ModelHeader {
  std::uint32_t version = 0, flags = 0;
  std::uint64_t words = 0, dim = 0, outputRows = 0, configBytes = 0, wordBytes = 0, losses = 0;
  std::int32_t epochsDone = 0;
};

template <typename T>
T get(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return fromLittle(v);
}

ModelState readModel(const std::string& path, bool withOutput) {
  ChunkReader r(path);
  unsigned char raw[kModelHeaderBytes];
  if (r.read(reinterpret_cast<char*>(raw), 8) != 8 || std::memcmp(raw, kModelMagic, 8) != 0)
    throw FormatError(inQuotes(path) +
                      ": not a posvec model file (bad magic; expected 'POSVECM1')");
  if (r.read(reinterpret_cast<char*>(raw) + 8, kModelHeaderBytes - 8) != kModelHeaderBytes - 8)
    throw FormatError(inQuotes(path) + ": posvec model file is truncated inside its header");
  ModelHeader h;
  h.version = get<std::uint32_t>(raw + 8);
  h.flags = get<std::uint32_t>(raw + 12);
  h.words = get<std::uint64_t>(raw + 16);
  h.dim = get<std::uint64_t>(raw + 24);
  h.outputRows = get<std::uint64_t>(raw + 32);
  h.configBytes = get<std::uint64_t>(raw + 40);
  h.wordBytes = get<std::uint64_t>(raw + 48);
  h.losses = get<std::uint64_t>(raw + 56);
  h.epochsDone = get<std::int32_t>(raw + 64);
  if (h.version != kModelVersion)
    throw FormatError(inQuotes(path) + ": posvec model version " + std::to_string(h.version) +
                      " is not supported (this posvec reads version " +
                      std::to_string(kModelVersion) + ")");
  if (h.flags != 0 || get<std::uint32_t>(raw + 68) != 0)
    throw FormatError(inQuotes(path) + ": posvec model header has unknown flags (corrupt file?)");
  if (h.epochsDone < 0)
    throw FormatError(inQuotes(path) + ": posvec model says " + std::to_string(h.epochsDone) +
                      " epochs done (corrupt file?)");
  if (h.outputRows > h.words)
    throw FormatError(inQuotes(path) + ": posvec model has " + std::to_string(h.outputRows) +
                      " output rows for " + std::to_string(h.words) + " words (corrupt file?)");
  // Every length is checked against the file size before anything is allocated.
  bool overflow = false;
  std::uint64_t need = kModelHeaderBytes;
  need = addChecked(need, h.configBytes, overflow);
  need = addChecked(need, mulChecked(h.words, 4 + 8, overflow), overflow);
  need = addChecked(need, h.wordBytes, overflow);
  need = addChecked(need, mulChecked(h.losses, 8, overflow), overflow);
  need = addChecked(
      need,
      mulChecked(mulChecked(addChecked(h.words, h.outputRows, overflow), h.dim, overflow), 4,
                 overflow),
      overflow);
  if (overflow || need != r.fileSize())
    throw FormatError(inQuotes(path) + ": posvec model header describes " +
                      std::to_string(h.words) + " words x " + std::to_string(h.dim) + " (" +
                      (overflow ? "more than 2^64" : std::to_string(need)) +
                      " bytes) but the file has " + std::to_string(r.fileSize()) +
                      " bytes (truncated or corrupt)");

  ModelState m;
  m.epochsDone = h.epochsDone;
  m.config.resize(h.configBytes);
  r.read(m.config.data(), h.configBytes);
  m.words.reserve(h.words);
  std::uint64_t wordBytesSeen = 0;
  std::unordered_set<std::string_view> seen;
  for (std::uint64_t i = 0; i < h.words; ++i) {
    unsigned char l[4];
    r.read(reinterpret_cast<char*>(l), 4);
    const std::uint32_t len = get<std::uint32_t>(l);
    wordBytesSeen += len;
    if (wordBytesSeen > h.wordBytes)
      throw FormatError(inQuotes(path) + ": word " + std::to_string(i + 1) +
                        " runs past the word table (corrupt file)");
    std::string w(len, '\0');
    r.read(w.data(), len);
    checkWord(w, [&] { return inQuotes(path) + " word " + std::to_string(i + 1); });
    m.words.push_back(std::move(w));
  }
  if (wordBytesSeen != h.wordBytes)
    throw FormatError(inQuotes(path) +
                      ": word table size does not match its header (corrupt file)");
  seen.reserve(h.words);
  for (std::size_t i = 0; i < m.words.size(); ++i)
    if (!seen.insert(m.words[i]).second)
      throw FormatError(inQuotes(path) + ": word " + std::to_string(i + 1) + " ('" +
                        shown(m.words[i]) + "') appears twice");
  m.counts.resize(h.words);
  r.read(reinterpret_cast<char*>(m.counts.data()), h.words * 8);
  for (auto& c : m.counts) {
    c = fromLittle(c);
    if (c < 0) throw FormatError(inQuotes(path) + ": negative word count (corrupt file)");
  }
  m.epochLosses.resize(h.losses);
  r.read(reinterpret_cast<char*>(m.epochLosses.data()), h.losses * 8);
  for (auto& l : m.epochLosses) l = fromLittle(l);
  m.input.resize(h.words, h.dim);
  r.read(reinterpret_cast<char*>(m.input.data()), h.words * h.dim * 4);
  swapFloatsIfBigEndian(m.input.data(), h.words * h.dim);
  for (std::uint64_t i = 0; i < h.words; ++i)
    checkFinite(m.input.row(i).data(), h.dim, m.words[i],
                [&] { return inQuotes(path) + " input vector " + std::to_string(i + 1); });
  if (withOutput) {
    m.output.resize(h.outputRows, h.outputRows > 0 ? h.dim : 0);
    r.read(reinterpret_cast<char*>(m.output.data()), h.outputRows * h.dim * 4);
    swapFloatsIfBigEndian(m.output.data(), h.outputRows * h.dim);
    for (std::uint64_t i = 0; i < h.outputRows * h.dim; ++i)
      if (!std::isfinite(m.output.data()[i]))
        throw FormatError(inQuotes(path) + ": output weight row " + std::to_string(i / h.dim + 1) +
                          " is not finite");
  }
  return m;
}

}  // namespace

VectorFormat parseVectorFormat(const std::string& name) {
  if (name == "auto") return VectorFormat::Auto;
  if (name == "bin" || name == "binary") return VectorFormat::Word2VecBinary;
  if (name == "text" || name == "txt" || name == "vec") return VectorFormat::Word2VecText;
  if (name == "npy") return VectorFormat::Npy;
  if (name == "model" || name == "posvec") return VectorFormat::Model;
  throw ConfigError("unknown vector format '" + name + "' (use bin, text, npy or model)");
}

std::string formatName(VectorFormat format) {
  switch (format) {
    case VectorFormat::Auto:
      return "auto";
    case VectorFormat::Word2VecBinary:
      return "bin";
    case VectorFormat::Word2VecText:
      return "text";
    case VectorFormat::Npy:
      return "npy";
    case VectorFormat::Model:
      return "model";
  }
  return "auto";
}

VectorFormat formatFromExtension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (ext == ".bin") return VectorFormat::Word2VecBinary;
  if (ext == ".txt" || ext == ".vec") return VectorFormat::Word2VecText;
  if (ext == ".npy") return VectorFormat::Npy;
  if (ext == ".posvec") return VectorFormat::Model;
  throw ConfigError(
      "cannot tell the format of " + inQuotes(path) +
      " from its extension (.bin, .txt, .vec, .npy, .posvec); choose one with --format");
}

std::string npyVocabularyPath(const std::string& npyPath) {
  fs::path p(npyPath);
  if (p.extension() == ".npy") return p.replace_extension(".vocab").string();
  return npyPath + ".vocab";
}

VectorFormat detectFormat(const std::string& path) {
  ChunkReader r(path);
  const std::size_t n = r.ensure(8);
  if (n >= 8 && std::memcmp(r.data(), kModelMagic, 8) == 0) return VectorFormat::Model;
  if (n >= 6 && std::memcmp(r.data(), kNpyMagic, 6) == 0) return VectorFormat::Npy;
  if (n >= 6 && std::memcmp(r.data(), "POSVEC", 6) == 0)
    throw FormatError(inQuotes(path) + ": a posvec model of another format generation ('" +
                      shown(std::string_view(r.data(), 8)) + "'); this posvec reads 'POSVECM1'");
  const Header h = readWord2VecHeader(r, path);
  if (h.words == 0) return VectorFormat::Word2VecText;
  // Text when the first record is a word and D numbers on one line; binary otherwise.
  const std::size_t want =
      std::min<std::uint64_t>(r.remaining(), std::max<std::uint64_t>(64 * h.dim + 4096, 1 << 16));
  const std::size_t avail = r.ensure(std::min<std::size_t>(want, 64 << 20));
  const char* p = r.data();
  const void* nl = std::memchr(p, '\n', avail);
  const std::string_view line(p, nl ? static_cast<const char*>(nl) - p : avail);
  if (looksLikeTextRecord(line, h.dim)) return VectorFormat::Word2VecText;
  // A broken text record still reads as text (so its error has a line number);
  // float32 bytes nearly always hold control bytes or invalid UTF-8.
  std::string_view window(p, std::min<std::size_t>(avail, 4 * h.dim + 256));
  if (const auto nl2 = window.rfind('\n'); nl2 != std::string_view::npos) {
    window = window.substr(0, nl2);
  } else {
    for (int k = 0; k < 3 && !window.empty() && static_cast<unsigned char>(window.back()) >= 0x80;
         ++k)
      window.remove_suffix(1);
  }
  const bool text = detail::isValidUtf8(window) && std::none_of(window.begin(), window.end(), [](char c) {
                      const auto u = static_cast<unsigned char>(c);
                      return (u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7f;
                    });
  return text ? VectorFormat::Word2VecText : VectorFormat::Word2VecBinary;
}

void saveVectors(const Embeddings& embeddings, const std::string& path, VectorFormat format) {
  if (format == VectorFormat::Auto) format = formatFromExtension(path);
  checkSavable(embeddings);
  switch (format) {
    case VectorFormat::Word2VecBinary:
      writeFileAtomically(path, [&](std::ostream& out) { writeBinary(embeddings, out); });
      return;
    case VectorFormat::Word2VecText:
      writeFileAtomically(path, [&](std::ostream& out) { writeText(embeddings, out); });
      return;
    case VectorFormat::Npy:
      writeNpy(embeddings, path);
      return;
    case VectorFormat::Model:
    case VectorFormat::Auto:
      break;
  }
  throw ConfigError("cannot save plain vectors as a posvec model (" + inQuotes(path) +
                    "); the model format holds a full training state: use saveModel, or save as "
                    "bin, text or npy");
}

Embeddings detail::loadVectorsAs(const std::string& path, VectorFormat format) {
  switch (format) {
    case VectorFormat::Word2VecBinary:
      return loadWord2VecBinary(path);
    case VectorFormat::Word2VecText:
      return loadWord2VecText(path);
    case VectorFormat::Npy:
      return loadNpy(path);
    case VectorFormat::Model: {
      ModelState m = readModel(path, false);
      try {
        return Embeddings(std::move(m.words), std::move(m.input), std::move(m.counts));
      } catch (const InputError& e) {
        throw FormatError(inQuotes(path) + ": " + e.what());
      }
    }
    case VectorFormat::Auto:
      break;
  }
  throw FormatError(inQuotes(path) + ": unknown vector format");
}

Embeddings loadVectors(const std::string& path) {
  return detail::loadVectorsAs(path, detectFormat(path));
}

void saveModel(const ModelState& model, const std::string& path) {
  const std::uint64_t v = model.words.size();
  const std::uint64_t d = static_cast<std::uint64_t>(model.input.cols());
  if (static_cast<std::uint64_t>(model.input.rows()) != v)
    throw InputError("cannot save model " + inQuotes(path) + ": " + std::to_string(v) +
                     " words but " + std::to_string(model.input.rows()) + " input vectors");
  if (!model.counts.empty() && model.counts.size() != v)
    throw InputError("cannot save model " + inQuotes(path) + ": " + std::to_string(v) +
                     " words but " + std::to_string(model.counts.size()) + " counts");
  const std::uint64_t outRows = static_cast<std::uint64_t>(model.output.rows());
  if (outRows > 0 && static_cast<std::uint64_t>(model.output.cols()) != d)
    throw InputError("cannot save model " + inQuotes(path) + ": output weights have dimension " +
                     std::to_string(model.output.cols()) + ", input vectors " + std::to_string(d));
  if (outRows > v)
    throw InputError("cannot save model " + inQuotes(path) + ": " + std::to_string(outRows) +
                     " output rows for " + std::to_string(v) + " words");
  if (model.epochsDone < 0)
    throw InputError("cannot save model " + inQuotes(path) + ": negative epochsDone");
  std::uint64_t wordBytes = 0;
  for (std::size_t i = 0; i < v; ++i) {
    const std::string& w = model.words[i];
    if (w.empty() || w.size() > std::numeric_limits<std::uint32_t>::max() || !detail::isValidUtf8(w) ||
        std::any_of(w.begin(), w.end(), isSpace))
      throw InputError("cannot save model " + inQuotes(path) + ": word " + std::to_string(i + 1) +
                       " ('" + shown(w) +
                       "') is empty, too long, not UTF-8 or contains whitespace");
    wordBytes += w.size();
  }
  for (std::size_t i = 0; i < v; ++i)
    if (model.counts.size() == v && model.counts[i] < 0)
      throw InputError("cannot save model " + inQuotes(path) + ": negative count for '" +
                       shown(model.words[i]) + "'");
  writeFileAtomically(path, [&](std::ostream& out) {
    std::string buf(kModelMagic, 8);
    put(buf, kModelVersion);
    put(buf, std::uint32_t{0});
    put(buf, v);
    put(buf, d);
    put(buf, outRows);
    put(buf, static_cast<std::uint64_t>(model.config.size()));
    put(buf, wordBytes);
    put(buf, static_cast<std::uint64_t>(model.epochLosses.size()));
    put(buf, model.epochsDone);
    put(buf, std::uint32_t{0});
    buf += model.config;
    for (const auto& w : model.words) {
      put(buf, static_cast<std::uint32_t>(w.size()));
      buf += w;
    }
    for (std::size_t i = 0; i < v; ++i)
      put(buf, model.counts.empty() ? std::int64_t{0} : model.counts[i]);
    for (double l : model.epochLosses) put(buf, l);
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    writeFloats(out, model.input.data(), v * d);
    if (outRows > 0) writeFloats(out, model.output.data(), outRows * d);
  });
}

ModelState loadModel(const std::string& path) {
  VectorFormat f = VectorFormat::Model;
  try {
    f = detectFormat(path);
  } catch (const FormatError&) {
    // Not a vector file of any kind: readModel names the bad magic.
  }
  if (f != VectorFormat::Model)
    throw FormatError(
        inQuotes(path) + " is a " + formatName(f) +
        " vector file, not a posvec model: it holds no training state to resume from");
  return readModel(path, true);
}

void writeNpyArray(std::ostream& out, const float* data, const std::vector<std::size_t>& shape) {
  writeNpyImpl(out, data, shape);
}

void writeNpyArray(std::ostream& out, const double* data, const std::vector<std::size_t>& shape) {
  writeNpyImpl(out, data, shape);
}

}  // namespace posvec
