// Format names, detection from content, and the loadVectors/saveVectors
// dispatch; each format lives in its own file (formats_word2vec.cpp,
// formats_npy.cpp, formats_model.cpp) over the helpers of formats_detail.hpp.
#include "posvec/formats.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "formats_detail.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "posvec/subwords.hpp"
#include "utf8.hpp"

namespace posvec {
namespace {
namespace fs = std::filesystem;
using namespace detail;
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
  throw ConfigError(ErrorText("cannot tell the format of " + inQuotes(path) +
                              " from its extension (.bin, .txt, .vec, .npy, .posvec); choose "
                              "one with ")
                    << settingNamed(kSaveArguments, "format"));
}

namespace {

// fastText's model files start with the int32 793712314 (little-endian), then the version.
constexpr unsigned char kFastTextMagic[4] = {0xBA, 0x16, 0x4F, 0x2F};

bool isFastText(const char* p, std::size_t n) {
  return n >= 4 && std::memcmp(p, kFastTextMagic, 4) == 0;
}

// Python pickles of protocol 2 and later (gensim saves with 4) open with PROTO, version.
bool isPickle(const char* p, std::size_t n) {
  return n >= 2 && static_cast<unsigned char>(p[0]) == 0x80 && p[1] >= 2 && p[1] <= 5;
}

// The files people give where word vectors are expected and that no option reads:
// a FormatError naming what the file is and how to get vectors out of it.
void refuseForeignFormat(const char* p, std::size_t n, const std::string& path) {
  if (isFastText(p, n))
    throw FormatError(inQuotes(path) +
                      ": a fastText model (.bin), not word vectors in word2vec's format; "
                      "load the .vec file fastText writes beside it (word2vec text), or "
                      "export one with 'fasttext print-word-vectors'");
  if (isPickle(p, n))
    throw FormatError(inQuotes(path) +
                      ": a Python pickle (a gensim .model or .kv file), not word vectors; save "
                      "them from gensim in word2vec's format with "
                      "model.wv.save_word2vec_format('vectors.bin', binary=True) and load that");
}

}  // namespace

std::string binaryFileKind(const std::string& path) {
  // Only regular files: reading from a pipe would take its bytes from the real reader.
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return {};
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const char* p = head.data();
  const std::size_t n = head.size();
  if (n >= 8 && std::memcmp(p, kModelMagic, 8) == 0) return "a posvec model (.posvec)";
  if (n >= 6 && std::memcmp(p, kNpyMagic, 6) == 0) return "a NumPy array (.npy)";
  if (isFastText(p, n)) return "a fastText model (.bin)";
  if (isPickle(p, n)) return "a Python pickle (a gensim .model or .kv file)";
  // Compressed text is read through its decompression: not binary here.
  static const std::string_view kCompressed[] = {"\x1f\x8b", "BZh",
                                                 "\xfd"
                                                 "7zXZ",
                                                 "\x28\xb5\x2f\xfd"};
  for (std::string_view m : kCompressed)
    if (n >= m.size() && std::string_view(p, m.size()) == m) return {};
  // Word vectors in word2vec's binary format: a text header, then float bytes.
  try {
    if (detectFormat(path) == VectorFormat::Word2VecBinary)
      return "word vectors in word2vec's binary format";
  } catch (const Error&) {
  }
  if (std::memchr(p, '\0', n) == nullptr) return {};
  // NUL bytes alone could be odd text; with invalid UTF-8 (cut at the last whole
  // character) it is binary.
  std::string_view text(p, n);
  for (int k = 0; k < 3 && !text.empty() && static_cast<unsigned char>(text.back()) >= 0x80; ++k)
    text.remove_suffix(1);
  if (detail::isValidUtf8(text)) return {};
  return "a binary file";
}

VectorFormat detectFormat(const std::string& path) {
  ChunkReader r(path, std::size_t{1} << 16);  // grows when the first record is longer
  const std::size_t n = r.ensure(8);
  refuseForeignFormat(r.data(), n, path);
  if (n >= 8 && std::memcmp(r.data(), kModelMagic, 8) == 0) return VectorFormat::Model;
  if (n >= 6 && std::memcmp(r.data(), kNpyMagic, 6) == 0) return VectorFormat::Npy;
  if (n >= 6 && std::memcmp(r.data(), "POSVEC", 6) == 0)
    throw FormatError(inQuotes(path) + ": a posvec model of another format generation ('" +
                      shown(std::string_view(r.data(), 8)) + "'); this posvec reads 'POSVECM1'");
  const Word2VecHeader h = readWord2VecHeader(r, path);
  // Text when the first record is a word and D numbers on one line; binary otherwise.
  const std::size_t want =
      std::min<std::uint64_t>(r.remaining(), std::max<std::uint64_t>(64 * h.dim + 4096, 1 << 16));
  const std::size_t avail = r.ensure(std::min<std::size_t>(want, 64 << 20));
  const char* p = r.data();
  const void* nl = std::memchr(p, '\n', avail);
  const std::string_view line(p, nl ? static_cast<const char*>(nl) - p : avail);
  if (looksLikeTextRecord(line, h.dim)) {
    // Float bytes can be printable digits and spaces ("1 4\nx " + 16 such bytes reads
    // as a text record too). A binary first record is exactly word, space, 4 x dim
    // bytes; only when the line has that length can both readings hold, and then the
    // one that consumes the whole file exactly wins, binary on a tie (text numbers of
    // exactly that width in every record would be a coincidence, for binary it is
    // the layout).
    const std::size_t space = line.find(' ');
    const bool binaryShaped =
        space != std::string_view::npos && space > 0 && line.size() - space - 1 == 4 * h.dim;
    return binaryShaped && binaryReadingIsExact(path, h) ? VectorFormat::Word2VecBinary
                                                         : VectorFormat::Word2VecText;
  }
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
  // Printable bytes that are not a text record: binary if that reading consumes the
  // file exactly (a gensim binary has no newline between records, so its first
  // "line" runs on), text otherwise (so the error names a line).
  if (text && binaryReadingIsExact(path, h)) return VectorFormat::Word2VecBinary;
  return text ? VectorFormat::Word2VecText : VectorFormat::Word2VecBinary;
}

void saveNpyFloat16(const Embeddings& embeddings, const std::string& path) {
  checkSavable(embeddings);
  if (path == "-")
    throw ConfigError(
        "npy output cannot go to standard output: it is two files (FILE.npy and FILE.vocab); "
        "write a file");
  writeNpy(embeddings, path, true);
}

void saveVectors(const Embeddings& embeddings, const std::string& path, VectorFormat format) {
  if (format == VectorFormat::Auto) format = formatFromExtension(path);
  checkSavable(embeddings);
  switch (format) {
    case VectorFormat::Word2VecBinary:
      writeToPathOrStdout(path, [&](std::ostream& out) { writeWord2VecBinary(embeddings, out); });
      return;
    case VectorFormat::Word2VecText:
      writeToPathOrStdout(path, [&](std::ostream& out) { writeWord2VecText(embeddings, out); });
      return;
    case VectorFormat::Npy:
      if (path == "-")
        throw ConfigError(
            "npy output cannot go to standard output: it is two files (FILE.npy and "
            "FILE.vocab); write a file, or choose the bin or text format");
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

UnicodeErrors parseUnicodeErrors(const std::string& name) {
  for (const auto& c : kUnicodeErrorsNames)
    if (c.name == name) return c.value;
  throw ConfigError("unknown unicode errors mode '" + name + "' (use strict, replace or ignore)");
}

std::string unicodeErrorsName(UnicodeErrors mode) {
  for (const auto& c : kUnicodeErrorsNames)
    if (c.value == mode) return std::string(c.name);
  return "strict";
}

namespace {

// The first `limit` rows of a fully read file (.npy and models are read whole:
// their matrix is one block).
Embeddings firstRows(Embeddings e, std::uint64_t limit) {
  if (limit == 0 || limit >= e.size()) return e;
  const auto n = static_cast<std::ptrdiff_t>(limit);
  std::vector<std::string> words(e.words().begin(), e.words().begin() + n);
  std::vector<std::int64_t> counts;
  if (!e.counts().empty()) counts.assign(e.counts().begin(), e.counts().begin() + n);
  MatrixF m = e.vectors().topRows(n);
  return Embeddings(std::move(words), std::move(m), std::move(counts));
}

}  // namespace

namespace {

// A posvec subword model's n-gram settings, from its stored training config, checked
// against its rows.
struct NgramSettings {
  int minn;
  int maxn;
  std::uint32_t bucket;
};
NgramSettings ngramSettingsOf(const ModelState& m, const std::string& path) {
  auto setting = [&](const std::string& key) -> std::int64_t {
    const std::string at = "\n" + key + "=";
    const std::size_t p = ("\n" + m.config).find(at);
    if (p == std::string::npos)
      throw FormatError(inQuotes(path) + ": posvec model has n-gram rows but no '" + key +
                        "' setting (corrupt file?)");
    try {
      return std::stoll(m.config.substr(p + at.size() - 1));
    } catch (const std::exception&) {
      throw FormatError(inQuotes(path) + ": posvec model's '" + key +
                        "' setting is not a number (corrupt file?)");
    }
  };
  const auto minn = static_cast<int>(setting("minn"));
  const auto maxn = static_cast<int>(setting("maxn"));
  const auto bucket = static_cast<std::uint64_t>(setting("bucket"));
  const auto v = static_cast<std::int64_t>(m.words.size());
  if (static_cast<std::uint64_t>(m.input.rows()) != static_cast<std::uint64_t>(v) + bucket)
    throw FormatError(inQuotes(path) + ": posvec model has " +
                      std::to_string(m.input.rows() - v) + " n-gram rows but its settings say " +
                      std::to_string(bucket) + " (corrupt file?)");
  return {minn, maxn, static_cast<std::uint32_t>(bucket)};
}

// A subword model's word vectors: each the mean of its row and its n-gram rows,
// as fastText's .vec holds.
MatrixF composedSubwordVectors(const ModelState& m, const std::string& path) {
  const NgramSettings s = ngramSettingsOf(m, path);
  const auto v = static_cast<std::int64_t>(m.words.size());
  MatrixF out(v, m.input.cols());
  for (std::int64_t w = 0; w < v; ++w) {
    std::vector<std::int64_t> rows =
        ngramRows(m.words[static_cast<std::size_t>(w)], s.minn, s.maxn, s.bucket, v);
    Eigen::RowVectorXf sum = m.input.row(w);
    for (const std::int64_t r : rows) sum += m.input.row(r);
    // Scaled by the reciprocal, as the trainer (and fastText) compose.
    out.row(w) = sum * (1.0f / static_cast<float>(rows.size() + 1));
  }
  return out;
}

}  // namespace

Embeddings detail::loadVectorsAs(const std::string& path, VectorFormat format,
                                 const LoadOptions& options) {
  if (options.noHeader && format != VectorFormat::Word2VecText &&
      format != VectorFormat::Word2VecBinary)
    throw ConfigError(inQuotes(path) + " is " +
                      (format == VectorFormat::Npy ? "an .npy file" : "a posvec model") +
                      "; no-header applies to word2vec text files only");
  switch (format) {
    case VectorFormat::Word2VecBinary:
      return loadWord2VecBinary(path, options);
    case VectorFormat::Word2VecText:
      return loadWord2VecText(path, options);
    case VectorFormat::Npy:
      return firstRows(loadNpy(path), options.limit);
    case VectorFormat::Model: {
      ModelState m = readModel(path, false);
      if (static_cast<std::size_t>(m.input.rows()) > m.words.size())
        m.input = composedSubwordVectors(m, path);
      try {
        return firstRows(Embeddings(std::move(m.words), std::move(m.input), std::move(m.counts)),
                         options.limit);
      } catch (const InputError& e) {
        throw FormatError(inQuotes(path) + ": " + e.what());
      }
    }
    case VectorFormat::Auto:
      break;
  }
  throw FormatError(inQuotes(path) + ": unknown vector format");
}

std::optional<SubwordModel> detail::posvecSubwordModel(const std::string& path) {
  // Only a file that starts as a posvec model (anything else, unreadable files
  // included, is left to loadVectors and its messages).
  {
    std::ifstream in(path, std::ios::binary);
    char magic[8] = {};
    if (!in.read(magic, sizeof magic) || std::memcmp(magic, kModelMagic, sizeof magic) != 0)
      return std::nullopt;
  }
  ModelState m = readModel(path, false);
  if (static_cast<std::size_t>(m.input.rows()) <= m.words.size()) return std::nullopt;
  const NgramSettings s = ngramSettingsOf(m, path);
  try {
    return SubwordModel::fromRows(std::move(m.words), std::move(m.counts), std::move(m.input),
                                  s.minn, s.maxn, s.bucket);
  } catch (const FormatError& e) {
    throw FormatError(inQuotes(path) + ": " + e.what() + " (corrupt file?)");
  }
}

Embeddings loadVectors(const std::string& path, const LoadOptions& options,
                       VectorFormat* detected) {
  VectorFormat format;
  if (options.noHeader) {
    // No header to detect from: text, unless the file is plainly one of the others.
    ChunkReader r(path, 64);
    const std::size_t n = r.ensure(8);
    refuseForeignFormat(r.data(), n, path);
    format = n >= 8 && std::memcmp(r.data(), kModelMagic, 8) == 0 ? VectorFormat::Model
             : n >= 6 && std::memcmp(r.data(), kNpyMagic, 6) == 0 ? VectorFormat::Npy
                                                                   : VectorFormat::Word2VecText;
  } else {
    format = detectFormat(path);
  }
  if (detected) *detected = format;
  return detail::loadVectorsAs(path, format, options);
}

}  // namespace posvec
