// fastText's subword scheme and its `.bin` reader. The n-grams, the hash and the
// file layout follow fastText 0.9.2 (Dictionary::computeSubwords/hash, Args/
// Dictionary/DenseMatrix::save), so a vector computed here equals the one
// `fasttext print-word-vectors` prints for the same file, unknown words included.
#include "posvec/subwords.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

#include "formats_detail.hpp"
#include "posvec/error.hpp"

namespace posvec {

std::uint32_t subwordHash(std::string_view bytes) {
  std::uint32_t h = 2166136261u;
  for (char c : bytes) {
    // fastText xors the byte as a signed char widened to 32 bits: 0xE9 becomes
    // 0xFFFFFFE9. Its files are built with this, so it must be reproduced.
    h ^= static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(c)));
    h *= 16777619u;
  }
  return h;
}

namespace {

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Calls f(ngram) for each n-gram of `<word>` in fastText's order.
template <typename F>
void forEachNgram(std::string_view word, int minn, int maxn, F&& f) {
  if (word == "</s>" || maxn <= 0) return;
  std::string w;
  w.reserve(word.size() + 2);
  w += '<';
  w += word;
  w += '>';
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (continuation(w[i])) continue;
    std::size_t j = i;
    for (int n = 1; j < w.size() && n <= maxn; ++n) {
      ++j;
      while (j < w.size() && continuation(w[j])) ++j;
      // A lone "<" or ">" is not an n-gram (it only matters when minn is 1).
      if (n >= minn && !(n == 1 && (i == 0 || j == w.size())))
        f(std::string_view(w).substr(i, j - i));
    }
  }
}

}  // namespace

std::vector<std::string> characterNgrams(std::string_view word, int minn, int maxn) {
  std::vector<std::string> out;
  forEachNgram(word, minn, maxn, [&](std::string_view g) { out.emplace_back(g); });
  return out;
}

std::vector<std::int64_t> ngramRows(std::string_view word, int minn, int maxn, std::uint32_t bucket,
                                    std::int64_t nwords) {
  std::vector<std::int64_t> out;
  if (bucket == 0) return out;
  forEachNgram(word, minn, maxn,
               [&](std::string_view g) { out.push_back(nwords + subwordHash(g) % bucket); });
  return out;
}

// ---------------------------------------------------------------------------
// Reading fastText's .bin

namespace {

using detail::addChecked;
using detail::inQuotes;
using detail::mulChecked;

constexpr std::int32_t kMagic = 793712314;
constexpr std::int32_t kVersion = 12;
enum ModelKind : std::int32_t { kCbow = 1, kSkipgram = 2, kSupervised = 3 };

// Reads fixed-width little-endian fields; every shortfall is one FormatError line.
class Fields {
 public:
  explicit Fields(const std::string& path) : path_(path), r_(path) {}
  detail::ChunkReader& reader() { return r_; }
  const std::string& path() const { return path_; }

  template <typename T>
  T get(const char* what) {
    T v;
    if (r_.read(reinterpret_cast<char*>(&v), sizeof v) != sizeof v)
      fail("truncated: the file ends inside " + std::string(what));
    return detail::fromLittle(v);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(inQuotes(path_) + ": " + context_ + what);
  }

 private:
  std::string path_;
  detail::ChunkReader r_;

 public:
  /// Said before every failure from here on (the layout the file is being read as).
  void setContext(std::string context) { context_ = std::move(context); }

 private:
  std::string context_;
};

std::string num(std::int64_t v) { return std::to_string(v); }

}  // namespace

