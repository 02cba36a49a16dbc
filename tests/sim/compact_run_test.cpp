// Compact runs (SimOptions::keep_ended_tasks false, issue 38): memory proportional to the tasks
// live at once. A task is registered with libsched at its first submission and forgotten when it
// ends for good; its attempt records are folded into the totals summary.json and groups.csv need.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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
  sc.scheduler.preemption = false;
  sc.tasks.push_back(task("t0", 0, 10));
  sc.tasks.push_back(task("t1", 20, 10));
  sc.tasks.push_back(task("t2", 40, 10));
  return sc;
}

/// 40 tasks of two users on 3 nodes, whole-node and gangs of 2, arriving over 400 s with
/// durations of 50-400 s (a queue forms), priorities 4-6; no preemption, spot, idle capacity or
/// resubmission.
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

namespace {

/// Victim ties whose task ids a compact run hands out in the reverse of a full run's. 3 nodes:
/// hold (2 nodes, 20 s) and short (1 node, 10 s) start at 0; v1 (2 nodes, 5,000 s) is submitted
/// at 5 and starts at 20 when hold ends; v2 (1 node, 3,000 s) is submitted at 15 and starts at
/// once on short's node. A full run numbers them 2 and 3; a compact run gives v1 id 2 and v2
/// short's id 1 (short ended at 10). Both checkpoint every 5 s. At 1,000 pre (1 node) needs a
/// victim: v1 and v2 rank equal (class `cls`, priority 5, 0 s lost since the last checkpoint),
/// the tie goes to v1, listed first. `pre_cls` / `pre_priority`: what makes them its victims.
sim::io::Scenario victim_tie(const std::string& cls, const std::string& pre_cls, int pre_priority) {
  auto sc = cluster(3);
  sc.scheduler.preemption = true;
  sc.tasks.push_back(task("hold", 0, 20, 1));
  sc.tasks.back().user = "u0";
  sc.tasks.push_back(task("short", 0, 10));
  sc.tasks.back().user = "u0";
  sc.tasks.push_back(task("v1", 5, 5000, 1));
  sc.tasks.push_back(task("v2", 15, 3000));
  sc.tasks.back().user = "bob";
  for (std::size_t i : {2, 3}) {
    sc.tasks[i].resource_type = cls;
    sc.tasks[i].fault_tolerance.max_resubmissions = 3;
    sc.tasks[i].checkpoint_interval_s = 5;
  }
  sc.tasks.push_back(task("pre", 1000, 500));
  sc.tasks.back().user = "carol";
  sc.tasks.back().resource_type = pre_cls;
  sc.tasks.back().priority = pre_priority;
  if (pre_cls == "reserved") sc.quotas.push_back({"carol", "reserved", "p", 8, 1000, 10000});
  return sc;
}

/// Runs `sc` as `schedsim run --outputs summary,groups,timeseries` and `--outputs all`
/// (run_command: compact, then every task kept); each of summary.json, groups.csv and
/// timeseries.csv as (compact file, full file).
std::vector<std::pair<std::string, std::string>> compact_and_full_files(const sim::io::Scenario& sc) {
  namespace fs = std::filesystem;
  const fs::path base = fs::temp_directory_path() / ("schedsim-test-compact-ties-" + std::to_string(::getpid()));
  fs::remove_all(base);
  sim::RunOptions all{(base / "all").string(), std::nullopt, std::nullopt, false};
  all.outputs = sim::OutputSelection::all();
  sim::RunOptions some{(base / "some").string(), std::nullopt, std::nullopt, false};
  some.outputs = sim::OutputSelection::none();
  for (sim::Output o : {sim::Output::summary, sim::Output::groups, sim::Output::timeseries}) some.outputs.set(o);
  std::ostringstream out_all, err_all, out_some, err_some;
  if (sim::run_command(sc, some, out_some, err_some) != 0 || sim::run_command(sc, all, out_all, err_all) != 0)
    throw std::runtime_error("compact_and_full_files: a run failed: " + err_some.str() + err_all.str());
  std::vector<std::pair<std::string, std::string>> files;
  for (const char* f : {"summary.json", "groups.csv", "timeseries.csv"})
    files.emplace_back(testutil::slurp(base / "some" / f), testutil::slurp(base / "all" / f));
  fs::remove_all(base);
  return files;
}

}  // namespace

