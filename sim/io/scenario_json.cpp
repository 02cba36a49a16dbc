// Scenario JSON parsing, validation and serialisation. See scenario_json.hpp and
// docs/scenario-format.md for the keys and the rules (each rule names its source there).
#include "sim/io/scenario_json.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <tuple>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "sim/io/json_file.hpp"
#include "sim/io/limits.hpp"

namespace sim::io {

using nlohmann::json;

namespace {

// ------------------------------------------------------------------ enums and sets

const std::vector<std::string_view> k_task_types = {"PyTorchJob", "RayJob"};
const std::vector<std::string_view> k_resource_types = {"reserved", "pay_as_you_go", "spot", "idle"};
const std::vector<std::string_view> k_quota_resource_types = {"reserved", "pay_as_you_go", "spot"};
const std::vector<std::string_view> k_idle_stability = {"high", "medium", "low"};
const std::vector<std::string_view> k_pool_kinds = {"shared", "dedicated"};
const std::vector<std::string_view> k_policy_types = {"NodeIn", "NodeNotIn"};
const std::vector<std::string_view> k_policy_scopes = {"user", "tenant"};
const std::vector<std::string_view> k_policy_effects = {"default", "explicit"};
const std::vector<std::string_view> k_queueing = {"greedy", "strict", "backfill"};
const std::vector<std::string_view> k_event_kinds = {"node_down", "node_up", "task_fault", "spot_reclaim"};
const std::vector<std::string_view> k_fault_errors = {"transient", "image_unavailable", "bad_command",
                                                      "invalid_data_path", "gpu_oom"};
const std::vector<std::string_view> k_scale_out = {"conservative", "aggressive"};
const std::vector<std::string_view> k_trace_formats = {"openb", "philly", "swf"};
const std::vector<std::string_view> k_retry_causes = {
    "transient",        "node_failure",       "preemption",        "spot_eviction",     "precheck_failure",
    "image_pull_failure", "image_unavailable", "bad_command",       "invalid_data_path", "gpu_oom"};

// Limits (docs/scenario-format.md, "Limits"; sim/io/limits.hpp).
constexpr double k_max_time_s = limits::max_time_s;
constexpr int k_max_node_gpus = limits::max_node_gpus;
constexpr int k_max_group_count = limits::max_group_count;
constexpr double k_max_amount = limits::max_amount;

constexpr double k_block_min_s = 60;               // docs/platform.md: block expiry >= 1 minute
constexpr double k_block_max_s = 72.0 * 3600.0;    // ... and <= 72 hours after creation

bool contains(const std::vector<std::string_view>& set, std::string_view v) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

std::string one_of(const std::vector<std::string_view>& set) {
  std::string s = "must be one of ";
  for (std::size_t i = 0; i < set.size(); ++i) {
    if (i) s += ", ";
    s += "`";
    s += set[i];
    s += "`";
  }
  return s;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string key_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}
std::string index_path(const std::string& parent, std::size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}
std::string dump(const json& j) { return j.dump(); }
std::string num_text(double v) { return fmt::format("{}", v); }

// ------------------------------------------------------------------ diagnostic sink

/// Collects diagnostics for one file. In `dedupe` mode an error is dropped when its path, or a
/// path enclosing it, already has an error (so a value that failed its type check is not blamed
/// again by a cross-field rule that saw the default). The blamed paths are kept in a hash set, so
/// each check costs one lookup per enclosing path (not a scan of every earlier diagnostic).
class Sink {
 public:
  Sink(std::string file, std::vector<Diagnostic>& out, bool dedupe = false)
      : file_(std::move(file)), out_(out), dedupe_(dedupe) {
    if (dedupe_)
      for (const auto& d : out_)
        if (d.is_error()) blamed_.insert(d.path);
  }

  void error(std::string path, std::string value, std::string rule) {
    if (dedupe_) {
      if (already_blamed(path)) return;
      blamed_.insert(path);
    }
    out_.push_back({Diagnostic::Severity::error, file_, std::move(path), std::move(value), std::move(rule)});
  }
  const std::string& file() const { return file_; }
  void warning(std::string path, std::string value, std::string rule) {
    out_.push_back({Diagnostic::Severity::warning, file_, std::move(path), std::move(value), std::move(rule)});
  }

 private:
  bool already_blamed(const std::string& path) const {
    if (blamed_.empty()) return false;
    if (blamed_.count(path)) return true;
    // Every enclosing path ends just before a '.' or '[' of `path`.
    for (std::size_t i = path.size(); i-- > 0;)
      if ((path[i] == '.' || path[i] == '[') && blamed_.count(path.substr(0, i))) return true;
    return false;
  }
  std::string file_;
  std::vector<Diagnostic>& out_;
  bool dedupe_;
  std::unordered_set<std::string> blamed_;
};

// ------------------------------------------------------------------ typed reading of one object

struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  bool lo_inclusive = true;
  double hi = std::numeric_limits<double>::infinity();
  bool hi_inclusive = true;
  bool ok(double v) const {
    const bool lo_ok = lo_inclusive ? v >= lo : v > lo;
    const bool hi_ok = hi_inclusive ? v <= hi : v < hi;
    return lo_ok && hi_ok;
  }
  /// The rule broken by `v`. A range with an exclusive end names only the end `v` violates.
  std::string rule(double v) const {
    const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
    if (has_lo && has_hi && lo_inclusive && hi_inclusive)
      return fmt::format("must be between {} and {}", num_text(lo), num_text(hi));
    if (has_lo && has_hi) {
      const bool lo_ok = lo_inclusive ? v >= lo : v > lo;
      if (!lo_ok) return fmt::format("must be {} {}", lo_inclusive ? ">=" : ">", num_text(lo));
      return fmt::format("must be {} {}", hi_inclusive ? "<=" : "<", num_text(hi));
    }
    if (has_lo) return fmt::format("must be {} {}", lo_inclusive ? ">=" : ">", num_text(lo));
    if (has_hi) return fmt::format("must be {} {}", hi_inclusive ? "<=" : "<", num_text(hi));
    return "";
  }
};
Range any() { return {}; }
Range at_least(double v) { return {v, true}; }
Range above(double v) { return {v, false}; }
Range between(double a, double b) { return {a, true, b, true}; }

enum class Req { optional, required };

/// A JSON object at `path` whose keys are read by name. Unknown keys (not in `known`) are
/// reported as warnings with the nearest known key when the object is opened. When the value is
/// not an object, one type error is reported and every read finds nothing.
class Obj {
 public:
  /// `strict`: an unknown key is an error (the `workload` section), not a warning.
  Obj(Sink& sink, const json& j, std::string path, std::vector<std::string_view> known, bool strict = false)
      : sink_(sink), j_(j), path_(std::move(path)), known_(std::move(known)) {
    if (!j_.is_object()) {
      sink_.error(path_.empty() ? "<root>" : path_, dump(j_), "must be an object");
      return;
    }
    valid_ = true;
    for (const auto& [key, value] : j_.items()) {
      if (contains(known_, key)) continue;
      std::string_view best;
      std::size_t best_d = std::numeric_limits<std::size_t>::max();
      for (auto k : known_) {
        const auto d = edit_distance(key, k);
        if (d < best_d) best_d = d, best = k;
      }
      std::string rule = fmt::format("unknown key `{}`", key);
      if (!best.empty() && best_d <= std::max<std::size_t>(2, key.size() / 2))
        rule += fmt::format("; did you mean `{}`?", best);
      else
        rule += strict ? "" : " (ignored)";
      if (strict)
        sink_.error(key_path(path_, key), dump(value), rule);
      else
        sink_.warning(key_path(path_, key), dump(value), rule);
    }
  }

  bool valid() const { return valid_; }
  const std::string& path() const { return path_; }
  std::string path(std::string_view key) const { return key_path(path_, key); }
  Sink& sink() const { return sink_; }

  const json* find(std::string_view key) const {
    if (!valid_) return nullptr;
    auto it = j_.find(std::string(key));
    return it == j_.end() ? nullptr : &*it;
  }
  bool has(std::string_view key) const { return find(key) != nullptr; }

