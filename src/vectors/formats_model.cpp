// posvec's own full-state model: magic "POSVECM1", a version, little-endian
// fixed-width fields, every length checked against the file size before anything
// is allocated.
#include <limits>
#include <unordered_set>

#include "formats_detail.hpp"
#include "posvec/io.hpp"

namespace posvec {

namespace detail {

namespace {

// Version 1: a model at an epoch boundary. Version 2 adds, after the output
// weights, where each thread was inside an unfinished epoch (a checkpoint or an
// interrupt); the header's last word holds the thread count. A model at an epoch
// boundary is still written as version 1, so older posvec reads it.
constexpr std::uint32_t kModelVersion = 1;
constexpr std::uint32_t kModelVersionPartial = 2;
constexpr std::uint64_t kModelHeaderBytes = 72;
constexpr std::uint64_t kShardBytes = 40;
// Training runs at most kMaxTrainThreads threads, so no posvec wrote more positions;
// a file that records more is corrupt (and libgomp cannot start that many threads).
constexpr std::uint32_t kMaxShards = kMaxTrainThreads;

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

}  // namespace

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
  if (h.version != kModelVersion && h.version != kModelVersionPartial)
    throw FormatError(inQuotes(path) + ": posvec model version " + std::to_string(h.version) +
                      " is not supported (this posvec reads versions 1 and 2)");
  const std::uint32_t shards = get<std::uint32_t>(raw + 68);
  if (h.flags != 0 || (h.version == kModelVersion && shards != 0))
    throw FormatError(inQuotes(path) + ": posvec model header has unknown flags (corrupt file?)");
  if (h.version == kModelVersionPartial && (shards == 0 || shards > kMaxShards))
    throw FormatError(inQuotes(path) + ": posvec model says " + std::to_string(shards) +
                      " threads were inside an epoch; training runs at most " +
                      std::to_string(kMaxShards) + " (corrupt file?)");
  if (h.epochsDone < 0)
    throw FormatError(inQuotes(path) + ": posvec model says " + std::to_string(h.epochsDone) +
                      " epochs done (corrupt file?)");
  if (h.words == 0 || h.dim == 0)
    throw FormatError(inQuotes(path) + ": posvec model has " + std::to_string(h.words) +
                      " words of dimension " + std::to_string(h.dim) +
                      "; a model needs at least one word and a dimension of at least 1 "
                      "(corrupt file?)");
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
  if (shards > 0) need = addChecked(need, 16 + kShardBytes * shards, overflow);
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
    if (shards > 0) {
      std::vector<unsigned char> b(16 + kShardBytes * shards);
      r.read(reinterpret_cast<char*>(b.data()), b.size());
      m.partial.words = get<std::int64_t>(b.data());
      m.partial.streamSize = get<std::int64_t>(b.data() + 8);
      for (std::uint32_t t = 0; t < shards; ++t) {
        const unsigned char* q = b.data() + 16 + kShardBytes * t;
        ShardProgress s;
        s.position = get<std::int64_t>(q);
        s.end = get<std::int64_t>(q + 8);
        s.rng = get<std::uint64_t>(q + 16);
        s.loss = get<double>(q + 24);
        s.predictions = get<std::int64_t>(q + 32);
        if (s.position < 0 || s.position > s.end || s.end > m.partial.streamSize ||
            s.predictions < 0 || !std::isfinite(s.loss) || m.partial.words < 0)
          throw FormatError(inQuotes(path) + ": the position of thread " + std::to_string(t + 1) +
                            " inside the unfinished epoch is impossible (corrupt file?)");
        m.partial.shards.push_back(s);
      }
    }
  }
  return m;
}

}  // namespace detail

namespace {
using namespace detail;
}  // namespace

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
        std::any_of(w.begin(), w.end(), isAsciiSpace))
      throw InputError("cannot save model " + inQuotes(path) + ": word " + std::to_string(i + 1) +
                       " ('" + shown(w) +
                       "') is empty, too long, not UTF-8 or contains whitespace");
    wordBytes += w.size();
  }
  for (std::size_t i = 0; i < v; ++i)
    if (model.counts.size() == v && model.counts[i] < 0)
      throw InputError("cannot save model " + inQuotes(path) + ": negative count for '" +
                       shown(model.words[i]) + "'");
  const std::size_t shards = model.partial.shards.size();
  if (shards > kMaxShards)
    throw InputError("cannot save model " + inQuotes(path) + ": " + std::to_string(shards) +
                     " threads inside an epoch (at most " + std::to_string(kMaxShards) + ")");
  writeToPathOrStdout(path, [&](std::ostream& out) {
    std::string buf(kModelMagic, 8);
    put(buf, shards > 0 ? kModelVersionPartial : kModelVersion);
    put(buf, std::uint32_t{0});
    put(buf, v);
    put(buf, d);
    put(buf, outRows);
    put(buf, static_cast<std::uint64_t>(model.config.size()));
    put(buf, wordBytes);
    put(buf, static_cast<std::uint64_t>(model.epochLosses.size()));
    put(buf, model.epochsDone);
    put(buf, static_cast<std::uint32_t>(shards));
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
    if (shards > 0) {
      std::string tail;
      put(tail, model.partial.words);
      put(tail, model.partial.streamSize);
      for (const ShardProgress& s : model.partial.shards) {
        put(tail, s.position);
        put(tail, s.end);
        put(tail, s.rng);
        put(tail, s.loss);
        put(tail, s.predictions);
      }
      out.write(tail.data(), static_cast<std::streamsize>(tail.size()));
    }
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

}  // namespace posvec
