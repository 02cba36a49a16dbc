// The `prices` section (docs/scenario-format.md "Prices"): its shape is checked when it is read
// (every key known, every price a finite number from 0 to 1e6), its names against the cluster by
// check_prices once every node and task is known; unpriced classes that tasks use are warned about
// once each.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "scenario_builder.hpp"
#include "sim/io/prices.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

using nlohmann::json;
using sim::io::test::error_paths;
using sim::io::test::parse_json;
using sim::io::test::valid_scenario;

/// The base scenario with every class priced for A100 (the only GPU model) and CPU-only replicas.
json priced() {
  json j = valid_scenario();
  j["prices"] = json::parse(R"({"currency": "USD",
    "gpu_models": {"A100": {"reserved": 2.5, "pay_as_you_go": 4.0, "spot": 1.6, "idle": 1.0}},
    "instance_specs": {"a100.8x": {"pay_as_you_go": 30.0}},
    "cpu_vcpu": {"pay_as_you_go": 0.05, "spot": 0.02, "idle": 0.01}})");
  return j;
}

/// Parse errors and check_prices diagnostics of `j` together.
std::vector<sim::io::Diagnostic> diagnostics_of(const json& j) {
  auto r = parse_json(j);
  std::vector<sim::io::Diagnostic> d = r.diagnostics;
  if (r.ok()) sim::io::check_prices(*r.scenario, d);
  return d;
}

std::vector<std::string> paths(const std::vector<sim::io::Diagnostic>& d, bool errors) {
  std::vector<std::string> out;
  for (const auto& x : d)
    if (x.is_error() == errors) out.push_back(x.path);
  return out;
}

TEST_CASE("prices: a complete price list is read, checked without a diagnostic and written back") {
  const auto d = diagnostics_of(priced());
  CHECK(d.empty());
  auto r = parse_json(priced());
  REQUIRE(r.ok());
  const auto& p = *r.scenario->prices;
  CHECK(p.currency == "USD");
  CHECK(p.gpu_models.at("A100").reserved == 2.5);
  CHECK(p.gpu_models.at("A100").spot == 1.6);
  CHECK(p.instance_specs.at("a100.8x").pay_as_you_go == 30.0);
  CHECK_FALSE(p.instance_specs.at("a100.8x").spot.has_value());
  CHECK(p.cpu_vcpu.pay_as_you_go == 0.05);
  // scenario.resolved.json carries the prices: reading it back gives the same tables.
  auto again = sim::io::parse_scenario_document(sim::io::scenario_to_json(*r.scenario), "resolved");
  REQUIRE(again.ok());
  CHECK(again.scenario->prices->gpu_models == p.gpu_models);
  CHECK(again.scenario->prices->instance_specs == p.instance_specs);
  CHECK(again.scenario->prices->cpu_vcpu == p.cpu_vcpu);
}

TEST_CASE("prices: a scenario without prices has no prices and no price diagnostic") {
  auto r = parse_json(valid_scenario());
  REQUIRE(r.ok());
  CHECK_FALSE(r.scenario->prices.has_value());
  std::vector<sim::io::Diagnostic> d;
  sim::io::check_prices(*r.scenario, d);
  CHECK(d.empty());
  CHECK_FALSE(sim::io::scenario_to_json(*r.scenario).contains("prices"));
}

TEST_CASE("prices: a negative price is refused with its path") {
  json j = priced();
  j["prices"]["gpu_models"]["A100"]["spot"] = -0.5;
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"prices.gpu_models.A100.spot"});
}

TEST_CASE("prices: a price above 1e6 per hour is refused") {
  json j = priced();
  j["prices"]["cpu_vcpu"]["idle"] = 2e6;
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"prices.cpu_vcpu.idle"});
}

TEST_CASE("prices: NaN and infinite prices are refused") {
  json j = priced();
  j["prices"]["gpu_models"]["A100"]["idle"] = std::numeric_limits<double>::quiet_NaN();
  j["prices"]["gpu_models"]["A100"]["pay_as_you_go"] = std::numeric_limits<double>::infinity();
  auto r = sim::io::parse_scenario_document(j, "s.json");
  CHECK(error_paths(r) == std::vector<std::string>{"prices.gpu_models.A100.pay_as_you_go", "prices.gpu_models.A100.idle"});
}

