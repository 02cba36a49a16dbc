// Issue 40, items 3-5: the top-level `arrival_scale` on every workload source, generator classes
// drawn per team (`users`, `tenants` of a class), and the measurement window `measure`.
// Every expected value is derived by hand in the comments.
#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "builders.hpp"
#include "sim/io/overrides.hpp"
#include "sim/io/resolve.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/workload.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

using namespace simtest;
using nlohmann::json;

namespace {

/// One 8-GPU A100 node in each of pools "p" and "q", specs a100.8x and a100.1x, the `tasks` given (JSON).
json growth_scenario(const json& tasks) {
  json doc = json::parse(R"({
  "schema": "schedsim/v1", "name": "growth", "seed": 3,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960},
                       {"name": "a100.1x", "gpu_model": "A100", "gpus": 1, "vcpu": 12, "memory_gib": 120}],
    "pools": [{"name": "p", "kind": "shared",
      "node_groups": [{"prefix": "n-", "count": 1, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]},
              {"name": "q", "kind": "shared",
      "node_groups": [{"prefix": "m-", "count": 1, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]}
  })");
  doc["tasks"] = tasks;
  return doc;
}

json inline_task(const std::string& name, double submit_s, double duration_s) {
  return {{"name", name}, {"user", "u"}, {"submit_s", submit_s}, {"duration_s", duration_s}, {"type", "PyTorchJob"},
          {"workers", 0}, {"specs", {"a100.1x"}}, {"resource_type", "pay_as_you_go"}};
}

/// The scenario resolved as `run` resolves it (traces, workload, arrival_scale); REQUIREs success.
sim::io::Scenario resolved(const json& doc, const std::vector<std::string>& sets = {}) {
  sim::ScenarioSource src;
  src.text = doc.dump();
  for (const auto& s : sets) {
    std::vector<sim::io::Diagnostic> diags;
    auto o = sim::io::parse_set_argument(s, diags);
    REQUIRE(o);
    src.overrides.push_back(*o);
  }
  std::ostringstream err;
  auto r = sim::resolve_scenario(src, err);
  INFO(err.str());
  REQUIRE(r);
  return std::move(r->scenario);
}

std::vector<double> submits(const sim::io::Scenario& s) {
  std::vector<double> v;
  for (const auto& t : s.tasks) v.push_back(t.submit_s);
  return v;
}

}  // namespace

// ------------------------------------------------------------------ arrival_scale

TEST_CASE("arrival_scale 0.5 on inline tasks halves every submit time (first arrival at 0) and keeps durations",
          "[load_growth][arrival_scale]") {
  json doc = growth_scenario({inline_task("a", 0, 100), inline_task("b", 100, 200), inline_task("c", 300, 50),
                              inline_task("d", 1000, 10)});
  doc["arrival_scale"] = 0.5;
  const auto s = resolved(doc);
  CHECK(submits(s) == std::vector<double>{0, 50, 150, 500});  // 0/2, 100/2, 300/2, 1000/2
  CHECK(s.tasks[1].duration_s == 200);
  CHECK(s.tasks[3].duration_s == 10);
}

TEST_CASE("arrival_scale keeps the earliest arrival and multiplies the gaps from it", "[load_growth][arrival_scale]") {
  json doc = growth_scenario({inline_task("a", 600, 100), inline_task("b", 400, 100), inline_task("c", 1400, 100)});
  doc["arrival_scale"] = 1.5;
  // first = 400: a = 400 + 200 x 1.5 = 700, b = 400, c = 400 + 1000 x 1.5 = 1900
  CHECK(submits(resolved(doc)) == std::vector<double>{700, 400, 1900});
}

