// Serialisation: scenario_to_json, the inverse of the scenario reader (defaults written out).
#include "sim/io/scenario_json.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sim::io {

using nlohmann::json;


namespace {

json labels_json(const std::map<std::string, std::string>& m) {
  json j = json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}


json trace_json(const TraceCfg& t) {
  json e = {{"format", t.format},
            {"path", t.path},
            {"nodes", t.nodes},
            {"procs_per_node", t.procs_per_node},
            {"pool", t.pool},
            {"resource_type", t.resource_type},
            {"time_scale", t.time_scale},
            {"arrival_scale", t.arrival_scale}};
  if (t.limit) e["limit"] = *t.limit;
  if (t.gpus_per_replica) e["gpus_per_replica"] = t.gpus_per_replica;
  if (t.runtime_estimate == "affine")
    e["runtime_estimate"] = {{"factor", t.estimate_factor}, {"add_s", t.estimate_add_s}};
  else if (!t.runtime_estimate.empty())
    e["runtime_estimate"] = t.runtime_estimate;
  if (t.rebase_time) e["rebase_time"] = true;
  if (!t.virtual_clusters.empty()) e["virtual_clusters"] = t.virtual_clusters;
  if (t.max_resubmissions) e["max_resubmissions"] = t.max_resubmissions;
  if (t.checkpoint_interval_s) e["checkpoint_interval_s"] = *t.checkpoint_interval_s;
  return e;
}

json choice_json(const ChoiceCfg<int>& c) {
  if (c.fixed()) return c.values.front();
  return {{"values", c.values}, {"shares", c.shares}};
}

json duration_json(const DurationCfg& d) {
  json j = {{"distribution", d.distribution}, {"min_s", d.min_s}, {"max_s", d.max_s}};
  if (d.median_s) j["median_s"] = *d.median_s;
  if (d.sigma) j["sigma"] = *d.sigma;
  if (d.mean_s) j["mean_s"] = *d.mean_s;
  if (d.distribution == "empirical") {
    j["values"] = d.values;
    if (d.trace) j["trace"] = trace_json(*d.trace);
  }
  return j;
}

json named_shares_json(const std::vector<NamedShareCfg>& v) {
  json a = json::array();
  for (const auto& n : v) a.push_back({{"name", n.name}, {"share", n.share}});
  return a;
}

json workload_json(const WorkloadCfg& w) {
  json j;
  if (w.tasks) j["tasks"] = *w.tasks;
  if (w.until_s) j["until_s"] = *w.until_s;
  j["name_prefix"] = w.name_prefix;
  json arrival = {{"process", w.process}, {"rate_per_hour", w.rate_per_hour}, {"start_s", w.start_s}};
  if (!w.daily_profile.empty()) arrival["daily_profile"] = w.daily_profile;
  if (!w.weekly_profile.empty()) arrival["weekly_profile"] = w.weekly_profile;
  j["arrival"] = arrival;
  if (w.duration) j["duration"] = duration_json(*w.duration);
  if (!w.users.empty()) j["users"] = named_shares_json(w.users);
  if (!w.tenants.empty()) j["tenants"] = named_shares_json(w.tenants);
  json classes = json::array();
  for (const auto& c : w.classes) {
    json e = task_to_json(c.task);
    for (auto k : {"name", "user", "tenant", "submit_s", "duration_s"}) e.erase(k);
    if (!c.name.empty()) e["name"] = c.name;
    e["share"] = c.share;
    e["workers"] = choice_json(c.workers);
    if (c.priority) e["priority"] = choice_json(*c.priority);
    if (c.duration) e["duration"] = duration_json(*c.duration);
    if (c.runtime_estimate_factor) {
      const auto [lo, hi] = *c.runtime_estimate_factor;
      e["runtime_estimate_factor"] = lo == hi ? json(lo) : json{{"min", lo}, {"max", hi}};
    }
    if (!c.users.empty()) e["users"] = named_shares_json(c.users);
    if (!c.tenants.empty()) e["tenants"] = named_shares_json(c.tenants);
    classes.push_back(std::move(e));
  }
  j["classes"] = classes;
  return j;
}

}  // namespace

