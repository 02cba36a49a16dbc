// `schedsim decide`: one scheduling decision on a snapshot, JSON in and JSON out, for schedulers
// written in other languages (docs/decide.md). The snapshot uses the scenario format's keys for
// the cluster, quotas, node policies, scheduler options and tasks (docs/scenario-format.md), plus
// `now_s`, `node_state` and each running task's `running` placement.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <libsched/registry.hpp>
#include <libsched/scheduler.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario.hpp"

namespace sim {

namespace decide_detail {
struct SnapshotParts;
}

/// A valid decide snapshot (docs/decide.md), as read_snapshot() reads it; shared by `decide`
/// and `forecast`. Task i of `scenario` gets TaskId i in snapshot_scheduler().
struct DecideSnapshot {
  DecideSnapshot();
  ~DecideSnapshot();
  DecideSnapshot(const DecideSnapshot&) = delete;
  DecideSnapshot& operator=(const DecideSnapshot&) = delete;
  io::Scenario scenario;                     ///< the snapshot's scenario keys (duration_s 1 where not given)
  libsched::Time now = 0;                    ///< now_s, ms
  std::vector<libsched::Time> running_start; ///< per task: start of its running attempt (ms), or -1 when it waits
  std::vector<bool> duration_given;          ///< per task: the snapshot gives duration_s
  const libsched::Registry* registry = nullptr;
  std::unique_ptr<decide_detail::SnapshotParts> parts;  ///< what snapshot_scheduler() needs
};

/// Reads snapshot `text` (`label` names it in diagnostics) and checks every key; returns nullptr
/// after appending every problem to `diagnostics` (warnings are appended too). Never throws on
/// bad input. `registry` must outlive the result.
std::unique_ptr<DecideSnapshot> read_snapshot(std::string_view text, const std::string& label, const libsched::Registry& registry,
                                        std::vector<io::Diagnostic>& diagnostics);

/// A fresh Scheduler in the snapshot's state at `snap.now`: the running tasks adopted, the
/// waiting ones queued (task i has TaskId i), node_state applied; no schedule() called yet.
/// nullptr after appending the problems (a running replica that does not fit its node, ...)
/// to `diagnostics`.
std::unique_ptr<libsched::Scheduler> snapshot_scheduler(const DecideSnapshot& snap, const std::string& label,
                                                        std::vector<io::Diagnostic>& diagnostics);

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