  /// Returns the value, or reports `<missing>` for a required key.
  const json* get(std::string_view key, Req req) const {
    const json* v = find(key);
    if (!v && req == Req::required && valid_) sink_.error(path(key), missing_value, "required key is missing");
    return v;
  }

  bool str(std::string_view key, std::string& out, Req req = Req::optional, bool non_empty = false) const {
    const json* v = get(key, req);
    if (!v) return false;
    if (!v->is_string()) return type_error(key, *v, "must be a string");
    if (non_empty && v->get_ref<const std::string&>().empty())
      return type_error(key, *v, "must not be empty");
    out = v->get<std::string>();
    return true;
  }

  bool enumeration(std::string_view key, std::string& out, const std::vector<std::string_view>& allowed,
                   Req req = Req::optional) const {
    const json* v = get(key, req);
    if (!v) return false;
    if (!v->is_string() || !contains(allowed, v->get_ref<const std::string&>()))
      return type_error(key, *v, one_of(allowed));
    out = v->get<std::string>();
    return true;
  }

  bool number(std::string_view key, double& out, Req req = Req::optional, Range range = any()) const {
    const json* v = get(key, req);
    if (!v) return false;
    if (!v->is_number()) return type_error(key, *v, "must be a number");
    const double d = v->get<double>();
    if (!range.ok(d)) return type_error(key, *v, range.rule(d));
    out = d;
    return true;
  }

  bool number(std::string_view key, std::optional<double>& out, Range range = any()) const {
    double d = 0;
    if (!number(key, d, Req::optional, range)) return false;
    out = d;
    return true;
  }

  bool integer64(std::string_view key, std::int64_t& out, Req req, Range range) const {
    const json* v = get(key, req);
    if (!v) return false;
    bool integral = v->is_number_integer();
    if (v->is_number_float()) {
      const double d = v->get<double>();
      integral = std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15;
    }
    if (!integral) return type_error(key, *v, "must be an integer");
    const std::int64_t i = v->is_number_unsigned() ? static_cast<std::int64_t>(std::min<std::uint64_t>(
                                                         v->get<std::uint64_t>(), std::numeric_limits<std::int64_t>::max()))
                                                   : v->get<std::int64_t>();
    if (!range.ok(static_cast<double>(i))) return type_error(key, *v, range.rule(static_cast<double>(i)));
    out = i;
    return true;
  }

  /// An integer in 0 .. 2^64-1, exactly (no clamping: two different seeds stay different).
  bool uint64(std::string_view key, std::uint64_t& out, Req req = Req::optional) const {
    const json* v = get(key, req);
    if (!v) return false;
    constexpr const char* rule = "must be an integer from 0 to 18446744073709551615";
    if (v->is_number_unsigned()) {
      out = v->get<std::uint64_t>();
      return true;
    }
    if (v->is_number_integer()) return type_error(key, *v, rule);  // negative
    if (v->is_number_float()) {
      const double d = v->get<double>();
      // 2^64 is exactly representable; every integral double below it converts exactly.
      if (std::isfinite(d) && d >= 0 && d < 18446744073709551616.0 && d == std::floor(d)) {
        out = static_cast<std::uint64_t>(d);
        return true;
      }
      return type_error(key, *v, rule);
    }
    return type_error(key, *v, "must be an integer");
  }

  bool integer(std::string_view key, int& out, Req req = Req::optional, Range range = any()) const {
    std::int64_t i = 0;
    if (!integer64(key, i, req, range)) return false;
    if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max())
      return type_error(key, *find(key), "is out of the 32-bit integer range");
    out = static_cast<int>(i);
    return true;
  }

  bool boolean(std::string_view key, bool& out, Req req = Req::optional) const {
    const json* v = get(key, req);
    if (!v) return false;
    if (!v->is_boolean()) return type_error(key, *v, "must be a boolean (true or false)");
    out = v->get<bool>();
    return true;
  }

  /// A list of strings; each element must be in `allowed` when it is not empty.
  bool str_list(std::string_view key, std::vector<std::string>& out, Req req = Req::optional,
                const std::vector<std::string_view>& allowed = {}) const {
    const json* v = get(key, req);
    if (!v) return false;
    if (!v->is_array()) return type_error(key, *v, "must be an array of strings");
    out.clear();
    bool all_ok = true;
    for (std::size_t i = 0; i < v->size(); ++i) {
      const json& e = (*v)[i];
      if (!e.is_string()) {
        sink_.error(index_path(path(key), i), dump(e), "must be a string");
        all_ok = false;
        continue;
      }
      if (!allowed.empty() && !contains(allowed, e.get_ref<const std::string&>())) {
        sink_.error(index_path(path(key), i), dump(e), one_of(allowed));
        all_ok = false;
        continue;
      }
      out.push_back(e.get<std::string>());
    }
    return all_ok;
  }

  bool labels(std::string_view key, std::map<std::string, std::string>& out) const {
    const json* v = get(key, Req::optional);
    if (!v) return false;
    if (!v->is_object()) return type_error(key, *v, "must be an object of string values");
    for (const auto& [k, e] : v->items()) {
      if (!e.is_string()) {
        sink_.error(key_path(path(key), k), dump(e), "must be a string");
        continue;
      }
      out[k] = e.get<std::string>();
    }
    return true;
  }

  /// Calls fn(element, element_path) for each element of the array at `key`.
  template <class F>
  bool array(std::string_view key, Req req, F&& fn) const {
    const json* v = get(key, req);
    if (!v) return false;
    if (!v->is_array()) return type_error(key, *v, "must be an array");
    for (std::size_t i = 0; i < v->size(); ++i) fn((*v)[i], index_path(path(key), i));
    return true;
  }

  void error(std::string_view key, std::string rule) const {
    const json* v = find(key);
    sink_.error(path(key), v ? dump(*v) : std::string(missing_value), std::move(rule));
  }

 private:
  bool type_error(std::string_view key, const json& v, std::string rule) const {
    sink_.error(path(key), dump(v), std::move(rule));
    return false;
  }
  Sink& sink_;
  const json& j_;
  std::string path_;
  std::vector<std::string_view> known_;
  bool valid_ = false;
};

// ------------------------------------------------------------------ pass 1: structure, types, ranges

InstanceSpecCfg read_spec(Sink& sink, const json& j, const std::string& path) {
  InstanceSpecCfg s;
  Obj o(sink, j, path, {"name", "gpu_model", "gpus", "gpu_milli", "vcpu", "memory_gib"});
  o.str("name", s.name, Req::required, true);
  o.str("gpu_model", s.gpu_model);
  o.integer("gpus", s.gpus, Req::optional, between(0, k_max_node_gpus));
  if (o.integer("gpu_milli", s.gpu_milli, Req::optional, between(1, 1000)) && s.gpu_milli < 1000 && s.gpus != 1)
    o.error("gpu_milli", "a GPU share (gpu_milli < 1000) needs gpus == 1");
  o.number("vcpu", s.vcpu, Req::optional, between(0, k_max_amount));
  o.number("memory_gib", s.memory_gib, Req::optional, between(0, k_max_amount));
  return s;
}

NodeGroupCfg read_node_group(Sink& sink, const json& j, const std::string& path) {
  NodeGroupCfg g;
  Obj o(sink, j, path,
        {"prefix", "count", "gpu_model", "gpus", "vcpu", "memory_gib", "nodes_per_rack", "racks_per_switch", "labels",
         "mtbf_s", "mttr_s", "unhealthy_prob"});
  o.str("prefix", g.prefix, Req::required);
  o.integer("count", g.count, Req::required, between(1, k_max_group_count));
  o.str("gpu_model", g.gpu_model);
  o.integer("gpus", g.gpus, Req::optional, between(0, k_max_node_gpus));
  o.number("vcpu", g.vcpu, Req::optional, between(0, k_max_amount));
  o.number("memory_gib", g.memory_gib, Req::optional, between(0, k_max_amount));
  o.integer("nodes_per_rack", g.nodes_per_rack, Req::optional, at_least(0));
  o.integer("racks_per_switch", g.racks_per_switch, Req::optional, at_least(0));
  o.labels("labels", g.labels);
  o.number("mtbf_s", g.mtbf_s, Req::optional, between(0, k_max_time_s));
  o.number("mttr_s", g.mttr_s, Req::optional, between(0, k_max_time_s));
  o.number("unhealthy_prob", g.unhealthy_prob, Req::optional, between(0, 1));
  return g;
}

