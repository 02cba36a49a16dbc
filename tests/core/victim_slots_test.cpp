// The victim search's probes by slots (actions/preempt.hpp SlotProbe): with fast paths and a
// preemptor whose gang is replicas of one exact-slot shape (Session::slots_decide), the search
// answers "would the gang start with these victims released?" by counting what they hold per
// node and per (pool, model) (Session::fits_by_slots) instead of releasing them into the
// cluster, placing the gang and rolling back. Each case is checked against the reference
// search (fast paths off: every probe released and placed), which must choose the same
// victims and place the preemptor on the same nodes.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {

/// The options of a search under placement policy `placement`: with fast paths (by slots where
/// the shape allows) or without (the reference search).
SchedulerOptions options_for(bool fast, const std::string& placement) {
  SchedulerOptions o;
  o.fast_paths = fast;
  o.placement = placement;
  return o;
}

/// A random run on two pools of 8-GPU nodes (A100 and V100, some with less vCPU and memory)
/// under placement policy `placement`: arrivals of every capacity class with random shapes
/// (GPU shares, whole GPUs, vCPU only; some pinned to a model), gangs of 1-6 replicas (most of
/// one shape, some with a different head), priorities 1..9, guarantees, checkpoints and
/// reserved quotas per user that bind; two schedule() calls per instant; random ends.
/// Returns every start (nodes) and preemption in order, and counts the preemptions.
std::vector<std::string> random_run(std::uint32_t seed, bool fast, const std::string& placement, std::size_t& preemptions) {
  Gen g(seed);
  const SchedulerOptions o = options_for(fast, placement);
  Cluster c = make_cluster()
                  .pool("a")
                  .nodes("a", 10, "A100")
                  .nodes("as", 4, "A100", 8, 24, 120)
                  .pool("b")
                  .nodes("b", 8, "V100")
                  .nodes("bs", 3, "V100", 8, 32, 200)
                  .build();
  const PoolId pa = c.find_pool("a"), pb = c.find_pool("b");
  Scheduler s(c, o);
  const std::vector<std::string> users{"alice", "bob", "carol"};
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, pa}, gpu_quota(60));
  s.quotas().set_limit(QuotaKey{"bob", ResourceType::reserved, pa}, gpu_quota(40, 200, 2000));
  s.quotas().set_limit(QuotaKey{"bob", ResourceType::reserved, pb}, gpu_quota(30));
  s.quotas().set_limit(QuotaKey{"carol", ResourceType::reserved, pb}, gpu_quota(50));
  const ShapeBounds bounds{0, 12, 0, 48, 25};
  std::vector<std::string> out;
  Time now = 0;
  for (int step = 0; step < 50; ++step) {
    now += g.range(1, 4) * 1'000;
    for (std::int64_t i = 0, n = g.range(1, 6); i < n; ++i) {
      TaskBuilder b = make_task(fmt::format("t{}-{}", step, i));
      const std::int64_t cls = g.range(0, 5);
      const PoolId pool = g.chance(50) ? pa : pb;
      switch (cls) {
        case 0:
        case 1: b.reserved(pool); break;
        case 2: b.pay_as_you_go(); break;
        case 3: b.spot(); break;
        default: b.idle(); break;
      }
      b.user(g.pick(users)).priority(std::int32_t(g.range(1, 9))).submitted(now);
      const ReplicaShape r = random_shape(g, c, bounds);
      if (g.chance(15)) b.option("x", random_shape(g, c, bounds), r);  // head and workers differ: placed probes
      else b.option("x", r);
      if (g.chance(10)) b.option("y", random_shape(g, c, bounds));
      if (g.chance(35)) b.workers(std::int32_t(g.range(1, 5)));
      if (cls <= 2 && g.chance(15)) b.guaranteed();
      if (g.chance(50)) b.checkpoint_every(g.range(1, 5) * 1'000);
      submit(s, b, now);
    }
    for (int call = 0; call < 2; ++call) preemptions += record_schedule(s, now, out);
    for (TaskId t : std::vector<TaskId>(s.running().begin(), s.running().end()))
      if (g.chance(4)) s.release(t, now);
  }
  return out;
}

#ifdef SCHEDSIM_SANITIZED
constexpr std::uint32_t kSeeds = 15;  // ASan + UBSan run about 15x slower
#else
constexpr std::uint32_t kSeeds = 60;
#endif

}  // namespace

