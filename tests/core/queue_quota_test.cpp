// Queue order, queueing modes (greedy / strict / backfill), quotas, capacity classes and idle
// stability (docs/scenario-format.md "scheduler"; docs/platform.md "Resource types").
#include <catch2/catch.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

TEST_CASE("the queue is ordered by priority desc, then submit time asc, then name") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId late_hi = submit(s, make_task("late-hi").priority(9).submitted(50).option("x", gpus(1)));
  TaskId early_b = submit(s, make_task("b").priority(5).submitted(10).option("x", gpus(1)));
  TaskId early_a = submit(s, make_task("a").priority(5).submitted(10).option("x", gpus(1)));
  TaskId earliest = submit(s, make_task("z").priority(5).submitted(0).option("x", gpus(1)));
  TaskId low = submit(s, make_task("low").priority(1).submitted(0).option("x", gpus(1)));
  CHECK(s.queue() == std::vector<TaskId>{late_hi, earliest, early_a, early_b, low});
}

TEST_CASE("idle tasks rank below every non-idle task") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId idle = submit(s, make_task("a-idle").idle().submitted(0).option("x", gpus(1)));
  TaskId low = submit(s, make_task("z-low").priority(1).submitted(100).option("x", gpus(1)));
  CHECK(s.queue() == std::vector<TaskId>{low, idle});
  CHECK(s.task(idle).priority == 0);
}

