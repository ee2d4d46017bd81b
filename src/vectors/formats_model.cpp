// posvec's own full-state model: magic "POSVECM1", a version, little-endian
// fixed-width fields, every length checked against the file size before anything
// is allocated.
#include <algorithm>
#include <limits>
#include <streambuf>
#include <unordered_set>

#include "formats_detail.hpp"
#include "huge_pages.hpp"
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

// Header flag: the file ends with an 8-byte ModelChecksum of every byte before
// it. Written since the checksum came; files without it still load.
constexpr std::uint32_t kFlagChecksum = 1;
// Header flag: 8 more header bytes follow, the input rows after the words' (the
// n-gram bucket rows of a subword model, fastText's layout); the input matrix
// has words + that many rows.
constexpr std::uint32_t kFlagExtraRows = 2;

// Feeds every byte written through it to a ModelChecksum, then on to `to`.
class ChecksumBuf : public std::streambuf {
 public:
  explicit ChecksumBuf(std::streambuf* to) : to_(to) {}
  ModelChecksum sum;

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    sum.update(s, static_cast<std::size_t>(n));
    return to_->sputn(s, n);
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    sum.update(&ch, 1);
    return to_->sputc(ch);
  }
  int sync() override { return to_->pubsync(); }

 private:
  std::streambuf* to_;
};

struct ModelHeader {
  std::uint32_t version = 0, flags = 0;
  std::uint64_t words = 0, dim = 0, outputRows = 0, configBytes = 0, wordBytes = 0, losses = 0;
  std::int32_t epochsDone = 0;
  std::uint32_t shards = 0;  // version 2: threads inside the unfinished epoch
  std::uint64_t extraRows = 0;  // kFlagExtraRows: input rows after the words'
};

template <typename T>
T get(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return fromLittle(v);
}

// The model file as readModel reads it: every byte before the trailer passes
// through the checksum.
struct SummedReader {
  ChunkReader& r;
  ModelChecksum sum;
  std::size_t take(void* dst, std::uint64_t n) {
    const std::size_t got = r.read(static_cast<char*>(dst), static_cast<std::size_t>(n));
    sum.update(static_cast<const char*>(dst), got);
    return got;
  }
};

// The header, checked: a known version and flags, sane counts, and lengths that
// add up to the file's size exactly (before anything is allocated).
ModelHeader readHeader(SummedReader& in, const std::string& path) {
  ChunkReader& r = in.r;
  unsigned char raw[kModelHeaderBytes];
  if (in.take(raw, 8) != 8 || std::memcmp(raw, kModelMagic, 8) != 0)
    throw FormatError(inQuotes(path) +
                      ": not a posvec model file (bad magic; expected 'POSVECM1')");
  if (in.take(raw + 8, kModelHeaderBytes - 8) != kModelHeaderBytes - 8)
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
  h.shards = get<std::uint32_t>(raw + 68);
  if ((h.flags & ~(kFlagChecksum | kFlagExtraRows)) != 0 || (h.version == kModelVersion && h.shards != 0))
    throw FormatError(inQuotes(path) + ": posvec model header has unknown flags (corrupt file?)");
  if (h.version == kModelVersionPartial && (h.shards == 0 || h.shards > kMaxShards))
    throw FormatError(inQuotes(path) + ": posvec model says " + std::to_string(h.shards) +
                      " threads were inside an epoch; training runs at most " +
                      std::to_string(kMaxShards) + " (corrupt file?)");
  if ((h.flags & kFlagExtraRows) != 0) {
    unsigned char extra[8];
    if (in.take(extra, 8) != 8)
      throw FormatError(inQuotes(path) + ": posvec model file is truncated inside its header");
    h.extraRows = get<std::uint64_t>(extra);
    if (h.extraRows == 0 || h.extraRows > std::numeric_limits<std::uint32_t>::max())
      throw FormatError(inQuotes(path) + ": posvec model says it has " +
                        std::to_string(h.extraRows) + " n-gram rows (corrupt file?)");
  }
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
  std::uint64_t need = kModelHeaderBytes + ((h.flags & kFlagExtraRows) != 0 ? 8 : 0);
  need = addChecked(need, h.configBytes, overflow);
  need = addChecked(need, mulChecked(h.words, 4 + 8, overflow), overflow);
  need = addChecked(need, h.wordBytes, overflow);
  need = addChecked(need, mulChecked(h.losses, 8, overflow), overflow);
  need = addChecked(
      need,
      mulChecked(mulChecked(addChecked(addChecked(h.words, h.extraRows, overflow), h.outputRows,
                                       overflow),
                            h.dim, overflow),
                 4, overflow),
      overflow);
  if (h.shards > 0) need = addChecked(need, 16 + kShardBytes * h.shards, overflow);
  if ((h.flags & kFlagChecksum) != 0) need = addChecked(need, 8, overflow);
  if (overflow || need != r.fileSize())
    throw FormatError(inQuotes(path) + ": posvec model header describes " +
                      std::to_string(h.words) + " words x " + std::to_string(h.dim) + " (" +
                      (overflow ? "more than 2^64" : std::to_string(need)) +
                      " bytes) but the file has " + std::to_string(r.fileSize()) +
                      " bytes (truncated or corrupt)");
  return h;
}

