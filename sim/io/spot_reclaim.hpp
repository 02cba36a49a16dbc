// The rules of a scenario's `spot_reclaim` section that need the whole cluster
// (docs/scenario-format.md "Spot reclaims"): checked after the traces are loaded (trace nodes bring
// GPU models and pools), by `validate` and by every command that resolves a scenario
// (sim/io/resolve.hpp), so that `validate` refuses whatever `run` refuses. The section's own shape
// (keys, numbers) is checked when it is read (sim/io/spot_reclaim.cpp, pass 1).
#pragma once

#include <vector>

#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario.hpp"

namespace sim::io {

/// Appends the diagnostics of `s.spot_reclaim` (nothing when the scenario has none): an error for
/// each GPU model that no node of the cluster has (`spot_reclaim.gpu_models.MODEL`) and each pool
/// not in cluster.pools (`spot_reclaim.pools.POOL`).
void check_spot_reclaim(const Scenario& s, std::vector<Diagnostic>& diagnostics);

}  // namespace sim::io
