# Fixture of the package tests: installs the build tree BINARY_DIR into a fresh PREFIX, as a
# user would (`cmake --install build --prefix PREFIX`).
cmake_minimum_required(VERSION 3.16)
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${PREFIX} OUTPUT_QUIET RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "cmake --install ${BINARY_DIR} --prefix ${PREFIX} failed: ${rc}")
endif()
foreach(f bin/schedsim include/libsched/libsched.hpp include/libsched/placement/topology.hpp
          include/schedsim/sim/cli/cli.hpp ${LIBDIR}/libsched.a ${LIBDIR}/pkgconfig/libsched.pc
          ${LIBDIR}/cmake/libsched/libschedConfig.cmake share/doc/libsched/LICENSE)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: PREFIX/${f}")
  endif()
endforeach()
