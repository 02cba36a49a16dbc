// `schedsim validate` and the shared "load or report" step used by `schedsim run`.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <libsched/registry.hpp>

#include "sim/io/overrides.hpp"
#include "sim/io/scenario.hpp"

namespace sim::io {

/// Reads the scenario at `path`, applies `overrides` (docs/scenario-format.md "Overrides") and
/// validates it. Prints every diagnostic (errors and warnings),
/// one per line, on `err`; when there is no error prints `FILE: ok (N tasks, M nodes)` on `out`
/// (N inline tasks, M cluster nodes after node-group expansion). Returns 0 when there is no
/// error, otherwise exit_invalid_input (2). `scheduler.placement` must be registered in `registry`.
int validate_command(const std::string& path, std::ostream& out, std::ostream& err,
                     const std::vector<Override>& overrides = {},
                     const libsched::Registry& registry = libsched::Registry::builtin());

/// Reads and validates the scenario at `path`, printing every diagnostic one per line on `err`.
/// Returns the scenario when it has no error (warnings are printed but allowed), else nullopt;
/// the caller then exits with exit_invalid_input without simulating. `scheduler.placement` must
/// be registered in `registry`.
std::optional<Scenario> load_or_report(const std::string& path, std::ostream& err,
                                       const libsched::Registry& registry = libsched::Registry::builtin());

}  // namespace sim::io
