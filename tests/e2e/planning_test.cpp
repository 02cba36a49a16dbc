// `run --seeds`, `compare`, `sweep` and `plan` seen from the CLI (docs/planning.md).
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
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

/// Runs `schedsim ARGS`, capturing stdout and stderr.
Result schedsim(const std::string& args) { return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "planning"); }

fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("planning-" + name);
  fs::create_directories(d);
  return d;
}

/// A deterministic scenario (explicit tasks, no random failures): `tasks` PyTorchJobs of one
/// full 8-GPU node each, all submitted at 0 and running 600 s, on `nodes` nodes of pool `p`.
/// Tenants alternate between `red` and `blue`.
std::string one_node_tasks(int tasks, int nodes) {
  std::string t;
  for (int i = 0; i < tasks; ++i)
    t += fmt::format(R"({}{{"name": "t{}", "user": "u{}", "tenant": "{}", "submit_s": 0, "type": "PyTorchJob", "workers": 0,
      "specs": ["a100.8x"], "resource_type": "pay_as_you_go", "pool": "p", "duration_s": 600}})",
                     i ? ",\n    " : "", i, i % 2, i % 2 ? "blue" : "red");
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

fs::path write_scenario(const fs::path& dir, const std::string& text) {
  const fs::path p = dir / "s.json";
  std::ofstream(p) << text;
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

const char* const k_count = "cluster.pools[p].node_groups[0].count";

}  // namespace

TEST_CASE("run --seeds 5 on the default scenario: the seeds differ, so some CI has a positive width", "[planning]") {
  const fs::path w = work_dir("seeds-default");
  const auto r = schedsim("run --seeds 5 --jobs 2 --until 20000 --no-progress --out " + (w / "o").string());
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "seeds_summary.json"));
  bool some_width = false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    CHECK(it.value()["n"] == 5);
    CHECK(it.value()["ci95_low"].get<double>() <= it.value()["mean"].get<double>());
    CHECK(it.value()["mean"].get<double>() <= it.value()["ci95_high"].get<double>());
    if (it.value()["ci95_high"].get<double>() > it.value()["ci95_low"].get<double>()) some_width = true;
  }
  CHECK(j.contains("mean_wait_s"));
  CHECK_FALSE(j.contains("seed"));
  CHECK(some_width);
  // seeds.csv: one row per seed 1..5 (the default scenario's seed is 1).
  const auto rows = lines_of(slurp(w / "o" / "seeds.csv"));
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].rfind("seed,tasks,attempts,", 0) == 0);
  for (int i = 1; i <= 5; ++i) CHECK(rows[std::size_t(i)].rfind(std::to_string(i) + ",", 0) == 0);
  CHECK(nlohmann::json::parse(slurp(w / "o" / "scenario.resolved.json"))["seed"] == 1);
  CHECK(r.out.find("ci95_high") != std::string::npos);
  fs::remove_all(w);
}

TEST_CASE("run --seeds 5 on a deterministic scenario: every CI has width 0", "[planning]") {
  const fs::path w = work_dir("seeds-det");
  const fs::path s = write_scenario(w, one_node_tasks(6, 4));
  const auto r = schedsim("run " + s.string() + " --seeds 5 --no-progress --out " + (w / "o").string());
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "seeds_summary.json"));
  REQUIRE(j.size() >= 15);
  for (auto it = j.begin(); it != j.end(); ++it) {
    INFO(it.key());
    CHECK(it.value()["std"] == 0);
    CHECK(it.value()["ci95_low"] == it.value()["mean"]);
    CHECK(it.value()["ci95_high"] == it.value()["mean"]);
  }
  CHECK(j["tasks"]["mean"] == 6);
  CHECK(j["mean_wait_s"]["mean"].get<double>() > 0);  // 6 tasks on 4 nodes: two wait 600 s
  const auto rows = lines_of(slurp(w / "o" / "seeds.csv"));
  REQUIRE(rows.size() == 6);
  CHECK(rows[1].rfind("7,", 0) == 0);
  CHECK(rows[5].rfind("11,", 0) == 0);
  fs::remove_all(w);
}

