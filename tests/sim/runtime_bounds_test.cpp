// Runtime bounds of the event loop (docs/outputs.md "Runtime bounds"), exit codes of
// run_command and the escaping of names in outputs. Every scenario here is built in code:
// a library user gets the same guarantees as the CLI.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "builders.hpp"
#include "sim/io/limits.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/cli/run_cli.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {
using testutil::slurp;
fs::path fresh_dir(const std::string& name) { return testutil::fresh_dir("bounds-" + name); }
/// Runs and returns the SimulationLimitError message ("" when the run ended normally).
std::string limit_message(const sim::io::Scenario& sc, sim::SimOptions o = {}) {
  sim::Simulator s(sc, std::move(o));
  try {
    s.run();
  } catch (const sim::SimulationLimitError& e) {
    return e.what();
  }
  return "";
}
/// Task `name` (0 to 100 s) whose 1 s image pull fails with probability `failure_prob`,
/// retried without a circuit breaker (image_pull_retries -1).
auto pulling_task(const std::string& name, double failure_prob = 1) {
  auto t = simtest::task(name, 0, 100);
  t.image_pull_s = 1;
  t.image_pull_failure_prob = failure_prob;
  t.image_pull_retries = -1;
  return t;
}

bool no_staging_next_to(const fs::path& d) {
  for (auto& e : fs::directory_iterator(d.parent_path()))
    if (e.path().filename().string().rfind(d.filename().string() + ".tmp-", 0) == 0) return false;
  return true;
}
}  // namespace

TEST_CASE("an image pull shorter than 1 ms retried without limit stops at the per-instant event bound") {
  auto sc = simtest::cluster(1);
  auto t = simtest::task("pull", 0, 100);
  t.image_pull_s = 0.0001;  // rounds to 0 ms
  t.image_pull_failure_prob = std::nextafter(1.0, 0.0);  // (1 without until_s is refused up front)
  t.image_pull_retries = -1;
  sc.tasks.push_back(t);
  sim::SimOptions o;
  o.max_events_per_instant = 20000;
  std::string m = limit_message(sc, o);
  CHECK(m.find("golden: tasks[0].image_pull_s: 0.0001: simulated time stopped advancing at t = 0 s") == 0);
  CHECK(m.find("image pulls shorter than 1 ms") != std::string::npos);
  // The default bound is documented and relative to the scenario's size.
  CHECK(sim::events_per_instant_cap(sc) == 1'000'000 + 100 * 2);
}

TEST_CASE("a transient failure rate that fails every attempt at once, with huge max_resubmissions, stops") {
  auto sc = simtest::cluster(1);
  auto t = simtest::task("flaky", 5, 100);
  t.transient_failure_rate_per_h = 1e300;
  t.fault_tolerance.max_resubmissions = std::numeric_limits<int>::max();
  sc.tasks.push_back(t);
  sim::SimOptions o;
  o.max_events_per_instant = 20000;
  std::string m = limit_message(sc, o);
  CHECK(m.find("tasks[0].transient_failure_rate_per_h") != std::string::npos);
  CHECK(m.find("at t = 5 s") != std::string::npos);
}

TEST_CASE("a precheck shorter than 1 ms on an always unhealthy node with huge max_resubmissions stops") {
  auto sc = simtest::cluster(1);
  sc.cluster.pools[0].node_groups[0].unhealthy_prob = 1;
  auto t = simtest::task("chk", 0, 100);
  t.precheck_s = 0.0002;
  t.fault_tolerance.max_resubmissions = std::numeric_limits<int>::max();
  sc.tasks.push_back(t);
  // Without the cordon after a failed precheck: with it, each retry waits precheck_cordon_s
  // for the node (time advances, no zero-length cycle).
  sc.scheduler.precheck_cordon_s = 0;
  sim::SimOptions o;
  o.max_events_per_instant = 20000;
  CHECK(limit_message(sc, o).find("tasks[0].precheck_s") != std::string::npos);
}

TEST_CASE("a tiny transient failure rate does not overflow the clock (huge draws are compared in seconds)") {
  auto sc = simtest::cluster(1);
  auto t = simtest::task("calm", 0, 100);
  t.transient_failure_rate_per_h = 1e-300;
  sc.tasks.push_back(t);
  sim::Simulator s(sc);
  s.run();
  REQUIRE(s.attempts().size() == 1);
  CHECK(s.attempts()[0]->state == sim::AttemptState::succeeded);
}

TEST_CASE("simulated time that would pass 1e12 s is an input error naming the task, not an overflow") {
  auto sc = simtest::cluster(1);
  auto t = simtest::task("pull", 0, 100);
  t.image_pull_s = 1e9;  // each failed pull adds 1e9 s: the 1000th passes the bound
  t.image_pull_failure_prob = std::nextafter(1.0, 0.0);  // (1 without until_s is refused up front)
  t.image_pull_retries = -1;
  sc.tasks.push_back(t);
  std::string m = limit_message(sc);
  CHECK(m.find("golden: tasks[0].image_pull_s: 1000000000: simulated time would pass 1000000000000 s") == 0);
  std::ostringstream out, err;
  fs::path d = fresh_dir("overflow");
  CHECK(sim::run_command(sc, {d.string(), std::nullopt, std::nullopt, false}, out, err) == 2);
  CHECK_FALSE(fs::exists(d));
  CHECK(no_staging_next_to(d));
}

