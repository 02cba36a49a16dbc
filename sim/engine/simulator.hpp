// sim::Simulator: the discrete-event simulator. Owns time (an EventQueue), the workload's
// ground truth (true durations, injected and stochastic faults), the task lifecycle and the
// metrics; asks libsched::Scheduler for every decision.
//
// Lifecycle of one attempt (every attempt is recorded):
//   Queued -> [Prechecking] -> Running -> Succeeded | Failed | Stopped
//   RayJob debug mode: Running -> DebugHolding -> Succeeded.
// Timing rules (docs/outputs.md "Timing semantics"):
//   * an attempt starts (start_s) at the instant it is placed; with precheck_s > 0 it is
//     Prechecking for precheck_s, then (image_pull_s > 0) pulls its image in state Running;
//     work progresses only after the start-up phase;
//   * saved work = floor(e / c) * c for e seconds of work and checkpoint interval c (0 without
//     checkpoints); the next attempt needs duration_s minus all saved work;
//   * a resubmitted attempt enters the queue at the failure instant, with the task's original
//     priority and submit time (TaskSpec::submit unchanged);
//   * after all events of one instant are processed, Scheduler::schedule(now) is called
//     repeatedly (at most 100 rounds) while it preempts or something was released.
//   * after each instant, one wake-up event is kept pending at the scheduler's
//     next_eligibility_change (an idle fragment reaching a waiting task's stability
//     threshold), so such a task starts exactly then; policy ticks cover policy changes.
// A value, not a singleton: tests may run several simulators side by side.
//
// The parts, one file each (docs/architecture.md):
//   simulator.cpp       the event loop, dispatch, scheduling at the end of each instant, runtime bounds
//   scenario_build.cpp  scenario -> libsched objects (cluster, task specs, policies, quotas, options)
//   lifecycle.cpp       attempts: queue, start-up phases, entrypoint, end, resubmission
//   capacity.cpp        capacity dynamics: node failures and repairs, spot reclaim, RayJob autoscaling
//   faults.hpp/.cpp     FaultModel: the seeded failure models (node MTBF/MTTR, precheck, pull, transient)
//   metrics.hpp/.cpp    Metrics: wait accounting, time series, event log; per-task metrics
//   outputs.cpp         the output files (docs/outputs.md)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>
#include <libsched/detail/signature_map.hpp>
#include <libsched/libsched.hpp>

#include "sim/engine/cost.hpp"
#include "sim/engine/end_reason.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/faults.hpp"
#include "sim/engine/metrics.hpp"
#include "sim/io/output_names.hpp"
#include "sim/io/scenario.hpp"

