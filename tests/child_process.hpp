// A CLI run as a child process that a test signals while it works. Every wait
// follows what the child does (a line on its stderr, its exit), never a fixed
// time: on a loaded machine the child is slower and the test waits longer. The
// only bound is the child's own work (it exits when done), and CTest's timeout
// for a child that hangs. Time limits that a test asserts are in CPU seconds
// the child used, which other processes on the machine do not inflate.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"

namespace posvec::test {

class Child {
 public:
  pid_t pid = -1;
  std::string errFile;
  int status = -1;      // exit code (128 + signal), once it exited
  double cpuAtExit = 0;  // user + system CPU seconds, once it exited

  // argv after "posvec"; stderr to `err`, stdin and stdout /dev/null.
  Child(const std::vector<std::string>& args, const std::string& err) : errFile(err) {
    pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 2);
      const int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 0);
      ::dup2(null, 1);
      std::vector<char*> argv{const_cast<char*>(POSVEC_CLI)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(POSVEC_CLI, argv.data());
      ::_exit(127);
    }
  }
  ~Child() {
    if (pid > 0 && status < 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  std::string err() const { return readText(errFile); }

  // Waits until stderr contains `text` (true) or the child exits (then true only
  // if the text came before it exited).
  bool waitFor(const std::string& text) {
    for (;;) {
      if (err().find(text) != std::string::npos) return true;
      if (reap(false)) return err().find(text) != std::string::npos;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  // Waits until `ready()` holds (true) or the child exits (false).
  template <typename F>
  bool waitUntil(F&& ready) {
    for (;;) {
      if (ready()) return true;
      if (reap(false)) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  // The exit code (128 + signal for a signal), waiting as long as the child runs.
  int waitExit() {
    reap(true);
    return status;
  }
  // CPU seconds (user + system) the child used so far, from /proc; -1 if unknown.
  double cpuSeconds() const {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) return -1;
    std::istringstream fields(stat.substr(close + 2));
    std::string f;
    // Fields 3.. after the name; utime and stime are fields 14 and 15.
    for (int i = 3; i < 14 && fields >> f; ++i) {
    }
    unsigned long long utime = 0, stime = 0;
    fields >> utime >> stime;
    return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  // True when the child has `path` open (its /proc/PID/fd links).
  bool hasOpen(const std::string& path) const {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
      std::error_code rl;
      if (fs::read_symlink(e.path(), rl) == fs::path(path)) return true;
    }
    return false;
  }

 private:
  bool reap(bool block) {
    if (status >= 0) return true;
    int st = 0;
    rusage use{};
    if (::wait4(pid, &st, block ? 0 : WNOHANG, &use) != pid) return false;
    status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    cpuAtExit = static_cast<double>(use.ru_utime.tv_sec + use.ru_stime.tv_sec) +
                1e-6 * static_cast<double>(use.ru_utime.tv_usec + use.ru_stime.tv_usec);
    return true;
  }
};

}  // namespace posvec::test
