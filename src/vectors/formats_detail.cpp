#include "formats_detail.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "posvec/io.hpp"
#include "test_seams.hpp"

namespace posvec::detail {

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are a
// maximal invalid subsequence, whose length goes to `bad` (the Unicode "maximal
// subpart" rule, which Python's decoder follows: U+FFFD per subpart).
std::size_t utf8At(std::string_view s, std::size_t i, std::size_t& bad) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  int need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    bad = 1;
    return 0;
  }
  std::size_t k = 1;
  for (; k <= static_cast<std::size_t>(need); ++k) {
    if (i + k >= s.size()) break;
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < lo || b > hi) break;
    lo = 0x80, hi = 0xBF;
  }
  if (k == static_cast<std::size_t>(need) + 1) return k;
  bad = k;
  return 0;
}

}  // namespace

std::string shown(std::string_view word) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  std::size_t i = 0, chars = 0;
  for (; i < word.size() && chars < 40; ++chars) {
    std::size_t bad = 0;
    const std::size_t len = utf8At(word, i, bad);
    const auto c = static_cast<unsigned char>(word[i]);
    if (len == 1 && c >= 0x20 && c != 0x7f) {
      out += word[i];
    } else if (len > 1) {
      out.append(word.substr(i, len));
    } else {
      for (std::size_t k = 0; k < std::max<std::size_t>(len, bad); ++k) {
        const auto b = static_cast<unsigned char>(word[i + k]);
        out += "\\x";
        out += hex[b >> 4];
        out += hex[b & 15];
      }
    }
    i += std::max(len, bad);
  }
  if (i < word.size()) out += "...";
  return out;
}

std::string repairUtf8(std::string_view word, UnicodeErrors mode) {
  std::string out;
  out.reserve(word.size() + 8);
  for (std::size_t i = 0; i < word.size();) {
    std::size_t bad = 0;
    const std::size_t len = utf8At(word, i, bad);
    if (len) {
      out.append(word.substr(i, len));
      i += len;
    } else {
      if (mode == UnicodeErrors::Replace) out += "\xEF\xBF\xBD";
      i += bad;
    }
  }
  return out;
}

std::size_t firstInvalidUtf8(std::string_view word) {
  for (std::size_t i = 0; i < word.size();) {
    std::size_t bad = 0;
    const std::size_t len = utf8At(word, i, bad);
    if (!len) return i;
    i += len;
  }
  return word.size();
}

namespace {

// The SIGBUS handler's table of live mappings: [begin, end) and whether a fault hit it.
// Slots are claimed with a compare-and-swap, so the handler reads them without a lock.
constexpr int kMappingSlots = 64;
struct MappingSlot {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  std::atomic<int> faulted{0};
};
MappingSlot gMappings[kMappingSlots];
struct sigaction gPreviousBus;
std::uintptr_t gPageSize = 4096;  // set before the handler is installed

void onBus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  if (info->si_code > 0) {  // raised by the kernel for a fault, not by kill()
    for (MappingSlot& s : gMappings) {
      const std::uintptr_t b = s.begin.load(std::memory_order_acquire);
      const std::uintptr_t e = s.end.load(std::memory_order_acquire);
      if (b == 0 || addr < b || addr >= e) continue;
      // Zero pages from the faulting page to the mapping's end: the reader goes on
      // over zeros and checkIntact reports the file as truncated.
      const std::uintptr_t from = addr & ~(gPageSize - 1);
      const void* r = ::mmap(reinterpret_cast<void*>(from), e - from, PROT_READ,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (r == MAP_FAILED) break;  // cannot repair: die as the default would
      s.faulted.store(1, std::memory_order_release);
      return;
    }
  }
  // Not ours: the handler that was installed before, or the default action.
  if (gPreviousBus.sa_flags & SA_SIGINFO) {
    if (gPreviousBus.sa_sigaction) return gPreviousBus.sa_sigaction(sig, info, context);
  } else if (gPreviousBus.sa_handler != SIG_DFL && gPreviousBus.sa_handler != SIG_IGN) {
    return gPreviousBus.sa_handler(sig);
  }
  ::signal(sig, SIG_DFL);  // the fault repeats on return and ends the process
}

void installBusHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0) gPageSize = static_cast<std::uintptr_t>(page);
    struct sigaction a {};
    a.sa_sigaction = onBus;
    a.sa_flags = SA_SIGINFO;
    sigemptyset(&a.sa_mask);
    ::sigaction(SIGBUS, &a, &gPreviousBus);
  });
}

