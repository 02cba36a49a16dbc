// `plan --minimize METRIC` (the cheapest grid point meeting the SLOs, pareto.csv) and `plan
// --search exhaustive` / the bisection's recheck when the SLOs are not monotone (docs/planning.md).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/common/files.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

testutil::CommandResult schedsim(const std::string& args) {
  return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "plan-search");
}

fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("plan-search-" + name);
  fs::create_directories(d);
  return d;
}

fs::path write_file(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
  return p;
}

std::vector<std::string> text_lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

/// Four one-node (8-GPU A100) tasks of team `team`, 1 h each, all submitted at 0: reserved in
/// pool `res` (4 nodes) with the idle fallback (`accept_idle`, stability low), so a task that
/// does not fit the team's reserved quota runs on the idle nodes of pool `spare` (1 node, the
/// --vary changes it). Prices per GPU-hour: reserved 2.5, idle 1.
std::string team_quota_scenario() {
  std::string tasks;
  for (int i = 0; i < 4; ++i)
    tasks += fmt::format(R"({}{{"name": "t{}", "user": "team", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "resource_type": "reserved", "pool": "res", "accept_idle": true, "idle_stability": "low", "duration_s": 3600}})",
                         i ? ",\n    " : "", i);
  return R"({
  "schema": "schedsim/v1", "name": "team-quota", "seed": 3,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}],
    "pools": [
      {"name": "res", "kind": "dedicated",
       "node_groups": [{"prefix": "r-", "count": 4, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]},
      {"name": "spare", "kind": "shared",
       "node_groups": [{"prefix": "s-", "count": 1, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
  "quotas": [{"user": "team", "resource_type": "reserved", "pool": "res", "gpus": 8, "vcpu": 100000, "memory_gib": 1000000}],
  "prices": {"currency": "USD", "gpu_models": {"A100": {"reserved": 2.5, "pay_as_you_go": 4, "spot": 1.5, "idle": 1}}},
  "scheduler": {"placement": "best-fit", "queueing": "greedy"},
  "tasks": [
    )" + tasks + R"(
  ]
}
)";
}

/// `tasks` one-node (8-GPU) PyTorchJobs of 600 s, all submitted at 0, on `nodes` nodes of pool p.
/// The GPU allocation ratio is tasks / (nodes x ceil(tasks / nodes)): not monotone in nodes.
std::string one_node_tasks(int tasks, int nodes) {
  std::string t;
  for (int i = 0; i < tasks; ++i)
    t += fmt::format(R"({}{{"name": "t{}", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0,
      "specs": ["a100.8x"], "resource_type": "pay_as_you_go", "pool": "p", "duration_s": 600}})",
                     i ? ",\n    " : "", i);
  return fmt::format(R"({{
  "schema": "schedsim/v1", "name": "one-node-tasks", "seed": 7,
  "cluster": {{"name": "c", "region": "r",
    "instance_specs": [{{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}}],
    "pools": [{{"name": "p", "kind": "shared",
      "node_groups": [{{"prefix": "n-", "count": {}, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}}]}}]}},
  "scheduler": {{"placement": "best-fit", "queueing": "greedy"}},
  "tasks": [
    {}
  ]
}}
)",
                     nodes, t);
}

const char* const k_quota = "quotas[user=team].gpus";
const char* const k_spare = "cluster.pools[spare].node_groups[0].count";
const char* const k_nodes = "cluster.pools[p].node_groups[0].count";

}  // namespace