NodeCfg read_node(Sink& sink, const json& j, const std::string& path) {
  NodeCfg n;
  Obj o(sink, j, path, {"name", "gpu_model", "gpus", "vcpu", "memory_gib", "rack", "labels"});
  o.str("name", n.name, Req::required, true);
  o.str("gpu_model", n.gpu_model);
  o.integer("gpus", n.gpus, Req::optional, between(0, k_max_node_gpus));
  o.number("vcpu", n.vcpu, Req::optional, between(0, k_max_amount));
  o.number("memory_gib", n.memory_gib, Req::optional, between(0, k_max_amount));
  o.str("rack", n.rack);
  o.labels("labels", n.labels);
  return n;
}

PoolCfg read_pool(Sink& sink, const json& j, const std::string& path) {
  PoolCfg p;
  Obj o(sink, j, path, {"name", "kind", "node_groups", "nodes"});
  o.str("name", p.name, Req::required, true);
  o.enumeration("kind", p.kind, k_pool_kinds);
  o.array("node_groups", Req::optional,
          [&](const json& e, const std::string& ep) { p.node_groups.push_back(read_node_group(sink, e, ep)); });
  o.array("nodes", Req::optional,
          [&](const json& e, const std::string& ep) { p.nodes.push_back(read_node(sink, e, ep)); });
  return p;
}

ClusterCfg read_cluster(Sink& sink, const json& j, const std::string& path) {
  ClusterCfg c;
  Obj o(sink, j, path, {"name", "region", "instance_specs", "pools"});
  o.str("name", c.name);
  o.str("region", c.region);
  o.array("instance_specs", Req::optional,
          [&](const json& e, const std::string& ep) { c.instance_specs.push_back(read_spec(sink, e, ep)); });
  o.array("pools", Req::optional,
          [&](const json& e, const std::string& ep) { c.pools.push_back(read_pool(sink, e, ep)); });
  return c;
}

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
         "queueing", "idle_stability_high_s", "idle_stability_medium_s", "retry_on", "precheck_cordon_s"});
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
  return s;
}

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
         "autoscaling"});
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
  Obj o(sink, j, path, {"at_s", "kind", "node", "nodes", "task", "error"});
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
  return e;
}

TraceCfg read_trace(Sink& sink, const json& j, const std::string& path) {
  TraceCfg t;
  Obj o(sink, j, path,
        {"format", "path", "nodes", "limit", "procs_per_node", "gpus_per_replica", "pool", "resource_type", "time_scale",
         "arrival_scale", "runtime_estimate", "rebase_time", "virtual_clusters"});
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
  if (o.str("virtual_clusters", t.virtual_clusters) && !t.virtual_clusters.empty()) {
    if (t.format != "philly" && !t.format.empty())
      sink.error(o.path("virtual_clusters"), dump(t.virtual_clusters), "only philly traces have virtual clusters");
    else if (t.nodes.empty())
      sink.error(o.path("virtual_clusters"), dump(t.virtual_clusters),
                 "needs the trace's machine list (`nodes`): the virtual clusters' pools are made of its machines");
  }
  return t;
}

bool valid_task_name(const std::string& name);
std::string q(const std::string& s);

// ------------------------------------------------------------------ workload (extension)

const std::vector<std::string_view> k_duration_kinds = {"lognormal", "exponential", "empirical"};
const std::vector<std::string_view> k_arrival_processes = {"poisson"};

/// Relative weights: an array of numbers, each > 0 and <= 1e12, `n` of them when n > 0.
bool read_shares(Sink& sink, const json& v, const std::string& path, std::size_t n, std::vector<double>& out) {
  if (!v.is_array() || v.empty()) {
    sink.error(path, dump(v), "must be a non-empty array of numbers");
    return false;
  }
  if (n && v.size() != n) {
    sink.error(path, dump(v), fmt::format("must have as many entries as `values` ({})", n));
    return false;
  }
  bool ok = true;
  out.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    if (!e.is_number()) {
      sink.error(index_path(path, i), dump(e), "must be a number");
      ok = false;
    } else if (const double d = e.get<double>(); !(d > 0 && d <= limits::max_share)) {
      sink.error(index_path(path, i), dump(e),
                 fmt::format("must be > 0 and <= {} (shares are relative weights)", num_text(limits::max_share)));
      ok = false;
    } else {
      out.push_back(d);
    }
  }
  return ok;
}

/// An integer in `range`, or `{"values": [integers in range], "shares": [weights]}`.
bool read_int_choice(Sink& sink, const json& v, const std::string& path, Range range, ChoiceCfg<int>& out) {
  auto one = [&](const json& e, const std::string& p, int& x) {
    bool integral = e.is_number_integer();
    if (e.is_number_float()) {
      const double d = e.get<double>();
      integral = std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15;
    }
    if (!integral) {
      sink.error(p, dump(e), "must be an integer");
      return false;
    }
    const double d = e.get<double>();
    if (!range.ok(d)) {
      sink.error(p, dump(e), range.rule(d));
      return false;
    }
    x = static_cast<int>(d);
    return true;
  };
  if (v.is_object()) {
    Obj o(sink, v, path, {"values", "shares"}, /*strict=*/true);
    ChoiceCfg<int> c;
    bool ok = true;
    const json* vals = o.get("values", Req::required);
    if (vals && (!vals->is_array() || vals->empty())) {
      o.error("values", "must be a non-empty array of integers");
      ok = false;
    } else if (vals) {
      for (std::size_t i = 0; i < vals->size(); ++i) {
        int x = 0;
        if (one((*vals)[i], index_path(o.path("values"), i), x)) c.values.push_back(x);
        else ok = false;
      }
    }
    if (const json* sh = o.get("shares", Req::required)) {
      if (!read_shares(sink, *sh, o.path("shares"), vals && vals->is_array() ? vals->size() : 0, c.shares)) ok = false;
    } else {
      ok = false;
    }
    if (ok && o.valid()) out = std::move(c);
    return ok && o.valid();
  }
  if (!v.is_number()) {
    sink.error(path, dump(v), "must be an integer or an object {\"values\": [...], \"shares\": [...]}");
    return false;
  }
  int x = 0;
  if (!one(v, path, x)) return false;
  out = ChoiceCfg<int>{{x}, {1}};
  return true;
}


