#include "sim/cli/validate_cli.hpp"

#include "sim/io/resolve.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"
#include "sim/io/workload.hpp"

namespace sim::io {

namespace {
void print_diagnostics(const ParseResult& r, std::ostream& err) {
  for (const auto& d : r.diagnostics) err << d.str() << '\n';
}
}  // namespace

int validate_command(const std::string& path, std::ostream& out, std::ostream& err,
                     const std::vector<Override>& overrides, const libsched::Registry& registry) {
  ParseResult r = load_scenario_file(path, overrides, nullptr, registry);
  print_diagnostics(r, err);
  if (!r.ok()) return exit_invalid_input;
  // The traces are part of the scenario: a missing or malformed trace file fails `run`, so it
  // fails `validate` too (and the counts below include the trace's tasks and nodes).
  try {
    apply_traces(*r.scenario);
  } catch (const TraceError& e) {
    err << escape_for_diagnostic(path) << ": " << escape_for_diagnostic(e.what()) << '\n';
    return exit_invalid_input;
  }
  // So are the generated tasks (with the scenario's seed): the counts include them.
  try {
    apply_workload(*r.scenario);
    apply_arrival_scale(*r.scenario);
  } catch (const WorkloadError& e) {
    err << escape_for_diagnostic(path) << ": " << escape_for_diagnostic(e.what()) << '\n';
    return exit_invalid_input;
  }
  // The rules that need every node and task (sim/io/resolve.hpp check_loaded_scenario).
  std::vector<Diagnostic> loaded_diagnostics;
  check_loaded_scenario(*r.scenario, loaded_diagnostics);
  for (const auto& d : loaded_diagnostics) err << d.str() << '\n';
  if (count_errors(loaded_diagnostics) > 0) return exit_invalid_input;
  out << path << ": ok (" << r.scenario->tasks.size() << " tasks, " << expanded_node_names(r.scenario->cluster).size()
      << " nodes)\n";
  return 0;
}

std::optional<Scenario> load_or_report(const std::string& path, std::ostream& err,
                                       const libsched::Registry& registry) {
  ParseResult r = load_scenario_file(path, registry);
  print_diagnostics(r, err);
  if (!r.ok()) return std::nullopt;
  return std::move(r.scenario);
}

}  // namespace sim::io
