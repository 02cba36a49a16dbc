// The `spot_reclaim` section and `checkpoint_on_notice` (docs/scenario-format.md "Spot reclaims"):
// the shape is checked when the section is read (every key known, a rate from 0 to 1 per
// node-hour, a notice from 0 to 1e9 s), the GPU models and pools against the cluster by
// check_spot_reclaim once the trace nodes are known.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "scenario_builder.hpp"
#include "sim/io/spot_reclaim.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

using nlohmann::json;
using sim::io::test::error_paths;
using sim::io::test::parse_json;
using sim::io::test::valid_scenario;

/// The base scenario with a reclaim model for A100 and one for the pool `ded`.
static json with_reclaims() {
  json j = valid_scenario();
  j["spot_reclaim"] = json::parse(R"({"gpu_models": {"A100": {"rate_per_node_h": 0.05, "notice_s": 30}},
                                      "pools": {"ded": {"rate_per_node_h": 0.5}}})");
  return j;
}

/// Parse errors and check_spot_reclaim diagnostics of `j` together.
static std::vector<sim::io::Diagnostic> reclaim_diagnostics(const json& j) {
  auto r = parse_json(j);
  std::vector<sim::io::Diagnostic> d = r.diagnostics;
  if (r.ok()) sim::io::check_spot_reclaim(*r.scenario, d);
  return d;
}

/// The diagnostic at `path` as `PATH: VALUE: RULE` ("" when none).
static std::string at(const std::vector<sim::io::Diagnostic>& d, const std::string& path) {
  for (const auto& x : d)
    if (x.path == path) return x.path + ": " + x.value + ": " + x.rule;
  return "";
}

TEST_CASE("spot_reclaim: a section is read with its defaults, checked without a diagnostic and written back") {
  auto r = parse_json(with_reclaims());
  REQUIRE(r.ok());
  const auto& c = *r.scenario->spot_reclaim;
  CHECK(c.gpu_models.at("A100").rate_per_node_h == 0.05);
  CHECK(c.gpu_models.at("A100").notice_s == 30);
  CHECK(c.pools.at("ded").rate_per_node_h == 0.5);
  CHECK(c.pools.at("ded").notice_s == 120);  // the default notice
  CHECK(reclaim_diagnostics(with_reclaims()).empty());
  auto again = sim::io::parse_scenario_document(sim::io::scenario_to_json(*r.scenario), "resolved");
  REQUIRE(again.ok());
  CHECK(again.scenario->spot_reclaim->gpu_models == c.gpu_models);
  CHECK(again.scenario->spot_reclaim->pools == c.pools);
}

TEST_CASE("spot_reclaim: without the new keys nothing is added to the resolved scenario") {
  auto r = parse_json(valid_scenario());
  REQUIRE(r.ok());
  CHECK_FALSE(r.scenario->spot_reclaim.has_value());
  const json out = sim::io::scenario_to_json(*r.scenario);
  CHECK_FALSE(out.contains("spot_reclaim"));
  for (const auto& t : out["tasks"]) CHECK_FALSE(t.contains("checkpoint_on_notice"));
  for (const auto& e : out["events"]) CHECK_FALSE(e.contains("notice_s"));
}

TEST_CASE("spot_reclaim: a negative rate is refused with its path") {
  json j = with_reclaims();
  j["spot_reclaim"]["gpu_models"]["A100"]["rate_per_node_h"] = -0.1;
  const auto d = reclaim_diagnostics(j);
  CHECK(at(d, "spot_reclaim.gpu_models.A100.rate_per_node_h") ==
        "spot_reclaim.gpu_models.A100.rate_per_node_h: -0.1: must be between 0 and 1");
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"spot_reclaim.gpu_models.A100.rate_per_node_h"});
}

TEST_CASE("spot_reclaim: a rate above one per node-hour is refused") {
  json j = with_reclaims();
  j["spot_reclaim"]["pools"]["ded"]["rate_per_node_h"] = 1.5;
  CHECK(at(reclaim_diagnostics(j), "spot_reclaim.pools.ded.rate_per_node_h") ==
        "spot_reclaim.pools.ded.rate_per_node_h: 1.5: must be between 0 and 1");
}

TEST_CASE("spot_reclaim: a NaN or infinite rate is refused") {
  json j = with_reclaims();
  j["spot_reclaim"]["gpu_models"]["A100"]["rate_per_node_h"] = std::numeric_limits<double>::quiet_NaN();
  j["spot_reclaim"]["pools"]["ded"]["rate_per_node_h"] = std::numeric_limits<double>::infinity();
  auto r = sim::io::parse_scenario_document(j, "s.json");
  CHECK(error_paths(r) ==
        std::vector<std::string>{"spot_reclaim.gpu_models.A100.rate_per_node_h", "spot_reclaim.pools.ded.rate_per_node_h"});
}

