// The group metrics a team asks about (preemptions as victim, resubmissions, lost_work_s,
// gpu_allocation_share; docs/outputs.md "Groups") and group metric names on the command line
// (`DIMENSION[KEY].METRIC`, sim/multirun_cli.hpp; docs/planning.md "Per-team SLOs").
#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "builders.hpp"
#include "sim/cli/multirun_cli.hpp"
#include "sim/experiments/multirun.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace simtest;

namespace {

/// One 8-GPU node: `low` (tenant batch, priority 3, 1000 s, checkpoint every 100 s) at 0 is
/// preempted at 250 s by `high` (tenant prod, priority 7, 500 s); low resumes from its 200 s
/// checkpoint at 750 s and runs the remaining 800 s.
sim::io::Scenario preempted_low() {
  auto sc = cluster(1);
  auto low = task("low", 0, 1000);
  low.user = "bob";
  low.tenant = "batch";
  low.priority = 3;
  low.checkpoint_interval_s = 100;
  low.fault_tolerance.max_resubmissions = 1;
  auto high = task("high", 250, 500);
  high.tenant = "prod";
  high.priority = 7;
  sc.tasks = {low, high};
  return sc;
}

/// The groups.csv row `group_by,group` as fields.
std::vector<std::string> groups_row(const std::string& csv, const std::string& prefix) {
  const auto at = csv.find("\n" + prefix + ",");
  REQUIRE(at != std::string::npos);
  const auto end = csv.find('\n', at + 1);
  std::vector<std::string> f;
  std::string cur;
  for (char c : csv.substr(at + 1, end - at - 1)) {
    if (c == ',') {
      f.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  f.push_back(cur);
  return f;
}

}  // namespace

TEST_CASE("groups: preemptions count the victim's preempted attempts, with its resubmission and lost work") {
  sim::Simulator s(preempted_low());
  s.run();
  const auto j = nlohmann::json::parse(s.summary_json());
  const auto& batch = j["groups"]["tenant"]["batch"];
  const auto& prod = j["groups"]["tenant"]["prod"];
  // low: preempted once at 250 s, resubmitted once, 50 s of work after its 200 s checkpoint lost.
  CHECK(batch["preemptions"] == 1);
  CHECK(batch["resubmissions"] == 1);
  CHECK(batch["lost_work_s"] == 50);
  // high is the preemptor, not a victim.
  CHECK(prod["preemptions"] == 0);
  CHECK(prod["resubmissions"] == 0);
  CHECK(prod["lost_work_s"] == 0);
  // The group sums are the run's.
  CHECK(j["preemptions"] == 1);
  CHECK(j["resubmissions"] == 1);
  CHECK(j["lost_work_s"] == 50);
}

TEST_CASE("groups: gpu_allocation_share is the group's GPU-seconds over every task's") {
  sim::Simulator s(preempted_low());
  s.run();
  const auto j = nlohmann::json::parse(s.summary_json());
  // low holds 8 GPUs for 250 + 800 s = 8400 GPU-s, high 8 x 500 = 4000: 8400 / 12400 and 4000 / 12400.
  CHECK(j["groups"]["tenant"]["batch"]["gpu_seconds"] == 8400);
  CHECK(j["groups"]["tenant"]["prod"]["gpu_seconds"] == 4000);
  CHECK(j["groups"]["tenant"]["batch"]["gpu_allocation_share"] == 0.677419);
  CHECK(j["groups"]["tenant"]["prod"]["gpu_allocation_share"] == 0.322581);
  // One user (alice) for high, bob for low; one pool holds everything.
  CHECK(j["groups"]["user"]["bob"]["gpu_allocation_share"] == 0.677419);
  CHECK(j["groups"]["pool"]["p"]["gpu_allocation_share"] == 1);
}

TEST_CASE("groups.csv appends preemptions, resubmissions, lost_work_s, gpu_allocation_share as its last columns") {
  sim::Simulator s(preempted_low());
  s.run();
  const std::string csv = s.groups_csv();
  CHECK(csv.substr(0, csv.find('\n')) ==
        "group_by,group,tasks,succeeded,failed,unfinished,never_started,mean_wait_s,p95_wait_s,mean_jct_s,mean_slowdown,"
        "mean_bounded_slowdown,gpu_seconds,vcpu_seconds,cost,preemptions,resubmissions,lost_work_s,gpu_allocation_share");
  const auto batch = groups_row(csv, "tenant,batch");
  REQUIRE(batch.size() == 19);
  CHECK(std::vector<std::string>(batch.end() - 4, batch.end()) == std::vector<std::string>{"1", "1", "50", "0.677419"});
  const auto prod = groups_row(csv, "tenant,prod");
  CHECK(std::vector<std::string>(prod.end() - 4, prod.end()) == std::vector<std::string>{"0", "0", "0", "0.322581"});
}

TEST_CASE("groups: a key that appears after other tasks, and a dimension of one key, sum their own tasks") {
  // One whole node, first come first served: t0 runs 0-100 s, t1 100-200, t2 200-300 and t3
  // (submitted at 50 s) 300-400. Tenant `a` has t0, t1 and t3, tenant `b` only t2 (the second
  // key, after two tasks of the first); every task is alice's, in pool p.
  auto sc = cluster(1);
  sc.scheduler.preemption = false;
  for (auto [name, tenant, submit] : {std::tuple{"t0", "a", 0.0}, {"t1", "a", 0.0}, {"t2", "b", 0.0}, {"t3", "a", 50.0}}) {
    auto t = task(name, submit, 100);
    t.tenant = tenant;
    sc.tasks.push_back(t);
  }
  sim::Simulator s(sc);
  s.run();
  const auto j = nlohmann::json::parse(s.summary_json());
  const auto& a = j["groups"]["tenant"]["a"];
  CHECK(a["tasks"] == 3);
  CHECK(a["mean_wait_s"] == 116.667);  // (0 + 100 + 250) / 3
  CHECK(a["p95_wait_s"] == 250);
  CHECK(a["mean_jct_s"] == 216.667);   // (100 + 200 + 350) / 3
  CHECK(a["gpu_seconds"] == 2400);
  const auto& b = j["groups"]["tenant"]["b"];
  CHECK(b["tasks"] == 1);
  CHECK(b["mean_wait_s"] == 200);
  CHECK(b["mean_jct_s"] == 300);
  // One key: the whole run's figures.
  for (const char* dim : {"user", "pool", "gpu_model", "capacity"}) {
    CAPTURE(dim);
    REQUIRE(j["groups"][dim].size() == 1);
    const auto& g = j["groups"][dim].begin().value();
    CHECK(g["tasks"] == 4);
    CHECK(g["mean_wait_s"] == 137.5);  // (0 + 100 + 200 + 250) / 4
    CHECK(g["p95_wait_s"] == 250);
    CHECK(g["mean_jct_s"] == 237.5);
    CHECK(g["gpu_seconds"] == 3200);
    CHECK(g["mean_wait_s"] == j["mean_wait_s"]);
  }
}

TEST_CASE("metrics_from_summary reads every group dimension; metric_value finds a group metric, 0 for an absent group") {
  sim::Simulator s(preempted_low());
  s.run();
  const auto m = sim::metrics_from_summary(nlohmann::json::parse(s.summary_json()));
  for (const auto& by : sim::group_by_names()) CHECK(m.groups.count(by) == 1);
  std::string rule;
  const auto ref = sim::parse_metric_ref("tenant[batch].lost_work_s", rule);
  REQUIRE(ref);
  CHECK(ref->group_by == "tenant");
  CHECK(ref->group == "batch");
  CHECK(ref->metric == "lost_work_s");
  CHECK(sim::metric_value(m, *ref) == 50);
  CHECK(sim::metric_value(m, *sim::parse_metric_ref("user[bob].preemptions", rule)) == 1);
  CHECK(sim::metric_value(m, *sim::parse_metric_ref("capacity[pay_as_you_go].tasks", rule)) == 2);
  CHECK(sim::metric_value(m, *sim::parse_metric_ref("tenant[nobody].tasks", rule)) == 0);
  CHECK(sim::metric_value(m, *sim::parse_metric_ref("preemptions", rule)) == 1);
}

TEST_CASE("parse_metric_ref: an unknown dimension or metric names the valid ones", "[multirun]") {
  std::string rule;
  CHECK_FALSE(sim::parse_metric_ref("team[a].p95_wait_s", rule));
  CHECK(rule == "unknown dimension `team` (dimensions: user, tenant, pool, gpu_model, capacity)");
  CHECK_FALSE(sim::parse_metric_ref("tenant[a].p99_wait_s", rule));
  CHECK(rule.rfind("unknown group metric `p99_wait_s` (group metrics: tasks, succeeded, ", 0) == 0);
  CHECK(rule.find("preemptions, resubmissions, lost_work_s, gpu_allocation_share)") != std::string::npos);
  CHECK_FALSE(sim::parse_metric_ref("tenant[].p95_wait_s", rule));
  CHECK(rule == "expected DIMENSION[KEY].METRIC, e.g. tenant[vision].p95_wait_s");
  CHECK_FALSE(sim::parse_metric_ref("tenant[a]p95_wait_s", rule));
  CHECK_FALSE(sim::parse_metric_ref("p99_wait_s", rule));
  CHECK(rule.rfind("unknown metric `p99_wait_s` (metrics: tasks, ", 0) == 0);
  std::string e;
  const auto slo = sim::parse_slo("pool[shared-a100].mean_wait_s<=1800", e);
  REQUIRE(slo);
  CHECK(slo->metric == "pool[shared-a100].mean_wait_s");
  CHECK(slo->ref.group_by == "pool");
  CHECK(slo->ref.group == "shared-a100");
  CHECK(slo->value == 1800);
}

}  // namespace SCHEDSIM_UNITY_ID
