// sim::Metrics: what the simulator measures while it runs (docs/outputs.md): per-task wait
// accounting by wait bucket, the cluster time series (one Snapshot per change instant) and the
// state-change log behind events.jsonl. The simulator reports facts to it (a task started
// waiting with code c, an attempt changed state, the instant ended); outputs.cpp formats them.
// Per-task metrics (JCT, slowdown, censoring) are derived at the end (Simulator::task_metrics).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <libsched/libsched.hpp>

#include "sim/engine/event_queue.hpp"
#include "sim/engine/snapshot_log.hpp"
#include "sim/engine/utilization_sums.hpp"

namespace sim {

/// State of an attempt (as printed in tasks.csv and events.jsonl).
enum class AttemptState : std::uint8_t { queued, prechecking, running, debug_holding, succeeded, failed, stopped };
std::string_view to_string(AttemptState s);

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
  int preemptions = 0;            ///< attempts ended as a preemption victim (priority, idle reclaim, spot eviction)
  bool finished = false;          ///< reached a final state (Succeeded or Failed)
  bool succeeded = false;
  Time end = -1;                  ///< final end
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
  double cost = 0;                ///< currency its attempts paid per use (Simulator::billed_cost)
  // Group keys, views into the Simulator that made them (valid while it lives):
  std::string_view pool;          ///< task pool or the pool it ran in
  std::string_view gpu_model;     ///< model it ran on, else its first candidate's, "cpu" for CPU-only
  std::string_view capacity;      ///< class of the last started attempt, else the requested resource_type
};

/// A node state change (events.jsonl): node_down / node_up, injected or stochastic; or a
/// cordon after a failed precheck (node_cordoned until `until`, node_uncordoned).
struct NodeChange {
  enum Kind : std::uint8_t { state, cordoned, uncordoned };
  Time time = 0;
  std::size_t seq = 0;            ///< index in changes() of the first task change after it
  std::string node;
  bool up = false;                ///< (Kind state)
  bool stochastic = false;        ///< (Kind state)
  Kind kind = state;
  Time until = -1;                ///< (Kind cordoned) end of the cordon, ms
};

/// One state change (events.jsonl): 24 bytes, the states as enums and the reason as an id
/// into Metrics::reason() (a run with a million tasks records about three million changes).
struct StateChange {
  Time time = 0;                  ///< ms
  int task = 0;                   ///< index in Scenario::tasks
  int attempt = 0;                ///< 1-based attempt number
  std::uint32_t reason = 0;       ///< interned reason (Metrics::reason), 0 = none ("")
  AttemptState from = AttemptState::queued;  ///< meaningless when `initial`
  AttemptState to = AttemptState::queued;
  bool initial = false;           ///< the attempt entered the queue: events.jsonl prints `from` as ""
};

/// DeltaLog codec of StateChange (about 7 bytes instead of 24): the states and the initial
/// flag in one byte, then the time and task as differences from the previous change, the
/// attempt and the reason id (sim/delta_log.hpp).
struct StateChangeCodec {
  static_assert(int(AttemptState::stopped) < 8, "a state takes 3 bits");
  static constexpr std::size_t kMaxBytes = 1 + 4 * 10;
  static std::uint8_t* encode(std::uint8_t* p, const StateChange& prev, const StateChange& c) {
    *p++ = std::uint8_t(int(c.from) | int(c.to) << 3 | (c.initial ? 1 << 6 : 0));
    p = varint::put_delta(p, prev.time, c.time);
    p = varint::put_delta(p, prev.task, c.task);
    p = varint::put_delta(p, 0, c.attempt);
    return varint::put(p, c.reason);
  }
  static const std::uint8_t* decode(const std::uint8_t* p, StateChange& c) {
    const std::uint8_t b = *p++;
    c.from = AttemptState(b & 7);
    c.to = AttemptState(b >> 3 & 7);
    c.initial = (b >> 6 & 1) != 0;
    std::int64_t v;
    p = varint::get_delta(p, c.time, c.time);
    p = varint::get_delta(p, c.task, v);
    c.task = int(v);
    p = varint::get_delta(p, 0, v);
    c.attempt = int(v);
    std::uint64_t r;
    p = varint::get(p, r);
    c.reason = std::uint32_t(r);
    return p;
  }
};
/// The state-change log behind events.jsonl (DeltaLog: in-order iteration, indexing O(64)).
using ChangeLog = DeltaLog<StateChange, StateChangeCodec>;