// The word table (valid UTF-8, each word once, the table's size as the header
// says) and the counts (none negative).
void readVocabulary(SummedReader& in, const ModelHeader& h, const std::string& path,
                    ModelState& m) {
  m.words.reserve(h.words);
  std::uint64_t wordBytesSeen = 0;
  for (std::uint64_t i = 0; i < h.words; ++i) {
    unsigned char l[4];
    in.take(l, 4);
    const std::uint32_t len = get<std::uint32_t>(l);
    wordBytesSeen += len;
    if (wordBytesSeen > h.wordBytes)
      throw FormatError(inQuotes(path) + ": word " + std::to_string(i + 1) +
                        " runs past the word table (corrupt file)");
    std::string w(len, '\0');
    in.take(w.data(), len);
    checkWord(w, [&] { return inQuotes(path) + " word " + std::to_string(i + 1); });
    m.words.push_back(std::move(w));
  }
  if (wordBytesSeen != h.wordBytes)
    throw FormatError(inQuotes(path) +
                      ": word table size does not match its header (corrupt file)");
  std::unordered_set<std::string_view> seen;
  seen.reserve(h.words);
  for (std::size_t i = 0; i < m.words.size(); ++i)
    if (!seen.insert(m.words[i]).second)
      throw FormatError(inQuotes(path) + ": word " + std::to_string(i + 1) + " ('" +
                        shown(m.words[i]) + "') appears twice");
  m.counts.resize(h.words);
  in.take(m.counts.data(), h.words * 8);
  for (auto& c : m.counts) {
    c = fromLittle(c);
    if (c < 0) throw FormatError(inQuotes(path) + ": negative word count (corrupt file)");
  }
}

// The input weights and, when `withOutput`, the output weights: every value finite.
void readWeights(SummedReader& in, const ModelHeader& h, const std::string& path, bool withOutput,
                 ModelState& m) {
  const std::uint64_t rows = h.words + h.extraRows;
  m.input.resize(rows, h.dim);
  detail::adviseHugePages(m.input);  // training reads its rows scattered
  in.take(m.input.data(), rows * h.dim * 4);
  swapFloatsIfBigEndian(m.input.data(), rows * h.dim);
  for (std::uint64_t i = 0; i < h.words; ++i)
    checkFinite(m.input.row(i).data(), h.dim, m.words[i],
                [&] { return inQuotes(path) + " input vector " + std::to_string(i + 1); });
  for (std::uint64_t i = h.words; i < rows; ++i)
    checkFinite(m.input.row(i).data(), h.dim, "n-gram row", [&] {
      return inQuotes(path) + " n-gram row " + std::to_string(i - h.words + 1);
    });
  if (!withOutput) return;
  m.output.resize(h.outputRows, h.outputRows > 0 ? h.dim : 0);
  detail::adviseHugePages(m.output);
  in.take(m.output.data(), h.outputRows * h.dim * 4);
  swapFloatsIfBigEndian(m.output.data(), h.outputRows * h.dim);
  for (std::uint64_t i = 0; i < h.outputRows * h.dim; ++i)
    if (!std::isfinite(m.output.data()[i]))
      throw FormatError(inQuotes(path) + ": output weight row " + std::to_string(i / h.dim + 1) +
                        " is not finite");
}

