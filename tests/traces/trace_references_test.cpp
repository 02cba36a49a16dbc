// Names that only exist once the traces are loaded (docs/scenario-format.md "Traces"): the node
// names of events and node policies are checked against the trace's nodes by `validate` and by
// every command that resolves a scenario; a trace's own values obey the task rules.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/cli/validate_cli.hpp"
#include "sim/io/resolve.hpp"
#include "trace_test_util.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using nlohmann::json;
using trace_test::EnvGuard;
using trace_test::TempDir;

namespace {

// Two jobs of 2 and 4 processors; `MaxProcs: 4` gives the nodes swf-node-0 .. swf-node-3.
const std::string kSwf =
    "; MaxProcs: 4\n"
    "1 0 10 3600 2 -1 -1 2 7200 -1 1 1 1 -1 1 -1 -1 -1\n"
    "2 50 -1 100 4 -1 -1 4 200 -1 1 2 1 -1 1 -1 -1 -1\n";

json swf_scenario() {
  return json::parse(R"({
    "schema": "schedsim/v1", "name": "refs", "seed": 1,
    "cluster": {"name": "c", "region": "r", "instance_specs": [],
                "pools": [{"name": "p", "kind": "shared", "node_groups": []}]},
    "scheduler": {"placement": "first-fit", "preemption": false, "queueing": "backfill"},
    "traces": [{"format": "swf", "path": "t.swf", "procs_per_node": 1, "pool": "p"}],
    "tasks": []})");
}

struct Outcome {
  int validate_rc = 0;
  std::string validate_err;
  bool resolved = false;
  std::string resolve_err;
};

/// `validate` and resolve_scenario (what `run` does first) on `j`, written next to the trace.
Outcome check(const TempDir& dir, const json& j) {
  const std::string path = dir.write("s.json", j.dump());
  Outcome o;
  std::ostringstream out, err, rerr;
  o.validate_rc = sim::io::validate_command(path, out, err, {}, libsched::Registry::builtin());
  o.validate_err = err.str();
  sim::ScenarioSource src;
  src.path = path;
  o.resolved = sim::resolve_scenario(src, rerr).has_value();
  o.resolve_err = rerr.str();
  return o;
}

}  // namespace

TEST_CASE("an event naming a node an swf trace makes is accepted; an unknown one is refused by validate and run",
          "[traces][validate][references]") {
  TempDir dir;
  EnvGuard env("SCHEDSIM_DATA", dir.path().string());
  dir.write("t.swf", kSwf);
  json j = swf_scenario();
  j["events"] = json::array({{{"at_s", 100}, {"kind", "node_down"}, {"node", "swf-node-3"}},
                             {{"at_s", 200}, {"kind", "node_up"}, {"node", "swf-node-3"}}});
  Outcome ok = check(dir, j);
  CHECK(ok.validate_rc == 0);
  CHECK(ok.validate_err.empty());
  CHECK(ok.resolved);

  j["events"][1]["node"] = "swf-node-4";  // MaxProcs 4: nodes 0..3
  Outcome bad = check(dir, j);
  CHECK(bad.validate_rc == 2);
  CHECK(bad.validate_err.find(": events[1].node: \"swf-node-4\": unknown node") != std::string::npos);
  CHECK(bad.validate_err.find("events[0]") == std::string::npos);
  CHECK_FALSE(bad.resolved);
  CHECK(bad.resolve_err == bad.validate_err);
}

TEST_CASE("a node policy naming a node an swf trace makes is accepted; an unknown one is refused",
          "[traces][validate][references]") {
  TempDir dir;
  EnvGuard env("SCHEDSIM_DATA", dir.path().string());
  dir.write("t.swf", kSwf);
  json j = swf_scenario();
  j["node_policies"] = json::array({{{"name", "np"}, {"type", "NodeNotIn"}, {"nodes", {"swf-node-0", "swf-node-2"}},
                                     {"created_s", 0}, {"expire_s", 3600}, {"scope", "user"}, {"user", "swf-u1"}}});
  Outcome ok = check(dir, j);
  CHECK(ok.validate_rc == 0);
  CHECK(ok.resolved);

  j["node_policies"][0]["nodes"][1] = "swf-node-9";
  Outcome bad = check(dir, j);
  CHECK(bad.validate_rc == 2);
  CHECK(bad.validate_err.find(": node_policies[0].nodes[1]: \"swf-node-9\": unknown node") != std::string::npos);
  CHECK_FALSE(bad.resolved);
}

TEST_CASE("an swf trace with nodes \"none\" makes no node: its names stay unknown before the traces are read",
          "[traces][validate][references]") {
  TempDir dir;
  EnvGuard env("SCHEDSIM_DATA", dir.path().string());
  dir.write("t.swf", kSwf);
  json j = swf_scenario();
  j["traces"][0]["nodes"] = "none";
  j["events"] = json::array({{{"at_s", 100}, {"kind", "node_down"}, {"node", "swf-node-0"}}});
  Outcome bad = check(dir, j);
  CHECK(bad.validate_rc == 2);
  CHECK(bad.validate_err.find(": events[0].node: \"swf-node-0\": unknown node") != std::string::npos);
  CHECK_FALSE(bad.resolved);
}

TEST_CASE("a trace's checkpoint_interval_s obeys the task rule: at least 1 s", "[traces][validate]") {
  TempDir dir;
  EnvGuard env("SCHEDSIM_DATA", dir.path().string());
  dir.write("t.swf", kSwf);
  json j = swf_scenario();
  j["traces"][0]["checkpoint_interval_s"] = 1;
  Outcome ok = check(dir, j);
  CHECK(ok.validate_rc == 0);
  CHECK(ok.resolved);

  j["traces"][0]["checkpoint_interval_s"] = 0.5;
  Outcome bad = check(dir, j);
  CHECK(bad.validate_rc == 2);
  CHECK(bad.validate_err.find(": traces[0].checkpoint_interval_s: 0.5: must be between 1 and") != std::string::npos);
  CHECK_FALSE(bad.resolved);
}

}  // namespace SCHEDSIM_UNITY_ID
