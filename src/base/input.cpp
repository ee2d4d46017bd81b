#include "input.hpp"
#include "test_seams.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "posvec/error.hpp"

namespace posvec::detail {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBlock = 1 << 16;

// Reads a file descriptor through libarchive when its first bytes are a
// compressed stream, directly otherwise. The first block is read before the
// decision (a pipe cannot be rewound), so it is handed out before the rest.
class InputBuf : public std::streambuf {
 public:
  InputBuf(int fd, bool owned, std::string name) : fd_(fd), owned_(owned), name_(std::move(name)) {
    // A regular file's size when opened: reading must end exactly there, or the
    // file changed under the reader (standard input may start anywhere: not checked).
    struct stat st {};
    if (owned_ && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) openedSize_ = st.st_size;
  }
  ~InputBuf() override {
    if (archive_) archive_read_free(archive_);
    if (owned_) ::close(fd_);
  }
  InputBuf(const InputBuf&) = delete;
  InputBuf& operator=(const InputBuf&) = delete;

  void start() {
    raw_.resize(kBlock);
    // A short read is not the end of a pipe: fill what the magic numbers need.
    while (headSize_ < 6) {
      const std::size_t got = readFd(raw_.data() + headSize_, raw_.size() - headSize_);
      if (got == 0) break;
      headSize_ += got;
    }
    const std::string kind =
        detectCompression(reinterpret_cast<const unsigned char*>(raw_.data()), headSize_);
    if (kind.empty()) {
      setg(raw_.data(), raw_.data(), raw_.data() + headSize_);
      headSize_ = 0;
      return;
    }
    kind_ = kind;
    out_.resize(kBlock);
    archive_ = archive_read_new();
    if (!archive_) throw std::bad_alloc();
    // Only the decompressor the first bytes named: with every filter enabled,
    // libarchive would read a header its bidder refuses as raw bytes, and run a
    // second filter (uudecode, lzma) over decompressed text that happens to look
    // like its input.
    enableFilter(kind);
    archive_read_support_format_raw(archive_);
    archive_read_support_format_empty(archive_);
    if (archive_read_open(archive_, this, nullptr, &InputBuf::readCallback, nullptr) != ARCHIVE_OK)
      fail();
    // The "none" filter at the bottom is always there; ours must sit on it.
    if (archive_filter_count(archive_) < 2) {
      if (!readError_.empty()) throw IoError(readError_);
      throw IoError("cannot decompress '" + name_ + "': corrupt or unsupported compressed file (" +
                    kind_ + " signature, but its header is not valid " + kind_ + ")");
    }
    archive_entry* entry = nullptr;
    const int rc = archive_read_next_header(archive_, &entry);
    if (rc == ARCHIVE_EOF) {
      ended_ = true;
    } else if (rc != ARCHIVE_OK) {
      fail();
    }
    setg(out_.data(), out_.data(), out_.data());
  }

 protected:
  // Large reads (the corpus readers ask for 1 MiB) go straight into the caller's
  // buffer instead of through the get area.
  std::streamsize xsgetn(char* s, std::streamsize n) override {
    std::streamsize done = 0;
    while (done < n) {
      if (gptr() < egptr()) {
        const std::streamsize k = std::min<std::streamsize>(egptr() - gptr(), n - done);
        std::memcpy(s + done, gptr(), static_cast<std::size_t>(k));
        gbump(static_cast<int>(k));
        done += k;
        continue;
      }
      if (ended_) break;
      const auto want = static_cast<std::size_t>(n - done);
      std::size_t got = 0;
      if (archive_) {
        const la_ssize_t k = archive_read_data(archive_, s + done, want);
        if (k < 0) fail();
        got = static_cast<std::size_t>(k);
      } else {
        got = readFd(s + done, want);
      }
      if (got == 0) ended_ = true;
      done += static_cast<std::streamsize>(got);
    }
    return done;
  }

  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (ended_) return traits_type::eof();
    std::size_t got = 0;
    if (archive_) {
      const la_ssize_t n = archive_read_data(archive_, out_.data(), out_.size());
      if (n < 0) fail();
      got = static_cast<std::size_t>(n);
      if (got == 0) ended_ = true;
      setg(out_.data(), out_.data(), out_.data() + got);
    } else {
      got = readFd(raw_.data(), raw_.size());
      if (got == 0) ended_ = true;
      setg(raw_.data(), raw_.data(), raw_.data() + got);
    }
    return got == 0 ? traits_type::eof() : traits_type::to_int_type(*gptr());
  }

