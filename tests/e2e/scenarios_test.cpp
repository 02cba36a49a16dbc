#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/io/traces.hpp"
#include "sim/cli/validate_cli.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace {

/// Trace files (data file and node file) a scenario names that are absent from the data root.
std::vector<std::string> missing_trace_files(const std::filesystem::path& scenario) {
  std::ifstream in(scenario);
  const auto j = nlohmann::json::parse(in);
  std::vector<std::string> missing;
  if (!j.contains("traces")) return missing;
  for (const auto& t : j.at("traces")) {
    for (const char* key : {"path", "nodes", "virtual_clusters"}) {
      if (!t.contains(key) || !t.at(key).is_string()) continue;
      std::filesystem::path p = t.at(key).get<std::string>();
      if (p.is_relative()) p = std::filesystem::path(sim::io::data_root()) / p;
      if (!std::filesystem::exists(p)) missing.push_back(p.string());
    }
  }
  return missing;
}

}  // namespace

TEST_CASE("every scenario file in scenarios/ validates with exit status 0") {
  std::size_t n = 0, skipped = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(SCHEDSIM_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".json") continue;
    ++n;
    if (const auto missing = missing_trace_files(e.path()); !missing.empty()) {
      WARN(e.path().filename().string() << ": trace " << missing.front()
                                        << " not found: validation skipped (set SCHEDSIM_DATA to the trace folder)");
      ++skipped;
      continue;
    }
    std::ostringstream out, err;
    const int rc = sim::io::validate_command(e.path().string(), out, err);
    INFO(e.path().string() << ": " << err.str());
    CHECK(rc == 0);
  }
  CHECK(n >= 5);
  CHECK(n - skipped >= 2);  // the self-contained scenarios (two-gangs, what-if-capacity) always run
}

}  // namespace SCHEDSIM_UNITY_ID
