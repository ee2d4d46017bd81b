// Subcommands `pe` (write the sinusoidal position-encoding matrix) and `encode`
// (a sentence's embedding rows × scale + PE[start + t]), with the tsv / json /
// npy writers they share.
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "posvec/attention.hpp"
#include "posvec/embeddings.hpp"
#include "posvec/error.hpp"
#include "posvec/formats.hpp"
#include "posvec/io.hpp"
#include "posvec/phrases.hpp"
#include "posvec/positional.hpp"
#include "posvec/tokenizer.hpp"
#include "posvec/word_lookup.hpp"

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

void emit(const std::string& path, const std::function<void(std::ostream&)>& write) {
  writeToPathOrStdout(path, write);
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

// ---- pe --------------------------------------------------------------------

// PositionalEncoder's meanings in error messages, with the flags of pe and encode.
struct PeOptions {
  // signed, so that a negative value gets a clear message
  std::int64_t dim = static_cast<std::int64_t>(PositionalOptions{}.dim);
  std::int64_t len = 0;
  std::int64_t start = 0;
  double base = PositionalOptions{}.base;
  std::string encoding = encodingName(PositionalOptions{}.encoding);
  std::string format = "auto";
  std::string precision = "float";
  std::string output = "-";
  bool json = false;
  bool lenGiven = false;
  std::vector<std::string> cosines;  // "P,Q": print cos(PE[P], PE[Q]) instead of the matrix
};

// "P,Q" -> two positions >= 0.
std::pair<std::int64_t, std::int64_t> parsePair(const std::string& text) {
  const std::size_t comma = text.find(',');
  std::int64_t v[2] = {-1, -1};
  bool ok = comma != std::string::npos;
  for (int i = 0; ok && i < 2; ++i) {
    const char* first = text.data() + (i == 0 ? 0 : comma + 1);
    const char* last = text.data() + (i == 0 ? comma : text.size());
    const auto [ptr, ec] = std::from_chars(first, last, v[i]);
    ok = first != last && ec == std::errc() && ptr == last && v[i] >= 0;
  }
  if (!ok) throw ConfigError("invalid --cosine '" + text + "' (use two positions like 2,10)");
  return {v[0], v[1]};
}

void writeCosines(const PeOptions& o, OutFormat fmt, const PositionalOptions& po) {
  // The options' checks (and the tables' memory) before the pairs, as building the
  // encoder first did; the tables themselves only when there is work to do.
  checkPositionalMemory(po, 0, 1, sizeof(double));
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  for (const std::string& c : o.cosines) pairs.push_back(parsePair(c));
  std::string text;
  if (fmt == OutFormat::Npy) throw ConfigError("--cosine prints numbers: use --format tsv or json");
  if (globals().parseOnly) return;
  const PositionalEncoder enc(po);
  if (fmt == OutFormat::Json) {
    text = "{\"encoding\": " + jsonString(o.encoding) + ", \"dim\": " + std::to_string(o.dim) +
           ", \"base\": ";
    appendNumber(text, o.base, true);
    text += ", \"cosines\": [";
  }
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto [p, q] = pairs[i];
    const double c = enc.similarity(p, q);
    if (fmt == OutFormat::Json) {
      text += std::string(i ? ", " : "") + "{\"p\": " + std::to_string(p) +
              ", \"q\": " + std::to_string(q) + ", \"cosine\": ";
      appendNumber(text, c, true);
      text += "}";
    } else {
      text += std::to_string(p) + '\t' + std::to_string(q) + '\t';
      appendNumber(text, c, false);
      text += '\n';
    }
  }
  if (fmt == OutFormat::Json) text += "]}\n";
  writeOutput(o.output, text);
}

