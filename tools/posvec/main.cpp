// The posvec executable: everything happens in runCommandLine (posvec.cpp).
#include <cstdio>
#include <cstdlib>

#include "cli.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // A fixed trim threshold: by default glibc raises it after a large block is
  // freed (the word-counting table), then keeps megabytes of freed heap for the
  // rest of a training run, beside the matrices.
  mallopt(M_TRIM_THRESHOLD, 1 << 20);
#endif
  try {
    return posvec::cli::runCommandLine(argc, argv);
  } catch (const posvec::cli::ExitNow& e) {
    // The only place the command line ends the process itself.
    std::fflush(nullptr);
    if (e.immediate) std::_Exit(e.code);
    return e.code;
  }
}
