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

TEST_CASE("check_scenario_totals: the replica total is reported before a GPU model past the limit found in the same pass",
          "[io][hardening2]") {
  sim::io::Scenario sc;
  const int per_task = int(sim::io::limits::max_workers);  // each task: max_workers + 1 replicas
  const std::size_t n = std::size_t(sim::io::limits::max_total_replicas / (per_task + 1)) + 1;
  sc.tasks.resize(n);
  for (auto& t : sc.tasks) t.workers = per_task;
  sim::io::ReplicaCfg r;
  for (int i = 0; i < 65; ++i) r.gpu_models.push_back(fmt::format("X{}", i));
  sc.tasks[1].replica = r;  // the 65th model: tasks[1].replica.gpu_models[64]
  sc.tasks[2].replica = r;
  std::vector<std::string> reports;
  sim::io::check_scenario_totals(sc, [&](const std::string& field, const std::string& value, const std::string& rule) {
    reports.push_back(field + ": " + value + ": " + rule);
  });
  REQUIRE(reports.size() == 2);
  const std::size_t total = n * std::size_t(per_task + 1);
  CHECK(reports[0] == fmt::format("tasks: {}: {} replicas in all tasks, more than the limit of {}", total, total,
                                  sim::io::limits::max_total_replicas));
  CHECK_THAT(reports[1], Catch::StartsWith("tasks[1].replica.gpu_models[64]: \"X64\": a GPU model past the first 64: "));
  // Within the limit: nothing.
  sc.tasks.resize(2);
  reports.clear();
  sim::io::check_scenario_totals(sc, [&](const std::string& f, const std::string&, const std::string&) { reports.push_back(f); });
  CHECK(reports == std::vector<std::string>{"tasks[1].replica.gpu_models[64]"});
}

}  // namespace SCHEDSIM_UNITY_ID
