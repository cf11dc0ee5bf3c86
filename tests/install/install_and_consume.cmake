# cmake -P script run by the install.consumer test (see CMakeLists.txt).
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
string(REPLACE "|" ";" prefix_path "${PREFIX_PATH}")
list(PREPEND prefix_path "${prefix}")
if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()

function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${name}: ok\n${out}")
endfunction()

step("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
step("configure consumer" ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
     "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_PREFIX_PATH=${prefix_path}"
     "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
     -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON)
step("build consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("run consumer" "${WORK_DIR}/build/app")
# The command-line program runs from the prefix (a shared build's found no
# libprobkit.so: it had no run path to the prefix's lib).
if(EXISTS "${prefix}/bin/probkit")
  step("run installed probkit" "${prefix}/bin/probkit" --version)
endif()
