// Version macros of libsched (kept in step with project(VERSION) in CMakeLists.txt).
#pragma once
#define LIBSCHED_VERSION_MAJOR 0
#define LIBSCHED_VERSION_MINOR 1
#define LIBSCHED_VERSION_PATCH 0
#define LIBSCHED_VERSION_STRING "0.1.0"
