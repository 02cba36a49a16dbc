# The installed package as its users see it (PREFIX comes from the package_install fixture):
#  1. configures, builds and runs (under CTest) the consumer project in tests/consumer with
#     find_package(libsched);
#  2. PREFIX/bin/schedsim --version prints "schedsim VERSION (libsched VERSION)";
#  3. pkg-config --cflags libsched (PKG_CONFIG_PATH=PREFIX/LIBDIR/pkgconfig) gives -std=c++20
#     and the installed include directory, and tests/consumer/main.cpp compiled and linked
#     with exactly `pkg-config --cflags --libs libsched` runs.
cmake_minimum_required(VERSION 3.16)
include(${CMAKE_CURRENT_LIST_DIR}/../package/pkg_flags.cmake)
file(REMOVE_RECURSE ${WORK_DIR})

# 1. CMake package
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build
                        -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer configure failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer build failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --output-on-failure WORKING_DIRECTORY ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer tests failed: ${rc}")
endif()

# 2. the installed schedsim
execute_process(COMMAND ${PREFIX}/bin/schedsim --version OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(rc OR NOT out STREQUAL "schedsim ${VERSION} (libsched ${VERSION})\n")
  message(FATAL_ERROR "PREFIX/bin/schedsim --version: exit ${rc}, printed \"${out}\"; expected \"schedsim ${VERSION} (libsched ${VERSION})\"")
endif()

# 3. pkg-config
pkg_flags(cflags --cflags)
if(NOT "-std=c++20" IN_LIST cflags)
  message(FATAL_ERROR "pkg-config --cflags libsched lacks -std=c++20: ${cflags}")
endif()
set(found_include OFF)
foreach(f IN LISTS cflags)
  if(f MATCHES "^-I(.*)$")
    get_filename_component(dir "${CMAKE_MATCH_1}" REALPATH)
    get_filename_component(want "${PREFIX}/include" REALPATH)
    if(dir STREQUAL want)
      set(found_include ON)
    endif()
  endif()
endforeach()
if(NOT found_include)
  message(FATAL_ERROR "pkg-config --cflags libsched lacks -I${PREFIX}/include: ${cflags}")
endif()
pkg_flags(libs --libs)
execute_process(COMMAND ${CXX} ${cflags} ${SOURCE_DIR}/tests/consumer/main.cpp ${libs} -o ${WORK_DIR}/pc_consumer
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "one-file compile with pkg-config flags failed (${rc}): ${CXX} ${cflags} main.cpp ${libs}")
endif()
execute_process(COMMAND ${WORK_DIR}/pc_consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer built with pkg-config flags failed: ${rc}")
endif()
