// Helpers for the tests: temporary directories, running the CLI, shared data.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>

namespace posvec::test {

// True in the AddressSanitizer builds of the test command, where a few tests run
// fewer of their thread and block combinations (every combination runs in Release).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

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
// Runs a shell command line, capturing its stdout and stderr.
inline RunResult runShell(const std::string& command, const std::string& stdinFile = "") {
  TempDir tmp;
  const std::string outFile = tmp.file("out"), errFile = tmp.file("err");
  std::string cmd = command + " >'" + outFile + "' 2>'" + errFile + "'";
  cmd += stdinFile.empty() ? " </dev/null" : " <'" + stdinFile + "'";
  const int raw = std::system(cmd.c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = readText(outFile);
  r.err = readText(errFile);
  return r;
}

// `env`: "NAME=value ..." assignments for the command's environment.
inline RunResult runCli(const std::string& args, const std::string& stdinFile = "",
                        const std::string& env = "") {
  return runShell((env.empty() ? std::string() : env + " ") + "'" + POSVEC_CLI + "' " + args,
                  stdinFile);
}

// The command line built with the test seams (tests/support/seams.cpp): the one
// program that honours POSVEC_TEST_RESIZE_INPUT and POSVEC_TEST_SHRINK_MAPPED.
inline RunResult runSeamsCli(const std::string& args, const std::string& env) {
  return runShell(env + " '" + POSVEC_SEAMS_CLI + "' " + args);
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

// cos(PE[p], PE[q]) of the sinusoidal encoding in closed form: every (sin, cos) column
// pair of frequency w_k contributes sin(pw)sin(qw) + cos(pw)cos(qw) = cos((p - q)w),
// and every row has norm sqrt(d/2), so the cosine is (2/d) sum_k cos((p - q) w_k) with
// w_k = 10000^(-2k/d) (standard interleaved/concatenated, exponentScale 2) or
// 10000^(-4k/d) (the study's loop that uses i = 2k as the exponent's k, exponentScale 4).
// For p = 2, q = 10, d = 512 this gives 0.7225201 (standard) and 0.8600013 (the study's).
inline double peCosineClosedForm(long long distance, std::size_t d, int exponentScale) {
  long double sum = 0;
  for (std::size_t k = 0; k < d / 2; ++k)
    sum += std::cos(static_cast<long double>(distance) *
                    std::pow(10000.0L, -static_cast<long double>(exponentScale) * k / d));
  return static_cast<double>(2.0L * sum / static_cast<long double>(d));
}

inline std::string sourcePath(const std::string& rel) { return (fs::path(POSVEC_SOURCE_DIR) / rel).string(); }

}  // namespace posvec::test

namespace posvec::test {

// The exit code that marks a skipped test, or 0 when skips cannot end the process.
// CTest runs one test case per process with POSVEC_SKIP_EXIT_CODE set (CMakeLists.txt)
// and counts that code as "Skipped" (SKIP_RETURN_CODE); the test binary run directly
// runs all test cases in one process and must go on after a skip.
inline int skipExitCode() {
  const char* env = std::getenv("POSVEC_SKIP_EXIT_CODE");
  return env && *env ? std::atoi(env) : 0;
}

}  // namespace posvec::test

// Catch2 v2 has no SKIP. Under CTest: print the reason and exit with the skip code
// (CTest reports "Skipped"; the reason shows with ctest -V). Run
// directly: warn with the reason and leave the test case, the others still run.
#define POSVEC_SKIP(msg)                                                   \
  do {                                                                     \
    std::ostringstream posvecSkipReason_;                                  \
    posvecSkipReason_ << msg;                                              \
    if (const int posvecSkipCode_ = posvec::test::skipExitCode()) {        \
      std::cout << "skipped: " << posvecSkipReason_.str() << std::endl;    \
      std::_Exit(posvecSkipCode_);                                         \
    }                                                                      \
    WARN("skipped: " << posvecSkipReason_.str());                          \
    return;                                                                \
  } while (0)