DurationCfg read_duration(Sink& sink, const json& j, const std::string& path) {
  DurationCfg d;
  Obj o(sink, j, path, {"distribution", "median_s", "sigma", "mean_s", "values", "trace", "min_s", "max_s"}, true);
  if (!o.valid()) return d;
  const Range pos{0, false, k_max_time_s, true};
  const bool kind_ok = o.enumeration("distribution", d.distribution, k_duration_kinds, Req::required);
  o.number("median_s", d.median_s, pos);
  o.number("sigma", d.sigma, between(0, limits::max_lognormal_sigma));
  o.number("mean_s", d.mean_s, pos);
  if (const json* v = o.find("values")) {
    if (!v->is_array()) {
      o.error("values", "must be an array of numbers");
    } else {
      for (std::size_t i = 0; i < v->size(); ++i) {
        const json& e = (*v)[i];
        if (!e.is_number() || !pos.ok(e.get<double>()))
          sink.error(index_path(o.path("values"), i), dump(e),
                     e.is_number() ? pos.rule(e.get<double>()) : std::string("must be a number"));
        else
          d.values.push_back(e.get<double>());
      }
    }
  }
  if (const json* t = o.find("trace")) d.trace = read_trace(sink, *t, o.path("trace"));
  o.number("min_s", d.min_s, Req::optional, Range{0, false, k_max_time_s, true});
  o.number("max_s", d.max_s, Req::optional, Range{0, false, k_max_time_s, true});
  if (o.has("max_s") && d.max_s < d.min_s)
    o.error("max_s", fmt::format("must be >= min_s ({})", num_text(d.min_s)));
  if (!kind_ok) return d;
  // Which keys each distribution takes (one problem, one line: the first misplaced key).
  std::vector<std::string_view> allowed;
  if (d.distribution == "lognormal") {
    allowed = {"median_s", "sigma", "mean_s"};
    if (!o.has("median_s")) o.sink().error(o.path("median_s"), missing_value, "required key is missing (lognormal needs median_s and one of sigma, mean_s)");
    if (o.has("sigma") == o.has("mean_s"))
      o.sink().error(o.path("sigma"), o.has("sigma") ? dump(*o.find("sigma")) : std::string(missing_value),
                     "a lognormal takes exactly one of sigma, mean_s");
    else if (d.mean_s && d.median_s && *d.mean_s < *d.median_s)
      o.error("mean_s", fmt::format("must be >= median_s ({}) for a lognormal", num_text(*d.median_s)));
    else if (d.mean_s && d.median_s && std::sqrt(2.0 * std::log(*d.mean_s / *d.median_s)) > limits::max_lognormal_sigma)
      o.error("mean_s", fmt::format("mean_s / median_s gives sigma > {}", num_text(limits::max_lognormal_sigma)));
  } else if (d.distribution == "exponential") {
    allowed = {"mean_s"};
    if (!o.has("mean_s")) o.sink().error(o.path("mean_s"), missing_value, "required key is missing (exponential needs mean_s)");
  } else {
    allowed = {"values", "trace"};
    if (!o.has("values") && !o.has("trace"))
      o.sink().error(o.path("values"), missing_value, "required key is missing (empirical needs values and/or trace)");
    else if (o.has("values") && o.find("values")->is_array() && o.find("values")->empty() && !o.has("trace"))
      o.error("values", "must not be empty");
  }
  for (auto key : {"median_s", "sigma", "mean_s", "values", "trace"})
    if (o.has(key) && !contains(allowed, key))
      o.error(key, fmt::format("does not apply to a{} {} distribution", d.distribution == "exponential" ||
                                                                          d.distribution == "empirical" ? "n" : "",
                               d.distribution));
  return d;
}

/// `[{"name": ..., "share": ...}]`, names non-empty and unique.
std::vector<NamedShareCfg> read_named_shares(Sink& sink, const Obj& parent, std::string_view key) {
  std::vector<NamedShareCfg> out;
  std::map<std::string, std::size_t> seen;
  const json* v = parent.find(key);
  if (v && v->is_array() && v->empty()) parent.error(key, "must not be empty (omit the key for the default)");
  parent.array(key, Req::optional, [&](const json& e, const std::string& p) {
    NamedShareCfg n;
    Obj o(sink, e, p, {"name", "share"}, true);
    o.str("name", n.name, Req::required, true);
    o.number("share", n.share, Req::required, Range{0, false, limits::max_share, true});
    if (!n.name.empty()) {
      auto [it, inserted] = seen.emplace(n.name, out.size());
      if (!inserted) sink.error(o.path("name"), q(n.name), fmt::format("duplicate name (also {}[{}])", parent.path(key), it->second));
    }
    out.push_back(std::move(n));
  });
  return out;
}

/// Keys a class may not set: the generator draws them.
const std::vector<std::string_view> k_class_generated = {"user", "tenant", "submit_s", "duration_s"};
/// Keys of a class that are not task keys.
const std::vector<std::string_view> k_class_own = {"name", "share", "workers", "priority", "duration",
                                                   "runtime_estimate_factor"};

WorkloadClassCfg read_class(Sink& sink, const json& j, const std::string& path) {
  WorkloadClassCfg c;
  if (!j.is_object()) {
    sink.error(path, dump(j), "must be an object");
    return c;
  }
  // The task keys, read by the task reader (its rules, its paths) on a copy where the generated
  // keys hold placeholders; an unknown key is an error here.
  json task = j;
  for (auto k : k_class_own) task.erase(std::string(k));
  for (auto k : k_class_generated)
    if (j.contains(std::string(k)))
      sink.error(key_path(path, k), dump(j.at(std::string(k))),
                 "is drawn by the generator (workload.users, workload.tenants, arrival, duration): not a class key");
  task["name"] = "class";
  task["user"] = "workload";
  task["submit_s"] = 0;
  task["duration_s"] = 1;
  task["workers"] = 0;
  if (!task.contains("type")) task["type"] = "PyTorchJob";
  const json* prio = j.contains("priority") ? &j.at("priority") : nullptr;
  if (prio && prio->is_object()) {
    ChoiceCfg<int> pc;
    if (read_int_choice(sink, *prio, key_path(path, "priority"), between(1, 9), pc)) {
      c.priority = pc;
      task["priority"] = pc.values.front();
    } else {
      task["priority"] = 5;
    }
  } else if (prio) {
    task["priority"] = *prio;
  }
  std::vector<Diagnostic> inner;
  Sink inner_sink(sink.file(), inner);
  c.task = read_task(inner_sink, task, path);
  for (auto& d : inner) {
    if (d.severity == Diagnostic::Severity::warning && d.rule.rfind("unknown key", 0) == 0) {
      d.severity = Diagnostic::Severity::error;
      if (auto pos = d.rule.find(" (ignored)"); pos != std::string::npos) d.rule.erase(pos);
    }
    if (d.is_error()) sink.error(d.path, d.value, d.rule);
    else sink.warning(d.path, d.value, d.rule);
  }
  std::vector<std::string> present;  // key checks were done above: typed reads only here
  for (const auto& item : j.items()) present.push_back(item.key());
  Obj o(sink, j, path, std::vector<std::string_view>(present.begin(), present.end()));
  o.str("name", c.name);
  o.number("share", c.share, Req::required, Range{0, false, limits::max_share, true});
  if (const json* w = o.find("workers")) read_int_choice(sink, *w, o.path("workers"), between(0, limits::max_workers), c.workers);
  c.task.workers = *std::max_element(c.workers.values.begin(), c.workers.values.end());
  c.task.name.clear();
  if (const json* d = o.find("duration")) c.duration = read_duration(sink, *d, o.path("duration"));
  if (const json* f = o.find("runtime_estimate_factor")) {
    const Range fr{0, false, limits::max_estimate_factor, true};
    if (f->is_number()) {
      if (fr.ok(f->get<double>())) c.runtime_estimate_factor = std::pair{f->get<double>(), f->get<double>()};
      else o.error("runtime_estimate_factor", fr.rule(f->get<double>()));
    } else {
      Obj fo(sink, *f, o.path("runtime_estimate_factor"), {"min", "max"}, true);
      double lo = 0, hi = 0;
      const bool a = fo.number("min", lo, Req::required, fr), b = fo.number("max", hi, Req::required, fr);
      if (a && b && hi < lo) fo.error("max", fmt::format("must be >= min ({})", num_text(lo)));
      else if (a && b) c.runtime_estimate_factor = std::pair{lo, hi};
    }
  }
  return c;
}

