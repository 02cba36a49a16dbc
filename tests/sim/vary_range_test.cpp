// Issue #36: `--vary PATH=lo..hi:step` with integers is computed exactly in int64 (never in
// doubles), and integers out of int64 are refused (sim/multirun_cli.hpp parse_vary).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cli/multirun_cli.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

TEST_CASE("parse_vary: an integer range past 2^53 gives exactly its values", "[multirun][hardening2]") {
  std::string e;
  const auto r = sim::parse_vary("seed=9007199254740993..9007199254740995", 100, e);
  REQUIRE(r);
  CHECK(r->values == std::vector<std::string>{"9007199254740993", "9007199254740994", "9007199254740995"});
  CHECK(r->integers == std::vector<std::int64_t>{9007199254740993, 9007199254740994, 9007199254740995});
  const auto s = sim::parse_vary("a.x=9223372036854775800..9223372036854775807:3", 100, e);
  REQUIRE(s);
  CHECK(s->values == std::vector<std::string>{"9223372036854775800", "9223372036854775803", "9223372036854775806"});
  const auto n = sim::parse_vary("a.x=-9223372036854775808..-9223372036854775806", 100, e);
  REQUIRE(n);
  CHECK(n->values == std::vector<std::string>{"-9223372036854775808", "-9223372036854775807", "-9223372036854775806"});
}

TEST_CASE("parse_vary: integers outside int64 are refused, not rounded", "[multirun][hardening2]") {
  std::string e;
  CHECK_FALSE(sim::parse_vary("a.x=1..9223372036854775808", 100, e));
  CHECK(e == "--vary: a.x=1..9223372036854775808: `9223372036854775808` is out of range: integers go from -9223372036854775808 to "
             "9223372036854775807");
  CHECK_FALSE(sim::parse_vary("a.x=-9223372036854775809..0", 100, e));
  CHECK(e.find("`-9223372036854775809` is out of range") != std::string::npos);
  CHECK_FALSE(sim::parse_vary("a.x=0..1:99999999999999999999", 100, e));
  CHECK(e.find("`99999999999999999999` is out of range") != std::string::npos);
}

TEST_CASE("parse_vary: the length of a huge integer range is counted without overflow", "[multirun][hardening2]") {
  std::string e;
  CHECK_FALSE(sim::parse_vary("a.x=-9223372036854775808..9223372036854775807", 100, e));
  CHECK(e == "--vary: a.x=-9223372036854775808..9223372036854775807: 18446744073709551616 values; at most 100 are allowed");
  CHECK_FALSE(sim::parse_vary("a.x=0..100", 100, e));
  CHECK(e == "--vary: a.x=0..100: 101 values; at most 100 are allowed");
  CHECK(sim::parse_vary("a.x=0..99", 100, e));
}

}  // namespace SCHEDSIM_UNITY_ID
