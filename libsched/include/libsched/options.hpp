// Scheduler configuration (docs/scenario-format.md "scheduler"; plugin names: docs/architecture.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

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
  bool idle_reclaim = true;         ///< non-idle, non-spot tasks may preempt lower-priority tasks running on idle capacity
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
  /// Queue thresholds of the `las` queue order in GPU-seconds of attained service, > 0 and
  /// increasing: k thresholds make k + 1 queues (docs/scheduler.md "Research queue orders").
  std::vector<double> las_thresholds_gpu_s{3600};
  /// The `las` order's starvation guard (ms; 0 = off): a task of a later queue waiting this long
  /// since its enqueue is promoted to the first queue (docs/scheduler.md "Research queue orders").
  Time las_starvation = 0;
  /// The service distribution of the `gittins` order: samples in GPU-seconds (each >= 0);
  /// empty: every Gittins index equal.
  std::vector<double> service_gpu_s;
  /// The `qssf` order's predicted duration (ms) of a task without estimate or user history.
  Time qssf_default = 3600 * kMsPerSecond;
  /// Tenant shares of the `fair` queue order (each finite and > 0; a tenant not listed has
  /// share 1), docs/scheduler.md "Research queue orders".
  std::map<std::string, double, std::less<>> fair_shares;
  /// Score every feasible node of every placement instead of using the free-capacity index or
  /// the policy's node groups (placement/pick.hpp). Same decisions, O(N) per replica: the
  /// reference the fast paths are tested against. Not a scenario key.
  bool full_scan_placement = false;
  /// Debug knob, not a scenario key: false makes every queue pass try each waiting task's
  /// placement in full (the straightforward scan). True (default) skips, with the same
  /// decisions, work whose outcome is known: a gang larger than the free capacity summed over
  /// its eligible nodes (Session::may_fit), reservation walks (computed only when needed,
  /// memoised until the state changes, and skipped by may_jump when a candidate ends by the
  /// reservation or the head cannot fit by then), and preemption searches that cannot succeed
  /// (actions/preempt.hpp may_help) or need only the first victims in order. The property test in
  /// tests/core/property_test.cpp checks that both give the same decisions and wait codes.
  bool fast_paths = true;
  /// Debug knob, not a scenario key (needs fast_paths): under greedy queueing, waiting tasks
  /// with equal request signatures (Session::signature) form one request class, and a full
  /// pass visits classes, not tasks: it tries a class's members in queue order until one
  /// fails, then skips the rest of the class (what the per-pass signature memo did one task at
  /// a time), so a pass costs O(classes + starts), not O(waiting tasks). Off only when a node
  /// policy or an ageing (idle stability) task makes signatures depend on time. Under backfill
  /// queueing too, while no running task has a known expected end (no head has a reservation,
  /// nothing is held: actions::allocate_by_class). Same decisions and wait codes
  /// (tests/core/property_test.cpp compares on and off).
  bool request_classes = true;
};

}  // namespace libsched
