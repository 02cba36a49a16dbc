// Per-task metrics (censored waits, JCT, slowdowns), groups, the added tasks.csv columns,
// end_reason / preemptor, node records in events.jsonl and the unfinished-run warning.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "builders.hpp"
#include "sim/engine/end_reason.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/cli/run_cli.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace simtest;
namespace fs = std::filesystem;

namespace {

nlohmann::json summary(const sim::io::Scenario& sc) {
  sim::Simulator s(sc);
  s.run();
  return nlohmann::json::parse(s.summary_json());
}

/// tasks.csv as rows of fields (simple split: the test scenarios have no quoted fields).
std::vector<std::vector<std::string>> csv_rows(const std::string& csv) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::string cur;
    for (char c : line) {
      if (c == ',') {
        f.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    f.push_back(cur);
    out.push_back(f);
  }
  return out;
}

/// Column `name` of every data row of a CSV text.
std::vector<std::string> column(const std::string& csv, const std::string& name) {
  auto rows = csv_rows(csv);
  std::size_t k = 0;
  while (k < rows[0].size() && rows[0][k] != name) ++k;
  REQUIRE(k < rows[0].size());
  std::vector<std::string> v;
  for (std::size_t i = 1; i < rows.size(); ++i) v.push_back(k < rows[i].size() ? rows[i][k] : "<missing>");
  return v;
}

sim::io::QuotaCfg quota(const std::string& user, double gpus) {
  sim::io::QuotaCfg q;
  q.user = user;
  q.resource_type = "reserved";
  q.pool = "p";
  q.gpus = gpus;
  q.vcpu = 10000;
  q.memory_gib = 100000;
  return q;
}

sim::io::TaskCfg team_task(const std::string& name, const std::string& user, const std::string& tenant, double submit,
                           double duration) {
  auto t = task(name, submit, duration);
  t.user = user;
  t.tenant = tenant;
  t.resource_type = "reserved";
  return t;
}

/// Two 8-GPU nodes; team-a (alice) and team-b (bob) with reserved quota.
sim::io::Scenario teams(double alice_gpus, double bob_gpus) {
  auto sc = cluster(2);
  sc.until_s = 10000;
  sc.quotas = {quota("alice", alice_gpus), quota("bob", bob_gpus)};
  sc.tasks = {team_task("a1", "alice", "team-a", 0, 1000), team_task("a2", "alice", "team-a", 0, 1000),
              team_task("b1", "bob", "team-b", 0, 2000), team_task("a3", "alice", "team-a", 100, 500)};
  return sc;
}

using testutil::slurp;

/// A fresh, empty folder for one test's outputs (testutil::fresh_dir, created).
fs::path output_dir(const std::string& name) {
  const auto dir = testutil::fresh_dir(name);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("mean_wait_s counts the censored wait of a task that can never start") {
  auto sc = cluster(1);
  sc.tasks.push_back(task("a", 0, 1000));
  sc.tasks.push_back(task("big", 0, 100, 3));  // 4 nodes: never fits
  SECTION("censored at the end of the run") {
    sim::Simulator s(sc);
    s.run();
    auto j = nlohmann::json::parse(s.summary_json());
    CHECK(j["censor_s"] == 1000);
    CHECK(j["mean_wait_s"] == 500);  // (0 + 1000) / 2; the old per-attempt mean said 0
    CHECK(j["p95_wait_s"] == 1000);
    CHECK(j["mean_jct_s"] == 1000);  // a: 1000, big: censored 1000
    CHECK(j["unfinished"] == 1);
    CHECK(j["never_started"] == 1);
    CHECK(j["not_submitted"] == 0);
    CHECK(column(s.tasks_csv(), "end_reason") == std::vector<std::string>{"succeeded", "never_started"});
    CHECK(column(s.tasks_csv(), "task_wait_s") == std::vector<std::string>{"0", "1000"});
    CHECK(s.unfinished_warning() ==
          "schedsim: warning: 1 task unfinished at the end of the run (1 never started); their waits are censored at 1000 s\n");
  }
  SECTION("censored at until_s when the run has one") {
    sc.until_s = 5000;
    auto j = summary(sc);
    CHECK(j["makespan_s"] == 1000);
    CHECK(j["censor_s"] == 5000);
    CHECK(j["mean_wait_s"] == 2500);
    CHECK(j["mean_jct_s"] == 3000);
  }
  SECTION("a task submitted after the cut is counted but left out of the means") {
    sc.until_s = 5000;
    sc.tasks.push_back(task("late", 6000, 10));
    auto j = summary(sc);
    CHECK(j["tasks"] == 3);
    CHECK(j["unfinished"] == 2);
    CHECK(j["never_started"] == 2);
    CHECK(j["not_submitted"] == 1);
    CHECK(j["mean_wait_s"] == 2500);
  }
}

TEST_CASE("a task stopped by until_s has its JCT censored at the cut and end_reason run_end") {
  auto sc = cluster(1);
  sc.tasks.push_back(task("a", 100, 1000));
  sc.until_s = 600;
  sim::Simulator s(sc);
  s.run();
  auto j = nlohmann::json::parse(s.summary_json());
  CHECK(j["mean_jct_s"] == 500);
  CHECK(j["mean_wait_s"] == 0);
  CHECK(j["unfinished"] == 1);
  CHECK(j["never_started"] == 0);
  CHECK(column(s.tasks_csv(), "end_reason") == std::vector<std::string>{"run_end"});
  CHECK(column(s.tasks_csv(), "slowdown") == std::vector<std::string>{"0.5"});
  CHECK(column(s.tasks_csv(), "bounded_slowdown") == std::vector<std::string>{"1"});
}

TEST_CASE("moving all of a team's quota away can only raise the team's mean wait") {
  auto with = summary(teams(16, 16));
  auto without = summary(teams(0, 32));
  const auto& a_with = with["groups"]["tenant"]["team-a"];
  const auto& a_without = without["groups"]["tenant"]["team-a"];
  // With quota: a1, a2 start at 0; a3 (submitted at 100) starts at 1000 when they end.
  CHECK(a_with["mean_wait_s"] == 300);
  CHECK(a_with["never_started"] == 0);
  // Without: nothing of team-a ever starts; the waits are censored at until_s = 10000.
  CHECK(a_without["never_started"] == 3);
  CHECK(a_without["mean_wait_s"] == Approx((10000.0 + 10000.0 + 9900.0) / 3).margin(0.001));
  CHECK(a_without["mean_wait_s"].get<double>() > a_with["mean_wait_s"].get<double>());
  CHECK(without["mean_wait_s"].get<double>() > with["mean_wait_s"].get<double>());
}

TEST_CASE("groups per user, tenant, pool, GPU model and capacity class hold hand-checked numbers") {
  sim::Simulator s(teams(16, 16));
  s.run();
  auto j = nlohmann::json::parse(s.summary_json());
  const auto& g = j["groups"];
  std::vector<std::string> dims;  // in file order
  auto ordered = nlohmann::ordered_json::parse(s.summary_json())["groups"];
  for (auto it = ordered.begin(); it != ordered.end(); ++it) dims.push_back(it.key());
  CHECK(dims == std::vector<std::string>{"user", "tenant", "pool", "gpu_model", "capacity"});
  // alice: a1 0..1000, a2 0..1000, a3 submitted 100, runs 1000..1500. bob: b1 1000..3000.
  const auto& alice = g["user"]["alice"];
  CHECK(alice["tasks"] == 3);
  CHECK(alice["succeeded"] == 3);
  CHECK(alice["mean_wait_s"] == 300);
  CHECK(alice["p95_wait_s"] == 900);
  CHECK(alice["mean_jct_s"] == Approx((1000.0 + 1000.0 + 1400.0) / 3).margin(0.001));
  CHECK(alice["mean_slowdown"] == Approx((1.0 + 1.0 + 2.8) / 3).margin(0.001));
  CHECK(alice["mean_bounded_slowdown"] == Approx(1.6).margin(0.001));
  CHECK(alice["gpu_seconds"] == 8 * 1000 + 8 * 1000 + 8 * 500);
  CHECK(alice["vcpu_seconds"] == 96 * 2500);
  const auto& bob = g["user"]["bob"];
  CHECK(bob["mean_wait_s"] == 1000);
  CHECK(bob["mean_jct_s"] == 3000);
  CHECK(bob["mean_slowdown"] == 1.5);
  CHECK(bob["gpu_seconds"] == 16000);
  CHECK(g["tenant"]["team-a"]["mean_wait_s"] == 300);
  CHECK(g["tenant"]["team-b"]["mean_wait_s"] == 1000);
  CHECK(g["pool"]["p"]["tasks"] == 4);
  CHECK(g["gpu_model"]["A100"]["tasks"] == 4);
  CHECK(g["capacity"]["reserved"]["tasks"] == 4);
  CHECK(g["capacity"]["reserved"]["mean_wait_s"] == 475);  // (0 + 0 + 900 + 1000) / 4
  CHECK(j["mean_wait_s"] == 475);
  // groups.csv: the same numbers, long format, sorted.
  std::string csv = s.groups_csv();
  CHECK(csv.rfind("group_by,group,tasks,succeeded,failed,unfinished,never_started,mean_wait_s,p95_wait_s,mean_jct_s,"
                  "mean_slowdown,mean_bounded_slowdown,gpu_seconds,vcpu_seconds,cost,preemptions,resubmissions,lost_work_s,"
                  "gpu_allocation_share\n",
                  0) == 0);
  // gpu_allocation_share: 20000 and 16000 of the 36000 GPU-seconds.
  CHECK(csv.find("\nuser,alice,3,3,0,0,0,300,900,1133.333,1.6,1.6,20000,240000,0,0,0,0,0.555556\n") != std::string::npos);
  CHECK(csv.find("\nuser,bob,1,1,0,0,0,1000,1000,3000,1.5,1.5,16000,192000,0,0,0,0,0.444444\n") != std::string::npos);
  CHECK(csv.find("\ntenant,team-a,") < csv.find("\ntenant,team-b,"));
  CHECK(csv.find("\nuser,bob,") < csv.find("\ntenant,team-a,"));
}

TEST_CASE("a task that never starts is grouped by its requested class and its first spec's GPU model") {
  auto sc = cluster(1);
  auto big = task("big", 0, 100, 3);
  big.resource_type = "spot";
  sc.tasks.push_back(big);
  auto j = summary(sc);
  CHECK(j["groups"]["capacity"]["spot"]["never_started"] == 1);
  CHECK(j["groups"]["gpu_model"]["A100"]["tasks"] == 1);
  CHECK(j["groups"]["pool"]["p"]["tasks"] == 1);
}

TEST_CASE("slowdown and bounded slowdown are hand-checked") {
  auto sc = cluster(1);
  sc.tasks.push_back(task("long", 0, 20));
  sc.tasks.push_back(task("short", 0, 5));  // waits 20 s behind "long" (queue order: name)
  sim::Simulator s(sc);
  s.run();
  auto j = nlohmann::json::parse(s.summary_json());
  // long: JCT 20, run 20: slowdown 1, bounded max(1, 20 / 20) = 1.
  // short: JCT 25, run 5: slowdown 5, bounded max(1, 25 / max(5, 10)) = 2.5.
  CHECK(j["mean_slowdown"] == 3);
  CHECK(j["mean_bounded_slowdown"] == 1.75);
  CHECK(column(s.tasks_csv(), "slowdown") == std::vector<std::string>{"1", "5"});
  CHECK(column(s.tasks_csv(), "bounded_slowdown") == std::vector<std::string>{"1", "2.5"});
  CHECK(column(s.tasks_csv(), "jct_s") == std::vector<std::string>{"20", "25"});
}

TEST_CASE("a preempted task's wait sums both attempts; the preemptor is named on the preempted attempt") {
  auto sc = cluster(1);
  auto low = task("low", 0, 1000);
  low.priority = 3;
  low.checkpoint_interval_s = 100;
  low.fault_tolerance.max_resubmissions = 1;
  auto high = task("high", 250, 500);
  high.priority = 7;
  sc.tasks = {low, high};
  sim::Simulator s(sc);
  s.run();
  std::string csv = s.tasks_csv();
  // low,1 preempted at 250; low,2 waits 250..750 and runs to 1550; high 250..750.
  CHECK(column(csv, "end_reason") == std::vector<std::string>{"preempted", "succeeded", "succeeded"});
  CHECK(column(csv, "preemptor") == std::vector<std::string>{"high", "", ""});
  CHECK(column(csv, "task_wait_s") == std::vector<std::string>{"", "500", "0"});
  CHECK(column(csv, "jct_s") == std::vector<std::string>{"", "1550", "500"});
  CHECK(column(csv, "slowdown") == std::vector<std::string>{"", "1.55", "1"});
  auto j = nlohmann::json::parse(s.summary_json());
  CHECK(j["mean_wait_s"] == 250);
  CHECK(j["mean_jct_s"] == 1025);
}

TEST_CASE("tasks.csv appends the task columns after the contract and existing columns") {
  auto sc = cluster(2);
  auto t = task("a", 0, 100, 1, "a100.1x");
  t.tenant = "team-a";
  t.priority = 6;
  t.runtime_estimate_s = 150;
  sc.tasks.push_back(t);
  sim::Simulator s(sc);
  s.run();
  auto rows = csv_rows(s.tasks_csv());
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == std::vector<std::string>{
                       "task", "attempt", "state", "submit_s", "start_s", "end_s", "spec", "nodes", "reason",
                       "capacity", "gpus", "wait_s", "work_s", "lost_work_s", "user", "tenant", "pool", "type",
                       "priority", "replicas", "gpu_milli_per_replica", "runtime_estimate_s", "end_reason", "preemptor",
                       "task_wait_s", "jct_s", "slowdown", "bounded_slowdown", "cost", "wait_quota_s", "wait_capacity_s",
                       "wait_fragmentation_s", "wait_cpu_memory_s", "wait_node_policy_s", "wait_idle_stability_s",
                       "wait_preemption_s"});
  CHECK(rows[1] == std::vector<std::string>{"a", "1", "Succeeded", "0", "0", "100", "a100.1x", "a100-0;a100-0", "",
                                            "pay_as_you_go", "2", "0", "100", "0", "alice", "team-a", "p", "PyTorchJob",
                                            "6", "2", "1000", "150", "succeeded", "", "0", "100", "1", "1", "0",
                                            "0", "0", "0", "0", "0", "0", "0"});
}

TEST_CASE("tasks.csv splits each task's wait by what held it, on its last attempt row, summing to task_wait_s") {
  // alice's quota of 8 reserved GPUs, three 8-GPU tasks of 100 s at 0, strict queueing: second
  // waits for quota 0-100; third waits behind second (blocked_by_queue: capacity) 0-100, then
  // for quota 100-200 (wait_split_test.cpp derives the same totals).
  auto sc = cluster(2);
  sc.quotas.push_back(quota("alice", 8));
  for (const char* n : {"first", "second", "third"}) {
    auto t = task(n, 0, 100);
    t.resource_type = "reserved";
    sc.tasks.push_back(t);
  }
  sc.scheduler.queueing = "strict";
  sim::Simulator s(sc);
  s.run();
  const std::string csv = s.tasks_csv();
  using V = std::vector<std::string>;
  CHECK(column(csv, "task_wait_s") == V{"0", "100", "200"});
  CHECK(column(csv, "wait_quota_s") == V{"0", "100", "100"});
  CHECK(column(csv, "wait_capacity_s") == V{"0", "0", "100"});
  for (const char* c : {"wait_fragmentation_s", "wait_cpu_memory_s", "wait_node_policy_s", "wait_idle_stability_s", "wait_preemption_s"}) {
    INFO(c);
    CHECK(column(csv, c) == V{"0", "0", "0"});
  }
}

TEST_CASE("tasks.csv leaves the wait split empty on a task's earlier attempt rows") {
  auto sc = cluster(1);
  auto t = task("a", 0, 3600);
  t.fault_tolerance.max_resubmissions = 1;
  sc.tasks.push_back(t);
  sc.events.push_back(node_event(100, "node_down", "a100-0"));
  sc.events.push_back(node_event(150, "node_up", "a100-0"));
  sim::Simulator s(sc);
  s.run();
  const std::string csv = s.tasks_csv();
  using V = std::vector<std::string>;
  REQUIRE(column(csv, "attempt") == V{"1", "2"});
  // Attempt 2 is queued at 100 while the only node is down until 150: 50 s of capacity wait.
  CHECK(column(csv, "wait_capacity_s") == V{"", "50"});
  CHECK(column(csv, "wait_quota_s") == V{"", "0"});
  CHECK(column(csv, "task_wait_s") == V{"", "50"});
}

TEST_CASE("write_outputs hands back summary.json's bytes when it writes them (the run table reads them), else leaves the text alone") {
  auto sc = cluster(2);
  sc.tasks.push_back(task("a", 0, 150));
  sc.tasks.push_back(task("b", 30, 40));
  sc.tasks.push_back(task("c", 40, 10));
  sim::Simulator s(sc);
  s.run();
  const auto dir = output_dir("summary-text");
  std::string text;
  s.write_outputs(dir.string(), sim::OutputSelection::all(), &text);
  CHECK(text == testutil::slurp(dir / "summary.json"));
  CHECK(text == s.summary_json());
  std::string untouched = "kept";
  sim::OutputSelection no_summary = sim::OutputSelection::none();
  no_summary.set(sim::Output::groups);
  no_summary.set(sim::Output::tasks);
  s.write_outputs(dir.string(), no_summary, &untouched);
  CHECK(untouched == "kept");
  std::filesystem::remove_all(dir);
}

TEST_CASE("timeseries.csv appends allocated vCPU, the cpu allocation ratio and each interval's mean, min and max") {
  // Two nodes (16 GPUs, 192 vCPU); a holds one node 0-150, b the other 30-70; samples every 100 s.
  auto sc = cluster(2);
  sc.timeseries_interval_s = 100;
  sc.tasks.push_back(task("a", 0, 150));
  sc.tasks.push_back(task("b", 30, 40));
  sim::Simulator s(sc);
  s.run();
  const auto dir = output_dir("timeseries-columns");
  s.write_outputs(dir.string());
  const std::string csv = testutil::slurp(dir / "timeseries.csv");
  std::filesystem::remove_all(dir);
  using V = std::vector<std::string>;
  // The contract's columns first, unchanged; the new ones appended.
  CHECK(csv.rfind("time_s,gpus_reserved,gpus_pay_as_you_go,gpus_spot,gpus_idle,gpus_allocated,gpus_up,queue_length,running_tasks,"
                  "frag_gpus,vcpus_allocated,vcpus_up,cpu_allocation_ratio,gpus_allocated_mean,gpus_allocated_min,gpus_allocated_max,"
                  "vcpus_allocated_mean,vcpus_allocated_min,vcpus_allocated_max\n",
                  0) == 0);
  CHECK(column(csv, "time_s") == V{"0", "100", "200"});
  CHECK(column(csv, "gpus_allocated") == V{"8", "8", "0"});
  CHECK(column(csv, "vcpus_allocated") == V{"96", "96", "0"});
  CHECK(column(csv, "vcpus_up") == V{"192", "192", "192"});
  CHECK(column(csv, "cpu_allocation_ratio") == V{"0.5000", "0.5000", "0.0000"});
  // [0, 100): 8 GPUs for 30 s, 16 for 40 s, 8 for 30 s = 1120 GPU-s / 100 s; [100, 200): 8 for 50 s.
  CHECK(column(csv, "gpus_allocated_mean") == V{"8", "11.2", "4"});
  CHECK(column(csv, "gpus_allocated_min") == V{"8", "8", "0"});
  CHECK(column(csv, "gpus_allocated_max") == V{"8", "16", "8"});
  CHECK(column(csv, "vcpus_allocated_mean") == V{"96", "134.4", "48"});
  CHECK(column(csv, "vcpus_allocated_min") == V{"96", "96", "0"});
  CHECK(column(csv, "vcpus_allocated_max") == V{"96", "192", "96"});
}

TEST_CASE("end_reason names each way an attempt ends, all from the documented vocabulary") {
  struct Case { const char* name; sim::io::Scenario sc; std::vector<std::string> expected; };
  std::vector<Case> cases;
  {
    auto sc = cluster(1);
    auto t = task("a", 0, 3600);
    t.fault_tolerance.max_resubmissions = 1;
    sc.tasks.push_back(t);
    sc.events.push_back(fault(100, "a", "transient"));
    sc.events.push_back(fault(200, "a", "gpu_oom"));
    cases.push_back({"faults", sc, {"transient_failure", "gpu_oom"}});
  }
  for (const char* err : {"image_unavailable", "bad_command", "invalid_data_path"}) {
    auto sc = cluster(1);
    sc.tasks.push_back(task("a", 0, 3600));
    sc.events.push_back(fault(100, "a", err));
    cases.push_back({err, sc, {err}});
  }
  {
    auto sc = cluster(2);
    auto t = task("a", 0, 3600, 1);
    t.fault_tolerance.max_resubmissions = 1;
    sc.tasks.push_back(t);
    sc.events.push_back(node_event(1000, "node_down", "a100-1"));
    sc.events.push_back(node_event(2000, "node_up", "a100-1"));
    cases.push_back({"node", sc, {"node_failure", "succeeded"}});
  }
  {
    auto sc = cluster(1);
    auto spot = task("spot", 0, 1000);
    spot.resource_type = "spot";
    sc.tasks = {spot, task("payg", 100, 200)};
    cases.push_back({"spot", sc, {"spot_eviction", "succeeded"}});
  }
  {
    auto sc = cluster(1);
    auto idle = task("idle", 0, 1000);
    idle.resource_type = "idle";
    idle.pool = "";
    sc.tasks = {idle, task("payg", 100, 200)};
    cases.push_back({"idle", sc, {"idle_reclaim", "succeeded"}});
  }
  {
    auto sc = cluster(1);
    auto t = task("a", 0, 100);
    t.image_pull_s = 10;
    t.image_pull_failure_prob = 1.0;
    sc.tasks = {t};
    cases.push_back({"pull", sc, {"image_pull_failure"}});
  }
  {
    auto sc = cluster(1);
    sc.cluster.pools[0].node_groups[0].unhealthy_prob = 1.0;
    auto t = task("a", 0, 100);
    t.precheck_s = 30;
    sc.tasks = {t};
    cases.push_back({"precheck", sc, {"precheck_failure"}});
  }
  for (auto& c : cases) {
    INFO(c.name);
    sim::Simulator s(c.sc);
    s.run();
    auto got = column(s.tasks_csv(), "end_reason");
    CHECK(got == c.expected);
    for (const auto& r : got)
      CHECK(std::find(sim::k_end_reasons.begin(), sim::k_end_reasons.end(), r) != sim::k_end_reasons.end());
  }
  // Spot eviction and idle reclaim by a task name the task; a spot_reclaim event names nobody.
  sim::Simulator spot(cases[5].sc);
  spot.run();
  CHECK(column(spot.tasks_csv(), "preemptor") == std::vector<std::string>{"payg", ""});
  sim::Simulator idle(cases[6].sc);
  idle.run();
  CHECK(column(idle.tasks_csv(), "preemptor") == std::vector<std::string>{"payg", ""});
}

TEST_CASE("every end_reason of the default scenario is in the documented vocabulary") {
  sim::Simulator s(sim::default_scenario(1));
  s.run();
  std::set<std::string> seen;
  for (const auto& r : column(s.tasks_csv(), "end_reason")) {
    CHECK(std::find(sim::k_end_reasons.begin(), sim::k_end_reasons.end(), r) != sim::k_end_reasons.end());
    seen.insert(r);
  }
  CHECK(seen.count("succeeded"));
  CHECK(seen.size() >= 4);
  // Every preempted / reclaimed attempt of the scheduler names its preemptor.
  auto reasons = column(s.tasks_csv(), "end_reason");
  auto preemptors = column(s.tasks_csv(), "preemptor");
  for (std::size_t i = 0; i < reasons.size(); ++i)
    if (reasons[i] == "preempted" || reasons[i] == "idle_reclaim") CHECK_FALSE(preemptors[i].empty());
}

TEST_CASE("events.jsonl has node_down and node_up records before the task records they cause") {
  auto sc = cluster(2);
  auto t = task("a", 0, 3600, 1);
  t.fault_tolerance.max_resubmissions = 1;
  sc.tasks.push_back(t);
  sc.events.push_back(node_event(1000, "node_down", "a100-1"));
  sc.events.push_back(node_event(1500, "node_down", "a100-1"));  // already down: no record
  sc.events.push_back(node_event(2000, "node_up", "a100-1"));
  sim::Simulator s(sc);
  s.run();
  fs::path d = fs::temp_directory_path() / ("schedsim-test-node-events-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  s.write_outputs(d.string());
  std::vector<nlohmann::json> lines;
  std::istringstream in(slurp(d / "events.jsonl"));
  for (std::string l; std::getline(in, l);) lines.push_back(nlohmann::json::parse(l));
  fs::remove_all(d);
  std::vector<std::size_t> node_lines;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].contains("node")) node_lines.push_back(i);
  REQUIRE(node_lines.size() == 2);
  const auto& down = lines[node_lines[0]];
  CHECK(down.dump() == R"({"event":"node_down","node":"a100-1","source":"injected","time_s":1000})");
  CHECK(lines[node_lines[1]].dump() == R"({"event":"node_up","node":"a100-1","source":"injected","time_s":2000})");
  // The failure it causes comes right after it.
  REQUIRE(node_lines[0] + 1 < lines.size());
  CHECK(lines[node_lines[0] + 1]["to"] == "Failed");
  CHECK(lines[node_lines[0] + 1]["time_s"] == 1000);
  CHECK(lines[node_lines[0] - 1]["time_s"] == 0);
}

