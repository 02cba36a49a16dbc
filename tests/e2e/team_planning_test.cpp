// Per-team questions of the multi-run commands (docs/planning.md "Per-team SLOs" and "Knobs
// that move together"): group metrics in --slo and --metric, compare_groups.csv over every
// dimension, --zip in sweep and plan.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

using testutil::slurp;
using Result = testutil::CommandResult;

Result schedsim(const std::string& args) { return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "team-planning"); }

fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("team-planning-" + name);
  fs::create_directories(d);
  return d;
}

/// Two teams on one pool `p` of 8-GPU nodes (the count is what plan varies), every task one
/// full node for 600 s: tenant `a` (user ua) submits a0, a1 at 0 s, tenant `b` (user ub)
/// submits b0 .. b3 at 1 s. With N nodes a's tasks start first (N >= 2: both at 0); b's start
/// at 1 s on the N - 2 free nodes, then at 600 s when a's end, then at 601 s or 1200 s:
///   N = 1: a waits {0, 600};   N = 2: b waits {599, 599, 1199, 1199};
///   N = 3: b {0, 599, 599, 600}; N = 4: b {0, 0, 599, 599}; N = 5: b {0, 0, 0, 599}; N >= 6: b all 0.
/// p95 (nearest rank) of a: 600 at N = 1, 0 from N = 2; of b: 1199, 600, 599, 599, 0 for N = 2 .. 6.
std::string two_teams() {
  std::string t;
  const char* names[] = {"a0", "a1", "b0", "b1", "b2", "b3"};
  for (int i = 0; i < 6; ++i) {
    const bool a = i < 2;
    t += fmt::format(R"({}{{"name": "{}", "user": "{}", "tenant": "{}", "submit_s": {}, "type": "PyTorchJob", "workers": 0,
      "specs": ["a100.8x"], "resource_type": "pay_as_you_go", "pool": "p", "duration_s": 600}})",
                     i ? ",\n    " : "", names[i], a ? "ua" : "ub", a ? "a" : "b", a ? 0 : 1);
  }
  return fmt::format(R"({{
  "schema": "schedsim/v1", "name": "two-teams", "seed": 7,
  "cluster": {{"name": "c", "region": "r",
    "instance_specs": [{{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}}],
    "pools": [{{"name": "p", "kind": "shared",
      "node_groups": [{{"prefix": "n-", "count": 1, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}}]}}]}},
  "scheduler": {{"placement": "best-fit", "queueing": "greedy"}},
  "tasks": [
    {}
  ]
}}
)",
                     t);
}

fs::path write_two_teams(const fs::path& dir) {
  const fs::path p = dir / "two-teams.json";
  std::ofstream(p) << two_teams();
  return p;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

std::string last_line(const std::string& s) {
  const auto v = lines_of(s);
  return v.empty() ? "" : v.back();
}

const std::string k_nodes = "cluster.pools[p].node_groups[0].count";

/// The point of plan.json whose value is `v`.
nlohmann::json plan_point(const nlohmann::json& plan, int v) {
  for (const auto& p : plan["points"])
    if (p["value"] == v) return p;
  FAIL("no point " << v);
  return {};
}

}  // namespace

TEST_CASE("plan with one SLO per team answers the node count the stricter team needs", "[planning]") {
  const fs::path w = work_dir("plan-two-slos");
  const fs::path s = write_two_teams(w);
  const auto r = schedsim("plan " + s.string() + " --vary '" + k_nodes +
                          "=1..8' --slo 'tenant[a].p95_wait_s<=300' --slo 'tenant[b].p95_wait_s<=599' --seeds 2 --no-progress --out " +
                          (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "plan.json"));
  // b's p95 is 600 at N = 3 and 599 at N = 4: 4 nodes.
  CHECK(j["answer"] == 4);
  CHECK(j["met"] == true);
  REQUIRE(j["slos"].size() == 2);
  CHECK(j["slos"][1]["metric"] == "tenant[b].p95_wait_s");
  const auto p4 = plan_point(j, 4), p3 = plan_point(j, 3);
  CHECK(p4["metrics"]["tenant[b].p95_wait_s"]["mean"] == 599);
  CHECK(p4["metrics"]["tenant[a].p95_wait_s"]["mean"] == 0);
  CHECK(p3["metrics"]["tenant[b].p95_wait_s"]["mean"] == 600);
  CHECK(p3["met"] == false);
  CHECK(last_line(r.out) == "answer: " + k_nodes + "=4");
  fs::remove_all(w);
}

