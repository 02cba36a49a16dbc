// Dormant failures (SchedulerCore::dormant_gen_, actions::allocate's backfill walk): a task that
// failed in a walk and whose failure and wait code cannot change until the capacity epoch moves
// is skipped by later walks and not listed again; its observer keeps the code of its last
// listing. The simulator's wait attribution relies on that code being what a fresh diagnosis
// gives, so these tests compare, after every schedule() call, the code each waiting task was
// last listed with against the same run with dormancy off (a node policy that applies to no
// task: actions::dormant_on asks for none; every visited task is listed and diagnosed), both
// walking the queue (request classes off).
#include <catch2/catch.hpp>
#include "builders.hpp"
#include "tests/common/unity.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {

using Observed = ObservedScheduler;  // (builders.hpp)

/// A random backfill run on four nodes (8 GPUs, 16 vCPU each), the same operations on a
/// scheduler with dormancy and one without: CPU-only gangs of 1-6 replicas (most of them,
/// the requests that may go dormant) and some GPU ones, priorities 1-9, pay-as-you-go, spot or
/// reserved under a quota, user "carol" with a pay-as-you-go quota entry, estimates mostly
/// known; releases, drains and undrains, a quota limit changed; priority preemption on or off
/// (spot eviction and idle reclaim on). After each instant: the same starts and preemptions,
/// and every waiting task's observed code the same. Returns the waiting tasks compared.
std::size_t compare_codes(std::uint32_t seed, bool gpu_tasks, bool preemption) {
  SchedulerOptions fast_o;
  fast_o.queueing = Queueing::backfill;
  fast_o.preemption = preemption;
  fast_o.request_classes = false;  // (a node policy turns class passes off: both walk the queue)
  const Cluster c = make_cluster().pool("p").nodes("n", 4, "A100", 8, 16, 64).build();
  Observed a{Scheduler(c, fast_o), {}, 0}, b{Scheduler(c, fast_o), {}, 0};
  b.s.add_node_policy(make_policy("off").for_user("nobody").node_not_in().nodes(c, {"n0"}));  // (dormancy off)
  const PoolId p = c.find_pool("p");
  for (Observed* o : {&a, &b}) {
    o->s.quotas().set_limit(QuotaKey{"bob", ResourceType::reserved, p}, gpu_quota(6, 24));
    o->s.quotas().set_limit(QuotaKey{"carol", ResourceType::pay_as_you_go, PoolId{}}, gpu_quota(8, 20));
  }
  boost::random::mt19937 rng(seed);
  auto draw = [&](int lo, int hi) { return boost::random::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<TaskId> running;
  std::size_t compared = 0;
  Time now = 0;
  for (int step = 0; step < 150; ++step, now += 1000 * draw(1, 20)) {
    for (int k = draw(0, 3); k > 0; --k) {
      TaskBuilder t = make_task("t" + std::to_string(step) + "-" + std::to_string(k));
      if (gpu_tasks && draw(0, 3) == 0) t.option("g", gpus(draw(1, 8), kMilliPerGpu, draw(1, 4)));
      else t.option("c", cpu_only(draw(1, 8), draw(1, 8))).workers(draw(0, 5));
      t.priority(draw(1, 9)).submitted(now);
      if (draw(0, 4) != 0) t.estimate(Time(1000) * draw(1, 200));
      const int kind = draw(0, 9);
      if (kind == 0) t.spot();
      else if (kind == 1) t.user("bob").reserved(p);
      else if (kind == 2) t.user("carol");
      else if (kind == 3 && draw(0, 1) == 0) t.guaranteed();
      TaskId ia = submit(a.s, t, now), ib = submit(b.s, t, now);
      REQUIRE(ia == ib);
      a.code[ia.value] = b.code[ib.value] = WaitCode::waits_for_capacity;  // (the simulator's code at enqueue)
    }
    if (!running.empty() && draw(0, 2) != 0) {
      const std::size_t i = std::size_t(draw(0, int(running.size()) - 1));
      for (Observed* o : {&a, &b}) o->s.release(running[i], now);
      running.erase(running.begin() + std::ptrdiff_t(i));
    }
    const int op = draw(0, 19);
    const NodeId n(draw(0, 3));
    const std::int64_t carol_vcpu = draw(4, 40);
    for (Observed* o : {&a, &b}) {
      if (op == 0) o->s.drain_node(n);
      else if (op == 1) o->s.undrain_node(n);
      else if (op == 2) o->s.quotas().set_limit(QuotaKey{"carol", ResourceType::pay_as_you_go, PoolId{}}, gpu_quota(8, carol_vcpu));
    }
    INFO("seed " << seed << " step " << step);
    schedule_alike(a, b, now, running);  // (builders.hpp)
    for (const auto& [id, code] : b.code) {
      INFO("seed " << seed << " step " << step << " task " << b.s.task(TaskId(id)).name);
      REQUIRE(a.code.count(id) == 1);
      REQUIRE(a.code[id] == code);
      ++compared;
    }
  }
  // Dormant tasks are not listed again: the run with fast paths lists fewer.
  CHECK(a.listed < b.listed);
  return compared;
}

#ifdef SCHEDSIM_SANITIZED
constexpr std::uint32_t kSeeds = 8;  // ASan + UBSan run about 15x slower; Release runs 40 per case
#else
constexpr std::uint32_t kSeeds = 40;
#endif

}  // namespace

TEST_CASE("a task skipped by later walks keeps the wait code a fresh diagnosis gives (CPU-only runs)") {
  std::size_t compared = 0;
  for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) compared += compare_codes(seed, false, false);
  CHECK(compared > 400 * kSeeds);
}

