// word2vec binary and text vectors, read and written as word2vec.c and gensim do.
#include <limits>
#include <unordered_set>

#include "formats_detail.hpp"

namespace posvec::detail {

namespace {

// Parses the word2vec "V D" line; false when it is not one.
bool parseHeader(std::string_view line, Word2VecHeader& h) {
  std::vector<std::string_view> parts;
  forEachField(line, [&](std::string_view t) { parts.push_back(t); });
  return parts.size() == 2 && parseUnsigned(parts[0], h.words) && parseUnsigned(parts[1], h.dim);
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
  if (!r.until('\n', line, 4096, tooLong) || !parseHeader(line, h))
    throw FormatError(inQuotes(path) +
                      ": not a word2vec file (the first line should be 'WORDS DIMENSION'), "
                      "nor an .npy or posvec model file");
  // No words means no data to back the dimension: "0 1000000000" would load as an
  // empty table whose dimension later sizes a 20 GB positional matrix.
  if (h.words == 0)
    throw FormatError(inQuotes(path) +
                      ": header says 0 words (an empty vocabulary); a vectors "
                      "file needs at least one word and its vector");
  if (h.dim == 0)
    throw FormatError(inQuotes(path) + ": header says dimension 0 for " + std::to_string(h.words) +
                      " words");
  return h;
}

Embeddings loadWord2VecText(const std::string& path) {
  ChunkReader r(path);
  const Word2VecHeader h = readWord2VecHeader(r, path);
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
    checkWord(word, where);
    checkFinite(row, h.dim, word, where);
    c.commit(word);
  }
  return c.finish(path);
}

Embeddings loadWord2VecBinary(const std::string& path) {
  ChunkReader r(path);
  const Word2VecHeader h = readWord2VecHeader(r, path);
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

}  // namespace posvec::detail
