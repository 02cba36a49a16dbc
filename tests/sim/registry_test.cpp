// The simulator, fill and the command line use the placement registry they are given
// (SimOptions::registry, FillOptions::registry, FillCommandOptions::registry, sim::cli_main).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "builders.hpp"
#include "sim/cli/cli.hpp"
#include "sim/experiments/fill.hpp"
#include "sim/cli/fill_cli.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/engine/simulator.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace {

/// Takes the feasible node with the highest id (the opposite of best-fit on an empty cluster).
class HighestId final : public libsched::PlacementPolicy {
 public:
  std::string_view name() const override { return "highest-id"; }
  double score(const libsched::Cluster&, libsched::NodeId n, const libsched::ReplicaShape&) override {
    return double(n.value);
  }
};

libsched::Registry registry() {
  libsched::Registry r = libsched::Registry::builtin();
  r.placement.add("highest-id", [](const libsched::PolicyContext&) { return std::make_unique<HighestId>(); });
  return r;
}

/// Nodes of the first attempt of each task after running `sc` with `placement`.
std::vector<std::vector<std::string>> placements(sim::io::Scenario sc, const std::string& placement,
                                                 const libsched::Registry& reg) {
  sc.scheduler.placement = placement;
  sim::SimOptions o;
  o.registry = &reg;
  sim::Simulator s(sc, std::move(o));
  s.run();
  std::vector<std::vector<std::string>> out;
  for (const auto* a : s.attempts())
    if (a->attempt == 1) {
      std::vector<std::string> names;
      for (const std::int32_t n : a->nodes) names.push_back(s.node_name(n));
      out.push_back(std::move(names));
    }
  return out;
}

sim::io::Scenario three_small_gangs() {
  auto sc = simtest::cluster(4);
  sc.tasks.push_back(simtest::task("a", 0, 100, 1, "a100.1x"));
  sc.tasks.push_back(simtest::task("b", 10, 100, 0, "a100.1x"));
  sc.tasks.push_back(simtest::task("c", 20, 100, 2, "a100.1x"));
  return sc;
}

}  // namespace

TEST_CASE("the simulator places with the policy named in the scenario from SimOptions::registry") {
  const auto reg = registry();
  const auto custom = placements(three_small_gangs(), "highest-id", reg);
  const auto best_fit = placements(three_small_gangs(), "best-fit", reg);
  REQUIRE(custom.size() == 3);
  CHECK(custom[0] == std::vector<std::string>{"a100-3", "a100-3"});
  CHECK(best_fit[0] == std::vector<std::string>{"a100-0", "a100-0"});
  CHECK(custom != best_fit);
}

TEST_CASE("without a registry the simulator refuses a name that only a custom registry knows") {
  auto sc = three_small_gangs();
  sc.scheduler.placement = "highest-id";
  CHECK_THROWS_AS(sim::Simulator(sc), std::out_of_range);
}

TEST_CASE("fill runs a custom policy from FillOptions::registry") {
  const auto reg = registry();
  sim::Simulator built(three_small_gangs());
  std::vector<libsched::TaskSpec> tasks;
  for (std::size_t i = 0; i < built.scheduler().task_count(); ++i)
    tasks.push_back(built.scheduler().task(libsched::TaskId(std::int32_t(i))));
  sim::FillOptions fo;
  fo.policy = "highest-id";
  fo.semantics = sim::FillSemantics::platform;  // custom policies run through libsched's scheduler
  fo.target_pct = 50;
  fo.registry = &reg;
  const auto r = sim::run_fill(built.scheduler().cluster(), tasks, fo);
  CHECK(r.tasks_placed > 0);
  fo.registry = nullptr;
  CHECK_THROWS_AS(sim::run_fill(built.scheduler().cluster(), tasks, fo), std::out_of_range);
}

TEST_CASE("fill --policy with an unregistered name exits 2 and lists the registered names") {
  const auto reg = registry();
  auto sc = three_small_gangs();
  sc.file = "s.json";
  sim::FillCommandOptions o;
  o.out_dir = "/tmp/schedsim_registry_fill_" + std::to_string(::getpid());
  o.policy = "lowest-id";
  o.semantics = "platform";
  o.registry = &reg;
  std::ostringstream out, err;
  CHECK(sim::fill_command(sc, o, out, err) == 2);
  CHECK_THAT(err.str(), Catch::StartsWith("s.json: --policy: lowest-id: unknown placement policy (registered: ") &&
                            Catch::Contains("highest-id") && Catch::Contains("best-fit"));
}

TEST_CASE("sim::cli_main validates scenarios against the registry it is given") {
  const std::string path = "/tmp/schedsim_registry_cli_" + std::to_string(::getpid()) + ".json";
  {
    auto sc = three_small_gangs();
    sc.scheduler.placement = "highest-id";
    std::ofstream(path) << sim::io::scenario_to_json(sc).dump();
  }
  std::string a0 = "schedsim", a1 = "validate", a2 = path;
  char* argv[] = {a0.data(), a1.data(), a2.data(), nullptr};
  // Keep the diagnostics out of the test log.
  std::ostringstream sink;
  auto* old_out = std::cout.rdbuf(sink.rdbuf());
  auto* old_err = std::cerr.rdbuf(sink.rdbuf());
  const int custom = sim::cli_main(3, argv, registry());
  const int builtin = sim::cli_main(3, argv);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  std::remove(path.c_str());
  CHECK(custom == 0);
  CHECK(builtin == 2);
  CHECK_THAT(sink.str(), Catch::Contains("scheduler.placement: \"highest-id\": must be one of"));
}

TEST_CASE("the scenario's queue_order, victim_order and admission reach the scheduler by name") {
  class Reverse final : public libsched::QueueOrder {
   public:
    std::string_view name() const override { return "reverse"; }
    libsched::Rank rank(const libsched::TaskSpec& s, libsched::TaskId) const override { return {-s.submit, 0, 0}; }
  };
  libsched::Registry reg = registry();
  reg.queue_order.add("reverse", [](const libsched::PolicyContext&) { return std::make_unique<Reverse>(); });
  auto sc = three_small_gangs();
  sc.scheduler.queue_order = "reverse";
  sim::SimOptions o;
  o.registry = &reg;
  sim::Simulator s(sc, std::move(o));
  CHECK(s.scheduler().options().queue_order == "reverse");
  CHECK(s.scheduler().options().victim_order == "idle-spot-first");
  CHECK(s.scheduler().options().admission == "quota");
  sc.scheduler.queue_order = "no-such-order";
  CHECK_THROWS_AS(sim::Simulator(sc, sim::SimOptions{}), libsched::UnknownName);
}

}  // namespace SCHEDSIM_UNITY_ID
