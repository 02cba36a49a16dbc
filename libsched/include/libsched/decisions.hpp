// What the scheduler decides: placements (started gangs) and preemptions, as returned by
// Scheduler::schedule() (docs/scheduler.md).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "libsched/cluster.hpp"
#include "libsched/quota.hpp"
#include "libsched/task.hpp"

namespace libsched {

enum class PreemptionKind : std::uint8_t { priority, idle_reclaim, spot_eviction };
inline std::string_view to_string(PreemptionKind k) {
  switch (k) {
    case PreemptionKind::priority: return "priority";
    case PreemptionKind::idle_reclaim: return "idle_reclaim";
    case PreemptionKind::spot_eviction: return "spot_eviction";
  }
  return "?";
}

/// A started gang. replicas[0] is the master/head, then the workers in order.
struct Placement {
  TaskId task;
  std::size_t option = 0;               ///< index into TaskSpec::options
  ResourceType capacity = ResourceType::reserved;  ///< class it runs on (idle for an accept_idle fallback)
  std::vector<ReplicaAllocation> replicas;
  Time start = 0;
  QuotaKey quota_key;
  Resources quota_held;
};

/// Where one replica of an adopted task runs (Scheduler::adopt_task): its node and, for a GPU
/// replica, exactly which GPUs (bit i = GPU i of the node; 0 = let the node choose as a
/// placement would).
struct ReplicaAssignment {
  NodeId node;
  std::uint64_t gpu_mask = 0;
};

/// A running attempt as another scheduler (or an earlier run of this one) placed it
/// (Scheduler::adopt_task).
struct Adoption {
  std::size_t option = 0;                          ///< index into TaskSpec::options
  ResourceType capacity = ResourceType::reserved;  ///< class it runs on (one of the task's classes)
  std::vector<ReplicaAssignment> replicas;         ///< master/head first, then the workers
  Time start = 0;                                  ///< when the attempt started (ms)
};

struct Preemption {
  TaskId victim;
  TaskId preemptor;
  PreemptionKind kind = PreemptionKind::priority;
};

/// What one schedule() call did, in the order it happened. Victims are already released;
/// placed tasks are already running.
struct ScheduleResult {
  std::vector<Preemption> preemptions;
  std::vector<TaskId> started;
  bool empty() const { return preemptions.empty() && started.empty(); }
};

}  // namespace libsched
