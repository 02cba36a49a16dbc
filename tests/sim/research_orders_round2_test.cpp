// Research queue orders, round 2 (docs/scheduler.md "Research queue orders"): fair, the las
// starvation guard, gittins, qssf. Each
// scenario's start and end times are derived by hand in the comments; the rows are tasks.csv's
// first 9 columns (name, attempt, state, submit, start, end, spec, nodes, reason).
#include <catch2/catch.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace simtest;
using Rows = std::vector<std::string>;

namespace {

/// A whole-node task of `tenant`.
sim::io::TaskCfg tenant_task(const std::string& name, const std::string& tenant, double submit_s, double duration_s) {
  auto t = task(name, submit_s, duration_s);
  t.tenant = tenant;
  return t;
}

/// One 8-GPU node: a1 (tenant A, 0 s, 100 s) runs first; a2 (A, at 1 s, 100 s), b1 (B, at
/// 2 s, 50 s) and b2 (B, at 3 s, 100 s) wait for it.
sim::io::Scenario two_tenants(const std::string& order) {
  auto sc = cluster(1);
  sc.scheduler.queue_order = order;
  sc.tasks = {tenant_task("a1", "a", 0, 100), tenant_task("a2", "a", 1, 100), tenant_task("b1", "b", 2, 50),
              tenant_task("b2", "b", 3, 100)};
  return sc;
}

}  // namespace

TEST_CASE("fair: the tenant furthest below its share starts first (equal shares)") {
  // priority-fifo: submit order, a2 100-200 s, b1 200-250 s, b2 250-350 s.
  REQUIRE(run_rows(two_tenants("priority-fifo")) == Rows{
                                                        "a1,1,Succeeded,0,0,100,a100.8x,a100-0,",
                                                        "a2,1,Succeeded,1,100,200,a100.8x,a100-0,",
                                                        "b1,1,Succeeded,2,200,250,a100.8x,a100-0,",
                                                        "b2,1,Succeeded,3,250,350,a100.8x,a100-0,",
                                                    });
  // fair, shares 1 and 1: at 100 s A has attained 8 GPUs x 100 s = 800 GPU-s, B 0: b1 (B's
  // earliest) runs 100-150 s. At 150 s A 800 > B 8 x 50 = 400: b2 runs 150-250 s; a2 250-350 s.
  REQUIRE(run_rows(two_tenants("fair")) == Rows{
                                               "a1,1,Succeeded,0,0,100,a100.8x,a100-0,",
                                               "a2,1,Succeeded,1,250,350,a100.8x,a100-0,",
                                               "b1,1,Succeeded,2,100,150,a100.8x,a100-0,",
                                               "b2,1,Succeeded,3,150,250,a100.8x,a100-0,",
                                           });
}

TEST_CASE("fair: scheduler.fair_shares divides each tenant's attained service by its share") {
  // Shares a: 3, b: 1. At 100 s A has 800 / 3 = 266.7, B 0 / 1 = 0: b1 100-150 s. At 150 s A
  // 266.7 < B 400 / 1 = 400: the tenant below its share is A now, a2 runs 150-250 s, b2 250-350 s.
  auto sc = two_tenants("fair");
  sc.scheduler.fair_shares = {{"a", 3}, {"b", 1}};
  REQUIRE(run_rows(sc) == Rows{
                              "a1,1,Succeeded,0,0,100,a100.8x,a100-0,",
                              "a2,1,Succeeded,1,150,250,a100.8x,a100-0,",
                              "b1,1,Succeeded,2,100,150,a100.8x,a100-0,",
                              "b2,1,Succeeded,3,250,350,a100.8x,a100-0,",
                          });
  // A tenant not listed has share 1: {"a": 3} alone gives the same order.
  sc.scheduler.fair_shares = {{"a", 3}};
  CHECK(run_rows(sc)[1] == "a2,1,Succeeded,1,150,250,a100.8x,a100-0,");
}

TEST_CASE("fair: a tenant's attained service counts its running tasks up to now") {
  // Two 8-GPU nodes. a1 (A, 0 s, 200 s) runs 0-200 s; b1 (B, at 20 s, 100 s) 20-120 s. a2 (A,
  // at 25 s, 100 s) and b2 (B, at 30 s, 100 s) wait. At 120 s B has ended 8 x 100 = 800 GPU-s
  // and A's running a1 has 8 x 120 = 960: b2 (B below A) starts on the freed node 120-220 s,
  // a2 when a1 ends, 200-300 s. priority-fifo would start a2 at 120 s.
  auto sc = cluster(2);
  sc.scheduler.queue_order = "fair";
  sc.tasks = {tenant_task("a1", "a", 0, 200), tenant_task("b1", "b", 20, 100), tenant_task("a2", "a", 25, 100),
              tenant_task("b2", "b", 30, 100)};
  REQUIRE(run_rows(sc) == Rows{
                              "a1,1,Succeeded,0,0,200,a100.8x,a100-0,",
                              "b1,1,Succeeded,20,20,120,a100.8x,a100-1,",
                              "a2,1,Succeeded,25,200,300,a100.8x,a100-0,",
                              "b2,1,Succeeded,30,120,220,a100.8x,a100-1,",
                          });
  sc.scheduler.queue_order = "priority-fifo";
  CHECK(run_rows(sc)[2] == "a2,1,Succeeded,25,120,220,a100.8x,a100-1,");
}

