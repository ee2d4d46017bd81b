// The posvec executable: everything happens in runCommandLine (posvec.cpp).
#include "cli.hpp"

int main(int argc, char** argv) { return posvec::cli::runCommandLine(argc, argv); }