TEST_CASE("plan --minimize cost_total over quota x idle nodes answers the hand-derived cheapest point meeting the SLO",
          "[plan-search]") {
  // Q = reserved quota GPUs (q = Q / 8 tasks at once on reserved), M = spare nodes (M tasks at
  // once on idle). The commitment costs Q x makespan x 2.5, each idle task 8 GPU-h x 1:
  //   Q=0,  M=1: 4 waves on idle, makespan 4 h: cost 32, p95 wait (the largest of 4) 10800 s: FAIL
  //   Q=0,  M=2: 2 + 2 on idle, 2 h: cost 32, wait 3600 s                               <- answer
  //   Q=8,  M=1: 1 res + 1 idle, then 1 + 1: 8 x 2 x 2.5 + 2 x 8 = 56, 3600 s
  //   Q=8,  M=2: 1 res + 2 idle, then 1 res: 40 + 16 = 56, 3600 s
  //   Q=16, M=1: 2 res + 1 idle, then 1 res: 16 x 2 x 2.5 + 8 = 88, 3600 s
  //   Q=16, M=2: 2 res + 2 idle at once, 1 h: 40 + 16 = 56, 0 s
  // Pareto front of (cost, p95 wait), both lower is better: (0, 2) and (16, 2); (0, 1) has the
  // cost of (0, 2) with a longer wait, the others cost more than (0, 2) for the same wait.
  const fs::path w = work_dir("minimize");
  const fs::path s = write_file(w / "s.json", team_quota_scenario());
  const auto r = schedsim(fmt::format("plan {} --vary '{}=0,8,16' --vary '{}=1..2' --slo 'p95_wait_s<=3600' --minimize cost_total "
                                      "--seeds 2 --no-progress --out {}",
                                      s.string(), k_quota, k_spare, (w / "o").string()));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(testutil::slurp(w / "o" / "plan.json"));
  CHECK(j["minimize"] == "cost_total");
  CHECK(j["search"] == "exhaustive");
  CHECK(j["paths"] == nlohmann::json::array({k_quota, k_spare}));
  CHECK(j["met"] == true);
  CHECK(j["answer"][k_quota] == 0);
  CHECK(j["answer"][k_spare] == 2);
  CHECK(j["answer_mean"] == 32);
  REQUIRE(j["points"].size() == 6);
  const double costs[] = {32, 32, 56, 56, 88, 56};
  const double waits[] = {10800, 3600, 3600, 3600, 3600, 0};
  for (std::size_t p = 0; p < 6; ++p) {
    INFO("point " << p);
    const auto& pt = j["points"][p];
    CHECK(pt["values"][k_quota] == std::vector<int>{0, 0, 8, 8, 16, 16}[p]);
    CHECK(pt["values"][k_spare] == int(p % 2) + 1);
    CHECK(pt["metrics"]["cost_total"]["mean"] == costs[p]);
    CHECK(pt["metrics"]["p95_wait_s"]["mean"] == waits[p]);
    CHECK(pt["met"] == (p != 0));
  }
  CHECK(testutil::slurp(w / "o" / "pareto.csv") ==
        fmt::format("{},{},cost_total,p95_wait_s,met,answer\n0,2,32,3600,true,true\n16,2,56,0,true,false\n", k_quota, k_spare));
  CHECK(text_lines(r.out).back() == fmt::format("answer: {}=0, {}=2 (cost_total mean 32)", k_quota, k_spare));
  fs::remove_all(w);
}

TEST_CASE("plan --minimize with no point meeting the SLOs says so: met false, answer null, exit 0", "[plan-search]") {
  const fs::path w = work_dir("minimize-unmet");
  const fs::path s = write_file(w / "s.json", team_quota_scenario());
  const auto r = schedsim(fmt::format("plan {} --vary '{}=0,8' --vary '{}=1' --slo 'p95_wait_s<=0' --minimize cost_total --no-progress --out {}",
                                      s.string(), k_quota, k_spare, (w / "o").string()));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(testutil::slurp(w / "o" / "plan.json"));
  CHECK(j["met"] == false);
  CHECK(j["answer"].is_null());
  CHECK(j["answer_mean"].is_null());
  CHECK(text_lines(r.out).back() == "answer: not met: no point of the grid (2 points) meets every SLO");
  // Q=0: 4 h on one idle node, cost 32, wait 10800; Q=8: 1 res + 1 idle twice, cost 56, wait
  // 3600: neither dominates the other.
  CHECK(testutil::slurp(w / "o" / "pareto.csv") ==
        fmt::format("{},{},cost_total,p95_wait_s,met,answer\n0,1,32,10800,false,false\n8,1,56,3600,false,false\n", k_quota, k_spare));
  fs::remove_all(w);
}

