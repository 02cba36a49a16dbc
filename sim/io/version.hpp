// Version of the schedsim simulator (`schedsim --version`).
#pragma once

namespace sim {

/// The simulator's version, "MAJOR.MINOR.PATCH": released together with libsched, so the same
/// as LIBSCHED_VERSION_STRING (libsched/version.hpp).
const char* version();

}  // namespace sim
