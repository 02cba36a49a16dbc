// The queue order extension point (Volcano's job order plugins): where a waiting task stands
// in the queue that schedule() passes over (docs/architecture.md "Plugins").
#pragma once

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

}  // namespace plugins
}  // namespace libsched