TEST_CASE("stochastic node failures are recorded in events.jsonl with source stochastic") {
  auto sc = cluster(2);
  sc.cluster.pools[0].node_groups[0].mtbf_s = 2000;
  sc.cluster.pools[0].node_groups[0].mttr_s = 300;
  auto t = task("a", 0, 5000);
  t.checkpoint_interval_s = 300;
  t.fault_tolerance.max_resubmissions = 100;
  sc.tasks.push_back(t);
  sim::Simulator s(sc);
  s.run();
  REQUIRE_FALSE(s.node_changes().empty());
  for (const auto& n : s.node_changes()) CHECK(n.stochastic);
}

TEST_CASE("cpu_allocation_ratio is vCPU-seconds allocated over vCPU-seconds available") {
  sim::io::Scenario sc;
  sc.name = "cpu";
  sim::io::PoolCfg p;
  p.name = "cpu";
  sim::io::NodeGroupCfg g;
  g.prefix = "c-";
  g.count = 2;
  g.vcpu = 64;
  g.memory_gib = 256;
  p.node_groups.push_back(g);
  sc.cluster.pools.push_back(p);
  sc.cluster.instance_specs.push_back({"cpu.32", "", 0, 1000, 32, 64});
  auto a = task("a", 0, 100, 0, "cpu.32");
  a.pool = "cpu";
  auto b = task("b", 0, 50, 0, "cpu.32");
  b.pool = "cpu";
  sc.tasks = {a, b};
  auto j = summary(sc);
  // 32 vCPU x 100 s + 32 x 50 s over 128 vCPU x 100 s.
  CHECK(j["cpu_allocation_ratio"] == Approx(4800.0 / 12800.0).margin(1e-6));
  CHECK(j["gpu_allocation_ratio"] == 0);
  CHECK(j["groups"]["gpu_model"]["cpu"]["tasks"] == 2);
  CHECK(j["groups"]["user"]["alice"]["vcpu_seconds"] == 4800);
}

