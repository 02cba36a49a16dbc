// Research queue orders (docs/scheduler.md "Research queue orders"): sjf, srtf and their
// estimate variants end to end. Each scenario's start and end times are derived by hand in the
// comments; the rows are tasks.csv's first 9 columns (name, attempt, state, submit, start, end,
// spec, nodes, reason).
#include <catch2/catch.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace simtest;
using Rows = std::vector<std::string>;

namespace {

/// One 8-GPU node; whole-node tasks of one user at priority 5: l (0 s, 1000 s, a checkpoint
/// every 60 s, one resubmission), s (100 s, 200 s) and m (500 s, 800 s).
sim::io::Scenario long_short_medium(const std::string& order) {
  auto sc = cluster(1);
  sc.scheduler.queue_order = order;
  auto l = task("l", 0, 1000);
  l.checkpoint_interval_s = 60;
  l.fault_tolerance.max_resubmissions = 1;
  sc.tasks = {l, task("s", 100, 200), task("m", 500, 800)};
  return sc;
}

}  // namespace

TEST_CASE("srtf: a short task preempts a long one whose remaining time is longer, and only then") {
  // At 100 s l has 1000 - 100 = 900 s left > s's 200 s: s preempts l (l saved 60 s of work).
  // s runs 100-300 s; l (resubmitted at 100 s, 1000 - 60 = 940 s left) restarts at 300 s and
  // ends at 1240 s. At 500 s l has 940 - 200 = 740 s left < m's 800 s: m waits, 1240-2040 s.
  auto rows = run_rows(long_short_medium("srtf"));
  REQUIRE(rows == Rows{
                      "l,1,Failed,0,0,100,a100.8x,a100-0,was preempted by another task: s (priority)",
                      "l,2,Succeeded,100,300,1240,a100.8x,a100-0,",
                      "s,1,Succeeded,100,100,300,a100.8x,a100-0,",
                      "m,1,Succeeded,500,1240,2040,a100.8x,a100-0,",
                  });
}

TEST_CASE("sjf: the shortest waiting task starts first and never preempts") {
  // Same scenario: l runs 0-1000 s undisturbed; at 1000 s s (200 s) goes before m (800 s).
  auto rows = run_rows(long_short_medium("sjf"));
  REQUIRE(rows == Rows{
                      "l,1,Succeeded,0,0,1000,a100.8x,a100-0,",
                      "s,1,Succeeded,100,1000,1200,a100.8x,a100-0,",
                      "m,1,Succeeded,500,1200,2000,a100.8x,a100-0,",
                  });
}

TEST_CASE("sjf: a later, shorter task overtakes an earlier one that priority-fifo starts first") {
  // a runs 0-100 s; b (300 s, at 10 s) and c (50 s, at 20 s) wait. priority-fifo: b 100-400 s,
  // c 400-450 s; sjf: c 100-150 s, b 150-450 s.
  auto sc = cluster(1);
  sc.tasks = {task("a", 0, 100), task("b", 10, 300), task("c", 20, 50)};
  REQUIRE(run_rows(sc) == Rows{
                              "a,1,Succeeded,0,0,100,a100.8x,a100-0,",
                              "b,1,Succeeded,10,100,400,a100.8x,a100-0,",
                              "c,1,Succeeded,20,400,450,a100.8x,a100-0,",
                          });
  sc.scheduler.queue_order = "sjf";
  REQUIRE(run_rows(sc) == Rows{
                              "a,1,Succeeded,0,0,100,a100.8x,a100-0,",
                              "b,1,Succeeded,10,150,450,a100.8x,a100-0,",
                              "c,1,Succeeded,20,100,150,a100.8x,a100-0,",
                          });
}

namespace {

/// The estimate variants: l (0 s, 1000 s, estimate 2000 s, a checkpoint every 60 s, one
/// resubmission), m (50 s, 800 s, no estimate) and s (100 s, 200 s, estimate `s_estimate_s`).
sim::io::Scenario with_estimates(const std::string& order, double s_estimate_s) {
  auto sc = cluster(1);
  sc.scheduler.queue_order = order;
  auto l = task("l", 0, 1000);
  l.checkpoint_interval_s = 60;
  l.fault_tolerance.max_resubmissions = 1;
  l.runtime_estimate_s = 2000;
  auto s = task("s", 100, 200);
  s.runtime_estimate_s = s_estimate_s;
  sc.tasks = {l, task("m", 50, 800), s};
  return sc;
}

}  // namespace

TEST_CASE("sjf-estimate: tasks without an estimate go after every task with one") {
  // l runs 0-1000 s; then s (estimate 300 s) before m (none, although submitted earlier).
  REQUIRE(run_rows(with_estimates("sjf-estimate", 300)) == Rows{
                                                                "l,1,Succeeded,0,0,1000,a100.8x,a100-0,",
                                                                "m,1,Succeeded,50,1200,2000,a100.8x,a100-0,",
                                                                "s,1,Succeeded,100,1000,1200,a100.8x,a100-0,",
                                                            });
}

