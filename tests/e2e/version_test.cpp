// `schedsim --version` and the one source of the version (libsched/version.hpp, read by CMake).
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <libsched/version.hpp>

#include "sim/io/version.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

TEST_CASE("version.hpp's version string is MAJOR.MINOR.PATCH of its macros and CMake's project version") {
  CHECK(std::string(LIBSCHED_VERSION_STRING) == std::to_string(LIBSCHED_VERSION_MAJOR) + "." +
                                                    std::to_string(LIBSCHED_VERSION_MINOR) + "." +
                                                    std::to_string(LIBSCHED_VERSION_PATCH));
  CHECK(std::string(LIBSCHED_VERSION_STRING) == LIBSCHED_PROJECT_VERSION);
  CHECK(std::string(sim::version()) == LIBSCHED_VERSION_STRING);
}

TEST_CASE("schedsim --version prints the simulator and library versions and exits 0") {
  FILE* p = ::popen((std::string(SCHEDSIM_BINARY) + " --version 2>&1").c_str(), "r");
  REQUIRE(p);
  std::string out;
  std::array<char, 256> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  const int status = ::pclose(p);
  CHECK(out == std::string("schedsim ") + LIBSCHED_PROJECT_VERSION + " (libsched " + LIBSCHED_PROJECT_VERSION + ")\n");
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace SCHEDSIM_UNITY_ID
