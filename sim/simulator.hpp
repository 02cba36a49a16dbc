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
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <libsched/libsched.hpp>

#include "sim/end_reason.hpp"
#include "sim/event_queue.hpp"
#include "sim/io/scenario.hpp"

namespace sim {

/// Seconds from ms for outputs: an integer when whole ("60"), else up to 3 decimals with
/// trailing zeros trimmed ("60.25"); a negative value (not applicable) prints "".
std::string format_seconds(Time ms);

/// State of an attempt (as printed in tasks.csv and events.jsonl).
enum class AttemptState : std::uint8_t { queued, prechecking, running, debug_holding, succeeded, failed, stopped };
std::string_view to_string(AttemptState s);

/// One attempt of a task: what tasks.csv prints. Times are ms (libsched::Time); -1 = not applicable.
struct AttemptRecord {
  int task = 0;                   ///< index in Scenario::tasks
  int attempt = 1;                ///< 1-based attempt number
  AttemptState state = AttemptState::queued;
  Time submit = 0;                ///< when this attempt entered the queue
  Time start = -1;                ///< placement instant
  Time end = -1;                  ///< when it released its resources
  Time run_start = -1;            ///< when the entrypoint started (after start-up costs)
  std::string spec;               ///< chosen option label (spec name), "" for inline shapes
  std::vector<std::string> nodes; ///< node names of the replicas, master/head first
  std::string reason;             ///< empty on success
  std::string capacity;           ///< capacity class it ran on (reserved, pay_as_you_go, spot, idle)
  std::int64_t gpu_milli = 0;     ///< GPUs of the gang at placement, milli-GPU
  std::int64_t cpu_milli = 0;     ///< vCPU of the gang at placement, milli-vCPU
  EndReason end_reason = EndReason::never_started;  ///< why it ended (sim/end_reason.hpp)
  std::string preemptor;          ///< preempting task's name (preempted, spot_eviction, idle_reclaim by a task)
  Time work_done = 0;             ///< entrypoint work executed in this attempt
  Time lost_work = 0;             ///< work executed but not saved by a checkpoint
  Time work_needed = 0;           ///< work this attempt had to do (duration minus saved)
};

/// Per-task aggregates, in ms.
struct TaskStats {
  // Wait buckets: every queued millisecond lands in exactly one, by the primary code of the
  // scheduler's WaitStatus (libsched::wait_bucket), so they sum to the task's total waiting.
  Time wait_quota = 0;            ///< waits_for_quota, or never_fits with quota as primary constraint
  Time wait_capacity = 0;         ///< waits_for_capacity, blocked_by_queue, fits_now, never_fits by capacity
  Time wait_fragmentation = 0;    ///< waits_for_fragmentation
  Time wait_cpu_memory = 0;       ///< waits_for_cpu_memory
  Time wait_node_policy = 0;      ///< blocked_by_node_policy
  Time wait_idle_stability = 0;   ///< waits_for_idle_stability
  Time wait_preemption = 0;       ///< fits_after_preemption
  Time lost_work = 0;             ///< sum of attempts' lost work
  int resubmissions = 0;
  bool finished = false;          ///< reached a final state (Succeeded or Failed)
  bool succeeded = false;
  Time end = -1;                  ///< final end
};

/// One change point of the cluster, taken after scheduling at an instant.
struct Snapshot {
  Time time = 0;
  std::int64_t gpu_by_class[4] = {0, 0, 0, 0};  ///< allocated milli-GPU, index = libsched::ResourceType
  std::int64_t gpu_up = 0;                        ///< milli-GPU of up nodes
  std::int64_t cpu_alloc = 0;                     ///< allocated milli-vCPU on up nodes
  std::int64_t cpu_up = 0;                        ///< milli-vCPU of up nodes
  std::size_t queue = 0;                          ///< waiting tasks
  std::size_t running = 0;                        ///< tasks holding resources
  double frag_milli = 0;                          ///< cluster_fragmentation (milli-GPU)
};

/// Task-level metrics of one task (docs/outputs.md "Per-task metrics"), ms unless noted.
/// Unfinished tasks are censored at Simulator::censor_time().
struct TaskMetrics {
  bool submitted = false;         ///< submit_s <= the censoring time (has at least one attempt)
  bool started = false;           ///< at least one attempt started
  bool finished = false;          ///< final state Succeeded or Failed
  Time wait = 0;                  ///< queueing delay: all waiting of all attempts (censored)
  Time jct = 0;                   ///< final end (or censoring time) minus task submit
  Time run = 0;                   ///< duration_s: the uninterrupted run time
  double slowdown = 0;            ///< jct / run
  double bounded_slowdown = 0;    ///< max(1, jct / max(run, 10 s))
  long double gpu_ms = 0;         ///< milli-GPU x ms held (at placement size) over all attempts
  long double cpu_ms = 0;         ///< milli-vCPU x ms held over all attempts
  std::string pool;               ///< group keys: task pool or the pool it ran in
  std::string gpu_model;          ///< model it ran on, else its first candidate's, "cpu" for CPU-only
  std::string capacity;           ///< class of the last started attempt, else the requested resource_type
};

/// A node state change (events.jsonl): node_down / node_up, injected or stochastic.
struct NodeChange {
  Time time = 0;
  std::size_t seq = 0;            ///< index in changes() of the first task change after it
  std::string node;
  bool up = false;
  bool stochastic = false;
};

/// One state change (events.jsonl).
struct StateChange {
  Time time = 0;
  int task = 0;
  int attempt = 0;
  std::string from;
  std::string to;
  std::string reason;
};

struct SimOptions {
  std::optional<std::uint64_t> seed;  ///< overrides Scenario::seed
  std::optional<double> until_s;      ///< overrides Scenario::until_s (seconds)
  /// Called about every 4096 events with (simulated time ms, events processed so far).
  std::function<void(Time, std::uint64_t)> progress;
  /// Events allowed at one simulated instant; 0 = events_per_instant_cap(scenario).
  std::uint64_t max_events_per_instant = 0;
  /// Placement policies by name (scheduler.placement); nullptr = PlacementRegistry::builtin().
  /// Must outlive the Simulator's construction (policies are created then).
  const libsched::PlacementRegistry* registry = nullptr;
};

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
  explicit Simulator(const io::Scenario& sc, SimOptions opt = {});
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /// Runs to completion (every task final, nothing left that can change) or to until_s.
  /// Throws SimulationLimitError when a runtime bound is broken (too many events at one
  /// instant, time past kMaxSimTime, a time series longer than kMaxTimeseriesRows) and
  /// sim::Interrupted when SIGINT/SIGTERM arrived under an InterruptGuard (sim/publish.hpp).
  void run();

