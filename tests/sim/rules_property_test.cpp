// Property test over random simulated scenarios (seeded, deterministic): the platform rules of
// docs/scheduler.md hold for every attempt in tasks.csv terms.
//   * no zero-length attempt: start_s == end_s only for a task of duration 0 (none here, and
//     no injected faults or start-up costs that could end an attempt at its start);
//   * no gang mixes idle and non-idle capacity: an attempt on idle capacity of a reserved task
//     (accept_idle / prefer_idle) has no replica in the task's own pool, an attempt on
//     reserved capacity has every replica there;
//   * a guaranteed task is never preempted on non-idle capacity;
//   * no task is evicted by a task of equal or lower priority, on any capacity class but spot
//     (spot capacity is evicted whenever its host is needed, by any non-spot, non-idle task);
//     an idle task has no priority (0); a reserved task borrowing idle capacity keeps its own;
//   * no two tasks evict each other (at one instant or at any two).
#include <map>
#include <set>
#include <string>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace {

class Gen {
 public:
  explicit Gen(std::uint32_t seed) : rng_(seed) {}
  int range(int lo, int hi) { return boost::random::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(int percent) { return range(0, 99) < percent; }

 private:
  boost::random::mt19937 rng_;
};

/// `borrowers`: contention for idle capacity (most tasks reserved with accept_idle, little
/// quota), so that borrowers meet borrowers; otherwise the mix of every class.
sim::io::Scenario random_scenario(std::uint32_t seed, bool borrowers = false) {
  Gen g(seed);
  sim::io::Scenario sc = simtest::cluster(0);
  sc.seed = seed;
  const char* queueing[] = {"greedy", "strict", "backfill"};
  sc.scheduler.queueing = queueing[g.range(0, 2)];
  sc.scheduler.preemption = g.chance(80);
  sc.scheduler.idle_stability_high_s = g.range(50, 400);
  sc.scheduler.idle_stability_medium_s = g.range(10, 100);
  const char* pools[] = {"pa", "pb", "pc"};
  sc.cluster.pools.clear();
  for (int p = 0; p < 3; ++p) {
    sim::io::PoolCfg pc;
    pc.name = pools[p];
    pc.kind = p == 2 || g.chance(50) ? "shared" : "dedicated";
    sim::io::NodeGroupCfg ng;
    ng.prefix = std::string(pools[p]) + "-";
    ng.count = g.range(1, 3);
    ng.gpu_model = "A100";
    ng.gpus = 8;
    ng.vcpu = 96;
    ng.memory_gib = 960;
    pc.node_groups.push_back(ng);
    sc.cluster.pools.push_back(pc);
  }
  const char* users[] = {"alice", "bob", "carol"};
  for (const char* u : users)
    for (const char* p : pools)
      if (g.chance(60)) {
        double gpus = 8 * g.range(0, 3);
        sc.quotas.push_back({u, "reserved", p, gpus, gpus * 12, gpus * 120});
      }
  int n = g.range(5, 25);
  for (int i = 0; i < n; ++i) {
    auto t = simtest::task(fmt::format("t{:02}", i), g.range(0, 600), g.range(1, 800), g.range(0, 2),
                           g.chance(50) ? "a100.8x" : "a100.1x");
    t.user = users[g.range(0, 2)];
    int rt = g.range(0, 99);
    if (borrowers) rt = rt < 70 ? rt * 45 / 70 : 45 + (rt - 70) * 55 / 30;  // 70 % reserved
    t.resource_type = rt < 45 ? "reserved" : rt < 65 ? "pay_as_you_go" : rt < 80 ? "spot" : "idle";
    t.pool = pools[g.range(0, 2)];
    const char* stab[] = {"low", "medium", "high"};
    if (t.resource_type == "idle") {
      t.pool = "";
      t.idle_stability = stab[g.range(0, 2)];
    } else {
      t.priority = g.range(1, 9);
      t.priority_set = true;
    }
    if (t.resource_type == "reserved" || t.resource_type == "pay_as_you_go") {
      t.guarantee = g.chance(30);
      t.guarantee_set = true;
    }
    if (t.resource_type == "pay_as_you_go" && g.chance(50)) t.pool = "pc";  // the shared pool
    if (t.resource_type == "reserved") {
      t.accept_idle = g.chance(borrowers ? 85 : 50);
      t.prefer_idle = !t.accept_idle && g.chance(20);
      if (t.accept_idle || t.prefer_idle) t.idle_stability = stab[g.range(0, 2)];
    }
    if (g.chance(60)) t.runtime_estimate_s = t.duration_s + g.range(0, 100);
    if (g.chance(30)) t.checkpoint_interval_s = g.range(10, 200);
    t.fault_tolerance.max_resubmissions = g.range(0, 3);
    sc.tasks.push_back(t);
  }
  return sc;
}

}  // namespace

