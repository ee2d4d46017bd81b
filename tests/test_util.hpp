// Helpers for the tests: temporary directories, running the CLI, shared data.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace posvec::test {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("posvec-test-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  fs::path path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

inline void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct RunResult {
  int status = -1;  // exit code
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the posvec CLI with `args` (already shell-quoted as needed) and captures
// stdout and stderr.
inline RunResult runCli(const std::string& args, const std::string& stdinFile = "") {
  TempDir tmp;
  const std::string outFile = tmp.file("out"), errFile = tmp.file("err");
  std::string cmd = std::string("'") + POSVEC_CLI + "' " + args + " >'" + outFile + "' 2>'" + errFile + "'";
  cmd += stdinFile.empty() ? " </dev/null" : " <'" + stdinFile + "'";
  const int raw = std::system(cmd.c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = readText(outFile);
  r.err = readText(errFile);
  return r;
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Path of a file in ../shared/data, or empty when the shared data is absent
// (users' clones don't have it); callers skip with a message then.
// POSVEC_SHARED_DATA in the environment overrides the default location.
inline std::string sharedData(const std::string& name) {
  const char* env = std::getenv("POSVEC_SHARED_DATA");
  const fs::path p = fs::path(env && *env ? env : POSVEC_SHARED_DATA) / name;
  return fs::exists(p) ? p.string() : std::string();
}

inline std::string sourcePath(const std::string& rel) { return (fs::path(POSVEC_SOURCE_DIR) / rel).string(); }

}  // namespace posvec::test

// Catch2 v2 has no SKIP: warn and leave the test case.
#define POSVEC_SKIP(msg) \
  do {                   \
    WARN("skipped: " << msg); \
    return;              \
  } while (0)