namespace {

// fastText before 0.9 wrote no magic number and no version: the file opens with the
// training settings (dim ws epoch minCount neg wordNgrams loss model bucket minn maxn
// lrUpdateRate as int32, t as a double). These 56 bytes are that when every field is in
// the range fastText allows; a word2vec file's opening digits ("100 ...") read as a
// dimension above 2^29, far outside.
bool looksLikeOldFastText(const char* p, std::size_t n) {
  if (n < 56) return false;
  std::int32_t a[12];
  double t = 0;
  std::memcpy(a, p, sizeof a);
  std::memcpy(&t, p + 48, sizeof t);
  for (auto& v : a) v = detail::fromLittle(v);
  t = detail::fromLittle(t);
  const auto in = [](std::int32_t v, std::int32_t lo, std::int32_t hi) {
    return v >= lo && v <= hi;
  };
  return in(a[0], 1, 1 << 20) && in(a[1], 1, 1 << 16) && in(a[2], 1, 1 << 24) &&
         in(a[3], 0, 1 << 30) && in(a[4], 0, 1 << 16) && in(a[5], 1, 64) && in(a[6], 1, 4) &&
         in(a[7], 1, 3) && a[8] >= 0 && in(a[9], 0, 1024) && in(a[10], 0, 1024) && a[11] >= 0 &&
         std::isfinite(t) && t >= 0 && t <= 1;
}

}  // namespace

bool SubwordModel::isFastTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[56];
  in.read(head, sizeof head);
  const auto n = static_cast<std::size_t>(in.gcount());
  std::int32_t magic = 0;
  if (n < sizeof magic) return false;
  std::memcpy(&magic, head, sizeof magic);
  return detail::fromLittle(magic) == kMagic || looksLikeOldFastText(head, n);
}

// An open file read with pread (thread-safe: no shared position).
struct SubwordModel::RowFile {
  std::string path;
  int fd = -1;
  explicit RowFile(std::string p) : path(std::move(p)) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw IoError("cannot open " + inQuotes(path));
  }
  ~RowFile() {
    if (fd >= 0) ::close(fd);
  }
  RowFile(const RowFile&) = delete;
  RowFile& operator=(const RowFile&) = delete;
  void read(std::uint64_t at, char* dst, std::size_t n) const {
    while (n > 0) {
      const ssize_t got = ::pread(fd, dst, n, static_cast<off_t>(at));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0)
        throw IoError(inQuotes(path) +
                      ": cannot read the input matrix (the file changed or "
                      "shrank since it was opened)");
      dst += got;
      at += static_cast<std::uint64_t>(got);
      n -= static_cast<std::size_t>(got);
    }
  }
};

SubwordModel SubwordModel::load(const std::string& path) { return read(path, true); }

SubwordModel SubwordModel::open(const std::string& path) { return read(path, false); }

