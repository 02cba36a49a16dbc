// What the scheduler knows about a task: its gang shape, capacity class, priority, quota
// owner and the user's runtime estimate (never the actual runtime). docs/platform.md
// "Task shapes", "Resource types", "Priority, guarantee, resource priority".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libsched/cluster.hpp"
#include "libsched/ids.hpp"
#include "libsched/resources.hpp"

namespace libsched {

enum class TaskType : std::uint8_t { pytorch_job, ray_job };
/// Capacity class (resource type). Order matters nowhere; see victim_class_rank in preemption.
enum class ResourceType : std::uint8_t { reserved, pay_as_you_go, spot, idle };
/// Idle stability level: which idle fragments a task accepts (docs/platform.md "Idle stability").
enum class IdleStability : std::uint8_t { high, medium, low };

std::string_view to_string(TaskType t);
std::string_view to_string(ResourceType t);

/// One way to run the gang: the shape of the master/head replica and of each worker.
/// A task's `options` are its candidate instance specs in resource-priority order
/// (first tried first); every replica of one attempt uses the same option.
struct GangOption {
  std::string label;        ///< spec name shown in outputs (e.g. "a100.8x"), "" for inline shapes
  ReplicaShape head;        ///< PyTorchJob master (= worker shape) or RayJob head
  ReplicaShape worker;
};

/// A task's relative speed on one GPU model (throughput matrix, Gavel, OSDI'20): work advances
/// `speed` times as fast as on the reference (speed 1.0). Read by the `fastest-model` placement.
struct GpuSpeed {
  std::string model;  ///< GPU model name (Cluster::models())
  double speed = 1;   ///< > 0, finite
  bool operator==(const GpuSpeed&) const = default;
};

/// The scheduler's view of a task. Priority 1..9 (higher first); idle tasks carry priority 0
/// internally (they have none: docs/platform.md forbids setting it).
struct TaskSpec {
  std::string name;
  std::string user;
  std::string tenant = "default";
  TaskType type = TaskType::pytorch_job;
  ResourceType resource_type = ResourceType::reserved;
  PoolId pool;                       ///< required for reserved; invalid = any eligible pool
  std::int32_t priority = 5;
  bool guarantee = false;
  bool accept_idle = false;          ///< reserved only: may fall back to idle capacity
  bool prefer_idle = false;          ///< reserved only: try idle capacity first
  IdleStability idle_stability = IdleStability::low;
  std::int32_t workers = 0;          ///< gang = 1 master/head + workers
  std::vector<GangOption> options;   ///< non-empty
  Time submit = 0;                   ///< original submit time (orders the queue across resubmissions)
  /// Tie-break between equal ranks: the embedder's submission order (e.g. its own task index).
  /// Every order that would otherwise fall back to the task id (queue order after rank and
  /// name, victim order after rank, the lists of visited waiting tasks, tasks on a node,
  /// request class members) compares (sequence, id), so decisions do not depend on how ids are
  /// handed out (forget_task reuses them). Default 0 for every task = by task id. Read when
  /// the task is enqueued, a victim candidate or listed; not changeable while it waits.
  std::uint64_t sequence = 0;
  Time runtime_estimate = -1;        ///< user's estimate of the remaining run time; -1 unknown
  /// The true remaining run time at enqueue (ms), -1 unknown. Read only by the oracle queue
  /// orders `sjf` / `srtf` (plugins/queue_order.hpp); a simulator fills it, a real scheduler
  /// leaves it unknown.
  Time true_remaining = -1;
  /// Attained service: GPUs x seconds of the task's ended attempts. Maintained by the Scheduler
  /// (every release adds the attempt's milli-GPU / 1000 x its length); read by the `las` order.
  double attained_gpu_s = 0;
  Time checkpoint_interval = 0;      ///< 0: no checkpoints
  std::vector<std::string> selected_policies;  ///< names of `explicit` node policies it selects
  /// Relative speed per GPU model (models not listed: 1.0); empty = the same on every model.
  std::vector<GpuSpeed> gpu_speed;

  std::int32_t replicas() const { return 1 + workers; }
  bool is_idle() const { return resource_type == ResourceType::idle; }
  /// Relative speed on GPU model `model` (gpu_speed's entry, else 1.0; CPU-only: pass "").
  double speed_on(std::string_view model) const {
    for (const auto& g : gpu_speed)
      if (g.model == model) return g.speed;
    return 1.0;
  }
  /// Whole-gang demand of option `i` (what quota is checked against).
  Resources demand(std::size_t i) const {
    return options[i].head.resources() + options[i].worker.resources() * workers;
  }
};

inline std::string_view to_string(TaskType t) { return t == TaskType::pytorch_job ? "PyTorchJob" : "RayJob"; }
inline std::string_view to_string(ResourceType t) {
  switch (t) {
    case ResourceType::reserved: return "reserved";
    case ResourceType::pay_as_you_go: return "pay_as_you_go";
    case ResourceType::spot: return "spot";
    case ResourceType::idle: return "idle";
  }
  return "?";
}

}  // namespace libsched
