// Scheduler::explain: why a task waits, checked in the documented order (docs/scheduler.md
// "Why a task waits"). One test per rule: fits now first, vCPU / memory shortage, quota that
// never admits (alone and with capacity), idle stability, node-policy figures, stale queue
// holds, and no side effects.
#include <memory>

#include <catch2/catch.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

TEST_CASE("a gang that fits now is fits_now, never waits_for_fragmentation") {
  // Four empty 8-GPU nodes: 32 GPU free, largest fragment 8 GPU, and a 4 x 8 GPU gang fits.
  // The old diagnosis skipped the fit check and said "32 GPU free in total but largest free
  // fragment 8 GPU".
  Scheduler s(make_cluster().nodes("n", 4).build());
  TaskId t = submit(s, make_task("t").workers(3).option("x", gpus(8)));
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::fits_now);
  CHECK(w.blocking.empty());
  CHECK_THAT(w.reason, Catch::Contains("fits now"));
  CHECK(started(s.schedule(0), t));
}

TEST_CASE("a task that fits but is held by strict queueing reports the queue, not fits_now") {
  SchedulerOptions o;
  o.queueing = Queueing::strict;
  o.preemption = false;
  Scheduler s(make_cluster().nodes("n", 1).build(), o);
  submit(s, make_task("r").option("x", gpus(6)));
  s.schedule(0);
  TaskId h = submit(s, make_task("h").priority(7).option("x", gpus(8)));
  TaskId sm = submit(s, make_task("sm").option("x", gpus(2)));
  s.schedule(0);
  REQUIRE(s.is_waiting(h));
  REQUIRE(s.is_waiting(sm));
  WaitStatus w = s.explain(sm, 0);
  CHECK(w.code == WaitCode::blocked_by_queue);
  CHECK(w.blocking == std::vector<WaitCode>{WaitCode::blocked_by_queue});
}

