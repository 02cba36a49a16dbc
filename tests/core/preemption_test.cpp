// Preemption rules (docs/platform.md "Priority, guarantee" and "Preemption [choice]").
#include <catch2/catch.hpp>

#include <algorithm>

#include <map>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

TEST_CASE("a guaranteed task is never a victim") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId g = submit(s, make_task("g").priority(1).guaranteed().option("x", gpus(8)));
  s.schedule(0);
  TaskId hi = submit(s, make_task("hi").priority(9).option("x", gpus(8)));
  ScheduleResult r = s.schedule(1);
  CHECK(r.preemptions.empty());
  CHECK(s.is_running(g));
  CHECK(s.is_waiting(hi));
  CHECK(s.explain(hi, 1).code == WaitCode::waits_for_capacity);
}

TEST_CASE("preemption never happens in vain") {
  // The gang needs 2 x 8 GPU; only n0's low-priority task is preemptible, n1 is guaranteed.
  Scheduler s(make_cluster().nodes("n", 2).build());
  TaskId low = submit(s, make_task("low").priority(1).option("x", gpus(8)));
  TaskId g = submit(s, make_task("g").priority(1).guaranteed().option("x", gpus(8)));
  s.schedule(0);
  REQUIRE((s.is_running(low) && s.is_running(g)));
  TaskId gang = submit(s, make_task("gang").priority(9).workers(1).option("x", gpus(8)));
  auto before = state_of(s.cluster());
  ScheduleResult r = s.schedule(1);
  CHECK(r.empty());
  CHECK(s.is_running(low));
  CHECK(s.is_waiting(gang));
  CHECK(state_of(s.cluster()) == before);
}

TEST_CASE("a gang of GPU shares preempts a task whose one GPU then holds two of its replicas") {
  // One node with one GPU, held whole by a priority-1 task. A priority-9 gang of two 0.5-GPU
  // replicas fits on that GPU once it is free: the precheck counts two slots on it, not one.
  Scheduler s(make_cluster().node("n0", "A100", 1).build());
  TaskId low = submit(s, make_task("low").priority(1).option("x", gpus(1)));
  s.schedule(0);
  REQUIRE(s.is_running(low));
  TaskId gang = submit(s, make_task("gang").priority(9).workers(1).submitted(1).option("x", gpu_share(500)));
  ScheduleResult r = s.schedule(1);
  REQUIRE(r.preemptions.size() == 1);
  CHECK(r.preemptions[0].victim == low);
  CHECK(started(r, gang));
  CHECK(s.placement_of(gang)->replicas.size() == 2);
}

TEST_CASE("a gang whose head has more vCPU than its workers preempts what its workers need") {
  // Two nodes of 8 GPUs and 16 vCPU, each held by a priority-1 task. The gang's head (1 GPU,
  // 12 vCPU) and worker (2 GPUs, 4 vCPU) fit on the two nodes once both are free; counting
  // slots with the head's vCPU for every replica (the smaller GPU request) would say one node
  // takes one replica and give up.
  Scheduler s(make_cluster().nodes("n", 2, "A100", 8, 16).build());
  TaskId a = submit(s, make_task("a").priority(1).option("x", gpus(8, kMilliPerGpu, 16)));
  TaskId b = submit(s, make_task("b").priority(1).option("x", gpus(8, kMilliPerGpu, 16)));
  s.schedule(0);
  REQUIRE((s.is_running(a) && s.is_running(b)));
  TaskId gang = submit(s, make_task("gang").priority(9).workers(2).submitted(1).option("x", gpus(1, kMilliPerGpu, 12),
                                                                                    gpus(2, kMilliPerGpu, 4)));
  ScheduleResult r = s.schedule(1);
  CHECK(started(r, gang));
  CHECK_FALSE(r.preemptions.empty());
}

TEST_CASE("priority preemption takes only strictly lower-priority victims") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId v = submit(s, make_task("v").priority(5).option("x", gpus(8)));
  s.schedule(0);
  TaskId same = submit(s, make_task("same").priority(5).submitted(1).option("x", gpus(8)));
  CHECK(s.schedule(1).empty());
  s.dequeue(same);
  TaskId higher = submit(s, make_task("higher").priority(6).submitted(2).option("x", gpus(8)));
  ScheduleResult r = s.schedule(2);
  REQUIRE(r.preemptions.size() == 1);
  CHECK(r.preemptions[0].victim == v);
  CHECK(r.preemptions[0].preemptor == higher);
  CHECK(r.preemptions[0].kind == PreemptionKind::priority);
  CHECK(started(r, higher));
  CHECK_FALSE(s.is_running(v));
}