TEST_CASE("node failures and repairs every millisecond: --until stops the run at until_s") {
  auto sc = simtest::cluster(2);
  sc.cluster.pools[0].node_groups[0].mtbf_s = 0.001;
  sc.cluster.pools[0].node_groups[0].mttr_s = 0.001;
  auto t = simtest::task("long", 0, 1e6);
  t.fault_tolerance.max_resubmissions = std::numeric_limits<int>::max();
  sc.tasks.push_back(t);
  sim::SimOptions o;
  o.until_s = 20;
  sim::Simulator s(sc, o);
  s.run();
  CHECK(s.makespan() == 20'000);
}

TEST_CASE("timeseries.csv is bounded: refused before simulating when until_s needs too many rows, else when time passes") {
  auto sc = simtest::cluster(1);
  sc.timeseries_interval_s = 1;
  sc.tasks.push_back(simtest::task("huge", 0, 1e9));
  SECTION("until_s known up front: refused before any event") {
    sim::SimOptions o;
    o.until_s = 1e9;
    CHECK_THROWS_WITH(sim::check_runtime_bounds(sc, o),
                      Catch::Contains("timeseries_interval_s: 1: with until_s 1000000000") &&
                          Catch::Contains("use timeseries_interval_s >= 1001"));
    std::ostringstream out, err;
    fs::path d = fresh_dir("ts-until");
    CHECK(sim::run_command(sc, {d.string(), std::nullopt, 1e9, false}, out, err) == 2);
    CHECK_FALSE(fs::exists(d));
  }
  SECTION("no until: the run stops as soon as simulated time passes interval x 999999") {
    CHECK(limit_message(sc).find("golden: timeseries_interval_s: 1: simulated time reached 1000000000 s") == 0);
  }
  SECTION("a horizon that fits is fine") {
    sc.tasks[0].duration_s = 3600;
    sim::Simulator s(sc);
    s.run();
    CHECK(s.makespan() == 3'600'000);
  }
}

TEST_CASE("a scenario with a dangling reference is an input error: exit 2, nothing written") {
  auto sc = simtest::cluster(1);
  auto t = simtest::task("a", 0, 10);
  t.specs = {"no-such-spec"};
  sc.tasks.push_back(t);
  fs::path d = fresh_dir("dangling");
  std::ostringstream out, err;
  CHECK(sim::run_command(sc, {d.string(), std::nullopt, std::nullopt, false}, out, err) == 2);
  CHECK_FALSE(fs::exists(d));
  CHECK(err.str().find("no-such-spec") != std::string::npos);
}

TEST_CASE("names are escaped in metrics.prom (\\\\, \\\", \\n) and quoted in tasks.csv; control characters are refused") {
  auto sc = simtest::cluster(1);
  auto t = simtest::task("we\"ird,\\name\nx", 0, 10);
  t.user = "bob\\\"";
  sc.tasks.push_back(t);
  fs::path d = fresh_dir("escape");
  std::ostringstream out, err;
  REQUIRE(sim::run_command(sc, {d.string(), std::nullopt, std::nullopt, false}, out, err) == 0);
  std::string prom = slurp(d / "metrics.prom");
  CHECK(prom.find(R"(task_name="we\"ird,\\name\nx")") != std::string::npos);
  CHECK(prom.find(R"(user="bob\\\"")") != std::string::npos);
  // Every sample is one line: no raw newline inside a label value.
  std::istringstream lines(prom);
  std::string line;
  while (std::getline(lines, line)) CHECK((line.rfind("#", 0) == 0 || line.rfind("schedsim_task_", 0) == 0));
  CHECK(slurp(d / "tasks.csv").find("\"we\"\"ird,\\name\nx\",1,Succeeded") != std::string::npos);
  fs::remove_all(d);

  for (std::string bad : {std::string("cr\rname"), std::string("nul\0name", 8), std::string("bell\x07"), std::string("bad\xff utf8")}) {
    INFO(bad);
    auto sc2 = simtest::cluster(1);
    sc2.tasks.push_back(simtest::task(bad, 0, 10));
    fs::path d2 = fresh_dir("escape-bad");
    std::ostringstream out2, err2;
    CHECK(sim::run_command(sc2, {d2.string(), std::nullopt, std::nullopt, false}, out2, err2) == 2);
    CHECK(err2.str().rfind("golden: tasks[0].name: ", 0) == 0);
    CHECK_FALSE(fs::exists(d2));
  }
  auto sc3 = simtest::cluster(1);
  sc3.cluster.region = "eu\rwest";
  CHECK_THROWS_WITH(sim::check_runtime_bounds(sc3, {}), Catch::StartsWith("golden: cluster.region: \"eu\\rwest\": must not contain"));
}

TEST_CASE("a shared user, tenant or pool text is checked once and reported at its first task") {
  // Many tasks share one interned text: the check is cached per text, so a bad text is still
  // reported at the first task that has it, whatever the tasks around it share.
  auto sc = simtest::cluster(1);
  for (int i = 0; i < 600; ++i) {
    auto t = simtest::task("t" + std::to_string(i), 0, 10);
    t.user = "user-" + std::to_string(i % 7);
    sc.tasks.push_back(t);
  }
  CHECK_NOTHROW(sim::check_runtime_bounds(sc, {}));
  sc.tasks[450].tenant = "bad\x07tenant";
  sc.tasks[520].tenant = "bad\x07tenant";
  sc.tasks[300].user = "bad\ruser";
  CHECK_THROWS_WITH(sim::check_runtime_bounds(sc, {}), Catch::StartsWith("golden: tasks[300].user: "));
  sc.tasks[300].user = "user-1";
  CHECK_THROWS_WITH(sim::check_runtime_bounds(sc, {}), Catch::StartsWith("golden: tasks[450].tenant: "));
}

TEST_CASE("write_file_checked reports the file and the system error") {
  CHECK_THROWS_AS(sim::write_file_checked("/nonexistent-dir-schedsim/x.csv", "x"), sim::OutputError);
  CHECK_THROWS_WITH(sim::write_file_checked("/nonexistent-dir-schedsim/x.csv", "x"),
                    Catch::Contains("/nonexistent-dir-schedsim/x.csv: cannot create: No such file or directory"));
}

// Fuzz finding run-oom-image-pull-forever (fuzz/corpus/run/finding-image-pull-always-fails):
// an image pull that always fails, without a circuit breaker and without until_s, grew memory
// until the process died. Now it is refused before simulating; with until_s it is a bounded run.
TEST_CASE("an image pull that always fails without a breaker and without until_s is refused before simulating") {
  auto sc = simtest::cluster(1);
  sc.tasks.push_back(pulling_task("pull"));
  CHECK_THROWS_WITH(sim::check_runtime_bounds(sc, {}),
                    Catch::StartsWith("golden: tasks[0].image_pull_retries: -1: task \"pull\" pulls an image that always fails"));
  CHECK(limit_message(sc).rfind("golden: tasks[0].image_pull_retries: -1: ", 0) == 0);  // Simulator::run checks too
  // A breaker, a probability below 1 or an end time each make the run finite: not refused.
  auto breaker = sc;
  breaker.tasks[0].image_pull_retries = 3;
  CHECK_NOTHROW(sim::check_runtime_bounds(breaker, {}));
  sim::SimOptions until;
  until.until_s = 50;
  CHECK_NOTHROW(sim::check_runtime_bounds(sc, until));
  sim::Simulator s(sc, until);
  s.run();
  REQUIRE(s.attempts().size() == 1);
  CHECK(s.attempts()[0]->state == sim::AttemptState::stopped);
}

// The endless pull is found in the pass that checks the texts: a text problem of any task is
// still reported first, and of several endless pulls the first task's.
TEST_CASE("a text problem is reported before an endless image pull, and the first endless pull is the one named") {
  auto sc = simtest::cluster(1);
  auto pull = pulling_task("pull");
  auto pull2 = pull;
  pull2.name = "pull2";
  pull2.image_pull_retries = -2;
  sc.tasks = {simtest::task("fine", 0, 100), pull, pull2};
  CHECK_THROWS_WITH(sim::check_runtime_bounds(sc, {}),
                    Catch::StartsWith("golden: tasks[1].image_pull_retries: -1: task \"pull\" pulls an image that always fails"));
  auto bad_text = simtest::task("bad", 0, 100);
  bad_text.name = std::string("bad\x01name");
  sc.tasks.push_back(bad_text);  // after the endless pulls: its text is still reported first
  CHECK_THROWS_WITH(sim::check_runtime_bounds(sc, {}), Catch::StartsWith("golden: tasks[3].name: "));
  sim::SimOptions until;
  until.until_s = 50;
  CHECK_THROWS_WITH(sim::check_runtime_bounds(sc, until), Catch::StartsWith("golden: tasks[3].name: "));
  sc.tasks.pop_back();
  CHECK_NOTHROW(sim::check_runtime_bounds(sc, until));
}

TEST_CASE("image_pull_retries -1 without until_s stops after the bound on consecutive failed pulls") {
  auto sc = simtest::cluster(1);
  sc.tasks.push_back(pulling_task("pull", std::nextafter(1.0, 0.0)));
  sim::SimOptions o;
  o.max_pull_failures = 500;
  std::string m = limit_message(sc, o);
  CHECK(m.find("golden: tasks[0].image_pull_retries: -1: task pull failed 500 consecutive image pulls by t = 500 s") == 0);
  // The documented default bound.
  CHECK(sim::io::limits::max_pull_failures_without_breaker == 1000000);
}

}  // namespace SCHEDSIM_UNITY_ID
