// Unity builds of the tests: each test file puts its body after its includes in
// `namespace SCHEDSIM_UNITY_ID { ... }`, a namespace unique to the file, so that helpers of the
// same name in two files of one area do not collide when CMAKE_UNITY_BUILD merges the files.
// A build may define SCHEDSIM_UNITY_ID per file; otherwise each use is a fresh name.
#pragma once

#ifndef SCHEDSIM_UNITY_ID
#define SCHEDSIM_UNITY_CAT2(a, b) a##b
#define SCHEDSIM_UNITY_CAT(a, b) SCHEDSIM_UNITY_CAT2(a, b)
#define SCHEDSIM_UNITY_ID SCHEDSIM_UNITY_CAT(schedsim_unity_, __COUNTER__)
#endif
