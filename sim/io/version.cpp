// Version string of the schedsim simulator (same as libsched's).
#include "sim/io/version.hpp"

#include "libsched/version.hpp"

namespace sim {
const char* version() { return LIBSCHED_VERSION_STRING; }
}  // namespace sim