TEST_CASE("compact run: equal victim ranks go to the task listed first, as when every task is kept", "[compact]") {
  // v1 (listed before v2) is the victim in both runs although the compact run gave v2 the
  // smaller id: preempted after 980 s on 16 GPUs (all saved), resubmitted, it waits for pre's
  // node and runs its remaining 4,020 s from 1,500 s; v2 runs its 3,000 s undisturbed. (With
  // v2 the victim, v1 would have one attempt and v2 two.)
  struct Case {
    const char* cls;
    const char* pre_cls;
    int pre_priority;
  };
  for (Case c : {Case{"pay_as_you_go", "pay_as_you_go", 9}, Case{"spot", "pay_as_you_go", 1}}) {
    CAPTURE(c.cls);
    const auto sc = victim_tie(c.cls, c.pre_cls, c.pre_priority);
    sim::Simulator full(sc);
    full.run();
    sim::Simulator s(sc, compact_options());
    s.run();
    REQUIRE(s.compact());
    for (const sim::Simulator* r : {&full, &s}) {
      auto j = nlohmann::json::parse(r->summary_json());
      CHECK(j["preemptions"] == 1);
      CHECK(r->attempt_count(2) == 2);
      CHECK(r->attempt_count(3) == 1);
      CHECK(r->task_metrics(2).gpu_ms == 16000.0L * (980000 + 4020000));  // v1: 980 s, then 4,020 s
      CHECK(r->task_metrics(3).gpu_ms == 8000.0L * 3000000);              // v2: its 3,000 s
    }
    CHECK(s.summary_json() == full.summary_json());
    CHECK(s.groups_csv() == full.groups_csv());
  }
}

TEST_CASE("compact run: victims, spot and idle tasks, resubmissions and retries give a full run's files", "[compact]") {
  // Each scenario is compact now, and summary.json, groups.csv and timeseries.csv of
  // `--outputs summary,groups,timeseries` are the bytes of `--outputs all`.
  std::vector<std::pair<std::string, sim::io::Scenario>> cases;
  cases.emplace_back("priority preemption", victim_tie("pay_as_you_go", "pay_as_you_go", 9));
  cases.emplace_back("spot victims", victim_tie("spot", "pay_as_you_go", 1));
  cases.emplace_back("idle victims", victim_tie("idle", "reserved", 3));
  for (const char* order : {"srtf", "las", "sjf", "qssf", "fair"}) {
    auto sc = victim_tie("pay_as_you_go", "pay_as_you_go", 5);
    sc.scheduler.queue_order = order;
    if (std::string(order) == "las") sc.scheduler.las_thresholds_gpu_s = {100, 3600};
    cases.emplace_back(std::string("queue order ") + order, sc);
  }
  {
    auto sc = victim_tie("pay_as_you_go", "pay_as_you_go", 9);
    for (auto& t : sc.tasks) {  // image pulls failing half the time, retried once
      t.image_pull_s = 30;
      t.image_pull_failure_prob = 0.5;
      t.image_pull_retries = 1;
    }
    cases.emplace_back("image pull retries", sc);
  }
  for (const char* queueing : {"greedy", "strict", "backfill"}) {
    auto sc = no_victims(queueing);  // now with victims: preemption, spot tasks, borrowers of idle capacity
    sc.scheduler.preemption = true;
    sc.quotas.push_back({"alice", "reserved", "p", 16, 100000, 100000});
    for (std::size_t i = 0; i < sc.tasks.size(); ++i) {
      auto& t = sc.tasks[i];
      t.submit_s = double(((39 - i) * 37) % 400);  // submitted in the reverse of scenario order
      t.fault_tolerance.max_resubmissions = 2;
      if (i % 5 == 1) t.resource_type = "spot";
      if (i % 5 == 2 && t.user == "alice") {
        t.resource_type = "reserved";
        t.accept_idle = true;
      }
      if (i % 5 == 3) {
        t.resource_type = "idle";
        t.priority_set = false;
        t.priority = 5;
      }
    }
    cases.emplace_back(std::string("mixed, ") + queueing, sc);
  }
  for (const auto& [name, sc] : cases) {
    CAPTURE(name);
    sim::Simulator s(sc, compact_options());
    CHECK(s.compact());
    for (const auto& [compact, full] : compact_and_full_files(sc)) CHECK(compact == full);
  }
}

TEST_CASE("compact run: a custom plugin registry keeps every task", "[compact]") {
  // Its plugins are given libsched's task ids (rank(spec, id), VictimCandidate::id), which a
  // compact run hands out otherwise than a full run.
  const libsched::Registry custom = libsched::Registry::builtin();
  sim::SimOptions o = compact_options();
  o.registry = &custom;
  sim::Simulator s(one_after_another(), o);
  CHECK_FALSE(s.compact());
  o.registry = &libsched::Registry::builtin();
  sim::Simulator b(one_after_another(), o);
  CHECK(b.compact());
}

