// `schedsim forecast SNAPSHOT --out DIR` (docs/forecast.md): start-time quantiles of the waiting
// tasks of a decide snapshot over K forward simulations. The binary is run as a user would.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/common/files.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace {

/// One 8-GPU node; `a` (8 GPUs, runtime estimate 1000 s) runs since 0; at now_s 400 `b`
/// (estimate 500 s) then `c` (duration 300 s) wait for the whole node, in that queue order.
/// Exact ends: a at 1000, b starts at 1000 and ends at 1500, c starts at 1500.
std::string snapshot(const std::string& c_runtime = "\"duration_s\": 300") {
  const std::string node = R"({"pools": [{"name": "p", "kind": "shared", "nodes": [{"name": "n0", "gpu_model": "A100", "gpus": 8, "vcpu": 64, "memory_gib": 512}]}]})";
  const std::string shape = R"("type": "PyTorchJob", "workers": 0, "resource_type": "pay_as_you_go", "replica": {"gpus": 8, "vcpu": 8, "memory_gib": 64})";
  return "{\"schema\": \"schedsim/decide-v1\", \"now_s\": 400, \"cluster\": " + node + ", \"tasks\": [" +
         "{\"name\": \"a\", \"user\": \"u\", \"submit_s\": 0, " + shape +
         ", \"runtime_estimate_s\": 1000, \"running\": {\"start_s\": 0, \"replicas\": [{\"node\": \"n0\"}]}}, " +
         "{\"name\": \"b\", \"user\": \"u\", \"submit_s\": 100, " + shape + ", \"runtime_estimate_s\": 500}, " +
         "{\"name\": \"c\", \"user\": \"u\", \"submit_s\": 200, " + shape + (c_runtime.empty() ? "" : ", " + c_runtime) + "}]}";
}

struct ForecastRun {
  int status = -1;
  std::string csv, json, err;
  bool wrote = false;
};

ForecastRun forecast(const std::string& snap, const std::string& options, const std::string& name) {
  const auto o = testutil::run_out_folder(SCHEDSIM_BINARY, "forecast", "snap.json", snap, options, {"forecast.csv", "forecast.json"}, "forecast-" + name);
  return {o.status, o.files.at("forecast.csv"), o.files.at("forecast.json"), o.err, o.wrote};
}

/// The cells of the row of `task` in forecast.csv (up to the reason).
std::vector<std::string> row(const std::string& csv, const std::string& task) {
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(task + ",", 0) != 0) continue;
    std::vector<std::string> cells;
    std::istringstream ls(line);
    for (std::string c; cells.size() < 5 && std::getline(ls, c, ',');) cells.push_back(c);
    return cells;
  }
  return {};
}

const char* k_wait_reason = "needs 1 x 8 GPU on any GPU model; 0 GPU free in eligible nodes";

}  // namespace

TEST_CASE("forecast: exact remaining times (--spread 0) give P10 = P50 = P90 = the hand-derived start", "[forecast]") {
  for (const char* samples : {"1", "20"}) {
    const ForecastRun r = forecast(snapshot(), std::string("--spread 0 --samples ") + samples, "exact");
    REQUIRE(r.status == 0);
    CHECK(r.csv == std::string("task,p10_start_s,p50_start_s,p90_start_s,prob_start_within_1h,reason\n") +
                       "b,1000,1000,1000,1," + k_wait_reason + "\n" + "c,1500,1500,1500,1," + k_wait_reason + "\n");
  }
}

TEST_CASE("forecast: a start beyond the horizon leaves its quantile cells empty", "[forecast]") {
  // Horizon 800 s from now 400: up to 1200. b starts at 1000, c at 1500 (beyond).
  const ForecastRun r = forecast(snapshot(), "--spread 0 --samples 1 --horizon-s 800", "horizon");
  REQUIRE(r.status == 0);
  CHECK(row(r.csv, "b") == std::vector<std::string>{"b", "1000", "1000", "1000", "1"});
  CHECK(row(r.csv, "c") == std::vector<std::string>{"c", "", "", "", "0"});
}

TEST_CASE("forecast: with sampled remaining times the quantiles bracket the exact start", "[forecast]") {
  // a's duration is uniform in [500, 1500] (spread 0.5, all beyond its 400 s elapsed): b starts
  // when a ends, c 500 s later; the exact answers 1000 and 1500 are the medians.
  for (int seed = 1; seed <= 5; ++seed) {
    const ForecastRun r = forecast(snapshot(), "--samples 200 --seed " + std::to_string(seed), "bracket");
    REQUIRE(r.status == 0);
    for (const auto& [task, exact, lo, hi] : {std::tuple{"b", 1000.0, 500.0, 1500.0}, std::tuple{"c", 1500.0, 1000.0, 2000.0}}) {
      const auto cells = row(r.csv, task);
      REQUIRE(cells.size() == 5);
      const double p10 = std::stod(cells[1]), p50 = std::stod(cells[2]), p90 = std::stod(cells[3]);
      CHECK(lo <= p10);
      CHECK(p10 <= p50);
      CHECK(p50 <= p90);
      CHECK(p90 <= hi);
      CHECK(p10 <= exact);
      CHECK(exact <= p90);
      CHECK(p10 < p90);  // the spread shows
    }
  }
}

TEST_CASE("forecast: the same seed gives the same bytes, another seed other quantiles", "[forecast]") {
  const ForecastRun a = forecast(snapshot(), "--samples 50 --seed 7", "same");
  const ForecastRun b = forecast(snapshot(), "--samples 50 --seed 7", "same");  // same path: forecast.json names it
  const ForecastRun c = forecast(snapshot(), "--samples 50 --seed 8", "same3");
  REQUIRE(a.status == 0);
  CHECK(a.csv == b.csv);
  CHECK(a.json == b.json);
  CHECK(a.csv != c.csv);
}

TEST_CASE("forecast: bad options exit 2 and write nothing", "[forecast]") {
  for (const char* opt : {"--samples 0", "--samples 10001", "--samples x", "--spread 1.5", "--spread -0.1", "--horizon-s 0",
                          "--horizon-s 2e9", "--seed -1"}) {
    const ForecastRun r = forecast(snapshot(), opt, "badopt");
    CHECK(r.status == 2);
    CHECK(!r.wrote);
  }
  const ForecastRun r = forecast(snapshot(), "--samples 0", "badopt2");
  CHECK(r.err.find("--samples: 0: must be an integer from 1 to 10000 (a number of samples)") != std::string::npos);
}

TEST_CASE("forecast: a task without duration_s or runtime_estimate_s is refused (exit 2)", "[forecast]") {
  const ForecastRun r = forecast(snapshot(""), "", "noruntime");
  CHECK(r.status == 2);
  CHECK(!r.wrote);
  CHECK(r.err.find(": tasks[2].runtime_estimate_s: <missing>: forecast needs the task's run time: duration_s or runtime_estimate_s\n") !=
        std::string::npos);
}

TEST_CASE("forecast: an invalid snapshot exits 2 with decide's diagnostics", "[forecast]") {
  std::string bad = snapshot();
  bad.replace(bad.find("\"now_s\": 400"), 12, "\"now_s\": -1");
  const ForecastRun r = forecast(bad, "", "badsnap");
  CHECK(r.status == 2);
  CHECK(!r.wrote);
  CHECK(r.err.find(": now_s: -1: must be between 0 and 1000000000\n") != std::string::npos);
}

}  // namespace SCHEDSIM_UNITY_ID