/// The measurements of one run. Not thread-safe; one per Simulator.
class Metrics {
 public:
  /// Starts the time series at t = 0 with the cluster as it is (nothing allocated) and the
  /// fragmentation of its nodes against `workload`; `tasks` = scenario tasks. The utilization
  /// sums cover the measurement window [window_lo, window_hi) (ms). `keep_snapshots` false: no
  /// time series and no fragmentation (snapshots() stays empty; SimOptions::keep_snapshots).
  Metrics(const libsched::Cluster& cl, const libsched::WorkloadDistribution& workload, std::size_t tasks,
          bool keep_snapshots, libsched::Time window_lo, libsched::Time window_hi);
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  /// Closes task `ti`'s current wait interval at `now` into the bucket of its code and opens
  /// one with `code` (a libsched::WaitCode, or -1: not waiting). Every queued millisecond
  /// lands in exactly one bucket. O(1).
  void set_wait(std::size_t ti, int code, libsched::Time now);
  bool waiting(std::size_t ti) const { return wait_code_[ti] >= 0; }
  /// End of the run: closes every open wait interval at `end` and frees the per-task wait
  /// clocks (set_wait and waiting must not be called afterwards).
  void close_waits(libsched::Time end);

  /// Takes the snapshot of instant `now` after scheduling: allocated GPUs per capacity class,
  /// up capacity, allocated vCPU, queue length, running tasks and fragmentation.
  /// O(1), and the fragmentation O(nodes changed since the last snapshot)
  /// (Scheduler::take_changed_nodes; not taken without a time series). A second
  /// snapshot at the same instant replaces the first. `makespan_bound`: the run's makespan is
  /// known to be at least this (ms; non-decreasing over the calls).
  void snapshot(libsched::Time now, libsched::Scheduler& s, libsched::Time makespan_bound);
  /// Allocated and available GPU- and vCPU-time over the window's part of [0, makespan)
  /// (makespan at least every bound given to snapshot()), summed as the snapshots were taken.
  detail::UtilizationSums utilization(libsched::Time makespan) const { return util_.sums(makespan); }

  /// Event log: an attempt's state change (the reason is interned: each distinct text is
  /// stored once) / a node going down or up.
  void record(Time now, int task, int attempt, AttemptState from, AttemptState to, bool initial, const std::string& reason) {
    changes_.push(StateChange{now, task, attempt, intern(reason), from, to, initial});
  }
  /// `reason` interned: a view of the one stored copy of its text (valid while this lives).
  std::string_view interned(const std::string& reason) { return reasons_[intern(reason)]; }
  /// The text of an interned reason id ("" for 0).
  const std::string& reason(std::uint32_t id) const { return reasons_[id]; }
  void record_node(libsched::Time now, std::string node, bool up, bool stochastic) {
    node_changes_.push_back(NodeChange{now, changes_.size(), std::move(node), up, stochastic});
  }

  TaskStats& stats(std::size_t ti) { return stats_[ti]; }
  const std::vector<TaskStats>& task_stats() const { return stats_; }
  const SnapshotLog& snapshots() const { return snaps_; }
  const ChangeLog& changes() const { return changes_; }
  /// Node `node` cordoned at `now` until `until` (ms) after a failed precheck (`on`), or
  /// the cordon ended (`!on`).
  void record_cordon(libsched::Time now, std::string node, bool on, libsched::Time until) {
    NodeChange c{now, changes_.size(), std::move(node), false, false, on ? NodeChange::cordoned : NodeChange::uncordoned, until};
    node_changes_.push_back(std::move(c));
  }
  const std::vector<NodeChange>& node_changes() const { return node_changes_; }

 private:
  std::vector<TaskStats> stats_;
  // Delta-encoded (a million-task run records millions of each): about 20 bytes per instant
  // and 7 per state change instead of 88 and 24.
  SnapshotLog snaps_;
  bool keep_snapshots_;
  detail::UtilizationAccumulator util_;
  ChangeLog changes_;
  std::uint32_t intern(const std::string& reason);
  std::deque<std::string> reasons_{std::string()};                  // id -> text; 0 = "" (stable addresses)
  std::unordered_map<std::string_view, std::uint32_t> reason_ids_;  // text -> id (lookups only, never iterated)
  std::vector<NodeChange> node_changes_;
  std::vector<std::int8_t> wait_code_;        // per task: current WaitCode while waiting, -1 otherwise
  std::vector<libsched::Time> wait_since_;    // per task: start of the current wait interval
  std::unique_ptr<libsched::FragmentationTracker> frag_;
  std::vector<libsched::NodeId> changed_;  ///< snapshot() scratch: the nodes changed since the last one
};

}  // namespace sim
