// Request classes (libsched::SchedulerOptions::request_classes, sim::SimOptions::request_classes)
// change no output: random congested greedy and backfill simulations (a long queue of a few request shapes
// on a small cluster, with quotas, priorities and preemption, spot and idle work, node
// failures, failed prechecks that cordon nodes, image pulls and transient failures that
// resubmit attempts) write the same tasks.csv, groups.csv, summary.json and timeline.json with
// the classes on and off. Seeded, deterministic.
#include <string>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "builders.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

namespace {

class Gen {
 public:
  explicit Gen(std::uint32_t seed) : rng_(seed) {}
  int range(int lo, int hi) { return boost::random::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(int percent) { return range(0, 99) < percent; }

 private:
  boost::random::mt19937 rng_;
};

/// 2-5 nodes of 8 GPUs in two pools, 60-160 tasks of four shapes arriving within 30 min and
/// running 5-60 min: the queue holds tens of tasks of each class most of the run.
/// `queueing`: greedy or backfill; `estimate_percent`: the share of tasks with a runtime
/// estimate.
sim::io::Scenario congested(std::uint32_t seed, const char* queueing = "greedy", int estimate_percent = 50) {
  Gen g(seed);
  sim::io::Scenario sc = simtest::cluster(0);
  sc.seed = seed;
  sc.scheduler.queueing = queueing;
  sc.scheduler.preemption = g.chance(60);
  sc.scheduler.placement = g.chance(50) ? "best-fit" : "first-fit";
  sc.cluster.pools.clear();
  const char* pools[] = {"pa", "pb"};
  for (int p = 0; p < 2; ++p) {
    sim::io::PoolCfg pc;
    pc.name = pools[p];
    pc.kind = p == 1 ? "shared" : "dedicated";
    sim::io::NodeGroupCfg ng;
    ng.prefix = std::string(pools[p]) + "-";
    ng.count = g.range(1, p == 0 ? 2 : 3);
    ng.gpu_model = "A100";
    ng.gpus = 8;
    ng.vcpu = 96;
    ng.memory_gib = 960;
    if (g.chance(40)) {
      ng.mtbf_s = g.range(2000, 8000);
      ng.mttr_s = g.range(100, 900);
    }
    if (g.chance(30)) ng.unhealthy_prob = 0.2;
    pc.node_groups.push_back(ng);
    sc.cluster.pools.push_back(pc);
  }
  const char* users[] = {"alice", "bob"};
  for (const char* u : users)
    if (g.chance(70)) sc.quotas.push_back({u, "reserved", "pa", 8.0 * g.range(0, 2), 96, 960});
  const int n = g.range(60, 160);
  for (int i = 0; i < n; ++i) {
    const int shape = g.range(0, 3);
    auto t = simtest::task(fmt::format("t{:03}", i), g.range(0, 1800), g.range(300, 3600), shape == 3 ? 1 : 0,
                           shape == 0 ? "a100.1x" : "a100.8x");
    t.user = users[g.range(0, 1)];
    const int rt = g.range(0, 99);
    t.resource_type = rt < 30 ? "reserved" : rt < 75 ? "pay_as_you_go" : rt < 90 ? "spot" : "idle";
    t.pool = t.resource_type == "reserved" ? "pa" : t.resource_type == "idle" ? "" : "pb";
    if (t.resource_type != "idle") {
      t.priority = g.chance(70) ? 3 : 6;
      t.priority_set = true;
    } else {
      t.idle_stability = "low";
    }
    if (t.resource_type == "reserved") t.accept_idle = g.chance(30);
    if (g.chance(estimate_percent)) t.runtime_estimate_s = t.duration_s + g.range(0, 100);
    if (g.chance(20)) t.precheck_s = 30;
    if (g.chance(10)) t.image_pull_failure_prob = 0.3;
    if (g.chance(10)) t.transient_failure_rate_per_h = 0.5;
    t.fault_tolerance.max_resubmissions = g.range(0, 2);
    sc.tasks.push_back(t);
  }
  return sc;
}

/// The run's outputs, with the request classes on or off.
std::string outputs(const sim::io::Scenario& sc, bool classes) {
  sim::SimOptions o;
  o.request_classes = classes;
  sim::Simulator s(sc, o);
  s.run();
  return s.tasks_csv() + "\n--\n" + s.groups_csv() + "\n--\n" + s.summary_json() + "\n--\n" + s.timeline_json();
}

}  // namespace

TEST_CASE("request classes: random congested greedy simulations write the same outputs with the classes on and off") {
#ifdef SCHEDSIM_SANITIZED
  constexpr std::uint32_t kScenarios = 15;  // ASan + UBSan run about 20x slower
#else
  constexpr std::uint32_t kScenarios = 60;
#endif
  std::size_t waited = 0;
  for (std::uint32_t seed = 1; seed <= kScenarios; ++seed) {
    const sim::io::Scenario sc = congested(seed);
    INFO("seed " << seed);
    const std::string off = outputs(sc, false);
    const std::string on = outputs(sc, true);
    REQUIRE(on == off);
    sim::Simulator s(sc);
    s.run();
    waited += s.summary_json().find("\"mean_wait_s\": 0,") == std::string::npos;
  }
  CHECK(waited > kScenarios * 9 / 10);  // congested: tasks waited in nearly every scenario
}

TEST_CASE("request classes: random congested backfill simulations write the same outputs with the classes on and off") {
  // Without runtime estimates no head has a reservation and backfill passes go by class; with
  // a few (10 %), a pass falls back to the walk once a started task brings a reservation.
#ifdef SCHEDSIM_SANITIZED
  constexpr std::uint32_t kScenarios = 10;  // ASan + UBSan run about 20x slower
#else
  constexpr std::uint32_t kScenarios = 40;
#endif
  std::size_t waited = 0;
  for (std::uint32_t seed = 1; seed <= kScenarios; ++seed) {
    const sim::io::Scenario sc = congested(seed, "backfill", seed % 2 == 0 ? 0 : 10);
    INFO("seed " << seed);
    const std::string off = outputs(sc, false);
    const std::string on = outputs(sc, true);
    REQUIRE(on == off);
    waited += on.find("\"mean_wait_s\": 0,") == std::string::npos;
  }
  CHECK(waited > kScenarios * 9 / 10);
}

}  // namespace SCHEDSIM_UNITY_ID
