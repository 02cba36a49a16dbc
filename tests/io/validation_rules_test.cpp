// Every validation rule has a failing case (exactly the expected error path) and a passing case
// (zero errors), each as one mutation of the valid base scenario.
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "scenario_builder.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using nlohmann::json;
using sim::io::test::all_text;
using sim::io::test::error_paths;
using sim::io::test::parse_json;
using sim::io::test::valid_scenario;
using sim::io::test::warning_paths;

namespace {

struct Case {
  std::string rule;
  std::function<void(json&)> mutate;
  std::string expected_path;  // empty: the mutation is valid (zero errors)
};

json& task(json& j, int i) { return j["tasks"][i]; }
json& policy(json& j, int i) { return j["node_policies"][i]; }
json& group(json& j) { return j["cluster"]["pools"][0]["node_groups"][0]; }

std::vector<Case> cases() {
  return {
      // required keys
      {"schema must be schedsim/v1", [](json& j) { j["schema"] = "schedsim/v2"; }, "schema"},
      {"schema is required", [](json& j) { j.erase("schema"); }, "schema"},
      {"name is required", [](json& j) { j.erase("name"); }, "name"},
      {"cluster is required", [](json& j) { j.erase("cluster"); }, "cluster"},
      {"tasks are required without traces", [](json& j) { j.erase("tasks"); j.erase("events"); }, "tasks"},
      {"tasks may not be empty without traces", [](json& j) { j["tasks"] = json::array(); j.erase("events"); }, "tasks"},
      {"tasks may be empty with traces",
       [](json& j) {
         j["tasks"] = json::array();
         j["traces"] = json::array({{{"format", "openb"}, {"path", "openb/pods.csv"}}});
       },
       ""},
      {"task name is required", [](json& j) { task(j, 1).erase("name"); }, "tasks[1].name"},
      {"task user is required", [](json& j) { task(j, 1).erase("user"); }, "tasks[1].user"},
      {"task submit_s is required", [](json& j) { task(j, 1).erase("submit_s"); }, "tasks[1].submit_s"},
      {"task duration_s is required", [](json& j) { task(j, 1).erase("duration_s"); }, "tasks[1].duration_s"},
      {"task type is required", [](json& j) { task(j, 0).erase("type"); }, "tasks[0].type"},
      {"task workers is required", [](json& j) { task(j, 0).erase("workers"); }, "tasks[0].workers"},
      {"task specs or replica is required", [](json& j) { task(j, 0).erase("specs"); }, "tasks[0].specs"},
      {"task specs must not be empty", [](json& j) { task(j, 0)["specs"] = json::array(); }, "tasks[0].specs"},
      {"task replica replaces specs",
       [](json& j) {
         task(j, 0).erase("specs");
         task(j, 0)["replica"] = {{"gpus", 1}, {"gpu_milli", 500}, {"vcpu", 4}, {"memory_gib", 8}, {"gpu_models", {"A100"}}};
       },
       ""},
      {"task specs and replica are exclusive", [](json& j) { task(j, 0)["replica"] = {{"gpus", 1}}; }, "tasks[0].replica"},
      // types
      {"workers must be a number", [](json& j) { task(j, 0)["workers"] = "2"; }, "tasks[0].workers"},
      {"workers must be an integer", [](json& j) { task(j, 0)["workers"] = 1.5; }, "tasks[0].workers"},
      {"guarantee must be a boolean", [](json& j) { task(j, 0)["guarantee"] = "yes"; }, "tasks[0].guarantee"},
      {"user must be a string", [](json& j) { task(j, 0)["user"] = 3; }, "tasks[0].user"},
      {"tasks must be an array", [](json& j) { j["tasks"] = json::object(); j.erase("events"); }, "tasks"},
      {"a task must be an object", [](json& j) { task(j, 1) = 5; }, "tasks[1]"},
      // ranges
      {"submit_s >= 0", [](json& j) { task(j, 0)["submit_s"] = -1; }, "tasks[0].submit_s"},
      {"submit_s = 0 is fine", [](json& j) { task(j, 2)["submit_s"] = 0; }, ""},
      {"duration_s > 0", [](json& j) { task(j, 0)["duration_s"] = 0; }, "tasks[0].duration_s"},
      {"workers >= 0", [](json& j) { task(j, 0)["workers"] = -1; }, "tasks[0].workers"},
      {"workers = 0 is single-node", [](json& j) { task(j, 0)["workers"] = 0; }, ""},
      {"priority >= 1", [](json& j) { task(j, 0)["priority"] = 0; }, "tasks[0].priority"},
      {"priority <= 9", [](json& j) { task(j, 0)["priority"] = 10; }, "tasks[0].priority"},
      {"priority 9 is fine", [](json& j) { task(j, 0)["priority"] = 9; }, ""},
      {"count_per_node >= 1", [](json& j) { task(j, 0)["count_per_node"] = 0; }, "tasks[0].count_per_node"},
      {"image_pull_retries >= -1", [](json& j) { task(j, 0)["image_pull_retries"] = -2; }, "tasks[0].image_pull_retries"},
      {"image_pull_retries = 0 is fine", [](json& j) { task(j, 0)["image_pull_retries"] = 0; }, ""},
      {"checkpoint_interval_s > 0", [](json& j) { task(j, 0)["checkpoint_interval_s"] = 0; }, "tasks[0].checkpoint_interval_s"},
      {"runtime_estimate_s > 0", [](json& j) { task(j, 0)["runtime_estimate_s"] = -5; }, "tasks[0].runtime_estimate_s"},
      {"max_resubmissions >= 0", [](json& j) { task(j, 0)["fault_tolerance"]["max_resubmissions"] = -1; },
       "tasks[0].fault_tolerance.max_resubmissions"},
      {"node group count >= 1", [](json& j) { group(j)["count"] = 0; }, "cluster.pools[0].node_groups[0].count"},
      {"node group count is required", [](json& j) { group(j).erase("count"); }, "cluster.pools[0].node_groups[0].count"},
      {"spec gpus >= 0", [](json& j) { j["cluster"]["instance_specs"][0]["gpus"] = -1; }, "cluster.instance_specs[0].gpus"},
      {"node group gpus >= 0", [](json& j) { group(j)["gpus"] = -8; }, "cluster.pools[0].node_groups[0].gpus"},
      {"quota gpus >= 0", [](json& j) { j["quotas"][0]["gpus"] = -1; }, "quotas[0].gpus"},
      {"event at_s >= 0", [](json& j) { j["events"][0]["at_s"] = -1; }, "events[0].at_s"},
      {"policy created_s >= 0", [](json& j) { policy(j, 1)["created_s"] = -10; }, "node_policies[1].created_s"},
      {"policy expire_s >= 0", [](json& j) { policy(j, 1)["expire_s"] = -10; }, "node_policies[1].expire_s"},
      {"until_s >= 0", [](json& j) { j["until_s"] = -1; }, "until_s"},
      {"probability <= 1", [](json& j) { task(j, 0)["image_pull_failure_prob"] = 1.5; }, "tasks[0].image_pull_failure_prob"},
      {"probability >= 0", [](json& j) { group(j)["unhealthy_prob"] = -0.1; }, "cluster.pools[0].node_groups[0].unhealthy_prob"},
      {"probability 1 is fine", [](json& j) { task(j, 0)["image_pull_failure_prob"] = 1; }, ""},
      {"gpu_milli < 1000 needs one GPU", [](json& j) { j["cluster"]["instance_specs"][0]["gpu_milli"] = 500; },
       "cluster.instance_specs[0].gpu_milli"},
      // enums
      {"task type enum", [](json& j) { task(j, 0)["type"] = "TFJob"; }, "tasks[0].type"},
      {"resource_type enum", [](json& j) { task(j, 0)["resource_type"] = "free"; }, "tasks[0].resource_type"},
      {"idle_stability enum", [](json& j) { task(j, 1)["idle_stability"] = "none"; }, "tasks[1].idle_stability"},
      {"pool kind enum", [](json& j) { j["cluster"]["pools"][0]["kind"] = "private"; }, "cluster.pools[0].kind"},
      {"policy type enum", [](json& j) { policy(j, 0)["type"] = "NodeOut"; }, "node_policies[0].type"},
      {"policy scope enum", [](json& j) { policy(j, 0)["scope"] = "org"; }, "node_policies[0].scope"},
      {"policy effect enum", [](json& j) { policy(j, 0)["effect"] = "always"; }, "node_policies[0].effect"},
      {"policy workload type enum", [](json& j) { policy(j, 0)["workload_types"][1] = "TFJob"; },
       "node_policies[0].workload_types[1]"},
      {"queueing enum", [](json& j) { j["scheduler"]["queueing"] = "fifo"; }, "scheduler.queueing"},
      {"queueing backfill is fine", [](json& j) { j["scheduler"]["queueing"] = "backfill"; }, ""},
      {"event kind enum", [](json& j) { j["events"][0]["kind"] = "node_gone"; }, "events[0].kind"},
      {"task_fault error enum", [](json& j) { j["events"][2]["error"] = "cosmic_ray"; }, "events[2].error"},
      {"task_fault gpu_oom is fine", [](json& j) { j["events"][2]["error"] = "gpu_oom"; }, ""},
      {"scale_out enum", [](json& j) { task(j, 2)["autoscaling"]["scale_out"] = "fast"; }, "tasks[2].autoscaling.scale_out"},
      {"trace format enum",
       [](json& j) { j["traces"] = json::array({{{"format", "csv"}, {"path", "x.csv"}}}); }, "traces[0].format"},
      {"placement must be a known policy", [](json& j) { j["scheduler"]["placement"] = "tetris"; }, "scheduler.placement"},
      {"placement fgd is fine", [](json& j) { j["scheduler"]["placement"] = "fgd"; }, ""},
      // event keys per kind
      {"node_down needs node", [](json& j) { j["events"][0].erase("node"); }, "events[0].node"},
      {"task_fault needs task", [](json& j) { j["events"][2].erase("task"); }, "events[2].task"},
      {"task_fault needs error", [](json& j) { j["events"][2].erase("error"); }, "events[2].error"},
      // unknown references
      {"specs name known specs", [](json& j) { task(j, 0)["specs"][1] = "h100.8x"; }, "tasks[0].specs[1]"},
      {"head_spec names a known spec", [](json& j) { task(j, 1)["head_spec"] = "cpu.8"; }, "tasks[1].head_spec"},
      {"task pool must exist", [](json& j) { task(j, 0)["pool"] = "nowhere"; }, "tasks[0].pool"},
      {"quota pool must exist", [](json& j) { j["quotas"][0]["pool"] = "nowhere"; }, "quotas[0].pool"},
      {"task node_policies name known policies", [](json& j) { task(j, 0)["node_policies"][0] = "pinn"; },
       "tasks[0].node_policies[0]"},
      {"policy nodes must exist", [](json& j) { policy(j, 0)["nodes"][0] = "a100-4"; }, "node_policies[0].nodes[0]"},
      {"policy nodes may name explicit pool nodes", [](json& j) { policy(j, 0)["nodes"][0] = "solo-0"; }, ""},
      {"event node must exist", [](json& j) { j["events"][1]["node"] = "b-0"; }, "events[1].node"},
      {"event nodes must exist", [](json& j) { j["events"][3]["nodes"][1] = "solo-1"; }, "events[3].nodes[1]"},
      {"event task must exist", [](json& j) { j["events"][2]["task"] = "pretrian"; }, "events[2].task"},
      // duplicates
      {"duplicate spec names", [](json& j) { j["cluster"]["instance_specs"][2]["name"] = "a100.1x"; task(j, 1)["head_spec"] = "a100.1x"; },
       "cluster.instance_specs[2].name"},
      {"duplicate pool names", [](json& j) { j["cluster"]["pools"][1]["name"] = "shared-a100"; }, "cluster.pools[1].name"},
      {"duplicate node names from groups",
       [](json& j) { j["cluster"]["pools"][0]["node_groups"].push_back(group(j)); },
       "cluster.pools[0].node_groups[1].prefix"},
      {"duplicate node names between a group and a node",
       [](json& j) {
         j["cluster"]["pools"][1]["nodes"][0]["name"] = "a100-2";
         policy(j, 1)["nodes"][1] = "a100-1";
         j["events"][3]["nodes"][1] = "a100-2";
       },
       "cluster.pools[1].nodes[0].name"},
      {"duplicate policy names", [](json& j) { policy(j, 0)["name"] = "pin"; }, "node_policies[1].name"},
      {"duplicate task names", [](json& j) { task(j, 2)["name"] = "sweep"; }, "tasks[2].name"},
      // task shape and resource type rules
      {"pool is required for reserved", [](json& j) { task(j, 0).erase("pool"); }, "tasks[0].pool"},
      {"pool is optional for pay_as_you_go",
       [](json& j) {
         task(j, 0).erase("pool");
         task(j, 0)["resource_type"] = "pay_as_you_go";
       },
       ""},
      {"idle task cannot set priority (even the default)", [](json& j) { task(j, 1)["priority"] = 5; }, "tasks[1].priority"},
      {"idle task cannot set guarantee (even false)", [](json& j) { task(j, 1)["guarantee"] = false; }, "tasks[1].guarantee"},
      {"spot task cannot set guarantee",
       [](json& j) { task(j, 1).erase("idle_stability"); task(j, 1)["resource_type"] = "spot"; task(j, 1)["guarantee"] = true; },
       "tasks[1].guarantee"},
      {"spot task may set guarantee false (the default)",
       [](json& j) { task(j, 1).erase("idle_stability"); task(j, 1)["resource_type"] = "spot"; task(j, 1)["guarantee"] = false; },
       ""},
      {"idle task cannot set guarantee true", [](json& j) { task(j, 1)["guarantee"] = true; }, "tasks[1].guarantee"},
      {"spot task may set priority", [](json& j) { task(j, 1).erase("idle_stability"); task(j, 1)["resource_type"] = "spot"; task(j, 1)["priority"] = 2; }, ""},
      {"head_spec is RayJob only", [](json& j) { task(j, 0)["head_spec"] = "a100.1x"; }, "tasks[0].head_spec"},
      {"autoscaling is RayJob only", [](json& j) { task(j, 0)["autoscaling"] = {{"enabled", true}}; }, "tasks[0].autoscaling"},
      {"debug is RayJob only", [](json& j) { task(j, 0)["debug"] = true; }, "tasks[0].debug"},
      {"accept_idle is reserved only", [](json& j) { task(j, 1)["accept_idle"] = true; }, "tasks[1].accept_idle"},
      {"prefer_idle is reserved only",
       [](json& j) {
         task(j, 0)["resource_type"] = "pay_as_you_go";
         task(j, 0)["prefer_idle"] = true;
       },
       "tasks[0].prefer_idle"},
      {"prefer_idle on reserved is fine", [](json& j) { task(j, 0)["prefer_idle"] = true; }, ""},
      {"idle_stability needs idle or accept_idle", [](json& j) { task(j, 0)["idle_stability"] = "high"; }, "tasks[0].idle_stability"},
      {"idle_stability on reserved without accept_idle", [](json& j) { task(j, 2)["accept_idle"] = false; }, "tasks[2].idle_stability"},
      {"autoscaling min_workers <= max_workers", [](json& j) { task(j, 2)["autoscaling"]["min_workers"] = 5; },
       "tasks[2].autoscaling.min_workers"},
      {"autoscaling min_workers == max_workers is fine", [](json& j) { task(j, 2)["autoscaling"]["min_workers"] = 4; }, ""},
      // node policies
      {"block expiry at least 1 minute", [](json& j) { policy(j, 0)["expire_s"] = 59; }, "node_policies[0].expire_s"},
      {"block expiry of exactly 1 minute is fine", [](json& j) { policy(j, 0)["expire_s"] = 60; }, ""},
      {"block expiry at most 72 hours", [](json& j) { policy(j, 0)["created_s"] = 100; policy(j, 0)["expire_s"] = 100 + 72 * 3600 + 1; },
       "node_policies[0].expire_s"},
      {"block expiry of exactly 72 hours is fine", [](json& j) { policy(j, 0)["expire_s"] = 72 * 3600; }, ""},
      {"block must expire", [](json& j) { policy(j, 0).erase("expire_s"); }, "node_policies[0].expire_s"},
      {"NodeIn expiry, when given, is in range", [](json& j) { policy(j, 1)["expire_s"] = 20; }, "node_policies[1].expire_s"},
      {"scope=user needs user", [](json& j) { policy(j, 1).erase("user"); }, "node_policies[1].user"},
      // quotas, events, traces, extension objects
      {"quota resource_type enum", [](json& j) { j["quotas"][0]["resource_type"] = "idle"; }, "quotas[0].resource_type"},
      {"reserved quota needs a pool", [](json& j) { j["quotas"][0].erase("pool"); }, "quotas[0].pool"},
      {"pay_as_you_go quota needs no pool",
       [](json& j) {
         j["quotas"][0].erase("pool");
         j["quotas"][0]["resource_type"] = "pay_as_you_go";
       },
       ""},
      {"spot_reclaim needs nodes", [](json& j) { j["events"][3].erase("nodes"); }, "events[3].nodes"},
      {"trace path is required", [](json& j) { j["traces"] = json::array({{{"format", "swf"}}}); }, "traces[0].path"},
      {"trace time_scale > 0",
       [](json& j) { j["traces"] = json::array({{{"format", "swf"}, {"path", "a.swf"}, {"time_scale", 0}}}); },
       "traces[0].time_scale"},
      {"fill target_pct > 0", [](json& j) { j["fill"] = {{"target_pct", 0}}; }, "fill.target_pct"},
      {"trace runtime_estimate is requested, actual or an object",
       [](json& j) { j["traces"] = json::array({{{"format", "swf"}, {"path", "a.swf"}, {"runtime_estimate", "guess"}}}); },
       "traces[0].runtime_estimate"},
      {"trace runtime_estimate requested is swf only",
       [](json& j) { j["traces"] = json::array({{{"format", "openb"}, {"path", "a.csv"}, {"runtime_estimate", "requested"}}}); },
       "traces[0].runtime_estimate"},
      {"trace runtime_estimate factor > 0",
       [](json& j) {
         j["traces"] = json::array({{{"format", "swf"}, {"path", "a.swf"}, {"runtime_estimate", {{"factor", 0}, {"add_s", 1}}}}});
       },
       "traces[0].runtime_estimate.factor"},
      {"trace runtime_estimate add_s >= 0",
       [](json& j) {
         j["traces"] = json::array({{{"format", "swf"}, {"path", "a.swf"}, {"runtime_estimate", {{"factor", 2}, {"add_s", -1}}}}});
       },
       "traces[0].runtime_estimate.add_s"},
      {"trace gpus_per_replica is 1..64",
       [](json& j) { j["traces"] = json::array({{{"format", "philly"}, {"path", "a.csv"}, {"gpus_per_replica", 0}}}); },
       "traces[0].gpus_per_replica"},
      {"trace gpus_per_replica is philly only",
       [](json& j) { j["traces"] = json::array({{{"format", "swf"}, {"path", "a.swf"}, {"gpus_per_replica", 1}}}); },
       "traces[0].gpus_per_replica"},
      {"trace rebase_time is a boolean",
       [](json& j) { j["traces"] = json::array({{{"format", "swf"}, {"path", "a.swf"}, {"rebase_time", "yes"}}}); },
       "traces[0].rebase_time"},
      {"trace max_resubmissions is 0..1000",
       [](json& j) { j["traces"] = json::array({{{"format", "swf"}, {"path", "a.swf"}, {"max_resubmissions", 1001}}}); },
       "traces[0].max_resubmissions"},
      {"trace checkpoint_interval_s > 0",
       [](json& j) { j["traces"] = json::array({{{"format", "swf"}, {"path", "a.swf"}, {"checkpoint_interval_s", 0}}}); },
       "traces[0].checkpoint_interval_s"},
      {"retry_on names known causes", [](json& j) { j["scheduler"]["retry_on"] = {"transient", "bad_luck"}; },
       "scheduler.retry_on[1]"},
      {"precheck_cordon_s >= 0", [](json& j) { j["scheduler"]["precheck_cordon_s"] = -1; }, "scheduler.precheck_cordon_s"},
      {"debug_retention_s is RayJob only", [](json& j) { task(j, 0)["debug_retention_s"] = 10; }, "tasks[0].debug_retention_s"},
      {"autoscaling demand step needs workers", [](json& j) { task(j, 2)["autoscaling"]["demand"][0].erase("workers"); },
       "tasks[2].autoscaling.demand[0].workers"},
      {"autoscaling demand at_s >= 0", [](json& j) { task(j, 2)["autoscaling"]["demand"][0]["at_s"] = -1; },
       "tasks[2].autoscaling.demand[0].at_s"},
      {"replica gpu_milli 1..1000",
       [](json& j) {
         task(j, 0).erase("specs");
         task(j, 0)["replica"] = {{"gpus", 1}, {"gpu_milli", 0}};
       },
       "tasks[0].replica.gpu_milli"},
      {"a GPU-share replica x count_per_node > 1 is refused (libsched models a share of one GPU only)",
       [](json& j) {
         task(j, 0).erase("specs");
         task(j, 0)["replica"] = {{"gpus", 1}, {"gpu_milli", 500}, {"vcpu", 4}, {"memory_gib", 8}};
         task(j, 0)["count_per_node"] = 3;
       },
       "tasks[0].replica.gpu_milli"},
      {"a GPU-share spec x count_per_node > 1 is refused",
       [](json& j) {
         j["cluster"]["instance_specs"].push_back(
             {{"name", "a100.half"}, {"gpu_model", "A100"}, {"gpus", 1}, {"gpu_milli", 500}, {"vcpu", 4}, {"memory_gib", 8}});
         task(j, 0)["specs"] = {"a100.half"};
         task(j, 0)["count_per_node"] = 2;
       },
       "tasks[0].specs[0]"},
      {"a GPU-share spec with count_per_node 1 is fine",
       [](json& j) {
         j["cluster"]["instance_specs"].push_back(
             {{"name", "a100.half"}, {"gpu_model", "A100"}, {"gpus", 1}, {"gpu_milli", 500}, {"vcpu", 4}, {"memory_gib", 8}});
         task(j, 0)["specs"] = {"a100.half"};
       },
       ""},
      {"explicit node names are unique",
       [](json& j) { j["cluster"]["pools"][1]["nodes"].push_back(j["cluster"]["pools"][1]["nodes"][0]); },
       "cluster.pools[1].nodes[1].name"},
      {"seed is a non-negative integer", [](json& j) { j["seed"] = -3; }, "seed"},
      // name prefix
      {"task name lowercase", [](json& j) { task(j, 0)["name"] = "Pretrain"; j["events"][2]["task"] = "Pretrain"; }, "tasks[0].name"},
      {"task name no leading dash", [](json& j) { task(j, 1)["name"] = "-sweep"; }, "tasks[1].name"},
      {"task name no trailing dash", [](json& j) { task(j, 1)["name"] = "sweep-"; }, "tasks[1].name"},
      {"task name no underscore", [](json& j) { task(j, 1)["name"] = "sw_eep"; }, "tasks[1].name"},
      {"task name with digits and dashes is fine", [](json& j) { task(j, 1)["name"] = "0-sweep-2"; }, ""},
  };
}

}  // namespace

