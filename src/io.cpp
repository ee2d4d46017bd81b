#include "posvec/io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "posvec/error.hpp"

namespace posvec {

namespace fs = std::filesystem;

void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path.empty()) throw IoError("output path is empty");
  const fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw IoError("cannot write '" + path + "': it is a directory");
  // A device or pipe (/dev/null, /dev/stdout, a FIFO) is written in place: renaming
  // a temporary file over it would replace the device node itself.
  if (fs::exists(target, ec) && !fs::is_regular_file(target, ec)) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw IoError("cannot write '" + path + "': " + std::strerror(errno));
    write(out);
    out.flush();
    if (!out) throw IoError("error while writing '" + path + "'");
    return;
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw IoError("cannot write '" + path + "': directory '" + dir.string() + "' does not exist");
  std::random_device rd;
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
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