namespace sim {

class ExternalScheduler;  // sim/engine/external.hpp
class Simulator;
struct ExternalRun;       // sim/engine/external.hpp

/// Seconds from ms for outputs: an integer when whole ("60"), else up to 3 decimals with
/// trailing zeros trimmed ("60.25"); a negative value (not applicable) prints "".
std::string format_seconds(Time ms);

/// A number rounded to 3 decimals for CSV outputs: trailing zeros trimmed, "60" when whole,
/// never "-0" (what fmt's "{:.3f}" prints for std::round(x * 1000) / 1000, then trimmed).
std::string format_decimal3(double x);

/// One attempt of a task: what tasks.csv prints. Times are ms (libsched::Time); -1 = not applicable.
/// The text fields are views into the Simulator that recorded the attempt (its scheduler's
/// task table and its interned texts), valid while it lives: 64 bytes less per attempt than
/// four strings.
struct AttemptRecord {
  int task = 0;                   ///< index in Scenario::tasks
  int attempt = 1;                ///< 1-based attempt number
  AttemptState state = AttemptState::queued;
  EndReason end_reason = EndReason::never_started;  ///< why it ended (sim/end_reason.hpp)
  std::int32_t master_node = -1;  ///< cluster node index of nodes[0] (-1: never placed)
  Time submit = 0;                ///< when this attempt entered the queue
  Time start = -1;                ///< placement instant
  Time end = -1;                  ///< when it released its resources
  Time run_start = -1;            ///< when the entrypoint started (after start-up costs)
  std::string_view spec;          ///< chosen option label (spec name), "" for inline shapes
  /// cluster node index of each replica, master/head first (names: Simulator::node_name); two held inline
  boost::container::small_vector<std::int32_t, 2> nodes;
  /// milli-GPU of each replica (same order as nodes); one replica held inline.
  boost::container::small_vector<std::int64_t, 1> replica_gpu_milli;
  std::string_view reason;        ///< empty on success
  std::string_view capacity;      ///< capacity class it ran on (reserved, pay_as_you_go, spot, idle)
  std::int64_t gpu_milli = 0;     ///< GPUs of the gang at placement, milli-GPU
  std::int64_t cpu_milli = 0;     ///< vCPU of the gang at placement, milli-vCPU
  std::string_view preemptor;     ///< preempting task's name (preempted, spot_eviction, idle_reclaim by a task)
  Time work_done = 0;             ///< entrypoint work executed in this attempt
  Time lost_work = 0;             ///< work executed but not saved by a checkpoint
  Time work_needed = 0;           ///< work this attempt had to do (duration minus saved)
  /// Currency: the attempt's replicas x the hours it held them x its class's price (a reserved
  /// attempt is valued at the reserved price, but pays nothing per use: Simulator::billed_cost).
  /// 0 without prices.
  double cost = 0;
  /// Currency: the part of `cost` held beyond the attempt's last checkpoint when it failed (the
  /// whole attempt when nothing was saved: start-up and failed prechecks included).
  double lost_cost = 0;
  /// With a measurement window (scenario `measure`): the parts of `cost` and `lost_cost` held inside
  /// it (currency); 0 without one.
  double window_cost = 0;
  double window_lost_cost = 0;
};

struct SimOptions {
  std::optional<std::uint64_t> seed;  ///< overrides Scenario::seed
  std::optional<double> until_s;      ///< overrides Scenario::until_s (seconds)
  /// Called about every 4096 events with (simulated time ms, events processed so far).
  std::function<void(Time, std::uint64_t)> progress;
  /// Events allowed at one simulated instant; 0 = events_per_instant_cap(scenario).
  std::uint64_t max_events_per_instant = 0;
  /// Consecutive failed image pulls of one attempt allowed with image_pull_retries -1 and no
  /// until_s; 0 = io::limits::max_pull_failures_without_breaker.
  int max_pull_failures = 0;
  /// Placement policies by name (scheduler.placement); nullptr = Registry::builtin().
  /// Must outlive the Simulator's construction (policies are created then).
  const libsched::Registry* registry = nullptr;
  /// Internal switch (tests, not a scenario key): libsched::SchedulerOptions::request_classes.
  /// Off gives the same outputs, slower under a long greedy queue.
  bool request_classes = true;
  /// An external scheduler (run --scheduler-cmd, docs/external-scheduler.md): when set, every
  /// scheduling instant with a waiting task sends it the `decide` snapshot and applies its answer
  /// instead of calling Scheduler::schedule(). Must outlive run(). nullptr: the built-in scheduler.
  ExternalScheduler* external = nullptr;
  /// Snapshots (schedsim backtest, docs/forecast.md "Backtest"): with observe_every > 0 (ms),
  /// `observer(sim, t)` is called at t = k * observe_every (k = 1, 2, ...) for every such t
  /// before the run ends, once every instant <= t is processed and before any later one (so
  /// `sim.decide_snapshot(t)` is the state at t). Changes nothing in the run.
  Time observe_every = 0;
  std::function<void(Simulator&, Time)> observer;
  /// false: memory proportional to the tasks live at once (schedsim run when its outputs are at
  /// most summary.json, groups.csv, timeseries.csv and scenario.resolved.json). A task's libsched
  /// entry is added at its first submission and forgotten when it ends for good, and its attempt
  /// records are folded into the totals summary.json and groups.csv need (TaskTotals): both are
  /// byte-identical to a run that keeps everything. Then tasks.csv, events.jsonl, metrics.prom,
  /// timeline.json and the decide snapshot cannot be written (std::logic_error), attempts() lists
  /// only the attempts of unended tasks and task_spec() of an ended task throws
  /// libsched::UnknownTask. Ignored (everything kept) with prices, a measurement window, an
  /// external scheduler, an observer or a custom `registry` (its plugins are given libsched's
  /// task ids, which such a run hands out otherwise). The builtin plugins decide alike: ties
  /// between equal ranks go by TaskSpec::sequence, the scenario index in both runs.
  bool keep_ended_tasks = true;
  /// The caller has run check_runtime_bounds on the scenario with these options and handled its
  /// error (schedsim run, and each seed of compare, sweep and plan: exit 2 before simulating), so the
  /// constructor skips its own pass over the tasks. false: run() throws the check's error.
  bool runtime_bounds_checked = false;
  /// false: no time series (schedsim run when its outputs include neither timeseries.csv nor
  /// timeline.json, and each seed of compare, sweep and plan): snapshots() stays empty and no
  /// fragmentation is tracked, so timeseries.csv and timeline.json cannot be written
  /// (std::logic_error). summary.json is byte-identical: its utilization sums are kept as the
  /// run goes either way (Metrics::utilization).
  bool keep_snapshots = true;
};

namespace detail {
/// `v` as an int64_t when that converts back to exactly `v` (an integer above -2^63 and below
/// 2^63, not -0); nullopt otherwise (a fraction, NaN, infinities, a larger magnitude).
inline std::optional<std::int64_t> exact_int64(long double v) {
  if (!(v > -9223372036854775808.0L && v < 9223372036854775808.0L)) return std::nullopt;
  // Rounded in the current mode, not truncated: the same integer for an integral `v`, and on
  // x87 no switch of the control word (the truncating cast's, about 50 ns a task).
  const auto i = static_cast<std::int64_t>(std::llrint(v));
  if (static_cast<long double>(i) != v || (i == 0 && std::signbit(v))) return std::nullopt;
  return i;
}
}  // namespace detail

// ------------------------------------------------------------------ runtime bounds
// (docs/outputs.md "Runtime bounds"). Breaking one is an input error (exit 2): the scenario
// asks for a run that cannot end or cannot be written.

/// A scenario that breaks a runtime bound. what() is one line `FILE: PATH: VALUE: RULE`.
struct SimulationLimitError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Latest simulated time: 1e12 s (1000 x the largest time a scenario may state). An event
/// that would fall later (e.g. an image pull retried without limit) stops the run.
inline constexpr Time kMaxSimTime = Time(1'000'000'000'000) * 1000;
/// metrics.prom resolution (docs/outputs.md "metrics.prom"): one gauge per task and metric for
/// a run of at most this many tasks; above it, one gauge per (tenant, user, task type, pool)
/// group and metric, sums over the group's tasks (a 111,549-task Philly replay would write
/// 669,294 per-task series, 153 MB).
inline constexpr std::size_t kPromTaskSeriesMax = 10'000;
/// Most rows timeseries.csv may have.
inline constexpr std::uint64_t kMaxTimeseriesRows = 1'000'000;
/// Events allowed at one simulated instant: 1,000,000 + 100 x (tasks + nodes + injected
/// events + node policies). More means time stopped advancing (a zero-length retry cycle).
std::uint64_t events_per_instant_cap(const io::Scenario& sc);
/// Checks, before simulating, what can be known up front: the time series fits
/// kMaxTimeseriesRows up to until_s, and every name written into outputs is valid UTF-8
/// without control characters other than tab and newline (Prometheus label values, CSV).
/// Throws SimulationLimitError. Simulator::run() calls it too.
void check_runtime_bounds(const io::Scenario& sc, const SimOptions& opt);

class Simulator {
 public:
  /// Converts `sc` (seconds, vCPU, GiB) into libsched objects (ms, milli-CPU, MiB) and
  /// schedules submissions, injected events, policy ticks and stochastic node failures.
  /// Throws std::invalid_argument on dangling references (unknown spec, pool, node, task).
  /// Takes the scenario by value: a caller that no longer needs it moves it in, so a
  /// million-task scenario (about 600 bytes per task) is held once, not twice.
  explicit Simulator(io::Scenario sc, SimOptions opt = {});
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /// Runs to completion (every task final, nothing left that can change) or to until_s.
  /// Throws SimulationLimitError when a runtime bound is broken (too many events at one
  /// instant, time past kMaxSimTime, a time series longer than kMaxTimeseriesRows) and
  /// sim::Interrupted when SIGINT/SIGTERM arrived under an InterruptGuard (sim/publish.hpp).
  /// A second call returns at once (a run happens once per Simulator).
  void run();