TEST_CASE("run without --seeds or with --seeds 1 writes the usual outputs", "[planning]") {
  const fs::path w = work_dir("seeds-one");
  const fs::path s = write_scenario(w, one_node_tasks(2, 2));
  const auto r = schedsim("run " + s.string() + " --seeds 1 --no-progress --out " + (w / "o").string());
  REQUIRE(r.status == 0);
  CHECK(fs::exists(w / "o" / "summary.json"));
  CHECK_FALSE(fs::exists(w / "o" / "seeds_summary.json"));
  fs::remove_all(w);
}

TEST_CASE("plan finds exactly the node count that lets N one-node tasks start at once", "[planning]") {
  const fs::path w = work_dir("plan");
  const fs::path s = write_scenario(w, one_node_tasks(6, 1));
  const auto r = schedsim("plan " + s.string() + " --vary '" + k_count + "=1..20' --slo 'p95_wait_s<=0' --seeds 2 --no-progress --out " +
                          (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "plan.json"));
  CHECK(j["path"] == k_count);
  CHECK(j["answer"] == 6);
  CHECK(j["met"] == true);
  CHECK(j["monotone"] == true);
  REQUIRE(j["slos"].size() == 1);
  CHECK(j["slos"][0]["metric"] == "p95_wait_s");
  CHECK(j["slos"][0]["op"] == "<=");
  // The two grid values below the answer were evaluated and fail; points are sorted by value.
  double prev = 0;
  bool saw4 = false, saw5 = false;
  for (const auto& p : j["points"]) {
    CHECK(p["value"].get<double>() > prev);
    prev = p["value"].get<double>();
    CHECK(p["met"] == (p["value"].get<int>() >= 6));
    CHECK(p["metrics"]["p95_wait_s"]["n"] == 2);
    saw4 = saw4 || p["value"] == 4;
    saw5 = saw5 || p["value"] == 5;
  }
  CHECK(saw4);
  CHECK(saw5);
  CHECK(last_line(r.out) == std::string("answer: ") + k_count + "=6");
  fs::remove_all(w);
}

TEST_CASE("plan reports not met when even hi fails", "[planning]") {
  const fs::path w = work_dir("plan-unmet");
  const fs::path s = write_scenario(w, one_node_tasks(6, 1));
  const auto r = schedsim("plan " + s.string() + " --vary '" + k_count + "=1..4' --slo 'p95_wait_s<=0' --no-progress --out " +
                          (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "plan.json"));
  CHECK(j["answer"].is_null());
  CHECK(j["met"] == false);
  CHECK(last_line(r.out).find("not met") != std::string::npos);
  fs::remove_all(w);
}

TEST_CASE("compare of a scenario with itself: every difference and CI bound is exactly 0", "[planning]") {
  const fs::path w = work_dir("compare-self");
  const auto r = schedsim("compare " + std::string(SCHEDSIM_SOURCE_DIR) + "/scenarios/what-if-capacity.json " + SCHEDSIM_SOURCE_DIR +
                          "/scenarios/what-if-capacity.json --seeds 3 --jobs 2 --no-progress --out " + (w / "o").string());
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "compare.json"));
  REQUIRE(j.size() >= 15);
  for (auto it = j.begin(); it != j.end(); ++it) {
    INFO(it.key());
    CHECK(it.value()["diff"] == 0);
    CHECK(it.value()["ci95_low"] == 0);
    CHECK(it.value()["ci95_high"] == 0);
    CHECK(it.value()["a"] == it.value()["b"]);
  }
  const auto rows = lines_of(slurp(w / "o" / "compare_groups.csv"));
  REQUIRE(rows.size() > 1);
  CHECK(rows[0] == "group_by,group,metric,a,b,diff,ci95_low,ci95_high");
  bool tenant = false, pool = false;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    INFO(rows[i]);
    CHECK(rows[i].size() > 6);
    CHECK(rows[i].substr(rows[i].size() - 6) == ",0,0,0");
    tenant = tenant || rows[i].rfind("tenant,", 0) == 0;
    pool = pool || rows[i].rfind("pool,", 0) == 0;
  }
  CHECK(tenant);
  CHECK(pool);
  CHECK(fs::exists(w / "o" / "a.resolved.json"));
  CHECK(fs::exists(w / "o" / "b.resolved.json"));
  fs::remove_all(w);
}