TEST_CASE("a strict hold is dropped as soon as its head would start") {
  SchedulerOptions o;
  o.queueing = Queueing::strict;
  o.preemption = false;
  Scheduler s(make_cluster().nodes("n", 1).build(), o);
  TaskId r = submit(s, make_task("r").option("x", gpus(6)));
  s.schedule(0);
  TaskId h = submit(s, make_task("h").priority(7).option("x", gpus(4)));
  TaskId sm = submit(s, make_task("sm").option("x", gpus(2)));
  s.schedule(0);
  REQUIRE(s.explain(sm, 0).code == WaitCode::blocked_by_queue);
  s.release(r, 1'000);
  // Before the next pass: the head fits now, so the hold is stale and sm fits too.
  CHECK(s.explain(h, 1'000).code == WaitCode::fits_now);
  CHECK(s.explain(sm, 1'000).code == WaitCode::fits_now);
  ScheduleResult res = s.schedule(1'000);
  CHECK((started(res, h) && started(res, sm)));
}

TEST_CASE("a vCPU shortage is waits_for_cpu_memory with the vCPU figures, not fragmentation") {
  // One node of 8 GPU and 96 vCPU; a running task holds 1 GPU and 90 vCPU: 7 GPU are free and
  // the largest fragment is 7 GPU, but only 6 vCPU are left for a replica that asks for 8.
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId hog = submit(s, make_task("hog").guaranteed().option("x", gpus(1, 1000, 90)));
  s.schedule(0);
  REQUIRE(s.is_running(hog));
  TaskId t = submit(s, make_task("t").option("x", gpus(7, 1000, 8)));
  s.schedule(0);
  REQUIRE(s.is_waiting(t));
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::waits_for_cpu_memory);
  CHECK(w.blocking == std::vector<WaitCode>{WaitCode::waits_for_cpu_memory});
  CHECK_THAT(w.reason, Catch::Contains("8 vCPU") && Catch::Contains("at most 6 vCPU"));
  CHECK_THAT(w.reason, !Catch::Contains("fragment"));
}

TEST_CASE("a memory shortage of a CPU-only task is waits_for_cpu_memory") {
  Scheduler s(make_cluster().nodes("n", 1, "A100", 8, 96, 100).build());
  submit(s, make_task("hog").guaranteed().option("x", cpu_only(1, 90)));
  s.schedule(0);
  TaskId t = submit(s, make_task("t").option("x", cpu_only(1, 20)));
  s.schedule(0);
  REQUIRE(s.is_waiting(t));
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::waits_for_cpu_memory);
  CHECK_THAT(w.reason, Catch::Contains("20 GiB") && Catch::Contains("10 GiB free"));
}

TEST_CASE("a demand above the quota limit even with nothing running is attributed to quota") {
  // Capacity is plentiful (two 8-GPU nodes); the 8-GPU task's quota is 4 GPU.
  Cluster c = make_cluster().pool("p").nodes("n", 2).build();
  PoolId p = c.find_pool("p");
  Scheduler s(c);
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(4));
  TaskId t = submit(s, make_task("t").reserved(p).option("x", gpus(8)));
  s.schedule(0);
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::never_fits);
  CHECK(w.blocking == std::vector<WaitCode>{WaitCode::waits_for_quota});
  CHECK(w.primary() == WaitCode::waits_for_quota);
  CHECK(wait_bucket(w.primary()) == "quota");
  CHECK_THAT(w.reason, Catch::Contains("8 GPU exceeds quota limit 4 GPU") && Catch::Contains("even with nothing running"));
  CHECK_THAT(w.reason, !Catch::Contains("largest node"));
}

TEST_CASE("never_fits follows nodes added and removed (the nodes' capacity kinds are listed again)") {
  // A 16-GPU replica on 8-GPU nodes never fits; a 16-GPU node added makes it fit (in another
  // pool: only a pool the task may use counts); removing it makes it never fit again.
  Cluster c = make_cluster().pool("q").pool("p").nodes("n", 2).build();  // (the nodes join the pool named last)
  const PoolId p = c.find_pool("p"), q = c.find_pool("q");
  Scheduler s(c);
  auto big_node = [](const std::string& name, PoolId pool) {
    NodeDesc d;
    d.name = name;
    d.pool = pool;
    d.gpu_model = "A100";
    d.gpus = 16;
    d.cpu_milli = 96'000;
    d.mem_mib = 960 * 1024;
    return d;
  };
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(64));
  const TaskId t = submit(s, make_task("t").reserved(p).option("x", gpus(16)));
  s.schedule(0);
  CHECK(s.explain(t, 0).code == WaitCode::never_fits);
  s.add_node(big_node("big-q", q));
  CHECK(s.explain(t, 0).code == WaitCode::never_fits);  // its pool is p
  const NodeId big = s.add_node(big_node("big-p", p));
  CHECK(s.explain(t, 0).code == WaitCode::fits_now);
  s.remove_node(big);
  CHECK(s.explain(t, 0).code == WaitCode::never_fits);
}

TEST_CASE("when quota and capacity both never admit, the status lists both, quota first") {
  Cluster c = make_cluster().pool("p").nodes("n", 2).build();
  PoolId p = c.find_pool("p");
  Scheduler s(c);
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(4));
  TaskId t = submit(s, make_task("t").reserved(p).option("x", gpus(16)));
  s.schedule(0);
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::never_fits);
  CHECK(w.blocking == std::vector<WaitCode>{WaitCode::waits_for_quota, WaitCode::waits_for_capacity});
  CHECK_THAT(w.reason, Catch::Contains("largest node has 8 GPU") && Catch::EndsWith("[blocking: quota, capacity]"));
}

TEST_CASE("when the remaining quota and the free capacity both bind now, the status lists both") {
  Cluster c = make_cluster().pool("p").nodes("n", 1).build();
  PoolId p = c.find_pool("p");
  Scheduler s(c);
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(8));
  TaskId a = submit(s, make_task("a").reserved(p).guaranteed().option("x", gpus(6)));
  s.schedule(0);
  REQUIRE(s.is_running(a));
  TaskId t = submit(s, make_task("t").reserved(p).option("x", gpus(4)));
  s.schedule(0);
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::waits_for_quota);
  CHECK(w.blocking == std::vector<WaitCode>{WaitCode::waits_for_quota, WaitCode::waits_for_capacity});
  CHECK_THAT(w.reason, Catch::Contains("4 GPU exceeds remaining quota 2 GPU") && Catch::Contains("2 GPU free in eligible nodes") &&
                           Catch::EndsWith("[blocking: quota, capacity]"));
}

TEST_CASE("quota alone binds when the gang would fit the free capacity") {
  Cluster c = make_cluster().pool("p").nodes("n", 2).build();
  PoolId p = c.find_pool("p");
  Scheduler s(c);
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(12));
  submit(s, make_task("a").reserved(p).guaranteed().option("x", gpus(8)));
  s.schedule(0);
  TaskId t = submit(s, make_task("t").reserved(p).option("x", gpus(8)));
  s.schedule(0);
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::waits_for_quota);
  CHECK(w.blocking == std::vector<WaitCode>{WaitCode::waits_for_quota});
  CHECK_THAT(w.reason, !Catch::Contains("blocking"));
}