  /// The `decide` snapshot (docs/decide.md) of the state now, on the clock `now` (ms, >= the last
  /// instant processed): nodes down or drained, the running tasks with their placements, the
  /// waiting tasks in queue order, every task without its true `duration_s`. One JSON line.
  /// Meant for SimOptions::observer.
  std::string decide_snapshot(Time now);

  /// The scenario as given, except `tasks`, which is empty: the simulator keeps the tasks in a
  /// compact form after construction (tasks that differ only in name, submit_s, duration_s and
  /// runtime_estimate_s share one entry). Use task_count(), task_name() and task_cfg().
  const io::Scenario& scenario() const { return sc_; }
  /// Tasks of the scenario (the size of its `tasks`).
  std::size_t task_count() const { return runs_.size(); }
  /// Name of scenario task `ti` (0 <= ti < task_count()).
  const std::string& task_name(std::size_t ti) const { return compact_ ? names_[ti] : task_spec(ti).name; }
  /// Whether this run keeps only what live tasks and the summary need (SimOptions::keep_ended_tasks
  /// false and none of the conditions that ignore it).
  bool compact() const { return compact_; }
  /// Attempts of scenario task `ti` so far (0: not submitted), folded or not.
  int attempt_count(std::size_t ti) const;
  /// Did scenario task `ti` ever start (TaskMetrics::started, without the rest of task_metrics)?
  bool task_started(std::size_t ti) const;
  /// The name of cluster node `n` (an AttemptRecord::nodes entry); n must be a node index.
  const std::string& node_name(std::int32_t n) const { return sched_->cluster().node(libsched::NodeId(n)).name; }
  /// The scenario's entry `tasks[ti]` as it was given, rebuilt from the compact form.
  io::TaskCfg task_cfg(std::size_t ti) const;
  const libsched::Scheduler& scheduler() const { return *sched_; }
  /// All attempts in (task order of the scenario, attempt) order (compact runs: those not folded).
  std::vector<const AttemptRecord*> attempts() const;
  const std::vector<TaskStats>& task_stats() const { return metrics_->task_stats(); }
  const SnapshotLog& snapshots() const { return metrics_->snapshots(); }
  const ChangeLog& changes() const { return metrics_->changes(); }
  /// The reason text of a state change ("" when none).
  const std::string& reason_of(const StateChange& c) const { return metrics_->reason(c.reason); }
  const std::vector<NodeChange>& node_changes() const { return metrics_->node_changes(); }
  /// Per-task metrics (scenario order), unfinished tasks censored at censor_time().
  std::vector<TaskMetrics> task_metrics() const;
  /// The metrics of scenario task `ti` alone (what task_metrics()[ti] holds): O(its attempts).
  /// Its string views point into this Simulator.
  TaskMetrics task_metrics(std::size_t ti) const;
  /// task_metrics(ti) as the summary counts it in the measurement window (scenario `measure`,
  /// docs/outputs.md "Measurement window"): `submitted` only when the task was submitted in
  /// [start, end), GPU/vCPU time and cost only inside the window. task_metrics(ti) without one.
  TaskMetrics measured_task_metrics(std::size_t ti) const;
  /// Whether the scenario has a measurement window; its bounds in ms ([0, kTimeNever) without one).
  bool has_window() const { return sc_.measure.has_value(); }
  Time window_start() const { return window_lo_; }
  Time window_end() const { return window_hi_; }
  /// Milliseconds of [from, to) inside the measurement window (to - from without one; >= 0).
  Time window_overlap(Time from, Time to) const {
    return std::max<Time>(0, std::min(to, window_hi_) - std::max(from, window_lo_));
  }
  /// The libsched task of scenario task `ti` (its options and workers at placement).
  const libsched::TaskSpec& task_spec(std::size_t ti) const;
  /// Where unfinished tasks are censored: until_s when the run has one, else the last instant
  /// the simulation processed (>= makespan).
  Time censor_time() const { return until_ != libsched::kTimeNever ? until_ : std::max(run_end_, makespan_); }
  /// End of the simulation (ms): last attempt end, or until when the run was cut.
  Time makespan() const { return makespan_; }
  /// summary.json's allocated and available GPU- and vCPU-time (milli-GPU x ms, milli-vCPU x
  /// ms) over the measurement window's part of [0, makespan), summed as the run went. After run().
  detail::UtilizationSums utilization_sums() const { return metrics_->utilization(makespan_); }
  std::uint64_t events_processed() const { return events_; }
  int preemptions() const { return preemptions_; }
  /// Attempts started so far (placements of whole gangs), folded or not.
  std::uint64_t placements() const { return placements_; }
  std::uint64_t seed() const { return seed_; }
  /// The workload distribution used for fragmentation (worker shapes of the tasks' first options).
  const libsched::WorkloadDistribution& workload() const { return workload_; }

