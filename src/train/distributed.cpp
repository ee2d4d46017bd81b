// What distributed training does in every build: the synchronisation schedule
// (SyncOptions) and each rank's share of the corpus. The collectives live in
// distributed_mpi.cpp, or in the stand-in distributed_no_mpi.cpp when the build has
// no MPI; CMake compiles one of the two (POSVEC_MPI).
#include "posvec/distributed.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <istream>
#include <streambuf>
#include <string_view>

#include "corpus_detail.hpp"
#include "input.hpp"
#include "posvec/error.hpp"
#include "posvec/tokenizer.hpp"

namespace posvec {

void SyncOptions::validate() const {
  checkSettings(kSyncSettings, *this);
  if (schedule == Schedule::Dense && combine == Combine::BoundedSum)
    throw ConfigError(
        "the bounded sum of the ranks' changes needs the sparse synchronisation schedule; with "
        "the dense schedule combine by sum or average");
  if (schedule == Schedule::Dense && combine == Combine::Momentum)
    throw ConfigError(
        "the momentum combine needs the sparse synchronisation schedule; with the dense "
        "schedule combine by sum or average");
}

double SyncOptions::momentumFor(int ranks) const {
  if (syncMomentum > 0) return syncMomentum;
  // 1 / (1 - momentum) = 1.25 N: a row every rank pushes alike moves 1.25 times the
  // sum of the changes a round (Brown x16 at 8 ranks, 5,000-word rounds: 0.875, a
  // factor of 1, left WordSim-353 below one process's band; 0.92, 1.56, analogy).
  return ranks <= 1 ? 0.0 : 1.0 - 1.0 / (1.25 * ranks);
}

std::vector<std::int64_t> SyncOptions::roundRows(std::int64_t round, std::int64_t rows) const {
  std::vector<std::int64_t> out;
  if (rows <= 0) return out;
  const std::int64_t every = syncRows == 0 ? rows : std::min(rows, syncRows);
  for (std::int64_t r = 0; r < every; ++r) out.push_back(r);
  // Tier t >= 1: ranks [B 2^(t-1), B 2^t), each every 2^t rounds, a 1/2^t slice a
  // round (the one whose offset in the tier is round mod 2^t), so every round
  // carries about B/2 rows of each tier.
  for (std::int64_t lo = every, span = 2; lo < rows; lo *= 2, span *= 2) {
    const std::int64_t hi = std::min(rows, 2 * lo);
    for (std::int64_t r = lo + round % span; r < hi; r += span) out.push_back(r);
    if (span > (std::int64_t{1} << 40)) break;  // rows < 2^63: never reached
  }
  return out;
}

namespace {
// The bounded combine's gain for the busiest rows: a row n ranks each drove a
// fraction p of the way to the same optimum moves by kBoundedGain / n times the
// sum of their changes and ends |1 - 1.5 p| <= 0.5 times as far from it; with 2
// the factor reaches 1 at p = 1 and the loss of small vocabularies rises epoch
// over epoch (measured on the planted corpus of the tests at 2 and 8 ranks).
constexpr double kBoundedGain = 1.5;
// Training occurrences of a row between two exchanges that drive it 1 - 1/e of
// the way to its optimum: the bounded combine's saturation (chosen on Brown at 4
// ranks; see distributed.md).
constexpr double kSaturationOccurrences = 100;
}  // namespace

double SyncOptions::boundedFactor(int ranks, double occurrences) {
  if (ranks <= 1 || !(occurrences > 0)) return 1.0;
  const double n = ranks, least = kBoundedGain / n;
  const double x = occurrences / kSaturationOccurrences;
  if (x > 40) return least;  // e^(-x) below double's resolution next to 1
  const double f = std::expm1(-n * x) / (n * std::expm1(-x));
  return std::clamp(f, least, 1.0);
}

std::int64_t SyncOptions::firstInterval(bool warmUp) const {
  // A warm-up of syncWords or more is no warm-up.
  return warmUp && syncWarmup > 0 ? std::min(syncWarmup, syncWords) : syncWords;
}

std::int64_t SyncOptions::intervalAfter(std::int64_t interval) const {
  return std::min(syncWords, 2 * interval);  // interval <= syncWords <= 10^12: no overflow
}

std::vector<std::int64_t> SyncOptions::points(std::int64_t shareWords, bool warmUp) const {
  std::vector<std::int64_t> at;
  if (syncWords < 1) return at;  // not validated: no points rather than no end
  for (std::int64_t step = firstInterval(warmUp), done = step; done < shareWords;
       step = intervalAfter(step), done += step)
    at.push_back(done);
  return at;
}

bool Cluster::launched() {
  // Set by Open MPI's mpirun, by MPICH/Hydra and Slurm's srun (PMI, PMIx).
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (const char* s = std::getenv(v); s && *s) return true;
  return false;
}

std::string Cluster::tag(const std::string& message) const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": " + message;
}

// ---- the corpus share: byte ranges cut at line starts ------------------------

