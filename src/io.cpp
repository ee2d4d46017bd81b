#include "posvec/io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

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

bool isUnder(const fs::path& p, const char* top) {
  auto it = p.begin();
  return it != p.end() && *it == "/" && ++it != p.end() && *it == top;
}
}  // namespace

void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path.empty()) throw IoError("output path is empty");
  fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw IoError("cannot write '" + path + "': it is a directory");
  // Devices, pipes and /dev/stdout-style links are written in place: renaming a
  // temporary file over them would replace the device node or the link itself.
  const fs::path absolute = fs::absolute(target, ec);
  if (isUnder(absolute, "dev") || isUnder(absolute, "proc") ||
      (fs::exists(target, ec) && !fs::is_regular_file(target, ec))) {
    writeInPlace(path, write);
    return;
  }
  // Any other symlink keeps pointing where it did: replace the file it points to.
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    const fs::path resolved = fs::weakly_canonical(target, ec);
    if (!ec) target = resolved;
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw IoError("cannot write '" + path + "': directory '" + dir.string() + "' does not exist");
  std::random_device rd;
  const std::string tmp =
      target.string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  try {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw IoError("cannot write '" + path + "': " + std::strerror(errno));
      write(out);
      out.flush();
      if (!out) throw IoError("error while writing '" + path + "' (disk full?)");
    }
    fs::rename(tmp, target, ec);
    if (ec) throw IoError("cannot replace '" + path + "': " + ec.message());
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
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

void openForReading(const std::string& path, std::ifstream& in) {
  std::error_code ec;
  const fs::path p(path);
  if (!fs::exists(p, ec)) throw IoError("cannot open '" + path + "': no such file");
  if (fs::is_directory(p, ec)) throw IoError("cannot read '" + path + "': it is a directory");
  in.open(path, std::ios::binary);
  if (!in) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
}

std::string readFile(const std::string& path) {
  std::ifstream in;
  openForReading(path, in);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw IoError("error while reading '" + path + "'");
  return ss.str();
}

}  // namespace posvec