TEST_CASE("arrival_scale: --set arrival_scale works and the resolved JSON keeps the unscaled times", "[load_growth][arrival_scale]") {
  const json doc = growth_scenario({inline_task("a", 0, 100), inline_task("b", 800, 100)});
  CHECK(submits(resolved(doc, {"arrival_scale=0.25"})) == std::vector<double>{0, 200});
  sim::ScenarioSource src;
  src.text = doc.dump();
  std::vector<sim::io::Diagnostic> diags;
  src.overrides.push_back(*sim::io::parse_set_argument("arrival_scale=0.25", diags));
  std::ostringstream err;
  const auto r = sim::resolve_scenario(src, err);
  REQUIRE(r);
  const json written = json::parse(r->resolved_json);
  CHECK(written["arrival_scale"] == 0.25);
  CHECK(written["tasks"][1]["submit_s"] == 800);  // scaled once, when resolved again
  CHECK_FALSE(json::parse(sim::resolved_scenario_json(resolved(doc))).contains("arrival_scale"));  // 1: not written
}

TEST_CASE("arrival_scale multiplies with a trace's own arrival_scale", "[load_growth][arrival_scale][traces]") {
  // tests/data/load_growth/philly_jobs.csv: arrivals 100, 300, 1100 s, durations 50, 120.5, 10.
  const std::string trace = std::string(SCHEDSIM_TEST_DIR) + "/data/load_growth/philly_jobs.csv";
  json doc = growth_scenario(json::array());
  doc["traces"] = json::array({{{"format", "philly"}, {"path", trace}, {"pool", "p"}, {"arrival_scale", 0.5}}});
  const auto own = resolved(doc);
  CHECK(submits(own) == std::vector<double>{100, 200, 600});  // 100 + 200 x 0.5, 100 + 1000 x 0.5
  doc["arrival_scale"] = 0.5;
  const auto both = resolved(doc);
  CHECK(submits(both) == std::vector<double>{100, 150, 350});  // 100 + 200 x 0.25, 100 + 1000 x 0.25
  CHECK(both.tasks[1].duration_s == 120.5);
  CHECK(both.tasks[2].duration_s == 10);
}

namespace {

/// A generated workload of `n` tasks in two classes (1-GPU class "small", 8-GPU class "big").
json generated(int n) {
  json doc = growth_scenario(json::array());
  doc["workload"] = json::parse(R"({
    "arrival": {"rate_per_hour": 60, "start_s": 500},
    "duration": {"distribution": "exponential", "mean_s": 600},
    "users": [{"name": "u1", "share": 1}, {"name": "u2", "share": 3}],
    "tenants": [{"name": "t1", "share": 1}, {"name": "t2", "share": 1}],
    "classes": [{"name": "small", "share": 3, "specs": ["a100.1x"], "resource_type": "pay_as_you_go", "priority": 3},
                {"name": "big", "share": 1, "specs": ["a100.8x"], "resource_type": "pay_as_you_go", "priority": 6,
                 "workers": {"values": [0, 1], "shares": [1, 1]}}]})");
  doc["workload"]["tasks"] = n;
  return doc;
}

}  // namespace

TEST_CASE("arrival_scale on a generated workload: same tasks, gaps from the first arrival scaled", "[load_growth][arrival_scale][workload]") {
  json doc = generated(40);
  const auto plain = resolved(doc);
  doc["arrival_scale"] = 0.8;
  const auto scaled = resolved(doc);
  REQUIRE(plain.tasks.size() == 40);
  REQUIRE(scaled.tasks.size() == 40);
  const double first = plain.tasks.front().submit_s;
  for (std::size_t i = 0; i < 40; ++i) {
    CHECK(scaled.tasks[i].name == plain.tasks[i].name);
    CHECK(scaled.tasks[i].duration_s == plain.tasks[i].duration_s);
    CHECK(scaled.tasks[i].workers == plain.tasks[i].workers);
    CHECK(scaled.tasks[i].submit_s == Approx(first + (plain.tasks[i].submit_s - first) * 0.8).margin(1e-9));
  }
  // 40 arrivals 0.8 x as spread out: the span shrinks by exactly 0.8.
  CHECK(scaled.tasks.back().submit_s - first == Approx((plain.tasks.back().submit_s - first) * 0.8));
}