// Version 2: where each of h.shards threads was inside the unfinished epoch.
EpochProgress readPartial(SummedReader& in, const ModelHeader& h, const std::string& path) {
  EpochProgress partial;
  std::vector<unsigned char> b(16 + kShardBytes * h.shards);
  in.take(b.data(), b.size());
  partial.words = get<std::int64_t>(b.data());
  partial.streamSize = get<std::int64_t>(b.data() + 8);
  for (std::uint32_t t = 0; t < h.shards; ++t) {
    const unsigned char* q = b.data() + 16 + kShardBytes * t;
    ShardProgress s;
    s.position = get<std::int64_t>(q);
    s.end = get<std::int64_t>(q + 8);
    s.rng = get<std::uint64_t>(q + 16);
    s.loss = get<double>(q + 24);
    s.predictions = get<std::int64_t>(q + 32);
    if (s.position < 0 || s.position > s.end || s.end > partial.streamSize ||
        s.predictions < 0 || !std::isfinite(s.loss) || partial.words < 0)
      throw FormatError(inQuotes(path) + ": the position of thread " + std::to_string(t + 1) +
                        " inside the unfinished epoch is impossible (corrupt file?)");
    partial.shards.push_back(s);
  }
  return partial;
}

// A checksummed file's trailer against every byte before it, including the parts
// this load skipped (the output weights when only the vectors are wanted).
void checkTrailer(SummedReader& in, const std::string& path) {
  std::vector<char> rest(1 << 16);
  for (std::uint64_t left = in.r.remaining() - 8; left > 0;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, rest.size()));
    in.take(rest.data(), n);
    left -= n;
  }
  unsigned char stored[8];
  in.r.read(reinterpret_cast<char*>(stored), 8);
  if (get<std::uint64_t>(stored) != in.sum.value())
    throw FormatError(inQuotes(path) +
                      ": posvec model checksum does not match its content (the file was "
                      "damaged after it was written; use another copy or a checkpoint)");
}

}  // namespace

namespace {
constexpr std::uint64_t kP1 = 0x9E3779B97F4A7C15ULL, kP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
// One step is a bijection of the lane for a fixed word and of the word for a fixed
// lane, so a change confined to one word always changes the result.
constexpr std::uint64_t step(std::uint64_t lane, std::uint64_t word) {
  return rotl((lane ^ word) * kP1, 29);
}
}  // namespace

void ModelChecksum::block(const unsigned char* p) {
  for (int k = 0; k < 4; ++k) {
    std::uint64_t w;
    std::memcpy(&w, p + 8 * k, 8);
    lane_[k] = step(lane_[k], fromLittle(w));
  }
}

void ModelChecksum::update(const char* data, std::size_t n) {
  if (n == 0) return;  // an empty part (no output rows) may come as a null pointer
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  total_ += n;
  if (pending_ > 0) {
    const std::size_t take = std::min(n, sizeof tail_ - pending_);
    std::memcpy(tail_ + pending_, p, take);
    pending_ += take, p += take, n -= take;
    if (pending_ < sizeof tail_) return;
    block(tail_);
    pending_ = 0;
  }
  for (; n >= sizeof tail_; p += sizeof tail_, n -= sizeof tail_) block(p);
  std::memcpy(tail_, p, n);
  pending_ = n;
}

std::uint64_t ModelChecksum::value() const {
  ModelChecksum c = *this;
  if (c.pending_ > 0) {
    std::memset(c.tail_ + c.pending_, 0, sizeof c.tail_ - c.pending_);
    c.block(c.tail_);  // zero-padded; the length below tells "ab" from "ab\0"
  }
  std::uint64_t h = total_ * kP2;
  for (std::uint64_t lane : c.lane_) h = rotl((h ^ lane) * kP2, 31);
  h ^= h >> 33;
  h *= kP1;
  return h ^ (h >> 29);
}

