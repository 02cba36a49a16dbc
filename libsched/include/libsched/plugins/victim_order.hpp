// The victim order extension point (Volcano's preemptable / task order plugins): in which
// order preemption tries the running tasks a waiting gang may preempt (docs/scheduler.md
// "Preemption"; docs/architecture.md "Plugins").
#pragma once

#include <string_view>

#include "libsched/decisions.hpp"
#include "libsched/plugins/rank.hpp"
#include "libsched/task.hpp"

namespace libsched {

/// A running task that may be preempted for the waiting gang (the preemption rules of
/// docs/scheduler.md have already admitted it; the order only chooses among candidates).
struct VictimCandidate {
  TaskId id;
  const TaskSpec& task;
  ResourceType capacity;   ///< the class it runs on
  Time start;              ///< when its current attempt started (ms)
  Time work_lost;          ///< ms of work since its last checkpoint, lost if preempted now
  PreemptionKind kind;     ///< what preempting it would be
};

/// Orders the candidates of one preemption attempt. Preemption takes the shortest prefix of
/// this order that lets the whole gang start, then drops every victim the gang does not need
/// (the set is minimal; actions/preempt.hpp), so the order decides WHICH tasks are preempted.
class VictimOrder {
 public:
  virtual ~VictimOrder() = default;
  virtual std::string_view name() const = 0;
  /// Smaller is tried first; ties by TaskSpec::sequence, then task id.
  virtual Rank rank(const VictimCandidate& c) const = 0;
};

namespace plugins {

/// "idle-spot-first" (the default): tasks on idle capacity, then on spot, then the others;
/// within each, lowest priority first; then least work lost since the last checkpoint (then
/// TaskSpec::sequence, then id). Rank = (idle 0 / spot 1 / other 2, priority, work_lost).
class IdleSpotFirst final : public VictimOrder {
 public:
  std::string_view name() const override { return "idle-spot-first"; }
  Rank rank(const VictimCandidate& c) const override { return of(c.capacity, c.task.priority, c.work_lost); }
  /// The rank itself (the scheduler calls this directly when it runs the builtin order).
  static Rank of(ResourceType capacity, std::int32_t priority, Time work_lost) {
    std::int64_t cls = capacity == ResourceType::idle ? 0 : capacity == ResourceType::spot ? 1 : 2;
    return {cls, priority, work_lost};
  }
};

}  // namespace plugins
}  // namespace libsched
