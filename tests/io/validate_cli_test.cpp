// `schedsim validate`: validate_command, load_or_report and the binary's exit status.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "scenario_builder.hpp"
#include "sim/cli/validate_cli.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using nlohmann::json;
using sim::io::test::valid_scenario;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = std::string("/tmp/schedsim_io_test_") + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

json three_errors() {
  json j = valid_scenario();
  j["tasks"][1]["priority"] = 3;          // idle task sets priority
  j["tasks"][0]["duration_s"] = -1;       // duration_s must be > 0
  j["events"][0]["node"] = "a100-99";     // unknown node
  j["tasks"][2]["wokers"] = 1;            // a warning, not an error
  return j;
}

}  // namespace

TEST_CASE("a scenario with three distinct errors gives three error lines naming their paths and exit 2", "[io][cli]") {
  const auto path = write_temp("three.json", three_errors().dump(2));
  std::ostringstream out, err;
  CHECK(sim::io::validate_command(path, out, err) == 2);
  CHECK(out.str().empty());
  std::vector<std::string> errors;
  for (const auto& l : lines(err.str()))
    if (l.find(": warning: ") == std::string::npos) errors.push_back(l);
  REQUIRE(errors.size() == 3);
  CHECK(errors[0] == path + ": tasks[0].duration_s: -1: must be > 0");
  CHECK(errors[1] == path + ": tasks[1].priority: 3: an idle task cannot set priority");
  CHECK(errors[2] == path + ": events[0].node: \"a100-99\": unknown node");
  CHECK(lines(err.str()).size() == 4);  // plus the unknown-key warning
  std::remove(path.c_str());
}

TEST_CASE("a valid scenario prints ok with its task and node counts and exits 0", "[io][cli]") {
  const auto path = write_temp("ok.json", valid_scenario().dump());
  std::ostringstream out, err;
  CHECK(sim::io::validate_command(path, out, err) == 0);
  CHECK(out.str() == path + ": ok (3 tasks, 5 nodes)\n");
  CHECK(err.str().empty());
  std::remove(path.c_str());
}

