// Spot reclaims with a notice (issue 39), seen from the command line: bad `spot_reclaim` values
// exit 2 with one line naming the path, in `validate` and in `run` alike; a reclaim's lost work and
// its cost show in tasks.csv and summary.json, with and without checkpoint_on_notice.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/common/files.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

namespace fs = std::filesystem;
using nlohmann::json;
using testutil::slurp;

static testutil::CommandResult schedsim(const std::string& args) {
  return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "spot-reclaim");
}

static fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("spot-reclaim-" + name);
  fs::create_directories(d);
  return d;
}

/// A pay-as-you-go task t0 (900 s) and a spot task t1 (1800 s, checkpoint every 600 s, one
/// resubmission) on two 8-GPU A100 nodes; spot at 1.6 per GPU-hour; a `spot_reclaim` event on
/// both nodes at 1000 s with 120 s of notice; `spot_reclaim` (JSON text) as the section.
static std::string scenario_with(const std::string& spot_reclaim, bool on_notice) {
  return R"({
  "schema": "schedsim/v1", "name": "spot", "seed": 7,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}],
    "pools": [{"name": "p", "kind": "shared",
      "node_groups": [{"prefix": "n-", "count": 2, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
  "tasks": [
    {"name": "t0", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "resource_type": "pay_as_you_go", "duration_s": 900},
    {"name": "t1", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "resource_type": "spot", "duration_s": 1800, "checkpoint_interval_s": 600,
     "fault_tolerance": {"max_resubmissions": 1}, "checkpoint_on_notice": )" +
         std::string(on_notice ? "true" : "false") + R"(}
  ],
  "events": [{"at_s": 1000, "kind": "spot_reclaim", "nodes": ["n-0", "n-1"], "notice_s": 120}],
  "prices": {"currency": "USD", "gpu_models": {"A100": {"pay_as_you_go": 4, "spot": 1.6}}},
  "spot_reclaim": )" + spot_reclaim + "}\n";
}

static fs::path write_scenario(const fs::path& dir, const std::string& text) {
  const fs::path p = dir / "s.json";
  std::ofstream(p) << text;
  return p;
}

/// `validate` and `run` both exit 2 with exactly the one stderr line `FILE: PATH: VALUE: RULE`.
static void both_refuse(const std::string& name, const std::string& section, const std::string& line) {
  const fs::path w = work_dir(name);
  const fs::path s = write_scenario(w, scenario_with(section, false));
  for (const std::string& cmd : {"validate " + s.string(), "run " + s.string() + " --no-progress --out " + (w / "o").string()}) {
    const auto r = schedsim(cmd);
    INFO(cmd << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.err == s.string() + ": " + line + "\n");
  }
  CHECK_FALSE(fs::exists(w / "o"));
}

TEST_CASE("spot reclaim e2e: a negative rate exits 2 naming its path, in validate and run") {
  both_refuse("negative", R"({"gpu_models": {"A100": {"rate_per_node_h": -0.5}}})",
              "spot_reclaim.gpu_models.A100.rate_per_node_h: -0.5: must be between 0 and 1");
}

TEST_CASE("spot reclaim e2e: a rate that is not a number exits 2") {
  both_refuse("nan", R"({"gpu_models": {"A100": {"rate_per_node_h": "NaN"}}})",
              "spot_reclaim.gpu_models.A100.rate_per_node_h: \"NaN\": must be a number");
}

TEST_CASE("spot reclaim e2e: a negative notice exits 2") {
  both_refuse("notice", R"({"pools": {"p": {"rate_per_node_h": 0.1, "notice_s": -1}}})",
              "spot_reclaim.pools.p.notice_s: -1: must be between 0 and 1000000000");
}

TEST_CASE("spot reclaim e2e: an unknown GPU model exits 2") {
  both_refuse("model", R"({"gpu_models": {"V100": {"rate_per_node_h": 0.1}}})",
              "spot_reclaim.gpu_models.V100: \"V100\": unknown GPU model (no node of the cluster has it)");
}

TEST_CASE("spot reclaim e2e: an unknown pool exits 2") {
  both_refuse("pool", R"({"pools": {"q": {"rate_per_node_h": 0.1}}})", "spot_reclaim.pools.q: \"q\": unknown pool (not in cluster.pools)");
}

/// The fields of one CSV line (quoted fields may hold commas; `""` is a quote).
static std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

/// tasks.csv rows of task `task` as column -> value.
static std::vector<std::map<std::string, std::string>> task_rows(const std::string& csv, const std::string& task) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  const auto header = csv_fields(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const auto f = csv_fields(line);
    if (f[0] != task) continue;
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

TEST_CASE("spot reclaim e2e: the lost work of a noticed reclaim and its cost, with and without checkpoint_on_notice") {
  for (const bool on_notice : {false, true}) {
    INFO("checkpoint_on_notice " << on_notice);
    const fs::path w = work_dir(on_notice ? "run-on-notice" : "run");
    const fs::path s = write_scenario(w, scenario_with(R"({"gpu_models": {"A100": {"rate_per_node_h": 0}}})", on_notice));
    const auto r = schedsim("run " + s.string() + " --no-progress --out " + (w / "o").string());
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto rows = task_rows(slurp(w / "o" / "tasks.csv"), "t1");
    REQUIRE(rows.size() == 2);
    // Noticed at 1000 s, evicted at 1120 s. Saved: floor(1120 / 600) x 600 = 600 s, or 1000 s
    // with checkpoint_on_notice; lost 520 s or 120 s of 8 GPUs at 1.6 per GPU-hour.
    CHECK(rows[0].at("end_s") == "1120");
    CHECK(rows[0].at("end_reason") == "spot_eviction");
    CHECK(rows[0].at("lost_work_s") == (on_notice ? "120" : "520"));
    CHECK(rows[0].at("cost") == "3.982");  // 8 GPUs x 1120 / 3600 h x 1.6 = 3.9822
    CHECK(rows[1].at("end_s") == (on_notice ? "1920" : "2320"));  // 1120 + 800 or 1120 + 1200
    const json j = json::parse(slurp(w / "o" / "summary.json"));
    CHECK(j["lost_work_s"] == (on_notice ? 120 : 520));
    CHECK(j["cost_lost_work"] == (on_notice ? 0.427 : 1.849));  // 12.8 x 120 / 3600, 12.8 x 520 / 3600
    CHECK(j["cost_spot"] == (on_notice ? 6.827 : 8.249));       // 12.8 x (1120 + 800) / 3600, 12.8 x (1120 + 1200) / 3600
    const json resolved = json::parse(slurp(w / "o" / "scenario.resolved.json"));
    CHECK(resolved["events"][0]["notice_s"] == 120);
    CHECK(resolved["spot_reclaim"]["gpu_models"]["A100"]["notice_s"] == 120);
  }
}

}  // namespace SCHEDSIM_UNITY_ID
