// Issue 40, items 3-5 from the command line: bad `arrival_scale` and `measure` values exit 2 with
// one line naming the path in `validate` and `run` alike; `--vary arrival_scale` sweeps load growth;
// `validate` warns about a generator class whose gang can never fit its user's reserved quota.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/common/files.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

namespace fs = std::filesystem;
using nlohmann::json;
using testutil::slurp;

namespace {

testutil::CommandResult schedsim(const std::string& args) {
  return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "load-growth");
}

fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("load-growth-" + name);
  fs::create_directories(d);
  return d;
}

/// One 8-GPU node; 1-GPU tasks t0 (submit 0, 600 s) and t1 (submit 1200 s, 600 s); `extra` keys.
std::string scenario_with(const std::string& extra) {
  return R"({
  "schema": "schedsim/v1", "name": "growth", "seed": 7,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "a100.1x", "gpu_model": "A100", "gpus": 1, "vcpu": 12, "memory_gib": 120},
                       {"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}],
    "pools": [{"name": "p", "kind": "shared",
      "node_groups": [{"prefix": "n-", "count": 2, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
  "tasks": [
    {"name": "t0", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.1x"],
     "resource_type": "pay_as_you_go", "duration_s": 600},
    {"name": "t1", "user": "u", "submit_s": 1200, "type": "PyTorchJob", "workers": 0, "specs": ["a100.1x"],
     "resource_type": "pay_as_you_go", "duration_s": 600}
  ])" + extra + "}\n";
}

fs::path write_scenario(const fs::path& dir, const std::string& text) {
  const fs::path p = dir / "s.json";
  std::ofstream(p) << text;
  return p;
}

/// `validate` and `run` both exit 2 with exactly one stderr line `FILE: PATH: ...`.
void both_refuse(const std::string& name, const std::string& extra, const std::string& path) {
  const fs::path w = work_dir(name);
  const fs::path s = write_scenario(w, scenario_with(extra));
  const std::string prefix = s.string() + ": " + path + ": ";
  for (const std::string& cmd : {"validate " + s.string(), "run " + s.string() + " --no-progress --out " + (w / "o").string()}) {
    const auto r = schedsim(cmd);
    INFO(cmd << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.rfind(prefix, 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK_FALSE(fs::exists(w / "o"));
}

}  // namespace

TEST_CASE("load growth e2e: arrival_scale 0 exits 2 naming the path", "[load_growth]") {
  both_refuse("zero", R"(, "arrival_scale": 0)", "arrival_scale");
}

TEST_CASE("load growth e2e: a negative arrival_scale exits 2", "[load_growth]") {
  both_refuse("negative", R"(, "arrival_scale": -0.5)", "arrival_scale");
}

TEST_CASE("load growth e2e: an arrival_scale above 1000 exits 2", "[load_growth]") {
  both_refuse("huge", R"(, "arrival_scale": 1e308)", "arrival_scale");
}

TEST_CASE("load growth e2e: a non-number arrival_scale exits 2", "[load_growth]") {
  both_refuse("string", R"(, "arrival_scale": "fast")", "arrival_scale");
}

TEST_CASE("load growth e2e: --set arrival_scale=0 exits 2 naming the path", "[load_growth]") {
  const fs::path w = work_dir("set-zero");
  const fs::path s = write_scenario(w, scenario_with(""));
  const auto r = schedsim("validate " + s.string() + " --set arrival_scale=0");
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK(r.err.find("arrival_scale: 0: must be > 0") != std::string::npos);
}

TEST_CASE("measure e2e: a negative start_s exits 2", "[measure]") {
  both_refuse("start", R"(, "measure": {"start_s": -1, "end_s": 100})", "measure.start_s");
}

TEST_CASE("measure e2e: end_s not above start_s exits 2", "[measure]") {
  both_refuse("order", R"(, "measure": {"start_s": 100, "end_s": 100})", "measure.end_s");
}

TEST_CASE("measure e2e: a missing end_s exits 2", "[measure]") {
  both_refuse("missing", R"(, "measure": {"start_s": 100})", "measure.end_s");
}

TEST_CASE("measure e2e: an unknown key of measure exits 2", "[measure]") {
  both_refuse("unknown", R"(, "measure": {"start_s": 0, "end_s": 100, "stop_s": 5})", "measure.stop_s");
}

TEST_CASE("measure e2e: measure that is not an object exits 2", "[measure]") {
  both_refuse("type", R"(, "measure": [0, 100])", "measure");
}

TEST_CASE("measure e2e: run writes the window into summary.json and counts only its tasks", "[measure]") {
  const fs::path w = work_dir("run");
  const fs::path s = write_scenario(w, scenario_with(R"(, "measure": {"start_s": 600, "end_s": 3000})"));
  const auto r = schedsim("run " + s.string() + " --no-progress --out " + (w / "o").string());
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json j = json::parse(slurp(w / "o" / "summary.json"));
  CHECK(j["measure"] == json::parse(R"({"start_s": 600, "end_s": 3000, "tasks_measured": 1})"));
  // 1 GPU of 16 busy over [1200, 1800) inside [600, 1800) (the makespan): 600 / (16 x 1200)
  CHECK(j["gpu_allocation_ratio"] == 0.03125);
}

TEST_CASE("load growth e2e: sweep --vary arrival_scale moves the second arrival", "[load_growth]") {
  const fs::path w = work_dir("sweep");
  const fs::path s = write_scenario(w, scenario_with(""));
  const auto r = schedsim("sweep " + s.string() + " --vary arrival_scale=1,0.5 --seeds 1 --out " + (w / "o").string());
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string csv = slurp(w / "o" / "sweep.csv");
  INFO(csv);
  CHECK(csv.find(",arrival_scale,") != std::string::npos);
  // makespan: t1 ends at 1200 + 600 = 1800 s, or at 600 + 600 = 1200 s with the gap halved.
  const auto run = [&](const std::string& scale) {
    const fs::path o = w / ("run-" + scale);
    const auto rr = schedsim("run " + s.string() + " --no-progress --set arrival_scale=" + scale + " --out " + o.string());
    REQUIRE(rr.status == 0);
    return json::parse(slurp(o / "summary.json"));
  };
  CHECK(run("1")["makespan_s"] == 1800);
  CHECK(run("0.5")["makespan_s"] == 1200);
}

TEST_CASE("validate warns (exit 0) when a class's gang can never fit its user's reserved quota", "[load_growth][workload]") {
  const fs::path w = work_dir("class-quota");
  const fs::path s = write_scenario(w, scenario_with(R"(,
  "quotas": [{"user": "vis", "resource_type": "reserved", "pool": "p", "gpus": 8, "vcpu": 96, "memory_gib": 960}],
  "workload": {"tasks": 5, "arrival": {"rate_per_hour": 10},
    "duration": {"distribution": "exponential", "mean_s": 600},
    "classes": [{"name": "vision-gang", "share": 1, "specs": ["a100.8x"], "workers": 1, "resource_type": "reserved",
                 "pool": "p", "users": [{"name": "vis", "share": 1}], "tenants": [{"name": "vision", "share": 1}]}]})"));
  const auto r = schedsim("validate " + s.string());
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find(s.string() + ": warning: workload.classes[0].users[0].resource_type: \"reserved\": the whole task needs 16 GPUs") !=
        std::string::npos);
  CHECK(r.err.find("more than the quota of vis (reserved, pool p)") != std::string::npos);
}

}  // namespace SCHEDSIM_UNITY_ID