TEST_CASE("random simulations: no zero-length attempt, no gang mixing idle and non-idle capacity, no guaranteed victim") {
  constexpr std::uint32_t kScenarios = 300;
  std::size_t attempts = 0, preempted = 0, on_idle_fallback = 0, guaranteed_on_idle_reclaimed = 0;
  for (std::uint32_t seed = 1; seed <= kScenarios; ++seed) {
    auto sc = random_scenario(seed);
    std::map<std::string, std::string> pool_of;  // node name -> pool name
    for (const auto& p : sc.cluster.pools)
      for (const auto& g : p.node_groups)
        for (int i = 0; i < g.count; ++i) pool_of[g.prefix + std::to_string(i)] = p.name;
    sim::Simulator s(sc);
    s.run();
    for (const auto* a : s.attempts()) {
      const auto& t = sc.tasks[std::size_t(a->task)];
      INFO("seed " << seed << " task " << t.name << " attempt " << a->attempt << " capacity " << a->capacity << " start "
                   << a->start << " end " << a->end << " reason " << a->reason);
      ++attempts;
      if (a->start < 0) continue;  // never started
      if (a->end >= 0) CHECK(a->end > a->start);
      bool preemption = a->reason.find("was preempted by another task") != std::string::npos;
      preempted += preemption;
      if (t.resource_type == "reserved" && a->capacity == "idle") {
        ++on_idle_fallback;
        for (const std::int32_t node : a->nodes) CHECK(pool_of[s.node_name(node)] != t.pool);
      }
      if (a->capacity == "reserved")
        for (const std::int32_t node : a->nodes) CHECK(pool_of[s.node_name(node)] == t.pool);
      if (preemption && t.guarantee) {
        CHECK(a->capacity == "idle");
        ++guaranteed_on_idle_reclaimed;
      }
    }
  }
  // The generator must exercise what the properties are about.
  CHECK(preempted > kScenarios / 2);
  CHECK(on_idle_fallback > kScenarios / 5);
  CHECK(guaranteed_on_idle_reclaimed > 0);
  WARN(fmt::format("{} attempts, {} preempted, {} on idle fallback, {} guaranteed reclaimed on idle", attempts, preempted,
                   on_idle_fallback, guaranteed_on_idle_reclaimed));
}

TEST_CASE("random simulations: no task is evicted by one of equal or lower priority, and no two tasks evict each other") {
#ifdef SCHEDSIM_SANITIZED
  constexpr std::uint32_t kScenarios = 60;
#else
  constexpr std::uint32_t kScenarios = 400;
#endif
  std::size_t evictions = 0, on_idle = 0, borrower_by_borrower = 0, spot = 0;
  for (std::uint32_t seed = 1; seed <= kScenarios; ++seed) {
    auto sc = random_scenario(100000 + seed, seed % 2 == 0);
    std::map<std::string, std::size_t> index;  // task name -> scenario index
    for (std::size_t i = 0; i < sc.tasks.size(); ++i) index[sc.tasks[i].name] = i;
    // Victim rule priority: an idle task has none (0 in the scheduler).
    auto priority = [&](std::size_t i) { return sc.tasks[i].resource_type == "idle" ? 0 : sc.tasks[i].priority; };
    sim::Simulator s(sc);
    s.run();
    // The capacity class each task's attempt started on at each instant.
    std::map<std::pair<std::string, std::int64_t>, std::string> started_on;
    for (const auto* a : s.attempts())
      if (a->start >= 0) started_on[{sc.tasks[std::size_t(a->task)].name, a->start}] = std::string(a->capacity);
    std::set<std::pair<std::string, std::string>> evicted;  // (victim, preemptor)
    for (const auto* a : s.attempts()) {
      if (a->preemptor.empty()) continue;
      const auto& v = sc.tasks[std::size_t(a->task)];
      const std::string p_name(a->preemptor);
      REQUIRE(index.count(p_name) == 1);
      const std::size_t pi = index[p_name];
      const auto& p = sc.tasks[pi];
      INFO("seed " << seed << " victim " << v.name << " (" << v.resource_type << ", priority " << priority(std::size_t(a->task))
                   << ", on " << a->capacity << ") evicted at " << a->end << " by " << p.name << " (" << p.resource_type
                   << ", priority " << priority(pi) << "): " << a->reason);
      ++evictions;
      CHECK(p.resource_type != "idle");
      CHECK(p.resource_type != "spot");
      if (a->capacity == "spot") {
        ++spot;
        CHECK(a->reason.find("(spot_eviction)") != std::string_view::npos);
      } else {
        CHECK(priority(pi) > priority(std::size_t(a->task)));
      }
      if (a->capacity == "idle") {
        ++on_idle;
        auto it = started_on.find({p.name, a->end});
        REQUIRE(it != started_on.end());  // the preemptor started at the eviction instant
        if (v.resource_type == "reserved" && it->second == "idle") ++borrower_by_borrower;
      }
      evicted.insert({v.name, p.name});
    }
    for (const auto& [victim, preemptor] : evicted) {
      INFO("seed " << seed << ": " << preemptor << " evicted " << victim << " and " << victim << " evicted " << preemptor);
      CHECK(evicted.count({preemptor, victim}) == 0);
    }
  }
  // The generator must exercise what the properties are about.
  CHECK(evictions > kScenarios);
  CHECK(on_idle > kScenarios / 4);
  CHECK(borrower_by_borrower > kScenarios / 50);
  CHECK(spot > 0);
  WARN(fmt::format("{} evictions, {} on idle capacity ({} borrowers by borrowers), {} spot evictions", evictions, on_idle,
                   borrower_by_borrower, spot));
}

}  // namespace SCHEDSIM_UNITY_ID
