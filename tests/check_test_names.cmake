# Fails when a Catch2 test name cannot be one CTest case: catch_discover_tests
# hands the names to CMake as a list, so a ';' splits a test into pieces that
# match nothing (and used to count as passed). Also checks that such a piece
# now fails: the discovered cases run with --warn NoTests.
#   cmake -DTEST_EXECUTABLE=posvec_tests -P check_test_names.cmake
execute_process(COMMAND "${TEST_EXECUTABLE}" --list-test-names-only
                OUTPUT_VARIABLE names RESULT_VARIABLE rc)
# --list-test-names-only exits with the number of tests: 0 means none or a failure.
if(NOT rc GREATER 0)
  message(FATAL_ERROR "'${TEST_EXECUTABLE} --list-test-names-only' listed no tests (exit ${rc})")
endif()
string(FIND "${names}" ";" semicolon)
if(NOT semicolon EQUAL -1)
  # Name the offenders (protecting the ";" from CMake list splitting meanwhile).
  string(REPLACE ";" "<semicolon>" shown "${names}")
  string(REGEX MATCHALL "[^\n]*<semicolon>[^\n]*" bad "${shown}")
  list(JOIN bad "\n  " bad)
  string(REPLACE "<semicolon>" ";" bad "${bad}")
  message(FATAL_ERROR "Catch2 test names must not contain ';' (CTest splits them); rename:\n  ${bad}")
endif()
execute_process(COMMAND "${TEST_EXECUTABLE}" "no test has this name" --warn NoTests
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc_none)
if(rc_none EQUAL 0 OR NOT out MATCHES "No test cases matched")
  message(FATAL_ERROR "a test name that matches nothing passes with --warn NoTests "
                      "(exit ${rc_none}):\n${out}")
endif()
message(STATUS "${rc} Catch2 test names, none with ';'; an unmatched name fails (exit ${rc_none})")
