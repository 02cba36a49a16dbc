// Why a task waits: a closed set of codes plus one human line with numbers
// (docs/architecture: kube-scheduler framework Status/Code).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace libsched {

enum class WaitCode : std::uint8_t {
  fits_after_preemption,   ///< would start if the scheduler preempted (preemption disabled or pending)
  waits_for_capacity,      ///< enough capacity exists in the cluster but is busy now
  waits_for_fragmentation, ///< enough free GPUs in total, but no node fits a replica
  waits_for_quota,         ///< the whole task's demand exceeds the user's remaining quota
  blocked_by_node_policy,  ///< it would fit without a NodeNotIn block
  blocked_by_queue,        ///< strict / backfill: a task ahead holds the head of the queue
  never_fits,              ///< no node (or quota) could ever host it, even on an empty cluster
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
  }
  return "?";
}

struct WaitStatus {
  WaitCode code = WaitCode::waits_for_capacity;
  std::string reason;   ///< e.g. "needs 2 x 8 GPU on A100; largest free fragment 4 GPU"
};

}  // namespace libsched
