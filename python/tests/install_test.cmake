# ctest `python_install` (docs/python.md "Installing"): `cmake --install` of the python component
# into a fresh PREFIX, then what a user sees: the files in PREFIX/SITE, `python3 -m pip show
# schedsim` (name, version, Requires: pandas, location) and `import schedsim` from outside the
# build tree, both with PYTHONPATH=PREFIX/SITE; and the directory the configured install prefix
# gets (INSTALL_PREFIX/SITE) is on python3's own sys.path when that prefix is /usr/local or /usr.
cmake_minimum_required(VERSION 3.16)
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${PREFIX} --component python
                OUTPUT_QUIET RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "cmake --install ${BINARY_DIR} --prefix ${PREFIX} --component python failed: ${rc}")
endif()
set(site ${PREFIX}/${SITE})
file(GLOB module ${site}/schedsim/_schedsim*.so)
foreach(f schedsim/__init__.py schedsim-${VERSION}.dist-info/METADATA schedsim-${VERSION}.dist-info/RECORD)
  if(NOT EXISTS ${site}/${f})
    message(FATAL_ERROR "not installed: PREFIX/${SITE}/${f}")
  endif()
endforeach()
if(NOT module)
  message(FATAL_ERROR "not installed: PREFIX/${SITE}/schedsim/_schedsim*.so")
endif()
file(GLOB other RELATIVE ${PREFIX} ${PREFIX}/*)
if(NOT other STREQUAL "lib")
  message(FATAL_ERROR "the python component installed more than the package: ${other}")
endif()

# pip sees it (run from a temporary folder: neither the source nor the build tree is on sys.path).
set(work ${PREFIX}-work)
file(MAKE_DIRECTORY ${work})
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${site} ${PYTHON} -m pip show schedsim
                WORKING_DIRECTORY ${work} OUTPUT_VARIABLE show ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "python3 -m pip show schedsim failed (${rc}): ${show}${err}")
endif()
foreach(line "Name: schedsim" "Version: ${VERSION}" "Requires: pandas" "Location: ${site}" "License: Apache-2.0")
  string(FIND "${show}" "${line}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "pip show schedsim lacks '${line}':\n${show}")
  endif()
endforeach()

# The installed package imports and runs (a decision of the scheduler), from the prefix.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${site} ${PYTHON} -c
          "import schedsim; c = schedsim.Cluster(); c.add_node('n', c.add_pool('p'), 'A100', 8, 96000, 1024); print(schedsim.__file__); print(schedsim.__version__, len(c))"
  WORKING_DIRECTORY ${work} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc OR NOT out STREQUAL "${site}/schedsim/__init__.py\n${VERSION} 1\n")
  message(FATAL_ERROR "import of the installed schedsim failed (${rc}):\n${out}${err}")
endif()

# The default destination is one the system interpreter searches.
if(INSTALL_PREFIX STREQUAL "/usr/local" OR INSTALL_PREFIX STREQUAL "/usr")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH ${PYTHON} -c "import sys; print('\\n'.join(sys.path))"
                  WORKING_DIRECTORY ${work} OUTPUT_VARIABLE path RESULT_VARIABLE rc)
  string(REPLACE "\n" ";" path "${path}")
  if(rc OR NOT "${INSTALL_PREFIX}/${SITE}" IN_LIST path)
    message(FATAL_ERROR "${INSTALL_PREFIX}/${SITE} (cmake --install's default) is not on ${PYTHON}'s sys.path: ${path}")
  endif()
endif()
file(REMOVE_RECURSE ${work})