TEST_CASE("srtf-estimate: preemption compares estimated remaining times") {
  SECTION("s's estimate is shorter than l's estimated remaining time: s preempts l") {
    // m (no estimate) preempts nothing at 50 s. At 100 s l's estimate has 2000 - 100 = 1900 s
    // left > 300 s: s preempts l (60 s saved) and runs 100-300 s. Then l (estimate 1940 s)
    // before m (none): l's 940 s left run 300-1240 s, m 1240-2040 s.
    REQUIRE(run_rows(with_estimates("srtf-estimate", 300)) ==
            Rows{
                "l,1,Failed,0,0,100,a100.8x,a100-0,was preempted by another task: s (priority)",
                "l,2,Succeeded,100,300,1240,a100.8x,a100-0,",
                "m,1,Succeeded,50,1240,2040,a100.8x,a100-0,",
                "s,1,Succeeded,100,100,300,a100.8x,a100-0,",
            });
  }
  SECTION("s's estimate (1950 s) exceeds l's estimated remaining time (1900 s): no preemption") {
    REQUIRE(run_rows(with_estimates("srtf-estimate", 1950)) == Rows{
                                                                   "l,1,Succeeded,0,0,1000,a100.8x,a100-0,",
                                                                   "m,1,Succeeded,50,1200,2000,a100.8x,a100-0,",
                                                                   "s,1,Succeeded,100,1000,1200,a100.8x,a100-0,",
                                                               });
  }
}

TEST_CASE("srtf: priority still dominates; a shorter task of lower priority does not preempt") {
  // l (priority 5, 1000 s) runs from 0 s; s (priority 3, 200 s) at 100 s waits for it.
  auto sc = long_short_medium("srtf");
  sc.tasks[1].priority = 3;
  sc.tasks.pop_back();
  REQUIRE(run_rows(sc) == Rows{
                              "l,1,Succeeded,0,0,1000,a100.8x,a100-0,",
                              "s,1,Succeeded,100,1000,1200,a100.8x,a100-0,",
                          });
}

TEST_CASE("las: a job is demoted past its threshold and a job of the first queue preempts it") {
  // Threshold 800 GPU-s: a (8 GPUs, 300 s, a checkpoint every 10 s) reaches it at 100 s. b
  // (at 50 s) waits behind a while both are in the first queue (a has 400 GPU-s at 50 s); at
  // 100 s (a wake-up, no other event) a is demoted and b preempts it: a saved 100 s, has
  // 800 GPU-s (second queue) and 200 s to do. b runs 100-200 s, a 200-400 s.
  auto sc = cluster(1);
  sc.scheduler.queue_order = "las";
  sc.scheduler.las_thresholds_gpu_s = {800};
  auto a = task("a", 0, 300);
  a.checkpoint_interval_s = 10;
  a.fault_tolerance.max_resubmissions = 1;
  sc.tasks = {a, task("b", 50, 100)};
  REQUIRE(run_rows(sc) == Rows{
                              "a,1,Failed,0,0,100,a100.8x,a100-0,was preempted by another task: b (priority)",
                              "a,2,Succeeded,100,200,400,a100.8x,a100-0,",
                              "b,1,Succeeded,50,100,200,a100.8x,a100-0,",
                          });
  // With the default threshold (3600 GPU-s = 450 s on 8 GPUs) a never reaches it: FIFO.
  sc.scheduler.las_thresholds_gpu_s = {3600};
  REQUIRE(run_rows(sc) == Rows{
                              "a,1,Succeeded,0,0,300,a100.8x,a100-0,",
                              "b,1,Succeeded,50,300,400,a100.8x,a100-0,",
                          });
}

TEST_CASE("las: a job with less attained service goes first, FIFO within a queue") {
  // Threshold 800 GPU-s. a (8 GPUs, 150 s, checkpoint every 10 s) is demoted at 100 s by b
  // (at 50 s, 100 s long) and waits in the second queue; c (at 150 s, 50 s) arrives in the
  // first queue while b runs and starts before a when b ends at 200 s: c 200-250 s, a's
  // remaining 50 s 250-300 s.
  auto sc = cluster(1);
  sc.scheduler.queue_order = "las";
  sc.scheduler.las_thresholds_gpu_s = {800};
  auto a = task("a", 0, 150);
  a.checkpoint_interval_s = 10;
  a.fault_tolerance.max_resubmissions = 1;
  sc.tasks = {a, task("b", 50, 100), task("c", 150, 50)};
  REQUIRE(run_rows(sc) == Rows{
                              "a,1,Failed,0,0,100,a100.8x,a100-0,was preempted by another task: b (priority)",
                              "a,2,Succeeded,100,250,300,a100.8x,a100-0,",
                              "b,1,Succeeded,50,100,200,a100.8x,a100-0,",
                              "c,1,Succeeded,150,200,250,a100.8x,a100-0,",
                          });
}

}  // namespace SCHEDSIM_UNITY_ID
