// sim::EndReason: why an attempt ended, as the `end_reason` column of tasks.csv prints it.
// The ONE definition of that vocabulary (docs/outputs.md "end_reason" lists the same codes):
// add a code here, in k_end_reasons and in the docs, never elsewhere.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace sim {

enum class EndReason : std::uint8_t {
  never_started,       ///< the attempt was still queued when the run ended (state Queued)
  succeeded,           ///< the entrypoint finished (state Succeeded, debug hold included)
  preempted,           ///< evicted by a higher-priority task (preemption kind `priority`)
  spot_eviction,       ///< spot capacity taken back (scheduler eviction or spot_reclaim event)
  idle_reclaim,        ///< idle capacity reclaimed by its owner
  node_failure,        ///< a node of the gang went down (injected node_down or mtbf model)
  precheck_failure,    ///< resource precheck found an unhealthy node
  image_pull_failure,  ///< image pull circuit breaker tripped
  transient_failure,   ///< transient error (injected `transient` task_fault or stochastic rate)
  image_unavailable,   ///< deterministic errors (injected task_fault), never retried
  bad_command,
  invalid_data_path,
  gpu_oom,
  stopped,             ///< stopped by the user (reserved: no scenario event stops a task yet)
  run_end,             ///< still holding resources when the run was cut at until_s (state Stopped)
};

inline constexpr std::array<std::string_view, 15> k_end_reasons = {
    "never_started",   "succeeded",         "preempted",   "spot_eviction", "idle_reclaim",
    "node_failure",    "precheck_failure",  "image_pull_failure", "transient_failure", "image_unavailable",
    "bad_command",     "invalid_data_path", "gpu_oom",     "stopped",       "run_end"};

constexpr std::string_view to_string(EndReason r) { return k_end_reasons[std::size_t(r)]; }

/// The end reason of a failure of kind `kind` (the simulator's retry kinds and task_fault
/// errors: transient, node_failure, preemption, spot_eviction, idle_reclaim, precheck_failure,
/// image_pull_failure, image_unavailable, bad_command, invalid_data_path, gpu_oom).
constexpr EndReason end_reason_of_failure(std::string_view kind) {
  if (kind == "preemption") return EndReason::preempted;
  if (kind == "transient") return EndReason::transient_failure;
  for (std::size_t i = 0; i < k_end_reasons.size(); ++i)
    if (k_end_reasons[i] == kind) return EndReason(i);
  return EndReason::transient_failure;  // unknown kinds are treated as transient
}

}  // namespace sim
