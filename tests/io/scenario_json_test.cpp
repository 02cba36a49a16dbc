// Parsing (defaults, extension keys, malformed JSON) and scenario_to_json round trips.
#include <string>

#include <catch2/catch.hpp>

#include "scenario_builder.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using nlohmann::json;
using sim::io::parse_scenario_text;
using sim::io::scenario_to_json;
using sim::io::test::all_text;
using sim::io::test::parse_json;
using sim::io::test::valid_scenario;

TEST_CASE("contract defaults apply when keys are absent", "[io][json]") {
  json j = valid_scenario();
  j.erase("scheduler");
  j["tasks"][0].erase("count_per_node");
  j["tasks"][0].erase("priority");
  j["tasks"][0].erase("guarantee");
  const auto r = parse_json(j);
  REQUIRE(r.ok());
  const auto& s = *r.scenario;
  CHECK(s.scheduler.placement == "best-fit");
  CHECK(s.scheduler.preemption);
  CHECK(s.scheduler.queueing == "greedy");
  CHECK(s.tasks[0].count_per_node == 1);
  CHECK(s.tasks[0].priority == 5);
  CHECK_FALSE(s.tasks[0].priority_set);
  CHECK_FALSE(s.tasks[0].guarantee);
  CHECK_FALSE(s.tasks[0].guarantee_set);
  CHECK_FALSE(s.tasks[1].checkpoint_interval_s.has_value());
  CHECK_FALSE(s.tasks[1].runtime_estimate_s.has_value());
}

TEST_CASE("contract keys are read into the typed model", "[io][json]") {
  const auto r = parse_json(valid_scenario(), "base.json");
  REQUIRE(r.ok());
  const auto& s = *r.scenario;
  CHECK(s.file == "base.json");
  CHECK(s.seed == 7);
  CHECK(s.cluster.instance_specs.size() == 3);
  CHECK(s.cluster.pools[0].node_groups[0].count == 4);
  CHECK(s.cluster.pools[1].kind == "dedicated");
  CHECK(s.quotas[0].gpus == 24);
  CHECK(s.node_policies[0].expire_s == 7200);
  CHECK_FALSE(s.node_policies[1].expire_s.has_value());
  const auto& t = s.tasks[0];
  CHECK(t.priority == 7);
  CHECK(t.priority_set);
  CHECK(t.guarantee);
  CHECK(t.guarantee_set);
  CHECK(t.specs == std::vector<std::string>{"a100.8x", "a100.1x"});
  CHECK(t.checkpoint_interval_s == 600);
  CHECK(t.fault_tolerance.max_resubmissions == 2);
  CHECK(t.image_pull_retries == -1);
  CHECK(t.node_policies == std::vector<std::string>{"pin"});
  CHECK(s.tasks[1].head_spec == "cpu.4");
  CHECK(s.tasks[2].autoscaling->max_workers == 4);
  CHECK(s.tasks[2].autoscaling->demand.size() == 1);
  CHECK(s.events[2].error == "transient");
  CHECK(s.events[3].nodes.size() == 2);
  CHECK(sim::io::expanded_node_names(s.cluster) ==
        std::vector<std::string>{"a100-0", "a100-1", "a100-2", "a100-3", "solo-0"});
}

TEST_CASE("malformed JSON gives one error with its line and column", "[io][json]") {
  const std::string text = "{\n  \"schema\": \"schedsim/v1\",\n  \"name\": }\n";
  const auto r = parse_scenario_text(text, "m.json");
  REQUIRE(r.diagnostics.size() == 1);
  const auto& d = r.diagnostics[0];
  CHECK(d.is_error());
  CHECK(d.line == 3);
  CHECK(d.column == 11);
  CHECK(d.str().rfind("m.json: line 3, column 11: malformed JSON: ", 0) == 0);
  CHECK_FALSE(r.ok());
  CHECK_FALSE(r.scenario.has_value());
}

TEST_CASE("truncated JSON reports the end of the text", "[io][json]") {
  const auto r = parse_scenario_text("{\n \"a\": [1,\n", "t.json");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].line == 3);
  CHECK(r.diagnostics[0].column == 1);
}

TEST_CASE("a JSON value that is not an object is one error", "[io][json]") {
  const auto r = parse_scenario_text("[1, 2]", "a.json");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].str() == "a.json: <root>: [1,2]: a scenario must be a JSON object");
}

TEST_CASE("an unreadable file gives one error and no scenario", "[io][json]") {
  const auto r = sim::io::load_scenario_file("/nonexistent/dir/s.json");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].str() == "/nonexistent/dir/s.json: cannot read file");
  CHECK_FALSE(r.ok());
}

TEST_CASE("a directory given as the scenario file is named as such, not as malformed JSON", "[io][json]") {
  const auto r = sim::io::load_scenario_file("/tmp");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].str() == "/tmp: is a directory, not a scenario file");
  CHECK_FALSE(r.ok());
}

