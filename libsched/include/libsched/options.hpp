// Scheduler configuration (docs/scenario-format.md "scheduler"; plugin names: docs/architecture.md).
#pragma once

#include <cstdint>
#include <string>

#include "libsched/fragmentation.hpp"
#include "libsched/resources.hpp"

namespace libsched {

/// `scheduler.queueing` (docs/scenario-format.md "scheduler").
enum class Queueing : std::uint8_t {
  greedy,    ///< every waiting task, in queue order, starts if it fits now
  strict,    ///< the first waiting task that cannot start blocks every task behind it
  backfill,  ///< greedy, but a later task starts only if it does not delay the head's reservation
};

struct SchedulerOptions {
  std::string placement = "best-fit";
  bool preemption = true;           ///< priority preemption of lower-priority, non-guaranteed tasks
  bool idle_reclaim = true;         ///< non-idle tasks may preempt tasks running on idle capacity
  bool spot_eviction = true;        ///< non-spot tasks may evict spot tasks
  Queueing queueing = Queueing::greedy;
  Time idle_stability_high = 3600 * kMsPerSecond;    ///< fragment age offered at `high`
  Time idle_stability_medium = 600 * kMsPerSecond;   ///< fragment age offered at `medium`
  std::uint64_t seed = 1;
  WorkloadDistribution workload;    ///< for fgd
  /// Plugin names, looked up in the Registry given to the Scheduler (docs/architecture.md).
  std::string queue_order = "priority-fifo";     ///< order of the waiting queue
  std::string victim_order = "idle-spot-first";  ///< order in which preemption tries victims
  std::string admission = "quota";               ///< may a gang's whole demand start now
  /// Debug knob, not a scenario key: false makes every queue pass try each waiting task's
  /// placement in full (the straightforward scan). True (default) skips, with the same
  /// decisions, trials that cannot succeed: a gang larger than the free capacity summed over
  /// its eligible nodes (Session::may_fit), a backfill candidate that ends by the head's
  /// reservation (actions::may_jump), and the tasks behind an unchanged strict head. The
  /// property test (tests/core/fast_paths_test.cpp) checks that both give the same outputs.
  bool fast_paths = true;
};

}  // namespace libsched
