// Multi-run layer of schedsim: run one resolved scenario with many seeds (and many overrides)
// in memory, in parallel, and summarise the scalar metrics of summary.json with confidence
// intervals. Used by `schedsim run --seeds`, `compare`, `sweep` and `plan` (sim/multirun_cli.hpp;
// docs/planning.md has the file formats and the statistics).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/io/resolve.hpp"

namespace sim {

// ------------------------------------------------------------------ statistics

/// Mean, sample standard deviation and two-sided 95 % confidence interval of the mean of n
/// values: mean ± t_{0.975, n-1} · std / sqrt(n) (Student t quantile, Boost.Math). n = 1: std
/// is 0 and the interval collapses to the mean. When every value is equal, mean is exactly that
/// value and std, and the interval's width, exactly 0.
struct Stats {
  double mean = 0;
  double std = 0;        ///< sample standard deviation (divisor n - 1); 0 when n = 1
  double ci95_low = 0;
  double ci95_high = 0;
  std::size_t n = 0;
};

/// The 0.975 quantile of Student's t distribution with `dof` degrees of freedom (e.g. 2.7764451
/// for 4). Throws std::invalid_argument when dof is 0.
double student_t_975(std::size_t dof);

/// Stats of `values` (any unit; the result is in the same unit). Throws std::invalid_argument
/// when `values` is empty or holds a non-finite number.
Stats summarize(std::span<const double> values);

/// Paired comparison of runs a_i and b_i made with the same seeds: `a` = mean of a, `b` = mean
/// of b, `diff` = mean of (b_i - a_i) and the 95 % CI of that mean difference (summarize of the
/// differences). Equal inputs give diff and both bounds exactly 0. Throws std::invalid_argument
/// when the sizes differ or are 0.
struct PairedStats {
  double a = 0, b = 0, diff = 0, ci95_low = 0, ci95_high = 0;
  std::size_t n = 0;
};
PairedStats summarize_paired(std::span<const double> a, std::span<const double> b);

// ------------------------------------------------------------------ metrics of one run

/// (metric name, value) in a fixed order.
using MetricList = std::vector<std::pair<std::string, double>>;

/// The scalar metrics of summary.json, in this fixed order: tasks, attempts, succeeded, failed,
/// unfinished, never_started, not_submitted, makespan_s, censor_s, mean_wait_s, p95_wait_s,
/// mean_jct_s, mean_slowdown, mean_bounded_slowdown, gpu_allocation_ratio, cpu_allocation_ratio,
/// preemptions, resubmissions, lost_work_s, events, cost_total, cost_reserved, cost_pay_as_you_go,
/// cost_spot, cost_idle, cost_reserved_unused, cost_lost_work (every numeric top-level key but `seed`).
/// A numeric top-level key not in this list (added later) follows them, in summary.json order.
const std::vector<std::string>& summary_metric_names();

/// The metrics of one group (summary.json `groups`, groups.csv columns), in this order: tasks,
/// succeeded, failed, unfinished, never_started, mean_wait_s, p95_wait_s, mean_jct_s,
/// mean_slowdown, mean_bounded_slowdown, gpu_seconds, vcpu_seconds, cost, preemptions,
/// resubmissions, lost_work_s, gpu_allocation_share.
const std::vector<std::string>& group_metric_names();

/// The group-by dimensions of summary.json `groups`, in output order: user, tenant, pool,
/// gpu_model, capacity.
const std::vector<std::string>& group_by_names();

/// What one simulation measured.
struct RunMetrics {
  std::uint64_t seed = 0;
  MetricList scalars;  ///< summary_metric_names() order
  /// groups[group_by][group] = metrics in group_metric_names() order, for every group_by of
  /// group_by_names(); keys sorted in byte order.
  std::map<std::string, std::map<std::string, MetricList>> groups;
};

/// Reads the scalar and group metrics (every dimension) out of a summary.json object.
RunMetrics metrics_from_summary(const nlohmann::json& summary);

// ------------------------------------------------------------------ running

/// An input problem found while resolving or simulating one run (exit 2). what() holds the
/// diagnostic lines (`FILE: PATH: VALUE: RULE`, one per line, no trailing newline).
struct RunInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Resolves `source` with its seed replaced by `seed` (resolve_scenario: overrides, validation,
/// traces; for the embedded default scenario the seed also draws the workload), simulates it in
/// memory without writing anything and returns its metrics. Thread-safe: every call builds its
/// own Scenario and Simulator. Throws RunInputError (bad scenario, dangling reference, runtime
/// bound broken: sim::SimulationLimitError's message), sim::Interrupted (SIGINT/SIGTERM under an
/// InterruptGuard), std::bad_alloc.
RunMetrics simulate_seed(const ScenarioSource& source, std::uint64_t seed);

/// Largest --jobs value.
inline constexpr unsigned kMaxJobs = 256;

/// Calls body(i) for i = 0 .. n-1 on min(jobs, n) threads: the calling thread and
/// min(jobs, n) - 1 std::threads (jobs 0 counts as 1: everything on the calling thread). Indices are handed out in increasing order; the body must write its
/// result only to slot i of a pre-sized container, so results never depend on scheduling.
/// `done` (optional) is called after each body(i) returns, serialised by a mutex, with the
/// number of bodies finished so far. When bodies throw, no new index is started and the
/// exception of the smallest failing index is rethrown after every thread has joined. An
/// index is not started once interrupt_signal() is set (an Interrupted is thrown instead).
void parallel_for(std::size_t n, unsigned jobs, const std::function<void(std::size_t)>& body,
                  const std::function<void(std::size_t)>& done = {});

/// RFC 4180 field: quoted (with `"` doubled) when it holds `,`, `"`, CR or LF.
std::string csv_cell(const std::string& s);

}  // namespace sim
