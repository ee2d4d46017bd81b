#include "interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "posvec/io.hpp"

namespace posvec::cli {

namespace {

std::atomic<int> firstSignal{0};
std::atomic<bool> immediate{false};
struct sigaction previousInt, previousTerm;

void say(const char* text) {
  // write(2) is async-signal-safe; a failed write has nowhere to be reported.
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, text, std::strlen(text));
}

extern "C" void onSignal(int sig) {
  int expected = 0;
  if (!immediate.load() && firstSignal.compare_exchange_strong(expected, sig)) {
    say("\nposvec: stopping at the next safe point to save the training state "
        "(press Ctrl-C again to quit at once, saving nothing)\n");
    return;
  }
  removeUnfinishedTemporaries();
  say("\nposvec: interrupted, nothing saved\n");
  ::_exit(128 + sig);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  firstSignal.store(0);
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, &previousInt);
  ::sigaction(SIGTERM, &action, &previousTerm);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &previousInt, nullptr);
  ::sigaction(SIGTERM, &previousTerm, nullptr);
}

void InterruptGuard::setImmediate(bool on) { immediate.store(on); }

bool InterruptGuard::requested() { return firstSignal.load() != 0; }

int InterruptGuard::exitCode() {
  const int sig = firstSignal.load();
  return sig == 0 ? 0 : 128 + sig;
}

}  // namespace posvec::cli
