// Output writers of sim::Simulator: tasks.csv, summary.json, events.jsonl, timeseries.csv,
// metrics.prom. Every column and formula: docs/outputs.md. Deterministic: only ordered
// containers are iterated.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <span>
#include <string_view>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/outputs/group_index.hpp"
#include "sim/outputs/json_text.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/engine/simulator.hpp"

namespace sim {

using namespace libsched;
using detail::GroupIndex;
using detail::RowMemo;
using detail::append_int;
using detail::append_json_string;
using detail::append_seconds_json;

/// Seconds from ms: an integer when whole, else up to 3 decimals with trailing zeros trimmed.
/// Negative (not applicable) prints as "".
std::string format_seconds(Time ms) {
  if (ms < 0) return "";
  if (ms % 1000 == 0) return fmt::format("{}", ms / 1000);
  std::string s = fmt::format("{}.{:03d}", ms / 1000, int(ms % 1000));
  while (s.back() == '0') s.pop_back();
  return s;
}

namespace {

/// Appends format_decimal3(x). Below 10^12 the rounded value k / 1000 (k an integer) prints its
/// exact digits, so they are written from k (no float formatting); tests/sim/metrics_test.cpp
/// compares the two ways on sampled values.
void append_decimal3(std::string& out, double x) {
  if (std::isfinite(x) && std::fabs(x) < 1e12) {
    const auto k = std::int64_t(std::round(x * 1000.0));
    if (k < 0) out += '-';
    const std::int64_t a = k < 0 ? -k : k;
    fmt::format_int whole(a / 1000);
    out.append(whole.data(), whole.size());
    int frac = int(a % 1000);
    if (frac != 0) {
      char d[4] = {'.', char('0' + frac / 100), char('0' + frac / 10 % 10), char('0' + frac % 10)};
      std::size_t n = 4;
      while (d[n - 1] == '0') --n;
      out.append(d, n);
    }
    return;
  }
  std::string s = fmt::format("{:.3f}", std::round(x * 1000.0) / 1000.0);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  out += s == "-0" ? "0" : s;
}

}  // namespace

std::string format_decimal3(double x) {
  std::string s;
  append_decimal3(s, x);
  return s;
}

namespace {

/// Does `s` need CSV quoting (a comma, quote or line break)? One pass over its bytes
/// (find_first_of would search the four-byte set once per byte).
bool needs_csv_quotes(std::string_view s) {
  for (char c : s)
    if (c == ',' || c == '"' || c == '\n' || c == '\r') return true;
  return false;
}

std::string csv_field(const std::string& s) {
  if (!needs_csv_quotes(s)) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

/// Appends csv_field(s) without a temporary.
void append_csv(std::string& out, std::string_view s) {
  if (!needs_csv_quotes(s)) {
    out.append(s);
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

/// Appends format_seconds(ms) without a temporary ("" for a negative value).
void append_seconds(std::string& out, Time ms) {
  if (ms < 0) return;
  fmt::format_int whole(ms / 1000);
  out.append(whole.data(), whole.size());
  int frac = int(ms % 1000);
  if (frac == 0) return;
  char d[4] = {'.', char('0' + frac / 100), char('0' + frac / 10 % 10), char('0' + frac % 10)};
  std::size_t n = 4;
  while (d[n - 1] == '0') --n;
  out.append(d, n);
}

}  // namespace

void detail::append_json_string(std::string& out, std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) {
      out += nlohmann::json(std::string(s)).dump();
      return;
    }
  out += '"';
  std::size_t run = 0;  // start of the pending stretch of bytes that need no escape
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: fmt::format_to(std::back_inserter(out), "\\u{:04x}", unsigned(c)); break;
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

/// Appends seconds_json(ms) as dump() prints it: an integer when whole, else the shortest
/// decimal that round-trips (fmt and nlohmann agree on it for every millisecond value). For
/// 0 <= ms < 10^12 (every time a scenario may hold: at most 10^9 s) that decimal is the exact
/// one append_seconds prints (a double's spacing there is far below 1 ms, so no shorter decimal
/// round-trips); tests/sim/metrics_test.cpp checks the two agree.
void detail::append_seconds_json(std::string& out, Time ms) {
  if (ms >= 0 && ms < 1'000'000'000'000) append_seconds(out, ms);
  else if (ms % 1000 == 0) fmt::format_to(std::back_inserter(out), "{}", ms / 1000);
  else fmt::format_to(std::back_inserter(out), "{}", double(ms) / 1000.0);
}

void detail::append_int(std::string& out, std::int64_t v) {
  fmt::format_int f(v);
  out.append(f.data(), f.size());
}

namespace {

nlohmann::ordered_json seconds_json(Time ms) {
  if (ms % 1000 == 0) return ms / 1000;
  return double(ms) / 1000.0;
}

/// A number rounded to 3 decimals, as a JSON integer when whole.
nlohmann::ordered_json round3(double x) {
  double r = std::round(x * 1000.0) / 1000.0;
  if (r == std::floor(r) && std::fabs(r) < 1e15) return std::int64_t(r);
  return r;
}

/// Mean of ms values in seconds (0 for none). The sum is exact (integers in a long double's
/// 64-bit mantissa), so the order of the values does not matter.
double mean_s(std::span<const Time> v) {
  if (v.empty()) return 0.0;
  long double s = 0;
  for (Time x : v) s += x;
  return double(s / (long double)v.size()) / 1000.0;
}

/// Nearest-rank 95th percentile of ms values in seconds (0 for none); reorders `v` (a
/// selection, O(n): the rank-th smallest value is the same whatever the order).
double p95_s(std::span<Time> v) {
  if (v.empty()) return 0.0;
  std::size_t rank = std::max<std::size_t>(std::size_t(std::ceil(0.95 * double(v.size()))), 1) - 1;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(rank), v.end());
  return double(v[rank]) / 1000.0;
}

/// Aggregated metrics of a set of tasks (summary.json `groups`, groups.csv). The means are
/// running sums, added in task order (long double, same order: same result); the wait mean
/// and 95th percentile are set once all tasks are grouped (group_tables), from the waits
/// sorted by group into one buffer, not kept per group.
struct GroupAcc {
  int tasks = 0, succeeded = 0, failed = 0, unfinished = 0, never_started = 0;
  std::size_t submitted = 0;  ///< tasks with a wait and a JCT (submitted within the window)
  double mean_wait_s = 0, p95_wait_s = 0;
  long double jct_sum = 0, slowdown_sum = 0, bounded_sum = 0;
  long double gpu_ms = 0, cpu_ms = 0;
  long double cost = 0;  ///< currency: the tasks' attempts, plus the reserved commitments attributed to the group
  int preemptions = 0, resubmissions = 0;  ///< attempts ended as a preemption victim; resubmissions
  Time lost_work = 0;                      ///< ms: work lost by the tasks' ended attempts

  void add(const TaskMetrics& m, const TaskStats& s) {
    ++tasks;
    preemptions += s.preemptions;
    resubmissions += s.resubmissions;
    lost_work += s.lost_work;
    if (s.finished && s.succeeded) ++succeeded;
    else if (s.finished) ++failed;
    else ++unfinished;
    if (!m.started) ++never_started;
    gpu_ms += m.gpu_ms;
    cpu_ms += m.cpu_ms;
    cost += m.cost;
    if (!m.submitted) return;  // outside the observed window: no wait, no JCT
    ++submitted;
    jct_sum += m.jct;
    slowdown_sum += m.slowdown;
    bounded_sum += m.bounded_slowdown;
  }
  /// Sets the wait statistics from the group's waits (reordered).
  void set_waits(std::span<Time> waits) {
    mean_wait_s = mean_s(waits);
    p95_wait_s = p95_s(waits);
  }
  /// Means over the submitted tasks (0 for none): JCT in seconds, the slowdowns as ratios.
  double mean_jct_s() const { return submitted == 0 ? 0.0 : double(jct_sum / (long double)submitted) / 1000.0; }
  double mean_slowdown() const { return submitted == 0 ? 0.0 : double(slowdown_sum / (long double)submitted); }
  double mean_bounded_slowdown() const { return submitted == 0 ? 0.0 : double(bounded_sum / (long double)submitted); }
  /// Its GPU-seconds over `total_gpu_ms` (every task's), rounded to 6 decimals; 0 when the total is 0.
  double gpu_allocation_share(long double total_gpu_ms) const {
    return total_gpu_ms > 0 ? std::round(double(gpu_ms / total_gpu_ms) * 1e6) / 1e6 : 0.0;
  }
};

/// The group-by dimensions, in output order, and each task's key in them.
constexpr const char* k_group_by[] = {"user", "tenant", "pool", "gpu_model", "capacity"};

std::string_view group_key(int dim, const io::TaskCfg& t, const TaskMetrics& m) {
  switch (dim) {
    case 0: return t.user;
    case 1: return t.tenant;
    case 2: return m.pool;
    case 3: return m.gpu_model;
    default: return m.capacity;
  }
}

}  // namespace

std::string Simulator::tasks_csv() const {
  std::string o;
  tasks_csv_to(o, [] {});
  return o;
}

void Simulator::tasks_csv_to(std::string& o, const std::function<void()>& flush) const {
  o += "task,attempt,state,submit_s,start_s,end_s,spec,nodes,reason,capacity,gpus,wait_s,work_s,lost_work_s,"
       "user,tenant,pool,type,priority,replicas,gpu_milli_per_replica,runtime_estimate_s,end_reason,preemptor,"
       "task_wait_s,jct_s,slowdown,bounded_slowdown,cost,wait_quota_s,wait_capacity_s,wait_fragmentation_s,"
       "wait_cpu_memory_s,wait_node_policy_s,wait_idle_stability_s,wait_preemption_s";
  // With a `throughput` section only (docs/heterogeneity.md): the attempt's relative speed.
  const bool with_speed = !sc_.throughput.empty();
  o += with_speed ? ",speed\n" : "\n";
  // Appended field by field (no temporaries): this file has a row per attempt.
  std::string nodes;
  for (std::size_t ti = 0; ti < runs_.size(); ++ti) {
    const auto& t = cfg(ti);
    const std::string& name = task_name(ti);
    const TaskMetrics m = task_metrics(ti);
    const TaskSpec& spec = task_spec(ti);
    const auto& atts = runs_[ti].attempts;
    for (std::size_t k = 0; k < atts.size(); ++k) {
      const AttemptRecord* a = &atts[k];
      const bool started = a->start >= 0;
      append_csv(o, name);
      o += ',';
      append_int(o, a->attempt);
      o += ',';
      o += to_string(a->state);
      o += ',';
      append_seconds(o, a->submit);
      o += ',';
      append_seconds(o, a->start);
      o += ',';
      append_seconds(o, a->end);
      o += ',';
      append_csv(o, a->spec);
      o += ',';
      // The node names joined by ';' in place, quoted as one field when the join needs it.
      const std::size_t nodes_at = o.size();
      for (const std::int32_t n : a->nodes) {
        if (o.size() > nodes_at) o += ';';
        o += node_name(n);
      }
      if (needs_csv_quotes(std::string_view(o).substr(nodes_at))) {
        nodes.assign(o, nodes_at);
        o.resize(nodes_at);
        append_csv(o, nodes);
      }
      o += ',';
      append_csv(o, a->reason);
      o += ',';
      o += a->capacity;
      o += ',';
      if (started) append_seconds(o, a->gpu_milli);
      o += ',';
      append_seconds(o, started ? a->start - a->submit : -1);
      o += ',';
      if (started) append_seconds(o, a->work_done);
      o += ',';
      if (started) append_seconds(o, a->lost_work);
      // The worker replica of the option this attempt ran with (else the first option).
      std::int64_t per_replica = 0;
      if (!spec.options.empty()) {
        const GangOption* opt = &spec.options.front();
        if (started)
          for (const auto& g : spec.options)
            if (g.label == a->spec) {
              opt = &g;
              break;
            }
        per_replica = opt->worker.total_gpu_milli();
      }
      o += ',';
      append_csv(o, t.user);
      o += ',';
      append_csv(o, t.tenant);
      o += ',';
      append_csv(o, m.pool);
      o += ',';
      o += t.type;
      o += ',';
      append_int(o, t.priority);
      o += ',';
      append_int(o, 1 + spec.workers);
      o += ',';
      append_int(o, per_replica);
      o += ',';
      if (auto e = ident_[ti].runtime_estimate_s()) append_seconds(o, from_seconds(*e));
      o += ',';
      o += to_string(a->end_reason);
      o += ',';
      append_csv(o, a->preemptor);
      if (k + 1 == atts.size()) {  // the task's final row
        o += ',';
        append_seconds(o, m.wait);
        o += ',';
        append_seconds(o, m.jct);
        o += ',';
        append_decimal3(o, m.slowdown);
        o += ',';
        append_decimal3(o, m.bounded_slowdown);
      } else {
        o += ",,,,";
      }
      o += ',';
      if (started) append_decimal3(o, billed_cost(*a));
      if (k + 1 == atts.size()) {  // the task's wait split (summary.json wait_split_s, per task)
        const TaskStats& st = task_stats()[ti];
        for (Time w : {st.wait_quota, st.wait_capacity, st.wait_fragmentation, st.wait_cpu_memory, st.wait_node_policy,
                       st.wait_idle_stability, st.wait_preemption}) {
          o += ',';
          append_seconds(o, w);
        }
      } else {
        o += ",,,,,,,";
      }
      if (with_speed) {
        o += ',';
        if (started) append_decimal3(o, attempt_speed(*a));
      }
      o += '\n';
    }
    flush();
  }
}

std::string Simulator::unfinished_warning() const {
  int unfinished = 0, never = 0;
  for (std::size_t i = 0; i < task_stats().size(); ++i)
    if (!task_stats()[i].finished) ++unfinished;
  if (unfinished == 0) return "";
  for (std::size_t i = 0; i < task_stats().size(); ++i)
    if (!task_stats()[i].finished && !task_started(i)) ++never;
  return fmt::format("schedsim: warning: {} task{} unfinished at the end of the run ({} never started); their waits are censored at {} s\n",
                     unfinished, unfinished == 1 ? "" : "s", never, format_seconds(censor_time()));
}

std::string Simulator::groups_csv() const {
  std::string o;
  summary_and_groups(nullptr, &o);
  return o;
}

namespace {

/// One group-by dimension: its groups in key order. Keys are views into the tasks'
/// configurations and the task metrics.
using GroupTable = std::vector<std::pair<std::string_view, GroupAcc>>;

/// The tasks of each group-by dimension (k_group_by order) grouped by key, in one pass over the
/// tasks (each group sees its tasks in scenario order).
/// `cfg(i)`: task i's configuration, `metrics(i)`: its metrics (their keys are views that
/// outlive the tables); `all` receives every task too. The per-task metrics are derived one
/// task at a time, never held for all tasks. Memory beyond the tables: each task's wait and
/// its row in the dimensions keyed by its metrics (20 bytes), and one buffer of the waits.
template <class CfgOf, class MetricsOf>
std::vector<GroupTable> group_tables(const CfgOf& cfg, const MetricsOf& metrics, const std::vector<TaskStats>& stats, GroupAcc& all) {
  constexpr std::size_t kDims = std::size(k_group_by), kByCfg = 2;  // user and tenant: keyed by the configuration alone
  const std::size_t n = stats.size();
  std::vector<GroupIndex<std::string_view, GroupAcc>> index(kDims);
  std::array<RowMemo, kDims> memo;  // (group_index.hpp)
  std::vector<Time> wait(n, -1);  // -1: not submitted
  std::vector<std::uint32_t> row((kDims - kByCfg) * n);
  // A dimension whose tasks have had one key so far (row 0) adds nothing: the row is `all` (the
  // same adds, same order), copied when a second key appears (before its task joins `all`) or at the end.
  std::array<bool, kDims> single;
  single.fill(true);
  for (std::size_t i = 0; i < n; ++i) {
    const io::TaskCfg& t = cfg(i);
    const TaskMetrics m = metrics(i);
    for (std::size_t d = 0; d < kDims; ++d) {
      std::size_t r = memo[d].row_of(index[d], group_key(int(d), t, m));
      if (single[d] && r != 0) {
        single[d] = false;
        index[d].row(0) = all;  // tasks 0 .. i - 1, every one of them in row 0
      }
      if (!single[d]) index[d].row(r).add(m, stats[i]);
      if (d >= kByCfg) row[(d - kByCfg) * n + i] = std::uint32_t(r);
    }
    all.add(m, stats[i]);
    if (m.submitted) wait[i] = m.wait;
  }
  for (std::size_t d = 0; d < kDims; ++d)
    if (single[d] && index[d].size() == 1) index[d].row(0) = all;
  // Each dimension's waits sorted by row into one buffer (a counting sort), then each row's slice.
  std::vector<Time> buffer;
  buffer.reserve(all.submitted);
  for (Time w : wait)
    if (w >= 0) buffer.push_back(w);
  all.set_waits(buffer);
  std::vector<std::size_t> at;
  const TaskMetrics none{};
  for (std::size_t d = 0; d < kDims; ++d) {
    auto& g = index[d];
    if (single[d]) {  // its row's waits are all waits: the same mean (an exact sum) and percentile (a rank)
      if (g.size() == 1) std::tie(g.row(0).mean_wait_s, g.row(0).p95_wait_s) = std::pair(all.mean_wait_s, all.p95_wait_s);
      continue;
    }
    at.assign(g.size() + 1, 0);
    for (std::size_t r = 0; r < g.size(); ++r) at[r + 1] = at[r] + g.row(r).submitted;
    auto row_of_task = [&](std::size_t i) {
      return d < kByCfg ? memo[d].row_of(g, group_key(int(d), cfg(i), none)) : std::size_t(row[(d - kByCfg) * n + i]);
    };
    std::vector<std::size_t> next(at.begin(), at.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      if (wait[i] >= 0) buffer[next[row_of_task(i)]++] = wait[i];
    for (std::size_t r = 0; r < g.size(); ++r)
      g.row(r).set_waits(std::span<Time>(buffer.data() + at[r], at[r + 1] - at[r]));
  }
  std::vector<GroupTable> by;
  for (auto& g : index) by.push_back(std::move(g).sorted());
  return by;
}

/// The reserved commitments in the groups (docs/outputs.md "Costs"): each in its quota's user,
/// the user's tenant, its pool, the pool's GPU model and capacity `reserved`; a group that has
/// no task gets a row of its own (tasks 0).
void add_commitments(std::vector<GroupTable>& by, const CostSummary& costs) {
  for (const auto& c : costs.commitments) {
    const std::string_view keys[] = {c.user, c.tenant, c.pool, c.gpu_model, "reserved"};
    for (std::size_t d = 0; d < std::size(keys); ++d) {
      GroupTable& t = by[d];
      auto it = std::lower_bound(t.begin(), t.end(), keys[d], [](const auto& row, std::string_view k) { return row.first < k; });
      if (it == t.end() || it->first != keys[d]) it = t.insert(it, {keys[d], GroupAcc{}});
      it->second.cost += c.cost;
    }
  }
}

std::string groups_csv_text(std::vector<GroupTable>& by, long double total_gpu_ms) {
  std::string o =
      "group_by,group,tasks,succeeded,failed,unfinished,never_started,mean_wait_s,p95_wait_s,mean_jct_s,mean_slowdown,"
      "mean_bounded_slowdown,gpu_seconds,vcpu_seconds,cost,preemptions,resubmissions,lost_work_s,gpu_allocation_share\n";
  for (int d = 0; d < int(std::size(k_group_by)); ++d) {
    for (auto& [key, g] : by[std::size_t(d)])
      o += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", k_group_by[d], csv_field(std::string(key)), g.tasks,
                       g.succeeded, g.failed, g.unfinished, g.never_started, format_decimal3(g.mean_wait_s), format_decimal3(g.p95_wait_s),
                       format_decimal3(g.mean_jct_s()), format_decimal3(g.mean_slowdown()), format_decimal3(g.mean_bounded_slowdown()),
                       format_decimal3(double(g.gpu_ms / 1e6L)), format_decimal3(double(g.cpu_ms / 1e6L)), format_decimal3(double(g.cost)),
                       g.preemptions, g.resubmissions, format_seconds(g.lost_work), g.gpu_allocation_share(total_gpu_ms));
  }
  return o;
}

}  // namespace

std::string Simulator::summary_json() const {
  std::string o;
  summary_and_groups(&o, nullptr);
  return o;
}

void Simulator::summary_and_groups(std::string* summary, std::string* groups_text) const {
  // The per-group tables are built once for both files (the wait means are exact integer sums,
  // the other means doubles summed in task order).
  GroupAcc all;
  auto by = group_tables([this](std::size_t i) -> const io::TaskCfg& { return cfg(i); },
                         [this](std::size_t i) { return measured_task_metrics(i); }, task_stats(), all);
  const CostSummary costs = cost_summary();
  add_commitments(by, costs);
  if (groups_text) *groups_text = groups_csv_text(by, all.gpu_ms);
  if (!summary) return;
  nlohmann::ordered_json j;
  int resub = 0, not_submitted = 0;
  Time lost = 0;
  Time wq = 0, wc = 0, wf = 0, wcm = 0, wp = 0, wis = 0, wpre = 0;
  for (std::size_t i = 0; i < task_stats().size(); ++i) {
    const auto& s = task_stats()[i];
    if (attempt_count(i) == 0) ++not_submitted;  // TaskMetrics::submitted
    if (has_window()) {  // the wait split counts the tasks submitted in the window
      const Time submit = from_seconds(ident_[i].submit_s);
      if (submit < window_start() || submit >= window_end()) continue;
    }
    resub += s.resubmissions;
    lost += s.lost_work;
    wq += s.wait_quota;
    wc += s.wait_capacity;
    wf += s.wait_fragmentation;
    wcm += s.wait_cpu_memory;
    wp += s.wait_node_policy;
    wis += s.wait_idle_stability;
    wpre += s.wait_preemption;
  }
  // GPU- and vCPU-seconds allocated over those available (up nodes) over [0, makespan] (with a
  // measurement window: over its part of [0, makespan]).
  const detail::UtilizationSums u = metrics_->utilization(makespan_);
  const long double alloc = u.gpu_alloc, avail = u.gpu_up, calloc = u.cpu_alloc, cavail = u.cpu_up;
  auto ratio = [](long double num, long double den) { return den > 0 ? std::round(double(num / den) * 1e6) / 1e6 : 0.0; };
  auto metrics = [&all](GroupAcc& g) {
    nlohmann::ordered_json o;
    o["tasks"] = g.tasks;
    o["succeeded"] = g.succeeded;
    o["failed"] = g.failed;
    o["unfinished"] = g.unfinished;
    o["never_started"] = g.never_started;
    o["mean_wait_s"] = round3(g.mean_wait_s);
    o["p95_wait_s"] = round3(g.p95_wait_s);
    o["mean_jct_s"] = round3(g.mean_jct_s());
    o["mean_slowdown"] = round3(g.mean_slowdown());
    o["mean_bounded_slowdown"] = round3(g.mean_bounded_slowdown());
    o["gpu_seconds"] = round3(double(g.gpu_ms / 1e6L));
    o["vcpu_seconds"] = round3(double(g.cpu_ms / 1e6L));
    o["cost"] = round3(double(g.cost));
    o["preemptions"] = g.preemptions;
    o["resubmissions"] = g.resubmissions;
    o["lost_work_s"] = seconds_json(g.lost_work);
    o["gpu_allocation_share"] = g.gpu_allocation_share(all.gpu_ms);
    return o;
  };
  j["scenario"] = sc_.name;
  j["seed"] = seed_;
  j["tasks"] = task_stats().size();
  std::size_t n_attempts = 0;
  for (std::size_t i = 0; i < runs_.size(); ++i) n_attempts += std::size_t(attempt_count(i));
  j["attempts"] = n_attempts;
  j["succeeded"] = all.succeeded;
  j["failed"] = all.failed;
  j["unfinished"] = all.unfinished;
  j["never_started"] = all.never_started;
  j["not_submitted"] = not_submitted;
  j["makespan_s"] = seconds_json(makespan_);
  j["censor_s"] = seconds_json(censor_time());
  if (has_window())  // the measurement window (docs/outputs.md "Measurement window")
    j["measure"] = {{"start_s", seconds_json(window_start())},
                    {"end_s", seconds_json(window_end())},
                    {"tasks_measured", all.submitted}};
  j["mean_wait_s"] = round3(all.mean_wait_s);
  j["p95_wait_s"] = round3(all.p95_wait_s);
  j["mean_jct_s"] = round3(all.mean_jct_s());
  j["mean_slowdown"] = round3(all.mean_slowdown());
  j["mean_bounded_slowdown"] = round3(all.mean_bounded_slowdown());
  j["gpu_allocation_ratio"] = ratio(alloc, avail);
  j["cpu_allocation_ratio"] = ratio(calloc, cavail);
  j["preemptions"] = preemptions_;
  j["resubmissions"] = resub;
  j["lost_work_s"] = seconds_json(lost);
  j["wait_split_s"] = {{"quota", seconds_json(wq)},
                       {"capacity", seconds_json(wc)},
                       {"fragmentation", seconds_json(wf)},
                       {"cpu_memory", seconds_json(wcm)},
                       {"node_policy", seconds_json(wp)},
                       {"idle_stability", seconds_json(wis)},
                       {"preemption", seconds_json(wpre)},
                       {"lost_to_preemption_or_failure", seconds_json(lost)}};
  j["events"] = events_;
  j["currency"] = std::string(costs.currency);
  j["cost_total"] = round3(costs.total);
  j["cost_reserved"] = round3(costs.by_class[0]);
  j["cost_pay_as_you_go"] = round3(costs.by_class[1]);
  j["cost_spot"] = round3(costs.by_class[2]);
  j["cost_idle"] = round3(costs.by_class[3]);
  j["cost_reserved_unused"] = round3(costs.reserved_unused);
  j["cost_lost_work"] = round3(costs.lost_work);
  nlohmann::ordered_json groups;
  for (int d = 0; d < int(std::size(k_group_by)); ++d) {
    nlohmann::ordered_json g = nlohmann::ordered_json::object();
    for (auto& [key, acc] : by[std::size_t(d)]) g[std::string(key)] = metrics(acc);
    groups[k_group_by[d]] = g;
  }
  j["groups"] = groups;
  *summary = j.dump(2) + "\n";
}

void Simulator::write_outputs(const std::string& dir) const {
  OutputSelection which;  // the default files; scenario.resolved.json is run_command's
  which.set(Output::resolved, false);
  write_outputs(dir, which);
}

void Simulator::write_outputs(const std::string& dir, const OutputSelection& which, std::string* summary_text) const {
  // Checked write, fsync and close of each file (sim/publish.hpp); throws OutputError. The
  // per-task metrics are derived task by task where a file needs them (never held for all
  // tasks at once); the large files (tasks.csv, events.jsonl, metrics.prom, timeline.json) are
  // streamed in 1 MiB chunks.
  if (compact_)  // these list attempts or name ended tasks (SimOptions::keep_ended_tasks)
    for (Output o : {Output::tasks, Output::events, Output::metrics, Output::timeline})
      if (which.has(o)) throw std::logic_error("Simulator::write_outputs: " + std::string(k_outputs[std::size_t(o)].file) + " needs a run that keeps ended tasks");
  if (!opt_.keep_snapshots)  // (SimOptions::keep_snapshots)
    for (Output o : {Output::timeseries, Output::timeline})
      if (which.has(o)) throw std::logic_error("Simulator::write_outputs: " + std::string(k_outputs[std::size_t(o)].file) + " needs a run that keeps its time series");
  auto write = [&](const std::string& name, const std::string& text) { write_file_checked(dir + "/" + name, text); };
  if (which.has(Output::tasks)) {
    CheckedWriter w(dir + "/tasks.csv");
    tasks_csv_to(w.buffer(), [&w] { w.maybe_flush(); });
    w.close();
  }
  if (which.has(Output::summary) || which.has(Output::groups)) {
    std::string summary, groups;
    summary_and_groups(which.has(Output::summary) ? &summary : nullptr, which.has(Output::groups) ? &groups : nullptr);
    if (which.has(Output::summary)) write("summary.json", summary);
    if (which.has(Output::groups)) write("groups.csv", groups);
    if (summary_text && which.has(Output::summary)) *summary_text = std::move(summary);
  }
  if (which.has(Output::events)) write_events(dir);
  if (which.has(Output::timeseries)) write_timeseries(dir);
  if (which.has(Output::metrics)) write_metrics_prom(dir);
  if (which.has(Output::timeline)) {
    CheckedWriter w(dir + "/timeline.json");
    timeline_json_to(w.buffer(), [&w] { w.maybe_flush(); });
    w.close();
  }
}

void Simulator::write_events(const std::string& dir) const {
  // Task state changes merged with node state changes (a node change comes before the task
  // changes it caused). Streamed: one line at a time into a 1 MiB buffer; each line is the
  // compact JSON object nlohmann::json::dump() prints for it (same keys, order and escapes).
  using namespace std::string_view_literals;  // literals appended with their length known
  CheckedWriter w(dir + "/events.jsonl");
  std::string& ev = w.buffer();
  std::size_t nc = 0;
  auto node_records = [&](std::size_t upto) {
    for (; nc < node_changes().size() && node_changes()[nc].seq <= upto; ++nc) {
      const auto& n = node_changes()[nc];
      ev += "{\"time_s\":"sv;
      append_seconds_json(ev, n.time);
      ev += ",\"node\":"sv;
      append_json_string(ev, n.node);
      if (n.kind == NodeChange::cordoned) {
        ev += ",\"event\":\"node_cordoned\",\"source\":\"precheck_failure\",\"until_s\":"sv;
        append_seconds_json(ev, n.until);
        ev += "}\n"sv;
        continue;
      }
      if (n.kind == NodeChange::uncordoned) {
        ev += ",\"event\":\"node_uncordoned\",\"source\":\"precheck_failure\"}\n"sv;
        continue;
      }
      ev += n.up ? ",\"event\":\"node_up\"" : ",\"event\":\"node_down\"";
      ev += n.stochastic ? ",\"source\":\"stochastic\"}\n" : ",\"source\":\"injected\"}\n";
    }
  };
  // Each task's name and each interned reason escaped once, the names packed together: the
  // records come in time order and visit the tasks at random (one scattered scenario record
  // per line otherwise).
  std::string names;
  std::vector<std::size_t> name_at(runs_.size() + 1, 0);
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    name_at[i] = names.size();
    append_json_string(names, task_name(i));
  }
  name_at[runs_.size()] = names.size();
  std::vector<std::string> reasons;  // by interned id; "" = not escaped yet (an escaped one has quotes)
  std::size_t ci = 0;
  for (const StateChange& c : changes()) {
    node_records(ci++);
    ev += "{\"time_s\":"sv;
    append_seconds_json(ev, c.time);
    ev += ",\"task\":"sv;
    ev.append(names, name_at[std::size_t(c.task)], name_at[std::size_t(c.task) + 1] - name_at[std::size_t(c.task)]);
    ev += ",\"attempt\":"sv;
    append_int(ev, c.attempt);
    ev += ",\"from\":\""sv;
    if (!c.initial) ev += to_string(c.from);
    ev += "\",\"to\":\""sv;
    ev += to_string(c.to);
    ev += "\",\"reason\":"sv;
    if (c.reason >= reasons.size()) reasons.resize(std::size_t(c.reason) + 1);
    if (reasons[c.reason].empty()) append_json_string(reasons[c.reason], reason_of(c));
    ev += reasons[c.reason];
    ev += "}\n"sv;
    w.maybe_flush();
  }
  node_records(changes().size());
  w.close();
}

void Simulator::write_timeseries(const std::string& dir) const {
  if (!opt_.keep_snapshots) throw std::logic_error("Simulator::write_timeseries: needs a run that keeps its time series");
  auto write = [&](const std::string& name, const std::string& text) { write_file_checked(dir + "/" + name, text); };

  // timeseries.csv: value of the last change point at or before each sample time.
  // At least 1 ms: a sub-millisecond interval would never advance (scenario files refuse < 1 s).
  Time interval = sc_.timeseries_interval_s > 0 ? std::max<Time>(1, from_seconds(sc_.timeseries_interval_s))
                                                : std::max<Time>(1000, ((makespan_ / 100 + 999) / 1000) * 1000);
  std::string ts =
      "time_s,gpus_reserved,gpus_pay_as_you_go,gpus_spot,gpus_idle,gpus_allocated,gpus_up,queue_length,running_tasks,frag_gpus,"
      "vcpus_allocated,vcpus_up,cpu_allocation_ratio,gpus_allocated_mean,gpus_allocated_min,gpus_allocated_max,"
      "vcpus_allocated_mean,vcpus_allocated_min,vcpus_allocated_max\n";
  // The last change point at or before t (times never decrease): one forward pass, `s` the
  // current point and `next` the one after it. Between two samples, every change point is
  // folded into the interval's time-weighted mean, min and max of the allocated GPUs and vCPUs.
  auto next = snapshots().begin();
  const auto end = snapshots().end();
  Snapshot s = *next++;
  auto gpus_of = [](const Snapshot& x) { return x.gpu_by_class[0] + x.gpu_by_class[1] + x.gpu_by_class[2] + x.gpu_by_class[3]; };
  for (Time t = 0, prev = 0;; prev = t, t += interval) {
    // [prev, t): the value held at prev, then each change point before t; then the sample at t.
    long double g_area = 0, c_area = 0;
    std::int64_t g_min = gpus_of(s), g_max = g_min, c_min = s.cpu_alloc, c_max = c_min;
    Time since = prev;
    auto fold = [&](const Snapshot& x) {
      g_min = std::min(g_min, gpus_of(x));
      g_max = std::max(g_max, gpus_of(x));
      c_min = std::min(c_min, x.cpu_alloc);
      c_max = std::max(c_max, x.cpu_alloc);
    };
    while (next != end && next->time <= t) {
      g_area += (long double)gpus_of(s) * (long double)(next->time - since);
      c_area += (long double)s.cpu_alloc * (long double)(next->time - since);
      since = next->time;
      s = *next++;
      fold(s);
    }
    g_area += (long double)gpus_of(s) * (long double)(t - since);
    c_area += (long double)s.cpu_alloc * (long double)(t - since);
    const std::int64_t all = gpus_of(s);
    if (t == prev) {  // row 0 covers the instant 0 only: mean, min and max are the sample
      g_min = g_max = all;
      c_min = c_max = s.cpu_alloc;
    }
    const long double span = (long double)(t - prev);
    const std::int64_t g_mean = t > prev ? std::int64_t(std::llround(double(g_area / span))) : all;
    const std::int64_t c_mean = t > prev ? std::int64_t(std::llround(double(c_area / span))) : s.cpu_alloc;
    ts += fmt::format("{},{},{},{},{},{},{},{},{},{:.3f},{},{},{:.4f},{},{},{},{},{},{}\n", format_seconds(t),
                      format_seconds(s.gpu_by_class[0]), format_seconds(s.gpu_by_class[1]), format_seconds(s.gpu_by_class[2]),
                      format_seconds(s.gpu_by_class[3]), format_seconds(all), format_seconds(s.gpu_up), s.queue, s.running,
                      s.frag_milli / 1000.0, format_seconds(s.cpu_alloc), format_seconds(s.cpu_up),
                      s.cpu_up > 0 ? double(s.cpu_alloc) / double(s.cpu_up) : 0.0, format_seconds(g_mean), format_seconds(g_min),
                      format_seconds(g_max), format_seconds(c_mean), format_seconds(c_min), format_seconds(c_max));
    if (t >= makespan_) break;
  }
  write("timeseries.csv", ts);
}

}  // namespace sim