namespace {
/// Three 8-GPU nodes, each filled by one 8-GPU task built by `fill`; then a priority-9
/// pay-as-you-go task asks for one 8-GPU replica. Returns the victims.
template <class Fill>
std::vector<TaskId> victims_for(Fill fill, Time now = 1) {
  Scheduler s(make_cluster().nodes("n", 3).build());
  fill(s);
  s.schedule(0);
  REQUIRE(s.running_count() == 3);
  submit(s, make_task("hi").priority(9).option("x", gpus(8)), now);
  return victims(s.schedule(now));
}
}  // namespace

TEST_CASE("idle victims go first, then spot, then others") {
  TaskId idle, spot, normal;
  auto v = victims_for([&](Scheduler& s) {
    normal = submit(s, make_task("normal").priority(1).option("x", gpus(8)));
    spot = submit(s, make_task("spot").spot().priority(1).option("x", gpus(8)));
    idle = submit(s, make_task("idle").idle().option("x", gpus(8)));
  });
  CHECK(v == std::vector<TaskId>{idle});
  v = victims_for([&](Scheduler& s) {
    normal = submit(s, make_task("normal").priority(1).option("x", gpus(8)));
    spot = submit(s, make_task("spot").spot().priority(8).option("x", gpus(8)));
    submit(s, make_task("g").guaranteed().option("x", gpus(8)));
  });
  CHECK(v == std::vector<TaskId>{spot});
}

TEST_CASE("among others the lowest priority goes first, then the least work lost since the last checkpoint") {
  TaskId p2, p3;
  auto v = victims_for([&](Scheduler& s) {
    p3 = submit(s, make_task("p3").priority(3).option("x", gpus(8)));
    p2 = submit(s, make_task("p2").priority(2).option("x", gpus(8)));
    submit(s, make_task("g").guaranteed().option("x", gpus(8)));
  });
  CHECK(v == std::vector<TaskId>{p2});
  TaskId ckpt, none;
  // At 250 s: `ckpt` (checkpoint every 100 s) loses 50 s, `none` (no checkpoint) loses 250 s.
  v = victims_for(
      [&](Scheduler& s) {
        none = submit(s, make_task("a-none").priority(2).option("x", gpus(8)));
        ckpt = submit(s, make_task("b-ckpt").priority(2).checkpoint_every(100'000).option("x", gpus(8)));
        submit(s, make_task("g").guaranteed().option("x", gpus(8)));
      },
      250'000);
  CHECK(v == std::vector<TaskId>{ckpt});
}

TEST_CASE("the victim set is minimal: dropping any victim leaves the gang unplaceable") {
  // a (2 GPU, priority 1) is tried first but is not enough; b (6 GPU, priority 2) alone is.
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId a = submit(s, make_task("a").priority(1).option("x", gpus(2)));
  TaskId b = submit(s, make_task("b").priority(2).option("x", gpus(6)));
  s.schedule(0);
  REQUIRE(s.running_count() == 2);
  TaskId hi = submit(s, make_task("hi").priority(9).option("x", gpus(6)));
  ScheduleResult r = s.schedule(1);
  CHECK(victims(r) == std::vector<TaskId>{b});
  CHECK(s.is_running(a));
  CHECK(s.is_running(hi));
}

TEST_CASE("a victim of another user does not help a quota-blocked task") {
  Cluster c = make_cluster().pool("p").nodes("n", 3).build();
  PoolId p = c.find_pool("p");
  Scheduler s(c);
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(8));
  s.quotas().set_limit(QuotaKey{"bob", ResourceType::reserved, p}, gpu_quota(8));
  TaskId bob = submit(s, make_task("bob").user("bob").reserved(p).priority(1).option("x", gpus(8)));
  TaskId alice_old = submit(s, make_task("alice-old").reserved(p).priority(2).option("x", gpus(8)));
  s.schedule(0);
  REQUIRE((s.is_running(bob) && s.is_running(alice_old)));
  // n2 is free: alice's new task is blocked by her quota only; bob's task is tried first
  // (lower priority) and must not be taken.
  TaskId hi = submit(s, make_task("alice-new").reserved(p).priority(9).option("x", gpus(8)), 1);
  ScheduleResult r = s.schedule(1);
  CHECK(victims(r) == std::vector<TaskId>{alice_old});
  CHECK(s.is_running(bob));
  CHECK(s.is_running(hi));
}

TEST_CASE("a quota-blocked task with only other users' victims does not preempt") {
  Cluster c = make_cluster().pool("p").nodes("n", 2).build();
  PoolId p = c.find_pool("p");
  Scheduler s(c);
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(8));
  s.quotas().set_limit(QuotaKey{"bob", ResourceType::reserved, p}, gpu_quota(8));
  TaskId bob = submit(s, make_task("bob").user("bob").reserved(p).priority(1).option("x", gpus(8)));
  TaskId alice_g = submit(s, make_task("alice-g").reserved(p).guaranteed().option("x", gpus(4)));
  s.schedule(0);
  TaskId hi = submit(s, make_task("alice-new").reserved(p).priority(9).option("x", gpus(8)), 1);
  CHECK(s.schedule(1).empty());
  CHECK(s.is_running(bob));
  CHECK(s.is_waiting(hi));
  CHECK(s.is_running(alice_g));
}

TEST_CASE("spot tasks are evicted by a non-spot task of any priority") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId sp = submit(s, make_task("spot").spot().priority(9).option("x", gpus(8)));
  s.schedule(0);
  TaskId t = submit(s, make_task("t").priority(1).option("x", gpus(8)), 1);
  ScheduleResult r = s.schedule(1);
  REQUIRE(r.preemptions.size() == 1);
  CHECK(r.preemptions[0].victim == sp);
  CHECK(r.preemptions[0].kind == PreemptionKind::spot_eviction);
  CHECK(s.is_running(t));
}