TEST_CASE("the valid base scenario has no diagnostics at all", "[io][validation]") {
  const auto r = parse_json(valid_scenario());
  INFO(all_text(r));
  CHECK(r.ok());
  CHECK(r.diagnostics.empty());
}

TEST_CASE("each validation rule reports exactly its JSON path, and its valid counterpart nothing", "[io][validation]") {
  for (const auto& c : cases()) {
    json j = valid_scenario();
    c.mutate(j);
    const auto r = parse_json(j);
    INFO("rule: " << c.rule << "\n" << all_text(r));
    if (c.expected_path.empty()) {
      CHECK(error_paths(r).empty());
      CHECK(r.ok());
    } else {
      CHECK(error_paths(r) == std::vector<std::string>{c.expected_path});
      CHECK_FALSE(r.ok());
    }
  }
}

TEST_CASE("an error line names the file, the JSON path, the value and the rule", "[io][validation]") {
  json j = valid_scenario();
  j["tasks"][1]["resource_type"] = "spot";
  j["tasks"][1].erase("idle_stability");
  j["tasks"][1]["priority"] = 12;
  const auto r = parse_json(j, "bad.json");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].str() == "bad.json: tasks[1].priority: 12: must be between 1 and 9");
}

TEST_CASE("a missing required key is shown as <missing>", "[io][validation]") {
  json j = valid_scenario();
  j["tasks"][0].erase("pool");
  const auto r = parse_json(j, "f.json");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].str() == "f.json: tasks[0].pool: <missing>: a reserved task needs a pool");
}