TEST_CASE("placements(): the attempts started, counted alike in a compact and a full run", "[compact]") {
  // A victim's attempt and its resubmission are two placements; an attempt never started is none.
  for (const auto& sc : {victim_tie("pay_as_you_go", "pay_as_you_go", 9), no_victims("backfill"), one_after_another()}) {
    sim::Simulator full(sc);
    full.run();
    std::uint64_t started = 0;
    for (const auto* a : full.attempts()) started += a->start >= 0;
    CHECK(started > 0);
    CHECK(full.placements() == started);
    sim::Simulator s(sc, compact_options());
    s.run();
    REQUIRE(s.compact());
    CHECK(s.placements() == started);
  }
  auto sc = victim_tie("pay_as_you_go", "pay_as_you_go", 9);
  sim::Simulator s(sc);
  s.run();
  CHECK(s.preemptions() > 0);
  CHECK(s.placements() > sc.tasks.size());  // the victim started twice
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

TEST_CASE("the unfinished warning counts the unfinished tasks that never started, compact or not", "[compact]") {
  // One node: `a` runs past the cut, `b` waits behind it, `c` ran and ended before it.
  auto sc = cluster(1);
  sc.scheduler.preemption = false;
  sc.tasks.push_back(task("c", 0, 10));
  sc.tasks.push_back(task("a", 20, 1000));
  sc.tasks.push_back(task("b", 30, 100));
  sc.until_s = 500;
  for (const bool compact : {false, true}) {
    CAPTURE(compact);
    sim::SimOptions o;
    o.keep_ended_tasks = !compact;
    sim::Simulator s(sc, o);
    s.run();
    REQUIRE(s.compact() == compact);
    CHECK(s.unfinished_warning() ==
          "schedsim: warning: 2 tasks unfinished at the end of the run (1 never started); their waits are censored at 500 s\n");
  }
}

TEST_CASE("exact_int64 takes exactly the long doubles an int64_t holds", "[compact]") {
  using sim::detail::exact_int64;
  CHECK(exact_int64(0.0L) == 0);
  CHECK(exact_int64(-5.0L) == -5);
  CHECK(exact_int64(9223372036854775808.0L) == std::nullopt);  // 2^63: too large
  CHECK(exact_int64(9223372036854775808.0L - 1024.0L) == std::int64_t{9223372036854774784});
  if (std::numeric_limits<long double>::digits >= 64)  // x87: every int64_t is a long double
    CHECK(exact_int64(9223372036854775807.0L) == std::numeric_limits<std::int64_t>::max());
  CHECK(exact_int64(-9223372036854775808.0L) == std::nullopt);  // kept for FoldedTotals::kWide
  CHECK(exact_int64(-9223372036854775807.0L) == -9223372036854775807LL);
  CHECK(exact_int64(1e20L) == std::nullopt);
  CHECK(exact_int64(0.5L) == std::nullopt);
  CHECK(exact_int64(-0.0L) == std::nullopt);
  CHECK(exact_int64(std::numeric_limits<long double>::quiet_NaN()) == std::nullopt);
  CHECK(exact_int64(std::numeric_limits<long double>::infinity()) == std::nullopt);
}

TEST_CASE("compact run: vCPU-ms past 2^63 are folded whole, the summary is a full run's", "[compact]") {
  // A node of 10^8 vCPU held for 10^6 s: 10^11 milli-vCPU x 10^9 ms = 10^20 milli-vCPU-ms, more
  // than an int64_t holds (the folded totals keep it aside); a small task beside it folds as
  // integers.
  auto sc = cluster(1);
  sc.cluster.instance_specs.push_back({"huge", "A100", 8, 1000, 1e8, 960});
  sc.cluster.pools[0].node_groups[0].vcpu = 1e8;
  sc.scheduler.preemption = false;
  sc.tasks.push_back(task("small", 0, 10));
  sc.tasks.push_back(task("wide", 20, 1e6, 0, "huge"));
  sim::Simulator full(sc);
  full.run();
  sim::Simulator s(sc, compact_options());
  s.run();
  REQUIRE(s.compact());
  const auto j = nlohmann::json::parse(s.summary_json());
  CHECK(j["succeeded"] == 2);
  CHECK(s.summary_json() == full.summary_json());
  CHECK(s.groups_csv() == full.groups_csv());
  CHECK(s.groups_csv().find("100000000000960") != std::string::npos);  // vcpu_seconds: 10^14 + 960
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

TEST_CASE("compact run: a task refused by check_task is reported, also when an earlier task shares its profile", "[compact]") {
  // The template of a profile is checked with its first task; a later task of the profile with
  // a bad runtime estimate (the one value of the check that differs by task) is still refused
  // by name before simulating, as a full run refuses it.
  auto sc = cluster(1);
  for (int i = 0; i < 4; ++i) sc.tasks.push_back(task("t" + std::to_string(i), i, 10));
  sc.tasks[2].runtime_estimate_s = -5.0;
  for (bool compact : {true, false}) {
    INFO(compact);
    sim::SimOptions o;
    o.keep_ended_tasks = !compact;
    CHECK_THROWS_WITH(sim::Simulator(sc, o), Catch::Contains("task t2: runtime_estimate -5000 ms"));
  }
  sc.tasks[2].runtime_estimate_s = 5.0;
  CHECK_NOTHROW(sim::Simulator(sc, compact_options()));
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