TEST_CASE("idle tasks are reclaimed by any non-idle task (an idle task has no priority)") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId i = submit(s, make_task("i").idle().option("x", gpus(8)));
  s.schedule(0);
  TaskId t = submit(s, make_task("t").priority(1).option("x", gpus(8)), 1);
  ScheduleResult r = s.schedule(1);
  REQUIRE(r.preemptions.size() == 1);
  CHECK(r.preemptions[0].victim == i);
  CHECK(r.preemptions[0].kind == PreemptionKind::idle_reclaim);
  CHECK(s.is_running(t));
}

TEST_CASE("idle and spot tasks never preempt") {
  Scheduler s(make_cluster().nodes("n", 2).build());
  TaskId low = submit(s, make_task("low").priority(1).option("x", gpus(8)));
  TaskId idle_victim = submit(s, make_task("iv").idle().option("x", gpus(8)));
  s.schedule(0);
  REQUIRE(s.running_count() == 2);
  TaskId sp = submit(s, make_task("sp").spot().priority(9).option("x", gpus(8)), 1);
  TaskId id = submit(s, make_task("id").idle().option("x", gpus(8)), 1);
  ScheduleResult r = s.schedule(1);
  CHECK(r.preemptions.empty());
  CHECK((s.is_waiting(sp) && s.is_waiting(id)));
  CHECK((s.is_running(low) && s.is_running(idle_victim)));
}

TEST_CASE("with preemption off, no priority victim is taken and explain says it fits after preemption") {
  SchedulerOptions o;
  o.preemption = false;
  Scheduler s(make_cluster().nodes("n", 1).build(), o);
  TaskId low = submit(s, make_task("low").priority(1).option("x", gpus(8)));
  s.schedule(0);
  TaskId hi = submit(s, make_task("hi").priority(9).option("x", gpus(8)), 1);
  CHECK(s.schedule(1).empty());
  CHECK(s.is_running(low));
  WaitStatus w = s.explain(hi, 1);
  CHECK(w.code == WaitCode::fits_after_preemption);
  CHECK_THAT(w.reason, Catch::Contains("1 task"));
  CHECK(s.is_running(low));  // explain changes nothing
}