 private:
  std::size_t readFd(char* buf, std::size_t n) {
    for (;;) {
      const ssize_t got = ::read(fd_, buf, n);
      if (got >= 0) {
        if (openedSize_ >= 0) {
          rawRead_ += got;
          // Shorter (truncated) or longer (appended to) than when it was opened.
          if ((got == 0 && rawRead_ != openedSize_) || rawRead_ > openedSize_)
            throwChangedWhileReading(name_, fd_, openedSize_);
        }
        return static_cast<std::size_t>(got);
      }
      if (errno == EINTR) continue;
      throw IoError("error while reading '" + name_ + "': " + std::strerror(errno));
    }
  }

  void enableFilter(const std::string& kind) {
    int rc = ARCHIVE_FATAL;
    if (kind == "gzip")
      rc = archive_read_support_filter_gzip(archive_);
    else if (kind == "bzip2")
      rc = archive_read_support_filter_bzip2(archive_);
    else if (kind == "xz")
      rc = archive_read_support_filter_xz(archive_);
    else if (kind == "zstd")
      rc = archive_read_support_filter_zstd(archive_);
    // ARCHIVE_WARN: libarchive will run the external program instead of a library.
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
      throw IoError("cannot decompress '" + name_ + "': this build of libarchive cannot read " +
                    kind + " data; decompress it first");
  }

  static la_ssize_t readCallback(archive*, void* self, const void** buffer) {
    auto* me = static_cast<InputBuf*>(self);
    try {
      *buffer = me->raw_.data();
      if (me->headSize_ > 0) {  // the block read to recognise the format
        const std::size_t n = me->headSize_;
        me->headSize_ = 0;
        return static_cast<la_ssize_t>(n);
      }
      return static_cast<la_ssize_t>(me->readFd(me->raw_.data(), me->raw_.size()));
    } catch (const IoError& e) {
      me->readError_ = e.what();
      return -1;
    }
  }

  [[noreturn]] void fail() {
    if (!readError_.empty()) throw IoError(readError_);
    const char* why = archive_error_string(archive_);
    throw IoError("cannot decompress '" + name_ + "' (" + kind_ +
                  "): " + (why ? why : "corrupt or truncated data"));
  }

  int fd_;
  bool owned_;
  std::string name_;
  std::string kind_;
  std::vector<char> raw_, out_;
  std::size_t headSize_ = 0;
  archive* archive_ = nullptr;
  bool ended_ = false;
  std::string readError_;
  std::int64_t openedSize_ = -1;  // -1: not a regular file
  std::int64_t rawRead_ = 0;      // bytes read from fd_
};

class InputStream : public std::istream {
 public:
  explicit InputStream(std::unique_ptr<InputBuf> buf)
      : std::istream(buf.get()), buf_(std::move(buf)) {
    exceptions(std::ios::badbit);
  }

 private:
  std::unique_ptr<InputBuf> buf_;
};

}  // namespace

void throwChangedWhileReading(const std::string& name, int fd, std::int64_t openedSize) {
  struct stat st {};
  const std::string now =
      ::fstat(fd, &st) == 0 ? std::to_string(st.st_size) + " bytes now" : "its size now unknown";
  throw IoError("'" + name + "' changed while being read (" + std::to_string(openedSize) +
                " bytes when opened, " + now +
                "): another program is writing it; read it once it is complete");
}