namespace {

const std::string kKind = "fastText model: ";

// Magic, version and the Args block, each field checked for what it can hold. `old`:
// the file is fastText's layout before 0.9 (no magic, no version; its dictionary has no
// pruned-bucket size and its matrices no quantisation flag).
FastTextArgs readHeader(Fields& f, bool& old) {
  const char* argsWhat = "the training settings";
  std::int32_t a[12];
  old = false;
  const std::int32_t first =
      f.reader().fileSize() >= 4 ? f.get<std::int32_t>("the magic number") : 0;
  if (first == kMagic) {
    const std::int32_t version = f.get<std::int32_t>("the version");
    // 11 and 12 share the unsupervised layout (11's supervised models had no n-grams).
    if (version != kVersion && version != 11)
      f.fail(kKind + "version " + num(version) +
             " is not supported (posvec reads versions 11 and 12, and fastText's files from "
             "before 0.9, which have no version)");
    for (auto& v : a) v = f.get<std::int32_t>(argsWhat);
  } else {
    // Not the magic number: fastText before 0.9, if the file opens with a settings block
    // (the first int32 then is the dimension).
    std::ifstream in(f.path(), std::ios::binary);
    char head[56] = {};
    in.read(head, sizeof head);
    if (!looksLikeOldFastText(head, static_cast<std::size_t>(in.gcount())))
      f.fail("not a fastText .bin model (bad magic number; expected 793712314)");
    old = true;
    f.setContext("no magic number, read as fastText's layout from before 0.9: ");
    a[0] = first;
    for (int i = 1; i < 12; ++i) a[i] = f.get<std::int32_t>(argsWhat);
  }

  // Args: dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate, t.
  const double t = f.get<double>(argsWhat);
  const std::int32_t dim = a[0], loss = a[6], model = a[7], bucket = a[8], minn = a[9],
                     maxn = a[10];
  if (model == kSupervised)
    f.fail(kKind +
           "a supervised model (a text classifier); posvec reads unsupervised "
           "(skipgram or cbow) models only");
  if (model != kCbow && model != kSkipgram)
    f.fail(kKind + "unknown model type " + num(model) + " (corrupt file?)");
  if (loss < 1 || loss > 4) f.fail(kKind + "unknown loss " + num(loss) + " (corrupt file?)");
  if (dim <= 0) f.fail(kKind + "dimension " + num(dim) + " is not positive (corrupt file?)");
  if (bucket < 0) f.fail(kKind + "bucket count " + num(bucket) + " is negative (corrupt file?)");
  if (maxn < 0 || minn < 0 || (maxn > 0 && minn > maxn) || maxn > 1024)
    f.fail(kKind + "n-gram lengths " + num(minn) + ".." + num(maxn) +
           " are impossible (corrupt file?)");
  FastTextArgs args;
  args.dim = dim;
  args.ws = a[1];
  args.epoch = a[2];
  args.minCount = a[3];
  args.neg = a[4];
  args.wordNgrams = a[5];
  args.loss = static_cast<FastTextLoss>(loss);
  args.model = static_cast<FastTextModel>(model);
  args.bucket = bucket;
  args.minn = minn;
  args.maxn = maxn;
  args.lrUpdateRate = a[11];
  args.t = t;
  return args;
}

// The dictionary as the file holds it.
struct Dictionary {
  std::vector<std::string> words;
  std::vector<std::int64_t> counts;
  std::unordered_map<std::string, WordId> index;
  std::int64_t ntokens = 0;
  std::int64_t pruneSize = -1;
  std::unordered_map<std::int32_t, std::int32_t> prune;
};

// One dictionary entry: the word up to its NUL, its count and its type.
void readEntry(Fields& f, std::int32_t i, Dictionary& d) {
  auto& r = f.reader();
  std::string_view w;
  bool tooLong = false;
  if (!r.until('\0', w, detail::kMaxWordBytes, tooLong) || tooLong || r.remaining() < 9)
    f.fail(kKind + "dictionary entry " + num(i + 1) +
           (tooLong ? " is not NUL-terminated within 64 KiB (corrupt file)"
                    : " is cut short (truncated file)"));
  // An empty word is legal: fastText writes one from -pretrainedVectors files.
  std::string word(w);
  const std::int64_t count = f.get<std::int64_t>("the dictionary");
  const std::int8_t type = f.get<std::int8_t>("the dictionary");
  if (count < 0 || (type != 0 && type != 1))
    f.fail(kKind + "dictionary entry " + num(i + 1) + " ('" + detail::shown(word) +
           "') has count " + num(count) + " and type " + num(type) + " (corrupt file)");
  if (type == 1)
    f.fail(kKind +
           "its dictionary has labels: a supervised model (a text classifier); "
           "posvec reads unsupervised (skipgram or cbow) models only");
  if (!d.index.emplace(word, i).second)
    f.fail(kKind + "word '" + detail::shown(word) +
           "' appears twice in the dictionary "
           "(corrupt file)");
  d.words.push_back(std::move(word));
  d.counts.push_back(count);
}

// The dictionary header, its entries and the pruned-bucket table.
Dictionary readDictionary(Fields& f, bool old) {
  auto& r = f.reader();
  const char* dictWhat = "the dictionary header";
  const std::int32_t size = f.get<std::int32_t>(dictWhat);
  const std::int32_t nwords = f.get<std::int32_t>(dictWhat);
  const std::int32_t nlabels = f.get<std::int32_t>(dictWhat);
  const std::int64_t ntokens = f.get<std::int64_t>(dictWhat);
  const std::int64_t pruneSize = old ? -1 : f.get<std::int64_t>(dictWhat);
  if (nlabels > 0)
    f.fail(kKind + "its dictionary has " + num(nlabels) +
           " labels: a supervised model (a text classifier); posvec reads unsupervised "
           "(skipgram or cbow) models only");
  if (size < 0 || nwords < 0 || nlabels < 0 || size != nwords || ntokens < 0 || pruneSize < -1)
    f.fail(kKind + "dictionary header says " + num(size) + " entries, " + num(nwords) + " words, " +
           num(nlabels) + " labels, " + num(ntokens) + " tokens (corrupt file)");
  // Each entry takes at least 11 bytes (a 1-byte word, its NUL, count, type):
  // checked before anything is reserved, so a lying count cannot allocate.
  if (static_cast<std::uint64_t>(size) * 11 > r.remaining())
    f.fail(kKind + "dictionary says " + num(size) + " words but only " +
           std::to_string(r.remaining()) + " bytes follow (truncated or corrupt)");

  Dictionary d;
  d.ntokens = ntokens;
  d.pruneSize = pruneSize;
  d.words.reserve(static_cast<std::size_t>(size));
  d.counts.reserve(static_cast<std::size_t>(size));
  d.index.reserve(static_cast<std::size_t>(size));
  for (std::int32_t i = 0; i < size; ++i) readEntry(f, i, d);
  if (pruneSize > 0) {
    if (static_cast<std::uint64_t>(pruneSize) > r.remaining() / 8)
      f.fail(kKind + "pruned-bucket table of " + num(pruneSize) +
             " entries runs past the end of the file (truncated or corrupt)");
    for (std::int64_t i = 0; i < pruneSize; ++i) {
      const auto from = f.get<std::int32_t>("the pruned-bucket table");
      const auto to = f.get<std::int32_t>("the pruned-bucket table");
      if (from < 0 || to < 0)
        f.fail(kKind + "pruned-bucket table has a negative entry (corrupt file)");
      d.prune[from] = to;
    }
  }
  return d;
}

[[noreturn]] void failQuantized(const Fields& f) {
  f.fail(kKind +
         "a quantized model (.ftz); posvec reads unquantized .bin models only "
         "(use the .bin that fastText quantized)");
}

// The shape of the two matrices, checked against the header and against the bytes
// the file holds (all of it before anything is allocated).
struct MatrixLayout {
  std::int64_t rows = 0, cols = 0;  // of the input matrix
  std::uint64_t inputAt = 0;        // file offset of its first value
  std::uint64_t inBytes = 0, outBytes = 0;
  bool old = false;  // fastText before 0.9: no quantisation flags
};

MatrixLayout readInputHeader(Fields& f, const FastTextArgs& args, const Dictionary& d, bool old) {
  auto& r = f.reader();
  // The input matrix: a quantization flag (not before 0.9), rows and columns as int64, floats.
  if (!old && f.get<std::uint8_t>("the input matrix header") != 0) failQuantized(f);
  MatrixLayout m;
  m.rows = f.get<std::int64_t>("the input matrix header");
  m.cols = f.get<std::int64_t>("the input matrix header");
  const auto nwords = static_cast<std::int64_t>(d.words.size());
  const std::int64_t dim = args.dim;
  const std::int64_t wantRows = d.pruneSize < 0 ? nwords + args.bucket : nwords + d.pruneSize;
  if (m.cols != dim || m.rows != wantRows)
    f.fail(kKind + "input matrix is " + num(m.rows) + " x " + num(m.cols) +
           " but the header says " + num(wantRows) + " rows (words + buckets) of dimension " +
           num(dim) + " (corrupt file)");
  for (const auto& [from, to] : d.prune)
    if (to >= m.rows - nwords)
      f.fail(kKind + "pruned-bucket table points past the input matrix (corrupt file)");
  // The rest of the file is exactly: the input floats, the output flag, the output
  // header, the output floats (nwords x dim).
  bool overflow = false;
  m.inBytes = mulChecked(
      mulChecked(static_cast<std::uint64_t>(m.rows), static_cast<std::uint64_t>(m.cols), overflow),
      4, overflow);
  m.outBytes = mulChecked(
      mulChecked(static_cast<std::uint64_t>(nwords), static_cast<std::uint64_t>(dim), overflow), 4,
      overflow);
  const std::uint64_t need =
      addChecked(addChecked(m.inBytes, (old ? 0 : 1) + 16, overflow), m.outBytes, overflow);
  m.old = old;
  if (overflow || need != r.remaining())
    f.fail(kKind + "header describes " + num(m.rows) + " x " + num(m.cols) + " input and " +
           num(nwords) + " x " + num(dim) + " output values (" +
           (overflow ? std::string("more than 2^64") : std::to_string(need)) + " bytes) but " +
           std::to_string(r.remaining()) + " bytes follow (truncated or corrupt)");
  m.inputAt = r.offset();
  return m;
}

// Checks the output matrix header, which sits after the input floats.
void checkOutputHeader(const Fields& f, std::ifstream& in, const MatrixLayout& m,
                       std::int64_t nwords, std::int64_t dim) {
  in.seekg(static_cast<std::streamoff>(m.inputAt + m.inBytes));
  unsigned char tail[17] = {};  // the quantisation flag (not before 0.9), rows, columns
  const std::size_t flag = m.old ? 0 : 1;
  if (!in.read(reinterpret_cast<char*>(tail), static_cast<std::streamsize>(flag + 16)))
    f.fail(kKind + "truncated: the file ends inside the output matrix header");
  std::int64_t oRows, oCols;
  std::memcpy(&oRows, tail + flag, 8);
  std::memcpy(&oCols, tail + flag + 8, 8);
  oRows = detail::fromLittle(oRows);
  oCols = detail::fromLittle(oCols);
  if (!m.old && tail[0] != 0) failQuantized(f);
  if (oRows != nwords || oCols != dim)
    f.fail(kKind + "output matrix is " + num(oRows) + " x " + num(oCols) + ", expected " +
           num(nwords) + " x " + num(dim) + " (corrupt file)");
}

// `rows` x `cols` floats at `at`, straight into a new matrix.
MatrixF readFloats(const std::string& path, std::ifstream& in, std::uint64_t at, std::uint64_t rows,
                   std::uint64_t cols, const char* what) {
  MatrixF out = detail::uninitialisedMatrix(rows, cols, true);
  in.seekg(static_cast<std::streamoff>(at));
  if (!in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(rows * cols * 4)))
    throw IoError(inQuotes(path) + ": cannot read the " + what +
                  " matrix (file changed while read?)");
  detail::swapFloatsIfBigEndian(out.data(), static_cast<std::size_t>(rows * cols));
  return out;
}

}  // namespace