TEST_CASE("a preempted gang is released whole and its quota returned") {
  Cluster c = make_cluster().pool("p").nodes("n", 2).build();
  PoolId p = c.find_pool("p");
  Scheduler s(c);
  QuotaKey k{"alice", ResourceType::reserved, p};
  s.quotas().set_limit(k, gpu_quota(16));
  TaskId v = submit(s, make_task("v").reserved(p).priority(1).workers(1).option("x", gpus(8)));
  s.schedule(0);
  REQUIRE(s.quotas().find(k)->used.gpu_milli == 16000);
  TaskId hi = submit(s, make_task("hi").reserved(p).priority(9).option("x", gpus(8)), 1);
  ScheduleResult r = s.schedule(1);
  CHECK(victims(r) == std::vector<TaskId>{v});
  CHECK(s.is_running(hi));
  CHECK(s.quotas().find(k)->used.gpu_milli == 8000);
  CHECK(s.cluster().node(NodeId(0)).free.gpu_milli + s.cluster().node(NodeId(1)).free.gpu_milli == 8000);
  CHECK(s.tasks_on_node(NodeId(0)).size() + s.tasks_on_node(NodeId(1)).size() == 1);
}

TEST_CASE("a task started in a pass is never preempted in the same pass") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId sp = submit(s, make_task("spot").spot().priority(9).option("x", gpus(8)));
  TaskId t = submit(s, make_task("t").priority(4).option("x", gpus(8)));
  ScheduleResult r = s.schedule(0);
  CHECK(r.preemptions.empty());  // no zero-length attempt for the spot task
  CHECK(s.is_running(sp));
  CHECK(s.is_waiting(t));
  r = s.schedule(60'000);  // a later decision evicts it
  CHECK(victims(r) == std::vector<TaskId>{sp});
  CHECK(s.is_running(t));
}

TEST_CASE("capacity freed by a preemption goes to tasks earlier in the queue in the same call") {
  // The idle task holds the whole node. The spot task (priority 9, cannot preempt) is ahead of
  // p, which reclaims all 8 GPUs but needs only 4: the spot task gets the other 4 at once.
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId i = submit(s, make_task("i").idle().option("x", gpus(8)));
  s.schedule(0);
  REQUIRE(s.is_running(i));
  TaskId sp = submit(s, make_task("spot").spot().priority(9).option("x", gpus(4)), 1);
  TaskId p = submit(s, make_task("p").priority(1).option("x", gpus(4)), 1);
  ScheduleResult r = s.schedule(1);
  CHECK(victims(r) == std::vector<TaskId>{i});
  CHECK(s.is_running(p));
  CHECK(s.is_running(sp));
  CHECK(r.started == std::vector<TaskId>{p, sp});
}

TEST_CASE("a task that can only run on idle capacity never evicts non-idle tasks (no preemption ping-pong)") {
  // Pool p's only node is held by bob's guaranteed task; the shared node by a priority-1
  // pay-as-you-go task. Alice (reserved in p, accept_idle, priority 9) could run on idle
  // capacity only by evicting the pay-as-you-go task, which would then reclaim her idle
  // placement at once (idle_reclaim), and so on forever.
  Cluster c = make_cluster().pool("p").nodes("p", 1).pool("s").nodes("s", 1).build();
  PoolId p = c.find_pool("p");
  Scheduler s(c);
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(8));
  s.quotas().set_limit(QuotaKey{"bob", ResourceType::reserved, p}, gpu_quota(8));
  TaskId bob = submit(s, make_task("bob").user("bob").reserved(p).guaranteed().option("x", gpus(8)));
  TaskId pg = submit(s, make_task("pg").user("carol").priority(1).option("x", gpus(8)));
  s.schedule(0);
  REQUIRE((s.is_running(bob) && s.is_running(pg)));
  TaskId alice = submit(s, make_task("alice").reserved(p).accept_idle().priority(9).option("x", gpus(8)), 1);
  std::size_t preemptions = 0;
  for (Time now = 1; now < 10; ++now) {
    preemptions += s.schedule(now).preemptions.size();
    for (TaskId t : {pg, alice})  // resubmit whatever was preempted
      if (!s.is_running(t) && !s.is_waiting(t)) s.enqueue(t, now);
  }
  CHECK(preemptions == 0);
  CHECK(s.is_running(pg));
  CHECK(s.is_waiting(alice));
}

