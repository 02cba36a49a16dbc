// `schedsim backtest SCENARIO --every T --out DIR` (docs/forecast.md "Backtest"): snapshots of a
// replay, a forecast and a baseline from each, scored against the replay's starts. The binary is
// run as a user would.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/common/files.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace {

/// One 8-GPU node; a (0 s, runs 1000 s), b (100 s, 500 s), c (200 s, 300 s) each need the whole
/// node: the replay runs a 0-1000, b 1000-1500, c 1500-1800. Every task's runtime estimate is
/// `factor` x its run time.
std::string scenario(int factor) {
  const std::string shape = R"("type": "PyTorchJob", "workers": 0, "resource_type": "pay_as_you_go", "replica": {"gpus": 8, "vcpu": 8, "memory_gib": 64})";
  std::string tasks;
  const char* names[] = {"a", "b", "c"};
  const int submit[] = {0, 100, 200};
  const int run[] = {1000, 500, 300};
  for (int i = 0; i < 3; ++i)
    tasks += std::string(i ? ", " : "") + "{\"name\": \"" + names[i] + "\", \"user\": \"u\", \"submit_s\": " + std::to_string(submit[i]) +
             ", " + shape + ", \"duration_s\": " + std::to_string(run[i]) + ", \"runtime_estimate_s\": " + std::to_string(factor * run[i]) + "}";
  return R"({"schema": "schedsim/v1", "name": "bt", "seed": 1,
    "cluster": {"name": "c", "region": "r", "instance_specs": [],
                "pools": [{"name": "p", "kind": "shared", "nodes": [{"name": "n0", "gpu_model": "A100", "gpus": 8, "vcpu": 64, "memory_gib": 512}]}]},
    "scheduler": {"placement": "best-fit", "preemption": false, "queueing": "greedy"},
    "tasks": [)" + tasks + "]}";
}

struct BacktestRun {
  int status = -1;
  std::string csv, json, err;
  bool wrote = false;
};

BacktestRun backtest(const std::string& sc, const std::string& options, const std::string& name) {
  const auto o = testutil::run_out_folder(SCHEDSIM_BINARY, "backtest", "s.json", sc, options, {"backtest.csv", "backtest.json"}, "backtest-" + name);
  return {o.status, o.files.at("backtest.csv"), o.files.at("backtest.json"), o.err, o.wrote};
}

}  // namespace

TEST_CASE("backtest: estimates equal to the run times give exact starts for the forecast and the baseline", "[backtest]") {
  // Snapshots at 400, 800, 1200, 1600 s: b and c wait at 400 and 800, c at 1200, nobody at 1600.
  const BacktestRun r = backtest(scenario(1), "--every 400", "exact");
  REQUIRE(r.status == 0);
  CHECK(r.csv ==
        "snapshot_s,task,actual_start_s,baseline_start_s,p10_start_s,p50_start_s,p90_start_s\n"
        "400,b,1000,1000,1000,1000,1000\n400,c,1500,1500,1500,1500,1500\n"
        "800,b,1000,1000,1000,1000,1000\n800,c,1500,1500,1500,1500,1500\n"
        "1200,c,1500,1500,1500,1500,1500\n");
  const auto j = nlohmann::json::parse(r.json);
  CHECK(j["snapshots"] == 4);
  CHECK(j["waiting"] == 5);
  CHECK(j["compared"] == 5);
  for (const char* who : {"forecast", "baseline"}) {
    CHECK(j[who]["mae_s"].get<double>() == 0.0);
    CHECK(j[who]["within_1min"].get<double>() == 1.0);
    CHECK(j[who]["within_10min"].get<double>() == 1.0);
    CHECK(j[who]["within_1h"].get<double>() == 1.0);
    CHECK(j[who]["p10_p90_coverage"].get<double>() == 1.0);
  }
}