json task_to_json(const TaskCfg& t) {
  json j;
  j["name"] = t.name;
  j["user"] = t.user;
  j["tenant"] = t.tenant;
  j["submit_s"] = t.submit_s;
  j["duration_s"] = t.duration_s;
  j["type"] = t.type;
  j["workers"] = t.workers;
  if (t.replica) {
    const auto& r = *t.replica;
    j["replica"] = {{"gpus", r.gpus}, {"gpu_milli", r.gpu_milli}, {"vcpu", r.vcpu}, {"memory_gib", r.memory_gib},
                    {"gpu_models", r.gpu_models}};
  } else {
    j["specs"] = t.specs;
  }
  j["count_per_node"] = t.count_per_node;
  j["resource_type"] = t.resource_type;
  if (!t.pool.empty()) j["pool"] = t.pool;
  const bool idle = t.resource_type == "idle";
  if (!idle || t.priority_set) j["priority"] = t.priority;
  if (!idle || t.guarantee_set) j["guarantee"] = t.guarantee;
  if (t.resource_type == "reserved") {
    j["accept_idle"] = t.accept_idle;
    j["prefer_idle"] = t.prefer_idle;
  }
  if (idle || (t.resource_type == "reserved" && t.accept_idle)) j["idle_stability"] = t.idle_stability;
  if (t.checkpoint_interval_s) j["checkpoint_interval_s"] = *t.checkpoint_interval_s;
  j["fault_tolerance"] = {{"max_resubmissions", t.fault_tolerance.max_resubmissions}};
  j["image_pull_retries"] = t.image_pull_retries;
  j["node_policies"] = t.node_policies;
  if (t.runtime_estimate_s) j["runtime_estimate_s"] = *t.runtime_estimate_s;
  j["precheck_s"] = t.precheck_s;
  j["image_pull_s"] = t.image_pull_s;
  j["image_pull_failure_prob"] = t.image_pull_failure_prob;
  j["transient_failure_rate_per_h"] = t.transient_failure_rate_per_h;
  if (t.checkpoint_on_notice) j["checkpoint_on_notice"] = true;  // absent = false (older files stay byte-identical)
  if (t.type == "RayJob") {
    if (!t.head_spec.empty()) j["head_spec"] = t.head_spec;
    j["debug"] = t.debug;
    j["debug_retention_s"] = t.debug_retention_s;
    const auto& a = *t.autoscaling;
    json demand = json::array();
    for (const auto& st : a.demand) demand.push_back({{"at_s", st.at_s}, {"workers", st.workers}});
    j["autoscaling"] = {{"enabled", a.enabled},           {"min_workers", a.min_workers}, {"max_workers", a.max_workers},
                        {"idle_reclaim_s", a.idle_reclaim_s}, {"scale_out", a.scale_out},     {"demand", demand}};
  }
  return j;
}

