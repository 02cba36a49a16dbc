// `schedsim decide`: one scheduling decision on a snapshot, JSON in and JSON out, for schedulers
// written in other languages (docs/decide.md). The snapshot uses the scenario format's keys for
// the cluster, quotas, node policies, scheduler options and tasks (docs/scenario-format.md), plus
// `now_s`, `node_state` and each running task's `running` placement.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <libsched/registry.hpp>

#include "sim/io/diagnostics.hpp"

namespace sim {

/// What decide() answers: the decision (placements, preemptions, waiting tasks with their wait
/// status) when the snapshot is valid, else every problem found (`FILE: PATH: VALUE: RULE`).
/// Warnings may come with a decision.
struct DecideResult {
  std::optional<nlohmann::ordered_json> decision;
  std::vector<io::Diagnostic> diagnostics;
};

/// Reads snapshot `text` (`label` names it in diagnostics), adopts its running tasks, queues its
/// waiting tasks, calls libsched::Scheduler::schedule(now) once and explains every task still
/// waiting. Never throws on bad input. Output order is deterministic: placements and preemptions
/// in the order schedule() made them, waiting tasks in queue order. The snapshot's
/// `scheduler.placement` is looked up in `registry` (which must outlive the call).
DecideResult decide(std::string_view text, const std::string& label = "<stdin>",
                    const libsched::Registry& registry = libsched::Registry::builtin());

/// `schedsim decide`: reads the snapshot from `in` (at most 256 MiB), prints the decision as one
/// JSON document on `out` and diagnostics on `err`. Returns 0, or 2 for invalid input (nothing
/// printed on `out`), or 1 when `in` cannot be read.
int decide_command(std::istream& in, std::ostream& out, std::ostream& err,
                   const libsched::Registry& registry = libsched::Registry::builtin());

}  // namespace sim