TEST_CASE("an idle task waiting for its node to age says so, with the eligible-node figures") {
  Scheduler s(make_cluster().nodes("n", 2).build());
  // n0 and n1 are used by owners and released at 1000 s: both are then 0 s old.
  TaskId a = submit(s, make_task("a").option("x", gpus(8)));
  TaskId b = submit(s, make_task("b").option("x", gpus(8)));
  s.schedule(0);
  REQUIRE((s.is_running(a) && s.is_running(b)));
  s.release(a, 1'000'000);
  s.release(b, 1'000'000);
  TaskId t = submit(s, make_task("t").idle(IdleStability::high).option("x", gpus(4)), 1'000'000);
  s.schedule(1'000'000);
  REQUIRE(s.is_waiting(t));
  WaitStatus w = s.explain(t, 2'000'000);
  CHECK(w.code == WaitCode::waits_for_idle_stability);
  CHECK(w.blocking == std::vector<WaitCode>{WaitCode::waits_for_idle_stability});
  CHECK_THAT(w.reason, Catch::Contains("0 nodes offer idle capacity at stability high; 2 fit but are younger than 3600 s"));
  CHECK(wait_bucket(w.primary()) == "idle_stability");
  // Once the nodes are 3600 s old it fits.
  CHECK(s.explain(t, 4'600'000).code == WaitCode::fits_now);
  CHECK(started(s.schedule(4'600'000), t));
}

TEST_CASE("a node-policy block reports the eligible-node figures") {
  Cluster c = make_cluster().nodes("n", 3).build();
  Scheduler s(c);
  submit(s, make_task("busy").guaranteed().option("x", gpus(8)));
  s.schedule(0);
  s.add_node_policy(make_policy("skip").node_not_in().nodes(c, {"n1", "n2"}));
  TaskId t = submit(s, make_task("t").option("x", gpus(8)));
  s.schedule(0);
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::blocked_by_node_policy);
  CHECK_THAT(w.reason, Catch::StartsWith("quota check failed due to node blacklist: n1,n2") &&
                           Catch::Contains("1 eligible nodes allowed by its node policies; 2 excluded nodes fit a replica"));
}

TEST_CASE("a task that would start after preemption under the scheduler's rules is fits_after_preemption") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId lo = submit(s, make_task("lo").priority(1).option("x", gpus(8)));
  s.schedule(0);
  REQUIRE(s.is_running(lo));
  TaskId hi = submit(s, make_task("hi").priority(9).option("x", gpus(8)));
  // At the instant lo started it is no victim (no zero-length attempts): hi waits for capacity.
  CHECK(s.explain(hi, 0).code == WaitCode::waits_for_capacity);
  CHECK_FALSE(started(s.schedule(0), hi));
  // One millisecond later, before the pass: schedule() would preempt lo.
  WaitStatus w = s.explain(hi, 1);
  CHECK(w.code == WaitCode::fits_after_preemption);
  ScheduleResult r = s.schedule(1);
  CHECK(started(r, hi));
}

TEST_CASE("explain changes nothing: cluster, quota, queue and the next decision stay the same") {
  Cluster c = make_cluster().pool("p").nodes("n", 2).build();
  PoolId p = c.find_pool("p");
  auto build = [&] {
    auto s = std::make_unique<Scheduler>(c);
    s->quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(12));
    submit(*s, make_task("a").reserved(p).priority(1).option("x", gpus(6)));
    submit(*s, make_task("b").priority(1).option("x", gpus(1, 1000, 90)));
    s->schedule(0);
    submit(*s, make_task("c").reserved(p).priority(5).option("x", gpus(8)));
    submit(*s, make_task("d").idle(IdleStability::high).option("x", gpus(2)));
    submit(*s, make_task("e").option("x", gpus(7, 1000, 8)));
    return s;
  };
  auto looked = build();
  auto fresh = build();
  ClusterState st = state_of(looked->cluster());
  auto q = looked->quotas().entries();
  for (TaskId t : looked->queue()) looked->explain(t, 10);
  CHECK(state_of(looked->cluster()) == st);
  for (const auto& [k, e] : looked->quotas().entries()) CHECK(e.used == q.at(k).used);
  ScheduleResult r1 = looked->schedule(10), r2 = fresh->schedule(10);
  CHECK(r1.started == r2.started);
  CHECK(victims(r1) == victims(r2));
  CHECK(state_of(looked->cluster()) == state_of(fresh->cluster()));
}

}  // namespace SCHEDSIM_UNITY_ID
