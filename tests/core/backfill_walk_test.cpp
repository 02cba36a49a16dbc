// The backfill walk with fast paths and request classes kept (actions::allocate: the failure
// memo and failures by signature, dormant tasks skipped and their answers and priorities kept
// per signature, held_without_trial, the fresh-only passes, allocate_by_class while no running
// task has a known end) against the same operations with fast_paths off (the plain walk of the
// queue, every visited task listed), on random runs whose classes have many members: the same
// starts and preemptions at every schedule() call and the same wait code for every waiting task
// (observed as the simulator keeps it, and asked afresh, with and without the reason).
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

/// A random backfill run on four nodes (8 GPUs, 16 vCPU each), with fast paths and without:
/// few request shapes (CPU-only gangs of 1-4 replicas of 4, 8 or 16 vCPU, two priorities, some
/// GPU gangs), so that classes have many members; estimates mostly known (the head has a
/// reservation) and of every length (members of one class held, started or failed); spot
/// tasks, a user under a pay-as-you-go quota whose limit changes, a quota entry added midway;
/// releases, drains and undrains; priority preemption on or off. Returns the tasks compared.
std::size_t compare_runs(std::uint32_t seed, bool preemption) {
  SchedulerOptions fast_o;
  fast_o.queueing = Queueing::backfill;
  fast_o.preemption = preemption;
  SchedulerOptions slow_o = fast_o;
  slow_o.fast_paths = false;
  const Cluster c = make_cluster().pool("p").nodes("n", 4, "A100", 8, 16, 64).build();
  Observed a{Scheduler(c, fast_o), {}, 0}, b{Scheduler(c, slow_o), {}, 0};
  for (Observed* o : {&a, &b}) o->s.quotas().set_limit(QuotaKey{"carol", ResourceType::pay_as_you_go, PoolId{}}, gpu_quota(8, 24));
  boost::random::mt19937 rng(seed);
  auto draw = [&](int lo, int hi) { return boost::random::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<TaskId> running;
  std::size_t compared = 0;
  Time now = 0;
  for (int step = 0; step < 120; ++step, now += 1000 * draw(1, 20)) {
    for (int k = draw(0, 4); k > 0; --k) {
      TaskBuilder t = make_task("t" + std::to_string(step) + "-" + std::to_string(k));
      if (draw(0, 5) == 0) t.option("g", gpus(draw(1, 2) * 4, kMilliPerGpu, 2));
      else t.option("c", cpu_only(std::int64_t(4) << draw(0, 2), 2)).workers(draw(0, 3));
      t.priority(draw(0, 1) == 0 ? 3 : 6).submitted(now);
      if (draw(0, 5) != 0) t.estimate(Time(1000) * draw(1, 120));
      const int kind = draw(0, 7);
      if (kind == 0) t.spot();
      else if (kind == 1) t.user("carol");
      else if (kind == 2) t.user("dave");
      TaskId ia = submit(a.s, t, now), ib = submit(b.s, t, now);
      REQUIRE(ia == ib);
      a.code[ia.value] = b.code[ib.value] = WaitCode::waits_for_capacity;  // (the simulator's code at enqueue)
    }
    for (int k = draw(0, 2); k > 0 && !running.empty(); --k) {
      const std::size_t i = std::size_t(draw(0, int(running.size()) - 1));
      for (Observed* o : {&a, &b}) o->s.release(running[i], now);
      running.erase(running.begin() + std::ptrdiff_t(i));
    }
    const int op = draw(0, 29);
    const NodeId n(draw(0, 3));
    const std::int64_t carol_vcpu = draw(8, 48);
    for (Observed* o : {&a, &b}) {
      if (op == 0) o->s.drain_node(n);
      else if (op == 1) o->s.undrain_node(n);
      else if (op == 2) o->s.quotas().set_limit(QuotaKey{"carol", ResourceType::pay_as_you_go, PoolId{}}, gpu_quota(8, carol_vcpu));
      else if (op == 3 && step > 60) o->s.quotas().set_limit(QuotaKey{"dave", ResourceType::pay_as_you_go, PoolId{}}, gpu_quota(8, 32));
    }
    INFO("seed " << seed << " step " << step);
    schedule_alike(a, b, now, running);  // (builders.hpp)
    for (const auto& [id, code] : b.code) {
      INFO("task " << b.s.task(TaskId(id)).name);
      REQUIRE(a.code.count(id) == 1);
      REQUIRE(a.code[id] == code);
      const WaitCode fresh = a.s.wait_code(TaskId(id), now);
      REQUIRE(fresh == b.s.wait_code(TaskId(id), now));
      REQUIRE(fresh == a.s.explain(TaskId(id), now).primary());  // (the code-only diagnosis: Explain::only)
      ++compared;
    }
  }
  return compared;
}

#ifdef SCHEDSIM_SANITIZED
constexpr std::uint32_t kSeeds = 6;  // ASan + UBSan run about 15x slower
#else
constexpr std::uint32_t kSeeds = 30;
#endif

}  // namespace

TEST_CASE("the backfill walk with fast paths starts and fails what the plain walk does (many equal requests)") {
  std::size_t compared = 0;
  for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) compared += compare_runs(seed, false);
  CHECK(compared > 300 * kSeeds);
}

TEST_CASE("the backfill walk with fast paths, many equal requests, priority preemption on") {
  // A start that a dormant task could preempt ends every dormancy; a preemption ends the pass.
  std::size_t compared = 0;
  for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) compared += compare_runs(seed, true);
  CHECK(compared > 300 * kSeeds);
}

}  // namespace SCHEDSIM_UNITY_ID
