// The embedding API (docs/scheduler.md "Library API"): typed errors for every public
// precondition, nodes added / drained / removed at any time, running tasks adopted, ended tasks
// forgotten. One test per rule that can fail.
#include <catch2/catch.hpp>

#include <set>

#include <fmt/format.h>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {

/// A fresh two-node A100 scheduler with one pool.
Scheduler two_nodes(SchedulerOptions o = {}) { return Scheduler(make_cluster().pool("p").nodes("n", 2).build(), std::move(o)); }

/// An 8-GPU A100 node description.
NodeDesc a100(std::string name, PoolId pool, std::int32_t n_gpus = 8, std::int64_t cpu_milli = 96000) {
  NodeDesc d;
  d.name = std::move(name);
  d.pool = pool;
  d.gpu_model = "A100";
  d.gpus = n_gpus;
  d.cpu_milli = cpu_milli;
  d.mem_mib = 960 * 1024;
  return d;
}

/// A task that takes one whole node of `two_nodes`.
TaskSpec whole_node(std::string name, std::int32_t prio = 5) { return make_task(std::move(name)).priority(prio).option("x", gpus(8)); }

/// Full accounting of a scheduler's cluster and quota, for "nothing changed" checks.
struct Accounting {
  ClusterState cluster;
  std::vector<Resources> quota_used;
  std::size_t waiting = 0, running = 0;
  friend bool operator==(const Accounting&, const Accounting&) = default;
};
Accounting accounting(const Scheduler& s) {
  Accounting a{state_of(s.cluster()), {}, s.waiting_count(), s.running_count()};
  for (const auto& [k, e] : s.quotas().entries()) a.quota_used.push_back(e.used);
  return a;
}

}  // namespace

// ------------------------------------------------------------------ errors: one hierarchy

TEST_CASE("every typed error is a libsched::Error and the standard exception of its kind") {
  Scheduler s = two_nodes();
  try {
    s.task(TaskId(42));
    FAIL("no throw");
  } catch (const Error& e) {
    CHECK(dynamic_cast<const UnknownTask*>(&e) != nullptr);
    CHECK(dynamic_cast<const std::out_of_range*>(&e) != nullptr);
    CHECK(std::string(e.what()).find("Scheduler::task") != std::string::npos);
  }
  CHECK_THROWS_AS(s.add_task(make_task("t")), std::invalid_argument);       // InvalidArgument
  CHECK_THROWS_AS(s.enqueue(TaskId(42), 0), std::out_of_range);            // UnknownTask
  s.schedule(10);
  CHECK_THROWS_AS(s.schedule(5), std::invalid_argument);                   // TimeWentBackwards
  TaskId t = s.add_task(make_task("u").option("x", gpus(1)));
  CHECK_THROWS_AS(s.release(t, 10), std::logic_error);                     // InvalidState
  try {
    s.schedule(5);
    FAIL("no throw");
  } catch (const std::exception& e) {  // one std::exception base: unambiguous
    CHECK(dynamic_cast<const TimeWentBackwards*>(&e) != nullptr);
    CHECK(dynamic_cast<const Error*>(&e) != nullptr);
  }
}

// ------------------------------------------------------------------ add_task: shapes

TEST_CASE("add_task refuses a task without a candidate spec") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t")), InvalidArgument);
}

TEST_CASE("add_task refuses a 2-GPU replica of 500 milli-GPU") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").option("x", gpus(2, 500))), InvalidArgument);
}

TEST_CASE("add_task refuses milli-GPU outside 1..1000") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").option("x", gpus(1, 0))), InvalidArgument);
  CHECK_THROWS_AS(s.add_task(make_task("t").option("x", gpus(1, 1001))), InvalidArgument);
}

TEST_CASE("add_task refuses GPUs outside 0..64") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").option("x", gpus(-1))), InvalidArgument);
  CHECK_THROWS_AS(s.add_task(make_task("t").option("x", gpus(65))), InvalidArgument);
}

TEST_CASE("add_task refuses negative vCPU") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").option("x", gpus(1, 1000, -1))), InvalidArgument);
}

TEST_CASE("add_task refuses negative memory") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").option("x", gpus(1, 1000, 1, -1))), InvalidArgument);
}

TEST_CASE("add_task refuses a head shape that is invalid even when the worker is fine") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").ray().option("x", gpus(2, 300), gpus(1))), InvalidArgument);
}

