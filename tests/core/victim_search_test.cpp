// The bucketed victim search (actions/preempt.hpp VictimStream, Core::victim_buckets_): with
// fast paths and the builtin victim order, running tasks are kept in buckets by (capacity
// class, priority slot) and a search builds only the buckets it reaches. Each rule it relies
// on is checked against the reference search (fast paths off: every running task scanned,
// the whole order sorted), which must choose the same victims.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {

/// What one preempting decision did: the victims' names (in the order reported) and the
/// preemptor's nodes ("-" when it did not start).
struct Outcome {
  std::vector<std::string> victims;
  std::vector<std::string> nodes;
  friend bool operator==(const Outcome&, const Outcome&) = default;
};

/// Builds a scheduler on `nodes` 8-GPU nodes of pool "p" (fast paths as given), lets `setup`
/// start the running tasks and submit the preemptor (returned), and schedules at `now`.
Outcome decide(bool fast, int nodes, const std::function<TaskId(Scheduler&, PoolId)>& setup, Time now) {
  SchedulerOptions o;
  o.fast_paths = fast;
  Cluster c = make_cluster().pool("p").nodes("n", nodes).build();
  const PoolId p = c.find_pool("p");
  Scheduler s(c, o);
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(1000));
  const TaskId hi = setup(s, p);
  ScheduleResult r = s.schedule(now);
  Outcome out;
  for (TaskId v : victims(r)) out.victims.push_back(s.task(v).name);
  out.nodes = started(r, hi) ? nodes_of(s, hi) : std::vector<std::string>{"-"};
  return out;
}

/// decide() with fast paths (the bucketed search) and without (the reference); requires both
/// to agree and returns the fast one.
Outcome both_ways(int nodes, const std::function<TaskId(Scheduler&, PoolId)>& setup, Time now) {
  Outcome fast = decide(true, nodes, setup, now);
  Outcome ref = decide(false, nodes, setup, now);
  CHECK(fast == ref);
  return fast;
}

}  // namespace

