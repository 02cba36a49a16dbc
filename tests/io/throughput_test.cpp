// The `throughput` section (docs/heterogeneity.md, docs/scenario-format.md "Throughput"): its shape
// is checked when it is read (rows of `match.name_glob` and `speed`, every speed between 0.001
// and 1000), its GPU models against the cluster by check_throughput once the trace nodes are
// known; `validate` refuses every bad row with exit 2.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "scenario_builder.hpp"
#include "sim/cli/validate_cli.hpp"
#include "sim/io/throughput.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

using nlohmann::json;
using sim::io::test::error_paths;
using sim::io::test::parse_json;
using sim::io::test::valid_scenario;

/// The base scenario (A100 nodes only) with one throughput row for the tasks named `train*`.
static json with_throughput() {
  json j = valid_scenario();
  j["throughput"] = json::parse(R"([{"match": {"name_glob": "train*"}, "speed": {"A100": 2.0}}])");
  return j;
}

/// `schedsim validate` on `j`: (exit status, stderr).
static std::pair<int, std::string> validate(const json& j, const std::string& name) {
  const std::string path = std::string("/tmp/schedsim_io_test_") + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << j.dump(2);
  std::ostringstream out, err;
  const int rc = sim::io::validate_command(path, out, err);
  std::remove(path.c_str());
  std::string e = err.str();
  const std::string prefix = path + ": ";
  if (e.rfind(prefix, 0) == 0) e = e.substr(prefix.size());
  return {rc, e};
}

TEST_CASE("throughput: a section is read, validated without a diagnostic and written back", "[io][heterogeneity]") {
  auto r = parse_json(with_throughput());
  REQUIRE(r.ok());
  REQUIRE(r.scenario->throughput.size() == 1);
  CHECK(r.scenario->throughput[0].name_glob == "train*");
  CHECK(r.scenario->throughput[0].speed == std::map<std::string, double>{{"A100", 2.0}});
  CHECK(validate(with_throughput(), "ok.json").first == 0);
  auto again = sim::io::parse_scenario_document(sim::io::scenario_to_json(*r.scenario), "resolved");
  REQUIRE(again.ok());
  CHECK(again.scenario->throughput == r.scenario->throughput);
  // Without the key nothing is added to the resolved scenario.
  CHECK_FALSE(sim::io::scenario_to_json(*parse_json(valid_scenario()).scenario).contains("throughput"));
}

TEST_CASE("throughput: a speed of 0 is refused by validate with exit 2", "[io][heterogeneity]") {
  json j = with_throughput();
  j["throughput"][0]["speed"]["A100"] = 0;
  CHECK(validate(j, "zero.json") ==
        std::pair<int, std::string>{2, "throughput[0].speed.A100: 0: must be > 0 and finite, between 0.001 and 1000\n"});
}

TEST_CASE("throughput: a negative speed is refused by validate with exit 2", "[io][heterogeneity]") {
  json j = with_throughput();
  j["throughput"][0]["speed"]["A100"] = -2;
  CHECK(validate(j, "neg.json") ==
        std::pair<int, std::string>{2, "throughput[0].speed.A100: -2: must be > 0 and finite, between 0.001 and 1000\n"});
}

TEST_CASE("throughput: a speed above 1000 is refused by validate with exit 2", "[io][heterogeneity]") {
  json j = with_throughput();
  j["throughput"][0]["speed"]["A100"] = 1e6;
  CHECK(validate(j, "huge.json").first == 2);
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"throughput[0].speed.A100"});
}

TEST_CASE("throughput: a speed that is not a number is refused", "[io][heterogeneity]") {
  json j = with_throughput();
  j["throughput"][0]["speed"]["A100"] = "fast";
  CHECK(validate(j, "text.json") == std::pair<int, std::string>{2, "throughput[0].speed.A100: \"fast\": must be a number\n"});
}

TEST_CASE("throughput: a GPU model no node has is refused by validate with exit 2", "[io][heterogeneity]") {
  json j = with_throughput();
  j["throughput"][0]["speed"]["H100"] = 3;
  CHECK(validate(j, "model.json") ==
        std::pair<int, std::string>{2, "throughput[0].speed.H100: 3: unknown GPU model (no node of the cluster has it)\n"});
}

TEST_CASE("throughput: a row without match.name_glob is refused", "[io][heterogeneity]") {
  json j = with_throughput();
  j["throughput"][0]["match"] = json::object();
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"throughput[0].match.name_glob"});
  CHECK(validate(j, "nomatch.json").first == 2);
}

TEST_CASE("throughput: an unknown match key (e.g. a misspelt name_glob) is refused", "[io][heterogeneity]") {
  json j = with_throughput();
  j["throughput"][0]["match"] = json::parse(R"({"name_glb": "x"})");
  const auto paths = error_paths(parse_json(j));
  CHECK(paths == std::vector<std::string>{"throughput[0].match.name_glb", "throughput[0].match.name_glob"});
}

TEST_CASE("throughput: an empty speed object and a non-array section are refused", "[io][heterogeneity]") {
  json j = with_throughput();
  j["throughput"][0]["speed"] = json::object();
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"throughput[0].speed"});
  json k = valid_scenario();
  k["throughput"] = json::object();
  CHECK(error_paths(parse_json(k)) == std::vector<std::string>{"throughput"});
}

TEST_CASE("throughput: name_glob matches with * and ?, and the first matching row wins", "[io][heterogeneity]") {
  CHECK(sim::io::glob_match("train*", "train"));
  CHECK(sim::io::glob_match("train*", "train-7"));
  CHECK_FALSE(sim::io::glob_match("train*", "pretrain"));
  CHECK(sim::io::glob_match("*-ft-?", "llm-ft-3"));
  CHECK_FALSE(sim::io::glob_match("*-ft-?", "llm-ft-33"));
  CHECK(sim::io::glob_match("*", ""));
  CHECK(sim::io::glob_match("a*b*c", "axxbyyc"));
  CHECK_FALSE(sim::io::glob_match("a*b*c", "axxbyy"));
  std::vector<sim::io::ThroughputCfg> rows(2);
  rows[0].name_glob = "train-*";
  rows[1].name_glob = "*";
  CHECK(sim::io::throughput_row(rows, "train-1") == &rows[0]);
  CHECK(sim::io::throughput_row(rows, "eval") == &rows[1]);
  rows.pop_back();
  CHECK(sim::io::throughput_row(rows, "eval") == nullptr);
}

}  // namespace SCHEDSIM_UNITY_ID
