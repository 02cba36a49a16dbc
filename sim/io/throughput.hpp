// The `throughput` section (GPU heterogeneity, Gavel, Narayanan et al., OSDI'20;
// docs/heterogeneity.md): per task class (a task name pattern) a relative speed per GPU model.
// The section's shape is read with the root object (read_throughput, pass 1); its model names are
// checked once the cluster is complete (check_throughput, after the traces are loaded), by
// `validate` and by every command that resolves a scenario, so `validate` refuses what `run` does.
#pragma once

#include <string_view>
#include <vector>

#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario.hpp"

namespace sim::io {

/// True when `name` matches the shell-style pattern `glob`: `*` any run of characters (also
/// empty), `?` one character, every other character itself. O(|glob| x |name|).
bool glob_match(std::string_view glob, std::string_view name);

/// The first row of `rows` whose `match` selects the task named `name`, or nullptr (the task then
/// runs at speed 1.0 on every model).
const ThroughputCfg* throughput_row(const std::vector<ThroughputCfg>& rows, std::string_view name);

/// Appends an error for each GPU model of `s.throughput` that no node of the cluster has
/// (`throughput[i].speed.MODEL`); nothing when the scenario has no `throughput`.
void check_throughput(const Scenario& s, std::vector<Diagnostic>& diagnostics);

}  // namespace sim::io
