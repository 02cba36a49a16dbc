// Version macros of libsched. The single source of the version: CMakeLists.txt reads
// project(VERSION) from the three numbers below (docs/stability.md: semantic versioning).
#pragma once
#define LIBSCHED_VERSION_MAJOR 0
#define LIBSCHED_VERSION_MINOR 2
#define LIBSCHED_VERSION_PATCH 0
#define LIBSCHED_VERSION_STRING "0.2.0"