TEST_CASE("add_task refuses negative workers") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").workers(-1).option("x", gpus(1))), InvalidArgument);
}

TEST_CASE("add_task refuses a priority outside 1..9 except on idle tasks") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").priority(0).option("x", gpus(1))), InvalidArgument);
  CHECK_THROWS_AS(s.add_task(make_task("t").priority(10).option("x", gpus(1))), InvalidArgument);
  CHECK_NOTHROW(s.add_task(make_task("i").idle().priority(0).option("x", gpus(1))));
}

TEST_CASE("add_task refuses a reserved task without a pool") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").reserved(PoolId()).option("x", gpus(1))), InvalidArgument);
}

TEST_CASE("add_task refuses an unknown pool") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").reserved(PoolId(7)).option("x", gpus(1))), UnknownPool);
}

TEST_CASE("add_task refuses accept_idle on a task that is not reserved") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").accept_idle().option("x", gpus(1))), InvalidArgument);
}

TEST_CASE("add_task refuses guarantee on a spot task") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").spot().guaranteed().option("x", gpus(1))), InvalidArgument);
}

TEST_CASE("add_task refuses a runtime estimate below -1 and a negative checkpoint interval") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_task(make_task("t").estimate(-2).option("x", gpus(1))), InvalidArgument);
  CHECK_THROWS_AS(s.add_task(make_task("t").checkpoint_every(-1).option("x", gpus(1))), InvalidArgument);
}

TEST_CASE("a refused add_task registers nothing") {
  Scheduler s = two_nodes();
  CHECK_THROWS(s.add_task(make_task("t").option("x", gpus(2, 500))));
  CHECK(s.task_count() == 0);
}

// ------------------------------------------------------------------ unknown task ids

TEST_CASE("every function taking a task id refuses an unknown id") {
  Scheduler s = two_nodes();
  TaskId known = s.add_task(whole_node("a"));
  const TaskId bad(5), invalid;
  for (TaskId t : {bad, invalid}) {
    CHECK_THROWS_AS(s.task(t), UnknownTask);
    CHECK_THROWS_AS(s.mutable_task(t), UnknownTask);
    CHECK_THROWS_AS(s.enqueue(t, 0), UnknownTask);
    CHECK_THROWS_AS(s.dequeue(t), UnknownTask);
    CHECK_THROWS_AS(s.is_waiting(t), UnknownTask);
    CHECK_THROWS_AS(s.is_running(t), UnknownTask);
    CHECK_THROWS_AS(s.request_signature(t, 0), UnknownTask);
    CHECK_THROWS_AS(s.placement_of(t), UnknownTask);
    CHECK_THROWS_AS(s.release(t, 0), UnknownTask);
    CHECK_THROWS_AS(s.explain(t, 0), UnknownTask);
    CHECK_THROWS_AS(s.add_worker(t, 0), UnknownTask);
    CHECK_THROWS_AS(s.remove_worker(t, 0), UnknownTask);
    CHECK_THROWS_AS(s.preemption_kind(t, known), UnknownTask);
    CHECK_THROWS_AS(s.preemption_kind(known, t), UnknownTask);
    CHECK_THROWS_AS(s.reservation(t, 0), UnknownTask);
    CHECK_THROWS_AS(s.forget_task(t), UnknownTask);
    CHECK_FALSE(s.knows_task(t));
  }
  CHECK(s.knows_task(known));
}

// ------------------------------------------------------------------ invalid states

TEST_CASE("enqueue refuses a task that already waits") {
  Scheduler s = two_nodes();
  TaskId t = submit(s, whole_node("a"));
  CHECK_THROWS_AS(s.enqueue(t, 0), InvalidState);
  CHECK(s.waiting_count() == 1);
}

TEST_CASE("enqueue refuses a running task") {
  Scheduler s = two_nodes();
  TaskId t = submit(s, whole_node("a"));
  s.schedule(0);
  REQUIRE(s.is_running(t));
  CHECK_THROWS_AS(s.enqueue(t, 1), InvalidState);
  CHECK(s.is_running(t));
}

TEST_CASE("release refuses a task that does not run") {
  Scheduler s = two_nodes();
  TaskId t = submit(s, whole_node("a"));
  CHECK_THROWS_AS(s.release(t, 0), InvalidState);
}

