// The workload generator (docs/scenario-format.md "Workload generator"): arrivals, shares,
// duration distributions, determinism, validation rules and the round trip through
// scenario_to_json.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "scenario_builder.hpp"
#include "sim/io/workload.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using nlohmann::json;
using sim::io::generate_workload;
using sim::io::Scenario;
using sim::io::TaskCfg;
using sim::io::test::all_text;
using sim::io::test::parse_json;

namespace {

/// A valid scenario (two pools, one spec each) with a workload section of one class.
json base() {
  return json::parse(R"({
  "schema": "schedsim/v1", "name": "wl", "seed": 7,
  "cluster": {
    "instance_specs": [{"name": "g1", "gpu_model": "A100", "gpus": 1, "vcpu": 8, "memory_gib": 64}],
    "pools": [{"name": "p", "node_groups": [{"prefix": "n-", "count": 2, "gpu_model": "A100", "gpus": 8,
                                              "vcpu": 64, "memory_gib": 512}]},
              {"name": "q", "node_groups": [{"prefix": "m-", "count": 1, "gpu_model": "A100", "gpus": 8,
                                              "vcpu": 64, "memory_gib": 512}]}]
  },
  "workload": {
    "tasks": 200,
    "arrival": {"rate_per_hour": 60},
    "duration": {"distribution": "exponential", "mean_s": 600},
    "classes": [{"share": 1, "type": "PyTorchJob", "specs": ["g1"], "resource_type": "pay_as_you_go"}]
  }
})");
}

Scenario parsed(const json& j) {
  auto r = parse_json(j);
  INFO(all_text(r));
  REQUIRE(r.ok());
  return *r.scenario;
}

std::vector<TaskCfg> gen(const json& j) { return generate_workload(parsed(j)); }

