# examples/custom-policy, an out-of-tree placement policy, through the full simulator against
# the installed package (PREFIX from the package_install fixture):
#  1. configures and builds the example with find_package(libsched COMPONENTS schedsim);
#  2. `my-schedsim run` on the example scenario, which chooses `prefer-highest-node-id` by
#     name, and on the same scenario with `best-fit`: the `nodes` column of tasks.csv differs,
#     and the custom run's first gang is on the highest-numbered node;
#  3. `my-schedsim validate` on the scenario with an unregistered name exits 2 and lists the
#     registered names, the custom one included; the stock PREFIX/bin/schedsim refuses the
#     custom name (exit 2): the registry handed to sim::cli_main is what the validator uses.
cmake_minimum_required(VERSION 3.16)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(example ${SOURCE_DIR}/examples/custom-policy)

execute_process(COMMAND ${CMAKE_COMMAND} -S ${example} -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${PREFIX}
                        -DCMAKE_BUILD_TYPE=Release RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "examples/custom-policy: configure failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "examples/custom-policy: build failed: ${rc}")
endif()
set(exe ${WORK_DIR}/build/my-schedsim)

file(READ ${example}/scenario.json scenario)
string(FIND "${scenario}" "\"placement\": \"prefer-highest-node-id\"" at)
if(at EQUAL -1)
  message(FATAL_ERROR "examples/custom-policy/scenario.json does not choose prefer-highest-node-id by name")
endif()
string(REPLACE "\"placement\": \"prefer-highest-node-id\"" "\"placement\": \"best-fit\"" best_fit "${scenario}")
string(REPLACE "\"placement\": \"prefer-highest-node-id\"" "\"placement\": \"no-such-policy\"" unknown "${scenario}")
file(WRITE ${WORK_DIR}/best-fit.json "${best_fit}")
file(WRITE ${WORK_DIR}/unknown.json "${unknown}")

# The `nodes` column of a tasks.csv, one list item per attempt, a gang's nodes joined with '+'
# (the example's rows have no quoted fields).
function(nodes_column csv out)
  file(READ ${csv} text)
  string(REPLACE ";" "+" text "${text}")  # replicas of a gang, joined with ';' in the file
  string(REPLACE "\n" ";" rows "${text}")
  list(GET rows 0 header)
  string(REPLACE "," ";" header "${header}")
  list(FIND header nodes col)
  if(col EQUAL -1)
    message(FATAL_ERROR "${csv}: no `nodes` column")
  endif()
  list(REMOVE_AT rows 0)
  set(nodes "")
  foreach(row IN LISTS rows)
    if(row STREQUAL "")
      continue()
    endif()
    string(REPLACE "," ";" cells "${row}")
    list(GET cells ${col} n)
    list(APPEND nodes "${n}")
  endforeach()
  set(${out} "${nodes}" PARENT_SCOPE)
endfunction()

foreach(run custom best-fit)
  if(run STREQUAL "custom")
    set(file ${example}/scenario.json)
  else()
    set(file ${WORK_DIR}/best-fit.json)
  endif()
  execute_process(COMMAND ${exe} run ${file} --out ${WORK_DIR}/out-${run} --no-progress
                  OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "my-schedsim run ${file}: exit ${rc}: ${err}")
  endif()
  nodes_column(${WORK_DIR}/out-${run}/tasks.csv nodes_${run})
endforeach()
message(STATUS "prefer-highest-node-id: ${nodes_custom}")
message(STATUS "best-fit:               ${nodes_best-fit}")
if(nodes_custom STREQUAL nodes_best-fit)
  message(FATAL_ERROR "the custom policy placed exactly like best-fit: ${nodes_custom}")
endif()
list(GET nodes_custom 0 first)
if(NOT first MATCHES "^a100-3(\\+a100-3)*$")
  message(FATAL_ERROR "prefer-highest-node-id: the first gang is on ${first}, not on the last node a100-3")
endif()

execute_process(COMMAND ${exe} validate ${WORK_DIR}/unknown.json OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "my-schedsim validate with an unknown placement: exit ${rc}, expected 2: ${err}")
endif()
if(NOT err MATCHES "scheduler\\.placement: \"no-such-policy\": must be one of .*`prefer-highest-node-id`")
  message(FATAL_ERROR "my-schedsim validate: the error does not list the registered custom policy: ${err}")
endif()
execute_process(COMMAND ${PREFIX}/bin/schedsim validate ${example}/scenario.json OUTPUT_QUIET ERROR_VARIABLE err
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "the stock schedsim accepted the custom policy name: exit ${rc}")
endif()