TEST_CASE("mutable_task refuses a waiting task") {
  Scheduler s = two_nodes();
  TaskId t = submit(s, whole_node("a"));
  CHECK_THROWS_AS(s.mutable_task(t), InvalidState);
}

TEST_CASE("reservation refuses a task that does not wait") {
  Scheduler s = two_nodes();
  TaskId t = s.add_task(whole_node("a"));
  CHECK_THROWS_AS(s.reservation(t, 0), InvalidState);
}

TEST_CASE("set_node_up refuses to take down a node with running tasks") {
  Scheduler s = two_nodes();
  TaskId t = submit(s, whole_node("a"));
  s.schedule(0);
  NodeId n = s.placement_of(t)->replicas[0].node;
  CHECK_THROWS_AS(s.set_node_up(n, false, 1), InvalidState);
  CHECK(s.cluster().node(n).up);
}

// ------------------------------------------------------------------ time

TEST_CASE("schedule refuses a time earlier than the last call") {
  Scheduler s = two_nodes();
  s.schedule(100);
  CHECK_THROWS_AS(s.schedule(99), TimeWentBackwards);
  CHECK_NOTHROW(s.schedule(100));
}

TEST_CASE("functions taking now refuse a time earlier than the last schedule") {
  Scheduler s = two_nodes();
  TaskId r = submit(s, whole_node("r"));
  s.schedule(100);
  REQUIRE(s.is_running(r));
  TaskId w = submit(s, make_task("w").option("x", gpus(16)), 100);
  CHECK_THROWS_AS(s.release(r, 50), TimeWentBackwards);
  CHECK_THROWS_AS(s.explain(w, 50), TimeWentBackwards);
  CHECK_THROWS_AS(s.reservation(w, 50), TimeWentBackwards);
  CHECK_THROWS_AS(s.add_worker(r, 50), TimeWentBackwards);
  CHECK_THROWS_AS(s.remove_worker(r, 50), TimeWentBackwards);
  CHECK_THROWS_AS(s.set_node_up(NodeId(1), false, 50), TimeWentBackwards);
  CHECK(s.is_running(r));
}

// ------------------------------------------------------------------ nodes

TEST_CASE("functions taking a node id refuse an unknown node") {
  Scheduler s = two_nodes();
  for (NodeId n : {NodeId(2), NodeId()}) {
    CHECK_THROWS_AS(s.tasks_on_node(n), UnknownNode);
    CHECK_THROWS_AS(s.set_node_up(n, false, 0), UnknownNode);
    CHECK_THROWS_AS(s.remove_node(n), UnknownNode);
    CHECK_THROWS_AS(s.drain_node(n), UnknownNode);
    CHECK_THROWS_AS(s.undrain_node(n), UnknownNode);
    CHECK_THROWS_AS(s.cluster().node(n), UnknownNode);
    CHECK_THROWS_AS(s.cluster().fits(n, gpus(1)), UnknownNode);
    CHECK_THROWS_AS(s.cluster().gpu_free(n, 0), UnknownNode);
    CHECK_THROWS_AS(s.cluster().gpu_free_begin(n), UnknownNode);
  }
}

TEST_CASE("add_node_policy refuses a policy naming an unknown node") {
  Scheduler s = two_nodes();
  NodePolicy p = make_policy("block");
  p.nodes.push_back(NodeId(9));
  CHECK_THROWS_AS(s.add_node_policy(p), UnknownNode);
  CHECK(s.node_policies().empty());
}

TEST_CASE("add_node_policy refuses a policy that expires before it is created") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_node_policy(make_policy("block").active(100, 50)), InvalidArgument);
}

TEST_CASE("a node added while tasks wait is used at the next schedule") {
  Scheduler s = two_nodes();
  submit(s, whole_node("a"));
  submit(s, whole_node("b"));
  s.schedule(0);
  TaskId c = submit(s, whole_node("c"), 1);
  s.schedule(1);
  REQUIRE(s.is_waiting(c));
  NodeId n = s.add_node(a100("n-new", s.cluster().find_pool("p")));
  CHECK(n == NodeId(2));
  s.take_changed_nodes();
  s.schedule(2);
  REQUIRE(s.is_running(c));
  CHECK(s.placement_of(c)->replicas[0].node == n);
  CHECK(s.cluster().total_capacity().gpu_milli == 24000);
}

