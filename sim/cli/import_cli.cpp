#include "sim/cli/import_cli.hpp"

#include <fmt/format.h>

#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/outputs/publish.hpp"

namespace sim {

int import_k8s_command(const ImportK8sOptions& opts, std::ostream& out, std::ostream& err) {
  if (opts.out.empty() && opts.snapshot.empty()) {
    err << "schedsim import k8s: give --out S.json, --snapshot OUT.json or both\n";
    return io::exit_invalid_input;
  }
  if (!(opts.import.duration_s > 0) || opts.import.duration_s > 1e9) {
    err << fmt::format("schedsim import k8s: --duration-s: {}: must be > 0 and <= 1e9\n", opts.import.duration_s);
    return io::exit_invalid_input;
  }
  for (const auto* o : {&opts.out, &opts.snapshot}) {
    if (o->empty()) continue;
    try {
      check_output_file(*o);
    } catch (const OutputError& e) {
      err << "schedsim import k8s: " << (o == &opts.out ? "--out" : "--snapshot") << ": " << e.what() << "\n";
      return e.status;
    }
  }
  io::K8sImport im = io::import_k8s(opts.import);
  if (!im.ok()) {
    for (const auto& w : im.warnings) err << w << "\n";
    for (const auto& e : im.errors) err << e.str() << "\n";
    return io::exit_invalid_input;
  }
  // The scenario must pass every rule `validate` applies (limits, references, shapes).
  const std::string label = opts.out.empty() ? std::string("<imported scenario>") : opts.out;
  const nlohmann::json scenario = io::scenario_to_json(im.scenario);
  const io::ParseResult check = io::parse_scenario_document(scenario, label);
  std::string snapshot;
  if (!opts.snapshot.empty()) snapshot = io::k8s_snapshot_json(im).dump(1) + "\n";
  for (const auto& w : im.warnings) err << w << "\n";
  for (const auto& d : check.diagnostics) err << d.str() << "\n";
  if (!check.ok()) return io::exit_invalid_input;
  try {
    if (!opts.out.empty()) write_file_atomic(opts.out, scenario.dump(1) + "\n");
    if (!opts.snapshot.empty()) write_file_atomic(opts.snapshot, snapshot);
  } catch (const OutputError& e) {
    err << "schedsim import k8s: " << io::escape_for_diagnostic(e.what()) << "\n";
    return e.status;
  }
  std::size_t nodes = 0;
  for (const auto& p : im.scenario.cluster.pools) nodes += p.nodes.size();
  out << fmt::format("{}: {} tasks, {} nodes, {} quotas, {} warnings\n", opts.out.empty() ? opts.snapshot : opts.out,
                     im.scenario.tasks.size(), nodes, im.scenario.quotas.size(), im.warnings.size());
  return 0;
}

}  // namespace sim