TEST_CASE("a task falling back to idle capacity may still reclaim idle tasks") {
  Cluster c = make_cluster().pool("p").nodes("p", 1).pool("s").nodes("s", 1).build();
  PoolId p = c.find_pool("p");
  Scheduler s(c);
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(8));
  s.quotas().set_limit(QuotaKey{"bob", ResourceType::reserved, p}, gpu_quota(8));
  TaskId bob = submit(s, make_task("bob").user("bob").reserved(p).guaranteed().option("x", gpus(8)));
  TaskId idle = submit(s, make_task("idle").user("carol").idle().option("x", gpus(8)));
  s.schedule(0);
  REQUIRE((s.is_running(bob) && s.is_running(idle)));
  TaskId alice = submit(s, make_task("alice").reserved(p).accept_idle().priority(9).option("x", gpus(8)), 1);
  ScheduleResult r = s.schedule(1);
  CHECK(victims(r) == std::vector<TaskId>{idle});
  REQUIRE(s.is_running(alice));
  CHECK(s.placement_of(alice)->capacity == ResourceType::idle);
}

TEST_CASE("a task started at an instant is not preempted at that instant, even by a later schedule() call") {
  // No zero-length attempts across every schedule() call of one instant.
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId sp = submit(s, make_task("spot").spot().priority(9).option("x", gpus(8)));
  s.schedule(10);
  REQUIRE(s.is_running(sp));
  TaskId t = submit(s, make_task("t").priority(4).option("x", gpus(8)), 10);
  ScheduleResult r = s.schedule(10);  // a second call at the same instant
  CHECK(r.preemptions.empty());
  CHECK(s.is_running(sp));
  CHECK(s.is_waiting(t));
  r = s.schedule(11);  // the next instant evicts it, although nothing was released
  CHECK(victims(r) == std::vector<TaskId>{sp});
  CHECK(s.is_running(t));
}

TEST_CASE("a guaranteed task on idle capacity is reclaimed like any idle task") {
  // Guarantee protects on reserved and pay-as-you-go capacity only; on idle capacity a
  // higher-priority task reclaims it.
  Cluster c = make_cluster().pool("p", PoolKind::dedicated).nodes("p", 1).pool("s").nodes("s", 1).build();
  PoolId p = c.find_pool("p");
  Scheduler s(c);
  TaskId g = submit(s, make_task("g").reserved(p).accept_idle().guaranteed().priority(1).option("x", gpus(8)));
  s.schedule(0);  // no quota in p: falls back to idle capacity on s0
  REQUIRE(s.is_running(g));
  REQUIRE(s.placement_of(g)->capacity == ResourceType::idle);
  TaskId o = submit(s, make_task("o").user("bob").priority(2).option("x", gpus(8)), 1);
  CHECK(s.preemption_kind(o, g) == PreemptionKind::idle_reclaim);
  ScheduleResult r = s.schedule(1);
  CHECK(victims(r) == std::vector<TaskId>{g});
  CHECK(s.is_running(o));
}

TEST_CASE("a task that fell back to idle capacity yields only to a task of strictly higher priority") {
  // Idle capacity is preemptible by any higher-priority task (docs/platform.md): the
  // borrower keeps its priority there, so an owner's task of equal or lower priority waits.
  for (int prio : {1, 5, 6}) {
    Cluster c = make_cluster().pool("p", PoolKind::dedicated).nodes("p", 1).pool("s").nodes("s", 1).build();
    PoolId p = c.find_pool("p");
    Scheduler s(c);
    TaskId g = submit(s, make_task("g").reserved(p).accept_idle().priority(5).option("x", gpus(8)));
    s.schedule(0);
    REQUIRE(s.placement_of(g)->capacity == ResourceType::idle);
    TaskId o = submit(s, make_task("o").user("bob").priority(prio).option("x", gpus(8)), 1);
    INFO("owner priority " << prio);
    const auto kind = s.preemption_kind(o, g);
    ScheduleResult r = s.schedule(1);
    if (prio > 5) {
      CHECK(kind == PreemptionKind::idle_reclaim);
      CHECK(victims(r) == std::vector<TaskId>{g});
      CHECK(s.is_running(o));
    } else {
      CHECK_FALSE(kind.has_value());
      CHECK(r.preemptions.empty());
      CHECK(s.is_running(g));
      CHECK(s.is_waiting(o));
      CHECK(s.explain(o, 1).code == WaitCode::waits_for_capacity);
    }
  }
}

