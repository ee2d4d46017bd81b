// word2vec binary and text vectors, read and written as word2vec.c and gensim do.
#include <cstdio>
#include <limits>

#include "formats_detail.hpp"

namespace posvec::detail {

namespace {

// Parses the word2vec "V D" line; false when it is not one.
bool parseHeader(std::string_view line, Word2VecHeader& h) {
  std::vector<std::string_view> parts;
  forEachField(line, [&](std::string_view t) { parts.push_back(t); });
  return parts.size() == 2 && parseUnsigned(parts[0], h.words) && parseUnsigned(parts[1], h.dim);
}

// The header checks both word2vec readers make.
void checkHeader(const Word2VecHeader& h, const std::string& path) {
  // No words means no data to back the dimension: "0 1000000000" would load as an
  // empty table whose dimension later sizes a 20 GB positional matrix.
  if (h.words == 0)
    throw FormatError(inQuotes(path) +
                      ": header says 0 words (an empty vocabulary); a vectors "
                      "file needs at least one word and its vector");
  if (h.dim == 0)
    throw FormatError(inQuotes(path) + ": header says dimension 0 for " + std::to_string(h.words) +
                      " words");
}

[[noreturn]] void notAHeader(const std::string& path) {
  throw FormatError(ErrorText(inQuotes(path) +
                              ": not a word2vec file (the first line should be 'WORDS "
                              "DIMENSION'), nor an .npy or posvec model file; text without that "
                              "line (GloVe) loads with ")
                    << settingNamed(kLoadSettings, "noHeader"));
}

// The next line of `file` from `pos` (without its '\n'); false at the end.
bool nextLine(std::string_view file, std::size_t& pos, std::string_view& line) {
  if (pos >= file.size()) return false;
  const void* nl = std::memchr(file.data() + pos, '\n', file.size() - pos);
  const std::size_t end =
      nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - file.data()) : file.size();
  line = file.substr(pos, end - pos);
  pos = end + 1;
  return true;
}

Word2VecHeader headerOf(std::string_view file, std::size_t& pos, const std::string& path) {
  std::string_view line;
  Word2VecHeader h;
  const void* nl = std::memchr(file.data(), '\n', std::min<std::size_t>(file.size(), 4097));
  if (!nl || !nextLine(file, pos, line) || !parseHeader(line, h)) notAHeader(path);
  checkHeader(h, path);
  return h;
}

// The word of a record as it will be stored: valid UTF-8 as it is, otherwise
// repaired or refused as `mode` says. `repaired` holds the bytes when they change.
template <typename Where>
std::string_view decodedWord(std::string_view word, UnicodeErrors mode, std::string& repaired,
                             Where&& where) {
  if (isValidUtf8(word)) return word;
  if (mode == UnicodeErrors::Strict) {
    const std::size_t at = firstInvalidUtf8(word);
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(word[at]));
    throw FormatError(ErrorText(where() + ": word '" + shown(word) + "' is not valid UTF-8 (byte " +
                                hex + " at offset " + std::to_string(at) +
                                " of the word); to read it anyway, load with ")
                      << settingNamed(kLoadSettings, "unicodeErrors")
                      << " 'replace' (U+FFFD) or 'ignore'");
  }
  repaired = repairUtf8(word, mode);
  if (repaired.empty())
    throw FormatError(where() + ": nothing is left of the word '" + shown(word) +
                      "' once its invalid bytes are dropped (unicode errors 'ignore'); "
                      "use 'replace'");
  return repaired;
}

// Rows go straight into the final matrix; a repeated word's row is overwritten
// by the next record (gensim keeps the first vector).
class Rows {
 public:
  Rows(std::uint64_t rows, std::uint64_t dim, bool willFillAll)
      : vectors_(uninitialisedMatrix(rows, dim, willFillAll)), seen_(static_cast<std::size_t>(rows)) {
    words_.reserve(static_cast<std::size_t>(rows));
  }
  // The row the next record fills; nullptr when the file holds more records than
  // its size allowed for (cannot happen: the bound counts the smallest record).
  float* next(const std::string& path) {
    if (words_.size() == static_cast<std::size_t>(vectors_.rows()))
      throw FormatError(inQuotes(path) + ": more records than the file's size allows");
    return vectors_.row(static_cast<Eigen::Index>(words_.size())).data();
  }
  void commit(std::string_view word) {
    if (seen_.insert(words_, word, words_.size())) words_.emplace_back(word);
  }
  Embeddings finish(const std::string& path) {
    if (static_cast<Eigen::Index>(words_.size()) != vectors_.rows())
      vectors_.conservativeResize(static_cast<Eigen::Index>(words_.size()), vectors_.cols());
    try {
      return Embeddings(std::move(words_), std::move(vectors_));
    } catch (const InputError& e) {
      throw FormatError(inQuotes(path) + ": " + e.what());
    }
  }

 private:
  MatrixF vectors_;
  std::vector<std::string> words_;
  FirstOccurrence seen_;
};

}  // namespace