SubwordModel SubwordModel::read(const std::string& path, bool matrix) {
  Fields f(path);
  bool old = false;
  const FastTextArgs args = readHeader(f, old);
  Dictionary d = readDictionary(f, old);
  const MatrixLayout layout = readInputHeader(f, args, d, old);
  const auto nwords = static_cast<std::int64_t>(d.words.size());

  SubwordModel m;
  m.args_ = args;
  m.args_.ntokens = d.ntokens;
  m.minn_ = args.minn;
  m.maxn_ = args.maxn;
  m.bucket_ = static_cast<std::uint32_t>(args.bucket);
  m.dim_ = static_cast<std::size_t>(args.dim);
  m.pruneSize_ = d.pruneSize;
  m.words_ = std::move(d.words);
  m.counts_ = std::move(d.counts);
  m.index_ = std::move(d.index);
  m.prune_ = std::move(d.prune);

  std::ifstream in(path, std::ios::binary);
  checkOutputHeader(f, in, layout, nwords, args.dim);
  if (!matrix) {
    m.file_ = std::make_shared<const RowFile>(path);
    m.inputAt_ = layout.inputAt;
    return m;
  }
  m.input_ = readFloats(path, in, layout.inputAt, static_cast<std::uint64_t>(layout.rows),
                        static_cast<std::uint64_t>(layout.cols), "input");
  m.output_ = readFloats(path, in, layout.inputAt + layout.inBytes + (layout.old ? 16 : 17),
                         static_cast<std::uint64_t>(nwords), static_cast<std::uint64_t>(args.dim),
                         "output");
  return m;
}

