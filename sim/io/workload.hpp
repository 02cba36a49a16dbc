// The workload generator (scenario key `workload`, docs/scenario-format.md "Workload generator"):
// tasks drawn from distributions (a Poisson arrival process with hour-of-day and day-of-week
// profiles, task classes chosen by share, gang sizes, durations, users and tenants), appended to
// a scenario when it is resolved, after its inline and trace tasks.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/io/scenario.hpp"
#include "sim/io/traces.hpp"

namespace sim::io {

/// A workload that cannot be generated: an empirical duration trace that cannot be read or has no
/// task, a generated task that breaks a limit (the scenario totals with the generated tasks). The
/// message is one diagnostic line `workload.PATH: VALUE: RULE` (without the file).
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The tasks of `scenario.workload` (empty when there is none), drawn from `scenario.seed`.
/// Arrivals come from one Boost.Random mt19937_64 stream and the task attributes (class, user,
/// tenant, workers, priority, duration, runtime estimate) from a second one, both seeded from
/// `seed` only, so failure models (their own streams) never change the workload and the same
/// seed gives the same tasks on every platform. Tasks are in arrival order; submit_s, duration_s
/// and runtime_estimate_s are rounded to milliseconds. Names are name_prefix + a 6-digit index
/// (`gen-000000`); a name already in `taken` gets `-2`, `-3`, ... Throws WorkloadError (an
/// empirical trace is read through load_trace with `opts`; its TraceError becomes a WorkloadError).
std::vector<TaskCfg> generate_workload(const Scenario& scenario, const std::vector<std::string>& taken = {},
                                       const TraceOptions& opts = {});

/// Appends generate_workload(scenario) to scenario.tasks (names unique against the tasks already
/// there, inline and from traces) and checks every generated task (limits.hpp check_task_values)
/// and the scenario totals. The `workload` section is kept (scenario_to_json writes it; clear it
/// before serialising a scenario whose generated tasks should be written inline). Returns the
/// number of generated tasks. Throws WorkloadError.
std::size_t apply_workload(Scenario& scenario, const TraceOptions& opts = {});

/// The scenario's top-level `arrival_scale` (docs/scenario-format.md "Load growth") applied to every
/// task already in `scenario.tasks` (inline, trace and generated: call it after apply_traces and
/// apply_workload): submit_s' = first + (submit_s - first) x arrival_scale, `first` the earliest
/// submit_s of all the tasks, so every gap between two arrivals is multiplied by it (a trace's own
/// arrival_scale, applied when it was loaded, multiplies with it); durations, events and until_s
/// are kept. Nothing changes at 1. Throws WorkloadError when the scale is not in (0, 1000] or a
/// scaled submit_s exceeds 1e9 s (message `arrival_scale: VALUE: RULE`).
void apply_arrival_scale(Scenario& scenario);

/// A generated task's name before any `-k` suffix: `prefix` then `index` in decimal, padded with
/// zeros to 6 digits (`gen-000042`; longer indices in full), as fmt's "{}{:06}" writes it, without
/// a format string parsed per task. No errors.
std::string generated_task_name(std::string_view prefix, std::size_t index);

}  // namespace sim::io
