// Platform rules end to end (docs/scheduler.md): each input is a small scenario whose exact
// tasks.csv rows the rule fixes.
#include <catch2/catch.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace simtest;
using Rows = std::vector<std::string>;

namespace {

/// A pool of `count` 8-GPU A100 nodes named prefix0, prefix1, ...
sim::io::PoolCfg pool(const std::string& name, const std::string& kind, const std::string& prefix, int count) {
  sim::io::PoolCfg p;
  p.name = name;
  p.kind = kind;
  sim::io::NodeGroupCfg g;
  g.prefix = prefix;
  g.count = count;
  g.gpu_model = "A100";
  g.gpus = 8;
  g.vcpu = 96;
  g.memory_gib = 960;
  p.node_groups.push_back(g);
  return p;
}

/// Pool `mine` (dedicated, node r0) where alice holds a reserved quota of one 8-GPU replica,
/// and pool `other` (dedicated, nodes i0, i1).
sim::io::Scenario mine_and_other() {
  auto sc = cluster(0);
  sc.cluster.pools = {pool("mine", "dedicated", "r", 1), pool("other", "dedicated", "i", 2)};
  sc.quotas.push_back({"alice", "reserved", "mine", 8, 96, 960});
  return sc;
}

/// alice's reserved 2-replica task in `mine` with the idle fallback.
sim::io::TaskCfg reserved_with_fallback(const std::string& name) {
  auto t = task(name, 0, 100, 1);
  t.resource_type = "reserved";
  t.pool = "mine";
  t.accept_idle = true;
  t.idle_stability = "low";
  return t;
}

}  // namespace

TEST_CASE("accept_idle never mixes: a gang short of reserved capacity runs wholly on idle capacity of other pools") {
  // Reserved: the quota (8 GPU) admits one replica, not the gang (16 GPU). Idle capacity:
  // r0 is alice's own reserved capacity, so it is not idle capacity for her.
  auto sc = mine_and_other();
  sc.tasks = {reserved_with_fallback("t")};
  REQUIRE(run_rows(sc) == Rows{"t,1,Succeeded,0,0,100,a100.8x,i0;i1,"});
}

TEST_CASE("prefer_idle never mixes either: idle first means idle capacity outside the task's own pool") {
  auto sc = mine_and_other();
  sc.quotas[0].gpus = 16;
  sc.quotas[0].vcpu = 192;
  sc.quotas[0].memory_gib = 1920;
  auto t = reserved_with_fallback("t");
  t.accept_idle = false;
  t.prefer_idle = true;
  sc.tasks = {t};
  REQUIRE(run_rows(sc) == Rows{"t,1,Succeeded,0,0,100,a100.8x,i0;i1,"});
}

TEST_CASE("a guaranteed task that fell back to idle capacity is reclaimed there like any idle task") {
  // By a task of strictly higher priority (docs/scheduler.md "Preemption"): g 5, o 6.
  auto sc = mine_and_other();
  auto g = reserved_with_fallback("g");
  g.guarantee = true;
  g.guarantee_set = true;
  g.duration_s = 1000;
  auto o = task("o", 100, 100);  // bob, pay-as-you-go on pool other: an owner of that capacity
  o.user = "bob";
  o.pool = "other";
  o.priority = 6;
  o.priority_set = true;
  sc.tasks = {g, o};
  REQUIRE(run_rows(sc) == Rows{
                              "g,1,Failed,0,0,100,a100.8x,i0;i1,was preempted by another task: o (idle_reclaim)",
                              "o,1,Succeeded,100,100,200,a100.8x,i0,",
                          });
}

TEST_CASE("backfill: the head's reservation counts a blocking node policy's expiry, so a long task does not backfill") {
  auto sc = cluster(0);
  sc.cluster.pools = {pool("p", "shared", "n", 1)};
  sc.scheduler.queueing = "backfill";
  sim::io::NodePolicyCfg pol;
  pol.name = "block-n0";
  pol.type = "NodeNotIn";
  pol.scope = "user";
  pol.user = "ua";
  pol.nodes = {"n0"};
  pol.created_s = 0;
  pol.expire_s = 600;
  sc.node_policies.push_back(pol);
  auto h = task("h", 0, 100);
  h.user = "ua";
  h.runtime_estimate_s = 100;
  auto s = task("s", 10, 1000);
  s.user = "ub";
  s.runtime_estimate_s = 1000;
  sc.tasks = {h, s};
  REQUIRE(run_rows(sc) == Rows{
                              "h,1,Succeeded,0,600,700,a100.8x,n0,",
                              "s,1,Succeeded,10,700,1700,a100.8x,n0,",
                          });
}