ModelState readModel(const std::string& path, bool withOutput) {
  ChunkReader r(path);
  SummedReader in{r, {}};
  const ModelHeader h = readHeader(in, path);
  ModelState m;
  m.epochsDone = h.epochsDone;
  m.config.resize(h.configBytes);
  in.take(m.config.data(), h.configBytes);
  readVocabulary(in, h, path, m);
  m.epochLosses.resize(h.losses);
  in.take(m.epochLosses.data(), h.losses * 8);
  for (auto& l : m.epochLosses) l = fromLittle(l);
  readWeights(in, h, path, withOutput, m);
  if (withOutput && h.shards > 0) m.partial = readPartial(in, h, path);
  if ((h.flags & kFlagChecksum) != 0) checkTrailer(in, path);
  return m;
}

}  // namespace detail

namespace {
using namespace detail;
}  // namespace

void saveModel(const ModelState& model, const std::string& path) {
  const std::uint64_t v = model.words.size();
  const std::uint64_t d = static_cast<std::uint64_t>(model.input.cols());
  // A subword model's input matrix has its n-gram rows after the words'.
  const bool subwords = model.config.find("subwords=1\n") != std::string::npos;
  if (static_cast<std::uint64_t>(model.input.rows()) < v ||
      (!subwords && static_cast<std::uint64_t>(model.input.rows()) != v))
    throw InputError("cannot save model " + inQuotes(path) + ": " + std::to_string(v) +
                     " words but " + std::to_string(model.input.rows()) + " input vectors");
  const std::uint64_t extraRows = static_cast<std::uint64_t>(model.input.rows()) - v;
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
  writeToPathOrStdout(path, [&](std::ostream& file) {
    ChecksumBuf summed(file.rdbuf());
    std::ostream out(&summed);
    std::string buf(kModelMagic, 8);
    put(buf, shards > 0 ? kModelVersionPartial : kModelVersion);
    put(buf, extraRows > 0 ? kFlagChecksum | kFlagExtraRows : kFlagChecksum);
    put(buf, v);
    put(buf, d);
    put(buf, outRows);
    put(buf, static_cast<std::uint64_t>(model.config.size()));
    put(buf, wordBytes);
    put(buf, static_cast<std::uint64_t>(model.epochLosses.size()));
    put(buf, model.epochsDone);
    put(buf, static_cast<std::uint32_t>(shards));
    if (extraRows > 0) put(buf, extraRows);
    buf += model.config;
    for (const auto& w : model.words) {
      put(buf, static_cast<std::uint32_t>(w.size()));
      buf += w;
    }
    for (std::size_t i = 0; i < v; ++i)
      put(buf, model.counts.empty() ? std::int64_t{0} : model.counts[i]);
    for (double l : model.epochLosses) put(buf, l);
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    // The first `rows` rows of a matrix, float32 in the file (16-bit weights widened a
    // row at a time).
    const auto writeRows = [&](const MatrixF& matrix, std::uint64_t rows) {
      if (model.packed == PackedWeights::None) {
        if (rows > 0) writeFloats(out, matrix.data(), rows * d);
        return;
      }
      std::vector<float> row(d);
      for (std::uint64_t i = 0; i < rows; ++i) {
        readWeightRow(model, matrix, static_cast<Eigen::Index>(i), row.data());
        writeFloats(out, row.data(), d);
      }
    };
    if (model.unplacedRows)  // TrainConfig::deferRows: the unused rows drawn as written
      writeUnplacedRows(out, model);
    else
      writeRows(model.input, v + extraRows);
    writeRows(model.output, outRows);
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
    if (!out) file.setstate(std::ios::badbit);
    std::string trailer;
    put(trailer, summed.sum.value());
    file.write(trailer.data(), static_cast<std::streamsize>(trailer.size()));
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
