// The queue order extension point (Volcano's job order plugins): where a waiting task stands
// in the queue that schedule() passes over (docs/architecture.md "Plugins").
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "libsched/plugins/rank.hpp"
#include "libsched/task.hpp"

namespace libsched {

/// Orders the waiting queue. The scheduler calls rank() once when a task is enqueued and keeps
/// the queue sorted by (rank, task name, task id) from then on, so rank() must depend on the
/// task alone (its spec and id), never on time or on the cluster; a task's spec does not change
/// while it waits (Scheduler::mutable_task refuses).
class QueueOrder {
 public:
  virtual ~QueueOrder() = default;
  virtual std::string_view name() const = 0;
  /// Smaller goes first; ties by task name, then id.
  virtual Rank rank(const TaskSpec& task, TaskId id) const = 0;
  /// Does this order preempt by itself (srtf)? Then the scheduler asks preempts() for every
  /// running task of the preemptor's priority that the platform rules would not already let it
  /// preempt, and turns off the merging of equal requests (they may differ in what they can
  /// preempt). Default: false (the order only sorts the queue).
  virtual bool preemptive() const { return false; }
  /// Order-driven preemption (only asked when preemptive()): may waiting `preemptor` evict
  /// running `victim`, whose current attempt started at `victim_start` (ms), at `now` (ms)?
  /// Must never let two tasks evict each other (a task that evicts another must rank ahead of
  /// it for as long as either waits). Default: no.
  virtual bool preempts(const TaskSpec& /*preemptor*/, const TaskSpec& /*victim*/, Time /*victim_start*/, Time /*now*/) const {
    return false;
  }
};

namespace plugins {

/// "priority-fifo" (the default): tasks on idle capacity last, then priority descending, then
/// submit time ascending (then name, id). Rank = (idle ? 1 : 0, -priority, submit).
class PriorityFifo final : public QueueOrder {
 public:
  std::string_view name() const override { return "priority-fifo"; }
  Rank rank(const TaskSpec& s, TaskId) const override { return of(s); }
  /// The rank itself (the scheduler calls this directly when it runs the builtin order).
  static Rank of(const TaskSpec& s) { return {s.is_idle() ? 1 : 0, -std::int64_t(s.priority), s.submit}; }
};

/// "sjf", "srtf", "sjf-estimate", "srtf-estimate" (docs/scheduler.md "Research queue
/// orders"): shortest job / shortest remaining time first. The time is the task's true
/// remaining run time at enqueue (TaskSpec::true_remaining, the oracle) or the user's estimate
/// (TaskSpec::runtime_estimate); a task without one goes after every task with one, in submit
/// order. Priority still dominates and idle tasks stay last: Rank = (100 x idle - priority,
/// time or max, submit). The `srtf` variants preempt (preempts()).
class ShortestFirst final : public QueueOrder {
 public:
  enum class Source : std::uint8_t { oracle, estimate };
  ShortestFirst(Source source, bool preemptive) : source_(source), preemptive_(preemptive) {}
  std::string_view name() const override {
    if (source_ == Source::oracle) return preemptive_ ? "srtf" : "sjf";
    return preemptive_ ? "srtf-estimate" : "sjf-estimate";
  }
  /// The remaining time (ms) the order reads for `s`, -1 when it has none.
  Time time_of(const TaskSpec& s) const { return source_ == Source::oracle ? s.true_remaining : s.runtime_estimate; }
  Rank rank(const TaskSpec& s, TaskId) const override {
    const Time t = time_of(s);
    return {(s.is_idle() ? 100 : 0) - std::int64_t(s.priority), t >= 0 ? t : std::numeric_limits<std::int64_t>::max(), s.submit};
  }
  bool preemptive() const override { return preemptive_; }
  /// srtf: the victim's remaining time now (its time at enqueue less the time since its attempt
  /// started; none counts as longer than any) exceeds the preemptor's, which must have one.
  bool preempts(const TaskSpec& p, const TaskSpec& v, Time victim_start, Time now) const override {
    if (!preemptive_) return false;
    const Time tp = time_of(p), tv = time_of(v);
    if (tp < 0) return false;
    return tv < 0 || tv - (now - victim_start) > tp;
  }

 private:
  Source source_;
  bool preemptive_;
};

}  // namespace plugins
}  // namespace libsched
