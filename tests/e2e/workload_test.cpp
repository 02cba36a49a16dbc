// The workload section seen from the CLI: determinism of `schedsim run`, `--seed`, `--set` on
// workload paths, scenario.resolved.json round trip and the exit status of a bad section.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

using testutil::slurp;

using Result = testutil::CommandResult;

/// Runs `schedsim ARGS`, capturing stdout and stderr.
Result schedsim(const std::string& args) { return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "workload"); }

fs::path work_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("schedsim-workload-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::map<std::string, std::string> files(const fs::path& d) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::directory_iterator(d)) m[e.path().filename().string()] = slurp(e.path());
  return m;
}

const std::string k_scenario = std::string(SCHEDSIM_SOURCE_DIR) + "/scenarios/generated-workload.json";

}  // namespace

TEST_CASE("workload e2e: same seed byte-identical outputs, --seed 2 other tasks", "[workload][e2e]") {
  const fs::path d = work_dir("seed");
  const auto a = schedsim("run " + k_scenario + " --no-progress --out " + (d / "a").string());
  INFO(a.err);
  REQUIRE(a.status == 0);
  const auto b = schedsim("run " + k_scenario + " --no-progress --out " + (d / "b").string());
  REQUIRE(b.status == 0);
  CHECK(files(d / "a") == files(d / "b"));
  const auto c = schedsim("run " + k_scenario + " --no-progress --seed 2 --out " + (d / "c").string());
  REQUIRE(c.status == 0);
  const std::string tasks_a = slurp(d / "a" / "tasks.csv"), tasks_c = slurp(d / "c" / "tasks.csv");
  CHECK(tasks_a.find("gen-000000") != std::string::npos);
  CHECK(tasks_a != tasks_c);
  // The resolved scenario keeps the section and the seed, not the generated tasks.
  const auto resolved = nlohmann::json::parse(slurp(d / "c" / "scenario.resolved.json"));
  CHECK(resolved.at("seed") == 2);
  CHECK(resolved.contains("workload"));
  CHECK(resolved.at("tasks").empty());
  fs::remove_all(d);
}

TEST_CASE("workload e2e: scenario.resolved.json re-runs to byte-identical outputs", "[workload][e2e]") {
  const fs::path d = work_dir("resolved");
  const auto a = schedsim("run " + k_scenario + " --no-progress --seed 5 --set workload.arrival.rate_per_hour=4 --out " +
                          (d / "a").string());
  INFO(a.err);
  REQUIRE(a.status == 0);
  const auto b = schedsim("run " + (d / "a" / "scenario.resolved.json").string() + " --no-progress --out " + (d / "b").string());
  INFO(b.err);
  REQUIRE(b.status == 0);
  CHECK(files(d / "a") == files(d / "b"));
  fs::remove_all(d);
}

TEST_CASE("workload e2e: --set on a workload path changes the generated tasks", "[workload][e2e]") {
  const auto base = schedsim("validate " + k_scenario);
  INFO(base.err);
  REQUIRE(base.status == 0);
  const auto more = schedsim("validate " + k_scenario + " --set workload.arrival.rate_per_hour=40");
  REQUIRE(more.status == 0);
  auto count = [](const std::string& out) {
    const auto open = out.find("ok (");
    return std::stol(out.substr(open + 4));
  };
  CHECK(count(more.out) > 3 * count(base.out));
  const auto fixed = schedsim("validate " + k_scenario + " --set workload.tasks=17");
  REQUIRE(fixed.status == 0);
  CHECK(fixed.out.find("ok (17 tasks") != std::string::npos);
}

TEST_CASE("workload e2e: a bad workload value exits 2 with one diagnostic line", "[workload][e2e]") {
  const auto r = schedsim("validate " + k_scenario + " --set workload.classes[0].share=-1");
  CHECK(r.status == 2);
  CHECK(r.err == k_scenario + ": workload.classes[0].share: -1: must be > 0 (from --set workload.classes[0].share=-1)\n");
  const auto s = schedsim("run " + k_scenario + " --no-progress --out /nonexistent/x --set 'workload.classes[dev].specs=[\"nope\"]'");
  CHECK(s.status == 2);
  CHECK(s.err.find("workload.classes[0].specs[0]: \"nope\": unknown spec (not in cluster.instance_specs)") != std::string::npos);
}

TEST_CASE("convert --arrival-scale scales the gaps, keeps durations, refuses 0", "[workload][e2e][convert]") {
  const fs::path d = work_dir("convert");
  const std::string jobs = (d / "jobs.csv").string();
  std::ofstream(jobs) << "#job id,arrival time (sec),topology,shape,size,duration (sec)\n"
                         "0,100.0,CLOS,1,1,50\n1,300.0,CLOS,1,1,60\n";
  const auto plain = schedsim("convert --format philly --path " + jobs + " --out " + (d / "a.json").string());
  REQUIRE(plain.status == 0);
  const auto fast =
      schedsim("convert --format philly --path " + jobs + " --arrival-scale 0.5 --out " + (d / "b.json").string());
  REQUIRE(fast.status == 0);
  const auto a = nlohmann::json::parse(slurp(d / "a.json")).at("tasks");
  const auto b = nlohmann::json::parse(slurp(d / "b.json")).at("tasks");
  CHECK(a[1].at("submit_s") == 300.0);
  CHECK(b[1].at("submit_s") == 200.0);
  CHECK(a[1].at("duration_s") == b[1].at("duration_s"));
  const auto bad = schedsim("convert --format philly --path " + jobs + " --arrival-scale 0 --out " + (d / "c.json").string());
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--arrival-scale: 0: must be a number > 0 and <= 1000") != std::string::npos);
  CHECK_FALSE(fs::exists(d / "c.json"));
  fs::remove_all(d);
}

}  // namespace SCHEDSIM_UNITY_ID