TEST_CASE("backtest: the empirical model learns the run time / estimate ratio of the tasks finished by a snapshot", "[backtest]") {
  // Estimates are twice the run times. At 400 and 800 nothing has finished: both predict a's end
  // at its estimate 2000, b at 2000 and c at 2000 + 1000 = 3000 (errors 1000, 1500, 1000, 1500 s).
  // At 1200 a finished (ratio 0.5): the forecast ends b at 1000 + 0.5 x 1000 = 1500 (c at 1500,
  // error 0), the baseline at 1000 + 1000 = 2000 (error 500).
  const BacktestRun r = backtest(scenario(2), "--every 400 --samples 4", "ratio");
  REQUIRE(r.status == 0);
  CHECK(r.csv ==
        "snapshot_s,task,actual_start_s,baseline_start_s,p10_start_s,p50_start_s,p90_start_s\n"
        "400,b,1000,2000,2000,2000,2000\n400,c,1500,3000,3000,3000,3000\n"
        "800,b,1000,2000,2000,2000,2000\n800,c,1500,3000,3000,3000,3000\n"
        "1200,c,1500,2000,1500,1500,1500\n");
  const auto j = nlohmann::json::parse(r.json);
  CHECK(j["baseline"]["mae_s"].get<double>() == 1100.0);  // (1000 + 1500 + 1000 + 1500 + 500) / 5
  CHECK(j["baseline"]["within_1min"].get<double>() == 0.0);
  CHECK(j["baseline"]["within_10min"].get<double>() == 0.2);
  CHECK(j["baseline"]["within_1h"].get<double>() == 1.0);
  CHECK(j["baseline"]["p10_p90_coverage"].get<double>() == 0.0);
  CHECK(j["forecast"]["mae_s"].get<double>() == 1000.0);  // (1000 + 1500 + 1000 + 1500 + 0) / 5
  CHECK(j["forecast"]["within_1min"].get<double>() == 0.2);
  CHECK(j["forecast"]["within_10min"].get<double>() == 0.2);
  CHECK(j["forecast"]["p10_p90_coverage"].get<double>() == 0.2);
}

TEST_CASE("backtest: --max-snapshots keeps the first N snapshots", "[backtest]") {
  const BacktestRun r = backtest(scenario(1), "--every 400 --max-snapshots 1", "max");
  REQUIRE(r.status == 0);
  CHECK(r.csv ==
        "snapshot_s,task,actual_start_s,baseline_start_s,p10_start_s,p50_start_s,p90_start_s\n"
        "400,b,1000,1000,1000,1000,1000\n400,c,1500,1500,1500,1500,1500\n");
  CHECK(nlohmann::json::parse(r.json)["snapshots"] == 1);
}

TEST_CASE("backtest: backtest.json has the documented keys in order", "[backtest]") {
  const BacktestRun r = backtest(scenario(1), "--every 400", "keys");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::ordered_json::parse(r.json);
  std::string keys;
  for (const auto& [k, v] : j.items()) keys += k + " ";
  CHECK(keys == "schema scenario every_s model spread samples seed horizon_s max_snapshots snapshots snapshots_skipped waiting compared "
                "forecast baseline ");
  CHECK(j["schema"] == "schedsim/backtest-v1");
  std::string score_keys;
  for (const auto& [k, v] : j["forecast"].items()) score_keys += k + " ";
  CHECK(score_keys == "within_1min within_10min within_1h mae_s p10_p90_coverage ");
}

TEST_CASE("backtest: the same scenario and seed give the same bytes", "[backtest]") {
  const BacktestRun a = backtest(scenario(2), "--every 300 --samples 16 --model uniform --seed 5", "same");
  const BacktestRun b = backtest(scenario(2), "--every 300 --samples 16 --model uniform --seed 5", "same");
  REQUIRE(a.status == 0);
  CHECK(a.csv == b.csv);
  CHECK(a.json == b.json);
}

TEST_CASE("backtest: --every must be a number of seconds > 0", "[backtest]") {
  for (const char* bad : {"0", "-5", "x"}) {
    const BacktestRun r = backtest(scenario(1), std::string("--every ") + bad, "every");
    CHECK(r.status == 2);
    CHECK_FALSE(r.wrote);
    CHECK(r.err.find("must be a number of seconds > 0 and <= 1e9") != std::string::npos);
  }
  const BacktestRun missing = backtest(scenario(1), "", "every-missing");
  CHECK(missing.status == 2);
  CHECK_FALSE(missing.wrote);
}

TEST_CASE("backtest: --model must be empirical or uniform", "[backtest]") {
  const BacktestRun r = backtest(scenario(1), "--every 400 --model normal", "model");
  CHECK(r.status == 2);
  CHECK_FALSE(r.wrote);
  CHECK(r.err.find("normal: must be empirical or uniform") != std::string::npos);
}

TEST_CASE("backtest: an invalid scenario is refused with its diagnostic and nothing written", "[backtest]") {
  std::string sc = scenario(1);
  sc.replace(sc.find("\"duration_s\": 1000"), 18, "\"duration_s\": -1");
  const BacktestRun r = backtest(sc, "--every 400", "bad-scenario");
  CHECK(r.status == 2);
  CHECK_FALSE(r.wrote);
  CHECK(r.err.find("tasks[0].duration_s: -1:") != std::string::npos);
}

}  // namespace SCHEDSIM_UNITY_ID
