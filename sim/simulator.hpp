// sim::Simulator: the discrete-event simulator. Owns time (an EventQueue), the workload's
// ground truth (true durations, injected and stochastic faults), the task lifecycle and the
// metrics; asks libsched::Scheduler for every decision.
//
// Lifecycle of one attempt (every attempt is recorded):
//   Queued -> [Prechecking] -> Running -> Succeeded | Failed | Stopped
//   RayJob debug mode: Running -> DebugHolding -> Succeeded.
// Timing rules (scenario-contract.md "Default timing semantics", docs/outputs.md):
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

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <libsched/libsched.hpp>

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
  Time work_done = 0;             ///< entrypoint work executed in this attempt
  Time lost_work = 0;             ///< work executed but not saved by a checkpoint
  Time work_needed = 0;           ///< work this attempt had to do (duration minus saved)
};

/// Per-task aggregates, in ms.
struct TaskStats {
  Time wait_quota = 0;            ///< waiting with WaitCode waits_for_quota or never_fits by quota
  Time wait_capacity = 0;         ///< waits_for_capacity, blocked_by_queue, never_fits
  Time wait_fragmentation = 0;    ///< waits_for_fragmentation
  Time wait_node_policy = 0;      ///< blocked_by_node_policy
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
  std::size_t queue = 0;                          ///< waiting tasks
  std::size_t running = 0;                        ///< tasks holding resources
  double frag_milli = 0;                          ///< cluster_fragmentation (milli-GPU)
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
};

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
  void run();

  const io::Scenario& scenario() const { return sc_; }
  const libsched::Scheduler& scheduler() const { return *sched_; }
  /// All attempts in (task order of the scenario, attempt) order.
  std::vector<const AttemptRecord*> attempts() const;
  const std::vector<TaskStats>& task_stats() const { return stats_; }
  const std::vector<Snapshot>& snapshots() const { return snaps_; }
  const std::vector<StateChange>& changes() const { return changes_; }
  /// End of the simulation (ms): last attempt end, or until when the run was cut.
  Time makespan() const { return makespan_; }
  std::uint64_t events_processed() const { return events_; }
  int preemptions() const { return preemptions_; }
  std::uint64_t seed() const { return seed_; }
  /// The workload distribution used for fragmentation (worker shapes of the tasks' first options).
  const libsched::WorkloadDistribution& workload() const { return workload_; }

  /// Writes tasks.csv, summary.json, events.jsonl, timeseries.csv and metrics.prom into
  /// `dir` (which must exist). Not atomic; run_command makes it atomic.
  void write_outputs(const std::string& dir) const;
  /// The summary.json object as text (2-space indented).
  std::string summary_json() const;
  std::string tasks_csv() const;

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
  void cancel_attempt_events(int ti);

  io::Scenario sc_;
  SimOptions opt_;
  std::uint64_t seed_ = 1;
  Time until_ = libsched::kTimeNever;
  std::unique_ptr<libsched::Scheduler> sched_;
  EventQueue q_;
  std::vector<TaskRun> runs_;
  std::vector<TaskStats> stats_;
  std::vector<Snapshot> snaps_;
  std::vector<StateChange> changes_;
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