TEST_CASE("a task skipped by later walks keeps the wait code a fresh diagnosis gives (priority preemption on)") {
  // A start that a dormant task could preempt (a lower priority) ends every dormancy.
  std::size_t compared = 0;
  for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) compared += compare_codes(seed, false, true);
  CHECK(compared > 200 * kSeeds);
}

TEST_CASE("a task skipped by later walks keeps the wait code a fresh diagnosis gives (GPU requests among them)") {
  // A GPU request's code depends on the free GPUs (fragmentation or capacity): a start changes
  // it, so such a request never goes dormant.
  std::size_t compared = 0;
  for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) compared += compare_codes(seed, true, false);
  CHECK(compared > 400 * kSeeds);
}

TEST_CASE("a fresh-only pass that turns into a walk lists the fresh task that went dormant before") {
  // a-r runs, b-h is the head. The fresh-only pass (actions::backfill_from_fresh) fails f1, which goes dormant; f2 may
  // start, so the pass turns into a walk from the queue's front (visited list cut back): f1
  // must be visited and listed again, not skipped as dormant.
  SchedulerOptions o;
  o.queueing = Queueing::backfill;
  o.preemption = false;
  Scheduler s(make_cluster().pool("p").nodes("n", 4, "A100", 8, 16, 64).build(), o);
  auto cpu_task = [](std::string name, std::int32_t replicas, std::int64_t vcpu, Time estimate, Time at) {
    return make_task(std::move(name)).option("c", cpu_only(vcpu)).workers(replicas - 1).estimate(estimate).submitted(at);
  };
  const TaskId r = submit(s, cpu_task("a-r", 3, 16, 100000, 0), 0);
  const TaskId h = submit(s, cpu_task("b-h", 2, 16, 100000, 0), 0);
  REQUIRE(s.schedule(0).started == std::vector<TaskId>{r});
  s.take_visited_waiting();
  CHECK(s.schedule(1000).started.empty());  // a walk: h fails again (and goes dormant)
  CHECK(s.take_visited_waiting() == std::vector<TaskId>{h});
  const TaskId f1 = submit(s, cpu_task("f1", 2, 16, 100000, 2000), 2000);
  const TaskId f2 = submit(s, cpu_task("f2", 1, 8, 10000, 2000), 2000);
  REQUIRE(s.schedule(2000).started == std::vector<TaskId>{f2});
  const std::vector<TaskId> listed = s.take_visited_waiting();
  CHECK(std::find(listed.begin(), listed.end(), f1) != listed.end());
  CHECK(s.wait_code(f1, 2000) == WaitCode::waits_for_cpu_memory);
}

namespace {

/// Four 16-vCPU nodes, request classes off (every pass walks the queue). At 0: a-r (three
/// whole nodes) and b-r, c-r (8 vCPU each on the fourth) start; d-h (two whole nodes) fails,
/// goes dormant and is listed right after that call (its code: waits_for_cpu_memory, since
/// every node is eligible).
struct StableCase {
  Scheduler s;
  TaskId r, r2, r3, h;
  static SchedulerOptions options() {
    SchedulerOptions o;
    o.queueing = Queueing::backfill;
    o.preemption = false;
    o.request_classes = false;
    return o;
  }
  StableCase() : s(make_cluster().pool("p").nodes("n", 4, "A100", 8, 16, 64).build(), options()) {
    auto cpu_task = [](std::string name, std::int32_t replicas, std::int64_t vcpu, Time estimate) {
      return make_task(std::move(name)).option("c", cpu_only(vcpu)).workers(replicas - 1).estimate(estimate).submitted(0);
    };
    r = submit(s, cpu_task("a-r", 3, 16, 100000), 0);
    r2 = submit(s, cpu_task("b-r", 1, 8, 50000), 0);
    r3 = submit(s, cpu_task("c-r", 1, 8, 50000), 0);
    h = submit(s, cpu_task("d-h", 2, 16, 100000), 0);
    REQUIRE(s.schedule(0).started == std::vector<TaskId>{r, r2, r3});
    REQUIRE(s.take_visited_waiting() == std::vector<TaskId>{h});
    REQUIRE(s.wait_code(h, 0) == WaitCode::waits_for_cpu_memory);
  }
};

}  // namespace

TEST_CASE("a dormant task listed right after its failure is not listed again after a release") {
  // The release of b-r frees 8 vCPU: a walk tries d-h again, which fails as dormant; its
  // observer's code (listed at 0) is what a diagnosis gives now.
  StableCase c;
  c.s.release(c.r2, 1000);
  CHECK(c.s.schedule(1000).started.empty());
  CHECK(c.s.take_visited_waiting().empty());
  CHECK(c.s.wait_code(c.h, 1000) == WaitCode::waits_for_cpu_memory);
}

TEST_CASE("a dormant task is listed again after a release once its code may have changed") {
  // Every node drained: no node is eligible, so d-h's code becomes waits_for_capacity. A drain
  // ends the listing's guarantee (Core::note_code_change); without that, the walk after the
  // release would not list d-h and its observer would keep waits_for_cpu_memory.
  StableCase c;
  for (int n = 0; n < 4; ++n) c.s.drain_node(NodeId(n));
  c.s.release(c.r2, 1000);
  CHECK(c.s.schedule(1000).started.empty());
  CHECK(c.s.take_visited_waiting() == std::vector<TaskId>{c.h});
  CHECK(c.s.wait_code(c.h, 1000) == WaitCode::waits_for_capacity);
}

}  // namespace SCHEDSIM_UNITY_ID