/// The error lines of a scenario, without the warnings.
std::string errors_of(const json& j) {
  auto r = parse_json(j);
  std::string s;
  for (const auto& d : r.diagnostics)
    if (d.is_error()) s += d.str() + "\n";
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

// ------------------------------------------------------------------ arrivals

TEST_CASE("workload: Poisson arrivals over a long horizon number about rate x horizon", "[workload]") {
  json j = base();
  j["workload"].erase("tasks");
  j["workload"]["until_s"] = 400.0 * 3600;  // 400 h at 60/h: 24,000 expected, sd ~155
  const auto tasks = gen(j);
  const double expected = 60.0 * 400, sd = std::sqrt(expected);
  CHECK(std::fabs(double(tasks.size()) - expected) < 4 * sd);
  for (const auto& t : tasks) REQUIRE(t.submit_s < 400.0 * 3600);
  CHECK(std::is_sorted(tasks.begin(), tasks.end(), [](const TaskCfg& a, const TaskCfg& b) { return a.submit_s < b.submit_s; }));
}

TEST_CASE("workload: a daily profile of zeros but one hour puts every arrival in that hour", "[workload]") {
  json j = base();
  std::vector<double> daily(24, 0.0);
  daily[13] = 1;
  j["workload"]["tasks"] = 500;
  j["workload"]["arrival"]["daily_profile"] = daily;
  const auto tasks = gen(j);
  REQUIRE(tasks.size() == 500);
  for (const auto& t : tasks) REQUIRE(int(std::floor(t.submit_s / 3600)) % 24 == 13);
  // ... and the arrivals span several days (the other hours are skipped, not the days).
  CHECK(tasks.back().submit_s > 86400);
}

TEST_CASE("workload: a weekly profile of zeros but one day puts every arrival on that day", "[workload]") {
  json j = base();
  std::vector<double> weekly(7, 0.0);
  weekly[2] = 3;
  j["workload"]["arrival"]["weekly_profile"] = weekly;
  j["workload"]["arrival"]["start_s"] = 1000;
  for (const auto& t : gen(j)) REQUIRE(int(std::floor(t.submit_s / 86400)) % 7 == 2);
}

TEST_CASE("workload: until_s and start_s bound the arrivals", "[workload]") {
  json j = base();
  j["workload"]["tasks"] = 100000;
  j["workload"]["until_s"] = 7200;
  j["workload"]["arrival"]["start_s"] = 3600;
  const auto tasks = gen(j);
  REQUIRE(!tasks.empty());
  CHECK(tasks.size() < 200);  // about 60 in one hour
  for (const auto& t : tasks) {
    CHECK(t.submit_s >= 3600);
    CHECK(t.submit_s < 7200);
  }
}

// ------------------------------------------------------------------ shares

TEST_CASE("workload: class, user, tenant, workers and priority frequencies follow their shares", "[workload]") {
  json j = base();
  j["workload"]["tasks"] = 5000;
  j["workload"]["users"] = json::parse(R"([{"name": "a", "share": 1}, {"name": "b", "share": 1}, {"name": "c", "share": 2}])");
  j["workload"]["tenants"] = json::parse(R"([{"name": "x", "share": 3}, {"name": "y", "share": 1}])");
  j["workload"]["classes"] = json::parse(R"([
    {"name": "small", "share": 1, "specs": ["g1"], "resource_type": "pay_as_you_go",
     "workers": {"values": [0, 3], "shares": [1, 1]}},
    {"name": "big", "share": 3, "specs": ["g1"], "resource_type": "reserved", "pool": "q",
     "priority": {"values": [2, 8], "shares": [1, 4]}}])");
  const auto tasks = gen(j);
  REQUIRE(tasks.size() == 5000);
  std::map<std::string, double> user, tenant, rtype;
  std::map<int, double> workers_small, prio_big;
  double small = 0, big = 0;
  for (const auto& t : tasks) {
    user[t.user] += 1;
    tenant[t.tenant] += 1;
    if (t.resource_type == "pay_as_you_go") small += 1, workers_small[t.workers] += 1;
    else big += 1, prio_big[t.priority] += 1;
  }
  const double n = 5000, tol = 0.03;  // > 4 standard errors of a share at n = 5000
  CHECK(std::fabs(big / n - 0.75) < tol);
  CHECK(std::fabs(user["a"] / n - 0.25) < tol);
  CHECK(std::fabs(user["b"] / n - 0.25) < tol);
  CHECK(std::fabs(user["c"] / n - 0.5) < tol);
  CHECK(std::fabs(tenant["x"] / n - 0.75) < tol);
  CHECK(std::fabs(tenant["y"] / n - 0.25) < tol);
  CHECK(workers_small.size() == 2);
  CHECK(std::fabs(workers_small[3] / small - 0.5) < 2 * tol);
  CHECK(std::fabs(prio_big[8] / big - 0.8) < tol);
  CHECK(prio_big.size() == 2);
  for (const auto& t : tasks)
    if (t.resource_type == "reserved") REQUIRE(t.pool == "q");
}

// ------------------------------------------------------------------ durations

TEST_CASE("workload: lognormal durations have the given median (median_s + sigma, median_s + mean_s)", "[workload]") {
  for (const char* form : {"sigma", "mean_s"}) {
    INFO(form);
    json j = base();
    j["workload"]["tasks"] = 5000;
    j["workload"]["duration"] = {{"distribution", "lognormal"}, {"median_s", 1321}};
    if (std::string(form) == "sigma") j["workload"]["duration"]["sigma"] = 1.5;
    else j["workload"]["duration"]["mean_s"] = 35595;
    std::vector<double> d;
    for (const auto& t : gen(j)) d.push_back(t.duration_s);
    CHECK(std::fabs(median(d) / 1321 - 1) < 0.1);
  }
}