TEST_CASE("add_node refuses a duplicate name, an unknown pool, GPUs outside 0..64 and negative vCPU") {
  Scheduler s = two_nodes();
  PoolId p = s.cluster().find_pool("p");
  CHECK_THROWS_AS(s.add_node(a100("n0", p)), InvalidArgument);
  CHECK_THROWS_AS(s.add_node(a100("x", PoolId(3))), UnknownPool);
  CHECK_THROWS_AS(s.add_node(a100("x", p, 65)), InvalidArgument);
  CHECK_THROWS_AS(s.add_node(a100("x", p, 8, -1)), InvalidArgument);
  CHECK(s.cluster().size() == 2);
}

TEST_CASE("add_pool refuses a duplicate pool name") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.add_pool("p", PoolKind::shared), InvalidArgument);
  CHECK(s.add_pool("q", PoolKind::dedicated) == PoolId(1));
}

TEST_CASE("a drained node takes no new replica but its running task continues") {
  SchedulerOptions o;
  o.placement = "first-fit";
  Scheduler s = two_nodes(o);
  TaskId a = submit(s, make_task("a").option("x", gpus(4)));
  s.schedule(0);
  NodeId n0 = s.placement_of(a)->replicas[0].node;
  s.drain_node(n0);
  CHECK(s.cluster().node(n0).drained);
  TaskId b = submit(s, make_task("b").option("x", gpus(4)), 1);
  s.schedule(1);
  REQUIRE(s.is_running(b));
  CHECK(s.placement_of(b)->replicas[0].node != n0);   // first-fit, yet n0 (4 GPUs free) is drained
  submit(s, make_task("b2").option("x", gpus(4)), 1);   // fills the other node
  s.schedule(1);
  CHECK(s.is_running(a));
  TaskId c = submit(s, make_task("c").option("x", gpus(4)), 2);
  s.schedule(2);
  CHECK(s.is_waiting(c));
  s.undrain_node(n0);
  s.schedule(3);
  REQUIRE(s.is_running(c));
  CHECK(s.placement_of(c)->replicas[0].node == n0);
}

TEST_CASE("explain of a task blocked only by a drain is not fits_now") {
  Scheduler s(make_cluster().pool("p").nodes("n", 1).build());
  s.drain_node(NodeId(0));
  TaskId t = submit(s, make_task("t").option("x", gpus(1)));
  s.schedule(0);
  REQUIRE(s.is_waiting(t));
  CHECK(s.explain(t, 0).code != WaitCode::fits_now);
}

TEST_CASE("remove_node refuses a node with a running task") {
  Scheduler s = two_nodes();
  TaskId t = submit(s, whole_node("a"));
  s.schedule(0);
  NodeId n = s.placement_of(t)->replicas[0].node;
  CHECK_THROWS_AS(s.remove_node(n), InvalidState);
  CHECK_FALSE(s.cluster().node(n).removed);
}

TEST_CASE("a removed node keeps its id as a tombstone and takes nothing") {
  Scheduler s = two_nodes();
  s.take_changed_nodes();
  s.remove_node(NodeId(0));
  const Node& n = s.cluster().node(NodeId(0));
  CHECK(n.removed);
  CHECK_FALSE(n.up);
  CHECK(n.capacity == Resources{});
  CHECK(s.cluster().total_capacity().gpu_milli == 8000);
  CHECK(s.cluster().up_capacity().gpu_milli == 8000);
  CHECK(s.cluster().free_index().size() == 1);
  CHECK_FALSE(s.cluster().find_node("n0").valid());
  CHECK(s.take_changed_nodes() == std::vector<NodeId>{NodeId(0)});
  CHECK_THROWS_AS(s.remove_node(NodeId(0)), InvalidState);
  CHECK_THROWS_AS(s.set_node_up(NodeId(0), true, 0), InvalidState);
  CHECK_THROWS_AS(s.drain_node(NodeId(0)), InvalidState);
  TaskId a = submit(s, whole_node("a"));
  TaskId b = submit(s, whole_node("b"));
  s.schedule(0);
  CHECK(s.is_running(a));
  CHECK(s.is_waiting(b));
  CHECK(s.placement_of(a)->replicas[0].node == NodeId(1));
  CHECK(s.explain(b, 0).code == WaitCode::waits_for_capacity);
  // The name may be reused: a new node, a new id.
  NodeId again = s.add_node(a100("n0", s.cluster().find_pool("p")));
  CHECK(again == NodeId(2));
  s.schedule(1);
  CHECK(s.is_running(b));
}