TEST_CASE("a replica larger than every node of its GPU model is a warning, not an error", "[io][validation]") {
  SECTION("two 8-GPU specs per node exceed every 8-GPU node") {
    json j = valid_scenario();
    j["tasks"][0]["count_per_node"] = 2;
    const auto r = parse_json(j);
    INFO(all_text(r));
    CHECK(r.ok());
    CHECK(warning_paths(r) == std::vector<std::string>{"tasks[0].specs[0]"});
  }
  SECTION("a spec of a GPU model no node has") {
    json j = valid_scenario();
    j["cluster"]["instance_specs"][1]["gpu_model"] = "H100";
    const auto r = parse_json(j);
    CHECK(r.ok());
    CHECK(warning_paths(r) == std::vector<std::string>{"tasks[0].specs[1]", "tasks[1].specs[0]", "tasks[2].specs[0]"});
  }
  SECTION("a gang larger than the whole cluster is a warning; one that just fits is not") {
    json j = valid_scenario();  // five 8-GPU A100 nodes
    j["quotas"][0]["gpus"] = 1000;  // isolate the cluster rule from the quota rule
    j["quotas"][0]["vcpu"] = 100000;
    j["quotas"][0]["memory_gib"] = 100000;
    j["tasks"][0]["specs"] = {"a100.8x"};
    j["tasks"][0]["workers"] = 4;  // 5 replicas of 8 GPUs: exactly the cluster
    CHECK(parse_json(j).diagnostics.empty());
    j["tasks"][0]["workers"] = 5;  // 6 replicas
    const auto r = parse_json(j);
    INFO(all_text(r));
    CHECK(r.ok());
    CHECK(warning_paths(r) == std::vector<std::string>{"tasks[0].specs[0]"});
    CHECK(all_text(r).find("needs more than the whole cluster") != std::string::npos);
  }
  SECTION("an inline replica that fits gives no warning, one that does not gives one") {
    json j = valid_scenario();
    j["tasks"][0].erase("specs");
    j["tasks"][0]["replica"] = {{"gpus", 4}, {"vcpu", 8}, {"memory_gib", 64}};
    CHECK(parse_json(j).diagnostics.empty());
    j["tasks"][0]["replica"]["memory_gib"] = 2000;
    const auto r = parse_json(j);
    CHECK(r.ok());
    CHECK(warning_paths(r) == std::vector<std::string>{"tasks[0].replica"});
  }
}