TEST_CASE("spot_reclaim: a rate that is not a number is refused") {
  json j = with_reclaims();
  j["spot_reclaim"]["gpu_models"]["A100"]["rate_per_node_h"] = "NaN";
  CHECK(at(reclaim_diagnostics(j), "spot_reclaim.gpu_models.A100.rate_per_node_h") ==
        "spot_reclaim.gpu_models.A100.rate_per_node_h: \"NaN\": must be a number");
}

TEST_CASE("spot_reclaim: an entry without a rate is refused") {
  json j = with_reclaims();
  j["spot_reclaim"]["pools"]["ded"] = json::parse(R"({"notice_s": 60})");
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"spot_reclaim.pools.ded.rate_per_node_h"});
}

TEST_CASE("spot_reclaim: a negative notice is refused with its path") {
  json j = with_reclaims();
  j["spot_reclaim"]["gpu_models"]["A100"]["notice_s"] = -120;
  CHECK(at(reclaim_diagnostics(j), "spot_reclaim.gpu_models.A100.notice_s") ==
        "spot_reclaim.gpu_models.A100.notice_s: -120: must be between 0 and 1000000000");
}

TEST_CASE("spot_reclaim: an unknown key is an error, not an ignored key") {
  json j = with_reclaims();
  j["spot_reclaim"]["gpu_models"]["A100"]["rate_per_h"] = 0.1;
  j["spot_reclaim"]["gpu_model"] = json::object();
  CHECK(error_paths(parse_json(j)) ==
        std::vector<std::string>{"spot_reclaim.gpu_model", "spot_reclaim.gpu_models.A100.rate_per_h"});
}

TEST_CASE("spot_reclaim: a GPU model no node has is refused") {
  json j = with_reclaims();
  j["spot_reclaim"]["gpu_models"]["H100"] = json::parse(R"({"rate_per_node_h": 0.1})");
  CHECK(at(reclaim_diagnostics(j), "spot_reclaim.gpu_models.H100") ==
        "spot_reclaim.gpu_models.H100: \"H100\": unknown GPU model (no node of the cluster has it)");
}

TEST_CASE("spot_reclaim: a pool not in cluster.pools is refused") {
  json j = with_reclaims();
  j["spot_reclaim"]["pools"]["nope"] = json::parse(R"({"rate_per_node_h": 0.1})");
  CHECK(at(reclaim_diagnostics(j), "spot_reclaim.pools.nope") ==
        "spot_reclaim.pools.nope: \"nope\": unknown pool (not in cluster.pools)");
}

TEST_CASE("spot_reclaim: checkpoint_on_notice is a task boolean, default false, written back only when true") {
  json j = valid_scenario();
  j["tasks"][0]["checkpoint_on_notice"] = true;
  auto r = parse_json(j);
  REQUIRE(r.ok());
  CHECK(r.scenario->tasks[0].checkpoint_on_notice);
  CHECK_FALSE(r.scenario->tasks[1].checkpoint_on_notice);
  const json out = sim::io::scenario_to_json(*r.scenario);
  CHECK(out["tasks"][0]["checkpoint_on_notice"] == true);
  CHECK_FALSE(out["tasks"][1].contains("checkpoint_on_notice"));
  j["tasks"][1]["checkpoint_on_notice"] = "yes";
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"tasks[1].checkpoint_on_notice"});
}

TEST_CASE("spot_reclaim: an event's notice_s belongs to spot_reclaim events and is >= 0") {
  json j = valid_scenario();
  j["events"] = json::parse(R"([{"at_s": 10, "kind": "spot_reclaim", "nodes": ["a100-0"], "notice_s": 120},
                                {"at_s": 20, "kind": "node_down", "node": "a100-1", "notice_s": 120},
                                {"at_s": 30, "kind": "spot_reclaim", "nodes": ["a100-1"], "notice_s": -1}])");
  auto r = parse_json(j);
  CHECK(error_paths(r) == std::vector<std::string>{"events[1].notice_s", "events[2].notice_s"});
  j["events"].erase(1);
  j["events"].erase(1);
  auto ok = parse_json(j);
  REQUIRE(ok.ok());
  CHECK(ok.scenario->events[0].notice_s == 120);
  CHECK(sim::io::scenario_to_json(*ok.scenario)["events"][0]["notice_s"] == 120);
}

}  // namespace SCHEDSIM_UNITY_ID
