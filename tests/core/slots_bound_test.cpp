// Session::fits_by_slots_at_least, the lower bound of a gang's node slots that lets the head's
// reservation walk (actions::reservation) answer without counting releases per node: the
// reservations must stay those of the walk without fast paths, which applies every release and
// places the head.
#include <catch2/catch.hpp>
#include "builders.hpp"
#include "tests/common/unity.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {

SchedulerOptions backfill_options(bool fast, std::string placement = "best-fit") {
  SchedulerOptions o;
  o.queueing = Queueing::backfill;
  o.preemption = false;
  o.fast_paths = fast;
  o.placement = std::move(placement);
  return o;
}

}  // namespace

TEST_CASE("a head's reservation waits for a node to free whole, not for released fragments that only add up") {
  // Two 2-vCPU nodes, each holding two 1-vCPU tasks (worst-fit spreads them) expected to end
  // at 10, 20, 30 and 40 s. A 2-vCPU head fits once both tasks of one node have ended. 2 vCPU
  // are free in all from the second end on, one on each node: a bound that summed released
  // vCPU over the nodes instead of counting what each released replica alone holds would
  // reserve the second end.
  for (bool fast : {true, false}) {
    Scheduler s(make_cluster().pool("p").nodes("n", 2, "", 0, 2, 16).build(), backfill_options(fast, "worst-fit"));
    std::vector<TaskId> small;
    for (int i = 0; i < 4; ++i)
      small.push_back(submit(s, make_task("s" + std::to_string(i)).option("x", cpu_only(1)).estimate(10000 * (i + 1))));
    REQUIRE(s.schedule(0).started.size() == 4);
    Time node_free[2] = {0, 0};
    for (TaskId t : small) {
      Time& f = node_free[s.placement_of(t)->replicas[0].node.index()];
      f = std::max(f, s.task(t).runtime_estimate);
    }
    const Time expect = std::min(node_free[0], node_free[1]);
    REQUIRE(expect == 30000);  // (spread: the sum of releases reaches 2 vCPU at 20 s)
    const TaskId big = submit(s, make_task("big").option("x", cpu_only(2)).estimate(1000), 1);
    REQUIRE(s.schedule(1).started.empty());
    INFO("fast paths " << fast);
    CHECK(s.reservation(big, 1) == expect);
    // Whole nodes: a 1-vCPU head of two replicas fits at the second end.
    const TaskId pair = submit(s, make_task("pair").option("x", cpu_only(1)).workers(1).estimate(1000).priority(9), 1);
    CHECK(s.reservation(pair, 1) == 20000);
  }
}

TEST_CASE("reservations of CPU-only gangs equal those of the walk without fast paths") {
  // Random CPU-only clusters (1-4 vCPU nodes, some down or drained) and gangs of 1-6 CPU-only
  // replicas of 1-3 vCPU with estimates (one in five with a second option), run twice: with
  // fast paths (the walk counts slots, deciding by its lower bound first: actions::slot_bound_fits
  // for one option, Session::fits_by_slots_at_least for two) and without (every walk applies
  // its releases and places the head). Every step's starts and every waiting task's
  // reservation must be equal.
#ifdef SCHEDSIM_SANITIZED
  constexpr std::uint32_t kSeeds = 12;
#else
  constexpr std::uint32_t kSeeds = 60;
#endif
  std::size_t reservations = 0, known = 0;
  for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) {
    Gen g(seed);
    ClusterBuilder cb = make_cluster().pool("p");
    const auto nodes = g.range(2, 24);
    for (std::int64_t i = 0; i < nodes; ++i) cb.node("n" + std::to_string(i), "", 0, g.range(1, 4), g.range(2, 8));
    Scheduler fast(cb.build(), backfill_options(true));
    Scheduler slow(cb.build(), backfill_options(false));
    std::vector<TaskId> running;
    Time now = 0;
    for (int step = 0; step < 40; ++step, now += 1000 * g.range(1, 30)) {
      for (auto k = g.range(0, 3); k > 0; --k) {
        TaskBuilder b = make_task("t" + std::to_string(step) + "-" + std::to_string(k));
        b.option("x", cpu_only(g.range(1, 3), g.range(0, 4))).workers(std::int32_t(g.range(0, 5))).submitted(now);
        if (g.chance(20)) b.option("y", cpu_only(g.range(1, 2), g.range(0, 2)));  // (the bound over the pending releases)
        b.estimate(1000 * g.range(1, 300));
        const TaskId a = submit(fast, b, now);
        const TaskId c = submit(slow, b, now);
        REQUIRE(a == c);
      }
      if (!running.empty() && g.chance(50)) {
        const std::size_t i = std::size_t(g.range(0, std::int64_t(running.size()) - 1));
        fast.release(running[i], now);
        slow.release(running[i], now);
        running.erase(running.begin() + std::ptrdiff_t(i));
      }
      if (g.chance(10)) {
        const NodeId n(std::int32_t(g.range(0, nodes - 1)));
        const bool up = g.chance(50);
        if (up || fast.tasks_on_node(n).empty()) {  // (a node goes down only once its tasks are released)
          fast.set_node_up(n, up, now);
          slow.set_node_up(n, up, now);
        }
      }
      if (g.chance(10)) {
        const NodeId n(std::int32_t(g.range(0, nodes - 1)));
        if (g.chance(50)) {
          fast.drain_node(n);
          slow.drain_node(n);
        } else {
          fast.undrain_node(n);
          slow.undrain_node(n);
        }
      }
      const ScheduleResult rf = fast.schedule(now);
      const ScheduleResult rs = slow.schedule(now);
      REQUIRE(rf.started == rs.started);
      running.insert(running.end(), rf.started.begin(), rf.started.end());
      for (TaskId t : fast.queue()) {
        INFO("seed " << seed << " step " << step << " task " << fast.task(t).name);
        const Time a = fast.reservation(t, now);
        REQUIRE(a == slow.reservation(t, now));
        ++reservations;
        known += a != kTimeNever;
      }
    }
  }
  // Not vacuous: many reservations were found.
  CHECK(known > 500 * kSeeds / 60);
  CHECK(reservations > known);
}

}  // namespace SCHEDSIM_UNITY_ID