// ------------------------------------------------------------------ generator classes per team

TEST_CASE("a generator class bound to a tenant draws its tasks only for that tenant (seeds 1..25)", "[load_growth][workload][property]") {
  json doc = generated(60);
  doc["workload"]["classes"][1]["tenants"] = json::array({{{"name", "vision"}, {"share", 1}}});
  doc["workload"]["classes"][1]["users"] = json::array({{{"name", "v1"}, {"share", 1}}, {{"name", "v2"}, {"share", 2}}});
  int big = 0, small = 0;
  for (std::uint64_t seed = 1; seed <= 25; ++seed) {
    doc["seed"] = seed;
    const auto s = resolved(doc);
    REQUIRE(s.tasks.size() == 60);
    for (const auto& t : s.tasks) {
      INFO("seed " << seed << " task " << t.name);
      if (t.priority == 6) {  // class "big"
        ++big;
        CHECK(t.tenant == "vision");
        CHECK((t.user == "v1" || t.user == "v2"));
        CHECK(t.specs == std::vector<std::string>{"a100.8x"});
      } else {                // class "small": the section's users and tenants
        ++small;
        CHECK(t.priority == 3);
        CHECK((t.tenant == "t1" || t.tenant == "t2"));
        CHECK((t.user == "u1" || t.user == "u2"));
      }
    }
  }
  // Both classes occur (shares 3:1 over 1,500 tasks).
  CHECK(big > 200);
  CHECK(small > 900);
}

TEST_CASE("a class naming the section's own users and tenants draws exactly the tasks of one naming none", "[load_growth][workload]") {
  json doc = generated(50);
  const auto before = resolved(doc);
  for (auto& c : doc["workload"]["classes"]) {
    c["users"] = doc["workload"]["users"];
    c["tenants"] = doc["workload"]["tenants"];
  }
  const auto after = resolved(doc);
  CHECK(sim::io::scenario_to_json(after)["tasks"] == sim::io::scenario_to_json(before)["tasks"]);
}

TEST_CASE("per-class priority, resource_type, pool and accept_idle reach every task of the class", "[load_growth][workload]") {
  json doc = generated(80);
  doc["quotas"] = json::array({{{"user", "u1"}, {"resource_type", "reserved"}, {"pool", "q"}, {"gpus", 8}, {"vcpu", 96}, {"memory_gib", 960}},
                               {{"user", "u2"}, {"resource_type", "reserved"}, {"pool", "q"}, {"gpus", 8}, {"vcpu", 96}, {"memory_gib", 960}}});
  auto& small = doc["workload"]["classes"][0];
  small["resource_type"] = "reserved";
  small["pool"] = "q";
  small["accept_idle"] = true;
  small["priority"] = 8;
  const auto s = resolved(doc);
  int n = 0;
  for (const auto& t : s.tasks) {
    if (t.specs != std::vector<std::string>{"a100.1x"}) continue;
    ++n;
    CHECK(t.resource_type == "reserved");
    CHECK(t.pool == "q");
    CHECK(t.accept_idle);
    CHECK(t.priority == 8);
  }
  CHECK(n > 0);
}

// ------------------------------------------------------------------ measurement window

namespace {

/// One 8-GPU node; four 8-GPU pay-as-you-go tasks of 1 h each (alice), submitted at 0, 1800, 6300
/// and 18000 s: a runs [0, 3600), b waits 1800 s and runs [3600, 7200), c waits 900 s and runs
/// [7200, 10800), the node idles [10800, 18000), d runs [18000, 21600) = the makespan.
sim::io::Scenario window_scenario() {
  auto sc = cluster(1);
  sc.tasks = {task("a", 0, 3600), task("b", 1800, 3600), task("c", 6300, 3600), task("d", 18000, 3600)};
  return sc;
}

json summary_of(const sim::io::Scenario& sc) {
  sim::Simulator s(sc);
  s.run();
  return json::parse(s.summary_json());
}

}  // namespace

