// The one value check for tasks and nodes (scenario files and traces alike); see limits.hpp.
#include "sim/io/limits.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <unordered_set>

#include <fmt/format.h>

namespace sim::io {

namespace {

std::string num(double v) { return fmt::format("{}", v); }

/// Checks written so that NaN fails every range. The field names are views (a string is made
/// only for a report: these run for every task of a million-task trace). The test is inline, the
/// report out of line and cold (the checks run for every generated task too).
[[gnu::cold, gnu::noinline]] void report_range(const ProblemFn& report, std::string_view field, double v, double lo, double hi) {
  report(std::string(field), num(v), fmt::format("must be between {} and {}", num(lo), num(hi)));
}
[[gnu::cold, gnu::noinline]] void report_positive(const ProblemFn& report, std::string_view field, double v, double hi) {
  report(std::string(field), num(v), fmt::format("must be > 0 and <= {}", num(hi)));
}
[[gnu::cold, gnu::noinline]] void report_zero_or(const ProblemFn& report, std::string_view field, double v, double lo, double hi) {
  report(std::string(field), num(v),
         fmt::format("must be 0 or between {} and {} (time must advance by at least {} s)", num(lo), num(hi), num(lo)));
}
[[gnu::cold, gnu::noinline]] void report_int_range(const ProblemFn& report, std::string_view field, long long v, long long lo,
                                                   long long hi) {
  report(std::string(field), std::to_string(v), fmt::format("must be between {} and {}", lo, hi));
}
inline void in_range(const ProblemFn& report, std::string_view field, double v, double lo, double hi) {
  if (!(v >= lo && v <= hi)) [[unlikely]]
    report_range(report, field, v, lo, hi);
}
inline void positive_up_to(const ProblemFn& report, std::string_view field, double v, double hi) {
  if (!(v > 0 && v <= hi)) [[unlikely]]
    report_positive(report, field, v, hi);
}
/// 0 (none) or in [lo, hi].
inline void zero_or(const ProblemFn& report, std::string_view field, double v, double lo, double hi) {
  if (v == 0) return;
  if (!(v >= lo && v <= hi)) [[unlikely]]
    report_zero_or(report, field, v, lo, hi);
}
inline void int_range(const ProblemFn& report, std::string_view field, long long v, long long lo, long long hi) {
  if (v < lo || v > hi) [[unlikely]]
    report_int_range(report, field, v, lo, hi);
}

}  // namespace

std::string node_name_problem(std::string_view name, bool allow_empty) {
  if (name.empty() && !allow_empty) return "a node name must not be empty";
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == ';') return "a node name must not contain `;` (the separator of node lists in tasks.csv)";
    if (c < 0x20 || c == 0x7f) return "a node name must not contain control characters";
  }
  return {};
}

namespace {

/// Bytes of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, surrogates or code
/// points past U+10FFFF) that starts at s[i] (s[i] >= 0x80), or 0 when it is not one.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  int n = 0;
  unsigned char lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) n = 1;
  else if (c == 0xe0) n = 2, lo = 0xa0;
  else if (c == 0xed) n = 2, hi = 0x9f;
  else if (c >= 0xe1 && c <= 0xef) n = 2;
  else if (c == 0xf0) n = 3, lo = 0x90;
  else if (c == 0xf4) n = 3, hi = 0x8f;
  else if (c >= 0xf1 && c <= 0xf3) n = 3;
  else return 0;
  if (i + std::size_t(n) >= s.size()) return 0;
  for (int k = 1; k <= n; ++k) {
    const unsigned char d = static_cast<unsigned char>(s[i + std::size_t(k)]);
    if (k == 1 ? (d < lo || d > hi) : (d & 0xc0) != 0x80) return 0;
  }
  return std::size_t(n) + 1;
}

constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;

/// For the 8 bytes at `p`: a word whose high bits (kHighBits) are zero exactly when all 8 are
/// printable ASCII (0x20 to 0x7e), the bytes that text_problem never refuses. No byte below
/// 0x20 (`(w - 0x20..) & ~w` sets a high bit exactly when one is) and none of 0x7f and above
/// (`(w + 0x01..) | w` then sets a high bit; a carry into the next byte comes only from 0xff,
/// itself refused).
inline std::uint64_t unprintable8(const char* p) {
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return ((w - 0x20 * ones) & ~w) | ((w + ones) | w);
}

/// True when all 8 bytes at `p` are printable ASCII (unprintable8).
bool printable_ascii8(const char* p) { return (unprintable8(p) & kHighBits) == 0; }

/// True when every byte of `s` is printable ASCII (0x20 to 0x7e): the common case of a trace row
/// or a name, for which text_problem finds nothing. 32 bytes per test, the last (partial) word
/// read again from the end; exact as printable_ascii8 (a borrow or carry into another byte
/// comes only from a byte that is itself not printable).
bool all_printable_ascii(std::string_view s) {
  const char* p = s.data();
  const std::size_t n = s.size();
  if (n < 8) {
    for (char ch : s)
      if (const auto c = static_cast<unsigned char>(ch); c < 0x20 || c > 0x7e) return false;
    return true;
  }
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32)
    if (((unprintable8(p + i) | unprintable8(p + i + 8) | unprintable8(p + i + 16) | unprintable8(p + i + 24)) & kHighBits) != 0)
      return false;
  std::uint64_t bad = unprintable8(p + n - 8);
  for (; i + 8 <= n; i += 8) bad |= unprintable8(p + i);
  return (bad & kHighBits) == 0;
}

}  // namespace