TEST_CASE("two tasks that fell back to idle capacity never evict each other back and forth") {
  // Pool p's node is held by a guaranteed task; both borrowers can only run on s0's idle
  // capacity. The higher-priority one displaces the lower once; the lower one, resubmitted,
  // never displaces it back, and with equal priorities the later one waits.
  for (int later_priority : {8, 2}) {
    Cluster c = make_cluster().pool("p", PoolKind::dedicated).nodes("p", 1).pool("s").nodes("s", 1).build();
    PoolId p = c.find_pool("p");
    Scheduler s(c);
    s.quotas().set_limit(QuotaKey{"ua", ResourceType::reserved, p}, gpu_quota(8));
    TaskId hold = submit(s, make_task("hold").user("ua").reserved(p).guaranteed().option("x", gpus(8)));
    s.schedule(0);
    REQUIRE(s.is_running(hold));
    TaskId first = submit(s, make_task("first").user("ua").reserved(p).accept_idle().priority(2).option("x", gpus(8)), 1);
    s.schedule(1);
    REQUIRE(s.placement_of(first)->capacity == ResourceType::idle);
    TaskId later = submit(s, make_task("later").user("ua").reserved(p).accept_idle().priority(later_priority).option("x", gpus(8)), 2);
    std::size_t preemptions = 0;
    for (Time now = 2; now < 12; ++now) {
      preemptions += s.schedule(now).preemptions.size();
      for (TaskId t : {first, later})  // resubmit whatever was preempted
        if (!s.is_running(t) && !s.is_waiting(t)) s.enqueue(t, now);
    }
    INFO("later borrower's priority " << later_priority);
    if (later_priority == 8) {
      CHECK(preemptions == 1);
      CHECK(s.is_running(later));
      CHECK(s.is_waiting(first));
    } else {
      CHECK(preemptions == 0);
      CHECK(s.is_running(first));
      CHECK(s.is_waiting(later));
    }
  }
}

TEST_CASE("a guaranteed task on reserved capacity is never a victim, not even of idle reclaim rules") {
  Cluster c = make_cluster().pool("p").nodes("p", 1).build();
  PoolId p = c.find_pool("p");
  Scheduler s(c);
  s.quotas().set_limit(QuotaKey{"alice", ResourceType::reserved, p}, gpu_quota(8));
  TaskId g = submit(s, make_task("g").reserved(p).accept_idle().guaranteed().priority(1).option("x", gpus(8)));
  s.schedule(0);
  REQUIRE(s.placement_of(g)->capacity == ResourceType::reserved);
  TaskId o = submit(s, make_task("o").user("bob").priority(9).in_pool(p).option("x", gpus(8)), 1);
  CHECK_FALSE(s.preemption_kind(o, g).has_value());
  CHECK(s.schedule(1).preemptions.empty());
}

TEST_CASE("a first-fit scheduler (no free index kept) preempts and explains preemption like a best-fit one") {
  // may_help reads the free index when the cluster keeps it and scans the nodes otherwise;
  // both must let the same victim go. Node n1 is free but too small: 4 GPUs.
  for (const char* policy : {"first-fit", "best-fit"}) {
    for (bool on : {true, false}) {
      SchedulerOptions o;
      o.placement = policy;
      o.preemption = on;
      Scheduler s(make_cluster().nodes("n", 1).node("small", "A100", 4).build(), o);
      CHECK(s.cluster().keeps_free_index() == (std::string(policy) == "best-fit"));
      TaskId low = submit(s, make_task("low").priority(1).option("x", gpus(8)));
      s.schedule(0);
      TaskId hi = submit(s, make_task("hi").priority(9).option("x", gpus(8)), 1);
      INFO(policy << " preemption " << on);
      if (on) {
        ScheduleResult r = s.schedule(1);
        REQUIRE(r.preemptions.size() == 1);
        CHECK(r.preemptions[0].victim == low);
        CHECK(s.is_running(hi));
      } else {
        CHECK(s.schedule(1).empty());
        CHECK(s.explain(hi, 1).code == WaitCode::fits_after_preemption);
        CHECK(s.wait_code(hi, 1) == WaitCode::fits_after_preemption);
      }
    }
  }
}