SubwordModel SubwordModel::fromRows(std::vector<std::string> words,
                                    std::vector<std::int64_t> counts, MatrixF input, int minn,
                                    int maxn, std::uint32_t bucket) {
  if (static_cast<std::uint64_t>(input.rows()) != words.size() + std::uint64_t{bucket})
    throw FormatError("subword rows: " + std::to_string(input.rows()) + " rows for " +
                      std::to_string(words.size()) + " words and " + std::to_string(bucket) +
                      " n-gram buckets");
  if (minn < 0 || maxn < 0 || (maxn > 0 && minn > maxn) || maxn > 1024)
    throw FormatError("subword rows: n-gram lengths " + std::to_string(minn) + ".." +
                      std::to_string(maxn) + " are out of range");
  SubwordModel m;
  m.minn_ = minn;
  m.maxn_ = maxn;
  m.bucket_ = bucket;
  m.dim_ = static_cast<std::size_t>(input.cols());
  m.args_.dim = static_cast<std::int32_t>(input.cols());
  m.args_.minn = minn;
  m.args_.maxn = maxn;
  m.args_.bucket = static_cast<std::int32_t>(std::min<std::uint32_t>(bucket, 2147483647u));
  m.index_.reserve(words.size());
  for (std::size_t i = 0; i < words.size(); ++i)
    m.index_.emplace(words[i], static_cast<WordId>(i));
  m.words_ = std::move(words);
  m.counts_ = std::move(counts);
  if (m.counts_.size() != m.words_.size()) m.counts_.assign(m.words_.size(), 0);
  m.input_ = std::move(input);
  return m;
}

