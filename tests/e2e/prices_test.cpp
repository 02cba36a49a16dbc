// Issue 39 (money), seen from the command line: bad prices exit 2 with one line naming the path,
// in `validate` and in `run` alike; the example scenario runs and prices every class; the cost
// metrics are summary metrics (run --seeds, --slo).
#include <algorithm>
#include <cmath>
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

testutil::CommandResult schedsim(const std::string& args) {
  return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "prices");
}

fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("prices-" + name);
  fs::create_directories(d);
  return d;
}

/// One pay-as-you-go and one spot task on two 8-GPU A100 nodes, with `prices` (JSON text).
std::string scenario_with(const std::string& prices) {
  return R"({
  "schema": "schedsim/v1", "name": "money", "seed": 7,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}],
    "pools": [{"name": "p", "kind": "shared",
      "node_groups": [{"prefix": "n-", "count": 2, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
  "tasks": [
    {"name": "t0", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "resource_type": "pay_as_you_go", "duration_s": 900},
    {"name": "t1", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "resource_type": "spot", "duration_s": 1800}
  ],
  "prices": )" + prices + "}\n";
}

fs::path write_scenario(const fs::path& dir, const std::string& text) {
  const fs::path p = dir / "s.json";
  std::ofstream(p) << text;
  return p;
}

/// `validate` and `run` both exit 2 with exactly one stderr line starting with FILE: PATH:.
void both_refuse(const std::string& name, const std::string& prices, const std::string& path) {
  const fs::path w = work_dir(name);
  const fs::path s = write_scenario(w, scenario_with(prices));
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

TEST_CASE("prices e2e: a negative price exits 2 naming its path, in validate and run") {
  both_refuse("negative", R"({"currency": "USD", "gpu_models": {"A100": {"spot": -1}}})", "prices.gpu_models.A100.spot");
}

TEST_CASE("prices e2e: an unknown class key exits 2 naming its path") {
  both_refuse("class", R"({"currency": "USD", "gpu_models": {"A100": {"ondemand": 4}}})", "prices.gpu_models.A100.ondemand");
}

TEST_CASE("prices e2e: an unknown key of prices exits 2 naming its path") {
  both_refuse("key", R"({"currency": "USD", "gpu_model": {}})", "prices.gpu_model");
}

TEST_CASE("prices e2e: an unknown GPU model exits 2 naming its path") {
  both_refuse("model", R"({"currency": "USD", "gpu_models": {"A100": {"pay_as_you_go": 4, "spot": 1.6}, "V100": {"spot": 1}}})",
              "prices.gpu_models.V100");
}

TEST_CASE("prices e2e: an unknown spec exits 2 naming its path") {
  both_refuse("spec", R"({"currency": "USD", "gpu_models": {"A100": {"pay_as_you_go": 4, "spot": 1.6}},
                          "instance_specs": {"a100.4x": {"spot": 6}}})",
              "prices.instance_specs.a100.4x");
}

TEST_CASE("prices e2e: validate warns once about an unpriced class the tasks use; run charges it 0") {
  const fs::path w = work_dir("unpriced");
  const fs::path s = write_scenario(w, scenario_with(R"({"currency": "EUR", "gpu_models": {"A100": {"pay_as_you_go": 4}}})"));
  const auto v = schedsim("validate " + s.string());
  INFO(v.err);
  CHECK(v.status == 0);
  CHECK(v.err.rfind(s.string() + ": warning: prices: \"spot\": spot capacity is used but not priced everywhere", 0) == 0);
  CHECK(std::count(v.err.begin(), v.err.end(), '\n') == 1);
  const auto r = schedsim("run " + s.string() + " --no-progress --out " + (w / "o").string());
  REQUIRE(r.status == 0);
  const json j = json::parse(slurp(w / "o" / "summary.json"));
  CHECK(j["currency"] == "EUR");
  CHECK(j["cost_pay_as_you_go"] == 8);  // 8 GPUs x 0.25 h x 4
  CHECK(j["cost_spot"] == 0);
  CHECK(j["cost_total"] == 8);
  const std::string prom = slurp(w / "o" / "metrics.prom");
  CHECK(prom.find("schedsim_cost{cluster=\"c\",region=\"r\",currency=\"EUR\",kind=\"total\"} 8\n") != std::string::npos);
}

TEST_CASE("prices e2e: scenarios/prices.json validates without a warning and prices every class") {
  const std::string file = std::string(SCHEDSIM_TEST_DIR) + "/../scenarios/prices.json";
  const auto v = schedsim("validate " + file);
  INFO(v.err);
  CHECK(v.status == 0);
  CHECK(v.err.empty());
  const fs::path w = work_dir("example");
  const auto r = schedsim("run " + file + " --no-progress --out " + (w / "o").string());
  REQUIRE(r.status == 0);
  const json j = json::parse(slurp(w / "o" / "summary.json"));
  CHECK(j["currency"] == "USD");
  for (const char* k : {"cost_reserved", "cost_pay_as_you_go", "cost_spot", "cost_idle"}) CHECK(j[k].get<double>() > 0);
  const double classes = j["cost_reserved"].get<double>() + j["cost_pay_as_you_go"].get<double>() +
                         j["cost_spot"].get<double>() + j["cost_idle"].get<double>();
  CHECK(std::fabs(classes - j["cost_total"].get<double>()) <= 0.002);
  const json resolved = json::parse(slurp(w / "o" / "scenario.resolved.json"));
  CHECK(resolved["prices"]["instance_specs"]["a100.8x"]["pay_as_you_go"] == 32.77);
}

TEST_CASE("prices e2e: the costs are summary metrics (run --seeds, plan --slo)") {
  const fs::path w = work_dir("seeds");
  const fs::path s = write_scenario(w, scenario_with(R"({"currency": "USD", "gpu_models": {"A100": {"pay_as_you_go": 4, "spot": 1.6}}})"));
  const auto r = schedsim("run " + s.string() + " --seeds 2 --no-progress --out " + (w / "o").string());
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json j = json::parse(slurp(w / "o" / "seeds_summary.json"));
  CHECK(j["cost_total"]["mean"] == 14.4);  // 8 GPUs x 0.25 h x 4 + 8 GPUs x 0.5 h x 1.6
  CHECK(j["cost_lost_work"]["mean"] == 0);
  const auto p = schedsim("plan " + s.string() + " --vary 'cluster.pools[p].node_groups[0].count=1..2' --slo 'cost_total<=15' --seeds 2 "
                          "--no-progress --out " + (w / "plan").string());
  INFO(p.err);
  CHECK(p.status == 0);
}

}  // namespace SCHEDSIM_UNITY_ID
