// Trace key `arrival_scale` (docs/traces.md): gaps between arrivals scaled, durations kept.
#include <catch2/catch.hpp>

#include "sim/io/traces.hpp"
#include "trace_test_util.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace sim::io;
using trace_test::TempDir;

namespace {
const char* k_jobs =
    "#job id,arrival time (sec),topology,shape,size,duration (sec)\n"
    "0,100.0,CLOS,1,1,50\n"
    "1,300.0,CLOS,8+8,16,120.5\n"
    "2,1100.0,CLOS,4,4,10\n";

TraceCfg philly(const std::string& path) {
  TraceCfg c;
  c.format = "philly";
  c.path = path;
  return c;
}
}  // namespace

TEST_CASE("arrival_scale multiplies the gaps from the first arrival and keeps durations", "[traces][arrival_scale]") {
  TempDir dir;
  const auto path = dir.write("jobs.csv", k_jobs);
  const auto plain = load_trace(philly(path)).tasks;
  auto cfg = philly(path);
  cfg.arrival_scale = 0.5;
  const auto fast = load_trace(cfg).tasks;
  REQUIRE(plain.size() == 3);
  REQUIRE(fast.size() == 3);
  CHECK(fast[0].submit_s == 100);   // the first arrival does not move
  CHECK(fast[1].submit_s == 200);   // 100 + (300 - 100) x 0.5
  CHECK(fast[2].submit_s == 600);   // 100 + (1100 - 100) x 0.5
  for (std::size_t i = 0; i < 3; ++i) CHECK(fast[i].duration_s == plain[i].duration_s);
  // After time_scale: times doubled first, then the gaps scaled.
  cfg.time_scale = 2;
  cfg.arrival_scale = 3;
  const auto both = load_trace(cfg).tasks;
  CHECK(both[0].submit_s == 200);
  CHECK(both[2].submit_s == 200 + (2200 - 200) * 3);
  CHECK(both[1].duration_s == 241);
}

TEST_CASE("arrival_scale 0 or negative is refused by load_trace", "[traces][arrival_scale]") {
  TempDir dir;
  const auto path = dir.write("jobs.csv", k_jobs);
  for (double v : {0.0, -1.0}) {
    auto cfg = philly(path);
    cfg.arrival_scale = v;
    CHECK_THROWS_WITH(load_trace(cfg), Catch::Contains("arrival_scale must be > 0"));
  }
}

}  // namespace SCHEDSIM_UNITY_ID
