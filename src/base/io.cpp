#include "posvec/io.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "input.hpp"
#include "posvec/error.hpp"

namespace posvec {

namespace fs = std::filesystem;

namespace {
void writeInPlace(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw IoError("cannot write '" + path + "': " + std::strerror(errno));
  write(out);
  out.flush();
  if (!out) throw IoError("error while writing '" + path + "'");
}

// The temporary name of a write to `target` by process `pid`: "OUT.tmp-PID-RAND".
std::string tmpPrefix(const fs::path& target) { return target.filename().string() + ".tmp-"; }

// A process killed during a write (SIGKILL, power loss) leaves its temporary file
// behind. The next write of the same output removes those whose process is gone;
// a live PID (the writer may still be running) keeps its file.
void removeStaleTemporaries(const fs::path& target) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = tmpPrefix(target);
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    // PID, '-', random digits: nothing else is ours.
    const std::string rest = name.substr(prefix.size());
    const std::size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || dash + 1 == rest.size() ||
        rest.find_first_not_of("0123456789", 0) != dash ||
        rest.find_first_not_of("0123456789", dash + 1) != std::string::npos || dash > 9)
      continue;
    const long pid = std::stol(rest.substr(0, dash));
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      std::error_code rm;
      if (fs::is_regular_file(it->symlink_status(rm))) fs::remove(it->path(), rm);
    }
  }
}

// The temporaries being written now, for removeUnfinishedTemporaries: fixed
// storage and atomics only, so a signal handler may read it.
struct TmpSlot {
  std::atomic<bool> taken{false};
  std::atomic<bool> ready{false};
  char path[4096];
};
TmpSlot tmpSlots[16];

// Registers `path` before the file exists; a slot index, or -1 when all are taken
// (or the name is too long) and that write is not covered.
int registerTemporary(const std::string& path) {
  if (path.size() >= sizeof tmpSlots[0].path) return -1;
  for (int i = 0; i < 16; ++i) {
    bool expected = false;
    if (tmpSlots[i].taken.compare_exchange_strong(expected, true)) {
      std::memcpy(tmpSlots[i].path, path.c_str(), path.size() + 1);
      tmpSlots[i].ready.store(true);
      return i;
    }
  }
  return -1;
}

void releaseTemporary(int slot) {
  if (slot < 0) return;
  tmpSlots[slot].ready.store(false);
  tmpSlots[slot].taken.store(false);
}

bool isUnder(const fs::path& p, const char* top) {
  auto it = p.begin();
  return it != p.end() && *it == "/" && ++it != p.end() && *it == top;
}
}  // namespace

namespace {

// One output of a transaction: where it goes and how it is written.
struct Planned {
  const AtomicWrite* file;
  fs::path target;  // after following a symlink
  bool inPlace;     // a device, pipe or /dev/stdout-style link
  std::string tmp;  // temporary name, once created
  bool renamed = false;
  std::string kept;  // the old target's second name, while a rename may be undone
  int slot = -1;  // in tmpSlots while the temporary exists
};

Planned plan(const AtomicWrite& file) {
  const std::string& path = file.path;
  if (path.empty()) throw IoError("output path is empty");
  fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw IoError("cannot write '" + path + "': it is a directory");
  // Devices, pipes and /dev/stdout-style links are written in place: renaming a
  // temporary file over them would replace the device node or the link itself.
  // A name under /dev that does not exist is an ordinary file (so a failed
  // write leaves nothing there).
  const fs::path absolute = fs::absolute(target, ec);
  const bool exists = fs::exists(fs::symlink_status(target, ec));
  if ((exists && (isUnder(absolute, "dev") || isUnder(absolute, "proc"))) ||
      (fs::exists(target, ec) && !fs::is_regular_file(target, ec)))
    return Planned{&file, target, true, {}, false, {}, -1};
  // Any other symlink keeps pointing where it did: replace the file it points to.
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    const fs::path resolved = fs::weakly_canonical(target, ec);
    if (!ec) target = resolved;
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw IoError("cannot write '" + path + "': directory '" + dir.string() + "' does not exist");
  return Planned{&file, target, false, {}, false, {}, -1};
}

}  // namespace

