// The schedsim command line as a function, so that a program can embed the whole simulator
// with its own placement policies (examples/custom-policy, docs/packaging.md).
#pragma once

#include <libsched/registry.hpp>

namespace sim {

/// Runs the schedsim command line (`run`, `validate`, `convert`, `fill`, `decide`, `--help`,
/// `--version`; README "Using schedsim") on argv and returns the process exit status: 0 ok,
/// 1 environment failure, 2 invalid input, 130/143 interrupted (docs/outputs.md "Exit
/// status"). Every scenario's `scheduler.placement`, `fill --policy/--policies` and
/// `convert --placement` (and a `decide` snapshot's `scheduler.placement`) are looked up in `registry`: pass a copy of
/// libsched::Registry::builtin() with your policies add()ed to make them usable by
/// name. `registry` must outlive the call. Output goes to std::cout / std::cerr.
int cli_main(int argc, char** argv,
             const libsched::Registry& registry = libsched::Registry::builtin());

}  // namespace sim
