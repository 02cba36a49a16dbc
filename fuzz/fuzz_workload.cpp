// Harness 9: FuzzedDataProvider -> a scenario whose tasks come from a `workload` section (the
// generator, sim/io/workload.hpp, docs/scenario-format.md "Workload generator"), written as JSON
// text so that the real parser and validation run. Sizes are bounded (at most 300 tasks, or an
// until_s horizon expecting at most about 300 arrivals); values are valid most of the time and
// sometimes not (zero, negative, a key of another distribution, a profile of the wrong length).
// A valid scenario is generated (io::apply_workload) and the generated tasks checked: as many as
// asked (`tasks` alone) or fewer, names prefix + index and unique, submit_s sorted, >= start_s
// and < until_s, durations > 0 within [min_s, max_s], workers, priorities, users and tenants
// among those of the section, runtime estimates within the factor; the same seed gives the same
// tasks. Small workloads are then simulated up to a time bound (fuzz_common.hpp checks).
//
// Set SCHEDSIM_FUZZ_VERBOSE=1 to print each generated scenario and its diagnostics.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_common.hpp"
#include "sim/io/workload.hpp"

namespace {

using nlohmann::json;

template <class T>
const T& pick(FuzzedDataProvider& p, const std::vector<T>& v) {
  return v[p.ConsumeIntegralInRange<std::size_t>(0, v.size() - 1)];
}

/// True once in 64 draws. Never when the data has run out (FuzzedDataProvider then gives the
/// minimum): a short input makes a valid scenario, the rare branches are the invalid ones.
bool rare(FuzzedDataProvider& p) { return p.ConsumeIntegralInRange(0, 63) == 63; }

/// Usually a valid positive number in [lo, hi]; sometimes 0 or negative (validation must refuse).
double num(FuzzedDataProvider& p, double lo, double hi) {
  switch (p.ConsumeIntegralInRange(0, 63)) {
    case 63: return 0;
    case 62: return -lo;
    case 61: return std::round(p.ConsumeFloatingPointInRange<double>(lo, hi) * 1000.0) / 1000.0 + 0.0004;  // sub-ms
    default: break;
  }
  if (p.ConsumeBool()) return static_cast<double>(p.ConsumeIntegralInRange<std::int64_t>(std::int64_t(std::ceil(lo)), std::int64_t(hi)));
  return p.ConsumeFloatingPointInRange<double>(lo, hi);
}

json shares_list(FuzzedDataProvider& p, const std::vector<std::string>& names) {
  json a = json::array();
  const std::size_t n = p.ConsumeIntegralInRange<std::size_t>(1, names.size());
  for (std::size_t i = 0; i < n; ++i) a.push_back({{"name", names[i]}, {"share", num(p, 0.1, 100)}});
  if (rare(p)) a.push_back(a.front());  // duplicate name: refused
  return a;
}

json duration(FuzzedDataProvider& p) {
  json d;
  const int kind = p.ConsumeIntegralInRange(0, 2);
  if (kind == 0) {
    d["distribution"] = "lognormal";
    d["median_s"] = num(p, 1, 7200);
    if (p.ConsumeBool()) d["sigma"] = p.ConsumeFloatingPointInRange<double>(0, 10);
    else d["mean_s"] = d["median_s"].get<double>() * p.ConsumeFloatingPointInRange<double>(1, 50);
    if (rare(p)) d["values"] = json::array({10});  // a key of another distribution
  } else if (kind == 1) {
    d["distribution"] = "exponential";
    d["mean_s"] = num(p, 1, 7200);
  } else {
    d["distribution"] = "empirical";
    json v = json::array();
    const int n = p.ConsumeIntegralInRange(rare(p) ? 0 : 1, 8);
    for (int i = 0; i < n; ++i) v.push_back(num(p, 0.001, 100000));
    d["values"] = v;
  }
  if (p.ConsumeBool()) d["min_s"] = num(p, 0.0001, 600);
  if (p.ConsumeBool()) d["max_s"] = num(p, 1, 200000);
  return d;
}

json choice(FuzzedDataProvider& p, int lo, int hi) {
  if (p.ConsumeBool()) return p.ConsumeIntegralInRange(lo, hi);
  json values = json::array(), shares = json::array();
  const int n = p.ConsumeIntegralInRange(1, 4);
  for (int i = 0; i < n; ++i) {
    values.push_back(p.ConsumeIntegralInRange(lo, hi));
    shares.push_back(num(p, 0.1, 10));
  }
  if (rare(p)) shares.push_back(1);  // one share too many: refused
  return {{"values", values}, {"shares", shares}};
}

json make_scenario(FuzzedDataProvider& p, bool& small) {
  json j;
  j["schema"] = "schedsim/v1";
  j["name"] = "fuzz-workload";
  j["seed"] = p.ConsumeIntegral<std::uint16_t>();
  j["cluster"] = json::parse(R"({
    "instance_specs": [
      {"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960},
      {"name": "a100.1x", "gpu_model": "A100", "gpus": 1, "vcpu": 12, "memory_gib": 120},
      {"name": "cpu", "gpus": 0, "vcpu": 8, "memory_gib": 32}],
    "pools": [
      {"name": "shared", "kind": "shared",
       "node_groups": [{"prefix": "a100-", "count": 4, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]},
      {"name": "team", "kind": "dedicated",
       "node_groups": [{"prefix": "t-", "count": 2, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]})");
  j["quotas"] = json::parse(R"([
    {"user": "alice", "resource_type": "reserved", "pool": "team", "gpus": 16, "vcpu": 192, "memory_gib": 1920}])");
  if (p.ConsumeBool()) j["tasks"] = json::parse(R"([{"name": "gen-000001", "user": "alice", "submit_s": 0,
    "type": "PyTorchJob", "workers": 0, "specs": ["a100.1x"], "resource_type": "pay_as_you_go", "duration_s": 60}])");

  json w;
  const double rate = num(p, 0.5, 600);  // per hour
  const int bound = p.ConsumeIntegralInRange(0, 2);  // tasks, until_s, both
  const int tasks = p.ConsumeIntegralInRange(1, 300);
  if (bound != 1) w["tasks"] = rare(p) && p.ConsumeBool() ? 0 : tasks;
  json arrival;
  double start = 0;
  if (p.ConsumeBool()) {
    start = num(p, 0, 86400);
    arrival["start_s"] = start;
  }
  if (bound != 0) {
    // At most about 300 expected arrivals (profiles average at most 1 here); after start_s
    // (rarely before it: refused).
    const double horizon = rate > 0 ? 300.0 * 3600.0 / rate : 3600.0;
    w["until_s"] = (rare(p) ? 0.0 : std::max(0.0, start)) + num(p, 1, std::max(2.0, std::min(horizon, 1e8)));
  }
  if (p.ConsumeBool()) w["name_prefix"] = pick(p, std::vector<std::string>{"gen-", "job-", "x", "", "Bad Prefix"});
  if (rare(p)) arrival["process"] = pick(p, std::vector<std::string>{"poisson", "uniform"});
  arrival["rate_per_hour"] = rate;
  for (const auto& [key, n] : {std::pair{"daily_profile", 24}, std::pair{"weekly_profile", 7}}) {
    if (!p.ConsumeBool()) continue;
    json prof = json::array();
    const int len = rare(p) ? n - 1 : n;
    for (int i = 0; i < len; ++i) prof.push_back(p.ConsumeBool() ? 1.0 : p.ConsumeFloatingPointInRange<double>(0, 1));
    arrival[key] = prof;
  }
  w["arrival"] = arrival;
  const bool section_duration = p.ConsumeBool();
  if (section_duration) w["duration"] = duration(p);
  if (p.ConsumeBool()) w["users"] = shares_list(p, {"alice", "bob", "carol"});
  if (p.ConsumeBool()) w["tenants"] = shares_list(p, {"research", "product"});
  json classes = json::array();
  const int n_classes = p.ConsumeIntegralInRange(rare(p) ? 0 : 1, 3);
  for (int i = 0; i < n_classes; ++i) {
    json c;
    if (p.ConsumeBool()) c["name"] = "c" + std::to_string(i);
    c["share"] = num(p, 0.1, 10);
    const bool ray = p.ConsumeIntegralInRange(0, 3) == 0;
    c["type"] = ray ? "RayJob" : "PyTorchJob";
    const std::string rt = pick(p, std::vector<std::string>{"pay_as_you_go", "pay_as_you_go", "spot", "reserved", "idle"});
    c["resource_type"] = rt;
    if (rt == "reserved") c["pool"] = "team";
    if (p.ConsumeBool()) {
      c["specs"] = json::array({pick(p, std::vector<std::string>{"a100.8x", "a100.1x", "cpu", "missing"})});
    } else {
      c["replica"] = {{"gpus", p.ConsumeIntegralInRange(0, 8)}, {"vcpu", p.ConsumeIntegralInRange(1, 16)},
                      {"memory_gib", p.ConsumeIntegralInRange(1, 64)}};
    }
    if (ray) c["head_spec"] = "a100.1x";
    c["workers"] = choice(p, rare(p) ? -1 : 0, 3);
    if (rt != "idle" && p.ConsumeBool()) c["priority"] = choice(p, rare(p) ? 0 : 1, 9);
    if (!section_duration || p.ConsumeBool()) c["duration"] = duration(p);
    if (p.ConsumeBool()) {
      if (p.ConsumeBool()) c["runtime_estimate_factor"] = num(p, 0.5, 10);
      else {
        const double lo = num(p, 0.5, 5);
        c["runtime_estimate_factor"] = {{"min", lo}, {"max", lo + p.ConsumeFloatingPointInRange<double>(rare(p) ? -1 : 0, 5)}};
      }
    }
    if (rare(p)) c[pick(p, std::vector<std::string>{"name_x", "submit_s", "user", "duration_s"})] = 1;
    classes.push_back(c);
  }
  w["classes"] = classes;
  if (rare(p)) w["unknown_key"] = 1;
  j["workload"] = w;
  small = p.ConsumeBool();
  return j;
}

/// The values of a choice as written (an integer or {"values": [...]}); empty when absent.
std::vector<int> choice_values(const json& c, const char* key) {
  std::vector<int> v;
  if (!c.contains(key)) return v;
  if (c[key].is_number_integer()) v.push_back(c[key].get<int>());
  else for (const auto& x : c[key]["values"]) v.push_back(x.get<int>());
  return v;
}

void check_generated(const sim::io::Scenario& sc, const json& j, std::size_t inline_tasks, std::size_t n) {
  using namespace sim::io;
  const WorkloadCfg& w = *sc.workload;
  fuzz::check(sc.tasks.size() == inline_tasks + n, "apply_workload returned " + std::to_string(n) + " but added " +
                                                       std::to_string(sc.tasks.size() - inline_tasks));
  if (w.tasks) {
    fuzz::check(static_cast<std::int64_t>(n) <= *w.tasks, std::to_string(n) + " tasks generated, more than tasks " + std::to_string(*w.tasks));
    if (!w.until_s) fuzz::check(static_cast<std::int64_t>(n) == *w.tasks, std::to_string(n) + " tasks generated, not tasks " + std::to_string(*w.tasks));
  }
  std::set<std::string> users, tenants, names;
  for (const auto& u : w.users) users.insert(u.name);
  for (const auto& t : w.tenants) tenants.insert(t.name);
  if (users.empty()) users.insert("workload");
  if (tenants.empty()) tenants.insert("default");
  for (std::size_t i = 0; i < inline_tasks; ++i) names.insert(sc.tasks[i].name);
  const json& jw = j["workload"];
  double last = -1;
  for (std::size_t i = inline_tasks; i < sc.tasks.size(); ++i) {
    const TaskCfg& t = sc.tasks[i];
    const std::string who = "generated task " + t.name;
    const std::string index = std::to_string(i - inline_tasks);
    const std::string expected = w.name_prefix + std::string(index.size() < 6 ? 6 - index.size() : 0, '0') + index;
    fuzz::check(t.name == expected || t.name.rfind(expected + "-", 0) == 0, who + ": not named " + expected);
    fuzz::check(names.insert(t.name).second, who + ": name not unique");
    fuzz::check(std::isfinite(t.submit_s) && t.submit_s >= 0, who + ": submit_s " + std::to_string(t.submit_s));
    fuzz::check(t.submit_s >= last, who + ": submit_s not sorted");
    last = t.submit_s;
    fuzz::check(t.submit_s + 0.0005 >= w.start_s, who + ": submit_s before arrival.start_s");
    if (w.until_s) fuzz::check(t.submit_s < *w.until_s, who + ": submit_s at or after until_s");
    fuzz::check(std::round(t.submit_s * 1000) / 1000 == t.submit_s, who + ": submit_s not rounded to milliseconds");
    fuzz::check(t.duration_s > 0 && std::isfinite(t.duration_s), who + ": duration_s " + std::to_string(t.duration_s));
    fuzz::check(users.count(t.user) == 1, who + ": user " + t.user + " not among the section's users");
    fuzz::check(tenants.count(t.tenant) == 1, who + ": tenant " + t.tenant + " not among the section's tenants");
    // Which class: the one whose workers (and priority) choices allow the task's; at least one must.
    bool some_class = false;
    for (const auto& c : jw["classes"]) {
      const auto ws = choice_values(c, "workers");
      const auto ps = choice_values(c, "priority");
      const bool wk = ws.empty() ? t.workers == 0 : std::find(ws.begin(), ws.end(), t.workers) != ws.end();
      const bool pr = ps.empty() || std::find(ps.begin(), ps.end(), t.priority) != ps.end();
      some_class = some_class || (wk && pr);
    }
    fuzz::check(some_class, who + ": workers " + std::to_string(t.workers) + " / priority " + std::to_string(t.priority) +
                                " of no class");
    if (t.runtime_estimate_s) fuzz::check(*t.runtime_estimate_s > 0, who + ": runtime_estimate_s <= 0");
  }
  // Same seed, same tasks.
  std::vector<std::string> taken;
  for (std::size_t i = 0; i < inline_tasks; ++i) taken.push_back(sc.tasks[i].name);
  const auto again = generate_workload(sc, taken);
  fuzz::check(again.size() == n, "generate_workload is not deterministic (count)");
  for (std::size_t i = 0; i < n; ++i) {
    const TaskCfg& a = again[i];
    const TaskCfg& b = sc.tasks[inline_tasks + i];
    fuzz::check(a.name == b.name && a.submit_s == b.submit_s && a.duration_s == b.duration_s && a.workers == b.workers &&
                    a.user == b.user && a.tenant == b.tenant && a.priority == b.priority,
                "generate_workload is not deterministic (task " + b.name + ")");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::isolate_data_root();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim::io;
  static const bool verbose = [] {
    const char* e = std::getenv("SCHEDSIM_FUZZ_VERBOSE");
    return e && *e == '1';
  }();
  FuzzedDataProvider p(data, size);
  bool simulate = false;
  const json j = make_scenario(p, simulate);
  const std::string label = "fuzz.json";
  const std::string text = j.dump();
  ParseResult r = parse_scenario_text(text, label);
  if (verbose) {
    std::cerr << text << "\n";
    for (const auto& d : r.diagnostics) std::cerr << "  " << d.str() << "\n";
  }
  fuzz::check_diagnostics(r, label);
  if (!r.ok()) return 0;
  fuzz::check(r.scenario->workload.has_value(), "valid scenario lost its workload section");
  Scenario sc = *r.scenario;
  const std::size_t inline_tasks = sc.tasks.size();
  std::size_t n = 0;
  try {
    n = apply_workload(sc);
  } catch (const WorkloadError& e) {
    const std::string m = e.what();
    fuzz::check(!m.empty() && m.find('\n') == std::string::npos, "WorkloadError is not one line: " + m);
    fuzz::check(m.rfind("workload", 0) == 0, "WorkloadError does not start with `workload`: " + m);
    if (verbose) std::cerr << "  WorkloadError: " << m << "\n";
    return 0;
  }
  if (verbose) std::cerr << "  generated " << n << " tasks\n";
  check_generated(sc, j, inline_tasks, n);
  if (simulate && n <= 40) fuzz::simulate_and_check(sc, 3 * 86400.0);
  return 0;
}