TEST_CASE("the victims kept are those on the node the gang takes at the shortest prefix of the victim order") {
  // Best-fit; x, y, z have 8 GPUs and 96, 64, 32 vCPU (best-fit prefers the least vCPU left).
  // Victim order: v1 (4 GPUs on x), v2 (4 GPUs on y), v3 (a gang of 4 + 4 GPUs on x and y),
  // v4 (8 GPUs on z). Prefixes 1 and 2 leave no node free; 4 frees x, y and z (the gang would
  // take z); 3, the shortest, frees x and y and the gang takes y, so the victims on y, {v2, v3},
  // are kept. (Reading the placement at prefix 4 instead finds no victim of the first three on
  // z, and minimising all three, newest first, keeps {v1, v3}.)
  Scheduler s(make_cluster().node("x", "A100", 8, 96).node("y", "A100", 8, 64).node("z", "A100", 8, 32).build());
  const NodeId x = s.cluster().find_node("x"), y = s.cluster().find_node("y"), z = s.cluster().find_node("z");
  s.set_node_up(y, false, 0);
  s.set_node_up(z, false, 0);
  TaskId v1 = submit(s, make_task("v1").priority(1).option("g", gpus(4)));
  s.schedule(0);
  s.set_node_up(y, true, 1);
  TaskId v3 = submit(s, make_task("v3").priority(3).workers(1).submitted(1).option("g", gpus(4)));
  s.schedule(1);
  TaskId v2 = submit(s, make_task("v2").priority(2).submitted(2).option("g", gpus(4)));
  s.schedule(2);
  s.set_node_up(z, true, 3);
  TaskId v4 = submit(s, make_task("v4").priority(4).submitted(3).option("g", gpus(8)));
  s.schedule(3);
  REQUIRE(s.placement_of(v1)->replicas[0].node == x);
  REQUIRE(s.placement_of(v2)->replicas[0].node == y);
  REQUIRE(s.placement_of(v3)->replicas.size() == 2);
  REQUIRE(s.placement_of(v3)->replicas[0].node == x);
  REQUIRE(s.placement_of(v3)->replicas[1].node == y);
  REQUIRE(s.placement_of(v4)->replicas[0].node == z);
  TaskId hi = submit(s, make_task("hi").priority(9).submitted(10).option("g", gpus(8, kMilliPerGpu, 16)));
  ScheduleResult r = s.schedule(10);
  REQUIRE(started(r, hi));
  CHECK(s.placement_of(hi)->replicas[0].node == y);
  std::vector<TaskId> victims;
  for (const auto& p : r.preemptions) victims.push_back(p.victim);
  std::sort(victims.begin(), victims.end());
  CHECK(victims == std::vector<TaskId>{v3, v2});
  CHECK(s.is_running(v1));
  CHECK(s.is_running(v4));
}

TEST_CASE("the victim search sees every running task that may yield, as tasks start and end (per-priority counts)") {
  // candidates() skips the scan of the running set when no running task may yield: it reads
  // the running tasks' priorities without guarantee per capacity class, kept at every start
  // and release. With preemption off, explain()'s hypothetical preemption goes through the
  // same search: fits_after_preemption exactly when a lower-priority task without guarantee
  // runs. `want` leaves the queue while the running task is swapped (it would start); it is
  // explained 0.5 s later (a task started at this instant is never a victim then).
  SchedulerOptions o;
  o.preemption = false;
  Scheduler s(make_cluster().nodes("n", 1).build(), o);
  TaskId want = s.add_task(make_task("want").priority(5).option("x", gpus(8)).build());
  Time now = 0;
  auto swap_running = [&](TaskBuilder next) {
    now += 1'000;
    if (s.is_waiting(want)) s.dequeue(want);
    for (TaskId r : std::vector<TaskId>(s.running().begin(), s.running().end())) s.release(r, now);
    TaskId t = submit(s, next.submitted(now), now);
    s.schedule(now);
    REQUIRE(s.is_running(t));
    s.enqueue(want, now);
    s.schedule(now);
    REQUIRE(s.is_waiting(want));
    return t;
  };
  swap_running(make_task("same").priority(5).option("x", gpus(8)));
  CHECK(s.explain(want, now + 500).code == WaitCode::waits_for_capacity);  // an equal priority never yields
  swap_running(make_task("guarded").priority(1).guaranteed().option("x", gpus(8)));
  CHECK(s.explain(want, now + 500).code == WaitCode::waits_for_capacity);  // guarantee protects
  swap_running(make_task("low").priority(1).option("x", gpus(8)));
  CHECK(s.explain(want, now + 500).code == WaitCode::fits_after_preemption);
  swap_running(make_task("high").priority(9).option("x", gpus(8)));
  CHECK(s.explain(want, now + 500).code == WaitCode::waits_for_capacity);  // low's count left with it
}

