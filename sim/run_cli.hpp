// `schedsim run`: runs one scenario and writes its outputs atomically (docs/outputs.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include <libsched/placement/policy.hpp>

#include "sim/io/scenario.hpp"

namespace sim {

struct RunOptions {
  std::string out_dir;                 ///< output directory (created if missing)
  std::optional<std::uint64_t> seed;   ///< --seed: overrides the scenario's seed
  std::optional<double> until_s;       ///< --until: stop the simulation at this time (seconds)
  bool progress = true;                ///< show a progress line on stderr (only if stderr is a terminal)
  /// Placement policies by name; nullptr = libsched::PlacementRegistry::builtin().
  const libsched::PlacementRegistry* registry = nullptr;
};

/// Runs `sc` and writes tasks.csv, summary.json, groups.csv, events.jsonl, timeseries.csv and metrics.prom
/// into opts.out_dir, completely or not at all: the files are written to a staging directory
/// on out_dir's file system (next to it when it does not exist, inside it when it does) and
/// published only when all were written and synced (sim/publish.hpp, docs/outputs.md
/// "Publishing"). Prints a readable
/// end-of-run summary table on `out`; errors (and the progress line) on `err`.
/// Returns 0 on success; 2 for input problems (also runtime bounds: sim::SimulationLimitError),
/// checked before simulating where possible; 1 for environment (I/O) problems, the output
/// location being checked before simulating; 130/143 when interrupted by SIGINT/SIGTERM.
int run_command(const io::Scenario& sc, const RunOptions& opts, std::ostream& out, std::ostream& err);

/// The embedded default scenario (sim/default_scenario.cpp): >= 64 nodes in 2 pools with 2 GPU
/// models and a generated workload of a few hundred tasks using every capacity class, both
/// task types, priorities, guarantee, preemption, node policies, injected faults and
/// resubmissions. Same seed, same scenario.
io::Scenario default_scenario(std::uint64_t seed);

}  // namespace sim