json scenario_to_json(const Scenario& s) {
  json j;
  j["schema"] = s.schema;
  j["name"] = s.name;
  j["seed"] = s.seed;
  if (s.until_s) j["until_s"] = *s.until_s;
  j["timeseries_interval_s"] = s.timeseries_interval_s;

  json specs = json::array();
  for (const auto& sp : s.cluster.instance_specs)
    specs.push_back({{"name", sp.name}, {"gpu_model", sp.gpu_model}, {"gpus", sp.gpus}, {"gpu_milli", sp.gpu_milli},
                     {"vcpu", sp.vcpu}, {"memory_gib", sp.memory_gib}});
  json pools = json::array();
  for (const auto& p : s.cluster.pools) {
    json groups = json::array();
    for (const auto& g : p.node_groups)
      groups.push_back({{"prefix", g.prefix},
                        {"count", g.count},
                        {"gpu_model", g.gpu_model},
                        {"gpus", g.gpus},
                        {"vcpu", g.vcpu},
                        {"memory_gib", g.memory_gib},
                        {"nodes_per_rack", g.nodes_per_rack},
                        {"racks_per_switch", g.racks_per_switch},
                        {"labels", labels_json(g.labels)},
                        {"mtbf_s", g.mtbf_s},
                        {"mttr_s", g.mttr_s},
                        {"unhealthy_prob", g.unhealthy_prob}});
    json nodes = json::array();
    for (const auto& n : p.nodes)
      nodes.push_back({{"name", n.name},
                       {"gpu_model", n.gpu_model},
                       {"gpus", n.gpus},
                       {"vcpu", n.vcpu},
                       {"memory_gib", n.memory_gib},
                       {"rack", n.rack},
                       {"labels", labels_json(n.labels)}});
    pools.push_back({{"name", p.name}, {"kind", p.kind}, {"node_groups", groups}, {"nodes", nodes}});
  }
  j["cluster"] = {{"name", s.cluster.name}, {"region", s.cluster.region}, {"instance_specs", specs}, {"pools", pools}};

  json quotas = json::array();
  for (const auto& qt : s.quotas) {
    json e = {{"user", qt.user}, {"resource_type", qt.resource_type}, {"gpus", qt.gpus}, {"vcpu", qt.vcpu},
              {"memory_gib", qt.memory_gib}};
    if (!qt.pool.empty()) e["pool"] = qt.pool;
    quotas.push_back(std::move(e));
  }
  j["quotas"] = quotas;

  json policies = json::array();
  for (const auto& np : s.node_policies) {
    json e = {{"name", np.name},     {"type", np.type},     {"scope", np.scope},
              {"effect", np.effect}, {"tenant", np.tenant}, {"workload_types", np.workload_types},
              {"nodes", np.nodes},   {"created_s", np.created_s}};
    if (!np.user.empty()) e["user"] = np.user;
    if (np.expire_s) e["expire_s"] = *np.expire_s;
    policies.push_back(std::move(e));
  }
  j["node_policies"] = policies;

  const auto& sc = s.scheduler;
  j["scheduler"] = {{"placement", sc.placement},
                    {"queue_order", sc.queue_order},
                    {"victim_order", sc.victim_order},
                    {"admission", sc.admission},
                    {"preemption", sc.preemption},
                    {"idle_reclaim", sc.idle_reclaim},
                    {"spot_eviction", sc.spot_eviction},
                    {"queueing", sc.queueing},
                    {"idle_stability_high_s", sc.idle_stability_high_s},
                    {"idle_stability_medium_s", sc.idle_stability_medium_s},
                    {"retry_on", sc.retry_on},
                    {"precheck_cordon_s", sc.precheck_cordon_s}};
  // (only for las or when set: resolved scenarios of the other orders stay byte-identical)
  if (sc.queue_order == "las" || sc.queue_order == "gittins" || sc.las_thresholds_gpu_s != SchedulerCfg{}.las_thresholds_gpu_s)
    j["scheduler"]["las_thresholds_gpu_s"] = sc.las_thresholds_gpu_s;
  if (sc.las_starvation_s != 0) j["scheduler"]["las_starvation_s"] = sc.las_starvation_s;
  if (sc.queue_order == "qssf" || sc.qssf_default_s != SchedulerCfg{}.qssf_default_s) j["scheduler"]["qssf_default_s"] = sc.qssf_default_s;
  if (sc.queue_order == "fair" || !sc.fair_shares.empty()) {
    json shares = json::object();
    for (const auto& [tenant, share] : sc.fair_shares) shares[tenant] = share;
    j["scheduler"]["fair_shares"] = shares;
  }

  json tasks = json::array();
  for (const auto& t : s.tasks) tasks.push_back(task_to_json(t));
  j["tasks"] = tasks;

  json events = json::array();
  for (const auto& e : s.events) {
    json ev = {{"at_s", e.at_s}, {"kind", e.kind}};
    if (!e.node.empty()) ev["node"] = e.node;
    if (!e.nodes.empty()) ev["nodes"] = e.nodes;
    if (!e.task.empty()) ev["task"] = e.task;
    if (!e.error.empty()) ev["error"] = e.error;
    if (e.notice_s) ev["notice_s"] = *e.notice_s;
    events.push_back(std::move(ev));
  }
  j["events"] = events;

  json traces = json::array();
  for (const auto& t : s.traces) traces.push_back(trace_json(t));
  j["traces"] = traces;
  if (s.workload) j["workload"] = workload_json(*s.workload);
  j["fill"] = {{"target_pct", s.fill.target_pct}};
  if (s.prices) {
    auto classes = [](const ClassPricesCfg& c) {
      json o = json::object();
      if (c.reserved) o["reserved"] = *c.reserved;
      if (c.pay_as_you_go) o["pay_as_you_go"] = *c.pay_as_you_go;
      if (c.spot) o["spot"] = *c.spot;
      if (c.idle) o["idle"] = *c.idle;
      return o;
    };
    json pr = {{"currency", s.prices->currency}};
    json models = json::object(), specs = json::object();
    for (const auto& [name, c] : s.prices->gpu_models) models[name] = classes(c);
    for (const auto& [name, c] : s.prices->instance_specs) specs[name] = classes(c);
    pr["gpu_models"] = models;
    pr["instance_specs"] = specs;
    pr["cpu_vcpu"] = classes(s.prices->cpu_vcpu);
    j["prices"] = pr;
  }
  if (s.spot_reclaim) {
    auto table = [](const std::map<std::string, SpotReclaimRateCfg>& m) {
      json o = json::object();
      for (const auto& [name, r] : m) o[name] = {{"rate_per_node_h", r.rate_per_node_h}, {"notice_s", r.notice_s}};
      return o;
    };
    j["spot_reclaim"] = {{"gpu_models", table(s.spot_reclaim->gpu_models)}, {"pools", table(s.spot_reclaim->pools)}};
  }
  if (s.arrival_scale != 1.0) j["arrival_scale"] = s.arrival_scale;
  if (s.measure) j["measure"] = {{"start_s", s.measure->start_s}, {"end_s", s.measure->end_s}};
  if (!s.throughput.empty()) {
    json rows = json::array();
    for (const auto& r : s.throughput) rows.push_back({{"match", {{"name_glob", r.name_glob}}}, {"speed", r.speed}});
    j["throughput"] = rows;
  }
  return j;
}

}  // namespace sim::io