TEST_CASE("prices: a price that is not a number is refused") {
  json j = priced();
  j["prices"]["instance_specs"]["a100.8x"]["pay_as_you_go"] = "30";
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"prices.instance_specs.a100.8x.pay_as_you_go"});
}

TEST_CASE("prices: an unknown class key is an error, not an ignored key") {
  json j = priced();
  j["prices"]["gpu_models"]["A100"]["on_demand"] = 4.0;
  const auto r = parse_json(j);
  CHECK(error_paths(r) == std::vector<std::string>{"prices.gpu_models.A100.on_demand"});
}

TEST_CASE("prices: an unknown top-level key of prices is an error") {
  json j = priced();
  j["prices"]["gpu_model"] = json::object();
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"prices.gpu_model"});
}

TEST_CASE("prices: a reserved price belongs to a GPU model, not to a spec or to vCPUs") {
  json j = priced();
  j["prices"]["instance_specs"]["a100.8x"]["reserved"] = 20.0;
  j["prices"]["cpu_vcpu"]["reserved"] = 0.03;
  CHECK(error_paths(parse_json(j)) ==
        std::vector<std::string>{"prices.instance_specs.a100.8x.reserved", "prices.cpu_vcpu.reserved"});
}

TEST_CASE("prices: the currency is required and is a short code") {
  json j = priced();
  j["prices"].erase("currency");
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"prices.currency"});
  j["prices"]["currency"] = "US dollars";
  CHECK(error_paths(parse_json(j)) == std::vector<std::string>{"prices.currency"});
}

TEST_CASE("prices: a GPU model no node or spec has is refused") {
  json j = priced();
  j["prices"]["gpu_models"]["V100"] = {{"spot", 0.9}};
  CHECK(paths(diagnostics_of(j), true) == std::vector<std::string>{"prices.gpu_models.V100"});
}

TEST_CASE("prices: a spec not in cluster.instance_specs is refused") {
  json j = priced();
  j["prices"]["instance_specs"]["a100.4x"] = {{"spot", 8}};
  CHECK(paths(diagnostics_of(j), true) == std::vector<std::string>{"prices.instance_specs.a100.4x"});
}

TEST_CASE("prices: a reserved quota on a pool whose GPU models have different reserved prices is refused") {
  json j = priced();
  j["cluster"]["pools"][0]["node_groups"].push_back(
      {{"prefix", "h800-"}, {"count", 1}, {"gpu_model", "H800"}, {"gpus", 8}, {"vcpu", 96}, {"memory_gib", 960}});
  j["prices"]["gpu_models"]["H800"] = {{"reserved", 5.0}};
  CHECK(paths(diagnostics_of(j), true) == std::vector<std::string>{"quotas[0].pool"});
  j["prices"]["gpu_models"]["H800"]["reserved"] = 2.5;  // one price for the pool: fine
  CHECK(paths(diagnostics_of(j), true).empty());
}

TEST_CASE("prices: validate warns once per class that tasks use and that is not priced") {
  json j = priced();
  // Reserved and idle unpriced; the idle RayJob and the accept_idle RayJob both use idle.
  j["prices"]["gpu_models"]["A100"].erase("reserved");
  j["prices"]["gpu_models"]["A100"].erase("idle");
  const auto d = diagnostics_of(j);
  CHECK(paths(d, true).empty());
  REQUIRE(paths(d, false) == std::vector<std::string>{"prices", "prices"});
  CHECK(d[0].value == "\"reserved\"");
  CHECK(d[1].value == "\"idle\"");
  CHECK(d[1].rule.find("it costs 0") != std::string::npos);
}

TEST_CASE("prices: a CPU-only head spec needs a vCPU price for its class") {
  json j = priced();
  j["prices"]["cpu_vcpu"].erase("idle");  // the idle RayJob's head is cpu.4
  const auto d = diagnostics_of(j);
  REQUIRE(paths(d, false) == std::vector<std::string>{"prices"});
  CHECK(d[0].value == "\"idle\"");
  CHECK(d[0].rule.find("cpu.4") != std::string::npos);
}

}  // namespace SCHEDSIM_UNITY_ID