namespace {

/// las with threshold 800 GPU-s on one 8-GPU node: a (0 s, 300 s) and b (at 50 s, 300 s), both
/// with a checkpoint every 10 s and one resubmission.
sim::io::Scenario starving(double starvation_s) {
  auto sc = cluster(1);
  sc.scheduler.queue_order = "las";
  sc.scheduler.las_thresholds_gpu_s = {800};
  sc.scheduler.las_starvation_s = starvation_s;
  auto a = task("a", 0, 300);
  auto b = task("b", 50, 300);
  for (auto* t : {&a, &b}) {
    t->checkpoint_interval_s = 10;
    t->fault_tolerance.max_resubmissions = 1;
  }
  sc.tasks = {a, b};
  return sc;
}

}  // namespace

TEST_CASE("las_starvation_s: a demoted job waiting that long is promoted to the first queue and preempts") {
  // a reaches 800 GPU-s at 100 s and b (first queue) preempts it: a saved 100 s, 200 s to do,
  // waits from 100 s in the second queue. Without the guard b runs 100-400 s (b is demoted at
  // 200 s, in a's queue then: no preemption) and a 400-600 s.
  REQUIRE(run_rows(starving(0)) == Rows{
                                       "a,1,Failed,0,0,100,a100.8x,a100-0,was preempted by another task: b (priority)",
                                       "a,2,Succeeded,100,400,600,a100.8x,a100-0,",
                                       "b,1,Succeeded,50,100,400,a100.8x,a100-0,",
                                   });
  // Guard 250 s: at 100 + 250 = 350 s (a wake-up, no other event) a is promoted (attained
  // service reset to 0, first queue); b has 8 x 250 = 2000 GPU-s (second queue), so a preempts
  // it (b saved 250 s, 50 s to do). a runs 350-550 s (demoted at 450 s, b waits in the same
  // queue: no preemption); b waits from 350 s, would be promoted at 600 s, runs 550-600 s.
  REQUIRE(run_rows(starving(250)) == Rows{
                                         "a,1,Failed,0,0,100,a100.8x,a100-0,was preempted by another task: b (priority)",
                                         "a,2,Succeeded,100,350,550,a100.8x,a100-0,",
                                         "b,1,Failed,50,100,350,a100.8x,a100-0,was preempted by another task: a (priority)",
                                         "b,2,Succeeded,350,550,600,a100.8x,a100-0,",
                                     });
}

TEST_CASE("las_starvation_s: a job in the first queue is never promoted, and a longer limit changes nothing") {
  // Guard 400 s: a would be promoted at 500 s, but b ends at 400 s and a starts then: same rows
  // as without the guard.
  REQUIRE(run_rows(starving(400)) == run_rows(starving(0)));
  // Two jobs that never leave the first queue (default threshold 3600 GPU-s): FIFO whatever the guard.
  auto sc = starving(10);
  sc.scheduler.las_thresholds_gpu_s = {3600};
  REQUIRE(run_rows(sc) == Rows{
                              "a,1,Succeeded,0,0,300,a100.8x,a100-0,",
                              "b,1,Succeeded,50,300,600,a100.8x,a100-0,",
                          });
}