TEST_CASE("prefixes the slot bound rules out are not tried, and the victims are the reference search's") {
  // Nodes x, y, z of 8 GPUs, each with two 4-GPU tasks (started one by one, best-fit fills x,
  // then y, then z) whose priorities interleave: 1 and 4 on x, 2 and 5 on y, 3 and 6 on z. A whole-node gang of
  // priority 9 frees no node with the first 1, 2 or 3 victims of the order (priority first), so
  // the slot bound starts the search at 4 (actions/preempt.hpp bound_prefix); the fourth victim
  // frees x. The victims (priorities 1 and 4) are those of the search that tries every prefix.
  std::vector<std::vector<int>> victim_priorities;
  for (bool fast : {true, false}) {
    SchedulerOptions o;
    o.fast_paths = fast;
    Scheduler s(make_cluster().nodes("n", 3).build(), o);
    std::map<TaskId, int> priority_of;
    for (int p : {1, 4, 2, 5, 3, 6}) {  // one at a time (a pass would start them by priority)
      TaskId v = submit(s, make_task("v" + std::to_string(p)).priority(p).option("x", gpus(4)));
      priority_of[v] = p;
      s.schedule(0);
    }
    TaskId hi = submit(s, make_task("hi").priority(9).option("x", gpus(8)), 1);
    ScheduleResult r = s.schedule(1);
    INFO("fast paths " << fast);
    REQUIRE(started(r, hi));
    std::vector<int> ps;
    for (const auto& v : r.preemptions) ps.push_back(priority_of.at(v.victim));
    std::sort(ps.begin(), ps.end());
    CHECK(ps == std::vector<int>{1, 4});
    victim_priorities.push_back(ps);
  }
  CHECK(victim_priorities[0] == victim_priorities[1]);
}

// Session::may_yield_any answers false at once when no setting lets a running task yield. It
// decides whether a failure next to a victim started at the same instant (which may not yield
// then: no zero-length attempts) is remembered or retried at the next instant. With priority
// preemption off, idle reclaim and spot eviction still make such a task retry.
TEST_CASE("with priority preemption off, a task that fails next to an idle or spot task started at that instant reclaims it at the next") {
  for (const bool spot : {false, true}) {
    CAPTURE(spot);
    SchedulerOptions o;
    o.preemption = false;
    Scheduler s(make_cluster().nodes("n", 1).build(), o);
    auto victim_task = make_task("v").option("x", gpus(8));
    TaskId v = submit(s, spot ? victim_task.spot() : victim_task.idle(), 10);
    s.schedule(10);
    REQUIRE(s.is_running(v));
    TaskId t = submit(s, make_task("t").priority(4).option("x", gpus(8)), 10);
    CHECK(s.schedule(10).preemptions.empty());  // a second call at the same instant
    CHECK(s.is_waiting(t));
    ScheduleResult r = s.schedule(11);  // nothing was released: only the retry finds it
    CHECK(victims(r) == std::vector<TaskId>{v});
    REQUIRE(r.preemptions.size() == 1);
    CHECK(r.preemptions[0].kind == (spot ? PreemptionKind::spot_eviction : PreemptionKind::idle_reclaim));
    CHECK(s.is_running(t));
  }
}

TEST_CASE("with every preemption setting off, a task next to idle and spot tasks started at that instant waits and nothing yields") {
  SchedulerOptions o;
  o.preemption = false;
  o.idle_reclaim = false;
  o.spot_eviction = false;
  Scheduler s(make_cluster().nodes("n", 2).build(), o);
  TaskId i = submit(s, make_task("i").idle().option("x", gpus(8)), 10);
  TaskId sp = submit(s, make_task("sp").spot().option("x", gpus(8)), 10);
  s.schedule(10);
  REQUIRE((s.is_running(i) && s.is_running(sp)));
  TaskId t = submit(s, make_task("t").priority(9).option("x", gpus(8)), 10);
  CHECK(s.schedule(10).preemptions.empty());
  CHECK(s.schedule(11).preemptions.empty());
  CHECK(s.is_waiting(t));
  CHECK((s.is_running(i) && s.is_running(sp)));
  // explain answers as if preemption were on (hypothetical), as with priority preemption off
  CHECK(s.explain(t, 11).code == WaitCode::fits_after_preemption);
}

}  // namespace SCHEDSIM_UNITY_ID
