// The scenario a run simulates: read from a file or a text, or the embedded default scenario,
// with the command line's overrides, seed and until applied, validated, its traces loaded and
// its workload generated (docs/scenario-format.md). Every command that simulates starts here.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <libsched/registry.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/io/overrides.hpp"
#include "sim/io/scenario.hpp"

namespace sim {

/// Where a run's scenario comes from and what the command line changes in it.
struct ScenarioSource {
  std::string path;                   ///< scenario file; empty: `text`, or the embedded default scenario when `text` is empty too
  std::string text;                   ///< scenario JSON text (when `path` is empty)
  std::string text_label = "<scenario>";  ///< FILE part of the diagnostics about `text`
  std::vector<io::Override> overrides;    ///< --set, --placement, --queueing (in this order)
  std::optional<std::uint64_t> seed;  ///< --seed: becomes the scenario's `seed` (for the default scenario also its generator seed)
  std::optional<double> until_s;      ///< --until: becomes the scenario's `until_s`
  bool load_traces = true;            ///< load the scenario's `traces`
  bool skip_bad_rows = false;         ///< --skip-bad-rows
  /// Placement policies `scheduler.placement` may name; nullptr = libsched::Registry::builtin().
  const libsched::Registry* registry = nullptr;
};

/// A scenario ready to run and the text that reproduces it.
struct ResolvedScenario {
  io::Scenario scenario;      ///< validated, overrides, seed and until applied, traces loaded
  std::string resolved_json;  ///< scenario.resolved.json: the same scenario before its traces were loaded
};

/// Reads (or generates) the scenario, applies the overrides, validates it, applies `seed` and
/// `until_s`, loads its traces and generates its `workload` tasks (io::apply_workload, from the
/// resolved seed). Prints every diagnostic (warnings too) one per line on `err`;
/// returns nullopt when there was an error (the caller exits with io::exit_invalid_input).
std::optional<ResolvedScenario> resolve_scenario(const ScenarioSource& source, std::ostream& err);

/// The rules that need the whole cluster and every task, so are checked after the traces are
/// loaded and the workload generated: prices (io::check_prices), spot reclaims, throughput, and
/// the node names of events and node policies when a trace makes nodes
/// (io::check_trace_node_references). Used by resolve_scenario and `validate`, so that `validate`
/// refuses whatever `run` refuses. Appends to `diagnostics`. `traces_loaded` false (a scenario
/// resolved without its traces, ScenarioSource::load_traces): the node names are not checked.
void check_loaded_scenario(const io::Scenario& sc, std::vector<io::Diagnostic>& diagnostics,
                           bool traces_loaded = true);

/// The resolved-scenario text of `sc`: scenario_to_json with every default written out, pretty
/// printed (2 spaces, keys sorted), ending in a newline. Running it gives the same outputs as
/// running `sc` (with the same seed and until_s; a scenario with loaded traces is written with
/// its trace nodes and tasks inline and no `traces`).
std::string resolved_scenario_json(const io::Scenario& sc);

/// The embedded default scenario (sim/default_scenario.cpp): >= 64 nodes in 2 pools with 2 GPU
/// models and a generated workload of a few hundred tasks using every capacity class, both
/// task types, priorities, guarantee, preemption, node policies, injected faults and
/// resubmissions. Same seed, same scenario.
io::Scenario default_scenario(std::uint64_t seed);

}  // namespace sim
