// Input limits (docs/scenario-format.md, "Limits") and the one value check for tasks and nodes,
// whatever their source (scenario file or trace). Every limit is refused at validation with exit
// status 2; none is left for the allocator or the event loop to discover.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "sim/io/scenario.hpp"

namespace sim::io::limits {

/// Every time (`*_s`): the simulator counts integer milliseconds; sums of times must not overflow.
inline constexpr double max_time_s = 1e9;
/// vCPU, GiB and quota GPU amounts, also per replica after `x count_per_node`.
inline constexpr double max_amount = 1e9;
/// GPUs of a node, also of one replica after `x count_per_node` (libsched: one bit per GPU).
inline constexpr int max_node_gpus = 64;
/// Distinct GPU models of a scenario (instance specs, node groups, nodes and tasks'
/// `gpu_models` together; libsched keeps one bit per model).
inline constexpr int max_gpu_models = 64;
/// Nodes of one node group.
inline constexpr int max_group_count = 100000;
/// Nodes of the whole cluster (groups expanded, explicit nodes and trace nodes).
inline constexpr std::int64_t max_total_nodes = 1000000;
/// `count_per_node`.
inline constexpr int max_count_per_node = 1000;
/// Workers of one task (`workers`, autoscaling `min_workers`/`max_workers`/`demand[].workers`).
inline constexpr int max_workers = 1000000;
/// Replicas of all tasks together: sum of (max(workers, autoscaling.max_workers) + 1).
inline constexpr std::int64_t max_total_replicas = 10000000;
/// Tasks of a scenario (inline and from traces together).
inline constexpr std::int64_t max_tasks = 2000000;
/// `fault_tolerance.max_resubmissions`: attempts per task are at most this + 1.
inline constexpr int max_resubmissions = 1000;
/// `image_pull_retries` (-1 = no breaker is still allowed; a run without until_s whose pull
/// always fails, `image_pull_failure_prob` 1, is refused before simulating).
inline constexpr int max_image_pull_retries = 1000;
/// Run-time bound with `image_pull_retries` -1 and no until_s: this many consecutive failed
/// pulls of one attempt stop the run with exit 2 (at >= 1 s per pull, over 11 simulated days).
inline constexpr int max_pull_failures_without_breaker = 1000000;
/// A cost or delay (`precheck_s`, `image_pull_s`, `debug_retention_s`, `autoscaling.idle_reclaim_s`,
/// node group `mttr_s`) is 0 (none) or at least this: time advances by >= 1 s per retry.
inline constexpr double min_delay_s = 1;
/// An interval (`checkpoint_interval_s`, `timeseries_interval_s`) is at least this.
inline constexpr double min_interval_s = 1;
/// A price in `prices` (currency per GPU-, instance- or vCPU-hour): 0 to this.
inline constexpr double max_price_per_h = 1e6;
/// `spot_reclaim.*.rate_per_node_h`: 0 to this (one reclaim per node-hour on average, as
/// `min_mtbf_s` bounds failures: 1,000,000 nodes give <= 278 reclaims per simulated second).
inline constexpr double max_reclaim_rate_per_node_h = 1;
/// `throughput[i].speed.MODEL` (a task's relative speed on a GPU model): between these two, so
/// that duration / speed stays inside the simulated clock (docs/heterogeneity.md).
inline constexpr double min_gpu_speed = 0.001;
inline constexpr double max_gpu_speed = 1000;
/// Node group `mtbf_s` is 0 (no random failures) or at least this (one hour).
inline constexpr double min_mtbf_s = 3600;
/// `transient_failure_rate_per_h` (3600/h = one failure per second on average).
inline constexpr double max_transient_rate_per_h = 3600;
/// Rows of timeseries.csv: estimated horizon / timeseries_interval_s.
inline constexpr std::int64_t max_timeseries_rows = 1000000;
/// Trace `arrival_scale`: in (0, this].
inline constexpr double max_arrival_scale = 1000;
/// `workload.arrival.rate_per_hour` (1,000 arrivals per second).
inline constexpr double max_arrival_rate_per_hour = 3.6e6;
/// A share (relative weight) or a profile weight of the workload section.
inline constexpr double max_share = 1e12;
/// `sigma` of a lognormal duration (also derived from mean_s / median_s).
inline constexpr double max_lognormal_sigma = 10;
/// `runtime_estimate_factor` of a workload class.
inline constexpr double max_estimate_factor = 1000;
/// Bytes of a scenario file.
inline constexpr std::uint64_t max_scenario_bytes = std::uint64_t{1} << 28;  // 256 MiB
/// Nesting levels of any JSON document schedsim reads (scenario, snapshot, shard.json, the files
/// `report` reads): deeper documents are refused before parsing (a walk would overflow the stack).
inline constexpr int max_json_depth = 100;
/// Bytes of a trace file, and bytes after gzip decompression.
inline constexpr std::uint64_t max_trace_bytes = std::uint64_t{1} << 30;  // 1 GiB
/// Bytes of one line of a trace file.
inline constexpr std::size_t max_trace_line_bytes = std::size_t{1} << 20;  // 1 MiB

}  // namespace sim::io::limits