WorkloadCfg read_workload(Sink& sink, const json& j, const std::string& path) {
  WorkloadCfg w;
  Obj o(sink, j, path, {"tasks", "until_s", "name_prefix", "arrival", "duration", "users", "tenants", "classes"}, true);
  if (!o.valid()) return w;
  std::int64_t n = 0;
  if (o.integer64("tasks", n, Req::optional, between(1, double(limits::max_tasks)))) w.tasks = n;
  o.number("until_s", w.until_s, Range{0, false, k_max_time_s, true});
  if (!o.has("tasks") && !o.has("until_s"))
    sink.error(o.path("tasks"), missing_value, "required key is missing (give tasks and/or until_s)");
  if (o.str("name_prefix", w.name_prefix) && !valid_task_name(w.name_prefix + "0"))
    o.error("name_prefix", "must be lowercase letters, digits and '-', starting with a letter or digit");
  if (const json* a = o.get("arrival", Req::required)) {
    Obj ao(sink, *a, o.path("arrival"), {"process", "rate_per_hour", "start_s", "daily_profile", "weekly_profile"}, true);
    ao.enumeration("process", w.process, k_arrival_processes);
    ao.number("rate_per_hour", w.rate_per_hour, Req::required,
              Range{0, false, limits::max_arrival_rate_per_hour, true});
    ao.number("start_s", w.start_s, Req::optional, between(0, k_max_time_s));
    auto profile = [&](const char* key, std::size_t len, std::vector<double>& out) {
      const json* v = ao.find(key);
      if (!v) return;
      if (!v->is_array() || v->size() != len) {
        ao.error(key, fmt::format("must be an array of {} numbers >= 0", len));
        return;
      }
      bool ok = true, positive = false;
      std::vector<double> vals;
      for (std::size_t i = 0; i < len; ++i) {
        const json& e = (*v)[i];
        if (!e.is_number() || !(e.get<double>() >= 0 && e.get<double>() <= limits::max_share)) {
          sink.error(index_path(ao.path(key), i), dump(e),
                     fmt::format("must be a number >= 0 and <= {}", num_text(limits::max_share)));
          ok = false;
          continue;
        }
        positive = positive || e.get<double>() > 0;
        vals.push_back(e.get<double>());
      }
      if (ok && !positive) ao.error(key, "needs at least one weight > 0 (otherwise nothing ever arrives)");
      if (ok && positive) out = std::move(vals);
    };
    profile("daily_profile", 24, w.daily_profile);
    profile("weekly_profile", 7, w.weekly_profile);
    if (w.until_s && ao.has("start_s") && *w.until_s <= w.start_s)
      o.error("until_s", fmt::format("must be > arrival.start_s ({})", num_text(w.start_s)));
    // Expected number of arrivals when only the horizon bounds them.
    if (w.until_s && !w.tasks && w.rate_per_hour > 0) {
      auto mean = [](const std::vector<double>& v) {
        double s = 0;
        for (double x : v) s += x;
        return v.empty() ? 1.0 : s / double(v.size());
      };
      const double expected =
          w.rate_per_hour * mean(w.daily_profile) * mean(w.weekly_profile) * std::max(0.0, *w.until_s - w.start_s) / 3600.0;
      if (expected > double(limits::max_tasks))
        o.error("until_s", fmt::format("the arrival process would generate about {:.0f} tasks by until_s, more than the limit of {} "
                               "(give `tasks` or a shorter horizon)",
                               expected, limits::max_tasks));
    }
  }
  if (const json* d = o.find("duration")) w.duration = read_duration(sink, *d, o.path("duration"));
  w.users = read_named_shares(sink, o, "users");
  w.tenants = read_named_shares(sink, o, "tenants");
  const json* cls = o.get("classes", Req::required);
  if (cls && cls->is_array() && cls->empty()) o.error("classes", "must not be empty");
  o.array("classes", Req::optional, [&](const json& e, const std::string& p) {
    w.classes.push_back(read_class(sink, e, p));
    if (!w.classes.back().duration && !o.has("duration") && e.is_object())
      sink.error(p + ".duration", missing_value, "required key is missing (no workload.duration to default to)");
  });
  return w;
}

Scenario read_scenario(Sink& sink, const json& j, const libsched::Registry& registry) {
  Scenario s;
  Obj o(sink, j, "",
        {"schema", "name", "seed", "until_s", "timeseries_interval_s", "cluster", "quotas", "node_policies", "scheduler",
         "tasks", "events", "traces", "workload", "fill"});
  if (!o.valid()) return s;
  if (const json* v = o.get("schema", Req::required)) {
    if (!v->is_string() || v->get_ref<const std::string&>() != "schedsim/v1")
      o.error("schema", "must be \"schedsim/v1\"");
  }
  o.str("name", s.name, Req::required, true);
  o.uint64("seed", s.seed);
  o.number("until_s", s.until_s, between(0, k_max_time_s));
  if (o.number("timeseries_interval_s", s.timeseries_interval_s, Req::optional, between(0, k_max_time_s)) &&
      s.timeseries_interval_s > 0 && s.timeseries_interval_s < 1)
    sink.error("timeseries_interval_s", num_text(s.timeseries_interval_s), "must be 0 (automatic) or >= 1");
  if (const json* c = o.get("cluster", Req::required)) s.cluster = read_cluster(sink, *c, "cluster");
  o.array("quotas", Req::optional, [&](const json& e, const std::string& p) { s.quotas.push_back(read_quota(sink, e, p)); });
  o.array("node_policies", Req::optional,
          [&](const json& e, const std::string& p) { s.node_policies.push_back(read_policy(sink, e, p)); });
  if (const json* sc = o.find("scheduler")) s.scheduler = read_scheduler(sink, *sc, "scheduler", registry);
  o.array("traces", Req::optional, [&](const json& e, const std::string& p) { s.traces.push_back(read_trace(sink, e, p)); });
  if (const json* w = o.find("workload")) s.workload = read_workload(sink, *w, "workload");
  const json* tasks = o.find("tasks");
  if (!tasks && s.traces.empty() && !o.has("workload"))
    sink.error("tasks", missing_value, "required key is missing (tasks may be absent or empty only when traces are given)");
  else if (tasks && tasks->is_array() && tasks->empty() && s.traces.empty() && !o.has("workload"))
    o.error("tasks", "must not be empty unless traces are given");
  o.array("tasks", Req::optional, [&](const json& e, const std::string& p) { s.tasks.push_back(read_task(sink, e, p)); });
  o.array("events", Req::optional, [&](const json& e, const std::string& p) { s.events.push_back(read_event(sink, e, p)); });
  if (const json* f = o.find("fill")) {
    Obj fo(sink, *f, "fill", {"target_pct"});
    fo.number("target_pct", s.fill.target_pct, Req::optional, above(0));
  }
  return s;
}

// ------------------------------------------------------------------ pass 2 helpers

/// One expanded node: its name and where it comes from (the origin path is formed only for a
/// message, so expanding 1,000,000 nodes costs one string each).
struct NodeShape {
  std::string name;
  const std::string* gpu_model = nullptr;
  int gpus = 0;
  double vcpu = 0;
  double memory_gib = 0;
  std::size_t pool = 0, index = 0;
  bool from_group = false;
  std::string origin() const {
    return index_path(index_path("cluster.pools", pool) + (from_group ? ".node_groups" : ".nodes"), index) +
           (from_group ? ".prefix" : ".name");
  }
};

std::vector<NodeShape> expand_nodes(const ClusterCfg& c) {
  std::vector<NodeShape> out;
  out.reserve(static_cast<std::size_t>(std::min<std::int64_t>(total_nodes(c), limits::max_total_nodes)));
  for (std::size_t p = 0; p < c.pools.size(); ++p) {
    const auto& pool = c.pools[p];
    for (std::size_t g = 0; g < pool.node_groups.size(); ++g) {
      const auto& ng = pool.node_groups[g];
      for (int i = 0; i < ng.count; ++i)
        out.push_back({ng.prefix + std::to_string(i), &ng.gpu_model, ng.gpus, ng.vcpu, ng.memory_gib, p, g, true});
    }
    for (std::size_t n = 0; n < pool.nodes.size(); ++n) {
      const auto& nd = pool.nodes[n];
      out.push_back({nd.name, &nd.gpu_model, nd.gpus, nd.vcpu, nd.memory_gib, p, n, false});
    }
  }
  return out;
}

bool valid_task_name(const std::string& name) {
  if (name.empty()) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (char c : name)
    if (!alnum(c) && c != '-') return false;
  return alnum(name.front()) && alnum(name.back());
}

std::string q(const std::string& s) { return json(s).dump(); }