std::optional<TextProblem> text_problem(std::string_view s) {
  if (all_printable_ascii(s)) return std::nullopt;  // the slow walk below finds nothing then
  for (std::size_t i = 0; i < s.size();) {
    // Eight printable ASCII bytes at a time (a trace row or a name is mostly such text).
    if (i + 8 <= s.size() && printable_ascii8(s.data() + i)) {
      i += 8;
      continue;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
        return TextProblem{i, "must not contain control characters (CR, NUL, ...): they cannot be written into metrics.prom or tasks.csv"};
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) return TextProblem{i, "must be valid UTF-8"};
    i += n;
  }
  return std::nullopt;
}

std::optional<std::size_t> utf8_problem(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

void check_task_values(const TaskCfg& t, const ProblemFn& report) {
  check_task_shape_values(t, report);
  check_task_other_values(t, report);
}

void check_task_shape_values(const TaskCfg& t, const ProblemFn& report) {
  using namespace limits;
  in_range(report, "submit_s", t.submit_s, 0, max_time_s);
  positive_up_to(report, "duration_s", t.duration_s, max_time_s);
  int_range(report, "workers", t.workers, 0, max_workers);
  int_range(report, "count_per_node", t.count_per_node, 1, max_count_per_node);
  if (t.replica) {
    const auto& r = *t.replica;
    int_range(report, "replica.gpus", r.gpus, 0, max_node_gpus);
    int_range(report, "replica.gpu_milli", r.gpu_milli, 1, 1000);
    in_range(report, "replica.vcpu", r.vcpu, 0, max_amount);
    in_range(report, "replica.memory_gib", r.memory_gib, 0, max_amount);
    // Products with count_per_node, once both factors are in range (then they cannot overflow).
    if (t.count_per_node >= 1 && t.count_per_node <= max_count_per_node) {
      const long long cpn = t.count_per_node;
      if (r.gpus >= 0 && r.gpus <= max_node_gpus && r.gpus * cpn > max_node_gpus)
        report("replica.gpus", std::to_string(r.gpus),
               fmt::format("gpus x count_per_node = {} x {} = {} exceeds {}, the most GPUs of a node", r.gpus, cpn,
                           r.gpus * cpn, max_node_gpus));
      if (r.gpus > 0 && r.gpu_milli >= 1 && r.gpu_milli < 1000 && cpn > 1)
        report("replica.gpu_milli", std::to_string(r.gpu_milli),
               fmt::format("a GPU share (gpu_milli < 1000) x count_per_node {}: a replica holds a share of one GPU at "
                           "most (count_per_node must be 1)",
                           cpn));
      if (r.vcpu >= 0 && r.vcpu <= max_amount && r.vcpu * double(cpn) > max_amount)
        report("replica.vcpu", num(r.vcpu),
               fmt::format("vcpu x count_per_node = {} exceeds {}", num(r.vcpu * double(cpn)), num(max_amount)));
      if (r.memory_gib >= 0 && r.memory_gib <= max_amount && r.memory_gib * double(cpn) > max_amount)
        report("replica.memory_gib", num(r.memory_gib),
               fmt::format("memory_gib x count_per_node = {} exceeds {}", num(r.memory_gib * double(cpn)),
                           num(max_amount)));
    }
  }
  if (t.checkpoint_interval_s) in_range(report, "checkpoint_interval_s", *t.checkpoint_interval_s, min_interval_s, max_time_s);
  if (t.runtime_estimate_s) positive_up_to(report, "runtime_estimate_s", *t.runtime_estimate_s, max_time_s);
}

void check_task_other_values(const TaskCfg& t, const ProblemFn& report) {
  using namespace limits;
  zero_or(report, "precheck_s", t.precheck_s, min_delay_s, max_time_s);
  zero_or(report, "image_pull_s", t.image_pull_s, min_delay_s, max_time_s);
  in_range(report, "image_pull_failure_prob", t.image_pull_failure_prob, 0, 1);
  in_range(report, "transient_failure_rate_per_h", t.transient_failure_rate_per_h, 0, max_transient_rate_per_h);
  int_range(report, "fault_tolerance.max_resubmissions", t.fault_tolerance.max_resubmissions, 0, max_resubmissions);
  int_range(report, "image_pull_retries", t.image_pull_retries, -1, max_image_pull_retries);
  zero_or(report, "debug_retention_s", t.debug_retention_s, min_delay_s, max_time_s);
  const auto& a = *t.autoscaling;
  int_range(report, "autoscaling.min_workers", a.min_workers, 0, max_workers);
  int_range(report, "autoscaling.max_workers", a.max_workers, 0, max_workers);
  zero_or(report, "autoscaling.idle_reclaim_s", a.idle_reclaim_s, min_delay_s, max_time_s);
  for (std::size_t k = 0; k < a.demand.size(); ++k) {
    const std::string p = "autoscaling.demand[" + std::to_string(k) + "]";
    in_range(report, p + ".at_s", a.demand[k].at_s, 0, max_time_s);
    int_range(report, p + ".workers", a.demand[k].workers, 0, max_workers);
  }
}

void check_node_values(const NodeCfg& n, const ProblemFn& report) {
  using namespace limits;
  if (auto rule = node_name_problem(n.name); !rule.empty()) report("name", "\"" + n.name + "\"", rule);
  int_range(report, "gpus", n.gpus, 0, max_node_gpus);
  in_range(report, "vcpu", n.vcpu, 0, max_amount);
  in_range(report, "memory_gib", n.memory_gib, 0, max_amount);
}

std::int64_t total_nodes(const ClusterCfg& c) {
  std::int64_t n = 0;
  for (const auto& p : c.pools) {
    for (const auto& g : p.node_groups) n += std::max(0, g.count);
    n += static_cast<std::int64_t>(p.nodes.size());
  }
  return n;
}

void check_scenario_totals(const Scenario& s, const ProblemFn& report) {
  using namespace limits;
  if (const auto n = total_nodes(s.cluster); n > max_total_nodes)
    report("cluster.pools", std::to_string(n),
           fmt::format("the cluster has {} nodes, more than the limit of {}", n, max_total_nodes));
  if (static_cast<std::int64_t>(s.tasks.size()) > limits::max_tasks)
    report("tasks", std::to_string(s.tasks.size()),
           fmt::format("{} tasks, more than the limit of {}", s.tasks.size(), limits::max_tasks));
  // Distinct GPU models, in the order Simulator::build interns them; the first one past the
  // limit is blamed (libsched keeps one bit per model). The tasks' replica total and their GPU
  // models are read in one pass over the tasks (a large trace's 65 MB); the replica total is
  // still reported first.
  std::unordered_set<std::string_view> models;
  std::optional<std::pair<std::string, std::string>> over;  // the first model past the limit: (path, model)
  auto add = [&](const std::string& m, const auto& path) {
    if (over || m.empty() || !models.insert(m).second || models.size() <= std::size_t(max_gpu_models)) return;
    over.emplace(path(), m);
  };
  for (std::size_t i = 0; i < s.cluster.instance_specs.size(); ++i)
    add(s.cluster.instance_specs[i].gpu_model, [i] { return fmt::format("cluster.instance_specs[{}].gpu_model", i); });
  std::int64_t replicas = 0;
  for (std::size_t i = 0; i < s.tasks.size(); ++i) {
    const TaskCfg& t = s.tasks[i];
    // (a task over the per-task limit is blamed on its own)
    replicas += std::clamp<std::int64_t>(std::max(t.workers, t.autoscaling->max_workers), 0, max_workers) + 1;
    if (!over)
      if (const auto& r = t.replica)
        for (std::size_t k = 0; k < r->gpu_models.size(); ++k)
          add(r->gpu_models[k], [i, k] { return fmt::format("tasks[{}].replica.gpu_models[{}]", i, k); });
  }
  if (replicas > max_total_replicas)
    report("tasks", std::to_string(replicas),
           fmt::format("{} replicas in all tasks, more than the limit of {}", replicas, max_total_replicas));
  for (std::size_t p = 0; p < s.cluster.pools.size(); ++p) {
    const auto& pool = s.cluster.pools[p];
    for (std::size_t g = 0; g < pool.node_groups.size(); ++g)
      add(pool.node_groups[g].gpu_model, [p, g] { return fmt::format("cluster.pools[{}].node_groups[{}].gpu_model", p, g); });
    for (std::size_t n = 0; n < pool.nodes.size(); ++n)
      add(pool.nodes[n].gpu_model, [p, n] { return fmt::format("cluster.pools[{}].nodes[{}].gpu_model", p, n); });
  }
  if (over)
    report(over->first, "\"" + over->second + "\"",
           fmt::format("a GPU model past the first {}: a scenario has at most {} distinct GPU models (instance specs, "
                       "node groups, nodes and tasks' gpu_models together)",
                       max_gpu_models, max_gpu_models));
  if (s.timeseries_interval_s > 0) {
    const double rows = estimated_horizon_s(s) / s.timeseries_interval_s;
    if (!(rows <= double(max_timeseries_rows)))
      report("timeseries_interval_s", num(s.timeseries_interval_s),
             fmt::format("gives about {:.0f} timeseries rows over the estimated horizon of {} s (until_s, or the "
                         "latest submit_s + duration_s x attempts), more than the limit of {}",
                         rows, num(estimated_horizon_s(s)), max_timeseries_rows));
  }
}

double estimated_horizon_s(const Scenario& s) {
  if (s.until_s) return *s.until_s;
  double h = 0;
  for (const auto& t : s.tasks) {
    const double attempts = 1.0 + std::max(0, t.fault_tolerance.max_resubmissions);
    h = std::max(h, t.submit_s + t.duration_s * attempts);
  }
  return h;
}

}  // namespace sim::io