TEST_CASE("warnings alone do not fail validation", "[io][cli]") {
  json j = valid_scenario();
  j["tasks"][0]["wokers"] = 1;
  const auto path = write_temp("warn.json", j.dump());
  std::ostringstream out, err;
  CHECK(sim::io::validate_command(path, out, err) == 0);
  CHECK(err.str().find("did you mean `workers`?") != std::string::npos);
  CHECK(out.str().find(": ok (") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("load_or_report returns the scenario only when it has no error", "[io][cli]") {
  const auto good = write_temp("good.json", valid_scenario().dump());
  const auto bad = write_temp("bad.json", three_errors().dump());
  std::ostringstream err;
  const auto s = sim::io::load_or_report(good, err);
  REQUIRE(s.has_value());
  CHECK(s->tasks.size() == 3);
  CHECK(err.str().empty());
  CHECK_FALSE(sim::io::load_or_report(bad, err).has_value());
  CHECK(lines(err.str()).size() == 4);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

TEST_CASE("the schedsim binary exits 2 on invalid input, on usage errors, and 0 on a valid scenario", "[io][cli]") {
  const auto good = write_temp("bin_good.json", valid_scenario().dump());
  const auto bad = write_temp("bin_bad.json", three_errors().dump());
  auto run = [](const std::string& args) {
    const std::string cmd = std::string(SCHEDSIM_BINARY) + " " + args + " >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  CHECK(run("validate " + good) == 0);
  CHECK(run("validate " + bad) == 2);
  CHECK(run("validate") == 2);
  CHECK(run("") == 2);
  CHECK(run("--help") == 0);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

namespace {
/// validate_command on `j`: (exit status, stderr).
std::pair<int, std::string> validate_json(const std::string& name, const json& j) {
  const auto path = write_temp(name, j.dump());
  std::ostringstream out, err;
  const int rc = sim::io::validate_command(path, out, err);
  std::remove(path.c_str());
  return {rc, err.str()};
}
}  // namespace

TEST_CASE("values that would overflow, hang or break libsched are refused with their path", "[io][cli]") {
  struct Case { const char* name; json::json_pointer ptr; json value; const char* path; const char* rule; };
  const std::vector<Case> cases = {
      {"dur", json::json_pointer("/tasks/0/duration_s"), 1e300, "tasks[0].duration_s", "must be"},
      {"sub", json::json_pointer("/tasks/0/submit_s"), 1e18, "tasks[0].submit_s", "must be between 0 and"},
      {"at", json::json_pointer("/events/0/at_s"), 1e18, "events[0].at_s", "must be between 0 and"},
      {"gpus", json::json_pointer("/cluster/pools/0/node_groups/0/gpus"), 1000000,
       "cluster.pools[0].node_groups[0].gpus", "must be between 0 and 64"},
      {"count", json::json_pointer("/cluster/pools/0/node_groups/0/count"), 1000000000,
       "cluster.pools[0].node_groups[0].count", "must be between 1 and"},
      {"ts", json::json_pointer("/timeseries_interval_s"), 0.0001, "timeseries_interval_s", "must be 0 (automatic) or >= 1"},
      {"quota", json::json_pointer("/quotas/0/gpus"), 1e300, "quotas[0].gpus", "must be between 0 and"},
      {"vcpu", json::json_pointer("/cluster/instance_specs/0/vcpu"), 1e300, "cluster.instance_specs[0].vcpu", "must be between 0 and"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    json j = valid_scenario();
    j[c.ptr] = c.value;
    const auto [rc, err] = validate_json(std::string("bound_") + c.name + ".json", j);
    CHECK(rc == 2);
    CHECK(err.find(std::string(": ") + c.path + ": ") != std::string::npos);
    CHECK(err.find(c.rule) != std::string::npos);
  }
}

TEST_CASE("validate loads the scenario's traces: a missing trace file is refused with exit 2", "[io][cli]") {
  json j = valid_scenario();
  j["traces"] = json::array({{{"format", "openb"}, {"path", "/nonexistent/schedsim/pods.csv"}}});
  const auto [rc, err] = validate_json("missing_trace.json", j);
  CHECK(rc == 2);
  CHECK(err.find("missing_trace.json: ") != std::string::npos);
  CHECK(err.find("/nonexistent/schedsim/pods.csv") != std::string::npos);
}

TEST_CASE("the schedsim binary refuses a bad --seed, --until and --out with exit 2 and writes nothing", "[io][cli]") {
  const auto good = write_temp("cli_good.json", valid_scenario().dump());
  const std::string out = "/tmp/schedsim_io_test_" + std::to_string(::getpid()) + "_cli_out";
  auto run = [](const std::string& args) {
    const std::string cmd = std::string(SCHEDSIM_BINARY) + " " + args + " >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  CHECK(run("run " + good + " --no-progress --out " + out + " --seed -1") == 2);
  CHECK(run("run " + good + " --no-progress --out " + out + " --seed 99999999999999999999999") == 2);
  CHECK(run("run " + good + " --no-progress --out " + out + " --until nan") == 2);
  CHECK(run("run " + good + " --no-progress --out " + out + " --until 1e300") == 2);
  CHECK(run("run " + good + " --no-progress --out ''") == 2);
  CHECK(::access(out.c_str(), F_OK) != 0);
  const auto file = write_temp("cli_out_file", "keep");
  CHECK(run("run " + good + " --no-progress --out " + file) == 2);
  CHECK(run("run " + good + " --no-progress --out " + out + " --seed 3 --until 100") == 0);
  std::system(("rm -rf " + out).c_str());
  std::remove(file.c_str());
  std::remove(good.c_str());
}

TEST_CASE("a refused node shape does not also produce 'larger than every node' warnings", "[io][cli]") {
  json j = valid_scenario();
  j["cluster"]["pools"][0]["node_groups"][0]["gpus"] = -8;
  const auto [rc, err] = validate_json("neg_gpus.json", j);
  CHECK(rc == 2);
  CHECK(lines(err).size() == 1);
  CHECK(err.find("larger than every node") == std::string::npos);
}

TEST_CASE("an idle or spot task that sets guarantee is rejected with exit 2 and one line naming the rule", "[io][cli]") {
  json j = valid_scenario();
  j["tasks"][1]["guarantee"] = true;  // idle
  j["tasks"][0]["resource_type"] = "spot";
  j["tasks"][0].erase("pool");
  j["tasks"][0]["guarantee"] = true;
  const auto path = write_temp("guarantee.json", j.dump(2));
  std::ostringstream out, err;
  CHECK(sim::io::validate_command(path, out, err) == 2);
  std::vector<std::string> errors;
  for (const auto& l : lines(err.str()))
    if (l.find(": warning: ") == std::string::npos) errors.push_back(l);
  REQUIRE(errors.size() == 2);
  CHECK(errors[0] == path + ": tasks[0].guarantee: true: a spot task cannot set guarantee: spot capacity is always preemptible");
  CHECK(errors[1] == path + ": tasks[1].guarantee: true: an idle task cannot set guarantee");
  std::remove(path.c_str());
}

}  // namespace SCHEDSIM_UNITY_ID
