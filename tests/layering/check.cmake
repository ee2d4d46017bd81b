# Compiles one include in the context of one stage of src/ (its stage include tree
# and private folders, as CMakeLists.txt gives them) and checks that it compiles
# exactly when the header belongs to that stage or a stage below it.
#   cmake -DCXX=... -DBINARY_DIR=... -DSOURCE_DIR=... -DSTAGE=text -DHEADER=posvec/trainer.hpp
#         -DEXPECT=fail|pass "-DEXTRA_INCLUDES=..." -P check.cmake
set(src ${BINARY_DIR}/layering-${STAGE}.cpp)
file(WRITE ${src} "#include \"${HEADER}\"\nint posvecLayeringProbe() { return 0; }\n")
set(flags -std=c++20 -fsyntax-only -fopenmp -I${BINARY_DIR}/stage-include/${STAGE})
string(REPLACE "," ";" BELOW "${BELOW}")
string(REPLACE "," ";" EXTRA_INCLUDES "${EXTRA_INCLUDES}")
foreach(dir ${BELOW})
  list(APPEND flags -I${SOURCE_DIR}/src/${dir})
endforeach()
foreach(dir ${EXTRA_INCLUDES})
  list(APPEND flags -isystem ${dir})
endforeach()
execute_process(COMMAND ${CXX} ${flags} ${src} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(EXPECT STREQUAL "fail" AND rc EQUAL 0)
  message(FATAL_ERROR "${HEADER} compiled inside stage ${STAGE}: the stage include tree lets an upward include through")
elseif(EXPECT STREQUAL "fail" AND NOT err MATCHES "No such file|file not found")
  message(FATAL_ERROR "${HEADER} failed inside stage ${STAGE} for another reason than a missing header:\n${err}")
elseif(EXPECT STREQUAL "pass" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "${HEADER} did not compile inside stage ${STAGE}:\n${err}")
endif()
message(STATUS "${STAGE} including ${HEADER}: ${EXPECT}s as expected")
