// Ctrl-C and SIGTERM for long commands: the first signal asks the running job to
// stop at its next safe point (it polls requested()), the second exits at once,
// removing the temporary files of unfinished atomic writes. Only the CLI
// installs handlers; the library is asked through TrainObserver::interrupt.
#pragma once

namespace posvec::cli {

class InterruptGuard {
 public:
  // Installs the handlers for SIGINT and SIGTERM; the destructor restores the
  // previous ones. While `immediate` (e.g. the counting pass, which has nothing to
  // save yet) the first signal already exits at once.
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  static void setImmediate(bool immediate);
  // True once a first signal arrived.
  static bool requested();
  // 128 + the first signal's number (130 for SIGINT, 143 for SIGTERM); 0 if none.
  static int exitCode();
};

}  // namespace posvec::cli