TEST_CASE("an unknown key is a warning that suggests the nearest known key", "[io][validation]") {
  json j = valid_scenario();
  j["tasks"][0]["wokers"] = 3;
  j["scheduler"]["zzzzzzzzzzzz"] = 1;
  const auto r = parse_json(j, "s.json");
  CHECK(r.ok());
  // diagnostics come in traversal order: scheduler before tasks
  REQUIRE(r.diagnostics.size() == 2);
  CHECK(r.diagnostics[0].path == "scheduler.zzzzzzzzzzzz");
  CHECK(r.diagnostics[0].rule.find("did you mean") == std::string::npos);
  CHECK(r.diagnostics[1].str() == "s.json: warning: tasks[0].wokers: 3: unknown key `wokers`; did you mean `workers`?");
}

TEST_CASE("all problems are reported in one run", "[io][validation]") {
  json j = valid_scenario();
  j["schema"] = "v0";
  j["cluster"]["pools"][0]["node_groups"][0]["count"] = 0;
  j["tasks"][0]["priority"] = 0;
  j["tasks"][1]["workers"] = -2;
  j["events"][2]["task"] = "nobody";
  const auto r = parse_json(j);
  INFO(all_text(r));
  // The bad count makes node names unknowable, so node references are not blamed as well.
  CHECK(error_paths(r) == std::vector<std::string>{"schema", "cluster.pools[0].node_groups[0].count", "tasks[0].priority",
                                                   "tasks[1].workers", "events[2].task"});
}

