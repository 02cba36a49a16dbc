// Unity builds (CMAKE_UNITY_BUILD, on by default: docs/packaging.md "Build time") compile the
// test files of one area in batches, several .cpp files in one translation unit. Each test file
// therefore wraps everything after its includes in `namespace SCHEDSIM_UNITY_ID { ... }`, so
// that two files' helpers of the same name (and their `using` declarations) never meet. CMake
// defines SCHEDSIM_UNITY_ID to a name unique to each file of a batch (target property
// UNITY_BUILD_UNIQUE_ID, tests/CMakeLists.txt); outside a unity build it is this fallback.
// The `unity_safe` test (tests/layers/unity_safe_test.sh) checks that every test file does so.
#pragma once

#ifndef SCHEDSIM_UNITY_ID
#define SCHEDSIM_UNITY_ID schedsim_test_file
#endif