/// The distinct node shapes of the cluster with their multiplicity: the "fits" warnings scan
/// these (a few per cluster), not every node, and cache their answer per distinct replica shape,
/// so validation is O(tasks + nodes log nodes) for usual clusters.
class FitIndex {
 public:
  explicit FitIndex(const std::vector<NodeShape>& nodes) {
    std::map<std::tuple<std::string, int, double, double>, long long> count;
    for (const auto& n : nodes) ++count[{*n.gpu_model, n.gpus, n.vcpu, n.memory_gib}];
    for (const auto& [k, c] : count) shapes_.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), c});
  }
  bool empty() const { return shapes_.empty(); }
  /// Replicas of this shape the empty cluster can host (capped at 2^62).
  long long slots(int gpus, double vcpu, double mem, const std::vector<std::string>& models) {
    std::string key = fmt::format("{}|{}|{}|{}", gpus, vcpu, mem, fmt::join(models, "|"));
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    constexpr long long cap = 1LL << 62;
    long long total = 0;
    for (const auto& n : shapes_) {
      const bool model_ok =
          gpus == 0 || models.empty() || std::find(models.begin(), models.end(), n.model) != models.end();
      if (!model_ok || n.gpus < gpus || n.vcpu < vcpu || n.mem < mem) continue;
      long long k = gpus > 0 ? n.gpus / gpus : cap;
      if (vcpu > 0) k = std::min<long long>(k, static_cast<long long>(std::min(n.vcpu / vcpu, 1e18)));
      if (mem > 0) k = std::min<long long>(k, static_cast<long long>(std::min(n.mem / mem, 1e18)));
      k = std::max<long long>(k, 1);
      total = (k >= cap / n.count) ? cap : std::min(cap, total + k * n.count);
    }
    cache_.emplace(std::move(key), total);
    return total;
  }

 private:
  struct Shape {
    std::string model;
    int gpus;
    double vcpu, mem;
    long long count;
  };
  std::vector<Shape> shapes_;
  std::unordered_map<std::string, long long> cache_;
};

/// Warns when a replica (gpus, vcpu, memory) fits on no node whose GPU model is allowed, or
/// when the whole gang (`replicas` of them) does not fit even on the empty cluster (at most
/// sum over nodes of min(GPUs / replica GPUs, vCPU / replica vCPU, GiB / replica GiB)).
void check_replica_fits(Sink& sink, FitIndex& fit, const std::string& path, const std::string& value, int gpus,
                        double vcpu, double mem, const std::vector<std::string>& models, long long replicas) {
  if (fit.empty()) return;
  const long long slots = fit.slots(gpus, vcpu, mem, models);
  if (slots >= replicas) return;
  const std::string where = models.empty() ? std::string() : fmt::format(" with GPU model {}", fmt::join(models, "/"));
  if (slots == 0)
    sink.warning(path, value,
                 fmt::format("a replica of {} GPUs, {} vCPU, {} GiB is larger than every node{}; the task can never start",
                             gpus, num_text(vcpu), num_text(mem), where));
  else
    sink.warning(path, value,
                 fmt::format("a gang of {} replicas of {} GPUs, {} vCPU, {} GiB needs more than the whole cluster{} "
                             "(at most {} such replicas fit on it empty); the task can never start",
                             replicas, gpus, num_text(vcpu), num_text(mem), where, slots));
}

/// Warns when a task's whole demand (head + workers, every candidate spec) exceeds its quota
/// limit even with nothing running, or a reserved task has no quota entry (zero quota): the
/// scheduler reports it as never_fits with quota as the binding constraint. Tasks that may run
/// on idle capacity (idle, accept_idle, prefer_idle) hold no quota there and are skipped.
void check_quota_admits(Sink& sink, const Scenario& s, const TaskCfg& t, const std::string& path,
                        const std::map<std::string, const InstanceSpecCfg*>& spec_by_name) {
  if (t.resource_type == "idle" || t.accept_idle || t.prefer_idle) return;
  if (t.resource_type == "reserved" && t.pool.empty()) return;  // an error of its own
  const QuotaCfg* quota = nullptr;
  for (const auto& qc : s.quotas)
    if (qc.user == t.user && qc.resource_type == t.resource_type && qc.pool == t.pool) quota = &qc;
  if (!quota && t.resource_type != "reserved") return;  // unlimited
  struct Demand { double gpus = 0, vcpu = 0, mem = 0; };
  const bool autoscaled = t.type == "RayJob" && t.autoscaling.enabled;
  const long long workers = autoscaled ? t.autoscaling.min_workers : t.workers;
  auto shape = [&](double gpus, int gpu_milli, double vcpu, double mem) {
    return Demand{gpus * (gpus > 0 ? gpu_milli : 1000) / 1000.0 * t.count_per_node, vcpu * t.count_per_node,
                  mem * t.count_per_node};
  };
  std::vector<Demand> demands;
  if (t.replica) {
    Demand r = shape(t.replica->gpus, t.replica->gpu_milli, t.replica->vcpu, t.replica->memory_gib);
    demands.push_back({r.gpus * double(1 + workers), r.vcpu * double(1 + workers), r.mem * double(1 + workers)});
  }
  for (const auto& name : t.specs) {
    auto it = spec_by_name.find(name);
    if (it == spec_by_name.end()) return;  // reported elsewhere
    Demand w = shape(it->second->gpus, it->second->gpu_milli, it->second->vcpu, it->second->memory_gib);
    Demand h = w;
    if (t.type == "RayJob" && !t.head_spec.empty()) {
      auto hs = spec_by_name.find(t.head_spec);
      if (hs == spec_by_name.end()) return;
      h = shape(hs->second->gpus, hs->second->gpu_milli, hs->second->vcpu, hs->second->memory_gib);
    }
    demands.push_back({h.gpus + w.gpus * double(workers), h.vcpu + w.vcpu * double(workers), h.mem + w.mem * double(workers)});
  }
  if (demands.empty()) return;
  const double eps = 1e-9;
  for (const auto& d : demands)
    if (quota && d.gpus <= quota->gpus + eps && d.vcpu <= quota->vcpu + eps && d.mem <= quota->memory_gib + eps) return;
  const Demand& d = demands.front();
  const std::string owner = fmt::format("{} ({}{}{})", t.user, t.resource_type, t.pool.empty() ? "" : ", pool ", t.pool);
  if (!quota)
    sink.warning(path + ".resource_type", q(t.resource_type),
                 fmt::format("no reserved quota for {}: zero quota, the task can never start", owner));
  else
    sink.warning(path + ".resource_type", q(t.resource_type),
                 fmt::format("the whole task needs {} GPUs, {} vCPU, {} GiB, more than the quota of {} ({} GPUs, {} vCPU, {} "
                             "GiB) even with nothing running; the task can never start",
                             num_text(d.gpus), num_text(d.vcpu), num_text(d.mem), owner, num_text(quota->gpus),
                             num_text(quota->vcpu), num_text(quota->memory_gib)));
}

}  // namespace

// ------------------------------------------------------------------ pass 2: cross-field rules

std::vector<std::string> expanded_node_names(const ClusterCfg& cluster) {
  std::vector<std::string> names;
  for (auto& n : expand_nodes(cluster)) names.push_back(std::move(n.name));
  return names;
}