TEST_CASE("the fragmentation tracker follows added and removed nodes") {
  Scheduler s = two_nodes();
  WorkloadDistribution w = WorkloadDistribution::from_shapes({gpus(1, 500)});
  FragmentationTracker f(s.cluster(), w);
  s.take_changed_nodes();
  s.add_node(a100("n2", s.cluster().find_pool("p")));
  TaskId t = submit(s, make_task("t").option("x", gpus(1, 700)));
  s.schedule(0);
  REQUIRE(s.is_running(t));
  f.update(s.cluster(), s.take_changed_nodes());
  CHECK(f.total() == Approx(cluster_fragmentation(s.cluster(), w)));
  s.release(t, 1);
  s.remove_node(NodeId(1));
  f.update(s.cluster(), s.take_changed_nodes());
  CHECK(f.total() == Approx(cluster_fragmentation(s.cluster(), w)));
}

// ------------------------------------------------------------------ cluster-level preconditions

TEST_CASE("Cluster::allocate refuses a replica that does not fit") {
  Cluster c = make_cluster().nodes("n", 1).build();
  CHECK_THROWS_AS(c.allocate(NodeId(0), gpus(9)), InvalidState);
  CHECK_THROWS_AS(c.allocate(NodeId(0), gpus(1, 1000, 97)), InvalidState);  // 97 vCPU of 96
  CHECK(c.node(NodeId(0)).free == c.node(NodeId(0)).capacity);
}

TEST_CASE("Cluster::release refuses an allocation released twice") {
  Cluster c = make_cluster().nodes("n", 1).build();
  ReplicaAllocation a = c.allocate(NodeId(0), gpus(2));
  c.release(a);
  CHECK_THROWS_AS(c.release(a), InvalidState);
  CHECK(c.node(NodeId(0)).free == c.node(NodeId(0)).capacity);
}

TEST_CASE("Cluster::reacquire refuses an allocation that no longer fits") {
  Cluster c = make_cluster().nodes("n", 1).build();
  ReplicaAllocation a = c.allocate(NodeId(0), gpus(8));
  c.release(a);
  c.allocate(NodeId(0), gpus(1));
  CHECK_THROWS_AS(c.reacquire(a), InvalidState);
}

TEST_CASE("Cluster::gpu_free refuses a GPU index the node does not have") {
  Cluster c = make_cluster().nodes("n", 1).build();
  CHECK_THROWS_AS(c.gpu_free(NodeId(0), 8), InvalidArgument);
  CHECK_THROWS_AS(c.gpu_free(NodeId(0), -1), InvalidArgument);
}

TEST_CASE("Cluster::pool and touch_owner refuse unknown ids") {
  Cluster c = make_cluster().nodes("n", 1).build();
  CHECK_THROWS_AS(c.pool(PoolId(4)), UnknownPool);
  CHECK_THROWS_AS(c.touch_owner(NodeId(4), 0), UnknownNode);
  CHECK_THROWS_AS(c.set_up(NodeId(4), false), UnknownNode);
  CHECK_THROWS_AS(c.allocate(NodeId(4), gpus(1)), UnknownNode);
}

TEST_CASE("Cluster::intern_model refuses a 65th GPU model") {
  Cluster c;
  for (int i = 0; i < 64; ++i) c.intern_model(fmt::format("m{}", i));
  CHECK_THROWS_AS(c.intern_model("m64"), InvalidArgument);
  CHECK(c.intern_model("m3") == 3);
}

TEST_CASE("QuotaBook::set_limit refuses a negative limit") {
  QuotaBook q;
  CHECK_THROWS_AS(q.set_limit(QuotaKey{"alice", ResourceType::pay_as_you_go, PoolId()}, Resources{-1, 0, 0}), InvalidArgument);
  CHECK(q.entries().empty());
}

TEST_CASE("set_quota refuses an idle key, a reserved key without a pool and an unknown pool") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.set_quota({"alice", ResourceType::idle, PoolId()}, gpu_quota(1)), InvalidArgument);
  CHECK_THROWS_AS(s.set_quota({"alice", ResourceType::reserved, PoolId()}, gpu_quota(1)), InvalidArgument);
  CHECK_THROWS_AS(s.set_quota({"alice", ResourceType::reserved, PoolId(5)}, gpu_quota(1)), UnknownPool);
  CHECK_THROWS_AS(s.set_quota({"alice", ResourceType::reserved, PoolId(0)}, Resources{0, -1, 0}), InvalidArgument);
  s.set_quota({"alice", ResourceType::reserved, PoolId(0)}, gpu_quota(1));
  CHECK(s.quotas().entries().size() == 1);
}