TEST_CASE("compare against more nodes: the wait difference is negative", "[planning]") {
  const fs::path w = work_dir("compare-more");
  const fs::path s = write_scenario(w, one_node_tasks(6, 3));
  const auto r = schedsim("compare " + s.string() + " " + s.string() + " --set-b '" + k_count + "=6' --seeds 2 --no-progress --out " +
                          (w / "o").string());
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "compare.json"));
  CHECK(j["mean_wait_s"]["diff"].get<double>() < 0);
  CHECK(j["mean_wait_s"]["a"].get<double>() > 0);
  CHECK(j["mean_wait_s"]["b"] == 0);
  CHECK(nlohmann::json::parse(slurp(w / "o" / "b.resolved.json"))["cluster"]["pools"][0]["node_groups"][0]["count"] == 6);
  CHECK(nlohmann::json::parse(slurp(w / "o" / "a.resolved.json"))["cluster"]["pools"][0]["node_groups"][0]["count"] == 3);
  // Per tenant: red's tasks waited in A too, so its difference is negative as well.
  bool red = false;
  for (const auto& row : lines_of(slurp(w / "o" / "compare_groups.csv")))
    if (row.rfind("tenant,red,mean_wait_s,", 0) == 0) {
      red = true;
      CHECK(row.find(",-") != std::string::npos);
    }
  CHECK(red);
  fs::remove_all(w);
}

TEST_CASE("sweep: rows, headers, and --jobs 2 writes the same bytes as --jobs 1", "[planning]") {
  const fs::path w = work_dir("sweep");
  const fs::path s = write_scenario(w, one_node_tasks(4, 2));
  const std::string grid = std::string(" --vary '") + k_count + "=1..3' --vary 'scheduler.placement=best-fit,first-fit' --seeds 2 --no-progress";
  const auto r1 = schedsim("sweep " + s.string() + grid + " --jobs 1 --out " + (w / "j1").string());
  INFO(r1.err);
  REQUIRE(r1.status == 0);
  const auto r2 = schedsim("sweep " + s.string() + grid + " --jobs 2 --out " + (w / "j2").string());
  REQUIRE(r2.status == 0);
  const std::string csv = slurp(w / "j1" / "sweep.csv");
  const std::string sum = slurp(w / "j1" / "sweep_summary.csv");
  CHECK(csv == slurp(w / "j2" / "sweep.csv"));
  CHECK(sum == slurp(w / "j2" / "sweep_summary.csv"));
  const auto rows = lines_of(csv);
  REQUIRE(rows.size() == 1 + 3 * 2 * 2);  // header + 6 points x 2 seeds
  CHECK(rows[0].rfind(std::string("point,seed,") + k_count + ",scheduler.placement,tasks,attempts,", 0) == 0);
  CHECK(rows[1].rfind("0,7,1,best-fit,", 0) == 0);
  CHECK(rows[2].rfind("0,8,1,best-fit,", 0) == 0);
  CHECK(rows[3].rfind("1,7,1,first-fit,", 0) == 0);
  CHECK(rows[12].rfind("5,8,3,first-fit,", 0) == 0);
  const auto srows = lines_of(sum);
  const std::size_t metrics = std::size_t(std::count(rows[0].begin(), rows[0].end(), ',')) + 1 - 4;  // columns - point, seed, 2 paths
  CHECK(srows.size() == 1 + 6 * metrics);
  CHECK(srows[0] == std::string("point,") + k_count + ",scheduler.placement,metric,n,mean,std,ci95_low,ci95_high");
  CHECK(srows[1].rfind("0,1,best-fit,tasks,2,4,0,4,4", 0) == 0);
  fs::remove_all(w);
}