void validate_scenario(const Scenario& s, std::vector<Diagnostic>& diagnostics) {
  // A reference cannot be checked against a collection whose names are themselves broken (a
  // missing cluster, a pool without a valid count, ...): skip those checks instead of blaming
  // every reference (one problem, one diagnostic).
  // Each pattern starts with a literal prefix: test the prefix first (cheap), the regex only then.
  auto broken = [&](const char* pattern) {
    const std::regex re(pattern);
    const std::string_view pat(pattern);
    const std::string prefix(pat.substr(0, pat.find_first_of("(\\[")));
    return std::any_of(diagnostics.begin(), diagnostics.end(), [&](const Diagnostic& d) {
      return d.is_error() && d.path.compare(0, prefix.size(), prefix) == 0 && std::regex_match(d.path, re);
    });
  };
  const bool specs_broken = broken(R"(cluster(\.instance_specs(\[\d+\](\.name)?)?)?)");
  const bool pools_broken = broken(R"(cluster(\.pools(\[\d+\](\.name)?)?)?)");
  const bool nodes_broken =
      broken(R"(cluster(\.pools(\[\d+\](\.(node_groups|nodes)(\[\d+\](\.(prefix|count|name))?)?)?)?)?)");
  const bool policies_broken = broken(R"(node_policies(\[\d+\](\.name)?)?)");
  const bool tasks_broken = broken(R"(tasks(\[\d+\](\.name)?)?)");

  Sink sink(s.file, diagnostics, /*dedupe=*/true);

  // Duplicate names (contract: node names unique across the cluster; specs/pools/policies/tasks
  // are referenced by name).
  auto check_dupes = [&](const std::string& array, auto const& items, auto name_of) {
    std::map<std::string, std::size_t> first;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string& n = name_of(items[i]);
      if (n.empty()) continue;
      auto [it, inserted] = first.emplace(n, i);
      if (!inserted)
        sink.error(index_path(array, i) + ".name", q(n), fmt::format("duplicate name (also {}[{}])", array, it->second));
    }
  };
  check_dupes("cluster.instance_specs", s.cluster.instance_specs, [](const InstanceSpecCfg& x) -> const std::string& { return x.name; });
  check_dupes("cluster.pools", s.cluster.pools, [](const PoolCfg& x) -> const std::string& { return x.name; });
  check_dupes("node_policies", s.node_policies, [](const NodePolicyCfg& x) -> const std::string& { return x.name; });
  check_dupes("tasks", s.tasks, [](const TaskCfg& x) -> const std::string& { return x.name; });

  std::map<std::string, const InstanceSpecCfg*> spec_by_name;
  for (const auto& sp : s.cluster.instance_specs) spec_by_name.emplace(sp.name, &sp);
  std::set<std::string> pools, policies, tasks;
  for (const auto& p : s.cluster.pools) pools.insert(p.name);
  for (const auto& p : s.node_policies) policies.insert(p.name);
  for (const auto& t : s.tasks) tasks.insert(t.name);

  // A node shape that failed its own check (e.g. gpus 1000000, refused and read as 0) would make
  // every replica look too large: skip the "fits on no node" warnings then.
  bool node_shapes_broken =
      broken(R"(cluster\.pools\[\d+\]\.(node_groups|nodes)\[\d+\]\.(gpus|vcpu|memory_gib|gpu_model))");
  // Node rules (the same for trace nodes: check_node_values) and the mean times of node groups.
  for (std::size_t pi = 0; pi < s.cluster.pools.size(); ++pi) {
    const auto& pool = s.cluster.pools[pi];
    const std::string pp = index_path("cluster.pools", pi);
    for (std::size_t g = 0; g < pool.node_groups.size(); ++g) {
      const auto& ng = pool.node_groups[g];
      const std::string gp = index_path(pp + ".node_groups", g);
      if (auto rule = node_name_problem(ng.prefix, /*allow_empty=*/true); !rule.empty())
        sink.error(gp + ".prefix", q(ng.prefix), rule);
      if (ng.mtbf_s != 0 && !(ng.mtbf_s >= limits::min_mtbf_s))
        sink.error(gp + ".mtbf_s", num_text(ng.mtbf_s),
                   fmt::format("must be 0 (no random failures) or >= {} s", num_text(limits::min_mtbf_s)));
      if (ng.mttr_s != 0 && !(ng.mttr_s >= limits::min_delay_s))
        sink.error(gp + ".mttr_s", num_text(ng.mttr_s),
                   fmt::format("must be 0 or >= {} s (time must advance)", num_text(limits::min_delay_s)));
    }
    for (std::size_t n = 0; n < pool.nodes.size(); ++n) {
      const std::string np = index_path(pp + ".nodes", n);
      check_node_values(pool.nodes[n], [&](const std::string& field, const std::string& value, const std::string& rule) {
        sink.error(np + "." + field, value, rule);
        if (field != "name") node_shapes_broken = true;
      });
    }
  }
  // Never expand more nodes than the limit (1,000 groups x 100,000 nodes is a 38 KB file).
  const std::int64_t node_total = total_nodes(s.cluster);
  const bool too_many_nodes = node_total > limits::max_total_nodes;
  if (too_many_nodes)
    sink.error("cluster.pools", std::to_string(node_total),
               fmt::format("the cluster has {} nodes, more than the limit of {}", node_total, limits::max_total_nodes));
  const auto nodes = too_many_nodes ? std::vector<NodeShape>{} : expand_nodes(s.cluster);
  FitIndex fit_nodes(node_shapes_broken ? std::vector<NodeShape>{} : nodes);
  std::unordered_map<std::string_view, const NodeShape*> node_by_name;
  node_by_name.reserve(nodes.size());
  for (const auto& n : nodes) {
    auto [it, inserted] = node_by_name.emplace(n.name, &n);
    if (!inserted)
      sink.error(n.origin(), q(n.name),
                 fmt::format("node name `{}` is not unique (also from {})", n.name, it->second->origin()));
  }
  // Node names can come from trace node lists too; then references cannot be checked here.
  const bool nodes_from_traces = std::any_of(s.traces.begin(), s.traces.end(), [](const TraceCfg& t) { return !t.nodes.empty(); });
  const bool tasks_from_traces = !s.traces.empty();
  auto known_node = [&](const std::string& n) {
    return nodes_broken || too_many_nodes || nodes_from_traces || node_by_name.count(n) > 0;
  };
  auto known_pool = [&](const std::string& n) { return pools_broken || pools.count(n) > 0; };
  auto known_spec = [&](const std::string& n) { return specs_broken || spec_by_name.count(n) > 0; };
  auto known_policy = [&](const std::string& n) { return policies_broken || policies.count(n) > 0; };
  auto known_task = [&](const std::string& n) {
    return tasks_broken || tasks_from_traces || s.workload.has_value() || tasks.count(n) > 0;
  };


  for (std::size_t i = 0; i < s.quotas.size(); ++i) {
    const auto& qt = s.quotas[i];
    const std::string p = index_path("quotas", i);
    if (!qt.pool.empty() && !known_pool(qt.pool)) sink.error(p + ".pool", q(qt.pool), "unknown pool (not in cluster.pools)");
    if (qt.pool.empty() && qt.resource_type == "reserved")
      sink.error(p + ".pool", missing_value, "a reserved quota needs a pool");
  }

  for (std::size_t i = 0; i < s.node_policies.size(); ++i) {
    const auto& np = s.node_policies[i];
    const std::string p = index_path("node_policies", i);
    if (np.scope == "user" && np.user.empty()) sink.error(p + ".user", missing_value, "a scope=user policy needs `user`");
    for (std::size_t k = 0; k < np.nodes.size(); ++k)
      if (!known_node(np.nodes[k])) sink.error(index_path(p + ".nodes", k), q(np.nodes[k]), "unknown node");
    if (np.type == "NodeNotIn" && !np.expire_s) {
      sink.error(p + ".expire_s", missing_value, "a NodeNotIn block must expire between 1 minute and 72 hours after created_s");
    } else if (np.expire_s) {
      const double d = *np.expire_s - np.created_s;
      if (d < k_block_min_s || d > k_block_max_s)
        sink.error(p + ".expire_s", num_text(*np.expire_s),
                   fmt::format("must be between 1 minute and 72 hours after created_s ({}), i.e. in [{}, {}]",
                               num_text(np.created_s), num_text(np.created_s + k_block_min_s),
                               num_text(np.created_s + k_block_max_s)));
    }
  }

  // The rules of one task (an inline task, or the partial task of a workload class: path `p`).
  auto check_task = [&](const TaskCfg& t, const std::string& p, bool quota_check) {
    if (!t.name.empty() && !valid_task_name(t.name))
      sink.error(p + ".name", q(t.name),
                 "must use lowercase letters, digits and '-', starting and ending with a letter or digit");
    for (std::size_t k = 0; k < t.specs.size(); ++k)
      if (!known_spec(t.specs[k]))
        sink.error(index_path(p + ".specs", k), q(t.specs[k]), "unknown spec (not in cluster.instance_specs)");
    if (!t.head_spec.empty() && !known_spec(t.head_spec))
      sink.error(p + ".head_spec", q(t.head_spec), "unknown spec (not in cluster.instance_specs)");
    if (t.resource_type == "reserved" && t.pool.empty())
      sink.error(p + ".pool", missing_value, "a reserved task needs a pool");
    if (!t.pool.empty() && !known_pool(t.pool)) sink.error(p + ".pool", q(t.pool), "unknown pool (not in cluster.pools)");
    for (std::size_t k = 0; k < t.node_policies.size(); ++k)
      if (!known_policy(t.node_policies[k]))
        sink.error(index_path(p + ".node_policies", k), q(t.node_policies[k]), "unknown node policy");
    if (t.autoscaling.min_workers > t.autoscaling.max_workers)
      sink.error(p + ".autoscaling.min_workers", std::to_string(t.autoscaling.min_workers),
                 fmt::format("must be <= max_workers ({})", t.autoscaling.max_workers));

    // The value rules shared with trace tasks (limits.hpp).
    bool values_ok = true;
    check_task_values(t, [&](const std::string& field, const std::string& value, const std::string& rule) {
      sink.error(p + "." + field, value, rule);
      values_ok = false;
    });
    if (!values_ok) return;  // products and fits below need in-range factors

    // spec x count_per_node: within the limits of one node (checked factors: no overflow).
    auto spec_product_ok = [&](const InstanceSpecCfg& sp, const std::string& path) {
      const long long cpn = t.count_per_node;
      if (sp.gpus > limits::max_node_gpus) return false;  // blamed on the spec itself
      if (sp.gpus * cpn > limits::max_node_gpus) {
        sink.error(path, q(sp.name),
                   fmt::format("spec gpus x count_per_node = {} x {} = {} exceeds {}, the most GPUs of a node", sp.gpus,
                               cpn, sp.gpus * cpn, limits::max_node_gpus));
        return false;
      }
      for (auto [what, v] : {std::pair<const char*, double>{"vcpu", sp.vcpu}, {"memory_gib", sp.memory_gib}})
        if (v * double(cpn) > limits::max_amount) {
          sink.error(path, q(sp.name),
                     fmt::format("spec {} x count_per_node = {} exceeds {}", what, num_text(v * double(cpn)),
                                 num_text(limits::max_amount)));
          return false;
        }
      return true;
    };
    if (!t.head_spec.empty())
      if (auto it = spec_by_name.find(t.head_spec); it != spec_by_name.end()) spec_product_ok(*it->second, p + ".head_spec");

    const std::size_t before_fit_checks = diagnostics.size();
    // Warning: a replica that no node can ever host.
    for (std::size_t k = 0; k < t.specs.size(); ++k) {
      auto it = spec_by_name.find(t.specs[k]);
      if (it == spec_by_name.end()) continue;
      const auto& sp = *it->second;
      if (!spec_product_ok(sp, index_path(p + ".specs", k))) continue;
      std::vector<std::string> models;
      if (!sp.gpu_model.empty()) models.push_back(sp.gpu_model);
      check_replica_fits(sink, fit_nodes, index_path(p + ".specs", k), q(sp.name), sp.gpus * t.count_per_node,
                         sp.vcpu * t.count_per_node, sp.memory_gib * t.count_per_node, models,
                         std::max<long long>(1, t.workers + (t.head_spec.empty() ? 1LL : 0LL)));
    }
    if (t.replica) {
      const auto& r = *t.replica;
      check_replica_fits(sink, fit_nodes, p + ".replica", "", r.gpus * t.count_per_node, r.vcpu * t.count_per_node,
                         r.memory_gib * t.count_per_node, r.gpu_models, 1LL + t.workers);
    }
    // One problem, one diagnostic: a task already warned about as never fitting the cluster
    // is not warned about its quota too.
    if (quota_check && diagnostics.size() == before_fit_checks) check_quota_admits(sink, s, t, p, spec_by_name);
  };
  for (std::size_t i = 0; i < s.tasks.size(); ++i) check_task(s.tasks[i], index_path("tasks", i), true);
  if (s.workload) {
    // A class's task keys obey the task rules (unknown spec, pool or policy, quota, fits), checked
    // with its largest gang; users are drawn, so the quota warning is left to the generated tasks.
    for (std::size_t i = 0; i < s.workload->classes.size(); ++i) {
      check_task(s.workload->classes[i].task, index_path("workload.classes", i), false);
    }
  }

  for (std::size_t i = 0; i < s.events.size(); ++i) {
    const auto& e = s.events[i];
    const std::string p = index_path("events", i);
    if (!e.node.empty() && !known_node(e.node)) sink.error(p + ".node", q(e.node), "unknown node");
    for (std::size_t k = 0; k < e.nodes.size(); ++k)
      if (!known_node(e.nodes[k])) sink.error(index_path(p + ".nodes", k), q(e.nodes[k]), "unknown node");
    if (!e.task.empty() && !known_task(e.task))
      sink.error(p + ".task", q(e.task), "unknown task (not in tasks)");
  }

  // Scenario-wide totals (nodes were checked above, before expanding them).
  check_scenario_totals(s, [&](const std::string& field, const std::string& value, const std::string& rule) {
    if (field != "cluster.pools") sink.error(field, value, rule);
  });
}

