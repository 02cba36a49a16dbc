// The rules of a scenario's `prices` that need the whole cluster and every task (docs/scenario-format.md
// "Prices"): checked after the traces are loaded and the workload is generated, by `validate` and by
// every command that resolves a scenario (sim/io/resolve.hpp), so that `validate` refuses whatever
// `run` refuses. The section's own shape (keys, numbers) is checked when it is read.
#pragma once

#include <vector>

#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario.hpp"

namespace sim::io {

/// Appends the diagnostics of `s.prices` (nothing when the scenario has no prices):
/// errors: a GPU model no node or instance spec has, a spec not in cluster.instance_specs, a
/// reserved quota with GPUs on a pool whose GPU models have different reserved prices;
/// warnings: once per capacity class that tasks (or reserved quotas) use and that is not priced
/// for all of them (it costs 0).
void check_prices(const Scenario& s, std::vector<Diagnostic>& diagnostics);

}  // namespace sim::io