// ------------------------------------------------------------------ adoption

TEST_CASE("an adopted task runs where the snapshot says, holds its quota and blocks others") {
  Scheduler s = two_nodes();
  PoolId p = s.cluster().find_pool("p");
  QuotaKey k{"alice", ResourceType::reserved, p};
  s.set_quota(k, gpu_quota(16));
  Adoption a{0, ResourceType::reserved, {{NodeId(1), 0b1111'0000}}, 500};
  TaskId t = s.adopt_task(make_task("old").reserved(p).option("x", gpus(4)), a);
  REQUIRE(s.is_running(t));
  const Placement* pl = s.placement_of(t);
  CHECK(pl->start == 500);
  CHECK(pl->replicas[0].node == NodeId(1));
  CHECK(pl->replicas[0].gpu_mask == 0b1111'0000);
  CHECK(s.cluster().gpu_free(NodeId(1), 3) == 1000);
  CHECK(s.cluster().gpu_free(NodeId(1), 4) == 0);
  CHECK(s.quotas().find(k)->used.gpu_milli == 4000);
  CHECK(s.tasks_on_node(NodeId(1)) == std::vector<TaskId>{t});
  CHECK(s.allocated_gpu_milli(ResourceType::reserved) == 4000);
  // A newcomer fits node 0 but not node 1 (4 GPUs left there).
  TaskId u = submit(s, make_task("u").reserved(p).option("x", gpus(8)), 600);
  TaskId v = submit(s, make_task("v").reserved(p).option("x", gpus(8)), 600);
  s.schedule(600);
  CHECK(s.is_running(u));
  CHECK(s.is_waiting(v));
  s.release(t, 700);
  CHECK(s.quotas().find(k)->used.gpu_milli == 8000);
  s.schedule(700);
  CHECK(s.is_running(v));
}

TEST_CASE("an adopted lower-priority task can be preempted like a placed one") {
  Scheduler s = two_nodes();
  TaskId old1 = s.adopt_task(whole_node("old1", 1), {0, ResourceType::pay_as_you_go, {{NodeId(0), 0}}, 0});
  TaskId old2 = s.adopt_task(whole_node("old2", 3), {0, ResourceType::pay_as_you_go, {{NodeId(1), 0}}, 0});
  TaskId hi = submit(s, whole_node("hi", 9), 10);
  ScheduleResult r = s.schedule(10);
  REQUIRE(r.preemptions.size() == 1);
  CHECK(r.preemptions[0].victim == old1);
  CHECK(s.is_running(hi));
  CHECK(s.is_running(old2));
}

TEST_CASE("a task adopted at the current instant is no victim at that instant") {
  Scheduler s = two_nodes();
  s.schedule(10);
  s.adopt_task(whole_node("a", 1), {0, ResourceType::pay_as_you_go, {{NodeId(0), 0}}, 10});
  s.adopt_task(whole_node("b", 1), {0, ResourceType::pay_as_you_go, {{NodeId(1), 0}}, 10});
  TaskId hi = submit(s, whole_node("hi", 9), 10);
  CHECK(s.schedule(10).preemptions.empty());
  CHECK(s.is_waiting(hi));
  CHECK(s.schedule(11).preemptions.size() == 1);
}

TEST_CASE("adopt_task refuses a replica that does not fit its node and takes nothing") {
  Scheduler s = two_nodes();
  s.adopt_task(make_task("a").option("x", gpus(6)), {0, ResourceType::pay_as_you_go, {{NodeId(0), 0}}, 0});
  Accounting before = accounting(s);
  // A 2-replica gang: the first replica fits node 1, the second does not fit node 0.
  CHECK_THROWS_AS(s.adopt_task(make_task("b").workers(1).option("x", gpus(4)),
                               {0, ResourceType::pay_as_you_go, {{NodeId(1), 0}, {NodeId(0), 0}}, 0}),
                  InvalidState);
  CHECK(accounting(s) == before);
  CHECK(s.task_count() == 1);
}

TEST_CASE("adopt_task refuses GPUs that are already taken") {
  Scheduler s = two_nodes();
  s.adopt_task(make_task("a").option("x", gpus(2)), {0, ResourceType::pay_as_you_go, {{NodeId(0), 0b11}}, 0});
  CHECK_THROWS_AS(s.adopt_task(make_task("b").option("x", gpus(2)), {0, ResourceType::pay_as_you_go, {{NodeId(0), 0b110}}, 0}),
                  InvalidState);
}

TEST_CASE("adopt_task refuses a GPU mask of the wrong size or beyond the node's GPUs") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.adopt_task(make_task("b").option("x", gpus(2)), {0, ResourceType::pay_as_you_go, {{NodeId(0), 0b111}}, 0}),
                  InvalidArgument);
  CHECK_THROWS_AS(
      s.adopt_task(make_task("b").option("x", gpus(1)), {0, ResourceType::pay_as_you_go, {{NodeId(0), std::uint64_t{1} << 9}}, 0}),
      InvalidArgument);
}

TEST_CASE("adopt_task refuses a replica on a down node") {
  Scheduler s = two_nodes();
  s.set_node_up(NodeId(0), false, 0);
  CHECK_THROWS_AS(s.adopt_task(whole_node("a"), {0, ResourceType::pay_as_you_go, {{NodeId(0), 0}}, 0}), InvalidState);
}

TEST_CASE("adopt_task accepts a drained node") {
  Scheduler s = two_nodes();
  s.drain_node(NodeId(0));
  TaskId t = s.adopt_task(whole_node("a"), {0, ResourceType::pay_as_you_go, {{NodeId(0), 0}}, 0});
  CHECK(s.is_running(t));
}

TEST_CASE("adopt_task refuses an unknown node") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.adopt_task(whole_node("a"), {0, ResourceType::pay_as_you_go, {{NodeId(7), 0}}, 0}), UnknownNode);
}

