// Issue 40: generator classes per team (`users`, `tenants` of a class), the top-level
// `arrival_scale` and `measure` keys: reader rules and the round trip through scenario_to_json.
#include <string>

#include <catch2/catch.hpp>

#include "scenario_builder.hpp"
#include "sim/io/scenario_json.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using nlohmann::json;
using sim::io::test::all_text;
using sim::io::test::parse_json;

namespace {

/// A valid scenario with a workload section of one 1-GPU class.
json team_base() {
  return json::parse(R"({
  "schema": "schedsim/v1", "name": "teams", "seed": 7,
  "cluster": {
    "instance_specs": [{"name": "g1", "gpu_model": "A100", "gpus": 1, "vcpu": 8, "memory_gib": 64}],
    "pools": [{"name": "p", "node_groups": [{"prefix": "n-", "count": 2, "gpu_model": "A100", "gpus": 8,
                                              "vcpu": 64, "memory_gib": 512}]}]
  },
  "workload": {
    "tasks": 20,
    "arrival": {"rate_per_hour": 60},
    "duration": {"distribution": "exponential", "mean_s": 600},
    "classes": [{"share": 1, "specs": ["g1"], "resource_type": "pay_as_you_go"}]
  }
})");
}

/// The error lines of `j` (warnings left out).
std::string team_errors(const json& j) {
  auto r = parse_json(j);
  std::string out;
  for (const auto& d : r.diagnostics)
    if (d.is_error()) out += d.str() + "\n";
  return out;
}

}  // namespace

TEST_CASE("class users: an empty list is an error naming the path", "[workload][validation][teams]") {
  json j = team_base();
  j["workload"]["classes"][0]["users"] = json::array();
  CHECK(team_errors(j) == "s.json: workload.classes[0].users: []: must not be empty (omit the key for the default)\n");
}

TEST_CASE("class tenants: a duplicate name is an error naming the path", "[workload][validation][teams]") {
  json j = team_base();
  j["workload"]["classes"][0]["tenants"] = json::parse(R"([{"name": "a", "share": 1}, {"name": "a", "share": 2}])");
  CHECK(team_errors(j) == "s.json: workload.classes[0].tenants[1].name: \"a\": duplicate name (also workload.classes[0].tenants[0])\n");
}

TEST_CASE("class users: a share of 0 is an error naming the path", "[workload][validation][teams]") {
  json j = team_base();
  j["workload"]["classes"][0]["users"] = json::parse(R"([{"name": "a", "share": 0}])");
  CHECK(team_errors(j).rfind("s.json: workload.classes[0].users[0].share: 0: must be > 0", 0) == 0);
}

TEST_CASE("class users and tenants, arrival_scale and measure survive scenario_to_json", "[workload][teams]") {
  json j = team_base();
  j["workload"]["classes"][0]["users"] = json::parse(R"([{"name": "v1", "share": 1}, {"name": "v2", "share": 3}])");
  j["workload"]["classes"][0]["tenants"] = json::parse(R"([{"name": "vision", "share": 1}])");
  j["arrival_scale"] = 0.8;
  j["measure"] = {{"start_s", 3600}, {"end_s", 7200}};
  auto r = parse_json(j);
  INFO(all_text(r));
  REQUIRE(r.ok());
  const json out = sim::io::scenario_to_json(*r.scenario);
  CHECK(out["workload"]["classes"][0]["users"] == j["workload"]["classes"][0]["users"]);
  CHECK(out["workload"]["classes"][0]["tenants"] == j["workload"]["classes"][0]["tenants"]);
  CHECK(out["arrival_scale"] == 0.8);
  CHECK(out["measure"] == json::parse(R"({"start_s": 3600, "end_s": 7200})"));
  auto back = parse_json(out);
  INFO(all_text(back));
  REQUIRE(back.ok());
  CHECK(back.scenario->workload->classes[0].users.size() == 2);
  CHECK(back.scenario->measure->end_s == 7200);
}

TEST_CASE("measure: end_s must be above start_s", "[measure][validation]") {
  json j = team_base();
  j["measure"] = {{"start_s", 50}, {"end_s", 10}};
  CHECK(team_errors(j) == "s.json: measure.end_s: 10: must be > start_s (50)\n");
}

TEST_CASE("arrival_scale above 1000 is an error naming the path", "[validation]") {
  json j = team_base();
  j["arrival_scale"] = 1001;
  CHECK(team_errors(j) == "s.json: arrival_scale: 1001: must be <= 1000\n");
}

}  // namespace SCHEDSIM_UNITY_ID