TEST_CASE("schedsim run warns on stderr when tasks are unfinished") {
  auto sc = cluster(1);
  sc.tasks.push_back(task("a", 0, 1000));
  sc.tasks.push_back(task("big", 0, 100, 3));
  sc.tasks.push_back(task("late", 90000, 10));
  const std::string base = (fs::temp_directory_path() / ("schedsim-test-warn-" + std::to_string(::getpid()))).string();
  std::ofstream(base + ".json") << sim::io::scenario_to_json(sc).dump(2);
  const std::string cmd = std::string(SCHEDSIM_BINARY) + " run " + base + ".json --no-progress --until 86400 --out " + base +
                          "-out >/dev/null 2>" + base + ".err";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // (validation may add its own warning lines about the gang that never fits)
  CHECK(slurp(base + ".err").find(
            "schedsim: warning: 2 tasks unfinished at the end of the run (2 never started); their waits are censored at 86400 s\n") !=
        std::string::npos);
  CHECK(fs::exists(base + "-out/groups.csv"));
  auto j = nlohmann::json::parse(slurp(base + "-out/summary.json"));
  CHECK(j["mean_wait_s"] == 43200);  // a: 0, big: 86400 (late: not submitted)
  fs::remove_all(base + "-out");
  fs::remove(base + ".json");
  fs::remove(base + ".err");
}