namespace {
/// Queueing `q` without preemption; `fast_paths` as given (tests that compare both ways).
SchedulerOptions no_preemption(Queueing q, bool fast_paths = true) {
  SchedulerOptions o;
  o.queueing = q;
  o.preemption = false;
  o.fast_paths = fast_paths;
  return o;
}
/// One 8-GPU node; R runs 6 GPUs with a 100 s estimate; H (8 GPUs, priority 7) heads the
/// queue and can start only when R ends; S (2 GPUs, priority 5) is behind it.
struct BackfillFixture {
  Scheduler s;
  TaskId r, h;
  explicit BackfillFixture(Queueing q)
      : s(make_cluster().nodes("n", 1).build(), no_preemption(q)) {
    r = submit(s, make_task("r").option("x", gpus(6)).estimate(100'000));
    REQUIRE(s.schedule(0).started.size() == 1);
    h = submit(s, make_task("h").priority(7).option("x", gpus(8)).estimate(100'000), 10'000);
  }
  TaskId small(Time estimate) { return submit(s, make_task("s").priority(5).option("x", gpus(2)).estimate(estimate), 10'000); }
};
}  // namespace

TEST_CASE("greedy queueing starts a task that fits behind a blocked one") {
  BackfillFixture f(Queueing::greedy);
  TaskId sm = f.small(500'000);
  f.s.schedule(10'000);
  CHECK(f.s.is_waiting(f.h));
  CHECK(f.s.is_running(sm));
}

TEST_CASE("strict queueing blocks every task behind the first that cannot start") {
  BackfillFixture f(Queueing::strict);
  TaskId sm = f.small(1'000);
  f.s.schedule(10'000);
  CHECK(f.s.is_waiting(sm));
  WaitStatus w = f.s.explain(sm, 10'000);
  CHECK(w.code == WaitCode::blocked_by_queue);
  CHECK_THAT(w.reason, Catch::Contains("h"));
}

TEST_CASE("a small task backfills when it ends before the head's reservation") {
  BackfillFixture f(Queueing::backfill);
  TaskId sm = f.small(50'000);  // ends at 60 s, the head's reservation is 100 s
  f.s.schedule(10'000);
  CHECK(f.s.reservation(f.h, 10'000) == 100'000);
  CHECK(f.s.is_running(sm));
}

TEST_CASE("a small task does not backfill when it would delay the head's reservation") {
  BackfillFixture f(Queueing::backfill);
  TaskId sm = f.small(200'000);  // would end at 210 s, after the head's reservation at 100 s
  f.s.schedule(10'000);
  CHECK(f.s.is_waiting(sm));
  CHECK(f.s.explain(sm, 10'000).code == WaitCode::blocked_by_queue);
  CHECK(f.s.reservation(f.h, 10'000) == 100'000);
}

TEST_CASE("the head's reservation holds across instants until it passes, then follows the overdue task") {
  // One 8-GPU node: R1 (4 GPUs) expected to end at 50 s, R2 (4 GPUs) at 100 s; H needs 4 GPUs.
  // Its reservation is 50 s while that is ahead (computed once, reused at later instants), and
  // once R1 is overdue (still running) it is expected to end at every now: the reservation is now.
  for (bool fast : {true, false}) {
    INFO("fast paths " << fast);
    Scheduler s(make_cluster().nodes("n", 1).build(), no_preemption(Queueing::backfill, fast));
    submit(s, make_task("r1").option("x", gpus(4)).estimate(50'000));
    submit(s, make_task("r2").option("x", gpus(4)).estimate(100'000));
    REQUIRE(s.schedule(0).started.size() == 2);
    TaskId h = submit(s, make_task("h").option("x", gpus(4)).estimate(10'000), 10'000);
    s.schedule(10'000);
    CHECK(s.reservation(h, 10'000) == 50'000);
    CHECK(s.reservation(h, 30'000) == 50'000);
    CHECK(s.reservation(h, 49'999) == 50'000);
    CHECK(s.reservation(h, 60'000) == 60'000);
    CHECK(s.reservation(h, 70'000) == 70'000);
  }
}

TEST_CASE("a backfill pass after arrivals alone skips the held queue, but visits it all when an arrival starts") {
  // R runs 6 of 8 GPUs until 100 s; H (8 GPUs) heads the queue; T (bob, reserved, 3 GPUs,
  // quota 3 GPUs) waits for capacity. At 20 s nothing changed and only L arrives (2 GPUs, ends
  // after the reservation): the pass visits L alone. At 30 s F arrives (bob, 1 GPU, ends by the
  // reservation): it backfills and takes the quota T needs, so that pass visits the whole
  // queue and T now waits for quota, exactly as with fast paths off.
  for (bool fast : {true, false}) {
    INFO("fast paths " << fast);
    Scheduler s(make_cluster().pool("p").nodes("n", 1).build(), no_preemption(Queueing::backfill, fast));
    PoolId p = s.cluster().find_pool("p");
    s.quotas().set_limit(QuotaKey{"bob", ResourceType::reserved, p}, gpu_quota(3));
    TaskId r = submit(s, make_task("r").pay_as_you_go().option("x", gpus(6)).estimate(100'000));
    REQUIRE(s.schedule(0).started == std::vector<TaskId>{r});
    TaskId h = submit(s, make_task("h").pay_as_you_go().priority(7).option("x", gpus(8)).estimate(100'000), 10'000);
    TaskId t = submit(s, make_task("t").user("bob").reserved(p).submitted(10'000).option("x", gpus(3)).estimate(10'000), 10'000);
    s.schedule(10'000);
    CHECK(s.wait_code(t, 10'000) == WaitCode::waits_for_capacity);
    (void)s.take_visited_waiting();
    s.schedule(15'000);  // nothing happened: the fast pass visits nobody
    CHECK(s.take_visited_waiting() == (fast ? std::vector<TaskId>{} : std::vector<TaskId>{h, t}));
    TaskId l = submit(s, make_task("l").pay_as_you_go().submitted(20'000).option("x", gpus(2)).estimate(500'000), 20'000);
    CHECK(s.schedule(20'000).started.empty());
    std::vector<TaskId> visited = s.take_visited_waiting();
    if (fast) CHECK(visited == std::vector<TaskId>{l});
    else CHECK(visited == std::vector<TaskId>{h, t, l});
    CHECK(s.wait_code(l, 20'000) == WaitCode::blocked_by_queue);
    TaskId f = submit(s, make_task("f").user("bob").reserved(p).submitted(30'000).option("x", gpus(1)).estimate(10'000), 30'000);
    CHECK(s.schedule(30'000).started == std::vector<TaskId>{f});
    visited = s.take_visited_waiting();
    CHECK(std::find(visited.begin(), visited.end(), t) != visited.end());
    CHECK(s.wait_code(t, 30'000) == WaitCode::waits_for_quota);
    CHECK(s.is_waiting(h));
  }
}

TEST_CASE("a greedy pass after arrivals alone visits the new tasks, and lists the queue as visited when one starts") {
  // R runs 6 of 8 GPUs; T (bob, reserved, 3 GPUs, quota 3 GPUs) waits for capacity. At 20 s
  // nothing was released and L arrives (4 GPUs): the pass visits L alone. At 30 s F arrives
  // (bob, 1 GPU) and starts, taking the quota T needs: T cannot start either way, but it is
  // listed as visited so that its wait status (now quota) is computed anew.
  for (bool fast : {true, false}) {
    INFO("fast paths " << fast);
    Scheduler s(make_cluster().pool("p").nodes("n", 1).build(), no_preemption(Queueing::greedy, fast));
    PoolId p = s.cluster().find_pool("p");
    s.quotas().set_limit(QuotaKey{"bob", ResourceType::reserved, p}, gpu_quota(3));
    TaskId r = submit(s, make_task("r").pay_as_you_go().option("x", gpus(6)));
    REQUIRE(s.schedule(0).started == std::vector<TaskId>{r});
    TaskId t = submit(s, make_task("t").user("bob").reserved(p).submitted(10'000).option("x", gpus(3)), 10'000);
    CHECK(s.schedule(10'000).started.empty());
    CHECK(s.wait_code(t, 10'000) == WaitCode::waits_for_capacity);
    (void)s.take_visited_waiting();
    TaskId l = submit(s, make_task("l").pay_as_you_go().submitted(20'000).option("x", gpus(4)), 20'000);
    CHECK(s.schedule(20'000).started.empty());
    CHECK(s.take_visited_waiting() == std::vector<TaskId>{l});
    TaskId f = submit(s, make_task("f").user("bob").reserved(p).submitted(30'000).option("x", gpus(1)), 30'000);
    CHECK(s.schedule(30'000).started == std::vector<TaskId>{f});
    CHECK(s.take_visited_waiting() == std::vector<TaskId>{t, l});
    CHECK(s.wait_code(t, 30'000) == WaitCode::waits_for_quota);
  }
}

TEST_CASE("a task with an unknown runtime estimate never backfills ahead of a known reservation") {
  BackfillFixture f(Queueing::backfill);
  TaskId sm = f.small(-1);
  f.s.schedule(10'000);
  CHECK(f.s.is_waiting(sm));
}

TEST_CASE("a backfill candidate that uses capacity the head does not need starts even when long") {
  // Two nodes: the head needs n0 only (n1 is too small for it), so a long task on n1 is harmless.
  SchedulerOptions o;
  o.queueing = Queueing::backfill;
  o.preemption = false;
  Scheduler s(make_cluster().node("n0").node("n1", "A100", 2, 8, 64).build(), o);
  TaskId r = submit(s, make_task("r").option("x", gpus(6)).estimate(100'000));
  s.schedule(0);
  REQUIRE(s.is_running(r));
  TaskId h = submit(s, make_task("h").priority(7).option("x", gpus(8)).estimate(1'000));
  TaskId sm = submit(s, make_task("s").option("x", gpus(2)).estimate(10'000'000));
  s.schedule(0);
  CHECK(s.is_waiting(h));
  // s is best-fit onto n1 (2 free of 2), which the head can never use.
  CHECK(s.is_running(sm));
  CHECK(nodes_of(s, sm) == std::vector<std::string>{"n1"});
}

TEST_CASE("when the head's reservation is unknown, backfill behaves greedily") {
  SchedulerOptions o;
  o.queueing = Queueing::backfill;
  o.preemption = false;
  Scheduler s(make_cluster().nodes("n", 1).build(), o);
  submit(s, make_task("r").option("x", gpus(6)));  // no estimate: the head's reservation is unknown
  s.schedule(0);
  TaskId h = submit(s, make_task("h").priority(7).option("x", gpus(8)));
  TaskId sm = submit(s, make_task("s").option("x", gpus(2)).estimate(1'000));
  s.schedule(0);
  CHECK(s.reservation(h, 0) == kTimeNever);
  CHECK(s.is_running(sm));
}

TEST_CASE("explain does not report a stale blocked_by_queue once the task ahead has started") {
  SchedulerOptions o;
  o.queueing = Queueing::strict;
  o.preemption = false;
  Scheduler s(make_cluster().nodes("n", 1).build(), o);
  TaskId r = submit(s, make_task("r").option("x", gpus(6)));
  s.schedule(0);
  TaskId h = submit(s, make_task("h").priority(7).option("x", gpus(4)));
  TaskId big = submit(s, make_task("big").priority(5).option("x", gpus(8)));
  s.schedule(0);
  REQUIRE(s.explain(big, 0).code == WaitCode::blocked_by_queue);
  s.release(r, 1'000);
  s.schedule(1'000);
  REQUIRE(s.is_running(h));
  REQUIRE(s.is_waiting(big));
  // Nothing is ahead of `big` now; it waits for the capacity h holds.
  CHECK(s.explain(big, 1'000).code == WaitCode::waits_for_capacity);
}

// ------------------------------------------------------------------------------ quota

namespace {
struct QuotaFixture {
  Cluster c = make_cluster().pool("p").nodes("n", 2).pool("other").nodes("o", 1).build();
  PoolId p = c.find_pool("p");
  PoolId other = c.find_pool("other");
  Scheduler s{c};
  QuotaKey alice{"alice", ResourceType::reserved, PoolId(0)};
};
}  // namespace

TEST_CASE("quota is checked for the whole task, not one replica") {
  QuotaFixture f;
  f.s.quotas().set_limit(f.alice, gpu_quota(12));
  TaskId t = submit(f.s, make_task("t").reserved(f.p).workers(1).option("x", gpus(8)));
  f.s.schedule(0);
  CHECK(f.s.is_waiting(t));
  WaitStatus w = f.s.explain(t, 0);
  CHECK(w.code == WaitCode::never_fits);  // 16 > 12 even with nothing running
  CHECK_THAT(w.reason, Catch::Contains("quota"));
  // One replica of the same size fits the same quota.
  TaskId single = submit(f.s, make_task("single").reserved(f.p).option("x", gpus(8)));
  f.s.schedule(0);
  CHECK(f.s.is_running(single));
  CHECK(f.s.is_waiting(t));
}

TEST_CASE("a gang whose whole demand exceeds the remaining quota waits for quota") {
  QuotaFixture f;
  f.s.quotas().set_limit(f.alice, gpu_quota(12));
  TaskId first = submit(f.s, make_task("first").reserved(f.p).option("x", gpus(8)));
  f.s.schedule(0);
  REQUIRE(f.s.is_running(first));
  TaskId t = submit(f.s, make_task("t").reserved(f.p).option("x", gpus(8)));
  f.s.schedule(0);
  CHECK(f.s.is_waiting(t));
  WaitStatus w = f.s.explain(t, 0);
  CHECK(w.code == WaitCode::waits_for_quota);
  CHECK_THAT(w.reason, Catch::Contains("task demand 8 GPU exceeds remaining quota 4 GPU"));
}

TEST_CASE("only running tasks hold quota and release returns it") {
  QuotaFixture f;
  f.s.quotas().set_limit(f.alice, gpu_quota(8));
  TaskId a = submit(f.s, make_task("a").reserved(f.p).option("x", gpus(8)));
  TaskId b = submit(f.s, make_task("b").reserved(f.p).submitted(1).option("x", gpus(8)));
  CHECK(f.s.quotas().find(f.alice)->used == Resources{});  // queued tasks hold nothing
  f.s.schedule(0);
  REQUIRE(f.s.is_running(a));
  CHECK(f.s.is_waiting(b));
  CHECK(f.s.quotas().find(f.alice)->used.gpu_milli == 8000);
  f.s.release(a, 10);
  CHECK(f.s.quotas().find(f.alice)->used == Resources{});
  f.s.schedule(10);
  CHECK(f.s.is_running(b));
  CHECK(f.s.quotas().find(f.alice)->used.gpu_milli == 8000);
}

TEST_CASE("a reserved task without a quota entry never starts") {
  QuotaFixture f;
  TaskId t = submit(f.s, make_task("t").reserved(f.p).option("x", gpus(1)));
  f.s.schedule(0);
  CHECK(f.s.is_waiting(t));
  WaitStatus w = f.s.explain(t, 0);
  CHECK(w.code == WaitCode::never_fits);
  CHECK_THAT(w.reason, Catch::Contains("quota"));
}

TEST_CASE("pay-as-you-go is limited only when a quota entry exists") {
  QuotaFixture f;
  TaskId free_run = submit(f.s, make_task("free").option("x", gpus(8)));
  f.s.schedule(0);
  CHECK(f.s.is_running(free_run));
  f.s.quotas().set_limit(QuotaKey{"bob", ResourceType::pay_as_you_go, PoolId()}, gpu_quota(4));
  TaskId limited = submit(f.s, make_task("limited").user("bob").option("x", gpus(8)));
  TaskId fits = submit(f.s, make_task("fits").user("bob").option("x", gpus(4)));
  f.s.schedule(0);
  CHECK(f.s.is_waiting(limited));
  CHECK(f.s.is_running(fits));
}

TEST_CASE("accept_idle falls back to idle capacity wholly, never mixing classes") {
  // Pool p has 2 nodes; the gang needs 3 x 8 GPU, so it can only run on idle capacity. Idle
  // capacity for a reserved task is outside its own pool (n0, n1 are its reserved capacity).
  Cluster c = make_cluster().pool("p").nodes("n", 2).pool("other").nodes("o", 3).build();
  Scheduler s(c);
  QuotaKey alice{"alice", ResourceType::reserved, c.find_pool("p")};
  s.quotas().set_limit(alice, gpu_quota(24));
  TaskId t = submit(s, make_task("t").reserved(c.find_pool("p")).accept_idle().workers(2).option("x", gpus(8)));
  s.schedule(0);
  REQUIRE(s.is_running(t));
  const Placement* pl = s.placement_of(t);
  CHECK(pl->capacity == ResourceType::idle);
  CHECK(pl->quota_held == Resources{});
  CHECK(s.quotas().find(alice)->used == Resources{});
  CHECK(nodes_of(s, t) == std::vector<std::string>{"o0", "o1", "o2"});
}

TEST_CASE("accept_idle never takes the task's own pool as idle capacity, so a gang never mixes") {
  // The quota admits one 8-GPU replica of the 2-replica gang: not on reserved capacity. Idle
  // capacity outside pool p is o0 alone: one replica there and one on n0 would mix, so it waits.
  QuotaFixture f;
  f.s.quotas().set_limit(f.alice, gpu_quota(8));
  TaskId t = submit(f.s, make_task("t").reserved(f.p).accept_idle().workers(1).option("x", gpus(8)));
  f.s.schedule(0);
  CHECK(f.s.is_waiting(t));
  CHECK(f.s.cluster().node(NodeId(0)).free.gpu_milli == 8000);
}

TEST_CASE("accept_idle prefers reserved capacity when it fits") {
  QuotaFixture f;
  f.s.quotas().set_limit(f.alice, gpu_quota(24));
  TaskId t = submit(f.s, make_task("t").reserved(f.p).accept_idle().workers(1).option("x", gpus(8)));
  f.s.schedule(0);
  REQUIRE(f.s.is_running(t));
  CHECK(f.s.placement_of(t)->capacity == ResourceType::reserved);
  CHECK(f.s.quotas().find(f.alice)->used.gpu_milli == 16000);
}

TEST_CASE("prefer_idle tries idle capacity first") {
  QuotaFixture f;
  f.s.quotas().set_limit(f.alice, gpu_quota(24));
  TaskId t = submit(f.s, make_task("t").reserved(f.p).prefer_idle().option("x", gpus(8)));
  f.s.schedule(0);
  REQUIRE(f.s.is_running(t));
  CHECK(f.s.placement_of(t)->capacity == ResourceType::idle);
  CHECK(f.s.quotas().find(f.alice)->used == Resources{});
  CHECK(nodes_of(f.s, t) == std::vector<std::string>{"o0"});  // outside its own pool
}

TEST_CASE("a reserved task without accept_idle never runs on idle capacity") {
  QuotaFixture f;
  f.s.quotas().set_limit(f.alice, gpu_quota(24));
  TaskId t = submit(f.s, make_task("t").reserved(f.p).workers(2).option("x", gpus(8)));
  f.s.schedule(0);
  CHECK(f.s.is_waiting(t));
}

TEST_CASE("idle stability levels offer fragments by node age") {
  SchedulerOptions o;  // high >= 3600 s, medium >= 600 s, low: all
  Scheduler s(make_cluster().nodes("n", 1).build(), o);
  s.set_node_up(NodeId(0), true, 0);  // the owners' allocation changed at 0
  auto try_at = [&](IdleStability st, Time now) {
    TaskId t = submit(s, make_task("i").idle(st).option("x", gpus(1)), now);
    s.schedule(now);
    bool ok = s.is_running(t);
    if (ok) s.release(t, now);
    else s.dequeue(t);
    return ok;
  };
  CHECK(try_at(IdleStability::low, 300'000));
  CHECK_FALSE(try_at(IdleStability::medium, 300'000));
  CHECK_FALSE(try_at(IdleStability::high, 300'000));
  CHECK(try_at(IdleStability::medium, 600'000));
  CHECK_FALSE(try_at(IdleStability::high, 600'000));
  CHECK(try_at(IdleStability::high, 3'600'000));
}

TEST_CASE("a non-idle start on a node resets its idle age, idle starts do not") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId idle = submit(s, make_task("i").idle().option("x", gpus(1)));
  s.schedule(5'000);
  REQUIRE(s.is_running(idle));
  CHECK(s.cluster().node(NodeId(0)).last_owner_change < 0);
  TaskId own = submit(s, make_task("own").option("x", gpus(1)));
  s.schedule(7'000);
  REQUIRE(s.is_running(own));
  CHECK(s.cluster().node(NodeId(0)).last_owner_change == 7'000);
}

TEST_CASE("a backfill candidate that preempts does not count its victim's capacity twice") {
  // n0: r (guaranteed, 4 GPU, ends at 100 s) and v (priority 1, 4 GPU, ends at 1000 s).
  // h (8 GPU) cannot preempt its way in (r is guaranteed), so its reservation is 1000 s.
  // s (priority 3, 4 GPU, 5000 s) could start by preempting v, but then h waits until 5000 s.
  SchedulerOptions o;
  o.queueing = Queueing::backfill;
  Scheduler s(make_cluster().nodes("n", 1).build(), o);
  TaskId r = submit(s, make_task("r").guaranteed().option("x", gpus(4)).estimate(100'000));
  TaskId v = submit(s, make_task("v").priority(1).option("x", gpus(4)).estimate(1'000'000));
  s.schedule(0);
  REQUIRE((s.is_running(r) && s.is_running(v)));
  // At 1 ms: v, started at 0, may be a victim (never at the instant it started).
  TaskId h = submit(s, make_task("h").priority(9).option("x", gpus(8)).estimate(10'000), 1);
  TaskId sm = submit(s, make_task("s").priority(3).option("x", gpus(4)).estimate(5'000'000), 1);
  ScheduleResult res = s.schedule(1);
  CHECK(s.reservation(h, 1) == 1'000'000);
  CHECK(res.preemptions.empty());
  CHECK(s.is_waiting(sm));
  CHECK(s.is_running(v));
  CHECK(s.explain(sm, 1).code == WaitCode::blocked_by_queue);
}

TEST_CASE("RayJob autoscaling charges quota per added worker and remove_worker returns it") {
  QuotaFixture f;
  f.s.quotas().set_limit(f.alice, gpu_quota(10));
  TaskId t = submit(f.s, make_task("ray").ray().reserved(f.p).workers(1).option("x", gpus(4)));
  f.s.schedule(0);
  REQUIRE(f.s.is_running(t));
  CHECK(f.s.quotas().find(f.alice)->used.gpu_milli == 8000);
  CHECK_FALSE(f.s.add_worker(t, 1).has_value());  // 8 + 4 > 10
  f.s.quotas().set_limit(f.alice, gpu_quota(12));
  REQUIRE(f.s.add_worker(t, 1).has_value());
  CHECK(f.s.quotas().find(f.alice)->used.gpu_milli == 12000);
  CHECK(f.s.placement_of(t)->replicas.size() == 3);
  CHECK(f.s.remove_worker(t, 2));
  CHECK(f.s.remove_worker(t, 2));
  CHECK_FALSE(f.s.remove_worker(t, 2));  // never the head
  CHECK(f.s.quotas().find(f.alice)->used.gpu_milli == 4000);
  f.s.release(t, 3);
  CHECK(f.s.quotas().find(f.alice)->used == Resources{});
  CHECK(f.s.cluster().node(NodeId(0)).free == f.s.cluster().node(NodeId(0)).capacity);
  CHECK(f.s.cluster().node(NodeId(1)).free == f.s.cluster().node(NodeId(1)).capacity);
}

TEST_CASE("a node goes down only once its tasks are released") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId t = submit(s, make_task("t").option("x", gpus(1)));
  s.schedule(0);
  CHECK_THROWS_AS(s.set_node_up(NodeId(0), false, 1), InvalidState);
  s.release(t, 1);
  s.set_node_up(NodeId(0), false, 1);
  TaskId u = submit(s, make_task("u").option("x", gpus(1)), 2);
  s.schedule(2);
  CHECK(s.is_waiting(u));
  s.set_node_up(NodeId(0), true, 3);
  s.schedule(3);
  CHECK(s.is_running(u));
}

TEST_CASE("the head's reservation counts the expiry of the node policy that blocks it") {
  // n0 is blocked for ua until 600 s. h (ua) waits; its reservation is the expiry, so s
  // (ub, 1000 s) would delay it and does not backfill, while a 500 s task does.
  SchedulerOptions o;
  o.queueing = Queueing::backfill;
  Cluster c = make_cluster().nodes("n", 1).build();
  Scheduler s(c, o);
  s.add_node_policy(make_policy("block").node_not_in().for_user("ua").nodes(c, {"n0"}).active(0, 600'000));
  TaskId h = submit(s, make_task("h").user("ua").option("x", gpus(8)).estimate(100'000));
  s.schedule(0);
  REQUIRE(s.is_waiting(h));
  CHECK(s.reservation(h, 0) == 600'000);
  CHECK(s.next_eligibility_change(0) == 600'000);
  TaskId lng = submit(s, make_task("s").user("ub").option("x", gpus(8)).estimate(1'000'000), 10'000);
  s.schedule(10'000);
  CHECK(s.is_waiting(lng));
  CHECK(s.explain(lng, 10'000).code == WaitCode::blocked_by_queue);
  s.dequeue(lng);
  TaskId sh = submit(s, make_task("short").user("ub").option("x", gpus(8)).estimate(500'000), 10'000);
  s.schedule(10'000);
  CHECK(s.is_running(sh));
  CHECK(s.reservation(h, 10'000) == 600'000);  // sh is expected to end at 510 s
}

TEST_CASE("the head's reservation counts a node policy that starts later as blocking from then on") {
  // n0 becomes blocked for ua at 100 s (until 700 s), n0 is busy until 200 s: the head fits
  // only at the block's expiry.
  SchedulerOptions o;
  o.queueing = Queueing::backfill;
  Cluster c = make_cluster().nodes("n", 1).build();
  Scheduler s(c, o);
  s.add_node_policy(make_policy("block").node_not_in().for_user("ua").nodes(c, {"n0"}).active(100'000, 700'000));
  TaskId r = submit(s, make_task("r").user("ub").option("x", gpus(8)).estimate(200'000));
  s.schedule(0);
  REQUIRE(s.is_running(r));
  TaskId h = submit(s, make_task("h").user("ua").option("x", gpus(8)).estimate(100'000));
  s.schedule(0);
  CHECK(s.reservation(h, 0) == 700'000);
}

TEST_CASE("the head's reservation counts idle fragments ageing into its stability level") {
  // An owner's task leaves n0 at 100 s (expected); an idle task at stability medium (600 s)
  // can start there at 700 s, not at 100 s.
  SchedulerOptions o;
  o.queueing = Queueing::backfill;
  Scheduler s(make_cluster().nodes("n", 1).build(), o);
  TaskId own = submit(s, make_task("own").option("x", gpus(8)).estimate(100'000));
  s.schedule(0);
  REQUIRE(s.is_running(own));
  TaskId i = submit(s, make_task("i").idle(IdleStability::medium).option("x", gpus(8)).estimate(50'000), 50'000);
  s.schedule(50'000);
  REQUIRE(s.is_waiting(i));
  CHECK(s.reservation(i, 50'000) == 700'000);
  s.release(own, 100'000);
  CHECK(s.next_eligibility_change(100'000) == 700'000);
  CHECK(s.reservation(i, 100'000) == 700'000);
  s.schedule(699'999);
  CHECK(s.is_waiting(i));
  s.schedule(700'000);
  CHECK(s.is_running(i));
  CHECK(s.next_eligibility_change(700'000) == kTimeNever);  // nothing waits
}

}  // namespace SCHEDSIM_UNITY_ID