int claimSlot(const void* p, std::size_t size) {
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  for (int i = 0; i < kMappingSlots; ++i) {
    std::uintptr_t expected = 0;
    if (gMappings[i].begin.compare_exchange_strong(expected, b, std::memory_order_acq_rel)) {
      gMappings[i].faulted.store(0, std::memory_order_relaxed);
      gMappings[i].end.store(b + size, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

}  // namespace

MappedFile::MappedFile(const std::string& path, bool willReadAll) {
  std::ifstream probe;
  openForReading(path, probe);  // the library's messages for missing files, directories...
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw IoError("cannot read " + inQuotes(path) + ": " + ec.message());
  size_ = static_cast<std::size_t>(size);
  if (size_ == 0) {
    data_ = "";
    return;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<std::uint64_t>(st.st_size) == size) {
    installBusHandler();
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    if (willReadAll) flags |= MAP_POPULATE;
#endif
    void* p = ::mmap(nullptr, size_, PROT_READ, flags, fd, 0);
    if (p != MAP_FAILED) {
      slot_ = claimSlot(p, size_);
      if (slot_ >= 0) {
        ::madvise(p, size_, MADV_SEQUENTIAL);
        map_ = p;
        fd_ = fd;
        data_ = static_cast<const char*>(p);
        shrinkMappedForTest(path);
        return;
      }
      ::munmap(p, size_);  // every slot taken: read it instead
    }
  }
  if (fd >= 0) ::close(fd);
  // Not mappable (a special file): read it whole.
  copy_.resize(size_);
  probe.read(copy_.data(), static_cast<std::streamsize>(size_));
  if (static_cast<std::size_t>(probe.gcount()) != size_)
    throw IoError("cannot read " + inQuotes(path) + ": it has fewer bytes than its size said (" +
                  std::to_string(probe.gcount()) + " of " + std::to_string(size_) +
                  "); was it truncated while being read?");
  data_ = copy_.data();
}

MappedFile::~MappedFile() {
  if (slot_ >= 0) {
    gMappings[slot_].end.store(0, std::memory_order_release);
    gMappings[slot_].begin.store(0, std::memory_order_release);
  }
  if (map_) ::munmap(map_, size_);
  if (fd_ >= 0) ::close(fd_);
}

void MappedFile::checkIntact(const std::string& path) const {
  if (!map_) return;
  struct stat st {};
  const bool shrank = ::fstat(fd_, &st) == 0 && static_cast<std::uint64_t>(st.st_size) < size_;
  if (!shrank && gMappings[slot_].faulted.load(std::memory_order_acquire) == 0) return;
  throw IoError(inQuotes(path) + " was truncated while it was being read (" +
                std::to_string(size_) + " bytes when opened" +
                (shrank ? ", " + std::to_string(st.st_size) + " now" : std::string()) +
                "): another program is rewriting it; read it again once it is complete");
}

MatrixF uninitialisedMatrix(std::uint64_t rows, std::uint64_t dim, bool willWriteAll) {
  MatrixF m(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(dim));
  constexpr std::uintptr_t kPage = 4096;
  constexpr std::uint64_t kLarge = std::uint64_t{8} << 20;  // smaller: left as allocated
  const std::uint64_t bytes = rows * dim * sizeof(float);
  if (bytes < kLarge) return m;
  const auto begin = reinterpret_cast<std::uintptr_t>(m.data());
  const std::uintptr_t first = (begin + kPage - 1) & ~(kPage - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kPage - 1);
  void* const from = reinterpret_cast<void*>(first);
  // Advice only: where the kernel refuses, the first writes fault the pages in.
#ifdef MADV_NOHUGEPAGE
  ::madvise(from, last - first, MADV_NOHUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
  if (willWriteAll) ::madvise(from, last - first, MADV_POPULATE_WRITE);
#endif
  return m;
}

FirstOccurrence::FirstOccurrence(std::size_t expected) {
  std::size_t n = 16;
  while (n < 2 * expected) n *= 2;
  slots_.assign(n, 0);
}

bool FirstOccurrence::insert(const std::vector<std::string>& words, std::string_view word,
                             std::size_t id) {
  if (2 * (used_ + 1) > slots_.size()) grow(words);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = std::hash<std::string_view>{}(word)&mask;; i = (i + 1) & mask) {
    if (slots_[i] == 0) {
      slots_[i] = static_cast<std::uint32_t>(id + 1);
      ++used_;
      return true;
    }
    if (words[slots_[i] - 1] == word) return false;
  }
}

void FirstOccurrence::grow(const std::vector<std::string>& words) {
  std::vector<std::uint32_t> old(slots_.size() * 2, 0);
  old.swap(slots_);
  const std::size_t mask = slots_.size() - 1;
  for (std::uint32_t s : old) {
    if (s == 0) continue;
    std::size_t i = std::hash<std::string_view>{}(words[s - 1]) & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

// Writes floats as little-endian bytes, 1 MiB per call. One call for a whole
// matrix (2.4 GB: a dim-300 subword model's 2M bucket rows) reached the file at
// 0.3 to 0.5 GB/s on the project's VM; 256 KiB to 1 MiB calls at 1 to 2.4 GB/s
// (docs/benchmarks-history.md, "earlier Brown ×16 runs").
void writeFloats(std::ostream& out, const float* data, std::size_t n) {
  constexpr std::size_t kChunk = std::size_t{1} << 18;  // floats: 1 MiB
  if constexpr (std::endian::native == std::endian::little) {
    for (std::size_t i = 0; i < n; i += kChunk)
      out.write(reinterpret_cast<const char*>(data + i),
                static_cast<std::streamsize>(std::min(kChunk, n - i) * sizeof(float)));
  } else {
    std::vector<float> buf(std::min(kChunk, n));
    for (std::size_t i = 0; i < n; i += kChunk) {
      const std::size_t k = std::min(kChunk, n - i);
      for (std::size_t j = 0; j < k; ++j) buf[j] = fromLittle(data[i + j]);
      out.write(reinterpret_cast<const char*>(buf.data()),
                static_cast<std::streamsize>(k * sizeof(float)));
    }
  }
}

ChunkReader::ChunkReader(const std::string& path, std::size_t bufferBytes) : path_(path) {
  openForReading(path, in_);
  std::error_code ec;
  size_ = std::filesystem::file_size(path, ec);
  if (ec) throw IoError("cannot read " + inQuotes(path) + ": " + ec.message());
  // No 4 MiB buffer for a small file (the buffer grows when a record needs it):
  // detection and loading open a file several times.
  buf_.resize(static_cast<std::size_t>(std::min<std::uint64_t>(bufferBytes, size_ + 1)));
}

// Moves unread bytes to the front, grows the buffer to hold `need` bytes, reads more.
void ChunkReader::refill(std::size_t need) {
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    base_ += begin_;
    end_ -= begin_;
    begin_ = 0;
  }
  if (need > buf_.size()) buf_.resize(std::max(need, buf_.size() * 2));
  in_.read(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - end_));
  const auto got = static_cast<std::size_t>(in_.gcount());
  if (in_.bad()) throw IoError("error while reading " + inQuotes(path_));
  end_ += got;
  if (got == 0 || in_.eof()) eof_ = true;
}

void checkSavable(const Embeddings& e) {
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (!detail::isValidUtf8(e.words()[i]))
      throw InputError("cannot save word " + std::to_string(i + 1) + " ('" + shown(e.words()[i]) +
                       "'): it is not valid UTF-8");
    const float* row = e.vectors().row(static_cast<Eigen::Index>(i)).data();
    // Branch-free exponent scan (vectorises), as checkFinite: saving is bounded by
    // the disk, not by this check.
    std::uint32_t bad = 0;
    for (std::size_t j = 0; j < e.dim(); ++j) {
      std::uint32_t u;
      std::memcpy(&u, row + j, sizeof u);
      bad |= static_cast<std::uint32_t>((u & 0x7f800000u) == 0x7f800000u);
    }
    if (bad)
      throw InputError("cannot save the vector of '" + shown(e.words()[i]) +
                       "': it contains NaN or infinity (training diverged?)");
  }
}

}  // namespace posvec::detail