TEST_CASE("backfill: a short task that ends before the policy expiry still backfills") {
  auto sc = cluster(0);
  sc.cluster.pools = {pool("p", "shared", "n", 1)};
  sc.scheduler.queueing = "backfill";
  sim::io::NodePolicyCfg pol;
  pol.name = "block-n0";
  pol.type = "NodeNotIn";
  pol.scope = "user";
  pol.user = "ua";
  pol.nodes = {"n0"};
  pol.created_s = 0;
  pol.expire_s = 600;
  sc.node_policies.push_back(pol);
  auto h = task("h", 0, 100);
  h.user = "ua";
  h.runtime_estimate_s = 100;
  auto s = task("s", 10, 500);
  s.user = "ub";
  s.runtime_estimate_s = 500;
  sc.tasks = {h, s};
  REQUIRE(run_rows(sc) == Rows{
                              "h,1,Succeeded,0,600,700,a100.8x,n0,",
                              "s,1,Succeeded,10,10,510,a100.8x,n0,",
                          });
}

TEST_CASE("no zero-length attempts: a task started at an instant is not preempted at that instant by a later round") {
  // At 10 s: v (spot, priority 9) takes the free node; h (8) preempts l (1) for the other;
  // p (7) could only evict v, which started at this instant: it waits for h to end at 110 s.
  auto sc = cluster(2);
  auto l = task("l", 0, 5000);
  l.priority = 1;
  auto v = task("v", 10, 1000);
  v.resource_type = "spot";
  v.priority = 9;
  auto h = task("h", 10, 100);
  h.priority = 8;
  auto p = task("p", 10, 100);
  p.priority = 7;
  sc.tasks = {l, v, h, p};
  auto rows = run_rows(sc);
  REQUIRE(rows == Rows{
                      "l,1,Failed,0,0,10,a100.8x,a100-0,was preempted by another task: h (priority)",
                      "v,1,Succeeded,10,10,1010,a100.8x,a100-1,",
                      "h,1,Succeeded,10,10,110,a100.8x,a100-0,",
                      "p,1,Succeeded,10,110,210,a100.8x,a100-0,",
                  });
}

TEST_CASE("the simulator wakes up when a node's idle age reaches the task's stability threshold") {
  // o (an owner's task) leaves a100-0 at 100 s; the idle task waits for the node to stay
  // unused for the threshold, with no other event at that time.
  auto sc = cluster(1);
  auto o = task("o", 0, 100);
  auto i = task("i", 50, 100);
  i.resource_type = "idle";
  i.pool = "";
  SECTION("medium") {
    i.idle_stability = "medium";  // 600 s
    sc.tasks = {o, i};
    REQUIRE(run_rows(sc) == Rows{"o,1,Succeeded,0,0,100,a100.8x,a100-0,", "i,1,Succeeded,50,700,800,a100.8x,a100-0,"});
  }
  SECTION("high") {
    i.idle_stability = "high";
    sc.scheduler.idle_stability_high_s = 1000;
    sc.tasks = {o, i};
    REQUIRE(run_rows(sc) == Rows{"o,1,Succeeded,0,0,100,a100.8x,a100-0,", "i,1,Succeeded,50,1100,1200,a100.8x,a100-0,"});
  }
  SECTION("an accept_idle fallback ages too") {
    sc.cluster.pools = {pool("mine", "dedicated", "r", 1), pool("other", "shared", "a100-", 1)};
    o.pool = "other";
    auto t = task("t", 50, 100);
    t.resource_type = "reserved";
    t.pool = "mine";
    t.accept_idle = true;
    t.idle_stability = "medium";
    sc.tasks = {o, t};
    REQUIRE(run_rows(sc) == Rows{"o,1,Succeeded,0,0,100,a100.8x,a100-0,", "t,1,Succeeded,50,700,800,a100.8x,a100-0,"});
  }
}

}  // namespace SCHEDSIM_UNITY_ID