TEST_CASE("adopt_task refuses an option the task does not have") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.adopt_task(whole_node("a"), {1, ResourceType::pay_as_you_go, {{NodeId(0), 0}}, 0}), InvalidArgument);
}

TEST_CASE("adopt_task refuses a capacity class the task may not use") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.adopt_task(whole_node("a"), {0, ResourceType::idle, {{NodeId(0), 0}}, 0}), InvalidArgument);
}

TEST_CASE("adopt_task refuses a PyTorchJob with the wrong number of replicas") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.adopt_task(make_task("a").workers(1).option("x", gpus(1)), {0, ResourceType::pay_as_you_go, {{NodeId(0), 0}}, 0}),
                  InvalidArgument);
}

TEST_CASE("adopt_task accepts a RayJob with autoscaled workers beyond its spec") {
  Scheduler s = two_nodes();
  TaskId t = s.adopt_task(make_task("r").ray().workers(0).option("x", gpus(1)),
                          {0, ResourceType::pay_as_you_go, {{NodeId(0), 0}, {NodeId(0), 0}, {NodeId(1), 0}}, 0});
  CHECK(s.placement_of(t)->replicas.size() == 3);
  CHECK(s.allocated_gpu_milli(ResourceType::pay_as_you_go) == 3000);
}

TEST_CASE("adopt_task refuses an invalid task spec") {
  Scheduler s = two_nodes();
  CHECK_THROWS_AS(s.adopt_task(make_task("a").option("x", gpus(2, 500)), {0, ResourceType::pay_as_you_go, {{NodeId(0), 0}}, 0}),
                  InvalidArgument);
}

// ------------------------------------------------------------------ forgetting

TEST_CASE("a forgotten task's id is unknown until a new task reuses it") {
  Scheduler s = two_nodes();
  TaskId a = submit(s, whole_node("a"));
  TaskId b = s.add_task(whole_node("b"));
  s.schedule(0);
  s.release(a, 1);
  s.forget_task(a);
  s.forget_task(b);
  CHECK_FALSE(s.knows_task(a));
  CHECK_THROWS_AS(s.task(a), UnknownTask);
  CHECK_THROWS_AS(s.enqueue(a, 1), UnknownTask);
  CHECK_THROWS_AS(s.forget_task(a), UnknownTask);
  TaskId c = s.add_task(whole_node("c"));
  CHECK(c == a);  // the lowest forgotten id first
  CHECK(s.task(c).name == "c");
  CHECK_FALSE(s.is_waiting(c));
  CHECK(s.add_task(whole_node("d")) == b);
  CHECK(s.add_task(whole_node("e")) == TaskId(2));
  CHECK(s.task_count() == 3);
}

