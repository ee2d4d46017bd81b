// NumPy .npy arrays: reading a (words, dimension) float32/float64 matrix with its
// .vocab file, writing float32/float64 arrays in format 1.0.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include "formats_detail.hpp"
#include "half.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"

namespace posvec {

namespace detail {

namespace {

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
  std::string dict = std::string("{'descr': '") +
                     (sizeof(T) == 2 ? "<f2" : sizeof(T) == 4 ? "<f4" : "<f8") +
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
    // 1 MiB per call, as detail::writeFloats (one call for a whole matrix is slow).
    constexpr std::size_t kChunk = (std::size_t{1} << 20) / sizeof(T);
    for (std::size_t i = 0; i < count; i += kChunk)
      out.write(reinterpret_cast<const char*>(data + i),
                static_cast<std::streamsize>(std::min(kChunk, count - i) * sizeof(T)));
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      const T v = fromLittle(data[i]);
      out.write(reinterpret_cast<const char*>(&v), sizeof v);
    }
  }
}

}  // namespace

Embeddings loadNpy(const std::string& path) {
  ChunkReader r(path);
  const NpyHeader h = readNpyHeader(r, path);
  if (h.descr != "<f2" && h.descr != "<f4" && h.descr != "<f8")
    throw FormatError(inQuotes(path) + ": .npy dtype '" + h.descr +
                      "' is not supported (save float32 '<f4', float64 '<f8' or float16 '<f2')");
  if (h.shape.size() != 2)
    throw FormatError(inQuotes(path) + ": .npy array has " + std::to_string(h.shape.size()) +
                      " dimensions; word vectors need shape (words, dimension)");
  const std::uint64_t rows = h.shape[0], cols = h.shape[1];
  // With a zero in the shape, no data bytes back the other number: (0, 10^9) would
  // be an empty table of dimension 10^9, (10^12, 0) 10^12 words to reserve.
  if (rows == 0 || cols == 0)
    throw FormatError(inQuotes(path) + ": .npy shape (" + std::to_string(rows) + ", " +
                      std::to_string(cols) +
                      ") holds no vectors; word vectors need at least one "
                      "word and a dimension of at least 1");
  const std::uint64_t item = h.descr == "<f2" ? 2 : h.descr == "<f4" ? 4 : 8;
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
  } else if (item == 2) {  // float16: every value exact in float32
    std::vector<std::uint16_t> row(cols);
    for (std::uint64_t i = 0; i < rows; ++i) {
      r.read(reinterpret_cast<char*>(row.data()), cols * 2);
      for (std::uint64_t j = 0; j < cols; ++j) m(i, j) = fp16ToFloat(fromLittle(row[j]));
    }
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
  if (!std::filesystem::exists(vocabPath, ec))
    throw IoError("cannot load " + inQuotes(path) + ": its vocabulary file " + inQuotes(vocabPath) +
                  " (one 'word count' line per row) is missing; an .npy alone holds no words "
                  "(gensim's *.vectors.npy belongs to its .kv/.model pickle: save word2vec-format "
                  "vectors from gensim with save_word2vec_format)");
  ChunkReader v(vocabPath);
  // Every 'word count' line takes at least 4 bytes ("w 0\n"): a vocabulary file too
  // small for the rows is refused before anything is reserved for them.
  if (rows > (v.fileSize() + 1) / 4)
    throw FormatError(inQuotes(vocabPath) + " has " + std::to_string(v.fileSize()) +
                      " bytes, too few for the " + std::to_string(rows) + " words of " +
                      inQuotes(path) + " (one 'word count' line per row)");
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
    forEachField(line, [&](std::string_view t) { parts.push_back(t); });
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

void writeNpy(const Embeddings& e, const std::string& path, bool float16) {
  // float16 holds magnitudes up to 65504 (a larger one rounds to infinity): a value
  // beyond it, or one not finite, is refused before anything is written, rather
  // than written as inf.
  if (float16) {
    const float* v = e.vectors().data();
    for (std::size_t i = 0; i < e.size() * e.dim(); ++i)
      if (!(std::fabs(v[i]) < 65520.0f)) {  // 65520 and up round to infinity
        std::ostringstream s;
        s << "cannot write " << inQuotes(path) << " as float16: word '" << e.words()[i / e.dim()]
          << "' holds " << v[i] << ", beyond float16's largest value 65504; write float32 (";
        throw InputError(ErrorText(s.str()) << settingNamed(kSaveArguments, "npyDtype") << ")");
      }
  }
  // One transaction: a full disk must not leave a new .vocab beside the old .npy.
  const std::string vocabPath = npyVocabularyPath(path);
  const auto matrix = [&](std::ostream& out) {
    if (!float16) return writeNpyArray(out, e.vectors().data(), {e.size(), e.dim()});
    // float16 ('<f2'): rounded to nearest even, held as little-endian 16-bit words.
    std::vector<std::uint16_t> halves(e.size() * e.dim());
    for (std::size_t i = 0; i < halves.size(); ++i)
      halves[i] = floatToFp16(e.vectors().data()[i]);
    writeNpyImpl(out, halves.data(), {e.size(), e.dim()});
  };
  const auto vocabulary = [&](std::ostream& out) {
    std::string buf;
    for (std::size_t i = 0; i < e.size(); ++i) {
      buf += e.words()[i];
      buf += ' ';
      buf += std::to_string(e.counts().empty() ? 0 : e.counts()[i]);
      buf += '\n';
    }
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  };
  writeFilesAtomically({{path, matrix}, {vocabPath, vocabulary}});
}

}  // namespace detail

std::string npyVocabularyPath(const std::string& npyPath) {
  std::filesystem::path p(npyPath);
  if (p.extension() == ".npy") return p.replace_extension(".vocab").string();
  return npyPath + ".vocab";
}

void writeNpyArray(std::ostream& out, const float* data, const std::vector<std::size_t>& shape) {
  detail::writeNpyImpl(out, data, shape);
}

void writeNpyArray(std::ostream& out, const double* data, const std::vector<std::size_t>& shape) {
  detail::writeNpyImpl(out, data, shape);
}

}  // namespace posvec
