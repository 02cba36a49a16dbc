// `schedsim run`: runs one scenario and writes its outputs atomically (docs/outputs.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <libsched/registry.hpp>

#include "sim/io/overrides.hpp"
#include "sim/io/scenario.hpp"
#include "sim/io/output_names.hpp"
#include "sim/io/resolve.hpp"

namespace sim {

struct RunOptions {
  std::string out_dir;                 ///< output directory (created if missing)
  std::optional<std::uint64_t> seed;   ///< --seed: overrides the scenario's seed
  std::optional<double> until_s;       ///< --until: stop the simulation at this time (seconds)
  bool progress = true;                ///< show a progress line on stderr (only if stderr is a terminal)
  /// --outputs: the files written (default: the seven default files; sim/output_names.hpp).
  OutputSelection outputs{};
  /// Placement policies by name; nullptr = libsched::Registry::builtin().
  const libsched::Registry* registry = nullptr;
  /// --scheduler-cmd: a command (run by /bin/sh -c) that takes the scheduling decisions over the
  /// `decide` protocol, one JSON line each way per instant (docs/external-scheduler.md); empty:
  /// the built-in scheduler.
  std::string scheduler_cmd{};
  /// --scheduler-timeout: seconds one exchange may take (> 0).
  double scheduler_timeout_s = 10;
};

/// Runs `sc` and writes the files of opts.outputs (by default tasks.csv, summary.json, groups.csv,
/// events.jsonl, timeseries.csv, metrics.prom and scenario.resolved.json; timeline.json on
/// request) into opts.out_dir, completely or not at all: the files are written to a staging directory
/// on out_dir's file system (next to it when it does not exist, inside it when it does) and
/// published only when all were written and synced (sim/publish.hpp, docs/outputs.md
/// "Publishing"). Prints a readable
/// end-of-run summary table on `out`; errors (and the progress line) on `err`.
/// Returns 0 on success; 2 for input problems (also runtime bounds: sim::SimulationLimitError),
/// checked before simulating where possible; 1 for environment (I/O) problems, the output
/// location being checked before simulating; 130/143 when interrupted by SIGINT/SIGTERM.
/// `resolved_scenario` is written as scenario.resolved.json (ResolvedScenario::resolved_json);
/// empty: derived from `sc` with the run's seed and until_s (resolved_scenario_json; a scenario
/// whose traces were loaded is then written with the trace's nodes and tasks inline).
int run_command(const io::Scenario& sc, const RunOptions& opts, std::ostream& out, std::ostream& err,
                const std::string& resolved_scenario = {});
/// The same, moving `sc` into the simulator instead of copying it (a large trace's tasks are then
/// held once; `sc` is left unspecified). A copy is kept only when scenario.resolved.json is
/// written and `resolved_scenario` is empty (it is then derived from `sc`).
int run_command(io::Scenario&& sc, const RunOptions& opts, std::ostream& out, std::ostream& err,
                const std::string& resolved_scenario = {});


}  // namespace sim