  /// Writes tasks.csv, summary.json, groups.csv, events.jsonl, timeseries.csv and metrics.prom into
  /// `dir` (which must exist), each with a checked write, fsync and close (throws
  /// sim::OutputError). Not atomic as a set; run_command stages and publishes them atomically.
  void write_outputs(const std::string& dir) const;
  /// Writes the files of `which` among tasks.csv, summary.json, groups.csv, events.jsonl,
  /// timeseries.csv, metrics.prom and timeline.json into `dir` (scenario.resolved.json is the
  /// caller's: run_command writes it); only the selected files are computed. Same errors as above.
  /// `summary_text` (may be null): receives summary.json's bytes when `which` has it (the text
  /// summary_json() returns; run_command prints its table from them instead of building the
  /// group tables a second time), else is left as it is.
  void write_outputs(const std::string& dir, const OutputSelection& which, std::string* summary_text = nullptr) const;
  /// timeline.json (docs/outputs.md "timeline.json"): Chrome trace-event JSON, one process per
  /// pool and one thread per node (scenario order), one complete event per started attempt
  /// replica (ts/dur in microseconds of simulated time), node-down slices, and counters for the
  /// queue length and the GPUs allocated per capacity class at every change instant. Ends in a
  /// newline. Size: O(attempt replicas + node changes + change instants); the same bytes as
  /// write_outputs streams (for tests and small runs: it holds the whole file).
  std::string timeline_json() const;
  /// The summary.json object as text (2-space indented).
  std::string summary_json() const;
  std::string tasks_csv() const;
  /// groups.csv: the per-group metrics of summary.json's `groups`, one row per (group_by, group).
  std::string groups_csv() const;
  /// A one-line warning when tasks are unfinished at the end of the run, else "".
  std::string unfinished_warning() const;
  /// The costs of the run (docs/outputs.md "Costs"): all 0 and no currency without `prices`.
  CostSummary cost_summary() const;
  /// What attempt `a` pays per use (currency): its cost, 0 on reserved capacity (the commitment covers it).
  static double billed_cost(const AttemptRecord& a);
  /// 0 reserved, 1 pay_as_you_go, 2 spot, 3 idle (libsched::ResourceType order).
  static std::size_t class_index(std::string_view capacity);

