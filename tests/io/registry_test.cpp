// The validator accepts exactly the placement names of the registry it is given (issue 13:
// one registry for the library and schedsim; docs/packaging.md).
#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <libsched/placement/builtin.hpp>

#include "scenario_builder.hpp"
#include "sim/io/scenario_json.hpp"

using sim::io::test::valid_scenario;

namespace {

libsched::PlacementRegistry with_custom_policy() {
  libsched::PlacementRegistry r = libsched::PlacementRegistry::builtin();
  r.add("my-first-fit", [](const libsched::PolicyContext&) { return std::make_unique<libsched::placement::FirstFit>(); });
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
        "s.json: scheduler.placement: \"my-first-fit\": must be one of `best-fit`, `dot-product`, `fgd`, `first-fit`, "
        "`gpu-clustering`, `gpu-packing`, `random`, `topology`, `worst-fit`");
}

TEST_CASE("the error for an unknown placement lists every registered name, custom ones included") {
  const auto r = sim::io::parse_scenario_text(scenario_with_placement("last-fit"), "s.json", with_custom_policy());
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK_THAT(r.diagnostics[0].str(), Catch::Contains("`my-first-fit`") && Catch::Contains("`best-fit`") &&
                                         Catch::StartsWith("s.json: scheduler.placement: \"last-fit\": must be one of"));
}
