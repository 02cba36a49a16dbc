// The validator accepts exactly the placement names of the registry it is given (issue 13:
// one registry for the library and schedsim; docs/packaging.md).
#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <libsched/registry.hpp>

#include "scenario_builder.hpp"
#include "sim/io/scenario_json.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using sim::io::test::valid_scenario;

namespace {

/// Takes waiting tasks by name, whatever their priority.
class ByName final : public libsched::QueueOrder {
 public:
  std::string_view name() const override { return "by-name"; }
  libsched::Rank rank(const libsched::TaskSpec&, libsched::TaskId) const override { return {0, 0, 0}; }
};

libsched::Registry with_custom_policy() {
  libsched::Registry r = libsched::Registry::builtin();
  r.queue_order.add("by-name", [](const libsched::PolicyContext&) { return std::make_unique<ByName>(); });
  r.placement.add("my-first-fit", [](const libsched::PolicyContext&) { return std::make_unique<libsched::placement::FirstFit>(); });
  return r;
}

std::string scenario_with_placement(const std::string& name) {
  auto j = valid_scenario();
  j["scheduler"]["placement"] = name;
  return j.dump();
}

}  // namespace

TEST_CASE("a placement policy registered at run time is accepted by name in scheduler.placement") {
  const auto r = sim::io::parse_scenario_text(scenario_with_placement("my-first-fit"), "s.json", with_custom_policy());
  CHECK(r.diagnostics.empty());
  REQUIRE(r.ok());
  CHECK(r.scenario->scheduler.placement == "my-first-fit");
}

TEST_CASE("the builtin registry refuses a name registered only elsewhere, naming file, path, value and rule") {
  const auto r = sim::io::parse_scenario_text(scenario_with_placement("my-first-fit"), "s.json");
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].str() ==
        "s.json: scheduler.placement: \"my-first-fit\": must be one of `best-fit`, `dot-product`, `fastest-model`, `fgd`, "
        "`first-fit`, `gpu-clustering`, `gpu-packing`, `random`, `topology`, `worst-fit`");
}

TEST_CASE("the error for an unknown placement lists every registered name, custom ones included") {
  const auto r = sim::io::parse_scenario_text(scenario_with_placement("last-fit"), "s.json", with_custom_policy());
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK_THAT(r.diagnostics[0].str(), Catch::Contains("`my-first-fit`") && Catch::Contains("`best-fit`") &&
                                         Catch::StartsWith("s.json: scheduler.placement: \"last-fit\": must be one of"));
}

TEST_CASE("queue_order, victim_order and admission accept the registered plugin names and refuse others") {
  auto j = valid_scenario();
  j["scheduler"]["queue_order"] = "by-name";
  j["scheduler"]["victim_order"] = "idle-spot-first";
  j["scheduler"]["admission"] = "quota";
  const auto ok = sim::io::parse_scenario_text(j.dump(), "s.json", with_custom_policy());
  CHECK(ok.diagnostics.empty());
  REQUIRE(ok.ok());
  CHECK(ok.scenario->scheduler.queue_order == "by-name");
  const auto refused = sim::io::parse_scenario_text(j.dump(), "s.json");
  REQUIRE(refused.diagnostics.size() == 1);
  CHECK(refused.diagnostics[0].str() == "s.json: scheduler.queue_order: \"by-name\": must be one of `fair`, `gittins`, `las`, `priority-fifo`, `qssf`, `sjf`, `sjf-estimate`, "
                                           "`srtf`, `srtf-estimate`");
  j["scheduler"]["queue_order"] = "priority-fifo";
  j["scheduler"]["admission"] = "none";
  const auto bad = sim::io::parse_scenario_text(j.dump(), "s.json");
  REQUIRE(bad.diagnostics.size() == 1);
  CHECK(bad.diagnostics[0].str() == "s.json: scheduler.admission: \"none\": must be one of `quota`");
}

