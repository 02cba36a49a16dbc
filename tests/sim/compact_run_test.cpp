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

/// Three whole-node tasks on one node, each ending before the next is submitted.
sim::io::Scenario one_after_another() {
  auto sc = cluster(1);
  sc.tasks.push_back(task("t0", 0, 10));
  sc.tasks.push_back(task("t1", 20, 10));
  sc.tasks.push_back(task("t2", 40, 10));
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

TEST_CASE("compact run: a resubmitted task's folded metrics are its attempts' sums", "[compact]") {
  // a starts at 0, fails at 30 (transient, retried from scratch: no checkpoint) and restarts
  // at 30 ahead of b (same rank and submit, name order); b waits until a ends at 130.
  auto sc = cluster(1);
  auto a = task("a", 0, 100);
  a.fault_tolerance.max_resubmissions = 1;
  sc.tasks.push_back(a);
  sc.tasks.push_back(task("b", 0, 50));
  sc.events.push_back(fault(30, "a", "transient"));
  sim::Simulator s(sc, compact_options());
  s.run();
  REQUIRE(s.compact());
  CHECK(s.attempt_count(0) == 2);
  CHECK(s.attempt_count(1) == 1);
  auto m = s.task_metrics(0);
  CHECK(m.wait == 0);
  CHECK(m.gpu_ms == 8000.0L * 30000 + 8000.0L * 100000);
  CHECK(m.capacity == "pay_as_you_go");
  CHECK(m.gpu_model == "A100");
  CHECK(m.pool == "p");
  CHECK(s.task_metrics(1).wait == 130000);
  auto j = nlohmann::json::parse(s.summary_json());
  CHECK(j["attempts"] == 3);
  CHECK(j["resubmissions"] == 1);
  CHECK(j["mean_wait_s"] == 65);  // (0 + 130) / 2
  CHECK(j["groups"]["user"]["alice"]["gpu_seconds"] == 8 * 30 + 8 * 100 + 8 * 50);
  sim::Simulator full(sc);
  full.run();
  CHECK(s.summary_json() == full.summary_json());
}

TEST_CASE("compact run: summary.json and groups.csv are those of a run that keeps every task", "[compact]") {
  // The default scenario (preemption, faults, resubmissions, node policies, autoscaling) under
  // each queueing mode; its prices and measurement window would make the run keep everything.
  for (const char* queueing : {"greedy", "strict", "backfill"}) {
    CAPTURE(queueing);
    auto sc = sim::default_scenario(3);
    sc.prices.reset();
    sc.measure.reset();
    sc.scheduler.queueing = queueing;
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
  auto sc = sim::default_scenario(5);
  sc.prices.reset();
  sc.measure.reset();
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