TEST_CASE("victim search by slots: random mixes of shapes, pools, models and quotas choose the reference's victims") {
  // (dot-product: a policy whose pick is not known to ignore nodes that do not fit, so the
  // placement on the prefix found releases every victim.)
  for (const std::string placement : {"best-fit", "first-fit", "worst-fit", "dot-product"}) {
    std::size_t preemptions = 0, ignored = 0;
    for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) {
      INFO(placement << ", seed " << seed);
      std::vector<std::string> fast = random_run(seed, true, placement, preemptions);
      std::vector<std::string> ref = random_run(seed, false, placement, ignored);
      REQUIRE(fast.size() == ref.size());
      for (std::size_t i = 0; i < fast.size(); ++i) REQUIRE(fast[i] == ref[i]);
    }
    INFO(placement);
    CHECK(preemptions > 5 * kSeeds);  // the comparison is not vacuous
  }
}

TEST_CASE("victim search by slots: a long prefix of one-GPU victims for a gang of whole nodes") {
  // 24 nodes each run eight 1-GPU tasks of priorities 1..4; a gang of 5 whole nodes needs the
  // victims of five nodes, which the victim order scatters over all of them: the galloping and
  // binary search probe long prefixes, the nodes the gang takes keep only their victims, and
  // the minimisation drops none of those.
  for (const std::string placement : {"best-fit", "first-fit", "worst-fit"}) {
    INFO(placement);
    std::vector<std::string> res[2];
    for (bool fast : {true, false}) {
      const SchedulerOptions o = options_for(fast, placement);
      Cluster c = make_cluster().pool("p").nodes("n", 24).build();
      Scheduler s(c, o);
      Gen g(7);
      for (int i = 0; i < 24 * 8; ++i)
        submit(s, make_task(fmt::format("v{}", i)).priority(std::int32_t(g.range(1, 4))).checkpoint_every(g.range(1, 9) * 100).option("x", gpus(1)));
      s.schedule(0);
      REQUIRE(s.running_count() == 24 * 8);
      const TaskId hi = submit(s, make_task("hi").priority(9).workers(4).option("x", gpus(8)), 5'000);
      ScheduleResult r = s.schedule(5'000);
      REQUIRE(started(r, hi));
      for (TaskId v : victims(r)) res[fast].push_back(s.task(v).name);
      CHECK(res[fast].size() == 40u);
      for (const std::string& n : nodes_of(s, hi)) res[fast].push_back(n);
    }
    CHECK(res[0] == res[1]);
  }
}

TEST_CASE("victim search by slots: searches that fail and succeed in turn choose the reference's victims") {
  // The bucketed search checks every candidate in bucket order first only while searches fail
  // (Core::preempt_bound_failed_); the answers must not depend on which came before: a gang
  // that cannot start even with every candidate released (three whole nodes on two) preempts
  // nothing, after a success and after a failure, and a gang that can is started on the same
  // victims as the reference search's.
  for (const std::string placement : {"best-fit", "first-fit"}) {
    INFO(placement);
    std::vector<std::string> res[2];
    for (bool fast : {true, false}) {
      const SchedulerOptions o = options_for(fast, placement);
      Cluster c = make_cluster().pool("p").nodes("n", 2).build();
      Scheduler s(c, o);
      for (int i = 0; i < 16; ++i) submit(s, make_task(fmt::format("v{}", i)).priority(1 + i % 3).option("x", gpus(1)));
      s.schedule(0);
      REQUIRE(s.running_count() == 16);
      Time now = 1'000;
      auto attempt = [&](const std::string& name, std::int32_t workers) {
        const TaskId t = submit(s, make_task(name).priority(9).workers(workers).option("x", gpus(8)), now);
        ScheduleResult r = s.schedule(now);
        res[fast].push_back(name + (started(r, t) ? " started" : " waits"));
        for (TaskId v : victims(r)) res[fast].push_back(s.task(v).name);
        for (const std::string& n : nodes_of(s, t)) res[fast].push_back(n);
        now += 1'000;
        return started(r, t);
      };
      CHECK_FALSE(attempt("big-1", 2));  // fails first (the check in bucket order)
      CHECK(attempt("one", 0));          // succeeds: one node's victims
      CHECK_FALSE(attempt("big-2", 2));  // fails right after a success (no check in bucket order)
      CHECK(s.running_count() == 9);     // ... and preempted nothing
    }
    CHECK(res[0] == res[1]);
  }
}

}  // namespace SCHEDSIM_UNITY_ID