namespace {
/// The base scenario plus every extension key, so that the round trip covers them.
json scenario_with_extensions() {
  json j = valid_scenario();
  j["until_s"] = 90000;
  j["timeseries_interval_s"] = 60;
  j["fill"] = {{"target_pct", 120}};
  j["traces"] = json::array({{{"format", "openb"}, {"path", "openb/pods.csv"}, {"nodes", "openb/nodes.csv"},
                              {"limit", 100}, {"pool", "shared-a100"}, {"time_scale", 0.5}}});
  j["scheduler"] = {{"placement", "fgd"},       {"preemption", false},         {"idle_reclaim", false},
                    {"spot_eviction", false},   {"queueing", "backfill"},      {"idle_stability_high_s", 7200},
                    {"idle_stability_medium_s", 900}, {"retry_on", {"transient", "gpu_oom"}}, {"precheck_cordon_s", 120}};
  auto& g = j["cluster"]["pools"][0]["node_groups"][0];
  g["nodes_per_rack"] = 2;
  g["racks_per_switch"] = 1;
  g["labels"] = {{"zone", "z1"}};
  g["mtbf_s"] = 86400;
  g["mttr_s"] = 600;
  j["cluster"]["pools"][1]["nodes"][0]["rack"] = "r9";
  j["cluster"]["pools"][1]["nodes"][0]["labels"] = {{"k", "v"}};
  j["cluster"]["instance_specs"].push_back({{"name", "a100.half"}, {"gpu_model", "A100"}, {"gpus", 1},
                                            {"gpu_milli", 500}, {"vcpu", 4}, {"memory_gib", 32}});
  auto& t = j["tasks"][0];
  t["tenant"] = "t1";
  t["precheck_s"] = 30;
  t["image_pull_s"] = 45;
  t["image_pull_failure_prob"] = 0.1;
  t["transient_failure_rate_per_h"] = 0.01;
  j["tasks"].push_back({{"name", "pod-1"}, {"user", "u"}, {"submit_s", 1.5}, {"duration_s", 2.25}, {"type", "PyTorchJob"},
                        {"workers", 0}, {"resource_type", "spot"},
                        {"replica", {{"gpus", 1}, {"gpu_milli", 250}, {"vcpu", 2}, {"memory_gib", 4}, {"gpu_models", {"A100"}}}}});
  j["node_policies"][1]["tenant"] = "t1";
  return j;
}
}  // namespace

TEST_CASE("parse, to_json, parse gives the same scenario", "[io][json]") {
  const auto first = parse_json(scenario_with_extensions());
  INFO(all_text(first));
  REQUIRE(first.ok());
  REQUIRE(first.diagnostics.empty());
  const json written = scenario_to_json(*first.scenario);
  const auto second = parse_json(written);
  INFO(all_text(second));
  REQUIRE(second.ok());
  CHECK(second.diagnostics.empty());
  CHECK(scenario_to_json(*second.scenario) == written);

  const auto& a = *first.scenario;
  const auto& b = *second.scenario;
  CHECK(b.until_s == a.until_s);
  CHECK(b.fill.target_pct == 120);
  CHECK(b.traces.at(0).limit == std::optional<std::size_t>{100});
  CHECK(b.scheduler.retry_on == a.scheduler.retry_on);
  CHECK(b.scheduler.precheck_cordon_s == 120);
  CHECK(b.cluster.pools[0].node_groups[0].labels == a.cluster.pools[0].node_groups[0].labels);
  CHECK(b.tasks[3].replica->gpu_milli == 250);
  CHECK(b.tasks[3].replica->gpu_models == std::vector<std::string>{"A100"});
  CHECK(b.tasks[0].transient_failure_rate_per_h == a.tasks[0].transient_failure_rate_per_h);
  CHECK(b.tasks[2].autoscaling->scale_out == "aggressive");
  CHECK(b.tasks[2].debug_retention_s == 300);
  CHECK(b.node_policies[1].user == "alice");
}

TEST_CASE("to_json never writes a key that validation rejects for the task's shape", "[io][json]") {
  const auto r = parse_json(valid_scenario());
  REQUIRE(r.ok());
  const json j = scenario_to_json(*r.scenario);
  CHECK_FALSE(j["tasks"][1].contains("priority"));   // idle, priority never set
  CHECK_FALSE(j["tasks"][1].contains("guarantee"));
  CHECK_FALSE(j["tasks"][1].contains("accept_idle"));
  CHECK_FALSE(j["tasks"][0].contains("head_spec"));   // PyTorchJob
  CHECK_FALSE(j["tasks"][0].contains("autoscaling"));
  CHECK_FALSE(j["tasks"][0].contains("idle_stability"));
  CHECK(j["tasks"][2]["idle_stability"] == "high");  // reserved with accept_idle
}

TEST_CASE("absurdly nested JSON is refused with its position instead of overflowing the stack", "[io][json]") {
  const std::string text = std::string(100000, '[') + std::string(100000, ']');
  const auto r = sim::io::parse_scenario_text(text, "deep.json");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].str() == "deep.json: line 1, column 101: malformed JSON: nested deeper than 100 levels");
  CHECK_FALSE(r.ok());
  // Nesting inside strings does not count.
  const auto ok = sim::io::parse_scenario_text("{\"name\": \"" + std::string(500, '[') + "\"}", "s.json");
  for (const auto& d : ok.diagnostics) CHECK(d.str().find("nested deeper") == std::string::npos);
}

}  // namespace SCHEDSIM_UNITY_ID