namespace {

struct Piece {
  std::string path;
  std::uint64_t begin = 0, end = 0;
};

// An istream over bytes [begin, end) of a file, read in large blocks with pread.
class RangeBuf : public std::streambuf {
 public:
  RangeBuf(const std::string& path, std::uint64_t begin, std::uint64_t end)
      : path_(path), pos_(begin), end_(end), buf_(1 << 20) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
  }
  ~RangeBuf() override { ::close(fd_); }
  RangeBuf(const RangeBuf&) = delete;
  RangeBuf& operator=(const RangeBuf&) = delete;

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (pos_ >= end_) return traits_type::eof();
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size(), end_ - pos_));
    ssize_t got;
    do {
      got = ::pread(fd_, buf_.data(), want, static_cast<off_t>(pos_));
    } while (got < 0 && errno == EINTR);
    if (got < 0) throw IoError("cannot read '" + path_ + "': " + std::strerror(errno));
    if (got == 0) throw IoError("'" + path_ + "' became shorter while it was read");
    pos_ += static_cast<std::uint64_t>(got);
    setg(buf_.data(), buf_.data(), buf_.data() + got);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t pos_, end_;
  std::vector<char> buf_;
};

// The first line start at or after `offset` in the file (its size when none).
std::uint64_t lineStartFrom(const std::string& path, std::uint64_t offset, std::uint64_t size) {
  if (offset == 0 || offset >= size) return std::min(offset, size);
  RangeBuf buf(path, offset - 1, size);
  std::istream in(&buf);
  std::uint64_t pos = offset - 1;
  for (int c; (c = in.get()) != std::char_traits<char>::eof(); ++pos)
    if (c == '\n') return pos + 1;
  return size;
}

std::vector<Piece> piecesOf(const CorpusSource& corpus, int rank, int size) {
  namespace fs = std::filesystem;
  const auto& paths = corpus.paths();
  std::vector<std::uint64_t> start{0};  // of each file in the concatenation
  for (const auto& p : paths) {
    if (p == "-")
      throw InputError("standard input cannot be shared between ranks; give corpus files");
    std::error_code ec;
    const auto bytes = fs::file_size(p, ec);
    if (ec) throw IoError("cannot read corpus file '" + p + "': " + ec.message());
    start.push_back(start.back() + bytes);
  }
  const std::uint64_t total = start.back();
  auto cut = [&](int r) -> std::uint64_t {
    if (r <= 0) return 0;
    if (r >= size) return total;
    const auto n = static_cast<std::uint64_t>(size), k = static_cast<std::uint64_t>(r);
    const std::uint64_t target = total / n * k + total % n * k / n;  // total * k / n, no overflow
    const std::size_t f =
        static_cast<std::size_t>(std::upper_bound(start.begin(), start.end(), target) -
                                 start.begin()) -
        1;
    if (f >= paths.size()) return total;
    return start[f] + lineStartFrom(paths[f], target - start[f], start[f + 1] - start[f]);
  };
  const std::uint64_t from = cut(rank), to = cut(rank + 1);
  std::vector<Piece> pieces;
  for (std::size_t f = 0; f < paths.size(); ++f) {
    const std::uint64_t b = std::max(from, start[f]), e = std::min(to, start[f + 1]);
    if (b < e) pieces.push_back({paths[f], b - start[f], e - start[f]});
  }
  return pieces;
}

}  // namespace

CorpusSource Cluster::share(const CorpusSource& corpus) const {
  if (corpus.paths().empty())
    throw InputError("a distributed run reads corpus files; sentences in memory cannot be shared");
  // Shares are byte ranges of the files: standard input and compressed data have none.
  for (const auto& path : corpus.paths()) {
    if (path == "-")
      throw ConfigError(
          "a distributed run cannot read standard input: every rank reads its own byte range "
          "of the corpus files; give the corpus as files");
    const auto kind = detail::fileCompression(path);
    if (kind && !kind->empty())
      throw InputError("'" + path + "' is " + *kind +
                       "-compressed: a distributed run splits the corpus files into byte ranges, "
                       "which compressed data does not allow; decompress it first");
  }
  auto pieces = piecesOf(corpus, rank_, size_);
  return CorpusSource::fromGenerator([pieces = std::move(pieces),
                                      pretokenized = corpus.pretokenized(),
                                      options = corpus.tokenizer()](const SentenceSink& sink) {
    const Tokenizer tokenizer(options);
    for (const Piece& piece : pieces) {
      RangeBuf buf(piece.path, piece.begin, piece.end);
      std::istream in(&buf);
      if (!pretokenized) {
        tokenizer.tokenize(in, sink, piece.path);
        continue;
      }
      // The one-process reader: a line is a sentence, tokens split on ASCII space,
      // invalid UTF-8 refused (or replaced) as it is read.
      Sentence s;
      detail::readPretokenizedStream(
          in, piece.path, options.replaceInvalid, [&](std::string_view w) { s.emplace_back(w); },
          [&] {
            sink(std::move(s));
            s = Sentence{};
          });
    }
  });
}

}  // namespace posvec
