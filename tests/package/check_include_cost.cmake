# Including <libsched/libsched.hpp> stays cheap (docs/packaging.md "Include cost"): a one-line
# translation unit that includes it must (1) pull in no Boost header (Boost.Graph belongs only
# to placement/topology.hpp) and (2) preprocess to at most MAX_BYTES bytes.
# Needs CXX, INCLUDE_DIRS (|-separated), WORK_DIR, MAX_BYTES.
cmake_minimum_required(VERSION 3.16)
file(MAKE_DIRECTORY ${WORK_DIR})
file(WRITE ${WORK_DIR}/include_cost.cpp "#include <libsched/libsched.hpp>\n")
string(REPLACE "|" ";" dirs "${INCLUDE_DIRS}")
set(flags -std=c++20)
foreach(d IN LISTS dirs)
  if(d AND NOT d STREQUAL "/usr/include")  # a system directory as -I breaks libstdc++'s #include_next
    list(APPEND flags -I${d})
  endif()
endforeach()
execute_process(COMMAND ${CXX} ${flags} -E -H ${WORK_DIR}/include_cost.cpp
                OUTPUT_FILE ${WORK_DIR}/include_cost.ii ERROR_VARIABLE headers RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "preprocessing <libsched/libsched.hpp> failed (${rc}): ${headers}")
endif()
# -H prints one line per header opened: dots for the depth, then the path.
string(REGEX MATCHALL "[^\n]*/boost/[^\n]*" boost_headers "${headers}")
if(boost_headers)
  list(LENGTH boost_headers n)
  list(GET boost_headers 0 first)
  message(FATAL_ERROR "<libsched/libsched.hpp> includes ${n} Boost header(s), the first: ${first}")
endif()
file(SIZE ${WORK_DIR}/include_cost.ii bytes)
message(STATUS "<libsched/libsched.hpp> preprocesses to ${bytes} bytes (bound ${MAX_BYTES})")
if(bytes GREATER MAX_BYTES)
  message(FATAL_ERROR "<libsched/libsched.hpp> preprocesses to ${bytes} bytes, more than the bound of ${MAX_BYTES} (docs/packaging.md)")
endif()