std::string inputName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::string detectCompression(const unsigned char* h, std::size_t n) {
  if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b) return "gzip";
  if (n >= 4 && h[0] == 'B' && h[1] == 'Z' && h[2] == 'h' && h[3] >= '1' && h[3] <= '9')
    return "bzip2";
  if (n >= 6 && h[0] == 0xfd && std::memcmp(h + 1, "7zXZ", 4) == 0 && h[5] == 0) return "xz";
  if (n >= 4 && h[0] == 0x28 && h[1] == 0xb5 && h[2] == 0x2f && h[3] == 0xfd) return "zstd";
  return {};
}

std::optional<std::string> fileCompression(const std::string& path) {
  std::ifstream probe(path, std::ios::binary);
  if (!probe) return std::nullopt;
  unsigned char head[8] = {};
  probe.read(reinterpret_cast<char*>(head), sizeof head);
  return detectCompression(head, static_cast<std::size_t>(probe.gcount()));
}

std::unique_ptr<std::istream> openInput(const std::string& path) {
  int fd = STDIN_FILENO;
  const bool stdinput = path == "-";
  if (!stdinput) {
    std::error_code ec;
    const fs::path p(path);
    if (!fs::exists(p, ec)) throw IoError("cannot open '" + path + "': no such file");
    if (fs::is_directory(p, ec)) throw IoError("cannot read '" + path + "': it is a directory");
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
  }
  auto buf = std::make_unique<InputBuf>(fd, !stdinput, inputName(path));
  resizeInputForTest(path);
  buf->start();
  return std::make_unique<InputStream>(std::move(buf));
}

std::vector<std::string> expandCorpusPaths(const std::vector<std::string>& paths, bool recursive,
                                           std::vector<std::string>* skipped) {
  // Directories and files met so far, by (device, inode), with the path they were
  // first met under: a symbolic link cycle ends at its first repeat instead of at
  // the kernel's ELOOP (after reading the tree 40 times), and two ways to one
  // directory or file read it once.
  struct Key {
    dev_t dev;
    ino_t ino;
    bool operator<(const Key& o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
  };
  std::map<Key, std::string> seen;
  auto firstVisit = [&](const std::string& p, const struct stat& st) {
    const auto [it, fresh] = seen.emplace(Key{st.st_dev, st.st_ino}, p);
    if (!fresh && skipped) skipped->push_back("'" + p + "' is '" + it->second + "' again");
    return fresh;
  };
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (path == "-" || !fs::is_directory(path, ec)) {
      out.push_back(path);
      continue;
    }
    std::vector<std::string> files;
    bool subdirectories = false;
    // Depth first, each directory's entries in name order, so the path a repeated
    // directory is kept under does not depend on the order the system lists them.
    std::function<void(const std::string&)> walk = [&](const std::string& dir) {
      std::vector<fs::path> entries;
      try {
        for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path());
      } catch (const fs::filesystem_error& e) {
        throw IoError("cannot list directory '" + dir + "': " + e.code().message());
      }
      std::sort(entries.begin(), entries.end());
      for (const fs::path& e : entries) {
        struct stat st {};
        if (::stat(e.c_str(), &st) != 0) continue;  // a dangling link
        if (S_ISREG(st.st_mode)) {
          if (firstVisit(e.string(), st)) files.push_back(e.string());
        } else if (S_ISDIR(st.st_mode)) {
          subdirectories = true;
          if (recursive && firstVisit(e.string(), st)) walk(e.string());
        }
      }
    };
    struct stat top {};
    if (::stat(path.c_str(), &top) != 0)
      throw IoError("cannot list directory '" + path + "': " + std::strerror(errno));
    seen.clear();  // paths given are read as given, even twice; within one, each once
    firstVisit(path, top);
    walk(path);
    if (files.empty())
      throw InputError("directory '" + path + "' holds no regular files" +
                       (subdirectories && !recursive
                            ? " (only subdirectories, which are read when reading recursively)"
                            : ""));
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

}  // namespace posvec::detail
