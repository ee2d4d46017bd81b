// Test seams: the two points where a test changes a file under its reader without
// a race. The library's own definitions (test_seams.cpp, weak symbols) do nothing
// and read no environment; test programs link tests/support/seams.cpp, whose
// definitions replace them (POSVEC_TEST_RESIZE_INPUT, POSVEC_TEST_SHRINK_MAPPED).
// So the posvec users run never truncates a file because of a variable it was
// started with.
#pragma once

#include <string>

namespace posvec::detail {

// Right after an input file's size is taken when it is opened: a test program
// truncates or extends it to a size it was told.
void resizeInputForTest(const std::string& path);

// Right after a vectors file is mapped: a test program truncates it.
void shrinkMappedForTest(const std::string& path);

}  // namespace posvec::detail