void writeFilesAtomically(const std::vector<AtomicWrite>& files) {
  std::vector<Planned> plans;
  plans.reserve(files.size());
  for (const AtomicWrite& f : files) plans.push_back(plan(f));
  std::random_device rd;
  try {
    // Every regular file goes to a temporary first; devices are written after all
    // of them succeeded, renames come last.
    for (Planned& p : plans) {
      if (p.inPlace) continue;
      removeStaleTemporaries(p.target);
      const fs::path dir = p.target.has_parent_path() ? p.target.parent_path() : fs::path(".");
      p.tmp = (dir / tmpPrefix(p.target)).string() + std::to_string(::getpid()) + "-" +
              std::to_string(rd());
      p.slot = registerTemporary(p.tmp);
      std::ofstream out(p.tmp, std::ios::binary | std::ios::trunc);
      if (!out) {
        const int err = errno;
        p.tmp.clear();  // not created
        throw IoError("cannot write '" + p.file->path + "': " + std::strerror(err));
      }
      p.file->write(out);
      out.flush();
      if (!out) throw IoError("error while writing '" + p.file->path + "' (disk full?)");
    }
    for (const Planned& p : plans)
      if (p.inPlace) writeInPlace(p.file->path, p.file->write);
    // Before a rename that a later one could undo, the old file gets a second
    // name (a hard link, a copy where links are refused), so a failed later rename
    // can put it back: the set changes entirely or not at all.
    std::size_t last = plans.size();
    for (std::size_t i = 0; i < plans.size(); ++i)
      if (!plans[i].inPlace) last = i;
    for (std::size_t i = 0; i < plans.size(); ++i) {
      Planned& p = plans[i];
      if (p.inPlace || i == last) continue;
      std::error_code ec;
      if (!fs::is_regular_file(fs::symlink_status(p.target, ec))) continue;
      // Named like a temporary, so one a killed process leaves is removed later.
      const fs::path dir = p.target.has_parent_path() ? p.target.parent_path() : fs::path(".");
      const std::string keep = (dir / tmpPrefix(p.target)).string() +
                               std::to_string(::getpid()) + "-" + std::to_string(rd());
      p.kept = keep;  // removed by the rollback if the copy fails half-way
      if (::link(p.target.c_str(), keep.c_str()) != 0) {
        fs::copy_file(p.target, keep, fs::copy_options::overwrite_existing, ec);
        if (ec) throw IoError("cannot keep a copy of '" + p.file->path + "': " + ec.message());
      }
    }
    for (Planned& p : plans) {
      if (p.inPlace) continue;
      std::error_code ec;
      fs::rename(p.tmp, p.target, ec);
      if (ec) throw IoError("cannot replace '" + p.file->path + "': " + ec.message());
      p.renamed = true;
      releaseTemporary(p.slot);
      p.slot = -1;
    }
    for (const Planned& p : plans) {
      std::error_code ec;
      if (!p.kept.empty()) fs::remove(p.kept, ec);
    }
  } catch (...) {
    // Nothing of a failed transaction stays: its temporaries, and the files it
    // already renamed into place go back to what they were (removed when they
    // did not exist), so no mismatched set remains.
    std::error_code ec;
    for (const Planned& p : plans) {
      if (p.renamed) {
        if (p.kept.empty())
          fs::remove(p.target, ec);
        else
          fs::rename(p.kept, p.target, ec);
      } else {
        if (!p.tmp.empty()) fs::remove(p.tmp, ec);
        if (!p.kept.empty()) fs::remove(p.kept, ec);
      }
      releaseTemporary(p.slot);
    }
    throw;
  }
}

void removeUnfinishedTemporaries() noexcept {
  for (TmpSlot& slot : tmpSlots)
    if (slot.ready.load()) ::unlink(slot.path);
}

void writeToPathOrStdout(const std::string& path,
                         const std::function<void(std::ostream&)>& write) {
  if (path.empty() || path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw IoError("cannot write to standard output");
    return;
  }
  writeFileAtomically(path, write);
}

void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  writeFilesAtomically({AtomicWrite{path, write}});
}

void openForReading(const std::string& path, std::ifstream& in) {
  std::error_code ec;
  const fs::path p(path);
  if (!fs::exists(p, ec)) throw IoError("cannot open '" + path + "': no such file");
  if (fs::is_directory(p, ec)) throw IoError("cannot read '" + path + "': it is a directory");
  in.open(path, std::ios::binary);
  if (!in) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
}

std::string readFile(const std::string& path) {
  return readFile(path, 0, "file");
}

std::string readFile(const std::string& path, std::uint64_t maxBytes, const std::string& what) {
  const auto in = detail::openInput(path);
  std::string text;
  std::vector<char> buf(1 << 16);
  while (*in) {
    in->read(buf.data(), static_cast<std::streamsize>(buf.size()));
    text.append(buf.data(), static_cast<std::size_t>(in->gcount()));
    // Stops at the limit: a device without end or a decompression bomb costs no more.
    if (maxBytes > 0 && text.size() > maxBytes)
      throw InputError("'" + detail::inputName(path) + "' holds more than " +
                       std::to_string(maxBytes >> 20) + " MiB" +
                       (detail::fileCompression(path).value_or("").empty() ? ""
                                                                            : " once decompressed") +
                       ", more than a " + what + " may (is it the right file?)");
  }
  return text;
}

}  // namespace posvec