// True when `line` is "word v1 ... vD" with D parseable numbers.
bool looksLikeTextRecord(std::string_view line, std::uint64_t dim) {
  std::uint64_t tokens = 0;
  bool numbers = true;
  forEachField(line, [&](std::string_view t) {
    float v;
    if (tokens++ > 0 && numbers && !parseFloat(t, v)) numbers = false;
  });
  return numbers && tokens == dim + 1;
}

bool binaryReadingIsExact(const std::string& path, const Word2VecHeader& h) {
  ChunkReader r(path);
  std::string_view line, word;
  bool tooLong = false, overflow = false;
  const std::uint64_t rowBytes = mulChecked(h.dim, sizeof(float), overflow);
  if (overflow || !r.until('\n', line, 4096, tooLong)) return false;
  auto skipNewlines = [&] {
    while (r.ensure(1) > 0 && r.data()[0] == '\n') r.skip(1);
  };
  for (std::uint64_t i = 0; i < h.words; ++i) {
    skipNewlines();
    if (r.ensure(1) == 0 || !r.until(' ', word, kMaxWordBytes, tooLong) || word.empty() ||
        word.find('\n') != std::string_view::npos || r.discard(rowBytes) != rowBytes)
      return false;
  }
  skipNewlines();
  return r.remaining() == 0;
}

Word2VecHeader readWord2VecHeader(ChunkReader& r, const std::string& path) {
  std::string_view line;
  bool tooLong = false;
  Word2VecHeader h;
  if (!r.until('\n', line, 4096, tooLong) || !parseHeader(line, h)) notAHeader(path);
  checkHeader(h, path);
  return h;
}

namespace {
Embeddings parseWord2VecText(const MappedFile& f, const std::string& path, const LoadOptions& o);
Embeddings parseWord2VecBinary(const MappedFile& f, const std::string& path,
                               const LoadOptions& o);
}  // namespace

Embeddings loadWord2VecText(const std::string& path, const LoadOptions& o) {
  const MappedFile f(path, o.limit == 0);
  return readMapped(f, path, [&] { return parseWord2VecText(f, path, o); });
}