TEST_CASE("plan --minimize refuses an unknown metric, naming the option and listing the metrics; nothing written", "[plan-search]") {
  const fs::path w = work_dir("minimize-bad");
  const fs::path s = write_file(w / "s.json", team_quota_scenario());
  const auto r = schedsim(fmt::format("plan {} --vary '{}=0,8' --slo 'p95_wait_s<=3600' --minimize cost --no-progress --out {}",
                                      s.string(), k_quota, (w / "o").string()));
  CHECK(r.status == 2);
  CHECK(r.err.find("--minimize: cost: unknown metric `cost` (metrics: tasks, attempts, ") != std::string::npos);
  CHECK(r.err.find("cost_total, cost_reserved") != std::string::npos);
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("plan refuses two --vary without --minimize, a bad --search, and --search bisection with --minimize", "[plan-search]") {
  const fs::path w = work_dir("search-bad");
  const fs::path s = write_file(w / "s.json", team_quota_scenario());
  const std::string out = " --no-progress --out " + (w / "o").string();
  const auto two = schedsim(fmt::format("plan {} --vary '{}=0..8:8' --vary '{}=1..2' --slo 'p95_wait_s<=3600'", s.string(), k_quota,
                                        k_spare) + out);
  CHECK(two.status == 2);
  CHECK(two.err.find(fmt::format("--vary: {}=1..2: plan takes one --vary unless --minimize METRIC is given", k_spare)) !=
        std::string::npos);
  const auto search = schedsim(fmt::format("plan {} --vary '{}=0..8:8' --slo 'p95_wait_s<=3600' --search linear", s.string(), k_quota) +
                               out);
  CHECK(search.status == 2);
  CHECK(search.err.find("--search: linear: must be `bisection` or `exhaustive`") != std::string::npos);
  const auto both = schedsim(fmt::format("plan {} --vary '{}=0..8:8' --slo 'p95_wait_s<=3600' --minimize cost_total --search bisection",
                                         s.string(), k_quota) + out);
  CHECK(both.status == 2);
  CHECK(both.err.find("--search: bisection: --minimize evaluates every point of the grid") != std::string::npos);
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("plan --search exhaustive finds the smallest meeting value that the bisection misses", "[plan-search]") {
  // 8 tasks: GPU allocation ratio 8 / (n x ceil(8 / n)) over n = 3..8 nodes is 8/9, 1, 0.8, 2/3,
  // 4/7, 1. With >= 0.95: the bisection evaluates 8 (met), 5, 6, 7 (fail), answers 8 and never
  // sees 3 or 4; every value evaluated, the answer is 4.
  const fs::path w = work_dir("exhaustive");
  const fs::path s = write_file(w / "s.json", one_node_tasks(8, 1));
  const std::string base = fmt::format("plan {} --vary '{}=3..8' --slo 'gpu_allocation_ratio>=0.95' --no-progress --out ", s.string(), k_nodes);
  const auto ex = schedsim(base + (w / "ex").string() + " --search exhaustive");
  INFO(ex.out << ex.err);
  REQUIRE(ex.status == 0);
  const auto je = nlohmann::json::parse(testutil::slurp(w / "ex" / "plan.json"));
  CHECK(je["search"] == "exhaustive");
  CHECK(je["answer"] == 4);
  CHECK(je["monotone"] == false);
  CHECK(je["unevaluated_below"] == 0);
  REQUIRE(je["points"].size() == 6);
  for (std::size_t i = 0; i < 6; ++i) CHECK(je["points"][i]["met"] == (i == 1 || i == 5));
  CHECK(text_lines(ex.out).back() == std::string("answer: ") + k_nodes + "=4");

  // The bisection answers 8 but says that 2 values below it (3 and 4) were never evaluated.
  const auto bi = schedsim(base + (w / "bi").string());
  INFO(bi.out << bi.err);
  REQUIRE(bi.status == 0);
  const auto jb = nlohmann::json::parse(testutil::slurp(w / "bi" / "plan.json"));
  CHECK(jb["search"] == "bisection");
  CHECK(jb["answer"] == 8);
  CHECK(jb["unevaluated_below"] == 2);
  CHECK(jb["points"].size() == 4);
  CHECK(bi.out.find("2 values below the answer were not evaluated") != std::string::npos);
  fs::remove_all(w);
}

TEST_CASE("docs/planning.md walk-through: the cheapest mix of reserved quota and spot or idle meeting p95 wait <= 1 h",
          "[plan-search]") {
  const fs::path w = work_dir("walkthrough");
  const auto r = schedsim(fmt::format("plan {}/scenarios/team-quota.json --vary 'quotas[user=vision].gpus=0..32:8' "
                                      "--vary 'workload.classes[batch].resource_type=spot,idle' --slo 'p95_wait_s<=3600' "
                                      "--minimize cost_total --seeds 3 --no-progress --out {}",
                                      SCHEDSIM_SOURCE_DIR, (w / "team-plan").string()));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK(text_lines(r.out).back() ==
        "answer: quotas[user=vision].gpus=24, workload.classes[batch].resource_type=idle (cost_total mean 1117.57)");
  const auto j = nlohmann::json::parse(testutil::slurp(w / "team-plan" / "plan.json"));
  CHECK(j["answer"]["quotas[user=vision].gpus"] == 24);
  CHECK(j["answer"]["workload.classes[batch].resource_type"] == "idle");
  CHECK(j["answer_mean"] == 1117.568);
  REQUIRE(j["points"].size() == 10);
  for (std::size_t p = 0; p < 10; ++p) CHECK(j["points"][p]["met"] == (p >= 6));  // 24 and 32 GPUs, spot or idle
  CHECK(testutil::slurp(w / "team-plan" / "pareto.csv") ==
        "quotas[user=vision].gpus,workload.classes[batch].resource_type,cost_total,p95_wait_s,met,answer\n"
        "0,idle,688.5033333333333,6092.937666666667,false,false\n"
        "8,idle,817.1036666666666,2484.657,false,false\n"
        "16,idle,959.8623333333334,1600.0046666666667,false,false\n"
        "24,idle,1117.568,513.309,true,true\n");
  fs::remove_all(w);
}

}  // namespace SCHEDSIM_UNITY_ID
