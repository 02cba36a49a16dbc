// Pass 1, the `quotas`, `node_policies` and `scheduler` sections.
#include "sim/io/scenario_read_detail.hpp"

namespace sim::io::detail {

/// At most this many tenants in `scheduler.fair_shares`.
inline constexpr std::size_t k_max_fair_tenants = 10000;

QuotaCfg read_quota(Sink& sink, const json& j, const std::string& path) {
  QuotaCfg q;
  Obj o(sink, j, path, {"user", "resource_type", "pool", "gpus", "vcpu", "memory_gib"});
  o.str("user", q.user, Req::required, true);
  o.enumeration("resource_type", q.resource_type, k_quota_resource_types, Req::required);
  o.str("pool", q.pool);
  o.number("gpus", q.gpus, Req::optional, between(0, k_max_amount));
  o.number("vcpu", q.vcpu, Req::optional, between(0, k_max_amount));
  o.number("memory_gib", q.memory_gib, Req::optional, between(0, k_max_amount));
  return q;
}

NodePolicyCfg read_policy(Sink& sink, const json& j, const std::string& path) {
  NodePolicyCfg p;
  Obj o(sink, j, path,
        {"name", "type", "scope", "effect", "user", "tenant", "workload_types", "nodes", "created_s", "expire_s"});
  o.str("name", p.name, Req::required, true);
  o.enumeration("type", p.type, k_policy_types, Req::required);
  o.enumeration("scope", p.scope, k_policy_scopes, Req::required);
  o.enumeration("effect", p.effect, k_policy_effects);
  o.str("user", p.user);
  o.str("tenant", p.tenant);
  o.str_list("workload_types", p.workload_types, Req::optional, k_task_types);
  o.str_list("nodes", p.nodes, Req::required);
  o.number("created_s", p.created_s, Req::optional, between(0, k_max_time_s));
  o.number("expire_s", p.expire_s, between(0, k_max_time_s));
  return p;
}

/// `registry`: the plugins the scenario will run with; `placement`, `queue_order`,
/// `victim_order` and `admission` must name registered ones (the error lists them).
SchedulerCfg read_scheduler(Sink& sink, const json& j, const std::string& path, const libsched::Registry& registry) {
  SchedulerCfg s;
  Obj o(sink, j, path,
        {"placement", "queue_order", "victim_order", "admission", "preemption", "idle_reclaim", "spot_eviction",
         "queueing", "idle_stability_high_s", "idle_stability_medium_s", "retry_on", "precheck_cordon_s",
         "las_thresholds_gpu_s", "las_starvation_s", "qssf_default_s", "fair_shares"});
  auto plugin = [&](const char* key, std::string& value, const std::vector<std::string>& names) {
    o.enumeration(key, value, std::vector<std::string_view>(names.begin(), names.end()));
  };
  plugin("placement", s.placement, registry.placement.names());
  plugin("queue_order", s.queue_order, registry.queue_order.names());
  plugin("victim_order", s.victim_order, registry.victim_order.names());
  plugin("admission", s.admission, registry.admission.names());
  o.boolean("preemption", s.preemption);
  o.boolean("idle_reclaim", s.idle_reclaim);
  o.boolean("spot_eviction", s.spot_eviction);
  o.enumeration("queueing", s.queueing, k_queueing);
  o.number("idle_stability_high_s", s.idle_stability_high_s, Req::optional, between(0, k_max_time_s));
  o.number("idle_stability_medium_s", s.idle_stability_medium_s, Req::optional, between(0, k_max_time_s));
  o.str_list("retry_on", s.retry_on, Req::optional, k_retry_causes);
  o.number("precheck_cordon_s", s.precheck_cordon_s, Req::optional, between(0, k_max_time_s));
  if (const json* v = o.find("las_thresholds_gpu_s")) {
    const std::string path_th = o.path("las_thresholds_gpu_s");
    if (!v->is_array() || v->empty() || v->size() > 16) {
      sink.error(path_th, dump(*v), "must be an array of 1 to 16 numbers (GPU-seconds)");
    } else {
      std::vector<double> th;
      for (std::size_t i = 0; i < v->size(); ++i) {
        const json& x = (*v)[i];
        const std::string p = path_th + "[" + std::to_string(i) + "]";
        const double d = x.is_number() ? x.get<double>() : 0;
        if (!x.is_number()) sink.error(p, dump(x), "must be a number");
        else if (!(d > 0) || d > 1e15) sink.error(p, dump(x), "must be > 0 and <= 1e15 (GPU-seconds)");
        else if (!th.empty() && !(d > th.back())) sink.error(p, dump(x), "must be greater than the threshold before it");
        else {
          th.push_back(d);
          continue;
        }
        th.clear();
        break;
      }
      if (th.size() == v->size()) s.las_thresholds_gpu_s = std::move(th);
    }
  }
  o.number("las_starvation_s", s.las_starvation_s, Req::optional, between(0, k_max_time_s));
  o.number("qssf_default_s", s.qssf_default_s, Req::optional, between(0, k_max_time_s));
  if (const json* v = o.find("fair_shares")) {
    const std::string path_sh = o.path("fair_shares");
    if (!v->is_object() || v->size() > k_max_fair_tenants) {
      sink.error(path_sh, dump(*v), "must be an object of at most 10000 tenant: share (a number > 0)");
    } else {
      for (const auto& [tenant, x] : v->items()) {
        const std::string p = key_path(path_sh, tenant);
        if (tenant.empty()) sink.error(p, dump(x), "must name a tenant (the key is empty)");
        else if (!x.is_number()) sink.error(p, dump(x), "must be a number");
        else if (!(x.get<double>() > 0) || x.get<double>() > 1e15) sink.error(p, dump(x), "must be > 0 and <= 1e15 (a share)");
        else s.fair_shares[tenant] = x.get<double>();
      }
    }
  }
  return s;
}

}  // namespace sim::io::detail