// ------------------------------------------------------------------ entry points

bool ParseResult::ok() const { return scenario.has_value() && count_errors(diagnostics) == 0; }

std::optional<json> parse_scenario_json(std::string_view text, const std::string& file_label,
                                        std::vector<Diagnostic>& diagnostics) {
  return parse_json_text<json>(text, file_label, diagnostics);
}

ParseResult parse_scenario_document(const json& j, const std::string& file_label,
                                    const libsched::Registry& registry) {
  ParseResult r;
  Sink sink(file_label, r.diagnostics);
  if (!j.is_object()) {
    sink.error("<root>", dump(j), "a scenario must be a JSON object");
    return r;
  }
  try {
    Scenario s = read_scenario(sink, j, registry);
    s.file = file_label;
    validate_scenario(s, r.diagnostics);
    r.scenario = std::move(s);
  } catch (const json::exception& e) {  // defensive: never escapes as an abort
    sink.error("<root>", "", std::string("cannot read the scenario: ") + e.what());
  }
  return r;
}

ParseResult parse_scenario_text(std::string_view text, const std::string& file_label,
                                const libsched::Registry& registry) {
  ParseResult r;
  auto j = parse_scenario_json(text, file_label, r.diagnostics);
  if (!j) return r;
  return parse_scenario_document(*j, file_label, registry);
}

std::optional<std::string> read_scenario_stream(std::istream& in, const std::string& label, std::string_view what,
                                                std::vector<Diagnostic>& diagnostics) {
  return read_text_stream(in, label, what, diagnostics);
}

std::optional<std::string> read_scenario_file(const std::string& path, std::vector<Diagnostic>& diagnostics) {
  JsonReadOptions o;
  o.allow_pipe = true;  // `schedsim run <(generate ...)`
  return read_text_file(path, "a scenario file", diagnostics, o).text;
}


ParseResult load_scenario_file(const std::string& path, const libsched::Registry& registry) {
  ParseResult r;
  auto text = read_scenario_file(path, r.diagnostics);
  if (!text) return r;
  return parse_scenario_text(*text, path, registry);
}

// ------------------------------------------------------------------ serialisation

namespace {

json labels_json(const std::map<std::string, std::string>& m) {
  json j = json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

json task_json(const TaskCfg& t) {
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
  if (t.type == "RayJob") {
    if (!t.head_spec.empty()) j["head_spec"] = t.head_spec;
    j["debug"] = t.debug;
    j["debug_retention_s"] = t.debug_retention_s;
    const auto& a = t.autoscaling;
    json demand = json::array();
    for (const auto& st : a.demand) demand.push_back({{"at_s", st.at_s}, {"workers", st.workers}});
    j["autoscaling"] = {{"enabled", a.enabled},           {"min_workers", a.min_workers}, {"max_workers", a.max_workers},
                        {"idle_reclaim_s", a.idle_reclaim_s}, {"scale_out", a.scale_out},     {"demand", demand}};
  }
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
    json e = task_json(c.task);
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
    classes.push_back(std::move(e));
  }
  j["classes"] = classes;
  return j;
}

}  // namespace

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

  json tasks = json::array();
  for (const auto& t : s.tasks) tasks.push_back(task_json(t));
  j["tasks"] = tasks;

  json events = json::array();
  for (const auto& e : s.events) {
    json ev = {{"at_s", e.at_s}, {"kind", e.kind}};
    if (!e.node.empty()) ev["node"] = e.node;
    if (!e.nodes.empty()) ev["nodes"] = e.nodes;
    if (!e.task.empty()) ev["task"] = e.task;
    if (!e.error.empty()) ev["error"] = e.error;
    events.push_back(std::move(ev));
  }
  j["events"] = events;

  json traces = json::array();
  for (const auto& t : s.traces) traces.push_back(trace_json(t));
  j["traces"] = traces;
  if (s.workload) j["workload"] = workload_json(*s.workload);
  j["fill"] = {{"target_pct", s.fill.target_pct}};
  return j;
}

}  // namespace sim::io
