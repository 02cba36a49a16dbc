#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/cli/convert_cli.hpp"
#include "sim/io/scenario_json.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {
fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("schedsim-convert-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
void write(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }
}  // namespace

TEST_CASE("convert turns a Philly job file into a scenario whose multi-server jobs are gangs") {
  fs::path d = temp_dir("philly");
  write(d / "jobs.csv", "#job id,arrival time (sec),topology,shape,size,duration (sec)\n"
                        "0,0.0,CLOS,8+8,16,100.0\n1,10.0,CLOS,1,1,50.0\n");
  write(d / "machines.csv", ",machineId,number of GPUs\n0,m0,8\n1,m1,8\n");
  sim::ConvertOptions o;
  o.trace.format = "philly";
  o.trace.path = (d / "jobs.csv").string();
  o.trace.nodes = (d / "machines.csv").string();
  o.out = (d / "philly.json").string();
  std::ostringstream out, err;
  REQUIRE(sim::convert_command(o, out, err) == 0);
  auto r = sim::io::load_scenario_file(o.out);
  REQUIRE(r.ok());
  const auto& s = *r.scenario;
  REQUIRE(s.tasks.size() == 2);
  CHECK(s.tasks[0].workers == 1);
  REQUIRE(s.tasks[0].replica.has_value());
  CHECK(s.tasks[0].replica->gpus == 8);
  CHECK(s.tasks[1].workers == 0);
  REQUIRE(s.cluster.pools.size() == 1);
  CHECK(s.cluster.pools[0].nodes.size() == 2);
}

TEST_CASE("convert reports a missing data file with where to download it and exit 2") {
  fs::path d = temp_dir("missing");
  sim::ConvertOptions o;
  o.trace.format = "openb";
  o.trace.path = (d / "no-such-pods.csv").string();
  o.out = (d / "x.json").string();
  std::ostringstream out, err;
  CHECK(sim::convert_command(o, out, err) == 2);
  CHECK(err.str().find("SCHEDSIM_DATA") != std::string::npos);
  CHECK_FALSE(fs::exists(o.out));
}

}  // namespace SCHEDSIM_UNITY_ID