std::optional<WordId> SubwordModel::find(std::string_view word) const {
  auto it = index_.find(std::string(word));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::int64_t> SubwordModel::rows(std::string_view word) const {
  std::vector<std::int64_t> out;
  if (auto id = find(word)) out.push_back(*id);
  if (pruneSize_ == 0 || bucket_ == 0) return out;
  const auto nwords = static_cast<std::int64_t>(words_.size());
  forEachNgram(word, minn_, maxn_, [&](std::string_view g) {
    const auto h = static_cast<std::int32_t>(subwordHash(g) % bucket_);
    if (pruneSize_ < 0) {
      out.push_back(nwords + h);
    } else if (auto it = prune_.find(h); it != prune_.end()) {
      out.push_back(nwords + it->second);
    }
  });
  return out;
}

Eigen::RowVectorXf SubwordModel::vector(std::string_view word) const {
  const auto r = rows(word);
  Eigen::RowVectorXf v = Eigen::RowVectorXf::Zero(static_cast<Eigen::Index>(dim()));
  if (file_) {
    std::vector<float> buf(dim_);
    for (auto row : r) {
      file_->read(inputAt_ + static_cast<std::uint64_t>(row) * dim_ * 4,
                  reinterpret_cast<char*>(buf.data()), dim_ * 4);
      detail::swapFloatsIfBigEndian(buf.data(), dim_);
      v += Eigen::Map<const Eigen::RowVectorXf>(buf.data(), static_cast<Eigen::Index>(dim_));
    }
  } else {
    for (auto row : r) v += input_.row(row);
  }
  // fastText multiplies by 1/n in float; do the same so the last bit matches.
  if (!r.empty()) v *= 1.0f / static_cast<float>(r.size());
  return v;
}

Embeddings SubwordModel::wordVectors() const {
  MatrixF vecs(static_cast<Eigen::Index>(words_.size()), static_cast<Eigen::Index>(dim_));
  for (std::size_t i = 0; i < words_.size(); ++i)
    vecs.row(static_cast<Eigen::Index>(i)) = vector(words_[i]);
  return Embeddings(words_, std::move(vecs), counts_);
}

}  // namespace posvec