TEST_CASE("measure: without a window the warm-up and the drain count", "[load_growth][measure]") {
  const json j = summary_of(window_scenario());
  CHECK(j["makespan_s"] == 21600);
  CHECK(j["mean_wait_s"] == 675);               // (0 + 1800 + 900 + 0) / 4
  CHECK(j["gpu_allocation_ratio"] == 0.666667);  // 4 h busy of 6 h
  CHECK_FALSE(j.contains("measure"));
}

TEST_CASE("measure: the window counts the tasks submitted in [start, end) and the allocation inside it", "[load_growth][measure]") {
  auto sc = window_scenario();
  sc.measure = sim::io::MeasureCfg{1800, 14400};
  const json j = summary_of(sc);
  CHECK(j["makespan_s"] == 21600);                  // the simulation still runs to the end
  CHECK(j["tasks"] == 4);
  CHECK(j["measure"]["start_s"] == 1800);
  CHECK(j["measure"]["end_s"] == 14400);
  CHECK(j["measure"]["tasks_measured"] == 2);       // b (1800) and c (6300); a (0) and d (18000) outside
  CHECK(j["mean_wait_s"] == 1350);                  // (1800 + 900) / 2
  CHECK(j["p95_wait_s"] == 1800);
  CHECK(j["mean_jct_s"] == 4950);                   // (5400 + 4500) / 2
  CHECK(j["gpu_allocation_ratio"] == 0.714286);     // busy [1800, 10800) = 9000 s of 12600 s
  CHECK(j["wait_split_s"]["capacity"] == 2700);      // b's and c's waits only
  CHECK(j["groups"]["user"]["alice"]["mean_wait_s"] == 1350);
  CHECK(j["groups"]["user"]["alice"]["gpu_seconds"] == 72000);  // 8 GPUs x 9000 s
}

TEST_CASE("measure: a window past the makespan counts the allocation up to the makespan", "[load_growth][measure]") {
  auto sc = window_scenario();
  sc.measure = sim::io::MeasureCfg{10800, 1e6};
  const json j = summary_of(sc);
  CHECK(j["measure"]["tasks_measured"] == 1);       // d
  CHECK(j["mean_wait_s"] == 0);
  CHECK(j["gpu_allocation_ratio"] == 0.333333);     // busy [18000, 21600) of [10800, 21600)
}

TEST_CASE("measure: costs are clipped to the window; the reserved commitment covers the window's span", "[load_growth][measure][cost]") {
  auto sc = window_scenario();
  sc.quotas.push_back({"alice", "reserved", "p", 8, 96, 960});
  sc.prices = sim::io::PricesCfg{};
  sc.prices->currency = "USD";
  sc.prices->gpu_models["A100"].reserved = 2.5;
  sc.prices->gpu_models["A100"].pay_as_you_go = 4.0;
  const json whole = summary_of(sc);
  CHECK(whole["cost_pay_as_you_go"] == 128);  // 4 tasks x 8 GPUs x 1 h x 4.0
  CHECK(whole["cost_reserved"] == 120);       // 8 GPUs x 6 h x 2.5
  sc.measure = sim::io::MeasureCfg{1800, 14400};
  const json j = summary_of(sc);
  // a [1800, 3600) 0.5 h, b 1 h, c 1 h, d none: 2.5 h x 8 GPUs x 4.0
  CHECK(j["cost_pay_as_you_go"] == 80);
  CHECK(j["cost_reserved"] == 70);            // 8 GPUs x (14400 - 1800) s = 3.5 h x 2.5
  CHECK(j["cost_reserved_unused"] == 70);     // no reserved task
  CHECK(j["cost_total"] == 150);
  CHECK(j["groups"]["user"]["alice"]["cost"] == 150);
}

}  // namespace SCHEDSIM_UNITY_ID