TEST_CASE("plan with only the looser team's SLO answers a smaller node count", "[planning]") {
  const fs::path w = work_dir("plan-one-slo");
  const fs::path s = write_two_teams(w);
  const auto r = schedsim("plan " + s.string() + " --vary '" + k_nodes + "=1..8' --slo 'tenant[a].p95_wait_s<=300' --seeds 2 --no-progress --out " +
                          (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "plan.json"));
  // a's p95 is 600 at N = 1 (a1 waits for a0's node) and 0 from N = 2.
  CHECK(j["answer"] == 2);
  CHECK(plan_point(j, 1)["metrics"]["tenant[a].p95_wait_s"]["mean"] == 600);
  CHECK(last_line(r.out) == "answer: " + k_nodes + "=2");
  fs::remove_all(w);
}

TEST_CASE("--slo with an unknown dimension, group metric or key exits 2 listing the valid ones", "[planning]") {
  const fs::path w = work_dir("slo-unknown");
  const fs::path s = write_two_teams(w);
  const std::string head = "plan " + s.string() + " --vary '" + k_nodes + "=1..3' --no-progress --out " + (w / "o").string() + " ";
  const auto dim = schedsim(head + "--slo 'team[a].p95_wait_s<=300'");
  CHECK(dim.status == 2);
  CHECK(dim.err == "--slo: team[a].p95_wait_s<=300: unknown dimension `team` (dimensions: user, tenant, pool, gpu_model, capacity)\n");
  const auto metric = schedsim(head + "--slo 'tenant[a].p99_wait_s<=300'");
  CHECK(metric.status == 2);
  CHECK(metric.err.rfind("--slo: tenant[a].p99_wait_s<=300: unknown group metric `p99_wait_s` (group metrics: tasks, succeeded,", 0) == 0);
  // A key no run has: found after the runs, nothing written.
  const auto key = schedsim(head + "--slo 'tenant[c].p95_wait_s<=300'");
  CHECK(key.status == 2);
  CHECK(key.err.find("\n--slo: tenant[c].p95_wait_s<=300: unknown tenant `c`: no run has that group (tenant keys seen in the runs: a, b)\n") !=
        std::string::npos);  // after the one-seed note
  CHECK_FALSE(fs::exists(w / "o" / "plan.json"));
  fs::remove_all(w);
}