TEST_CASE("workload: exponential durations have the given mean", "[workload]") {
  json j = base();
  j["workload"]["tasks"] = 5000;
  j["workload"]["duration"] = {{"distribution", "exponential"}, {"mean_s", 900}, {"min_s", 0.001}};
  double sum = 0;
  const auto tasks = gen(j);
  for (const auto& t : tasks) sum += t.duration_s;
  CHECK(std::fabs(sum / double(tasks.size()) / 900 - 1) < 0.06);  // sd of the mean: 1.4 %
}

TEST_CASE("workload: empirical durations come only from the list", "[workload]") {
  json j = base();
  j["workload"]["tasks"] = 1000;
  j["workload"]["duration"] = {{"distribution", "empirical"}, {"values", {60, 600, 6000}}};
  std::set<double> seen;
  for (const auto& t : gen(j)) seen.insert(t.duration_s);
  CHECK(seen == std::set<double>{60, 600, 6000});
}

TEST_CASE("workload: empirical durations from a trace entry use its tasks' durations", "[workload]") {
  const auto dir = std::filesystem::temp_directory_path() / ("schedsim-wl-trace-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "jobs.csv").string();
  std::ofstream(path) << "#job id,arrival time (sec),topology,shape,size,duration (sec)\n"
                         "0,0.0,CLOS,1,1,111\n1,5.0,CLOS,1,1,222\n2,9.0,CLOS,1,1,333\n";
  json j = base();
  j["workload"]["tasks"] = 300;
  j["workload"]["duration"] = {{"distribution", "empirical"}, {"trace", {{"format", "philly"}, {"path", path}}}};
  std::set<double> seen;
  for (const auto& t : gen(j)) seen.insert(t.duration_s);
  std::filesystem::remove_all(dir);
  CHECK(seen == std::set<double>{111, 222, 333});
}

TEST_CASE("workload: min_s and max_s clamp every duration", "[workload]") {
  json j = base();
  j["workload"]["tasks"] = 2000;
  j["workload"]["duration"] = {{"distribution", "lognormal"}, {"median_s", 1000}, {"sigma", 3},
                               {"min_s", 100}, {"max_s", 5000}};
  bool at_min = false, at_max = false;
  for (const auto& t : gen(j)) {
    REQUIRE(t.duration_s >= 100);
    REQUIRE(t.duration_s <= 5000);
    at_min = at_min || t.duration_s == 100;
    at_max = at_max || t.duration_s == 5000;
  }
  CHECK(at_min);
  CHECK(at_max);
}

TEST_CASE("workload: a class's own duration and runtime estimate factor", "[workload]") {
  json j = base();
  j["workload"]["classes"][0]["duration"] = {{"distribution", "empirical"}, {"values", {42}}};
  j["workload"]["classes"][0]["runtime_estimate_factor"] = {{"min", 1.5}, {"max", 2}};
  for (const auto& t : gen(j)) {
    REQUIRE(t.duration_s == 42);
    REQUIRE(t.runtime_estimate_s);
    CHECK(*t.runtime_estimate_s >= 63);
    CHECK(*t.runtime_estimate_s <= 84);
  }
}

// ------------------------------------------------------------------ determinism and names

TEST_CASE("workload: the same seed gives the same tasks, another seed other tasks", "[workload]") {
  json j = base();
  auto dump = [](const std::vector<TaskCfg>& v) {
    Scenario s;
    s.tasks = v;
    return sim::io::scenario_to_json(s)["tasks"].dump();
  };
  const std::string a = dump(gen(j)), b = dump(gen(j));
  CHECK(a == b);
  j["seed"] = 8;
  CHECK(dump(gen(j)) != a);
  // A failure model (its own stream) does not change the workload.
  j["seed"] = 7;
  j["cluster"]["pools"][0]["node_groups"][0]["mtbf_s"] = 86400;
  j["cluster"]["pools"][0]["node_groups"][0]["mttr_s"] = 600;
  CHECK(dump(gen(j)) == a);
}

TEST_CASE("workload: names are prefix + index, unique against the scenario's tasks", "[workload]") {
  json j = base();
  j["workload"]["tasks"] = 3;
  Scenario s = parsed(j);
  TaskCfg inline_task;
  inline_task.name = "gen-000001";
  s.tasks.push_back(inline_task);
  REQUIRE(sim::io::apply_workload(s) == 3);
  REQUIRE(s.tasks.size() == 4);
  CHECK(s.tasks[1].name == "gen-000000");
  CHECK(s.tasks[2].name == "gen-000001-2");
  CHECK(s.tasks[3].name == "gen-000002");
}

TEST_CASE("workload: a scenario may have no inline tasks when it has a workload", "[workload]") {
  json j = base();
  CHECK(errors_of(j).empty());
  j["tasks"] = json::array();
  CHECK(errors_of(j).empty());
}

// ------------------------------------------------------------------ validation (one rule each)

TEST_CASE("workload validation: a share must be > 0", "[workload][validation]") {
  json j = base();
  j["workload"]["classes"].push_back(j["workload"]["classes"][0]);
  j["workload"]["classes"][1]["share"] = -1;
  CHECK(errors_of(j) == "s.json: workload.classes[1].share: -1: must be > 0\n");
}

TEST_CASE("workload validation: a class naming an unknown spec", "[workload][validation]") {
  json j = base();
  j["workload"]["classes"][0]["specs"] = {"nope"};
  CHECK(errors_of(j) == "s.json: workload.classes[0].specs[0]: \"nope\": unknown spec (not in cluster.instance_specs)\n");
}

TEST_CASE("workload validation: a class naming an unknown pool", "[workload][validation]") {
  json j = base();
  j["workload"]["classes"][0]["resource_type"] = "reserved";
  j["workload"]["classes"][0]["pool"] = "nope";
  CHECK(errors_of(j) == "s.json: workload.classes[0].pool: \"nope\": unknown pool (not in cluster.pools)\n");
}

TEST_CASE("workload validation: a reserved class needs a pool", "[workload][validation]") {
  json j = base();
  j["workload"]["classes"][0]["resource_type"] = "reserved";
  CHECK(errors_of(j) == "s.json: workload.classes[0].pool: <missing>: a reserved task needs a pool\n");
}

TEST_CASE("workload validation: a daily profile needs 24 weights", "[workload][validation]") {
  json j = base();
  j["workload"]["arrival"]["daily_profile"] = {1, 2};
  CHECK(errors_of(j) == "s.json: workload.arrival.daily_profile: [1,2]: must be an array of 24 numbers >= 0\n");
}

TEST_CASE("workload validation: a weekly profile needs a positive weight", "[workload][validation]") {
  json j = base();
  j["workload"]["arrival"]["weekly_profile"] = std::vector<double>(7, 0.0);
  CHECK(errors_of(j) ==
        "s.json: workload.arrival.weekly_profile: [0.0,0.0,0.0,0.0,0.0,0.0,0.0]: needs at least one weight > 0 "
        "(otherwise nothing ever arrives)\n");
}

TEST_CASE("workload validation: shares and values of a choice have the same length", "[workload][validation]") {
  json j = base();
  j["workload"]["classes"][0]["workers"] = {{"values", {1, 2, 3}}, {"shares", {1, 1}}};
  CHECK(errors_of(j) == "s.json: workload.classes[0].workers.shares: [1,1]: must have as many entries as `values` (3)\n");
}

TEST_CASE("workload validation: an unknown key is an error", "[workload][validation]") {
  json j = base();
  j["workload"]["arrival"]["rate_per_hr"] = 3;
  CHECK(errors_of(j) == "s.json: workload.arrival.rate_per_hr: 3: unknown key `rate_per_hr`; did you mean `rate_per_hour`?\n");
  j = base();
  j["workload"]["classes"][0]["wokers"] = 3;
  CHECK(errors_of(j) == "s.json: workload.classes[0].wokers: 3: unknown key `wokers`; did you mean `workers`?\n");
}

TEST_CASE("workload validation: tasks and/or until_s are required", "[workload][validation]") {
  json j = base();
  j["workload"].erase("tasks");
  CHECK(errors_of(j) == "s.json: workload.tasks: <missing>: required key is missing (give tasks and/or until_s)\n");
}

TEST_CASE("workload validation: the horizon may not generate more than the task limit", "[workload][validation]") {
  json j = base();
  j["workload"].erase("tasks");
  j["workload"]["until_s"] = 1e9;
  CHECK_THAT(errors_of(j), Catch::StartsWith("s.json: workload.until_s: 1000000000.0: the arrival process would generate "
                                             "about 16666667 tasks by until_s, more than the limit of 2000000"));
}

TEST_CASE("workload validation: rate_per_hour must be > 0", "[workload][validation]") {
  json j = base();
  j["workload"]["arrival"]["rate_per_hour"] = 0;
  CHECK(errors_of(j) == "s.json: workload.arrival.rate_per_hour: 0: must be > 0\n");
}

TEST_CASE("workload validation: a lognormal takes exactly one of sigma, mean_s", "[workload][validation]") {
  json j = base();
  j["workload"]["duration"] = {{"distribution", "lognormal"}, {"median_s", 100}};
  CHECK(errors_of(j) == "s.json: workload.duration.sigma: <missing>: a lognormal takes exactly one of sigma, mean_s\n");
  j["workload"]["duration"]["mean_s"] = 50;
  CHECK(errors_of(j) == "s.json: workload.duration.mean_s: 50: must be >= median_s (100) for a lognormal\n");
}

TEST_CASE("workload validation: a key of another distribution is refused", "[workload][validation]") {
  json j = base();
  j["workload"]["duration"]["median_s"] = 5;
  CHECK(errors_of(j) == "s.json: workload.duration.median_s: 5: does not apply to an exponential distribution\n");
}

TEST_CASE("workload validation: max_s must be >= min_s", "[workload][validation]") {
  json j = base();
  j["workload"]["duration"]["min_s"] = 50;
  j["workload"]["duration"]["max_s"] = 10;
  CHECK(errors_of(j) == "s.json: workload.duration.max_s: 10: must be >= min_s (50)\n");
}

TEST_CASE("workload validation: a class without a duration needs the section's", "[workload][validation]") {
  json j = base();
  j["workload"].erase("duration");
  CHECK(errors_of(j) ==
        "s.json: workload.classes[0].duration: <missing>: required key is missing (no workload.duration to default to)\n");
}

TEST_CASE("workload validation: the generator's keys are not class keys", "[workload][validation]") {
  json j = base();
  j["workload"]["classes"][0]["user"] = "alice";
  CHECK(errors_of(j) == "s.json: workload.classes[0].user: \"alice\": is drawn by the generator (workload.users, "
                        "workload.tenants, arrival, duration): not a class key\n");
}

TEST_CASE("workload validation: task rules apply to a class (priority on idle, priority range)", "[workload][validation]") {
  json j = base();
  j["workload"]["classes"][0]["resource_type"] = "idle";
  j["workload"]["classes"][0]["priority"] = {{"values", {1, 2}}, {"shares", {1, 1}}};
  CHECK(errors_of(j) == "s.json: workload.classes[0].priority: 1: an idle task cannot set priority\n");
  j = base();
  j["workload"]["classes"][0]["priority"] = {{"values", {1, 12}}, {"shares", {1, 1}}};
  CHECK(errors_of(j) == "s.json: workload.classes[0].priority.values[1]: 12: must be between 1 and 9\n");
}

TEST_CASE("workload validation: user names are unique", "[workload][validation]") {
  json j = base();
  j["workload"]["users"] = json::parse(R"([{"name": "a", "share": 1}, {"name": "a", "share": 2}])");
  CHECK(errors_of(j) == "s.json: workload.users[1].name: \"a\": duplicate name (also workload.users[0])\n");
}

TEST_CASE("workload validation: name_prefix follows the task name rule", "[workload][validation]") {
  json j = base();
  j["workload"]["name_prefix"] = "Gen_";
  CHECK(errors_of(j) ==
        "s.json: workload.name_prefix: \"Gen_\": must be lowercase letters, digits and '-', starting with a letter or digit\n");
}

// ------------------------------------------------------------------ serialisation

TEST_CASE("workload: scenario_to_json writes the section back and it parses to the same tasks", "[workload]") {
  json j = base();
  j["workload"]["users"] = json::parse(R"([{"name": "a", "share": 1}, {"name": "b", "share": 2}])");
  j["workload"]["arrival"]["daily_profile"] = std::vector<double>(24, 1.0);
  j["workload"]["classes"][0]["workers"] = {{"values", {0, 1}}, {"shares", {1, 3}}};
  j["workload"]["classes"][0]["priority"] = {{"values", {3, 4}}, {"shares", {1, 1}}};
  j["workload"]["classes"][0]["runtime_estimate_factor"] = 1.25;
  const Scenario s = parsed(j);
  const json out = sim::io::scenario_to_json(s);
  REQUIRE(out.contains("workload"));
  const Scenario again = parsed(out);
  CHECK(sim::io::scenario_to_json(again) == out);
  Scenario a = s, b = again;
  REQUIRE(sim::io::apply_workload(a) == 200);
  REQUIRE(sim::io::apply_workload(b) == 200);
  CHECK(sim::io::scenario_to_json(a)["tasks"] == sim::io::scenario_to_json(b)["tasks"]);
}

// ------------------------------------------------------------------ traces: arrival_scale

TEST_CASE("trace arrival_scale must be > 0 (and <= 1000)", "[workload][traces][validation]") {
  json j = base();
  for (const char* v : {"0", "-1", "1001"}) {
    j["traces"] = json::array({{{"format", "philly"}, {"path", "a.csv"}, {"arrival_scale", json::parse(v)}}});
    const std::string rule = std::string(v) == "1001" ? "must be <= 1000" : "must be > 0";
    CHECK(errors_of(j) == "s.json: traces[0].arrival_scale: " + std::string(v) + ": " + rule + "\n");
  }
  j["traces"][0]["arrival_scale"] = 0.5;
  CHECK(errors_of(j).empty());
}

TEST_CASE("workload validation: a choice of workers or priority without values is refused, never drawn from", "[workload][validation]") {
  // {"shares": [...]} alone was reported missing but then drawn from an empty list (a crash).
  json j = base();
  j["workload"]["classes"][0]["workers"] = {{"shares", {6, 3, 1}}};
  CHECK(errors_of(j).find("s.json: workload.classes[0].workers.values: <missing>: required key is missing") == 0);
  j = base();
  j["workload"]["classes"][0]["priority"] = {{"shares", {1, 1}}};
  CHECK(errors_of(j).find("s.json: workload.classes[0].priority.values: <missing>: required key is missing") == 0);
}


TEST_CASE("workload: a generated name is the prefix and a 6-digit zero-padded index, as fmt's {}{:06}", "[workload]") {
  for (std::string prefix : {"", "job-", "gen-"})
    for (std::size_t i : {std::size_t{0}, std::size_t{7}, std::size_t{42}, std::size_t{99999}, std::size_t{100000},
                          std::size_t{999999}, std::size_t{1000000}, std::size_t{1234567}, std::size_t{18446744073709551615ull}})
      CHECK(sim::io::generated_task_name(prefix, i) == fmt::format("{}{:06}", prefix, i));
  for (std::size_t i = 0; i < 20000; i += 7) CHECK(sim::io::generated_task_name("j", i) == fmt::format("j{:06}", i));
}

}  // namespace SCHEDSIM_UNITY_ID
