// Pass 1, the `tasks`, `events` and `traces` sections (a task's replica and autoscaling too).
#include "sim/io/scenario_read_detail.hpp"

namespace sim::io::detail {

namespace {

ReplicaCfg read_replica(Sink& sink, const json& j, const std::string& path) {
  ReplicaCfg r;
  Obj o(sink, j, path, {"gpus", "gpu_milli", "vcpu", "memory_gib", "gpu_models"});
  o.integer("gpus", r.gpus, Req::optional, at_least(0));
  if (o.integer("gpu_milli", r.gpu_milli, Req::optional, between(1, 1000)) && r.gpu_milli < 1000 && r.gpus != 1)
    o.error("gpu_milli", "a GPU share (gpu_milli < 1000) needs gpus == 1");
  o.number("vcpu", r.vcpu, Req::optional, between(0, k_max_amount));
  o.number("memory_gib", r.memory_gib, Req::optional, between(0, k_max_amount));
  o.str_list("gpu_models", r.gpu_models);
  return r;
}

AutoscalingCfg read_autoscaling(Sink& sink, const json& j, const std::string& path) {
  AutoscalingCfg a;
  Obj o(sink, j, path, {"enabled", "min_workers", "max_workers", "idle_reclaim_s", "scale_out", "demand"});
  o.boolean("enabled", a.enabled);
  o.integer("min_workers", a.min_workers, Req::optional, at_least(0));
  o.integer("max_workers", a.max_workers, Req::optional, at_least(0));
  o.number("idle_reclaim_s", a.idle_reclaim_s, Req::optional, between(0, k_max_time_s));
  o.enumeration("scale_out", a.scale_out, k_scale_out);
  o.array("demand", Req::optional, [&](const json& e, const std::string& ep) {
    AutoscalingCfg::Step step;
    Obj so(sink, e, ep, {"at_s", "workers"});
    so.number("at_s", step.at_s, Req::required, between(0, k_max_time_s));
    so.integer("workers", step.workers, Req::required, at_least(0));
    a.demand.push_back(step);
  });
  return a;
}

}  // namespace

TaskCfg read_task(Sink& sink, const json& j, const std::string& path) {
  TaskCfg t;
  Obj o(sink, j, path,
        {"name",
         "user",
         "tenant",
         "submit_s",
         "duration_s",
         "type",
         "workers",
         "specs",
         "replica",
         "count_per_node",
         "head_spec",
         "resource_type",
         "pool",
         "priority",
         "guarantee",
         "accept_idle",
         "prefer_idle",
         "idle_stability",
         "checkpoint_interval_s",
         "fault_tolerance",
         "image_pull_retries",
         "node_policies",
         "runtime_estimate_s",
         "precheck_s",
         "image_pull_s",
         "image_pull_failure_prob",
         "transient_failure_rate_per_h",
         "debug",
         "debug_retention_s",
         "autoscaling",
         "checkpoint_on_notice"});
  if (!o.valid()) return t;
  o.str("name", t.name, Req::required, true);
  o.str("user", t.user, Req::required, true);
  o.str("tenant", t.tenant);
  o.number("submit_s", t.submit_s, Req::required, between(0, k_max_time_s));
  o.number("duration_s", t.duration_s, Req::required, Range{0, false, k_max_time_s, true});
  const bool type_ok = o.enumeration("type", t.type, k_task_types, Req::required);
  o.integer("workers", t.workers, Req::required, at_least(0));

  // specs (non-empty list) or replica (inline shape), exactly one.
  const bool has_specs = o.has("specs"), has_replica = o.has("replica");
  if (!has_specs && !has_replica) {
    o.sink().error(o.path("specs"), missing_value, "required key is missing (give `specs` or `replica`)");
  } else if (has_specs && has_replica) {
    o.error("replica", "`specs` and `replica` are mutually exclusive");
  }
  if (has_specs && o.str_list("specs", t.specs) && t.specs.empty()) o.error("specs", "must be a non-empty list");
  if (has_replica) t.replica = read_replica(sink, *o.find("replica"), o.path("replica"));

  o.integer("count_per_node", t.count_per_node, Req::optional, at_least(1));
  const bool rt_ok = o.enumeration("resource_type", t.resource_type, k_resource_types);
  o.str("pool", t.pool);
  t.priority_set = o.has("priority");
  o.integer("priority", t.priority, Req::optional, between(1, 9));
  t.guarantee_set = o.has("guarantee");
  o.boolean("guarantee", t.guarantee);
  o.boolean("accept_idle", t.accept_idle);
  o.boolean("prefer_idle", t.prefer_idle);
  o.enumeration("idle_stability", t.idle_stability, k_idle_stability);
  o.number("checkpoint_interval_s", t.checkpoint_interval_s, Range{0, false, k_max_time_s, true});
  if (const json* ft = o.find("fault_tolerance")) {
    Obj fo(sink, *ft, o.path("fault_tolerance"), {"max_resubmissions"});
    fo.integer("max_resubmissions", t.fault_tolerance.max_resubmissions, Req::optional, at_least(0));
  }
  o.integer("image_pull_retries", t.image_pull_retries, Req::optional, at_least(-1));
  o.str_list("node_policies", t.node_policies);
  o.number("runtime_estimate_s", t.runtime_estimate_s, Range{0, false, k_max_time_s, true});
  o.number("precheck_s", t.precheck_s, Req::optional, between(0, k_max_time_s));
  o.number("image_pull_s", t.image_pull_s, Req::optional, between(0, k_max_time_s));
  o.number("image_pull_failure_prob", t.image_pull_failure_prob, Req::optional, between(0, 1));
  o.number("transient_failure_rate_per_h", t.transient_failure_rate_per_h, Req::optional, at_least(0));
  o.boolean("debug", t.debug);
  o.number("debug_retention_s", t.debug_retention_s, Req::optional, between(0, k_max_time_s));
  o.str("head_spec", t.head_spec);
  if (const json* as = o.find("autoscaling")) t.autoscaling = read_autoscaling(sink, *as, o.path("autoscaling"));
  o.boolean("checkpoint_on_notice", t.checkpoint_on_notice);

  // Presence rules (they need to know which keys the file set, not just their values).
  if (rt_ok && t.resource_type == "idle") {
    // docs/platform.md "Resource types" / "Validation": idle tasks cannot set priority or guarantee.
    if (t.priority_set) o.error("priority", "an idle task cannot set priority");
    if (t.guarantee_set) o.error("guarantee", "an idle task cannot set guarantee");
  }
  // Guarantee means non-preemptible capacity; spot capacity is preemptible by definition
  // (docs/scheduler.md "Preemption"). `false` is the default and harmless.
  if (rt_ok && t.resource_type == "spot" && t.guarantee)
    o.error("guarantee", "a spot task cannot set guarantee: spot capacity is always preemptible");
  if (rt_ok && t.resource_type != "reserved") {
    for (auto key : {"accept_idle", "prefer_idle"})
      if (o.has(key)) o.error(key, fmt::format("only a reserved task may set {} (resource_type is {})", key, t.resource_type));
  }
  if (rt_ok && o.has("idle_stability") && !(t.resource_type == "idle" || (t.resource_type == "reserved" && t.accept_idle)))
    o.error("idle_stability", "idle_stability applies only to an idle task or a reserved task with accept_idle");
  if (type_ok && t.type == "PyTorchJob") {
    for (auto key : {"head_spec", "autoscaling", "debug", "debug_retention_s"})
      if (o.has(key)) o.error(key, fmt::format("{} is a RayJob-only option (type is PyTorchJob)", key));
  }
  return t;
}

EventCfg read_event(Sink& sink, const json& j, const std::string& path) {
  EventCfg e;
  Obj o(sink, j, path, {"at_s", "kind", "node", "nodes", "task", "error", "notice_s"});
  if (!o.valid()) return e;
  o.number("at_s", e.at_s, Req::required, between(0, k_max_time_s));
  const bool kind_ok = o.enumeration("kind", e.kind, k_event_kinds, Req::required);
  const bool node_event = kind_ok && (e.kind == "node_down" || e.kind == "node_up");
  const bool fault = kind_ok && e.kind == "task_fault";
  const bool reclaim = kind_ok && e.kind == "spot_reclaim";
  o.str("node", e.node, node_event ? Req::required : Req::optional, true);
  o.str_list("nodes", e.nodes, reclaim ? Req::required : Req::optional);
  o.str("task", e.task, fault ? Req::required : Req::optional, true);
  o.enumeration("error", e.error, k_fault_errors, fault ? Req::required : Req::optional);
  if (o.has("notice_s") && kind_ok && !reclaim)
    o.error("notice_s", fmt::format("only a spot_reclaim event takes notice_s (kind is {})", e.kind));
  else
    o.number("notice_s", e.notice_s, between(0, k_max_time_s));
  return e;
}

TraceCfg read_trace(Sink& sink, const json& j, const std::string& path) {
  TraceCfg t;
  Obj o(sink, j, path,
        {"format", "path", "nodes", "limit", "procs_per_node", "gpus_per_replica", "pool", "resource_type", "time_scale",
         "arrival_scale", "runtime_estimate", "rebase_time", "virtual_clusters", "max_resubmissions",
         "checkpoint_interval_s"});
  o.enumeration("format", t.format, k_trace_formats, Req::required);
  o.str("path", t.path, Req::required, true);
  o.str("nodes", t.nodes);
  std::int64_t limit = 0;
  if (o.integer64("limit", limit, Req::optional, at_least(0))) t.limit = static_cast<std::size_t>(limit);
  o.integer("procs_per_node", t.procs_per_node, Req::optional, at_least(1));
  o.integer("gpus_per_replica", t.gpus_per_replica, Req::optional, between(1, 64));
  if (t.gpus_per_replica != 0 && t.format != "philly" && !t.format.empty())
    sink.error(o.path("gpus_per_replica"), std::to_string(t.gpus_per_replica), "only philly traces take gpus_per_replica");
  o.str("pool", t.pool);
  o.enumeration("resource_type", t.resource_type, k_resource_types);
  o.number("time_scale", t.time_scale, Req::optional, above(0));
  o.number("arrival_scale", t.arrival_scale, Req::optional, Range{0, false, limits::max_arrival_scale, true});
  if (const json* v = o.find("runtime_estimate")) {
    if (v->is_object()) {
      Obj e(sink, *v, o.path("runtime_estimate"), {"factor", "add_s"});
      t.runtime_estimate = "affine";
      e.number("factor", t.estimate_factor, Req::required, above(0));
      e.number("add_s", t.estimate_add_s, Req::optional, between(0, k_max_time_s));
    } else {
      o.enumeration("runtime_estimate", t.runtime_estimate, {"requested", "actual"});
      if (v->is_string() && *v == "requested" && t.format != "swf" && !t.format.empty())
        sink.error(o.path("runtime_estimate"), dump(*v), "only swf traces carry a requested time (use \"actual\" or {\"factor\": F, \"add_s\": A})");
    }
  }
  o.boolean("rebase_time", t.rebase_time);
  o.integer("max_resubmissions", t.max_resubmissions, Req::optional, between(0, limits::max_resubmissions));
  o.number("checkpoint_interval_s", t.checkpoint_interval_s, between(limits::min_interval_s, k_max_time_s));
  if (o.str("virtual_clusters", t.virtual_clusters) && !t.virtual_clusters.empty()) {
    if (t.format != "philly" && !t.format.empty())
      sink.error(o.path("virtual_clusters"), dump(t.virtual_clusters), "only philly traces have virtual clusters");
    else if (t.nodes.empty())
      sink.error(o.path("virtual_clusters"), dump(t.virtual_clusters),
                 "needs the trace's machine list (`nodes`): the virtual clusters' pools are made of its machines");
  }
  return t;
}

}  // namespace sim::io::detail