 private:
  /// Run-time state of one task (scenario order).
  // Field order packs the record (104 bytes): one per scenario task.
  struct TaskRun {
    libsched::TaskId id;
    int pull_failures = 0;
    std::vector<AttemptRecord> attempts;
    Time duration = 0;
    Time remaining = 0;                 // work still needed
    std::vector<EventHandle> handles;   // pending events of the current attempt (freed when done)
    int workers_now = 0;
    int desired = 0;
    EventHandle scale_in = 0;
    Time queued_since = 0;
    bool done = false;                  // reached a final state
    bool active = false;                // the current attempt holds resources
    enum Phase : std::uint8_t { none, precheck, pull, running, debug } phase = none;
  };
  /// Injected faults that hit a task while it waited (delivered when it next starts), by task:
  /// rare, so kept out of TaskRun.
  std::map<int, std::vector<std::string>> pending_faults_;
  /// What task_metrics needs from a task's attempts, summed in attempt order (an attempt never
  /// started waits until `tc`, the censoring time). A compact run keeps only this of a task that
  /// ended for good with every attempt started (fold_ended).
  struct TaskTotals {
    long double gpu_ms = 0, cpu_ms = 0;  // milli-GPU x ms, milli-vCPU x ms held
    double cost = 0;                     // billed_cost summed
    Time wait = 0;                       // ms queued
    std::int64_t last_gpu_milli = 0;     // the last started attempt's gang milli-GPU
    std::int32_t master_node = -1;       // the last started attempt's master node (-1: none)
    std::int32_t attempts = 0;
    std::uint8_t capacity = 0;           // the last started attempt's class (class_index)
    bool started = false;
  };
  static TaskTotals totals_of(const std::vector<AttemptRecord>& attempts, Time tc);
  /// TaskTotals as a compact run keeps it for every task (56 bytes, not 80): the GPU and vCPU
  /// sums as 64-bit integers, which they are exactly (sums of milli x ms products) below 2^63.
  /// A sum that does not convert back to the same long double is kept in folded_wide_ (then
  /// gpu_ms is kWide), so folded_totals() gives back exactly what fold_totals() was given.
  struct FoldedTotals {
    static constexpr std::int64_t kWide = std::numeric_limits<std::int64_t>::min();
    std::int64_t gpu_ms = 0, cpu_ms = 0;
    double cost = 0;
    Time wait = 0;
    std::int64_t last_gpu_milli = 0;
    std::int32_t master_node = -1;
    std::int32_t attempts = 0;
    std::uint8_t capacity = 0;
    bool started = false;
  };
  void fold_totals(std::size_t ti, const TaskTotals& t);
  TaskTotals folded_totals(std::size_t ti) const;
  /// Compact runs: folds task ti's attempts into totals_[ti] and forgets its libsched entry, once
  /// it ended for good (attempts with one never started are kept as they are).
  void fold_ended(int ti);
  /// Compact runs: registers scenario task ti with libsched at its first submission.
  void register_task(int ti);
  /// The libsched task of scenario task `ti` from its profile's template (libsched::add_task's input).
  libsched::TaskSpec make_spec(std::size_t ti, std::string name) const;
  void build();
  /// Configuration of scenario task `ti` without its identity: name, submit_s, duration_s and
  /// runtime_estimate_s are empty / 0 here (see task_name(), ident_, runs_).
  const io::TaskCfg& cfg(std::size_t ti) const { return profiles_[profile_of_[ti]]; }
  // Parts of write_outputs: events.jsonl, timeseries.csv, metrics.prom into `dir`.
  void write_events(const std::string& dir) const;
  void write_timeseries(const std::string& dir) const;
  void write_metrics_prom(const std::string& dir) const;
  /// tasks.csv appended to `o`, calling `flush` after each task's rows (streaming).
  void tasks_csv_to(std::string& o, const std::function<void()>& flush) const;
  /// timeline.json appended to `o`, calling `flush` after each event group (a node's tracks, a
  /// slice, an instant's counters), so a writer can hand out what `o` holds; between calls `o`
  /// only grows. Holds a 40-byte record per slice, never the events' text.
  void timeline_json_to(std::string& o, const std::function<void()>& flush) const;
  /// summary.json and/or groups.csv (either pointer may be null) from one pass over the groups.
  void summary_and_groups(std::string* summary, std::string* groups_text) const;
  /// TaskMetrics::gpu_model of a task that never started: its first candidate's GPU model(s),
  /// "any" or "cpu" (computed once per profile at build).
  std::string requested_model_label(const io::TaskCfg& t) const;
  void handle(Time now, Event& ev);
  void instant_end(Time now);
  /// One scheduling round with SimOptions::external (external.cpp): the snapshot out, the answer
  /// in, checked and applied through the Scheduler; what schedule() would return. Throws
  /// ExternalSchedulerError naming the instant.
  libsched::ScheduleResult external_round(Time now);
  /// The `decide` snapshot of the state at `now` as one JSON line (external.cpp).
  std::string external_snapshot(Time now);
  /// Keeps one wake-up pending at the scheduler's next eligibility change (none when a policy
  /// tick is already due then).
  void schedule_wake(Time now);
  void enqueue_attempt(int ti, Time now);
  void on_started(libsched::TaskId id, Time now);
  void begin_phase(int ti, Time now);
  void start_entrypoint(int ti, Time now);
  void end_attempt(int ti, Time now, AttemptState st, const std::string& reason, const std::string& retry_kind,
                   bool already_released);
  void finish_entrypoint(int ti, Time now);
  /// Relative speed of attempt `a` (docs/heterogeneity.md): the slowest of its GPU replicas'
  /// GPU models for its task (TaskSpec::speed_on), 1.0 without a speed table or without a GPU
  /// replica; from the gang at placement (autoscaled workers do not change it).
  double attempt_speed(const AttemptRecord& a) const;
  void release_debug(int ti, Time now);
  // Event handlers (capacity.cpp: capacity dynamics; lifecycle.cpp: the task lifecycle).
  void on_node_down(Time now, const NodeDownEv& e);
  void on_node_up(Time now, const NodeUpEv& e);
  void on_spot_reclaim(Time now, const SpotReclaimEv& e);
  /// A reclaim of node `n`'s spot capacity at `now` with `notice` ms of notice: every attempt
  /// running on spot capacity with a replica there is evicted at once (notice <= 0, the reason of
  /// a `spot_reclaim` event) or gets the notice and is evicted when it ends (SpotEvictEv); an
  /// attempt that already has a notice keeps its first one.
  void spot_notice(Time now, libsched::NodeId n, Time notice);
  /// Stochastic reclaim of a node (scenario `spot_reclaim`): the notice, then the node's next reclaim.
  void on_spot_notice(Time now, const SpotNoticeEv& e);
  /// The notice of an attempt ends: it is evicted (kind spot_eviction).
  void on_spot_evict(Time now, const SpotEvictEv& e);
  /// Schedules the first stochastic reclaim of every node the scenario's `spot_reclaim` covers.
  void build_spot_reclaims();
  void on_demand(Time now, const DemandEv& e);
  void on_scale_in(Time now, const ScaleInEv& e);
  /// Cordons node `n` (drained: no new replica) until now + scheduler.precheck_cordon_s after
  /// a failed precheck, extending a cordon already in force; returns the cordon's end (ms),
  /// or -1 when cordons are off (precheck_cordon_s 0).
  Time cordon_after_precheck(libsched::NodeId n, Time now);
  /// The cordon of a node may end (ignored when a later failure extended it).
  void on_uncordon(Time now, const UncordonEv& e);
  /// RayJob autoscaling after scheduling at `now`: adds workers toward each task's demand.
  void autoscale(Time now);
  /// A start-up phase ended: precheck (draws node health) or image pull (draws a failure).
  void on_startup_step(Time now, const StartupEv& e);
  /// Is `attempt` task ti's current attempt, holding resources? (stale events are ignored)
  bool current(int ti, int attempt) const;
  /// Cache hints for the task of the next queued event (run()): its TaskRun when the event
  /// before it is delivered, then what that TaskRun points to (its last attempt, its
  /// scheduler entry) once that delivery is handled. No effect on any result.
  void prefetch_first(const EventQueue::Item* next);
  void prefetch_second();
  /// Ends whatever attempt of task `ti` holds resources because of an outside cause (a
  /// debug hold is cut short: its entrypoint already succeeded).
  void kill(int ti, Time now, const std::string& reason, const std::string& kind);
  void change(int ti, Time now, AttemptState from, AttemptState to, const std::string& reason);
  /// now + dt, or SimulationLimitError naming `path` (a task's key) when past kMaxSimTime.
  Time later(Time now, Time dt, int ti, const char* key, double value) const;
  [[noreturn]] void stuck_error(Time now, std::uint64_t n, const Event& last) const;
  std::string file_label() const;
  void cancel_attempt_events(int ti);
  // Costs (cost.cpp), all no-ops without prices (cost_ null).
  void build_costs();
  /// Currency per hour of task ti's current placement at its class's price.
  double attempt_rate(int ti) const;
  void cost_start(int ti, Time now);
  /// The placement of task ti changed size (autoscaling): the rate from `now` on.
  void cost_rerate(int ti, Time now);
  /// Sets the ending attempt's cost and lost_cost; work after `kept_until` is lost.
  void cost_end(int ti, Time now, Time kept_until);

