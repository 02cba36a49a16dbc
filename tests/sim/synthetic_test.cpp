// sim/synthetic.hpp on top of the workload generator.
#include <catch2/catch.hpp>

#include <set>

#include "sim/io/scenario_json.hpp"
#include "sim/io/workload.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/experiments/synthetic.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

TEST_CASE("synthetic: the tasks come from the workload section, deterministically", "[synthetic][workload]") {
  sim::SyntheticOptions o;
  o.nodes = 16;
  o.tasks = 400;
  o.seed = 4;
  const auto spec = sim::synthetic_scenario_spec(o);
  REQUIRE(spec.workload);
  CHECK(spec.tasks.empty());
  // The section is a valid scenario file: written and read back, it generates the same tasks.
  auto r = sim::io::parse_scenario_document(sim::io::scenario_to_json(spec), "synthetic.json");
  INFO((r.diagnostics.empty() ? std::string() : r.diagnostics.front().str()));
  REQUIRE(r.ok());
  sim::io::apply_workload(*r.scenario);
  const auto s = sim::synthetic_scenario(o);
  CHECK_FALSE(s.workload);
  REQUIRE(s.tasks.size() == 400);
  CHECK(sim::io::scenario_to_json(s)["tasks"] == sim::io::scenario_to_json(*r.scenario)["tasks"]);
  CHECK(s.tasks.front().name == "job-000000");
  std::set<std::string> types;
  int gangs = 0;
  for (const auto& t : s.tasks) {
    types.insert(t.resource_type);
    gangs += t.workers > 0;
    CHECK(t.runtime_estimate_s);
    CHECK(t.duration_s >= 10);
    CHECK(t.duration_s <= 2 * 86400);
  }
  CHECK(types == std::set<std::string>{"pay_as_you_go", "spot"});
  CHECK(gangs > 0);
  o.seed = 5;
  CHECK(sim::io::scenario_to_json(sim::synthetic_scenario(o))["tasks"] != sim::io::scenario_to_json(s)["tasks"]);
  sim::Simulator sim_run(s);
  sim_run.run();
}

}  // namespace SCHEDSIM_UNITY_ID