TEST_CASE("metrics.prom reports the same censored per-task wait as summary.json") {
  auto sc = cluster(1);
  sc.tasks.push_back(task("a", 0, 1000));
  sc.tasks.push_back(task("big", 0, 100, 3));
  sc.until_s = 5000;
  sim::Simulator s(sc);
  s.run();
  fs::path d = fs::temp_directory_path() / ("schedsim-test-prom-wait-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  s.write_outputs(d.string());
  std::string prom = slurp(d / "metrics.prom");
  fs::remove_all(d);
  std::istringstream in(prom);
  std::string wait_line;
  for (std::string l; std::getline(in, l);)
    if (l.rfind("schedsim_task_wait_seconds{", 0) == 0 && l.find("task_name=\"big\"") != std::string::npos) wait_line = l;
  REQUIRE_FALSE(wait_line.empty());
  CHECK(wait_line.substr(wait_line.rfind(' ') + 1) == "5000");
}

TEST_CASE("events.jsonl times: the millisecond decimal is the shortest round-trip decimal JSON prints") {
  // write_events prints times as format_seconds does (no float formatting); that is the text
  // nlohmann::json and fmt give the double ms / 1000 for every time a scenario may hold
  // (0 <= ms < 10^12, 10^9 s). Every ms below 5 x 10^5, then a seeded sample up to 10^12.
  auto json_text = [](libsched::Time ms) { return nlohmann::json(double(ms) / 1000.0).dump(); };
  std::size_t mismatches = 0;
  for (libsched::Time ms = 1; ms < 500'000; ms += ms % 1000 == 999 ? 2 : 1) mismatches += sim::format_seconds(ms) != json_text(ms);
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 200'000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    libsched::Time ms = libsched::Time(x % 1'000'000'000'000ull);
    if (ms % 1000 == 0) ++ms;
    mismatches += sim::format_seconds(ms) != json_text(ms);
  }
  CHECK(mismatches == 0);
  CHECK(sim::format_seconds(999'999'999'999) == "999999999.999");
  CHECK(json_text(999'999'999'999) == "999999999.999");
}

TEST_CASE("CSV decimals: format_decimal3 prints what fmt's {:.3f} prints for the rounded value, trimmed") {
  auto reference = [](double x) {
    std::string s = fmt::format("{:.3f}", std::round(x * 1000.0) / 1000.0);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s == "-0" ? std::string("0") : s;
  };
  std::size_t mismatches = 0;
  std::uint64_t x = 0x2545f4914f6cdd1dull;
  for (int i = 0; i < 100'000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    const double unit = double(x >> 11) * 0x1.0p-53;  // [0, 1)
    const double v[] = {unit, unit * 1000.0, unit * 1e9 - 5e8, -unit * 0.002, double(x % 100'000) / 1000.0, 0.0005 + double(x % 1000)};
    for (double d : v) mismatches += sim::format_decimal3(d) != reference(d);
  }
  CHECK(mismatches == 0);
  CHECK(sim::format_decimal3(60.0) == "60");
  CHECK(sim::format_decimal3(-0.0004) == "0");
  CHECK(sim::format_decimal3(1.2345) == reference(1.2345));
  CHECK(sim::format_decimal3(1e13) == "10000000000000");
}

}  // namespace SCHEDSIM_UNITY_ID
