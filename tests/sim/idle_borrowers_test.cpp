// Reserved tasks that fell back to idle capacity (accept_idle) on the same node
// (docs/scheduler.md "Preemption"): idle capacity is preemptible by any task of strictly higher
// priority, so a higher-priority borrower displaces a lower one once and is never displaced
// back, and with equal priorities the later borrower waits.
#include <catch2/catch.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace simtest;
using Rows = std::vector<std::string>;

namespace {

/// A pool of `count` 8-GPU nodes of `model` named prefix0, prefix1, ...
sim::io::PoolCfg gpu_pool(const std::string& name, const std::string& prefix, int count, const std::string& model = "A100") {
  sim::io::PoolCfg p;
  p.name = name;
  p.kind = "dedicated";
  sim::io::NodeGroupCfg g;
  g.prefix = prefix;
  g.count = count;
  g.gpu_model = model;
  g.gpus = 8;
  g.vcpu = 96;
  g.memory_gib = 960;
  p.node_groups.push_back(g);
  return p;
}

/// Pool pa: node a0, held by ua's guaranteed task `g` for 5000 s (ua's reserved quota in pa:
/// 8 GPUs). Pool pb: node b0, idle. Pool pc: node c0 of another GPU model, where two
/// unrelated short tasks run at 50 s and 70 s (they only make the scheduler run again).
/// Borrowers `l` (submitted at 10 s, 500 s) and `h` (20 s, 1000 s) of ua: 1 x 8 GPU, reserved
/// in pa, accept_idle, max_resubmissions 3.
sim::io::Scenario borrowers(int l_priority, int h_priority) {
  auto sc = cluster(0);
  sc.cluster.instance_specs.push_back({"h800.8x", "H800", 8, 1000, 96, 960});
  sc.cluster.pools = {gpu_pool("pa", "a", 1), gpu_pool("pb", "b", 1), gpu_pool("pc", "c", 1, "H800")};
  sc.quotas.push_back({"ua", "reserved", "pa", 8, 96, 960});
  auto g = task("g", 0, 5000);
  g.user = "ua";
  g.resource_type = "reserved";
  g.pool = "pa";
  g.guarantee = true;
  g.guarantee_set = true;
  auto borrower = [](const std::string& name, double submit_s, double duration_s, int priority) {
    auto t = task(name, submit_s, duration_s);
    t.user = "ua";
    t.resource_type = "reserved";
    t.pool = "pa";
    t.priority = priority;
    t.priority_set = true;
    t.accept_idle = true;
    t.fault_tolerance.max_resubmissions = 3;
    return t;
  };
  auto other = [](const std::string& name, double submit_s) {
    auto t = task(name, submit_s, 5, 0, "h800.8x");
    t.user = "ub";
    t.pool = "pc";
    return t;
  };
  sc.tasks = {g, borrower("l", 10, 500, l_priority), borrower("h", 20, 1000, h_priority), other("x1", 50), other("x2", 70)};
  return sc;
}

}  // namespace

TEST_CASE("a higher-priority borrower of idle capacity displaces a lower one once and is never displaced back") {
  // h (8) reclaims b0 from l (2) at 20 s; the scheduler runs again at 50 s and 70 s, and l
  // (resubmitted at 20 s) may not evict h: it restarts when h ends at 1020 s.
  sim::Simulator s(borrowers(2, 8));
  s.run();
  REQUIRE(rows(s) == Rows{
                         "g,1,Succeeded,0,0,5000,a100.8x,a0,",
                         "l,1,Failed,10,10,20,a100.8x,b0,was preempted by another task: h (idle_reclaim)",
                         "l,2,Succeeded,20,1020,1520,a100.8x,b0,",
                         "h,1,Succeeded,20,20,1020,a100.8x,b0,",
                         "x1,1,Succeeded,50,50,55,h800.8x,c0,",
                         "x2,1,Succeeded,70,70,75,h800.8x,c0,",
                     });
  CHECK(s.preemptions() == 1);
}

TEST_CASE("with equal priorities the later borrower of idle capacity waits; it never evicts the earlier one") {
  sim::Simulator s(borrowers(5, 5));
  s.run();
  REQUIRE(rows(s) == Rows{
                         "g,1,Succeeded,0,0,5000,a100.8x,a0,",
                         "l,1,Succeeded,10,10,510,a100.8x,b0,",
                         "h,1,Succeeded,20,510,1510,a100.8x,b0,",
                         "x1,1,Succeeded,50,50,55,h800.8x,c0,",
                         "x2,1,Succeeded,70,70,75,h800.8x,c0,",
                     });
  CHECK(s.preemptions() == 0);
}

TEST_CASE("a lower-priority borrower of idle capacity never evicts a higher-priority one") {
  // l (8) borrows b0 first; h (2) waits for it.
  sim::Simulator s(borrowers(8, 2));
  s.run();
  REQUIRE(rows(s) == Rows{
                         "g,1,Succeeded,0,0,5000,a100.8x,a0,",
                         "l,1,Succeeded,10,10,510,a100.8x,b0,",
                         "h,1,Succeeded,20,510,1510,a100.8x,b0,",
                         "x1,1,Succeeded,50,50,55,h800.8x,c0,",
                         "x2,1,Succeeded,70,70,75,h800.8x,c0,",
                     });
  CHECK(s.preemptions() == 0);
}

TEST_CASE("an owner's task reclaims idle capacity from a borrower only with a strictly higher priority") {
  // ub's pay-as-you-go task o in pool pb needs b0, where l (priority 5) borrows it.
  auto sc = borrowers(5, 5);
  auto o = task("o", 100, 100);
  o.user = "ub";
  o.pool = "pb";
  sc.tasks = {sc.tasks[0], sc.tasks[1], o};
  SECTION("higher: reclaimed at once") {
    sc.tasks[2].priority = 6;
    sc.tasks[2].priority_set = true;
    REQUIRE(run_rows(sc) == Rows{
                                "g,1,Succeeded,0,0,5000,a100.8x,a0,",
                                "l,1,Failed,10,10,100,a100.8x,b0,was preempted by another task: o (idle_reclaim)",
                                "l,2,Succeeded,100,200,700,a100.8x,b0,",
                                "o,1,Succeeded,100,100,200,a100.8x,b0,",
                            });
  }
  SECTION("equal: the owner waits for the borrower to end") {
    REQUIRE(run_rows(sc) == Rows{
                                "g,1,Succeeded,0,0,5000,a100.8x,a0,",
                                "l,1,Succeeded,10,10,510,a100.8x,b0,",
                                "o,1,Succeeded,100,510,610,a100.8x,b0,",
                            });
  }
}

}  // namespace SCHEDSIM_UNITY_ID
