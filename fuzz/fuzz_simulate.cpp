// Harness 3: a whole small simulation. FuzzedDataProvider turns the bytes into a scenario (as JSON
// text, so that the real parser and validation run) that is valid most of the time: 1-8 nodes in
// 1-2 pools, 1-20 tasks of both types and every capacity class, priorities, guarantee,
// accept_idle, quotas, node policies, injected events, random node failures and unhealthy nodes,
// start-up costs and failures, checkpoints, resubmissions, RayJob debug and autoscaling, every
// queueing mode and every placement policy of the registry. Valid scenarios are simulated up to
// a time bound; the attempts, wait buckets and snapshots are checked (fuzz_common.hpp) and the
// outputs (summary_json, tasks_csv) rendered in memory.
//
// Set SCHEDSIM_FUZZ_VERBOSE=1 to print each generated scenario and its diagnostics.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <libsched/placement/builtin.hpp>
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_common.hpp"

namespace {

using nlohmann::json;

template <class T>
const T& pick(FuzzedDataProvider& p, const std::vector<T>& v) {
  return v[p.ConsumeIntegralInRange<std::size_t>(0, v.size() - 1)];
}

double seconds(FuzzedDataProvider& p, double lo, double hi) {
  // Mostly whole seconds (like real scenarios), sometimes fractions (ms rounding paths).
  if (p.ConsumeBool()) return p.ConsumeFloatingPointInRange<double>(lo, hi);
  return static_cast<double>(p.ConsumeIntegralInRange<std::int64_t>(static_cast<std::int64_t>(lo),
                                                                      static_cast<std::int64_t>(hi)));
}

const std::vector<std::string> kUsers = {"alice", "bob", "carol"};
const std::vector<std::string> kModels = {"", "A100", "H800"};
const std::vector<std::string> kTypes = {"reserved", "pay_as_you_go", "spot", "idle"};
const std::vector<std::string> kErrors = {"transient", "image_unavailable", "bad_command", "invalid_data_path",
                                          "gpu_oom"};
const std::vector<std::string> kRetry = {"transient", "node_failure", "preemption", "spot_eviction",
                                         "precheck_failure", "image_pull_failure", "image_unavailable",
                                         "bad_command", "invalid_data_path", "gpu_oom"};

/// Does `v`'s JSON text mention `word` (a GPU model in use)?
bool text_has(const json& v, const std::string& word) { return v.dump().find('"' + word + '"') != std::string::npos; }

json make_scenario(FuzzedDataProvider& p) {
  json j;
  j["schema"] = "schedsim/v1";
  j["name"] = "fuzz";
  j["seed"] = p.ConsumeIntegral<std::uint16_t>();

  // ---- cluster: specs, 1-2 pools, 1-8 nodes in all
  json specs = json::array();
  const int n_specs = p.ConsumeIntegralInRange(1, 4);
  for (int i = 0; i < n_specs; ++i) {
    json s;
    s["name"] = "s" + std::to_string(i);
    s["gpu_model"] = pick(p, kModels);
    int gpus = s["gpu_model"] == "" ? 0 : p.ConsumeIntegralInRange(0, 8);
    s["gpus"] = gpus;
    if (gpus == 1 && p.ConsumeBool()) s["gpu_milli"] = pick(p, std::vector<int>{100, 250, 500, 1000});
    s["vcpu"] = p.ConsumeIntegralInRange(0, 64);
    s["memory_gib"] = p.ConsumeIntegralInRange(0, 512);
    specs.push_back(s);
  }
  json pools = json::array();
  std::vector<std::string> pool_names, node_names;
  const int n_pools = p.ConsumeIntegralInRange(1, 2);
  int nodes_left = p.ConsumeIntegralInRange(1, 8);
  for (int pi = 0; pi < n_pools && nodes_left > 0; ++pi) {
    json pool;
    pool["name"] = "p" + std::to_string(pi);
    pool_names.push_back(pool["name"]);
    pool["kind"] = p.ConsumeBool() ? "shared" : "dedicated";
    json groups = json::array();
    const int n_groups = p.ConsumeIntegralInRange(1, 2);
    for (int g = 0; g < n_groups && nodes_left > 0; ++g) {
      json ng;
      const std::string prefix = "n" + std::to_string(pi) + std::to_string(g) + "-";
      const int count = p.ConsumeIntegralInRange(1, nodes_left);
      nodes_left -= count;
      for (int k = 0; k < count; ++k) node_names.push_back(prefix + std::to_string(k));
      ng["prefix"] = prefix;
      ng["count"] = count;
      ng["gpu_model"] = pick(p, kModels);
      ng["gpus"] = ng["gpu_model"] == "" ? 0 : p.ConsumeIntegralInRange(1, 8);
      // Mostly nodes that hold a few replicas; sometimes tiny ones.
      ng["vcpu"] = p.ConsumeProbability<float>() < 0.1f ? p.ConsumeIntegralInRange(0, 16) : p.ConsumeIntegralInRange(64, 256);
      ng["memory_gib"] = p.ConsumeProbability<float>() < 0.1f ? p.ConsumeIntegralInRange(0, 64) : p.ConsumeIntegralInRange(512, 2048);
      if (p.ConsumeBool()) ng["nodes_per_rack"] = p.ConsumeIntegralInRange(0, 2);
      if (p.ConsumeBool()) ng["racks_per_switch"] = p.ConsumeIntegralInRange(0, 2);
      if (p.ConsumeProbability<float>() < 0.2f) {
        ng["mtbf_s"] = seconds(p, 50, 100000);
        ng["mttr_s"] = seconds(p, 0, 5000);
      }
      if (p.ConsumeProbability<float>() < 0.2f) ng["unhealthy_prob"] = pick(p, std::vector<double>{0, 0.1, 0.5, 1});
      if (p.ConsumeBool()) ng["labels"] = json{{"zone", p.ConsumeBool() ? "a" : "b"}};
      groups.push_back(ng);
    }
    pool["node_groups"] = groups;
    pools.push_back(pool);
  }
  j["cluster"] = {{"name", "c"}, {"region", "r"}, {"instance_specs", specs}, {"pools", pools}};

  // ---- quotas
  json quotas = json::array();
  const int n_quotas = p.ConsumeIntegralInRange(0, 4);
  for (int i = 0; i < n_quotas; ++i) {
    json q;
    q["user"] = pick(p, kUsers);
    q["resource_type"] = pick(p, std::vector<std::string>{"reserved", "pay_as_you_go", "spot"});
    if (q["resource_type"] == "reserved" || p.ConsumeBool()) q["pool"] = pick(p, pool_names);
    q["gpus"] = p.ConsumeIntegralInRange(0, 64);
    q["vcpu"] = p.ConsumeIntegralInRange(0, 1000);
    q["memory_gib"] = p.ConsumeIntegralInRange(0, 10000);
    quotas.push_back(q);
  }
  j["quotas"] = quotas;

  // ---- node policies
  json policies = json::array();
  std::vector<std::string> policy_names;
  const int n_policies = p.ConsumeIntegralInRange(0, 2);
  for (int i = 0; i < n_policies; ++i) {
    json np;
    np["name"] = "np" + std::to_string(i);
    policy_names.push_back(np["name"]);
    const bool in = p.ConsumeBool();
    np["type"] = in ? "NodeIn" : "NodeNotIn";
    const bool user_scope = p.ConsumeBool();
    np["scope"] = user_scope ? "user" : "tenant";
    if (user_scope) np["user"] = pick(p, kUsers);
    np["effect"] = p.ConsumeBool() ? "default" : "explicit";
    if (p.ConsumeBool()) np["workload_types"] = json::array({p.ConsumeBool() ? "PyTorchJob" : "RayJob"});
    json nodes = json::array();
    const int k = p.ConsumeIntegralInRange<int>(1, std::min<int>(2, static_cast<int>(node_names.size())));
    for (int n = 0; n < k; ++n) nodes.push_back(pick(p, node_names));
    np["nodes"] = nodes;
    const double created = seconds(p, 0, 5000);
    np["created_s"] = created;
    if (!in || p.ConsumeBool()) np["expire_s"] = created + seconds(p, 60, 259200);
    policies.push_back(np);
  }
  j["node_policies"] = policies;

  // ---- scheduler: every placement policy of the registry
  static const std::vector<std::string> kPlacements = libsched::PlacementRegistry::builtin().names();
  json sched;
  sched["placement"] = pick(p, kPlacements);
  sched["preemption"] = p.ConsumeBool();
  sched["idle_reclaim"] = p.ConsumeBool();
  sched["spot_eviction"] = p.ConsumeBool();
  sched["queueing"] = pick(p, std::vector<std::string>{"greedy", "strict", "backfill"});
  if (p.ConsumeBool()) {
    sched["idle_stability_high_s"] = seconds(p, 0, 7200);
    sched["idle_stability_medium_s"] = seconds(p, 0, 1200);
  }
  if (p.ConsumeProbability<float>() < 0.3f) {
    json retry = json::array();
    const int k = p.ConsumeIntegralInRange(0, 4);
    for (int i = 0; i < k; ++i) retry.push_back(pick(p, kRetry));
    sched["retry_on"] = retry;
  }
  if (p.ConsumeProbability<float>() < 0.2f) sched["precheck_cordon_s"] = seconds(p, 0, 1200);
  j["scheduler"] = sched;

  // ---- tasks
  json tasks = json::array();
  const int n_tasks = p.ConsumeIntegralInRange(1, 20);
  for (int i = 0; i < n_tasks; ++i) {
    json t;
    t["name"] = "t" + std::to_string(i);
    t["user"] = pick(p, kUsers);
    if (p.ConsumeProbability<float>() < 0.2f) t["tenant"] = "other";
    t["submit_s"] = seconds(p, 0, 10000);
    t["duration_s"] = seconds(p, 1, 20000);
    const bool ray = p.ConsumeBool();
    t["type"] = ray ? "RayJob" : "PyTorchJob";
    t["workers"] = p.ConsumeIntegralInRange(0, 4);
    if (p.ConsumeProbability<float>() < 0.25f) {
      json r;
      r["gpus"] = p.ConsumeIntegralInRange(0, 8);
      if (r["gpus"] == 1 && p.ConsumeBool()) r["gpu_milli"] = p.ConsumeIntegralInRange(1, 1000);
      r["vcpu"] = p.ConsumeIntegralInRange(0, 64);
      r["memory_gib"] = p.ConsumeIntegralInRange(0, 512);
      if (p.ConsumeBool()) r["gpu_models"] = json::array({p.ConsumeBool() ? "A100" : "H800"});
      t["replica"] = r;
    } else {
      json s = json::array();
      const int k = p.ConsumeIntegralInRange(1, 2);
      for (int n = 0; n < k; ++n) s.push_back("s" + std::to_string(p.ConsumeIntegralInRange(0, n_specs - 1)));
      t["specs"] = s;
      if (ray && p.ConsumeBool()) t["head_spec"] = "s" + std::to_string(p.ConsumeIntegralInRange(0, n_specs - 1));
    }
    if (p.ConsumeProbability<float>() < 0.2f) t["count_per_node"] = p.ConsumeIntegralInRange(1, 2);
    const std::string rt = pick(p, kTypes);
    t["resource_type"] = rt;
    if (rt == "reserved" || p.ConsumeProbability<float>() < 0.3f) t["pool"] = pick(p, pool_names);
    if (rt != "idle") {
      if (p.ConsumeBool()) t["priority"] = p.ConsumeIntegralInRange(1, 9);
      if (p.ConsumeBool()) t["guarantee"] = p.ConsumeBool();
    }
    bool accept_idle = false;
    if (rt == "reserved" && p.ConsumeBool()) {
      accept_idle = p.ConsumeBool();
      t["accept_idle"] = accept_idle;
      if (p.ConsumeBool()) t["prefer_idle"] = p.ConsumeBool();
    }
    if ((rt == "idle" || accept_idle) && p.ConsumeBool())
      t["idle_stability"] = pick(p, std::vector<std::string>{"high", "medium", "low"});
    if (p.ConsumeProbability<float>() < 0.3f) t["checkpoint_interval_s"] = seconds(p, 1, 5000);
    if (p.ConsumeProbability<float>() < 0.3f) t["fault_tolerance"] = {{"max_resubmissions", p.ConsumeIntegralInRange(0, 3)}};
    if (p.ConsumeProbability<float>() < 0.2f) t["image_pull_retries"] = p.ConsumeIntegralInRange(-1, 3);
    if (!policy_names.empty() && p.ConsumeProbability<float>() < 0.3f) t["node_policies"] = json::array({pick(p, policy_names)});
    if (p.ConsumeProbability<float>() < 0.3f) t["runtime_estimate_s"] = seconds(p, 1, 30000);
    if (p.ConsumeProbability<float>() < 0.2f) t["precheck_s"] = seconds(p, 0, 300);
    if (p.ConsumeProbability<float>() < 0.2f) {
      t["image_pull_s"] = seconds(p, 0, 300);
      t["image_pull_failure_prob"] = pick(p, std::vector<double>{0, 0.2, 0.9, 1});
    }
    if (p.ConsumeProbability<float>() < 0.15f) t["transient_failure_rate_per_h"] = pick(p, std::vector<double>{0, 0.5, 5, 100});
    if (ray) {
      if (p.ConsumeProbability<float>() < 0.2f) {
        t["debug"] = p.ConsumeBool();
        t["debug_retention_s"] = seconds(p, 0, 3000);
      }
      if (p.ConsumeProbability<float>() < 0.3f) {
        json a;
        a["enabled"] = p.ConsumeBool();
        const int lo = p.ConsumeIntegralInRange(0, 3);
        a["min_workers"] = lo;
        a["max_workers"] = lo + p.ConsumeIntegralInRange(0, 3);
        a["idle_reclaim_s"] = seconds(p, 0, 2000);
        a["scale_out"] = p.ConsumeBool() ? "conservative" : "aggressive";
        json demand = json::array();
        const int k = p.ConsumeIntegralInRange(0, 3);
        for (int d = 0; d < k; ++d) demand.push_back({{"at_s", seconds(p, 0, 5000)}, {"workers", p.ConsumeIntegralInRange(0, 6)}});
        a["demand"] = demand;
        t["autoscaling"] = a;
      }
    }
    tasks.push_back(t);
  }
  j["tasks"] = tasks;

  // ---- injected events
  json events = json::array();
  const int n_events = p.ConsumeIntegralInRange(0, 6);
  for (int i = 0; i < n_events; ++i) {
    json e;
    e["at_s"] = seconds(p, 0, 30000);
    switch (p.ConsumeIntegralInRange(0, 3)) {
      case 0: e["kind"] = "node_down"; e["node"] = pick(p, node_names); break;
      case 1: e["kind"] = "node_up"; e["node"] = pick(p, node_names); break;
      case 2:
        e["kind"] = "task_fault";
        e["task"] = "t" + std::to_string(p.ConsumeIntegralInRange(0, n_tasks - 1));
        e["error"] = pick(p, kErrors);
        break;
      default: e["kind"] = "spot_reclaim"; e["nodes"] = json::array({pick(p, node_names)}); break;
    }
    events.push_back(e);
  }
  j["events"] = events;
  if (p.ConsumeProbability<float>() < 0.2f) j["until_s"] = seconds(p, 0, 50000);
  // At least 30 s: the run may last 300000 s, and each snapshot row is checked (a 1 s interval
  // made one input take 36 s under ASan on a loaded machine).
  if (p.ConsumeProbability<float>() < 0.2f) j["timeseries_interval_s"] = seconds(p, 30, 3600);
  // ---- prices (docs/scenario-format.md "Prices"), last so that older corpus inputs decode the
  // same scenario as before: GPU-hour prices of the models in use, some instance-hour and
  // vCPU-hour prices, from 0 to very large; sometimes a price the rules refuse.
  if (p.ConsumeProbability<float>() < 0.4f) {
    const std::vector<double> kPrices = {0, 0.01, 1.6, 2.5, 4.0, 1e6};
    auto row = [&](bool reserved) {
      json r = json::object();
      for (const auto& k : kTypes)
        if ((reserved || k != "reserved") && p.ConsumeBool()) r[k] = pick(p, kPrices);
      return r;
    };
    json prices = {{"currency", "USD"}};
    json models = json::object();
    for (const char* m : {"A100", "H800"})
      if (text_has(j["cluster"], m) && p.ConsumeBool()) models[m] = row(true);
    prices["gpu_models"] = models;
    if (p.ConsumeBool()) {
      json by_spec = json::object();
      for (const auto& s : specs)
        if (p.ConsumeBool()) by_spec[s["name"].get<std::string>()] = row(false);
      prices["instance_specs"] = by_spec;
    }
    if (p.ConsumeBool()) prices["cpu_vcpu"] = row(false);
    if (p.ConsumeProbability<float>() < 0.05f) prices["gpu_models"]["A100"] = {{"spot", -1}};  // refused
    j["prices"] = prices;
  }
  return j;
}

bool verbose() {
  static const bool v = [] {
    const char* e = std::getenv("SCHEDSIM_FUZZ_VERBOSE");
    return e && *e && *e != '0';
  }();
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::isolate_data_root();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider p(data, size);
  const std::string text = make_scenario(p).dump();
  sim::io::ParseResult r = sim::io::parse_scenario_text(text, "fuzz.json");
  fuzz::check_diagnostics(r, "fuzz.json");
  if (verbose()) {
    std::cerr << text << "\n";
    for (const auto& d : r.diagnostics) std::cerr << "  " << d.str() << "\n";
    std::cerr << (r.ok() ? "  -> valid, simulating\n" : "  -> invalid\n");
  }
  if (!r.ok()) return 0;
  // Every time in the scenario is < 60000 s; stop at 300000 s whatever happens (random node
  // failures, image pulls retried forever with image_pull_retries = -1).
  double until = 300000;
  if (r.scenario->until_s) until = std::min(until, *r.scenario->until_s);
  fuzz::simulate_and_check(*r.scenario, until);
  return 0;
}