TEST_CASE("sweep refuses a bad --vary path before simulating, and writes nothing", "[planning]") {
  const fs::path w = work_dir("sweep-bad-path");
  const fs::path s = write_scenario(w, one_node_tasks(2, 2));
  const auto r = schedsim("sweep " + s.string() + " --vary 'cluster.pools[9].node_groups[0].count=1,2' --seeds 1 --out " +
                          (w / "o").string());
  CHECK(r.status == 2);
  CHECK(r.err.find("--vary: cluster.pools[9].node_groups[0].count: 1: cluster.pools[9]: no such element") != std::string::npos);
  CHECK(r.err.find("count: 1: cluster.pools[9]: no such element (cluster.pools has 1 element) (point 0)") != std::string::npos);
  CHECK(r.err.find("count: 2: cluster.pools[9]: no such element (cluster.pools has 1 element) (point 1)") != std::string::npos);
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("sweep refuses a bad --vary value and names the point", "[planning]") {
  const fs::path w = work_dir("sweep-bad-value");
  const fs::path s = write_scenario(w, one_node_tasks(2, 2));
  const auto r = schedsim("sweep " + s.string() + " --vary '" + k_count + "=2,-1' --seeds 1 --out " + (w / "o").string());
  CHECK(r.status == 2);
  INFO(r.err);
  CHECK(r.err.find(s.string() + ": cluster.pools[0].node_groups[0].count: -1: ") != std::string::npos);
  CHECK(r.err.find("(from --vary " + std::string(k_count) + "=-1) (point 1)") != std::string::npos);
  CHECK_FALSE(fs::exists(w / "o"));
  // A range with a bad step, and a grid over the run limit.
  const auto st = schedsim("sweep " + s.string() + " --vary '" + k_count + "=1..5:0' --seeds 1 --out " + (w / "o").string());
  CHECK(st.status == 2);
  CHECK(st.err.find("--vary: " + std::string(k_count) + "=1..5:0: step `0` must be a number > 0") != std::string::npos);
  const auto big = schedsim("sweep " + s.string() + " --vary '" + k_count + "=1..1000' --seeds 20 --out " + (w / "o").string());
  CHECK(big.status == 2);
  CHECK(big.err.find("limit of 10000 runs") != std::string::npos);
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("plan refuses a bad --slo, naming the option and the value, and writes nothing", "[planning]") {
  const fs::path w = work_dir("plan-bad-slo");
  const fs::path s = write_scenario(w, one_node_tasks(2, 2));
  const std::string base = "plan " + s.string() + " --vary '" + k_count + "=1..3' --out " + (w / "o").string();
  const auto unknown = schedsim(base + " --slo 'p95_wait<=10'");
  CHECK(unknown.status == 2);
  CHECK(unknown.err.find("--slo: p95_wait<=10: unknown metric `p95_wait`") != std::string::npos);
  const auto op = schedsim(base + " --slo 'p95_wait_s=10'");
  CHECK(op.status == 2);
  CHECK(op.err.find("--slo: p95_wait_s=10: expected METRIC<=VALUE") != std::string::npos);
  const auto nan = schedsim(base + " --slo 'p95_wait_s<=soon'");
  CHECK(nan.status == 2);
  CHECK(nan.err.find("--slo: p95_wait_s<=soon: `soon` is not a finite number") != std::string::npos);
  const auto list = schedsim("plan " + s.string() + " --vary '" + k_count + "=1,2' --slo 'p95_wait_s<=1' --out " + (w / "o").string());
  CHECK(list.status == 2);
  CHECK(list.err.find("plan needs a numeric range") != std::string::npos);
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("plan --complement moves the rest of a total to another path", "[planning]") {
  // Two node groups sharing 6 nodes: the first gets `value`, the second 6 - value. Tasks need
  // the first group's prefix... any node fits, so every split of 6 nodes meets the SLO; the
  // complement is checked through the plan's validation: a value above TOTAL gives a negative
  // count, refused before simulating.
  const fs::path w = work_dir("plan-complement");
  std::string text = one_node_tasks(6, 3);
  const std::string group = R"({"prefix": "n-", "count": 3, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960})";
  const auto at = text.find(R"({"prefix": "n-")");
  REQUIRE(at != std::string::npos);
  text.replace(at, text.find("}]}]}", at) + 1 - at, group + R"(, {"prefix": "m-", "count": 3, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960})");
  const fs::path s = write_scenario(w, text);
  const auto ok = schedsim("plan " + s.string() + " --vary '" + k_count + "=1..5' --complement 'cluster.pools[p].node_groups[1].count=6'" +
                           " --slo 'p95_wait_s<=0' --no-progress --out " + (w / "o").string());
  INFO(ok.out << ok.err);
  REQUIRE(ok.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "plan.json"));
  CHECK(j["answer"] == 1);  // 6 nodes in all at every point: no task waits
  const auto bad = schedsim("plan " + s.string() + " --vary '" + k_count + "=1..7' --complement 'cluster.pools[p].node_groups[1].count=6'" +
                            " --slo 'p95_wait_s<=0' --no-progress --out " + (w / "o2").string());
  CHECK(bad.status == 2);
  CHECK(bad.err.find("(from --complement cluster.pools[p].node_groups[1].count=-1) (point 6)") != std::string::npos);
  CHECK_FALSE(fs::exists(w / "o2"));
  fs::remove_all(w);
}

TEST_CASE("plan reports a non-monotone metric: a value below the answer also meets the SLO", "[planning]") {
  // 4 one-node tasks of 600 s: the GPU allocation ratio is 4 / (nodes x ceil(4 / nodes)):
  // 1 with 2 nodes, 2/3 with 3, 1 with 4, 0.8 with 5. Bisection over 2..5 finds 4; 2 also meets, so
  // every value below 4 is evaluated and the answer is 2.
  const fs::path w = work_dir("plan-nonmonotone");
  const fs::path s = write_scenario(w, one_node_tasks(4, 1));
  const auto r = schedsim("plan " + s.string() + " --vary '" + k_count + "=2..5' --slo 'gpu_allocation_ratio>=0.8' --no-progress --out " +
                          (w / "o").string());
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "plan.json"));
  CHECK(j["answer"] == 2);
  CHECK(j["bisection_answer"] == 4);
  CHECK(j["unevaluated_below"] == 0);
  CHECK(j["met"] == true);
  CHECK(j["monotone"] == false);
  REQUIRE(j["points"].size() == 4);
  CHECK(j["points"][0]["value"] == 2);
  CHECK(j["points"][0]["met"] == true);
  CHECK(j["points"][1]["met"] == false);
  CHECK(r.err.find("warning: the SLOs are not monotone") != std::string::npos);
  CHECK(r.out.find(std::string("  not monotone: every value was evaluated below ") + k_count + "=4\n") != std::string::npos);
  CHECK(last_line(r.out) == std::string("answer: ") + k_count + "=2");
  fs::remove_all(w);
}