  const io::Scenario& scenario() const { return sc_; }
  const libsched::Scheduler& scheduler() const { return *sched_; }
  /// All attempts in (task order of the scenario, attempt) order.
  std::vector<const AttemptRecord*> attempts() const;
  const std::vector<TaskStats>& task_stats() const { return stats_; }
  const std::vector<Snapshot>& snapshots() const { return snaps_; }
  const std::vector<StateChange>& changes() const { return changes_; }
  const std::vector<NodeChange>& node_changes() const { return node_changes_; }
  /// Per-task metrics (scenario order), unfinished tasks censored at censor_time().
  std::vector<TaskMetrics> task_metrics() const;
  /// The libsched task of scenario task `ti` (its options and workers at placement).
  const libsched::TaskSpec& task_spec(std::size_t ti) const;
  /// Where unfinished tasks are censored: until_s when the run has one, else the last instant
  /// the simulation processed (>= makespan).
  Time censor_time() const { return until_ != libsched::kTimeNever ? until_ : std::max(run_end_, makespan_); }
  /// End of the simulation (ms): last attempt end, or until when the run was cut.
  Time makespan() const { return makespan_; }
  std::uint64_t events_processed() const { return events_; }
  int preemptions() const { return preemptions_; }
  std::uint64_t seed() const { return seed_; }
  /// The workload distribution used for fragmentation (worker shapes of the tasks' first options).
  const libsched::WorkloadDistribution& workload() const { return workload_; }