TEST_CASE("prefetch is a hint: any id, known or not, and the decisions do not change") {
  // The same calls on two schedulers, one of them given prefetch() hints before each call
  // (for every id, valid or not, waiting, running, released or forgotten).
  Scheduler hinted = two_nodes();
  Scheduler plain = two_nodes();
  auto hint_all = [&](const Scheduler& s) {
    s.prefetch(TaskId());
    for (std::int32_t i = 0; i < 8; ++i) s.prefetch(TaskId(i));
    s.prefetch(TaskId(1 << 30));
  };
  std::vector<std::vector<TaskId>> started[2];
  int k = 0;
  for (Scheduler* s : {&hinted, &plain}) {
    const bool hints = s == &hinted;
    if (hints) hint_all(*s);
    TaskId a = submit(*s, whole_node("a"));
    TaskId b = submit(*s, whole_node("b"));
    TaskId c = submit(*s, whole_node("c"));
    if (hints) hint_all(*s);
    started[k].push_back(s->schedule(0).started);
    if (hints) hint_all(*s);
    s->release(a, 5);
    if (hints) hint_all(*s);
    started[k].push_back(s->schedule(5).started);
    s->forget_task(a);
    if (hints) hint_all(*s);
    s->release(b, 9);
    started[k].push_back(s->schedule(9).started);
    if (hints) hint_all(*s);
    CHECK(s->is_running(c));
    // Two forgotten ids: the first reuse hints the entry of the second (the next one handed out).
    s->forget_task(b);
    TaskId d = submit(*s, whole_node("d"), 10);
    TaskId e = submit(*s, whole_node("e"), 10);
    if (hints) hint_all(*s);
    CHECK(d == a);
    CHECK(e == b);
    started[k].push_back(s->schedule(10).started);
    ++k;
  }
  CHECK(started[0] == started[1]);
  CHECK(started[0][0].size() == 2);
  CHECK(started[0][1] == std::vector<TaskId>{TaskId(2)});
  CHECK(started[0][3] == std::vector<TaskId>{TaskId(0)});  // d on the node b left; e waits
}

TEST_CASE("forget_task refuses a waiting task") {
  Scheduler s = two_nodes();
  TaskId a = submit(s, whole_node("a"));
  CHECK_THROWS_AS(s.forget_task(a), InvalidState);
  CHECK(s.is_waiting(a));
}

TEST_CASE("forget_task refuses a running task") {
  Scheduler s = two_nodes();
  TaskId a = submit(s, whole_node("a"));
  s.schedule(0);
  CHECK_THROWS_AS(s.forget_task(a), InvalidState);
  CHECK(s.is_running(a));
}

TEST_CASE("a long-lived scheduler that forgets ended tasks keeps a bounded number of ids") {
  Scheduler s = two_nodes();
  Time now = 0;
  for (int i = 0; i < 1000; ++i) {
    TaskId t = submit(s, whole_node(fmt::format("t{}", i)), now);
    s.schedule(now);
    REQUIRE(s.is_running(t));
    s.release(t, ++now);
    s.forget_task(t);
  }
  CHECK(s.task_count() == 1);
}

TEST_CASE("Cluster::keep_free_index(false) stops the index; turning it on rebuilds the same index") {
  Scheduler s = two_nodes();
  TaskId t = submit(s, whole_node("a"));
  s.schedule(0);
  REQUIRE(s.is_running(t));
  Cluster c = s.cluster();
  const auto before = c.free_index();
  c.keep_free_index(false);
  CHECK_FALSE(c.keeps_free_index());
  CHECK_THROWS_AS(c.free_index(), InvalidState);
  c.release(s.placement_of(t)->replicas[0]);  // changes while off are not recorded...
  c.keep_free_index(true);                       // ...and the rebuild sees them
  CHECK(c.keeps_free_index());
  CHECK(c.free_index().size() == before.size());
  for (const auto& k : c.free_index()) {
    const Node& n = c.node(NodeId(std::get<2>(k)));
    CHECK(std::get<0>(k) == n.free.gpu_milli);
    CHECK(std::get<1>(k) == n.free.cpu_milli);
  }
  CHECK(c.free_index() != before);
}

}  // namespace SCHEDSIM_UNITY_ID
