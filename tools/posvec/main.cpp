// The posvec executable: everything happens in runCommandLine (posvec.cpp).
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
  return posvec::cli::runCommandLine(argc, argv);
}