  io::Scenario sc_;                      // tasks moved out by build() (profiles_, ident_)
  SimOptions opt_;
  // The scenario's tasks, compact: a task's configuration without its identity is one of the
  // distinct profiles_ (scenario order of first use); the identity is in ident_ and in
  // libsched's TaskSpec (the name). A million generated tasks share a handful of profiles.
  struct TaskIdentity {
    double submit_s = 0;
    double duration_s = 0;
    double estimate_s = std::numeric_limits<double>::quiet_NaN();  // NaN: none (24 bytes, not 32)
    TaskIdentity(double submit, double duration, std::optional<double> estimate)
        : submit_s(submit), duration_s(duration), estimate_s(estimate.value_or(std::numeric_limits<double>::quiet_NaN())) {}
    TaskIdentity() = default;
    std::optional<double> runtime_estimate_s() const {
      return std::isnan(estimate_s) ? std::nullopt : std::optional<double>(estimate_s);
    }
  };
  std::vector<io::TaskCfg> profiles_;
  std::vector<std::uint32_t> profile_of_;  // scenario task -> profiles_ index
  std::vector<TaskIdentity> ident_;        // scenario task -> submit, duration, estimate (seconds)
  std::vector<std::string> model_label_;   // profile -> requested_model_label
  // Compact runs (SimOptions::keep_ended_tasks false): the names (libsched holds only the live
  // tasks), the profiles' TaskSpec templates, and per task the totals of its folded attempts.
  bool compact_ = false;
  std::vector<std::string> names_;
  std::vector<libsched::TaskSpec> templates_;
  std::vector<FoldedTotals> totals_;
  std::map<std::size_t, std::pair<long double, long double>> folded_wide_;  // task -> (gpu_ms, cpu_ms) past int64
  std::string bounds_error_;             // check_runtime_bounds' message at construction ("" = none); run() throws it
  std::uint64_t instant_cap_ = 0;        // events_per_instant_cap of the scenario
  std::uint64_t seed_ = 1;
  Time until_ = libsched::kTimeNever;
  Time window_lo_ = 0;                   // measurement window [window_lo_, window_hi_), ms
  Time window_hi_ = libsched::kTimeNever;
  Time ts_limit_ = libsched::kTimeNever;  // latest time the time series can cover (kMaxTimeseriesRows)
  std::unique_ptr<libsched::Scheduler> sched_;
  EventQueue q_;
  std::vector<TaskRun> runs_;
  int prefetch_ti_ = -1;                 // the task prefetch_first hinted (-1: none)
  Time run_end_ = 0;                     // last instant processed
  bool ran_ = false;                     // run() was called
  libsched::WorkloadDistribution workload_;
  std::vector<int> task_of_id_;          // libsched TaskId -> scenario task index
  // First submissions, sorted by (time ms, task index): a cursor instead of N queued events.
  std::vector<std::pair<Time, int>> submit_order_;
  std::size_t next_submit_ = 0;
  std::size_t fixed_pending_ = 0;        // submissions, injected events, policy ticks not yet delivered
  EventHandle wake_handle_ = 0;          // the pending WakeEv (0: none)
  Time wake_at_ = -1;                    // its time
  libsched::detail::SignatureMap<libsched::WaitCode> wait_memo_;  // instant_end scratch: request signature -> wait code
  std::vector<libsched::TaskId> visited_;  // instant_end scratch: the waiting tasks the scheduler re-examined
  // Per request class id (Scheduler::request_class): the wait code every waiting member has in
  // metrics_, or -2 when not known to be one code; stamped by the classes' generation.
  std::vector<std::int8_t> class_code_;
  std::uint64_t class_code_gen_ = 0;
  void note_wait(libsched::TaskId id, int code);  // keeps class_code_ true after a set_wait on one task
  std::vector<Time> policy_ticks_;       // sorted times of the PolicyTickEv events
  std::vector<std::vector<int>> reclaim_nodes_;  // node indices of each spot_reclaim event (SpotReclaimEv::nodes)
  std::vector<Time> reclaim_notice_;     // notice (ms) of each spot_reclaim event, same index (0: evicted at once)
  std::vector<io::SpotReclaimRateCfg> reclaim_models_;  // distinct spot_reclaim entries in force
  std::vector<std::int32_t> reclaim_model_of_node_;     // per node: reclaim_models_ index, -1 none (empty without spot_reclaim)
  std::map<int, Time> notice_at_;        // task -> when its current attempt got a reclaim notice (rare: a map)
  int live_tasks_ = 0;
  int active_ = 0;                       // attempts holding resources
  int preemptions_ = 0;
  std::uint64_t placements_ = 0;        // attempts started (placements())
  std::uint64_t events_ = 0;
  Time makespan_ = 0;
  std::vector<int> autoscaled_;          // tasks with RayJob autoscaling, scenario order
  std::vector<Time> cordon_until_;       // per node: end of its precheck cordon (ms); empty until the first cordon
  int cordoned_ = 0;                     // nodes cordoned now (each has an UncordonEv pending)
  bool released_since_schedule_ = false;
  std::unique_ptr<FaultModel> faults_;   // failure models (faults.hpp)
  std::unique_ptr<Metrics> metrics_;     // measurements (metrics.hpp)
  std::unique_ptr<ExternalRun> ext_;     // with SimOptions::external: caches of the protocol (external.hpp)
  // Costs (cost.cpp): allocated only when the scenario has prices.
  std::unique_ptr<CostModel> cost_;
  struct CostRun {
    double rate = 0;                     // currency per hour of the current attempt
    Time since = 0;                      // when `rate` began
    double acc = 0;                      // currency before `since`
  };
  std::vector<CostRun> cost_runs_;       // per task (empty without prices)
  std::map<int, std::vector<std::pair<Time, double>>> rate_steps_;  // autoscaled attempts: (from, rate)
  struct Commitment {                    // one reserved quota (user, pool)
    std::string_view user, pool, tenant, gpu_model;
    double gpus = 0;
    double price = 0;                    // per GPU-hour
  };
  std::vector<Commitment> commitments_;
};

}  // namespace sim