template <typename M>
void writeMatrix(const PeOptions& o, OutFormat fmt, const M& m) {
  const auto rows = static_cast<std::size_t>(m.rows()), cols = static_cast<std::size_t>(m.cols());
  emit(o.output, [&](std::ostream& out) {
    switch (fmt) {
      case OutFormat::Tsv:
        writeTsvRows(out, m.data(), rows, cols);
        break;
      case OutFormat::Npy:
        posvec::writeNpyArray(out, m.data(), {rows, cols});
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

// `what` is the message after the flag ("--dim: d_model must be ...").
std::size_t nonNegative(std::int64_t v, const char* flag, const char* what) {
  if (v < 0)
    throw ConfigError(std::string(flag) + ": " + what + " (got " + std::to_string(v) + ")");
  return static_cast<std::size_t>(v);
}

void runPe(const PeOptions& o) {
  PositionalOptions po;
  po.dim = nonNegative(o.dim, "--dim", "d_model must be a positive even number");
  po.base = o.base;
  po.encoding = parseEncoding(o.encoding);
  const OutFormat fmt = o.json ? OutFormat::Json : resolveFormat(o.format, o.output);
  const bool dbl = parsePrecision(o.precision);
  if (!o.cosines.empty()) return writeCosines(o, fmt, po);
  if (o.len == 0 && !o.lenGiven)
    throw ConfigError("--len is required (the number of positions), unless --cosine is given");
  const std::size_t len = nonNegative(o.len, "--len", "the number of positions must be at least 1");
  // Every size first: a request that cannot fit is refused before the tables are built.
  checkPositionalMemory(po, o.start, len, dbl ? sizeof(double) : sizeof(float));
  if (globals().parseOnly) return;  // checked: building the tables is work
  const PositionalEncoder enc(po);
  if (dbl)
    writeMatrix(o, fmt, enc.matrix(o.start, len));
  else
    writeMatrix(o, fmt, enc.matrixFloat(o.start, len));
}

Registrar regPe(40, [](CLI::App& app) {
  auto opts = std::make_shared<PeOptions>();
  auto* sub = app.add_subcommand(
      "pe", "Write the sinusoidal position-encoding matrix (len rows x dim columns)");
  auto* len = sub->add_option("--len,-n", opts->len, "Number of positions (rows); required");
  sub->add_option("--dim,-d", opts->dim, "d_model (columns); must be even")->capture_default_str();
  sub->add_option("--start", opts->start, "First position")->capture_default_str();
  sub->add_option("--base", opts->base, "Frequency base")->capture_default_str();
  sub->add_option("--encoding", opts->encoding,
                  "interleaved (Vaswani et al.), concatenated (sines then cosines), book (the "
                  "study's loop, exponent 2i/d at even column i), tutorial (2i/d for sin, "
                  "2(i+1)/d for cos), timescale ([sin | cos] halves, timescales base^(k/(d/2-1)): "
                  "tensor2tensor, fairseq, Marian), fairseq (timescale with a zero row at "
                  "padding index 1; encode starts at position 2)")
      ->capture_default_str();
  sub->add_option("--format", opts->format,
                  "auto (from the -o extension: .npy, .json, else tsv), tsv, json or npy")
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Same as --format json");
  sub->add_option("--precision", opts->precision, "float (float32) or double (float64)")
      ->capture_default_str();
  sub->add_option("-o,--output", opts->output, "Output file ('-' is stdout)")
      ->capture_default_str();
  sub->add_option("--cosine", opts->cosines,
                  "P,Q: print cos(PE[P], PE[Q]) (computed in double) instead of the matrix; "
                  "repeatable")
      ->allow_extra_args(false);
  sub->callback([opts, len] {
    opts->lenGiven = len->count() > 0;
    runPe(*opts);
  });
});

// ---- encode ----------------------------------------------------------------

struct EncodeOptions {
  std::string vectors;
  LoadOptions load;
  std::vector<std::string> sentences;
  std::string input;  // one sentence per line
  std::int64_t start = 0;
  std::string scale = "sqrt";
  std::string unk = "error";
  std::string phrases;  // --phrases TABLE
  double base = PositionalOptions{}.base;
  std::string encoding = encodingName(PositionalOptions{}.encoding);
  bool padEncoding = false;
  bool keepCase = false;
  bool noPunctuation = false;
  std::string format = "auto";
  std::string precision = "float";
  std::string output = "-";
  bool json = false;
};

// One sequence: the library's lookup (tokens as shown, "<unk>" for --unk token) and its rows.
using Sequence = LookedUp;

std::vector<Sequence> lookUp(const EncodeOptions& o, const LookupVectors& emb, UnknownWords unk) {
  std::vector<std::string> texts = cli::sentencesOf(o.sentences, o.input);
  if (texts.empty())
    throw ConfigError(
        "nothing to encode: give --sentence TEXT or --input FILE (one sentence a line)");

  TokenizerOptions to;
  to.lowercase = !o.keepCase;
  to.keepPunctuation = !o.noPunctuation;
  const Tokenizer tokenizer(to);
  const std::optional<Phrases> phrases =
      o.phrases.empty() ? std::nullopt : std::optional<Phrases>(readPhraseTable(o.phrases));
  std::vector<Sequence> out;
  for (std::size_t s = 0; s < texts.size(); ++s) {
    // The text may hold several sentences for ICU: one sequence of all their tokens.
    const Sentence tokens = cli::textTokens(tokenizer, texts[s], phrases ? &*phrases : nullptr);
    if (tokens.empty())
      throw InputError("sentence " + std::to_string(s + 1) + " has no tokens to encode");
    // The same lookup and messages as `posvec attend`, prefixed with the sentence number.
    try {
      out.push_back(lookUpTokens(emb, tokens, unk));
    } catch (const InputError& e) {
      throw InputError("sentence " + std::to_string(s + 1) + ": " + cli::spelledMessage(e));
    }
  }
  return out;
}

template <typename T>
void writeEncoded(const EncodeOptions& o, OutFormat fmt, const std::vector<Sequence>& seqs,
                  const std::vector<MatrixD>& encoded, std::size_t dim, double factor) {
  using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::vector<M> mats;
  for (const MatrixD& m : encoded) mats.push_back(m.cast<T>());
  const std::size_t rows = mats.empty() ? 0 : static_cast<std::size_t>(mats[0].rows());
  emit(o.output, [&](std::ostream& out) {
    switch (fmt) {
      case OutFormat::Tsv:
        // Sequences separated by an empty line (each padded to the longest).
        for (std::size_t i = 0; i < mats.size(); ++i) {
          if (i) out << '\n';
          writeTsvRows(out, mats[i].data(), rows, dim);
        }
        break;
      case OutFormat::Npy:
        if (mats.size() == 1) {
          posvec::writeNpyArray(out, mats[0].data(), {rows, dim});
        } else {
          std::vector<T> all;
          all.reserve(mats.size() * rows * dim);
          for (const M& m : mats) all.insert(all.end(), m.data(), m.data() + m.size());
          posvec::writeNpyArray(out, all.data(), {mats.size(), rows, dim});
        }
        break;
      case OutFormat::Json: {
        std::string head = "{\"encoding\": " + jsonString(o.encoding) +
                           ", \"dim\": " + std::to_string(dim) + ", \"base\": ";
        appendNumber(head, o.base, true);
        head += ", \"start\": " + std::to_string(o.start) + ", \"scale\": ";
        appendNumber(head, factor, true);
        head += ", \"precision\": " + jsonString(o.precision) +
                ", \"padded_length\": " + std::to_string(rows) +
                ", \"padding_encoded\": " + (o.padEncoding ? "true" : "false") +
                ",\n \"sequences\": [";
        out << head;
        for (std::size_t i = 0; i < mats.size(); ++i) {
          std::string tokens = "[";
          for (std::size_t t = 0; t < seqs[i].tokens.size(); ++t)
            tokens += (t ? ", " : "") + jsonString(seqs[i].tokens[t]);
          out << (i ? ",\n  " : "\n  ") << "{\"tokens\": " << tokens
              << "], \"length\": " << seqs[i].tokens.size() << ",\n   \"rows\": ";
          writeJsonRows(out, mats[i].data(), rows, dim, "   ");
          out << "}";
        }
        out << "\n ]}\n";
        break;
      }
    }
  });
}

void runEncode(const EncodeOptions& o) {
  // Validate the cheap options before loading a large vectors file.
  const Scale scale = Scale::parse(o.scale);
  const UnknownWords unk = parseUnknownWords(o.unk);
  const OutFormat fmt = o.json ? OutFormat::Json : resolveFormat(o.format, o.output);
  const bool dbl = parsePrecision(o.precision);
  refuseOutputOverInput(o.output, "output", {o.vectors, o.input});
  PositionalOptions po;
  po.base = o.base;
  po.encoding = parseEncoding(o.encoding);
  if (o.vectors == "-" && o.input == "-")
    throw ConfigError(
        "only one input can be '-' (standard input): VECTORS and --input are both '-'");
  if (globals().parseOnly) return;

  const LookupVectors emb = loadLookupVectors(seekableInput(o.vectors), o.load);
  po.dim = emb.vectors.dim();
  if (po.dim % 2 != 0)
    throw ConfigError("the vectors in '" + o.vectors + "' have " + std::to_string(po.dim) +
                      " dimensions; the position encoding needs an even d_model (each sine "
                      "column is paired with a cosine column)");
  const PositionalEncoder enc(po);
  const std::vector<Sequence> seqs = lookUp(o, emb, unk);
  std::vector<std::string> built;
  for (const Sequence& s : seqs)
    for (std::size_t t : s.built) addBuiltWord(built, s.tokens[t]);
  noteBuiltWords(built);
  std::vector<MatrixF> batch;
  for (const Sequence& s : seqs) batch.push_back(s.rows);
  const std::vector<MatrixD> encoded = enc.encodeBatch(batch, o.start, scale, o.padEncoding);
  const double factor = scale.factor(po.dim);
  if (dbl)
    writeEncoded<double>(o, fmt, seqs, encoded, po.dim, factor);
  else
    writeEncoded<float>(o, fmt, seqs, encoded, po.dim, factor);
}

Registrar regEncode(41, [](CLI::App& app) {
  auto opts = std::make_shared<EncodeOptions>();
  auto* sub = app.add_subcommand(
      "encode", "Transformer input for a sentence: each token's vector x scale + PE[start + t]");
  sub->add_option("vectors", opts->vectors, kVectorsHelp)->required();
  addVectorLoadOptions(sub, opts->load);
  sub->add_option("-s,--sentence", opts->sentences,
                  "Text to encode (tokenized like the corpus); repeat for a batch")
      ->allow_extra_args(false);
  sub->add_option("-i,--input", opts->input, "File with one sentence a line (a batch)");
  cli::addPhrasesOption(sub, opts->phrases);
  sub->add_option("--start", opts->start, "Position of the first token")->capture_default_str();
  sub->add_option("--scale", opts->scale,
                  "Embedding scale: sqrt (sqrt(d_model)), none, or a number")
      ->capture_default_str();
  sub->add_option("--unk", opts->unk,
                  "Unknown words: error, zero (a zero vector, so the row is just its encoding) or "
                  "token (the mean vector, shown as <unk>); a fastText .bin builds them from "
                  "character n-grams instead")
      ->capture_default_str();
  sub->add_option("--base", opts->base, "Frequency base")->capture_default_str();
  sub->add_option("--encoding", opts->encoding,
                  "interleaved, concatenated, book, tutorial, timescale or fairseq (see posvec pe "
                  "--help)")
      ->capture_default_str();
  sub->add_flag("--pad-encoding", opts->padEncoding,
                "In a batch, add PE[start + t] to padding rows too (default: padding stays zero)");
  sub->add_flag("--keep-case", opts->keepCase, "Do not lowercase the text before lookup");
  sub->add_flag("--no-punct", opts->noPunctuation,
                "Drop punctuation tokens (for vectors trained without them)");
  // The spelling of earlier versions, kept working but not shown.
  sub->add_flag("--no-punctuation", opts->noPunctuation)->group("");
  sub->add_option("--format", opts->format,
                  "auto (from the -o extension: .npy, .json, else tsv), tsv, json or npy; a batch "
                  "is padded to its longest sentence (npy: batch x len x dim)")
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Same as --format json");
  sub->add_option("--precision", opts->precision, "float (float32) or double (float64)")
      ->capture_default_str();
  sub->add_option("-o,--output", opts->output, "Output file ('-' is stdout)")
      ->capture_default_str();
  sub->callback([opts] { runEncode(*opts); });
});

}  // namespace
}  // namespace posvec::cli