TEST_CASE("compare refuses a bad --set-b naming the option, and writes nothing", "[planning]") {
  const fs::path w = work_dir("compare-bad");
  const fs::path s = write_scenario(w, one_node_tasks(2, 2));
  const auto r = schedsim("compare " + s.string() + " " + s.string() + " --set-b 'tasks[zz].priority=3' --out " + (w / "o").string());
  CHECK(r.status == 2);
  CHECK(r.err.find("--set-b: tasks[zz].priority: 3: tasks[zz]: no such element") != std::string::npos);
  const auto n = schedsim("compare " + s.string() + " " + s.string() + " --set-a nope --out " + (w / "o").string());
  CHECK(n.status == 2);
  CHECK(n.err.find("--set-a: nope: expected PATH=VALUE") != std::string::npos);
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("run --seeds refuses seeds past 2^64 - 1 and bad --seeds / --jobs values", "[planning]") {
  const fs::path w = work_dir("seeds-bad");
  const fs::path s = write_scenario(w, one_node_tasks(2, 2));
  const auto r = schedsim("run " + s.string() + " --seed 18446744073709551615 --seeds 2 --out " + (w / "o").string());
  CHECK(r.status == 2);
  CHECK(r.err.find("--seeds: 2: the seeds 18446744073709551615 .. 18446744073709551615 + 2 - 1 do not fit") != std::string::npos);
  const auto z = schedsim("run " + s.string() + " --seeds 0 --out " + (w / "o").string());
  CHECK(z.status == 2);
  CHECK(z.err.find("--seeds: 0: must be an integer from 1 to 10000") != std::string::npos);
  const auto j = schedsim("run " + s.string() + " --seeds 2 --jobs 0 --out " + (w / "o").string());
  CHECK(j.status == 2);
  CHECK(j.err.find("--jobs: 0: must be an integer from 1 to 256") != std::string::npos);
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

}  // namespace SCHEDSIM_UNITY_ID
