// Subcommands `pe` (write the sinusoidal position-encoding matrix) and `encode`
// (a sentence's embedding rows × scale + PE[start + t]), with the tsv / json /
// npy writers they share.
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cli.hpp"
#include "posvec/error.hpp"
#include "posvec/io.hpp"
#include "posvec/positional.hpp"

namespace posvec::cli {
namespace {

static_assert(std::endian::native == std::endian::little, "the .npy writer assumes little endian");

enum class OutFormat { Tsv, Json, Npy };

// "auto" follows the output's extension (.npy, .json), anything else is tsv.
OutFormat resolveFormat(const std::string& name, const std::string& output) {
  if (name == "tsv") return OutFormat::Tsv;
  if (name == "json") return OutFormat::Json;
  if (name == "npy") return OutFormat::Npy;
  if (name == "auto") {
    auto endsWith = [&](const char* ext) {
      const std::size_t n = std::strlen(ext);
      return output.size() >= n && output.compare(output.size() - n, n, ext) == 0;
    };
    if (endsWith(".npy")) return OutFormat::Npy;
    if (endsWith(".json")) return OutFormat::Json;
    return OutFormat::Tsv;
  }
  throw ConfigError("unknown --format '" + name + "' (choose auto, tsv, json or npy)");
}

bool parsePrecision(const std::string& name) {  // true: double
  if (name == "float") return false;
  if (name == "double") return true;
  throw ConfigError("unknown --precision '" + name + "' (choose float or double)");
}

// Writes to `path` atomically, or streams to stdout for "-".
void emit(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path.empty() || path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw IoError("cannot write to standard output");
    return;
  }
  writeFileAtomically(path, write);
}

// Text form of one value: %.9g for float, %.17g for double (both round-trip);
// `shortest` gives the shortest round-trip form instead (JSON).
template <typename T>
void appendNumber(std::string& buf, T v, bool shortest) {
  char tmp[40];
  const auto res = shortest ? std::to_chars(tmp, tmp + sizeof tmp, v)
                            : std::to_chars(tmp, tmp + sizeof tmp, v, std::chars_format::general,
                                            std::is_same_v<T, float> ? 9 : 17);
  buf.append(tmp, res.ptr);
}

// Rows of a row-major matrix, one per line, tab-separated.
template <typename T>
void writeTsvRows(std::ostream& out, const T* data, std::size_t rows, std::size_t cols) {
  std::string buf;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      if (c) buf += '\t';
      appendNumber(buf, data[r * cols + c], false);
    }
    buf += '\n';
    if (buf.size() > (1u << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

// A JSON array of row arrays.
template <typename T>
void writeJsonRows(std::ostream& out, const T* data, std::size_t rows, std::size_t cols,
                   const std::string& indent) {
  std::string buf = "[";
  for (std::size_t r = 0; r < rows; ++r) {
    buf += r ? ",\n" + indent + " [" : "\n" + indent + " [";
    for (std::size_t c = 0; c < cols; ++c) {
      if (c) buf += ", ";
      appendNumber(buf, data[r * cols + c], true);
    }
    buf += ']';
    if (buf.size() > (1u << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  buf += rows ? "\n" + indent + "]" : "]";
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

std::string jsonString(const std::string& s) {
  std::string q = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      q += '\\';
      q += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char tmp[8];
      std::snprintf(tmp, sizeof tmp, "\\u%04x", ch);
      q += tmp;
    } else {
      q += static_cast<char>(ch);
    }
  }
  return q + "\"";
}

// NumPy format v1.0: magic, version, little-endian header length, a Python dict
// literal padded with spaces to a 64-byte boundary, then the data in C order.
template <typename T>
void writeNpy(std::ostream& out, const T* data, const std::vector<std::size_t>& shape) {
  std::string dims;
  std::size_t count = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
    if (i + 1 < shape.size()) dims += ' ';
    count *= shape[i];
  }
  std::string header = std::string("{'descr': '") + (std::is_same_v<T, float> ? "<f4" : "<f8") +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t unpadded = 10 + header.size() + 1;  // magic+version+len, dict, '\n'
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  const auto len = static_cast<std::uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  const char lenBytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(lenBytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * sizeof(T)));
}

// ---- pe --------------------------------------------------------------------

struct PeOptions {
  std::int64_t dim = 512;  // signed, so that a negative value gets a clear message
  std::int64_t len = 0;
  std::int64_t start = 0;
  double base = 10000.0;
  std::string encoding = "interleaved";
  std::string format = "auto";
  std::string precision = "float";
  std::string output = "-";
  bool json = false;
};

template <typename M>
void writeMatrix(const PeOptions& o, OutFormat fmt, const M& m) {
  const auto rows = static_cast<std::size_t>(m.rows()), cols = static_cast<std::size_t>(m.cols());
  emit(o.output, [&](std::ostream& out) {
    switch (fmt) {
      case OutFormat::Tsv:
        writeTsvRows(out, m.data(), rows, cols);
        break;
      case OutFormat::Npy:
        writeNpy(out, m.data(), {rows, cols});
        break;
      case OutFormat::Json: {
        std::string head = "{\"encoding\": " + jsonString(o.encoding) +
                           ", \"dim\": " + std::to_string(o.dim) + ", \"base\": ";
        appendNumber(head, o.base, true);
        head += ", \"start\": " + std::to_string(o.start) + ", \"len\": " + std::to_string(o.len) +
                ", \"precision\": " + jsonString(o.precision) + ",\n \"rows\": ";
        out << head;
        writeJsonRows(out, m.data(), rows, cols, " ");
        out << "}\n";
        break;
      }
    }
  });
}

std::size_t nonNegative(std::int64_t v, const char* what) {
  if (v < 0) throw ConfigError(std::string(what) + " (got " + std::to_string(v) + ")");
  return static_cast<std::size_t>(v);
}

void runPe(const PeOptions& o) {
  PositionalOptions po;
  po.dim = nonNegative(o.dim, "d_model (--dim) must be a positive even number");
  po.base = o.base;
  po.encoding = parseEncoding(o.encoding);
  const OutFormat fmt = o.json ? OutFormat::Json : resolveFormat(o.format, o.output);
  const bool dbl = parsePrecision(o.precision);
  const PositionalEncoder enc(po);
  if (dbl)
    writeMatrix(
        o, fmt,
        enc.matrix(o.start,
                   nonNegative(o.len, "the number of positions (--len) must be at least 1")));
  else
    writeMatrix(
        o, fmt,
        enc.matrixFloat(o.start,
                        nonNegative(o.len, "the number of positions (--len) must be at least 1")));
}

Registrar regPe(40, [](CLI::App& app) {
  auto opts = std::make_shared<PeOptions>();
  auto* sub = app.add_subcommand(
      "pe", "Write the sinusoidal position-encoding matrix (len rows x dim columns)");
  sub->add_option("--len,-n", opts->len, "Number of positions (rows)")->required();
  sub->add_option("--dim,-d", opts->dim, "d_model (columns); must be even")->capture_default_str();
  sub->add_option("--start", opts->start, "First position")->capture_default_str();
  sub->add_option("--base", opts->base, "Frequency base")->capture_default_str();
  sub->add_option("--encoding", opts->encoding,
                  "interleaved (Vaswani et al.), concatenated (sines then cosines), book (the "
                  "study's loop, exponent 2i/d at even column i), tutorial (2i/d for sin, "
                  "2(i+1)/d for cos)")
      ->capture_default_str();
  sub->add_option("--format", opts->format,
                  "auto (from the -o extension: .npy, .json, else tsv), tsv, json or npy")
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Same as --format json");
  sub->add_option("--precision", opts->precision, "float (float32) or double (float64)")
      ->capture_default_str();
  sub->add_option("-o,--output", opts->output, "Output file ('-' is stdout)")
      ->capture_default_str();
  sub->callback([opts] { runPe(*opts); });
});

}  // namespace
}  // namespace posvec::cli