TEST_CASE("--metric adds a group metric column to seeds.csv and exits 2 for an unknown key", "[planning]") {
  const fs::path w = work_dir("metric-seeds");
  const fs::path s = write_two_teams(w);
  const auto r = schedsim("run " + s.string() + " --seeds 2 --metric 'tenant[b].mean_wait_s' --metric 'user[ua].gpu_allocation_share' --no-progress --out " +
                          (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto rows = lines_of(slurp(w / "o" / "seeds.csv"));
  REQUIRE(rows.size() == 3);
  const std::string tail = ",tenant[b].mean_wait_s,user[ua].gpu_allocation_share";
  CHECK(rows[0].substr(rows[0].size() - tail.size()) == tail);
  // One node: a0 0..600, a1 600..1200, b0 .. b3 start at 1200, 1800, 2400, 3000 (waits 1199 .. 2999,
  // mean 2099); a holds 2 of the 6 equal tasks' GPU-seconds: 1/3.
  CHECK(rows[1].substr(rows[1].size() - 14) == ",2099,0.333333");
  const auto j = nlohmann::json::parse(slurp(w / "o" / "seeds_summary.json"));
  CHECK(j["tenant[b].mean_wait_s"]["mean"] == 2099);
  const auto bad = schedsim("run " + s.string() + " --seeds 2 --metric 'pool[q].tasks' --no-progress --out " + (w / "o2").string());
  CHECK(bad.status == 2);
  CHECK(bad.err == "--metric: pool[q].tasks: unknown pool `q`: no run has that group (pool keys seen in the runs: p)\n");
  CHECK_FALSE(fs::exists(w / "o2" / "seeds.csv"));
  fs::remove_all(w);
}

TEST_CASE("sweep --vary A --zip B runs exactly the zipped points, with a column per path", "[planning]") {
  const fs::path w = work_dir("sweep-zip");
  const fs::path s = write_two_teams(w);
  // a0 moves to user ux at the second point only; user[ux].tasks shows it.
  const auto r = schedsim("sweep " + s.string() + " --vary '" + k_nodes + "=2,4,6' --zip 'tasks[a0].user=ua,ux,uy' --metric 'user[ux].tasks'" +
                          " --metric 'tenant[b].p95_wait_s' --seeds 1 --no-progress --out " + (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto rows = lines_of(slurp(w / "o" / "sweep.csv"));
  REQUIRE(rows.size() == 4);  // 3 points, not 3 x 3
  CHECK(rows[0].rfind("point,seed," + k_nodes + ",tasks[a0].user,tasks,", 0) == 0);
  CHECK(rows[0].substr(rows[0].size() - 36) == ",user[ux].tasks,tenant[b].p95_wait_s");
  const std::vector<std::string> head = {"0,7,2,ua,", "1,7,4,ux,", "2,7,6,uy,"};
  const std::vector<std::string> tail = {",0,1199", ",1,599", ",0,0"};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(rows[i + 1].rfind(head[i], 0) == 0);
    CHECK(rows[i + 1].substr(rows[i + 1].size() - tail[i].size()) == tail[i]);
  }
  const auto summary = lines_of(slurp(w / "o" / "sweep_summary.csv"));
  CHECK(summary[0] == "point," + k_nodes + ",tasks[a0].user,metric,n,mean,std,ci95_low,ci95_high");
  CHECK(std::find(summary.begin(), summary.end(), "1,4,ux,user[ux].tasks,1,1,0,1,1") != summary.end());
  fs::remove_all(w);
}

TEST_CASE("a --zip with another count of values than its --vary, or without a --vary before it, exits 2", "[planning]") {
  const fs::path w = work_dir("zip-bad");
  const fs::path s = write_two_teams(w);
  const auto r = schedsim("sweep " + s.string() + " --vary '" + k_nodes + "=2,4,6' --zip 'tasks[a0].user=ua,ux' --seeds 1 --no-progress --out " +
                          (w / "o").string());
  CHECK(r.status == 2);
  CHECK(r.err == "--zip: tasks[a0].user=ua,ux: 2 values; the preceding --vary " + k_nodes +
                     " has 3 (a --zip pairs its values one for one with it)\n");
  const auto first = schedsim("sweep " + s.string() + " --zip 'tasks[a0].user=ua,ux' --vary '" + k_nodes + "=2,4' --seeds 1 --no-progress --out " +
                              (w / "o").string());
  CHECK(first.status == 2);
  CHECK(first.err == "--zip: tasks[a0].user=ua,ux: no --vary before it: a --zip pairs its values one for one with the preceding --vary\n");
  CHECK_FALSE(fs::exists(w / "o" / "sweep.csv"));
  fs::remove_all(w);
}

TEST_CASE("plan walks a zipped dimension: the --zip path moves with the varied one", "[planning]") {
  const fs::path w = work_dir("plan-zip");
  const fs::path s = write_two_teams(w);
  // b3's duration moves with the node count: 600 s up to N = 3, then 60 s. makespan_s <= 1000:
  // N = 4: b2 and b3 start at 600, b2 ends at 1200 (fails); N = 5: b0 .. b2 run 1..601, b3
  // waits for a node until 600 and ends at 660 (meets). Without the zip N = 5 ends at 1200.
  const auto r = schedsim("plan " + s.string() + " --vary '" + k_nodes + "=1..6' --zip 'tasks[b3].duration_s=600,600,600,60,60,60'" +
                          " --slo 'makespan_s<=1000' --no-progress --out " + (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "plan.json"));
  CHECK(j["answer"] == 5);
  CHECK(plan_point(j, 5)["zip"]["tasks[b3].duration_s"] == 60);
  CHECK(plan_point(j, 5)["metrics"]["makespan_s"]["mean"] == 660);
  CHECK(last_line(r.out) == "answer: " + k_nodes + "=5 (tasks[b3].duration_s=60)");
  const auto bad = schedsim("plan " + s.string() + " --vary '" + k_nodes + "=1..6' --zip 'tasks[b3].duration_s=600,60'" +
                            " --slo 'makespan_s<=1000' --no-progress --out " + (w / "o2").string());
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--zip: tasks[b3].duration_s=600,60: 2 values; the preceding --vary") == 0);
  fs::remove_all(w);
}

TEST_CASE("compare_groups.csv covers every group dimension and the new group metrics", "[planning]") {
  const fs::path w = work_dir("compare-groups");
  const fs::path s = write_two_teams(w);
  const auto r = schedsim("compare " + s.string() + " " + s.string() + " --set-b '" + k_nodes + "=6' --no-progress --out " +
                          (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto rows = lines_of(slurp(w / "o" / "compare_groups.csv"));
  for (const char* by : {"user,ua,", "tenant,b,", "pool,p,", "gpu_model,A100,", "capacity,pay_as_you_go,"})
    CHECK(std::any_of(rows.begin(), rows.end(), [&](const std::string& l) { return l.rfind(by, 0) == 0; }));
  // b's mean wait: 2099 s on one node, 0 on six.
  CHECK(std::find(rows.begin(), rows.end(), "tenant,b,mean_wait_s,2099,0,-2099,-2099,-2099") != rows.end());
  CHECK(std::find(rows.begin(), rows.end(), "user,ua,gpu_allocation_share,0.333333,0.333333,0,0,0") != rows.end());
  fs::remove_all(w);
}

TEST_CASE("run --seeds --slo checks a team's SLO on the interval over seeds and reports it", "[planning][slo]") {
  const fs::path w = work_dir("slo-seeds");
  const fs::path s = write_two_teams(w);
  // Three nodes: b's p95 wait is 600 s (not <= 599); a's is 0 (<= 300). Every seed gives the
  // same values (no randomness): the interval is the point.
  const auto r = schedsim("run " + s.string() + " --set '" + k_nodes + "=3' --seeds 2 --slo 'tenant[b].p95_wait_s<=599'" +
                          " --slo 'tenant[a].p95_wait_s<=300' --no-progress --out " + (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "seeds_summary.json"));
  REQUIRE(j["slos"].size() == 2);
  CHECK(j["slos"][0]["metric"] == "tenant[b].p95_wait_s");
  CHECK(j["slos"][0]["op"] == "<=");
  CHECK(j["slos"][0]["value"] == 599);
  CHECK(j["slos"][0]["mean"] == 600);
  CHECK(j["slos"][0]["ci95_high"] == 600);
  CHECK(j["slos"][0]["met"] == false);
  CHECK(j["slos"][1]["met"] == true);
  CHECK(j["slos_met"] == false);
  CHECK(j["tenant[b].p95_wait_s"]["mean"] == 600);  // the SLO's group metric is a column too
  CHECK(r.out.find("SLO tenant[b].p95_wait_s<=599: mean 600 [600, 600]: NOT MET") != std::string::npos);
  CHECK(r.out.find("not every SLO met") != std::string::npos);
  // Four nodes: b's p95 is 599, both met.
  const auto r4 = schedsim("run " + s.string() + " --set '" + k_nodes + "=4' --seeds 2 --slo 'tenant[b].p95_wait_s<=599'" +
                           " --no-progress --out " + (w / "o4").string());
  REQUIRE(r4.status == 0);
  CHECK(nlohmann::json::parse(slurp(w / "o4" / "seeds_summary.json"))["slos_met"] == true);
  // An SLO needs seeds; a bad one is refused before any run.
  const auto one = schedsim("run " + s.string() + " --slo 'p95_wait_s<=1' --no-progress --out " + (w / "o1").string());
  CHECK(one.status == 2);
  CHECK(one.err == "--slo: p95_wait_s<=1: needs --seeds K with K > 1 (an SLO is checked on the 95 % interval over seeds)\n");
  const auto bad = schedsim("run " + s.string() + " --seeds 2 --slo 'tenant[c].p95_wait_s<=1' --no-progress --out " + (w / "o2").string());
  CHECK(bad.status == 2);
  CHECK(bad.err == "--slo: tenant[c].p95_wait_s<=1: unknown tenant `c`: no run has that group (tenant keys seen in the runs: a, b)\n");
  CHECK_FALSE(fs::exists(w / "o1"));
  CHECK_FALSE(fs::exists(w / "o2" / "seeds_summary.json"));
  fs::remove_all(w);
}

TEST_CASE("sweep --slo writes sweep_slo.csv: each SLO at each point, met or not", "[planning][slo]") {
  const fs::path w = work_dir("slo-sweep");
  const fs::path s = write_two_teams(w);
  const auto r = schedsim("sweep " + s.string() + " --vary '" + k_nodes + "=3,4' --slo 'tenant[b].p95_wait_s<=599' --slo 'makespan_s<1201'" +
                          " --seeds 2 --no-progress --out " + (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  // b's p95: 600 at N = 3, 599 at N = 4. The last task ends at 1201 s at N = 3 (b3 waits for
  // b0's node, free at 601) and at 1200 s at N = 4 (b2, b3 start at 600): `<` is strict.
  const auto rows = lines_of(slurp(w / "o" / "sweep_slo.csv"));
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] == "point," + k_nodes + ",slo,metric,op,value,mean,ci95_low,ci95_high,met");
  CHECK(rows[1] == "0,3,tenant[b].p95_wait_s<=599,tenant[b].p95_wait_s,<=,599,600,600,600,false");
  CHECK(rows[2] == "0,3,makespan_s<1201,makespan_s,<,1201,1201,1201,1201,false");
  CHECK(rows[3] == "1,4,tenant[b].p95_wait_s<=599,tenant[b].p95_wait_s,<=,599,599,599,599,true");
  CHECK(rows[4] == "1,4,makespan_s<1201,makespan_s,<,1201,1200,1200,1200,true");
  CHECK(r.out.find("slos_met") != std::string::npos);
  // Without --slo there is no sweep_slo.csv.
  const auto plain = schedsim("sweep " + s.string() + " --vary '" + k_nodes + "=3,4' --seeds 1 --no-progress --out " + (w / "p").string());
  REQUIRE(plain.status == 0);
  CHECK_FALSE(fs::exists(w / "p" / "sweep_slo.csv"));
  fs::remove_all(w);
}

TEST_CASE("a sharded sweep with a summary-metric --slo merges to the unsharded sweep_slo.csv", "[planning][slo]") {
  const fs::path w = work_dir("slo-shards");
  const fs::path s = write_two_teams(w);
  const std::string grid = s.string() + " --vary '" + k_nodes + "=2,3,4' --slo 'mean_wait_s<=500' --seeds 2 --no-progress";
  REQUIRE(schedsim("sweep " + grid + " --out " + (w / "all").string()).status == 0);
  REQUIRE(schedsim("sweep " + grid + " --shard 0/2 --out " + (w / "s0").string()).status == 0);
  REQUIRE(schedsim("sweep " + grid + " --shard 1/2 --out " + (w / "s1").string()).status == 0);
  const auto m = schedsim("merge " + (w / "s0").string() + " " + (w / "s1").string() + " --out " + (w / "m").string());
  INFO(m.out << m.err);
  REQUIRE(m.status == 0);
  CHECK(slurp(w / "m" / "sweep_slo.csv") == slurp(w / "all" / "sweep_slo.csv"));
  CHECK(lines_of(slurp(w / "m" / "sweep_slo.csv")).size() == 4);
  // A group metric cannot be checked in shards (they carry the summary metrics only).
  const auto g = schedsim("sweep " + s.string() + " --vary '" + k_nodes + "=2,3' --slo 'tenant[b].p95_wait_s<=599' --seeds 1 --shard 0/2" +
                          " --no-progress --out " + (w / "g").string());
  CHECK(g.status == 2);
  CHECK(g.err.find("--slo: tenant[b].p95_wait_s<=599: a group metric cannot be checked in a sharded sweep") == 0);
  fs::remove_all(w);
}

TEST_CASE("compare --slo checks each SLO on A and on B", "[planning][slo]") {
  const fs::path w = work_dir("slo-compare");
  const fs::path s = write_two_teams(w);
  const auto r = schedsim("compare " + s.string() + " " + s.string() + " --set-a '" + k_nodes + "=3' --set-b '" + k_nodes +
                          "=4' --seeds 2 --slo 'tenant[b].p95_wait_s<=599' --no-progress --out " + (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "compare.json"));
  REQUIRE(j["slos"].size() == 1);
  CHECK(j["slos"][0]["metric"] == "tenant[b].p95_wait_s");
  CHECK(j["slos"][0]["a"]["mean"] == 600);
  CHECK(j["slos"][0]["a"]["met"] == false);
  CHECK(j["slos"][0]["b"]["mean"] == 599);
  CHECK(j["slos"][0]["b"]["met"] == true);
  CHECK(j["slos_met"]["a"] == false);
  CHECK(j["slos_met"]["b"] == true);
  CHECK(r.out.find("every SLO met: A no, B yes") != std::string::npos);
  const auto bad = schedsim("compare " + s.string() + " " + s.string() + " --slo 'team[b].p95_wait_s<=1' --no-progress --out " +
                            (w / "o2").string());
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--slo: team[b].p95_wait_s<=1: unknown dimension `team`") == 0);
  CHECK_FALSE(fs::exists(w / "o2"));
  fs::remove_all(w);
}

}  // namespace SCHEDSIM_UNITY_ID
