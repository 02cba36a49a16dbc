// Every scenario in scenarios/ (traces cut to their first jobs) runs and writes only end_reason
// codes of the documented vocabulary; CPU-only traces get a CPU allocation ratio.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/engine/end_reason.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"
#include "sim/engine/simulator.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

TEST_CASE("every scenario in scenarios/ writes end_reason codes from the documented list only") {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(SCHEDSIM_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".json") continue;
    INFO(e.path().string());
    auto parsed = sim::io::load_scenario_file(e.path().string());
    REQUIRE(parsed.ok());
    sim::io::Scenario sc = *parsed.scenario;
    bool cpu_only_trace = false;
    for (auto& t : sc.traces) {
      t.limit = 300;  // the first jobs are enough to exercise the outputs
      cpu_only_trace = cpu_only_trace || t.format == "swf";
    }
    try {
      sim::io::apply_traces(sc);
    } catch (const sim::io::TraceError& err) {
      WARN("skipped (trace data missing): " << err.what());
      continue;
    }
    sim::Simulator s(sc);
    s.run();
    std::istringstream in(s.tasks_csv());
    std::string line;
    std::getline(in, line);
    REQUIRE(line.find(",end_reason,preemptor,") != std::string::npos);
    // end_reason is the 23rd column; fields before it may be quoted (reason), so count from
    // the end: end_reason,preemptor,task_wait_s,jct_s,slowdown,bounded_slowdown,cost and the 7
    // wait split columns (wait_quota_s ... wait_preemption_s).
    while (std::getline(in, line)) {
      std::vector<std::string> back;
      std::string cur;
      for (auto it = line.rbegin(); it != line.rend() && back.size() < 14; ++it) {
        if (*it == ',') {
          back.push_back(cur);
          cur.clear();
        } else {
          cur.insert(cur.begin(), *it);
        }
      }
      REQUIRE(back.size() == 14);
      const std::string& reason = back[13];
      INFO(line);
      CHECK(std::find(sim::k_end_reasons.begin(), sim::k_end_reasons.end(), reason) != sim::k_end_reasons.end());
    }
    auto j = nlohmann::json::parse(s.summary_json());
    CHECK(j.contains("groups"));
    CHECK(j.contains("cpu_allocation_ratio"));
    if (cpu_only_trace) CHECK(j["cpu_allocation_ratio"].get<double>() > 0);
    ++n;
  }
  CHECK(n >= 2);
}

}  // namespace SCHEDSIM_UNITY_ID