TEST_CASE("scheduler.las_thresholds_gpu_s must be 1 to 16 increasing numbers > 0") {
  auto diag = [](const nlohmann::json& th) {
    auto j = valid_scenario();
    j["scheduler"]["queue_order"] = "las";
    j["scheduler"]["las_thresholds_gpu_s"] = th;
    const auto r = sim::io::parse_scenario_text(j.dump(), "s.json");
    return r.diagnostics.empty() ? std::string() : r.diagnostics[0].str();
  };
  CHECK(diag(nlohmann::json::array({600, 3600})).empty());
  CHECK(diag(nlohmann::json::array({600, 600})) ==
        "s.json: scheduler.las_thresholds_gpu_s[1]: 600: must be greater than the threshold before it");
  CHECK(diag(nlohmann::json::array({0})) == "s.json: scheduler.las_thresholds_gpu_s[0]: 0: must be > 0 and <= 1e15 (GPU-seconds)");
  CHECK(diag(nlohmann::json::array({"1"})) == "s.json: scheduler.las_thresholds_gpu_s[0]: \"1\": must be a number");
  CHECK(diag(nlohmann::json::array()) == "s.json: scheduler.las_thresholds_gpu_s: []: must be an array of 1 to 16 numbers (GPU-seconds)");
  CHECK(diag(3600) == "s.json: scheduler.las_thresholds_gpu_s: 3600: must be an array of 1 to 16 numbers (GPU-seconds)");
}

TEST_CASE("scheduler.las_starvation_s must be a number of seconds >= 0") {
  auto diag = [](const nlohmann::json& v) {
    auto j = valid_scenario();
    j["scheduler"]["queue_order"] = "las";
    j["scheduler"]["las_starvation_s"] = v;
    const auto r = sim::io::parse_scenario_text(j.dump(), "s.json");
    return r.diagnostics.empty() ? std::string() : r.diagnostics[0].str();
  };
  CHECK(diag(0).empty());
  CHECK(diag(600).empty());
  CHECK(diag(-1) == "s.json: scheduler.las_starvation_s: -1: must be between 0 and 1000000000");
  CHECK(diag("600") == "s.json: scheduler.las_starvation_s: \"600\": must be a number");
}

TEST_CASE("scheduler.qssf_default_s must be a number of seconds >= 0") {
  auto j = valid_scenario();
  j["scheduler"]["queue_order"] = "qssf";
  j["scheduler"]["qssf_default_s"] = -5;
  const auto r = sim::io::parse_scenario_text(j.dump(), "s.json");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].str() == "s.json: scheduler.qssf_default_s: -5: must be between 0 and 1000000000");
}

TEST_CASE("scheduler.fair_shares must map tenants to shares > 0") {
  auto diag = [](const nlohmann::json& shares) {
    auto j = valid_scenario();
    j["scheduler"]["queue_order"] = "fair";
    j["scheduler"]["fair_shares"] = shares;
    const auto r = sim::io::parse_scenario_text(j.dump(), "s.json");
    return r.diagnostics.empty() ? std::string() : r.diagnostics[0].str();
  };
  CHECK(diag(nlohmann::json::object({{"a", 2}, {"b", 0.5}})).empty());
  CHECK(diag(nlohmann::json::object({{"a", 0}})) == "s.json: scheduler.fair_shares.a: 0: must be > 0 and <= 1e15 (a share)");
  CHECK(diag(nlohmann::json::object({{"a", -1}})) == "s.json: scheduler.fair_shares.a: -1: must be > 0 and <= 1e15 (a share)");
  CHECK(diag(nlohmann::json::object({{"a", "2"}})) == "s.json: scheduler.fair_shares.a: \"2\": must be a number");
  CHECK(diag(nlohmann::json::object({{"", 1}})) == "s.json: scheduler.fair_shares.: 1: must name a tenant (the key is empty)");
  CHECK(diag(nlohmann::json::array({2})) ==
        "s.json: scheduler.fair_shares: [2]: must be an object of at most 10000 tenant: share (a number > 0)");
  // The shares reach the scenario (a tenant not listed has share 1 at run time).
  auto j = valid_scenario();
  j["scheduler"]["fair_shares"] = nlohmann::json::object({{"a", 2}});
  const auto r = sim::io::parse_scenario_text(j.dump(), "s.json");
  REQUIRE(r.ok());
  CHECK(r.scenario->scheduler.fair_shares.at("a") == 2);
}

}  // namespace SCHEDSIM_UNITY_ID