namespace {
Embeddings parseWord2VecText(const MappedFile& f, const std::string& path, const LoadOptions& o) {
  const std::string_view file = f.view();
  std::size_t pos = 0;
  Word2VecHeader h;
  std::uint64_t firstLine = 2;  // line number of the first record
  if (o.noHeader) {
    // GloVe: the dimension from the first line, the count from the lines (as gensim).
    std::string_view first;
    std::size_t p = 0;
    if (!nextLine(file, p, first)) throw FormatError(inQuotes(path) + ": empty file (no vectors)");
    forEachField(first, [&](std::string_view) { ++h.dim; });
    if (h.dim < 2)
      throw FormatError(inQuotes(path) +
                        " line 1: expected a word and its values (headerless "
                        "text), found " +
                        std::to_string(h.dim) + " fields");
    --h.dim;
    const char* d = file.data();
    for (std::size_t q = 0; q < file.size() && (o.limit == 0 || h.words < o.limit); ++h.words) {
      const void* nl = std::memchr(d + q, '\n', file.size() - q);
      q = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - d) + 1 : file.size();
    }
    firstLine = 1;
  } else {
    h = headerOf(file, pos, path);
  }
  const std::uint64_t remaining = file.size() - std::min(pos, file.size());
  // Each record needs a word, and per value a separator and a digit: the file
  // size bounds how many rows can be present, so a lying header cannot make us
  // allocate more than that (the parse below then says where the file ends).
  bool overflow = false;
  const std::uint64_t minRecord = addChecked(mulChecked(h.dim, 2, overflow), 2, overflow);
  if (overflow || minRecord - 1 > remaining)
    throw FormatError(inQuotes(path) + ": header says dimension " + std::to_string(h.dim) +
                      " but the file has only " + std::to_string(remaining) +
                      " bytes after it, too few for one vector (wrong header?)");
  const std::uint64_t words = o.limit ? std::min(h.words, o.limit) : h.words;
  const std::uint64_t fit = (remaining + 1) / minRecord + 1;
  Rows rows(std::min(words, fit), h.dim, false);
  std::string_view line;
  std::string repaired;
  for (std::uint64_t i = 0; i < words; ++i) {
    const auto where = [&] { return inQuotes(path) + " line " + std::to_string(i + firstLine); };
    if (!nextLine(file, pos, line))
      throw FormatError(inQuotes(path) + ": header says " + std::to_string(h.words) +
                        " words but the file ends after " + std::to_string(i) +
                        " (truncated file or wrong header)");
    float* row = rows.next(path);
    std::uint64_t n = 0;
    std::string_view word;
    forEachField(line, [&](std::string_view t) {
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
    word = decodedWord(word, o.unicodeErrors, repaired, where);
    checkWord(word, where);
    checkFinite(row, h.dim, word, where);
    rows.commit(word);
  }
  return rows.finish(path);
}
}  // namespace

Embeddings loadWord2VecBinary(const std::string& path, const LoadOptions& o) {
  if (o.noHeader)
    throw ConfigError(inQuotes(path) +
                      " is a word2vec binary file; no-header applies to text files only");
  const MappedFile f(path, o.limit == 0);
  return readMapped(f, path, [&] { return parseWord2VecBinary(f, path, o); });
}

namespace {
Embeddings parseWord2VecBinary(const MappedFile& f, const std::string& path,
                               const LoadOptions& o) {
  const std::string_view file = f.view();
  const char* d = file.data();
  const std::size_t n = file.size();
  std::size_t pos = 0;
  const Word2VecHeader h = headerOf(file, pos, path);
  bool overflow = false;
  const std::uint64_t rowBytes = mulChecked(h.dim, sizeof(float), overflow);
  const std::uint64_t remaining = n - std::min(pos, n);
  // Bounds the rows to allocate by what the file size can hold (see the text reader).
  const std::uint64_t minRecord = addChecked(rowBytes, 2, overflow);
  if (overflow || minRecord > remaining)
    throw FormatError(inQuotes(path) + ": header says dimension " + std::to_string(h.dim) + " (" +
                      (overflow ? std::string("too many") : std::to_string(rowBytes)) +
                      " bytes a vector) but the file has only " + std::to_string(remaining) +
                      " bytes after it (truncated file or wrong header)");
  const std::uint64_t words = o.limit ? std::min(h.words, o.limit) : h.words;
  Rows rows(std::min(words, remaining / minRecord + 1), h.dim, true);
  std::string repaired;
  for (std::uint64_t i = 0; i < words; ++i) {
    // word2vec.c writes "\n" after each vector, gensim does not: accept both.
    while (pos < n && d[pos] == '\n') ++pos;
    const std::uint64_t at = pos;
    const auto where = [&] {
      return inQuotes(path) + " word " + std::to_string(i + 1) + " (byte offset " +
             std::to_string(at) + ")";
    };
    if (pos >= n)
      throw FormatError(inQuotes(path) + ": header says " + std::to_string(h.words) +
                        " words but the file ends after " + std::to_string(i) +
                        " (truncated file?)");
    const std::size_t scan = std::min<std::size_t>(n - pos, kMaxWordBytes + 1);
    const void* space = std::memchr(d + pos, ' ', scan);
    if (!space && scan > kMaxWordBytes)
      throw FormatError(where() + ": no space after " + std::to_string(kMaxWordBytes) +
                        " bytes (corrupt file?)");
    const std::size_t end =
        space ? static_cast<std::size_t>(static_cast<const char*>(space) - d) : n;
    std::string_view word(d + pos, end - pos);
    pos = std::min(end + 1, n);
    if (n - pos < rowBytes)
      throw FormatError(where() + ": file ends in the middle of the vector of '" + shown(word) +
                        "' (" + std::to_string(n - pos) + " of " + std::to_string(rowBytes) +
                        " bytes; truncated file?)");
    float* row = rows.next(path);
    std::memcpy(row, d + pos, rowBytes);
    pos += rowBytes;
    swapFloatsIfBigEndian(row, h.dim);
    word = decodedWord(word, o.unicodeErrors, repaired, where);
    checkWord(word, where);
    checkFinite(row, h.dim, word, where);
    rows.commit(word);
  }
  return rows.finish(path);
}
}  // namespace

std::string w2vHeader(const Embeddings& e) {
  return std::to_string(e.size()) + " " + std::to_string(e.dim()) + "\n";
}

void writeWord2VecBinary(const Embeddings& e, std::ostream& out) {
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

void writeWord2VecText(const Embeddings& e, std::ostream& out) {
  // Values are formatted straight into one buffer (no per-value string appends),
  // so the writer runs at std::to_chars's speed; flushed every kChunkBytes.
  const std::size_t d = e.dim();
  constexpr std::size_t kMaxValueChars = 16;  // ' ' + the longest shortest float32 form (15)
  std::string buf = w2vHeader(e);
  std::size_t used = buf.size();
  buf.resize(kChunkBytes + 65536);
  for (std::size_t i = 0; i < e.size(); ++i) {
    const std::string& word = e.words()[i];
    const std::size_t need = word.size() + d * kMaxValueChars + 1;
    if (used + need > buf.size()) {
      out.write(buf.data(), static_cast<std::streamsize>(used));
      used = 0;
      if (need > buf.size()) buf.resize(need);
    }
    char* p = buf.data() + used;
    std::memcpy(p, word.data(), word.size());
    p += word.size();
    const float* row = e.vectors().row(static_cast<Eigen::Index>(i)).data();
    for (std::size_t j = 0; j < d; ++j) {
      *p++ = ' ';
      // Shortest representation that reads back as the same float32.
      p = std::to_chars(p, p + kMaxValueChars, row[j]).ptr;
    }
    *p++ = '\n';
    used = static_cast<std::size_t>(p - buf.data());
  }
  out.write(buf.data(), static_cast<std::streamsize>(used));
}

}  // namespace posvec::detail
