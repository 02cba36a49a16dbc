// An external scheduler over time (schedsim run --scheduler-cmd, docs/external-scheduler.md):
// at every scheduling instant the simulator sends the `decide` snapshot of its state as one JSON
// line and applies the answer (placements, preemptions) through libsched's checks
// (Scheduler::preempt_for, Scheduler::start_at) instead of calling Scheduler::schedule().
// This header is the engine's side: the interface it talks to and the error it raises. The
// process behind the interface is sim/engine/scheduler_process.hpp.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/engine/simulator.hpp"

namespace sim {

/// The other side of the protocol: one line in, one line out per scheduling instant.
class ExternalScheduler {
 public:
  virtual ~ExternalScheduler() = default;
  /// Sends `line` (one JSON document, no newline; a newline is added) and returns the answer line
  /// without its newline. Throws ExternalSchedulerError with the rule broken (no answer in time,
  /// the scheduler exited, an answer line too long); the caller names the instant.
  virtual std::string exchange(const std::string& line) = 0;
};

/// A scheduler that broke the protocol, or an answer that breaks a rule: exit 2 like any bad
/// input. what() is one line `--scheduler-cmd: t=T s: WHAT: RULE` once the simulator named the
/// instant (an ExternalScheduler throws it with the rule alone).
struct ExternalSchedulerError : SimulationLimitError {
  using SimulationLimitError::SimulationLimitError;
};

/// What the simulator keeps for the protocol (Simulator::ext_), built at the first exchange.
struct ExternalRun {
  std::string head;                    ///< the snapshot's constant keys: `{"schema":...,"cluster":...,"scheduler":...`
  std::vector<std::string> task_text;  ///< per scenario task: its JSON without `duration_s` and the closing brace ("" = not yet)
  std::unordered_map<std::string, int> task_of_name;  ///< task name -> scenario task index
  std::uint64_t rounds = 0;            ///< exchanges made
};

}  // namespace sim