namespace sim::io {

/// Receives one problem: `field` relative to the checked object (`workers`, `replica.gpus`,
/// `fault_tolerance.max_resubmissions`), the value's text and the rule it breaks.
using ProblemFn = std::function<void(const std::string& field, const std::string& value, const std::string& rule)>;

/// Every value rule of one task that does not need the rest of the scenario: time and amount
/// ranges, the minimum delays and intervals, rate and attempt caps, the per-task replica cap and,
/// for an inline `replica`, the products with count_per_node. Used for scenario tasks and for
/// every task a trace reader builds.
void check_task_values(const TaskCfg& task, const ProblemFn& report);

/// check_task_values in two parts, called in this order by it: the shape and times of a task
/// (submit, duration, workers, count_per_node, replica, checkpoint interval, runtime estimate),
/// which a trace row sets, then the rest (delays, failure rates, resubmissions, autoscaling),
/// which a trace reader copies unchanged from the trace's settings into every row's task. A
/// reader checks the rest once (detail::RowTaskCheck) and each row's shape.
void check_task_shape_values(const TaskCfg& task, const ProblemFn& report);
void check_task_other_values(const TaskCfg& task, const ProblemFn& report);

/// Node rules: name (non-empty, no `;`, no control character), GPUs, vCPU, GiB.
void check_node_values(const NodeCfg& node, const ProblemFn& report);

/// A node name (or node-group prefix) breaks the name rule: empty name, `;` (the separator of
/// tasks.csv `nodes`) or a control character. Returns the rule text, empty when fine.
std::string node_name_problem(std::string_view name, bool allow_empty = false);

/// Where `text` breaks the rule for text that is written into outputs (tasks.csv, metrics.prom,
/// JSON): well-formed UTF-8 (RFC 3629: no overlong form, surrogate or code point past U+10FFFF)
/// and no control character but tab and newline. `offset` is the 0-based byte offset of the
/// first offending byte. Scenario files get this from the JSON parser; trace rows and the
/// simulator's pre-run check call it.
struct TextProblem {
  std::size_t offset = 0;
  std::string rule;
};
std::optional<TextProblem> text_problem(std::string_view text);

/// The 0-based byte offset of the first byte of `text` that is not well-formed UTF-8 (the rule
/// of text_problem without the control-character part), or nullopt. For text that does not come
/// through the JSON parser (a `--set` value that is not JSON, a Python string).
std::optional<std::size_t> utf8_problem(std::string_view text);

/// Scenario-wide totals: nodes (field `cluster.pools`), tasks and replicas (field `tasks`),
/// timeseries rows (field `timeseries_interval_s`) and distinct GPU models (the path of the
/// first name past limits::max_gpu_models, in the order the simulator interns them: instance
/// specs, tasks' `replica.gpu_models`, then each pool's node groups and nodes). Checked on the
/// scenario file and again once the traces are merged in.
void check_scenario_totals(const Scenario& scenario, const ProblemFn& report);

/// Nodes of the cluster: node group counts plus explicit nodes (no expansion).
std::int64_t total_nodes(const ClusterCfg& cluster);

/// Estimated horizon of a run: `until_s` when set, else the latest submit_s + duration_s x
/// (1 + max_resubmissions) of its tasks.
double estimated_horizon_s(const Scenario& scenario);

}  // namespace sim::io
