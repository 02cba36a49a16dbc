// Compact runs (SimOptions::keep_ended_tasks false, issue 38): memory proportional to the tasks
// live at once. A task is registered with libsched at its first submission and forgotten when it
// ends for good; its attempt records are folded into the totals summary.json and groups.csv need.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "builders.hpp"
#include "sim/cli/run_cli.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/io/resolve.hpp"

#include "tests/common/files.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace simtest;

namespace {

sim::SimOptions compact_options() {
  sim::SimOptions o;
  o.keep_ended_tasks = false;
  return o;
}

/// Three whole-node tasks on one node, each ending before the next is submitted (no preemption:
/// compact runs need a scenario where no task can be a victim).
sim::io::Scenario one_after_another() {
  auto sc = cluster(1);
  sc.scheduler.preemption = false;
  sc.tasks.push_back(task("t0", 0, 10));
  sc.tasks.push_back(task("t1", 20, 10));
  sc.tasks.push_back(task("t2", 40, 10));
  return sc;
}

/// 40 tasks of two users on 3 nodes, whole-node and gangs of 2, arriving over 400 s with
/// durations of 50-400 s (a queue forms), priorities 4-6; no preemption, spot, idle capacity or
/// resubmission: a scenario a compact run takes.
sim::io::Scenario no_victims(const std::string& queueing) {
  auto sc = cluster(3);
  sc.scheduler.preemption = false;
  sc.scheduler.queueing = queueing;
  for (int i = 0; i < 40; ++i) {
    auto t = task("t" + std::to_string(i), double((i * 37) % 400), double(50 + (i * 53) % 350), i % 3 == 0 ? 1 : 0);
    t.user = i % 2 ? "bob" : "alice";
    t.priority = 4 + i % 3;
    t.runtime_estimate_s = 2 * t.duration_s + 1;
    sc.tasks.push_back(t);
  }
  return sc;
}

}  // namespace

TEST_CASE("compact run: a task that ended for good leaves libsched's table, its id is reused", "[compact]") {
  sim::Simulator full(one_after_another());
  full.run();
  CHECK_FALSE(full.compact());
  CHECK(full.scheduler().task_count() == 3);
  CHECK(full.attempts().size() == 3);

  sim::Simulator s(one_after_another(), compact_options());
  s.run();
  REQUIRE(s.compact());
  CHECK(s.scheduler().task_count() == 1);  // t1 and t2 took t0's id in turn
  CHECK(s.attempts().empty());             // every task ended: its attempt folded
  for (std::size_t i = 0; i < 3; ++i) CHECK(s.attempt_count(i) == 1);
  CHECK(s.task_name(2) == "t2");
  CHECK_THROWS_AS(s.task_spec(0), libsched::UnknownTask);
  auto j = nlohmann::json::parse(s.summary_json());
  CHECK(j["tasks"] == 3);
  CHECK(j["attempts"] == 3);
  CHECK(j["succeeded"] == 3);
  CHECK(j["mean_wait_s"] == 0);
  CHECK(j["groups"]["user"]["alice"]["gpu_seconds"] == 3 * 8 * 10);  // 3 tasks x 8 GPUs x 10 s
}

TEST_CASE("compact run: where task ids could break a tie otherwise, every task is kept", "[compact]") {
  // A compact run numbers tasks in submission order and reuses ended tasks' ids; libsched breaks
  // ties between equal victim or queue ranks by id, so once ids are reused the two runs could
  // pick different victims. Here v2 (bob, listed first) and v1 (alice) run since 5 s with equal
  // ranks when pre (priority 9) arrives at 100 s: the full run evicts v2 (scenario index 0).
  // Scenarios where a task can be a victim, or be resubmitted or retried, keep every task.
  auto victims = [] {
    auto sc = cluster(2);
    auto v2 = task("v2", 5, 5000);
    v2.user = "bob";
    sc.tasks = {v2, task("v1", 5, 3000), task("pre", 100, 500)};
    sc.tasks[2].priority = 9;
    return sc;
  };
  {
    sim::Simulator s(victims(), compact_options());
    CHECK_FALSE(s.compact());  // priority preemption on
  }
  auto quiet = one_after_another();
  auto check_kept = [](sim::io::Scenario sc) {
    sim::Simulator s(sc, compact_options());
    return !s.compact();
  };
  auto with = [&](auto change) {
    auto sc = quiet;
    change(sc);
    return check_kept(sc);
  };
  CHECK_FALSE(check_kept(quiet));  // the quiet scenario itself is taken
  CHECK(with([](sim::io::Scenario& sc) { sc.scheduler.queue_order = "srtf"; }));
  CHECK(with([](sim::io::Scenario& sc) { sc.scheduler.queue_order = "las"; }));
  CHECK(with([](sim::io::Scenario& sc) { sc.tasks[1].resource_type = "spot"; }));
  CHECK(with([](sim::io::Scenario& sc) {
    sc.tasks[1].resource_type = "reserved";  // a reserved task that may borrow idle capacity
    sc.tasks[1].pool = "p";
    sc.tasks[1].accept_idle = true;
  }));
  CHECK(with([](sim::io::Scenario& sc) { sc.tasks[1].fault_tolerance.max_resubmissions = 1; }));
  CHECK(with([](sim::io::Scenario& sc) { sc.tasks[1].image_pull_retries = 2; }));
  // The full run, as run_command makes it for --outputs summary: v2 is the victim (95 s run).
  sim::Simulator full(victims());
  full.run();
  auto j = nlohmann::json::parse(full.summary_json());
  CHECK(j["preemptions"] == 1);
  CHECK(full.task_metrics(0).gpu_ms == 8000.0L * 95000);   // v2: 8 GPUs x 95 s, then evicted
  CHECK(full.task_metrics(1).gpu_ms == 8000.0L * 3000000);  // v1: its whole 3,000 s
}

