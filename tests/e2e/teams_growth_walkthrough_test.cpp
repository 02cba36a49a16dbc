// docs/planning.md "Walk-through: team workloads, load growth and a measurement window": each
// command of the walk-through, run as written on scenarios/teams-growth.json, and what the text
// says of its output checked against the output files (issue 40, items 3-5).
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/common/files.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kScenario = std::string(SCHEDSIM_SOURCE_DIR) + "/scenarios/teams-growth.json";

testutil::CommandResult schedsim_in(const fs::path& dir, const std::string& args) {
  return testutil::run_command(fmt::format("cd '{}' && {} {}", dir.string(), SCHEDSIM_BINARY, args), "teams-growth");
}

/// The rows of a CSV file as column -> value maps (no quoted commas in these files).
std::vector<std::map<std::string, std::string>> csv_rows(const fs::path& p) {
  std::istringstream in(testutil::slurp(p));
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string c; std::getline(hs, c, ',');) header.push_back(c);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    std::stringstream ls(line);
    std::string c;
    for (std::size_t i = 0; i < header.size() && std::getline(ls, c, ','); ++i) row[header[i]] = c;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

TEST_CASE("walk-through, teams: each generator class's tasks belong to its tenant, users, shape and pool", "[walkthrough][teams]") {
  const fs::path w = testutil::fresh_dir("teams-growth-run");
  fs::create_directories(w);
  const auto r = schedsim_in(w, fmt::format("run {} --out teams", kScenario));
  REQUIRE(r.status == 0);
  std::map<std::string, int> by_tenant;
  for (const auto& t : csv_rows(w / "teams" / "tasks.csv")) {
    ++by_tenant[t.at("tenant")];
    if (t.at("tenant") == "vision") {
      CHECK((t.at("user") == "vis-a" || t.at("user") == "vis-b"));
      CHECK(t.at("spec") == "a100.8x");
      CHECK(t.at("pool") == "vision");
      CHECK(t.at("priority") == "7");
      CHECK((t.at("gpus") == "16" || t.at("gpus") == "32"));  // 1 or 3 workers + the master, 8 GPUs each
    } else {
      CHECK(t.at("tenant") == "nlp");
      CHECK(t.at("user") == "nlp-a");
      CHECK(t.at("spec") == "a100.1x");
      CHECK(t.at("pool") == "shared");
      CHECK(t.at("gpus") == "1");
    }
  }
  CHECK(by_tenant.size() == 2);
  CHECK(by_tenant["nlp"] > 3 * by_tenant["vision"]);  // shares 5 : 1
}

TEST_CASE("walk-through, load growth: arrival_scale 1, 0.8, 0.6 replays the same jobs closer together", "[walkthrough][growth]") {
  const fs::path w = testutil::fresh_dir("teams-growth-sweep");
  fs::create_directories(w);
  const auto r = schedsim_in(w, fmt::format("sweep {} --vary arrival_scale=1,0.8,0.6 --metric 'tenant[vision].p95_wait_s' "
                                            "--seeds 3 --out growth",
                                            kScenario));
  REQUIRE(r.status == 0);
  const auto rows = csv_rows(w / "growth" / "sweep.csv");
  REQUIRE(rows.size() == 9);
  std::map<std::string, std::set<std::string>> tasks_by_seed;  // seed -> the task counts at each scale
  for (const auto& row : rows) {
    tasks_by_seed[row.at("seed")].insert(row.at("tasks"));
    CHECK(row.count("tenant[vision].p95_wait_s") == 1);
  }
  for (const auto& [seed, counts] : tasks_by_seed) CHECK(counts.size() == 1);  // the same jobs at every scale
  std::map<std::string, double> mean_p95;
  for (const auto& row : csv_rows(w / "growth" / "sweep_summary.csv"))
    if (row.at("metric") == "p95_wait_s") mean_p95[row.at("arrival_scale")] = std::stod(row.at("mean"));
  REQUIRE(mean_p95.size() == 3);
  // 25 % and 67 % more arrivals per hour: the queue grows (as the walk-through's table shows).
  CHECK(mean_p95["0.8"] > mean_p95["1"]);
  CHECK(mean_p95["0.6"] > mean_p95["0.8"]);
}

TEST_CASE("walk-through, measurement window: only the summary changes; it counts the tasks submitted in the window",
          "[walkthrough][measure]") {
  const fs::path w = testutil::fresh_dir("teams-growth-measure");
  fs::create_directories(w);
  REQUIRE(schedsim_in(w, fmt::format("run {} --out whole", kScenario)).status == 0);
  REQUIRE(schedsim_in(w, fmt::format("run {} --set measure.start_s=21600 --set measure.end_s=151200 --out steady", kScenario))
              .status == 0);
  const json whole = json::parse(testutil::slurp(w / "whole" / "summary.json"));
  const json steady = json::parse(testutil::slurp(w / "steady" / "summary.json"));
  CHECK_FALSE(whole.contains("measure"));
  REQUIRE(steady.contains("measure"));
  CHECK(steady["measure"]["start_s"] == 21600);
  CHECK(steady["measure"]["end_s"] == 151200);
  int in_window = 0;
  for (const auto& t : csv_rows(w / "whole" / "tasks.csv"))
    if (t.at("attempt") == "1") {
      const double s = std::stod(t.at("submit_s"));
      in_window += s >= 21600 && s < 151200;
    }
  CHECK(steady["measure"]["tasks_measured"] == in_window);
  // The simulation is the same run: same tasks, same makespan; the window leaves out the empty
  // start and the drain, so the allocation ratio is higher.
  CHECK(testutil::slurp(w / "whole" / "tasks.csv") == testutil::slurp(w / "steady" / "tasks.csv"));
  CHECK(steady["makespan_s"] == whole["makespan_s"]);
  CHECK(steady["gpu_allocation_ratio"].get<double>() > whole["gpu_allocation_ratio"].get<double>());
}

}  // namespace SCHEDSIM_UNITY_ID
