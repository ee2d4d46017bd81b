# Builds and runs the consumer program (main.cpp) against posvec the ways a user
# would, one way per MODE:
#   install     find_package(posvec) in an install prefix
#   build-tree  find_package(posvec) with -Dposvec_DIR=<build tree>, nothing installed
#   pkg-config  the compiler alone, with pkg-config --cflags --libs posvec (installed .pc)
#   plain       the compiler alone, with no posvec flags but include and library paths
#               (Eigen's alignment must still match the library's: this crashed with a
#               double free when the library was built with -march=native)
#   eigen-first a file that includes Eigen before posvec without those definitions must
#               not compile
if(NOT MODE)
  set(MODE install)
endif()
set(work ${BINARY_DIR}/consumer-${MODE})
set(prefix ${work}/prefix)
set(cbuild ${work}/build)
file(REMOVE_RECURSE ${work})
file(MAKE_DIRECTORY ${work})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "${MODE}: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "install" OR MODE STREQUAL "pkg-config")
  run("installing" ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${prefix})
endif()

if(MODE STREQUAL "install" OR MODE STREQUAL "build-tree")
  if(MODE STREQUAL "install")
    set(find -DCMAKE_PREFIX_PATH=${prefix})
  else()
    set(find -Dposvec_DIR=${BINARY_DIR})
  endif()
  run("configuring the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${cbuild}
      ${find} -DCMAKE_BUILD_TYPE=Release)
  run("building the consumer" ${CMAKE_COMMAND} --build ${cbuild})
  set(exe ${cbuild}/consumer)
elseif(MODE STREQUAL "pkg-config")
  find_program(PKG_CONFIG pkg-config)
  if(NOT PKG_CONFIG)
    message(FATAL_ERROR "pkg-config is not installed (tools/scripts/setup.sh installs it)")
  endif()
  file(GLOB pc ${prefix}/*/pkgconfig/posvec.pc ${prefix}/*/*/pkgconfig/posvec.pc)
  if(NOT pc)
    message(FATAL_ERROR "no posvec.pc installed under ${prefix}")
  endif()
  get_filename_component(pcdir ${pc} DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${pcdir})
  run("pkg-config" ${PKG_CONFIG} --cflags --libs posvec)
  string(STRIP "${out}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(exe ${work}/consumer)
  run("compiling with pkg-config's flags" ${CXX} -std=c++20 -O2 ${SOURCE_DIR}/tests/consumer/main.cpp
      ${flags} -o ${exe})
elseif(MODE STREQUAL "plain")
  list(GET EIGEN_INCLUDE 0 eigen)
  set(exe ${work}/consumer)
  run("compiling without posvec's flags" ${CXX} -std=c++20 -O2 -I${SOURCE_DIR}/include -I${eigen}
      ${SOURCE_DIR}/tests/consumer/main.cpp ${BINARY_DIR}/libposvec.a -fopenmp -licui18n -licuuc
      -larchive -o ${exe})
elseif(MODE STREQUAL "eigen-first")
  # Eigen included before posvec, without the definitions: Eigen has chosen a
  # smaller alignment already, and the compiler must refuse, naming the fix.
  list(GET EIGEN_INCLUDE 0 eigen)
  file(WRITE ${work}/eigen_first.cpp "#include <Eigen/Core>\n#include <posvec/posvec.hpp>\nint main() {}\n")
  execute_process(COMMAND ${CXX} -std=c++20 -I${SOURCE_DIR}/include -I${eigen} -c ${work}/eigen_first.cpp
                  -o ${work}/eigen_first.o RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc)
    message(FATAL_ERROR "eigen-first: compiled with Eigen's default alignment")
  endif()
  if(NOT err MATCHES "posvec needs Eigen's alignment at 64 bytes")
    message(FATAL_ERROR "eigen-first: failed without posvec's message:\n${err}")
  endif()
  message(STATUS "eigen-first: refused as expected")
  return()
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()

run("running the consumer" ${exe})
message(STATUS "${MODE}: ${out}")
