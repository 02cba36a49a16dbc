// Gang placement rules: one replica per node, no partial gangs, GPU model, milli-GPU shares,
// candidate specs, RayJob heads, transactions (docs/platform.md "Task shapes").
#include <bit>

#include <catch2/catch.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

TEST_CASE("4 + 4 free GPUs on two nodes never host an 8-GPU replica") {
  SchedulerOptions o;
  o.placement = "worst-fit";  // spreads the two 4-GPU tasks over both nodes
  Scheduler s(make_cluster().nodes("n", 2).build(), o);
  TaskId a = submit(s, make_task("a").option("x", gpus(4)));
  TaskId b = submit(s, make_task("b").option("x", gpus(4)));
  REQUIRE(s.schedule(0).started.size() == 2);
  REQUIRE(nodes_of(s, a) != nodes_of(s, b));
  TaskId big = submit(s, make_task("big").option("x", gpus(8)));
  auto before = state_of(s.cluster());
  CHECK(s.schedule(0).empty());
  CHECK(s.is_waiting(big));
  CHECK(state_of(s.cluster()) == before);
  WaitStatus w = s.explain(big, 0);
  CHECK(w.code == WaitCode::waits_for_fragmentation);
  CHECK_THAT(w.reason, Catch::Contains("largest free fragment 4 GPU"));
}

TEST_CASE("two nodes of 4 GPUs can never host an 8-GPU replica") {
  Scheduler s(make_cluster().nodes("n", 2, "A100", 4).build());
  TaskId big = submit(s, make_task("big").option("x", gpus(8)));
  CHECK(s.schedule(0).empty());
  WaitStatus w = s.explain(big, 0);
  CHECK(w.code == WaitCode::never_fits);
  CHECK_THAT(w.reason, Catch::Contains("needs 1 x 8 GPU") && Catch::Contains("largest node has 4 GPU"));
}

TEST_CASE("a gang waits whole when only one replica fits, leaving the cluster unchanged") {
  Scheduler s(make_cluster().nodes("n", 2).build());
  TaskId filler = submit(s, make_task("filler").guaranteed().option("x", gpus(8)));
  REQUIRE(s.schedule(0).started.size() == 1);
  TaskId gang = submit(s, make_task("gang").workers(1).option("x", gpus(8)));
  auto before = state_of(s.cluster());
  ScheduleResult r = s.schedule(0);
  CHECK(r.empty());
  CHECK(s.is_waiting(gang));
  CHECK(s.placement_of(gang) == nullptr);
  CHECK(state_of(s.cluster()) == before);
  CHECK(s.is_running(filler));
}

TEST_CASE("several replicas of one gang may share a node") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId t = submit(s, make_task("t").workers(3).option("x", gpus(2)));
  REQUIRE(s.schedule(0).started.size() == 1);
  CHECK(nodes_of(s, t) == std::vector<std::string>{"n0", "n0", "n0", "n0"});
  CHECK(s.cluster().node(NodeId(0)).free.gpu_milli == 0);
}

TEST_CASE("the GPU model of a replica must match the node's") {
  Cluster c = make_cluster().node("h0", "H100").node("a0", "A100").build();
  ReplicaShape a100 = with_model(gpus(8), c, "A100");
  ReplicaShape v100 = gpus(8, 1000, 1, 1, ModelMask{1} << 5);  // a model no node has
  Scheduler s(std::move(c));
  TaskId t = submit(s, make_task("t").option("x", a100));
  TaskId u = submit(s, make_task("u").option("x", v100));
  s.schedule(0);
  CHECK(nodes_of(s, t) == std::vector<std::string>{"a0"});
  CHECK(s.is_waiting(u));
  CHECK(s.explain(u, 0).code == WaitCode::never_fits);
}

TEST_CASE("milli-GPU shares pack onto the tightest GPU and whole GPUs need fully free GPUs") {
  Scheduler s(make_cluster().node("n0", "A100", 2).build());
  auto gpu_of = [&](TaskId t) { return std::countr_zero(s.placement_of(t)->replicas[0].gpu_mask); };
  TaskId half = submit(s, make_task("half").option("x", gpu_share(500)));
  s.schedule(0);
  REQUIRE(s.is_running(half));
  CHECK(gpu_of(half) == 0);
  TaskId third = submit(s, make_task("third").option("x", gpu_share(300)));
  s.schedule(0);
  CHECK(gpu_of(third) == 0);  // best fit per GPU: GPU0 has 500 free, GPU1 1000
  CHECK(s.cluster().gpu_free(NodeId(0), 0) == 200);
  TaskId whole = submit(s, make_task("whole").option("x", gpus(1)));
  s.schedule(0);
  CHECK(gpu_of(whole) == 1);
  // 200 milli are free on GPU0, but a whole GPU needs a fully free one.
  TaskId whole2 = submit(s, make_task("whole2").option("x", gpus(1)));
  TaskId share2 = submit(s, make_task("share2").option("x", gpu_share(300)));
  TaskId share3 = submit(s, make_task("share3").option("x", gpu_share(200)));
  s.schedule(0);
  CHECK(s.is_waiting(whole2));
  CHECK(s.is_waiting(share2));
  CHECK(s.is_running(share3));
  CHECK(s.cluster().gpu_free(NodeId(0), 0) == 0);
  CHECK(s.cluster().node(NodeId(0)).full_free_gpus == 0);
}