TEST_CASE("reserved and pay-as-you-go victims of one priority are ordered together, by work lost") {
  // The order's first key puts reserved and pay-as-you-go capacity together: within priority 2
  // the task losing least work goes first whatever its class (its bucket is read with the
  // other's before either is ordered). n2 holds a guaranteed task; at 250 s the task with a
  // 100 s checkpoint loses 50 s, the other 250 s.
  for (bool reserved_loses_less : {false, true}) {
    INFO("reserved loses less: " << reserved_loses_less);
    Outcome o = both_ways(
        3,
        [&](Scheduler& s, PoolId p) {
          TaskBuilder r = make_task("reserved").reserved(p).priority(2).option("x", gpus(8));
          TaskBuilder g = make_task("payg").pay_as_you_go().priority(2).option("x", gpus(8));
          (reserved_loses_less ? r : g).checkpoint_every(100'000);
          submit(s, r);
          submit(s, g);
          submit(s, make_task("g").guaranteed().option("x", gpus(8)));
          s.schedule(0);
          REQUIRE(s.running_count() == 3);
          return submit(s, make_task("hi").priority(9).option("x", gpus(8)), 250'000);
        },
        250'000);
    CHECK(o.victims == std::vector<std::string>{reserved_loses_less ? "reserved" : "payg"});
  }
}

TEST_CASE("buckets at or above the preemptor's priority are skipped whole; spot buckets are read at any priority") {
  // A priority-5 gang of two nodes: p5 and p6 (pay-as-you-go) may not yield, their buckets are
  // skipped; the priority-9 spot task goes first (spot before the others, whatever its
  // priority), then p4.
  Outcome o = both_ways(
      4,
      [&](Scheduler& s, PoolId) {
        submit(s, make_task("p5").priority(5).option("x", gpus(8)));
        submit(s, make_task("p6").priority(6).option("x", gpus(8)));
        submit(s, make_task("spot9").spot().priority(9).option("x", gpus(8)));
        submit(s, make_task("p4").priority(4).option("x", gpus(8)));
        s.schedule(0);
        REQUIRE(s.running_count() == 4);
        return submit(s, make_task("hi").priority(5).workers(1).option("x", gpus(8)), 1);
      },
      1);
  std::sort(o.victims.begin(), o.victims.end());
  CHECK(o.victims == std::vector<std::string>{"p4", "spot9"});
}

TEST_CASE("a victim bucket keeps exactly its running tasks as tasks in it end (swap-remove)") {
  // Five priority-1 tasks of one bucket, in sequence order a..e on n0..n4; b then d end (b's
  // slot takes e, then d's slot takes c). A 4-node gang needs the two free nodes and two
  // victims: the first two of the order, a and c; an ended task is never one.
  Outcome o = both_ways(
      5,
      [&](Scheduler& s, PoolId) {
        std::vector<TaskId> t;
        for (const char* name : {"a", "b", "c", "d", "e"}) t.push_back(submit(s, make_task(name).priority(1).option("x", gpus(8))));
        s.schedule(0);
        REQUIRE(s.running_count() == 5);
        s.release(t[1], 1'000);
        s.release(t[3], 2'000);
        return submit(s, make_task("hi").priority(9).workers(3).option("x", gpus(8)), 3'000);
      },
      3'000);
  std::sort(o.victims.begin(), o.victims.end());
  CHECK(o.victims == std::vector<std::string>{"a", "c"});
}

TEST_CASE("the search learns the candidate count as it reads: all of them when the gang needs all, none when all are not enough") {
  // Five candidates (not a power of two: the galloping search's last prefix is the count) and
  // a 5-node gang: every candidate goes. With a sixth node held by a guaranteed task and a
  // 6-node gang, all five are not enough: nothing is preempted.
  for (int width : {5, 6}) {
    INFO("gang of " << width << " nodes");
    Outcome o = both_ways(
        6,
        [&](Scheduler& s, PoolId) {
          for (int i = 0; i < 5; ++i) submit(s, make_task(fmt::format("v{}", i)).priority(1 + i % 3).option("x", gpus(8)));
          submit(s, make_task("g").guaranteed().option("x", gpus(8)));
          s.schedule(0);
          REQUIRE(s.running_count() == 6);
          return submit(s, make_task("hi").priority(9).workers(width - 1).option("x", gpus(8)), 1);
        },
        1);
    CHECK(o.victims.size() == (width == 5 ? 5u : 0u));
  }
}

namespace {
/// A random run on 10 8-GPU nodes: at each step a few arrivals of every capacity class
/// (reserved, pay-as-you-go, spot, idle; some reserved ones accept idle capacity), priorities 1..9, guarantee, checkpoints, gangs of 1-3 replicas of 1-8 GPUs; two
/// schedule() calls per instant (the second sees tasks started at that instant); random ends.
/// Returns every start (nodes) and preemption, and counts the preemptions.
std::vector<std::string> random_run(std::uint32_t seed, bool fast, std::size_t& preemptions) {
  Gen g(seed);
  SchedulerOptions o;
  o.fast_paths = fast;
  Cluster c = make_cluster().pool("p").nodes("n", 10).build();
  const PoolId p = c.find_pool("p");
  Scheduler s(c, o);
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(48));
  const std::vector<int> priorities{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<int> gpu_counts{1, 2, 4, 8, 8};
  std::vector<std::string> out;
  Time now = 0;
  for (int step = 0; step < 60; ++step) {
    now += g.range(1, 4) * 1'000;
    for (std::int64_t i = 0, n = g.range(0, 4); i < n; ++i) {
      TaskBuilder b = make_task(fmt::format("t{}-{}", step, i));
      const std::int64_t cls = g.range(0, 3);
      switch (cls) {
        case 0: b.reserved(p); break;
        case 1: b.pay_as_you_go(); break;
        case 2: b.spot(); break;
        default: b.idle(); break;
      }
      b.priority(g.pick(priorities)).submitted(now).option("x", gpus(std::int32_t(g.pick(gpu_counts))));
      if (cls <= 1 && g.chance(20)) b.guaranteed();
      if (cls == 0 && g.chance(30)) b.accept_idle();
      if (g.chance(50)) b.checkpoint_every(g.range(1, 5) * 1'000);
      if (g.chance(20)) b.workers(std::int32_t(g.range(1, 2)));
      submit(s, b, now);
    }
    for (int call = 0; call < 2; ++call) preemptions += record_schedule(s, now, out);
    for (TaskId t : std::vector<TaskId>(s.running().begin(), s.running().end()))
      if (g.chance(8)) s.release(t, now);
  }
  return out;
}
}  // namespace

TEST_CASE("random mixes of running tasks: the bucketed victim search chooses the reference's victims") {
  std::size_t preemptions = 0, ignored = 0;
  for (std::uint32_t seed = 1; seed <= 150; ++seed) {
    INFO("seed " << seed);
    std::vector<std::string> fast = random_run(seed, true, preemptions);
    std::vector<std::string> ref = random_run(seed, false, ignored);
    REQUIRE(fast.size() == ref.size());
    for (std::size_t i = 0; i < fast.size(); ++i) REQUIRE(fast[i] == ref[i]);
  }
  CHECK(preemptions > 500);  // the comparison is not vacuous
}

}  // namespace SCHEDSIM_UNITY_ID
