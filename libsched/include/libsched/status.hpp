// Why a task waits: a closed set of codes plus one human line with numbers
// (docs/architecture: kube-scheduler framework Status/Code). Diagnosis order and the meaning
// of every code: docs/scheduler.md "Why a task waits"; wait buckets: docs/outputs.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace libsched {

enum class WaitCode : std::uint8_t {
  fits_after_preemption,    ///< would start if the scheduler preempted (preemption disabled or pending)
  waits_for_capacity,       ///< the free capacity of its eligible nodes is too small now
  waits_for_fragmentation,  ///< enough free GPUs in total on eligible nodes, but no node fits a replica
  waits_for_quota,          ///< the whole task's demand exceeds the user's remaining quota
  blocked_by_node_policy,   ///< it would fit without its node policies (NodeNotIn / NodeIn)
  blocked_by_queue,         ///< strict / backfill: a task ahead holds the head of the queue
  never_fits,               ///< no node, or its quota, could ever host it, even with nothing running
  fits_now,                 ///< not waiting for anything: it would start at this instant
  waits_for_cpu_memory,     ///< the GPUs would fit, the free vCPU or memory of eligible nodes does not
  waits_for_idle_stability, ///< idle capacity would fit, but on nodes younger than its stability level
};

inline std::string_view to_string(WaitCode c) {
  switch (c) {
    case WaitCode::fits_after_preemption: return "fits_after_preemption";
    case WaitCode::waits_for_capacity: return "waits_for_capacity";
    case WaitCode::waits_for_fragmentation: return "waits_for_fragmentation";
    case WaitCode::waits_for_quota: return "waits_for_quota";
    case WaitCode::blocked_by_node_policy: return "blocked_by_node_policy";
    case WaitCode::blocked_by_queue: return "blocked_by_queue";
    case WaitCode::never_fits: return "never_fits";
    case WaitCode::fits_now: return "fits_now";
    case WaitCode::waits_for_cpu_memory: return "waits_for_cpu_memory";
    case WaitCode::waits_for_idle_stability: return "waits_for_idle_stability";
  }
  return "?";
}

/// The wait bucket a code is counted in (summary.json `wait_split_s`, docs/outputs.md):
/// `quota`, `capacity`, `cpu_memory`, `fragmentation`, `node_policy`, `idle_stability`,
/// `preemption`. `never_fits` alone counts as `capacity`; a WaitStatus counts in the bucket of
/// its primary() code, so a never_fits whose blocking list starts with waits_for_quota is `quota`.
inline std::string_view wait_bucket(WaitCode c) {
  switch (c) {
    case WaitCode::waits_for_quota: return "quota";
    case WaitCode::waits_for_cpu_memory: return "cpu_memory";
    case WaitCode::waits_for_fragmentation: return "fragmentation";
    case WaitCode::blocked_by_node_policy: return "node_policy";
    case WaitCode::waits_for_idle_stability: return "idle_stability";
    case WaitCode::fits_after_preemption: return "preemption";
    case WaitCode::waits_for_capacity:
    case WaitCode::blocked_by_queue:
    case WaitCode::never_fits:
    case WaitCode::fits_now:
      return "capacity";
  }
  return "capacity";
}

struct WaitStatus {
  WaitStatus() = default;
  WaitStatus(WaitCode c, std::string r, std::vector<WaitCode> b = {}) : code(c), reason(std::move(r)), blocking(std::move(b)) {}

  WaitCode code = WaitCode::waits_for_capacity;
  std::string reason;   ///< e.g. "needs 2 x 8 GPU on A100; largest free fragment 4 GPU"
  /// Every constraint that binds, primary first, as the codes that would report it alone
  /// (waits_for_quota, waits_for_capacity, waits_for_fragmentation, waits_for_cpu_memory,
  /// waits_for_idle_stability, blocked_by_node_policy, fits_after_preemption, blocked_by_queue).
  /// E.g. {waits_for_quota, waits_for_capacity} when the demand exceeds the remaining quota
  /// and would not fit the free capacity either. Empty for fits_now (and when unknown).
  /// Printed at the end of the reason as "[blocking: quota, capacity]" (bucket names) when it
  /// has more than one entry.
  std::vector<WaitCode> blocking;

  /// The code the wait is attributed to: the first blocking constraint, else `code`.
  WaitCode primary() const { return blocking.empty() ? code : blocking.front(); }
};

}  // namespace libsched