TEST_CASE("compact run: summary.json and groups.csv are those of a run that keeps every task", "[compact]") {
  // A queue of gangs and whole-node tasks under each queueing mode (estimates for backfill).
  for (const char* queueing : {"greedy", "strict", "backfill"}) {
    CAPTURE(queueing);
    auto sc = no_victims(queueing);
    sim::Simulator full(sc);
    full.run();
    sim::Simulator s(sc, compact_options());
    s.run();
    REQUIRE(s.compact());
    CHECK(s.scheduler().task_count() < full.scheduler().task_count());
    CHECK(s.summary_json() == full.summary_json());
    CHECK(s.groups_csv() == full.groups_csv());
    CHECK(s.unfinished_warning() == full.unfinished_warning());
  }
}

TEST_CASE("compact run: outputs that list attempts or name ended tasks are refused", "[compact]") {
  sim::Simulator s(one_after_another(), compact_options());
  s.run();
  for (sim::Output o : {sim::Output::tasks, sim::Output::events, sim::Output::metrics, sim::Output::timeline}) {
    auto which = sim::OutputSelection::none();
    which.set(o);
    CHECK_THROWS_AS(s.write_outputs("/nonexistent", which), std::logic_error);
  }
  CHECK_THROWS_AS(s.decide_snapshot(100000), std::logic_error);
}

TEST_CASE("compact run: prices or a measurement window keep every task", "[compact]") {
  SECTION("prices") {
    auto sc = one_after_another();
    sc.prices.emplace();
    sim::Simulator s(sc, compact_options());
    CHECK_FALSE(s.compact());
  }
  SECTION("measurement window") {
    auto sc = one_after_another();
    sc.measure = sim::io::MeasureCfg{0, 100};
    sim::Simulator s(sc, compact_options());
    CHECK_FALSE(s.compact());
  }
}

TEST_CASE("compact run: schedsim run --outputs summary,groups writes the files --outputs all writes", "[compact]") {
  // run_command keeps every task only when an output lists attempts or names tasks; the summary
  // files of both runs are the same bytes (and so is what the run prints on stderr).
  namespace fs = std::filesystem;
  auto sc = no_victims("backfill");
  const fs::path base = fs::temp_directory_path() / ("schedsim-test-compact-" + std::to_string(::getpid()));
  fs::remove_all(base);
  sim::RunOptions all{(base / "all").string(), std::nullopt, std::nullopt, false};
  all.outputs = sim::OutputSelection::all();
  sim::RunOptions some{(base / "some").string(), std::nullopt, std::nullopt, false};
  some.outputs = sim::OutputSelection::none();
  some.outputs.set(sim::Output::summary);
  some.outputs.set(sim::Output::groups);
  std::ostringstream out_all, err_all, out_some, err_some;
  REQUIRE(sim::run_command(sc, all, out_all, err_all) == 0);
  REQUIRE(sim::run_command(sc, some, out_some, err_some) == 0);
  CHECK(testutil::slurp(base / "some" / "summary.json") == testutil::slurp(base / "all" / "summary.json"));
  CHECK(testutil::slurp(base / "some" / "groups.csv") == testutil::slurp(base / "all" / "groups.csv"));
  CHECK_FALSE(fs::exists(base / "some" / "tasks.csv"));
  CHECK(err_some.str() == err_all.str());
  fs::remove_all(base);
}

}  // namespace SCHEDSIM_UNITY_ID
