# Read by CTest after the Catch2 discovery file: the slowest discovered cases start
# first, so that on a fresh build (no CTest timing history yet) none of them starts
# last and leaves the other cores idle while it finishes. CTest ignores names that a
# build lacks. (The slow tests added with add_test get their COST in CMakeLists.txt.)
set_tests_properties(
  "interrupt SIGINT saves a checkpoint inside an epoch and the printed command finishes the same training bitwise"
  "input: gzip, bzip2, xz and zstd corpora read as their text"
  "report: the page passes the headless Chromium check"
  "no such test"
  PROPERTIES COST 1000)
