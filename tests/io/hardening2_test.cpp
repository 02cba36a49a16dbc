// Issue #36 (hardening round 2), scenario side: libsched-internal limits that `run` would hit
// are scenario limits that `validate` checks (docs/scenario-format.md "Limits").
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <libsched/cluster.hpp>

#include "scenario_builder.hpp"
#include "sim/io/limits.hpp"
#include "sim/io/overrides.hpp"
#include "sim/io/scenario_json.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using nlohmann::json;
using sim::io::test::valid_scenario;

namespace {

std::vector<std::string> errors_in(const json& doc) {
  auto r = sim::io::parse_scenario_text(doc.dump(), "s.json");
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics)
    if (d.is_error()) out.push_back(d.str());
  return out;
}

json gpu_group(int i) {
  return json{{"prefix", fmt::format("g{}-", i)}, {"count", 1}, {"gpu_model", fmt::format("M{}", i)},
              {"gpus", 8}, {"vcpu", 96}, {"memory_gib", 960}};
}

}  // namespace

TEST_CASE("65 distinct GPU models are refused by validate, naming the 65th", "[io][hardening2]") {
  json j = valid_scenario();  // one model (A100) already
  for (int i = 0; i < 63; ++i) j["cluster"]["pools"][0]["node_groups"].push_back(gpu_group(i));
  CHECK(errors_in(j).empty());  // 64 models
  j["cluster"]["pools"][1]["nodes"][0]["gpu_model"] = "M63";
  const auto errs = errors_in(j);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0] == "s.json: cluster.pools[1].nodes[0].gpu_model: \"M63\": a GPU model past the first 64: a scenario has at most 64 "
                   "distinct GPU models (instance specs, node groups, nodes and tasks' gpu_models together)");
  CHECK(sim::io::limits::max_gpu_models == libsched::kMaxGpuModels);
}

TEST_CASE("GPU models named only by tasks count toward the limit, in the simulator's order", "[io][hardening2]") {
  json j = valid_scenario();
  json models = json::array();
  for (int i = 0; i < 64; ++i) models.push_back(fmt::format("X{}", i));
  j["tasks"][0].erase("specs");
  j["tasks"][0]["replica"] = json{{"gpus", 1}, {"vcpu", 1}, {"memory_gib", 1}, {"gpu_models", models}};
  const auto errs = errors_in(j);
  REQUIRE_FALSE(errs.empty());
  // A100 (instance specs) is the first model, so X63 is the 65th.
  CHECK(errs[0].find("s.json: tasks[0].replica.gpu_models[63]: \"X63\": a GPU model past the first 64") == 0);
}

}  // namespace SCHEDSIM_UNITY_ID