TEST_CASE("candidate specs fall through in order and every replica uses the chosen spec") {
  Scheduler s(make_cluster().nodes("n", 2).build());
  // n0 keeps 4 free GPUs, n1 keeps 1: option 0 (2 x 4 GPU) could place the master only.
  TaskId f0 = submit(s, make_task("f0").guaranteed().option("x", gpus(4)));
  TaskId f1 = submit(s, make_task("f1").guaranteed().option("x", gpus(7)));
  s.schedule(0);
  REQUIRE((s.is_running(f0) && s.is_running(f1)));
  REQUIRE(nodes_of(s, f0) != nodes_of(s, f1));
  TaskId t = submit(s, make_task("t").workers(1).option("big", gpus(4)).option("small", gpus(1)));
  s.schedule(0);
  REQUIRE(s.is_running(t));
  const Placement* p = s.placement_of(t);
  CHECK(p->option == 1);
  for (const auto& a : p->replicas) CHECK(std::popcount(a.gpu_mask) == 1);
}

TEST_CASE("the first candidate spec wins when it fits") {
  Scheduler s(make_cluster().nodes("n", 2).build());
  TaskId t = submit(s, make_task("t").workers(1).option("big", gpus(8)).option("small", gpus(1)));
  s.schedule(0);
  REQUIRE(s.is_running(t));
  CHECK(s.placement_of(t)->option == 0);
  CHECK(s.placement_of(t)->replicas[1].total_gpu_milli() == 8000);
}

TEST_CASE("a RayJob head may have its own shape") {
  Scheduler s(make_cluster().nodes("n", 2).node("cpu0", "", 0, 64, 256).build());
  TaskId t = submit(s, make_task("ray").ray().workers(2).option("a100.8x", cpu_only(8, 32), gpus(8)));
  s.schedule(0);
  REQUIRE(s.is_running(t));
  const Placement* p = s.placement_of(t);
  REQUIRE(p->replicas.size() == 3);
  CHECK(p->replicas[0].gpu_mask == 0);
  CHECK(p->replicas[0].cpu_milli == 8000);
  CHECK(p->replicas[1].total_gpu_milli() == 8000);
  CHECK(p->replicas[2].total_gpu_milli() == 8000);
  CHECK(s.task(t).demand(0) == Resources{16000, 8000 + 2 * 1000, (32 + 2) * kMibPerGib});
}

TEST_CASE("transaction rollback restores the exact state through nested marks") {
  Cluster c = make_cluster().pool("p").node("n0", "A100", 4).node("n1", "A100", 4).build();
  QuotaBook q;
  QuotaKey k{"alice", ResourceType::reserved, PoolId(0)};
  q.set_limit(k, gpu_quota(8));
  ClusterState s0 = state_of(c);
  {
    Transaction tx(c, q);
    ReplicaAllocation a = tx.allocate(NodeId(0), gpu_share(250));
    tx.charge(k, a.resources(), +1);
    ClusterState s1 = state_of(c);
    auto q1 = q.find(k)->used;
    std::size_t m1 = tx.mark();
    tx.allocate(NodeId(0), gpus(2));
    std::size_t m2 = tx.mark();
    tx.release(a);
    tx.allocate(NodeId(1), gpus(4));
    tx.charge(k, gpu_quota(4, 0, 0), +1);
    tx.rollback_to(m2);
    CHECK(c.gpu_free(NodeId(0), 0) == 750);
    CHECK(c.node(NodeId(1)).free.gpu_milli == 4000);
    tx.rollback_to(m1);
    CHECK(state_of(c) == s1);
    CHECK(q.find(k)->used == q1);
  }  // destroyed without commit: everything undone
  CHECK(state_of(c) == s0);
  CHECK(q.find(k)->used == Resources{});
}

TEST_CASE("a committed transaction keeps its changes") {
  Cluster c = make_cluster().node("n0", "A100", 4).build();
  QuotaBook q;
  {
    Transaction tx(c, q);
    tx.allocate(NodeId(0), gpus(3));
    tx.commit();
  }
  CHECK(c.node(NodeId(0)).free.gpu_milli == 1000);
  CHECK(c.node(NodeId(0)).full_free_gpus == 1);
}

}  // namespace SCHEDSIM_UNITY_ID
