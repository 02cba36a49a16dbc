// Internal to the scenario reader (scenario_*.cpp), not part of the installed API: may change any time.
// The diagnostic sink, the typed reading of one JSON object, the shared enum sets and limits,
// and the section readers that scenario_json.cpp and the other section readers call.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <libsched/registry.hpp>
#include <nlohmann/json.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/io/limits.hpp"
#include "sim/io/scenario.hpp"

namespace sim::io::detail {

using nlohmann::json;

// ------------------------------------------------------------------ enums and sets

inline const std::vector<std::string_view> k_task_types = {"PyTorchJob", "RayJob"};
inline const std::vector<std::string_view> k_resource_types = {"reserved", "pay_as_you_go", "spot", "idle"};
inline const std::vector<std::string_view> k_quota_resource_types = {"reserved", "pay_as_you_go", "spot"};
inline const std::vector<std::string_view> k_idle_stability = {"high", "medium", "low"};
inline const std::vector<std::string_view> k_pool_kinds = {"shared", "dedicated"};
inline const std::vector<std::string_view> k_policy_types = {"NodeIn", "NodeNotIn"};
inline const std::vector<std::string_view> k_policy_scopes = {"user", "tenant"};
inline const std::vector<std::string_view> k_policy_effects = {"default", "explicit"};
inline const std::vector<std::string_view> k_queueing = {"greedy", "strict", "backfill"};
inline const std::vector<std::string_view> k_event_kinds = {"node_down", "node_up", "task_fault", "spot_reclaim"};
inline const std::vector<std::string_view> k_fault_errors = {"transient", "image_unavailable", "bad_command",
                                                             "invalid_data_path", "gpu_oom"};
inline const std::vector<std::string_view> k_scale_out = {"conservative", "aggressive"};
inline const std::vector<std::string_view> k_trace_formats = {"openb", "philly", "swf"};
inline const std::vector<std::string_view> k_retry_causes = {
    "transient",        "node_failure",       "preemption",        "spot_eviction",     "precheck_failure",
    "image_pull_failure", "image_unavailable", "bad_command",       "invalid_data_path", "gpu_oom"};

// Limits (docs/scenario-format.md, "Limits"; sim/io/limits.hpp).
inline constexpr double k_max_time_s = limits::max_time_s;
inline constexpr int k_max_node_gpus = limits::max_node_gpus;
inline constexpr int k_max_group_count = limits::max_group_count;
inline constexpr double k_max_amount = limits::max_amount;

inline bool contains(const std::vector<std::string_view>& set, std::string_view v) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

inline std::string one_of(const std::vector<std::string_view>& set) {
  std::string s = "must be one of ";
  for (std::size_t i = 0; i < set.size(); ++i) {
    if (i) s += ", ";
    s += "`";
    s += set[i];
    s += "`";
  }
  return s;
}

inline std::size_t edit_distance(std::string_view a, std::string_view b) {
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

inline std::string key_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}
inline std::string index_path(const std::string& parent, std::size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}
inline std::string dump(const json& j) { return j.dump(); }
inline std::string num_text(double v) { return fmt::format("{}", v); }

/// Lowercase letters, digits and '-', starting and ending with a letter or digit.
inline bool valid_task_name(const std::string& name) {
  if (name.empty()) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (char c : name)
    if (!alnum(c) && c != '-') return false;
  return alnum(name.front()) && alnum(name.back());
}

/// `s` as a JSON string: the VALUE part of a diagnostic about a name.
inline std::string q(const std::string& s) { return json(s).dump(); }

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
inline Range any() { return {}; }
inline Range at_least(double v) { return {v, true}; }
inline Range above(double v) { return {v, false}; }
inline Range between(double a, double b) { return {a, true, b, true}; }

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

  /// The same, into a shared key (sim/io/interned.hpp): unchanged when absent or refused.
  bool str(std::string_view key, Interned& out, Req req = Req::optional, bool non_empty = false) const {
    std::string s;
    if (!str(key, s, req, non_empty)) return false;
    out = Interned(s);
    return true;
  }
  bool enumeration(std::string_view key, Interned& out, const std::vector<std::string_view>& allowed,
                   Req req = Req::optional) const {
    std::string s;
    if (!enumeration(key, s, allowed, req)) return false;
    out = Interned(s);
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

// ------------------------------------------------------------------ section readers (pass 1)

// scenario_read_cluster.cpp
ClusterCfg read_cluster(Sink& sink, const json& j, const std::string& path);
// scenario_read_policies.cpp
QuotaCfg read_quota(Sink& sink, const json& j, const std::string& path);
NodePolicyCfg read_policy(Sink& sink, const json& j, const std::string& path);
SchedulerCfg read_scheduler(Sink& sink, const json& j, const std::string& path, const libsched::Registry& registry);
// scenario_read_tasks.cpp
TaskCfg read_task(Sink& sink, const json& j, const std::string& path);
EventCfg read_event(Sink& sink, const json& j, const std::string& path);
TraceCfg read_trace(Sink& sink, const json& j, const std::string& path);
// scenario_read_workload.cpp
WorkloadCfg read_workload(Sink& sink, const json& j, const std::string& path);
// scenario_read_prices.cpp
PricesCfg read_prices(Sink& sink, const json& j, const std::string& path);
// spot_reclaim.cpp
SpotReclaimCfg read_spot_reclaim(Sink& sink, const json& j, const std::string& path);
// throughput.cpp
std::vector<ThroughputCfg> read_throughput(Sink& sink, const json& j, const std::string& path);

}  // namespace sim::io::detail