  /// Writes tasks.csv, summary.json, groups.csv, events.jsonl, timeseries.csv and metrics.prom into
  /// `dir` (which must exist), each with a checked write, fsync and close (throws
  /// sim::OutputError). Not atomic as a set; run_command stages and publishes them atomically.
  void write_outputs(const std::string& dir) const;
  /// The summary.json object as text (2-space indented).
  std::string summary_json() const;
  std::string tasks_csv() const;
  /// groups.csv: the per-group metrics of summary.json's `groups`, one row per (group_by, group).
  std::string groups_csv() const;
  /// A one-line warning when tasks are unfinished at the end of the run, else "".
  std::string unfinished_warning() const;

 private:
  struct TaskRun;
  void build();
  void handle(Time now, Event& ev);
  void instant_end(Time now);
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
  void release_debug(int ti, Time now);
  void autoscale(Time now);
  void take_snapshot(Time now);
  /// Closes task ti's current wait interval at `now` into its bucket and opens one with
  /// `code` (-1: not waiting).
  void set_wait(int ti, int code, Time now);
  void change(int ti, Time now, AttemptState from, AttemptState to, const std::string& reason);
  bool retriable(const std::string& kind) const;
  /// now + dt, or SimulationLimitError naming `path` (a task's key) when past kMaxSimTime.
  Time later(Time now, Time dt, int ti, const char* key, double value) const;
  [[noreturn]] void stuck_error(Time now, std::uint64_t n, const Event& last) const;
  std::string file_label() const;
  void cancel_attempt_events(int ti);

  io::Scenario sc_;
  SimOptions opt_;
  std::uint64_t seed_ = 1;
  Time until_ = libsched::kTimeNever;
  Time ts_limit_ = libsched::kTimeNever;  // latest time the time series can cover (kMaxTimeseriesRows)
  std::unique_ptr<libsched::Scheduler> sched_;
  EventQueue q_;
  std::vector<TaskRun> runs_;
  std::vector<TaskStats> stats_;
  std::vector<Snapshot> snaps_;
  std::vector<StateChange> changes_;
  std::vector<NodeChange> node_changes_;
  std::vector<std::int64_t> node_cpu_used_;  // per node: allocated milli-vCPU at the last snapshot
  std::int64_t cpu_alloc_ = 0;           // sum of node_cpu_used_
  Time run_end_ = 0;                     // last instant processed
  std::map<std::string, int> task_index_;
  std::vector<double> node_unhealthy_;   // per node
  std::vector<std::pair<double, double>> node_mtbf_;  // per node (mtbf_s, mttr_s)
  libsched::WorkloadDistribution workload_;
  std::vector<int> task_of_id_;          // libsched TaskId -> scenario task index
  std::size_t fixed_pending_ = 0;        // submissions, injected events, policy ticks not yet delivered
  EventHandle wake_handle_ = 0;          // the pending WakeEv (0: none)
  Time wake_at_ = -1;                    // its time
  std::vector<Time> policy_ticks_;       // sorted times of the PolicyTickEv events
  int live_tasks_ = 0;
  int active_ = 0;                       // attempts holding resources
  int preemptions_ = 0;
  std::uint64_t events_ = 0;
  Time makespan_ = 0;
  std::vector<std::int8_t> wait_code_;   // per task: current WaitCode while waiting, -1 otherwise
  std::vector<Time> wait_since_;         // per task: start of the current wait interval
  std::vector<int> autoscaled_;          // tasks with RayJob autoscaling, scenario order
  std::unique_ptr<libsched::FragmentationTracker> frag_;
  bool released_since_schedule_ = false;
  struct Rng;
  std::unique_ptr<Rng> rng_;
};

}  // namespace sim