TEST_CASE("gittins: within a queue the job with the highest Gittins index of the trace's service goes first") {
  // Threshold 800 GPU-s; the service distribution is the tasks' GPU-s: a 8 x 300 = 2400, h
  // 8 x 150 = 1200, b 8 x 25 = 200. a (priority 5, 0 s, 300 s, a checkpoint every 10 s) runs
  // 0-50 s; h (priority 9, 50 s, 150 s) preempts it (priority) and runs 50-200 s; a (400 GPU-s,
  // 250 s to do) and b (priority 5, at 60 s, 0 GPU-s) wait in the first queue.
  // b: a = 0, quantum 800: samples above 0 ending by 800: {200}; 1/G = (200 + 800 x 2) / 1 =
  // 1800 GPU-s. a: a = 400, quantum 400: no sample in (400, 800]: G = 0, last. So b runs
  // 200-225 s, a 225-475 s (demoted at 275 s, nobody waits).
  // las (FIFO in the queue): a 200-250 s, demoted at 250 s (800 GPU-s) and preempted by b (a
  // saved 50 s, 200 s to do): b 250-275 s, a 275-475 s.
  auto sc = cluster(1);
  sc.scheduler.queue_order = "las";
  sc.scheduler.las_thresholds_gpu_s = {800};
  auto a = task("a", 0, 300);
  a.checkpoint_interval_s = 10;
  a.fault_tolerance.max_resubmissions = 2;
  auto h = task("h", 50, 150);
  h.priority = 9;
  sc.tasks = {a, h, task("b", 60, 25)};
  REQUIRE(run_rows(sc) == Rows{
                              "a,1,Failed,0,0,50,a100.8x,a100-0,was preempted by another task: h (priority)",
                              "a,2,Failed,50,200,250,a100.8x,a100-0,was preempted by another task: b (priority)",
                              "a,3,Succeeded,250,275,475,a100.8x,a100-0,",
                              "h,1,Succeeded,50,50,200,a100.8x,a100-0,",
                              "b,1,Succeeded,60,250,275,a100.8x,a100-0,",
                          });
  sc.scheduler.queue_order = "gittins";
  REQUIRE(run_rows(sc) == Rows{
                              "a,1,Failed,0,0,50,a100.8x,a100-0,was preempted by another task: h (priority)",
                              "a,2,Succeeded,50,225,475,a100.8x,a100-0,",
                              "h,1,Succeeded,50,50,200,a100.8x,a100-0,",
                              "b,1,Succeeded,60,200,225,a100.8x,a100-0,",
                          });
}

TEST_CASE("gittins: the index of a tiny distribution, by hand") {
  // Samples {200, 1200, 2400} GPU-s, threshold 800. a = 0 (quantum 800): (200 + 800 x 2) / 1 =
  // 1800. a = 100 (quantum 700): (200 - 100 + 700 x 2) / 1 = 1500. a = 400 (quantum 400): none
  // ends, infinity. a = 1000 (last queue, no quantum): (1200 - 1000 + 2400 - 1000) / 2 = 800.
  // a = 3000: none above, infinity.
  libsched::plugins::Gittins g({800}, {2400, 200, 1200});
  CHECK(g.inverse_index(0) == 1800);
  CHECK(g.inverse_index(100) == 1500);
  CHECK(g.inverse_index(400) == std::numeric_limits<double>::infinity());
  CHECK(g.inverse_index(1000) == 800);
  CHECK(g.inverse_index(3000) == std::numeric_limits<double>::infinity());
  // Rank: ((0 - priority) x 64 + queue, 1000 / G, submit).
  libsched::TaskSpec s;
  s.priority = 5;
  s.submit = 7;
  s.attained_gpu_s = 1000;
  CHECK(g.rank(s, libsched::TaskId()) == libsched::Rank{-5 * 64 + 1, 800000, 7});
  CHECK_THROWS_AS(libsched::plugins::Gittins({800}, {-1}), libsched::InvalidArgument);
}

TEST_CASE("qssf: smallest predicted GPU-s first: own estimate, else the user's mean, else the default") {
  // One 8-GPU node, qssf_default_s 160. x (alice, 0 s, 100 s) runs 0-100 s. y (bob, at 5 s,
  // 200 s, estimate 150 s, 8 GPUs): 1200 GPU-s; w (carol, at 6 s, 10 s, 1 GPU, no estimate, no
  // history): 160 x 1 = 160 GPU-s. At 100 s w starts (100-110 s), y does not fit beside it:
  // 110-310 s. u (dave, at 140 s, 20 s, 8 GPUs): no history, 160 x 8 = 1280 GPU-s; z (alice,
  // at 150 s, 50 s): alice's x succeeded after 100 s, 100 x 8 = 800 GPU-s. At 310 s z before u
  // (submitted earlier): z 310-360 s, u 360-380 s.
  auto sc = cluster(1);
  sc.scheduler.queue_order = "qssf";
  sc.scheduler.qssf_default_s = 160;
  auto y = task("y", 5, 200);
  y.user = "bob";
  y.runtime_estimate_s = 150;
  auto w = task("w", 6, 10, 0, "a100.1x");
  w.user = "carol";
  auto u = task("u", 140, 20);
  u.user = "dave";
  sc.tasks = {task("x", 0, 100), y, w, task("z", 150, 50), u};
  REQUIRE(run_rows(sc) == Rows{
                              "x,1,Succeeded,0,0,100,a100.8x,a100-0,",
                              "y,1,Succeeded,5,110,310,a100.8x,a100-0,",
                              "w,1,Succeeded,6,100,110,a100.1x,a100-0,",
                              "z,1,Succeeded,150,310,360,a100.8x,a100-0,",
                              "u,1,Succeeded,140,360,380,a100.8x,a100-0,",
                          });
}

}  // namespace SCHEDSIM_UNITY_ID