TEST_CASE("a value that failed its type check is not blamed again by a cross-field rule", "[io][validation]") {
  json j = valid_scenario();
  j["tasks"][0]["pool"] = 42;  // a type error; the "reserved needs a pool" rule must not repeat it
  const auto r = parse_json(j);
  CHECK(error_paths(r) == std::vector<std::string>{"tasks[0].pool"});
}

TEST_CASE("a task whose whole demand exceeds its quota even with nothing running is a warning", "[io][validation]") {
  json j = valid_scenario();  // alice: 24 GPU reserved quota in shared-a100; pretrain: 3 x 8 GPU or 3 x 1 GPU
  SECTION("a demand within the quota gives no warning") { CHECK(parse_json(j).diagnostics.empty()); }
  SECTION("every candidate spec above the quota") {
    j["tasks"][0]["specs"] = {"a100.8x"};
    j["tasks"][0]["workers"] = 3;  // 32 GPU > 24
    const auto r = parse_json(j);
    INFO(all_text(r));
    CHECK(r.ok());
    CHECK(warning_paths(r) == std::vector<std::string>{"tasks[0].resource_type"});
    CHECK(all_text(r).find("the whole task needs 32 GPUs, 384 vCPU, 3840 GiB, more than the quota of alice (reserved, pool "
                           "shared-a100) (24 GPUs, 288 vCPU, 2880 GiB) even with nothing running") != std::string::npos);
  }
  SECTION("one candidate spec within the quota is enough") {
    j["tasks"][0]["workers"] = 3;  // a100.8x: 32 GPU, a100.1x: 4 GPU
    CHECK(parse_json(j).diagnostics.empty());
  }
  SECTION("a reserved task without a quota entry") {
    j["tasks"][0]["user"] = "carol";
    const auto r = parse_json(j);
    CHECK(r.ok());
    CHECK(warning_paths(r) == std::vector<std::string>{"tasks[0].resource_type"});
    CHECK(all_text(r).find("no reserved quota for carol") != std::string::npos);
  }
  SECTION("a task that may fall back to idle capacity is not warned about") {
    j["tasks"][0]["user"] = "carol";
    j["tasks"][0]["accept_idle"] = true;
    CHECK(parse_json(j).diagnostics.empty());
  }
}

}  // namespace SCHEDSIM_UNITY_ID
