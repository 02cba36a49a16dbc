// Resolving the scenario of a run (sim/io/resolve.hpp).
#include "sim/io/resolve.hpp"

#include <cmath>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/io/prices.hpp"
#include "sim/io/spot_reclaim.hpp"
#include "sim/io/throughput.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"
#include "sim/io/workload.hpp"

namespace sim {

std::string resolved_scenario_json(const io::Scenario& sc) {
  return io::scenario_to_json(sc).dump(2) + "\n";
}

void check_loaded_scenario(const io::Scenario& sc, std::vector<io::Diagnostic>& diagnostics, bool traces_loaded) {
  io::check_prices(sc, diagnostics);
  io::check_spot_reclaim(sc, diagnostics);  // its names need the trace nodes too
  io::check_throughput(sc, diagnostics);    // so do its GPU models
  if (traces_loaded) io::check_trace_node_references(sc, diagnostics);
}

std::optional<ResolvedScenario> resolve_scenario(const ScenarioSource& src, std::ostream& err) {
  io::ParseResult r;
  std::string label;
  if (src.until_s && (!std::isfinite(*src.until_s) || *src.until_s < 0 || *src.until_s > 1e9)) {
    err << "--until: " << fmt::format("{}", *src.until_s) << ": must be a number of seconds from 0 to 1e9\n";
    return std::nullopt;
  }
  const libsched::Registry& registry = src.registry ? *src.registry : libsched::Registry::builtin();
  if (!src.path.empty()) {
    label = src.path;
    r = io::load_scenario_file(src.path, src.overrides, nullptr, registry);
  } else if (!src.text.empty()) {
    label = src.text_label;
    if (auto doc = io::parse_scenario_json(src.text, label, r.diagnostics))
      r = io::parse_with_overrides(*doc, label, src.overrides, registry);
  } else {
    label = "<default>";
    io::Scenario def = default_scenario(src.seed.value_or(1));
    if (src.overrides.empty()) {
      r.scenario = std::move(def);
    } else {
      nlohmann::json doc = io::scenario_to_json(def);
      r = io::parse_with_overrides(doc, label, src.overrides, registry);
    }
  }
  for (const auto& d : r.diagnostics) err << d.str() << '\n';
  if (!r.ok()) return std::nullopt;
  ResolvedScenario out{std::move(*r.scenario), {}};
  if (src.seed) out.scenario.seed = *src.seed;
  if (src.until_s) out.scenario.until_s = *src.until_s;
  out.resolved_json = resolved_scenario_json(out.scenario);
  if (src.load_traces) {
    try {
      const std::size_t skipped = io::apply_traces(out.scenario, io::TraceOptions{src.skip_bad_rows});
      if (skipped) err << io::escape_for_diagnostic(label) << ": skipped " << skipped << " malformed trace rows (--skip-bad-rows)\n";
    } catch (const io::TraceError& e) {
      err << io::escape_for_diagnostic(label) << ": " << io::escape_for_diagnostic(e.what()) << "\n";
      return std::nullopt;
    }
    // The workload section's tasks, after the inline and trace tasks, from the run's seed.
    try {
      io::apply_workload(out.scenario, io::TraceOptions{src.skip_bad_rows});
      io::apply_arrival_scale(out.scenario);
    } catch (const io::WorkloadError& e) {
      err << io::escape_for_diagnostic(label) << ": " << io::escape_for_diagnostic(e.what()) << "\n";
      return std::nullopt;
    }
  }
  // The prices need every node and task (sim/io/prices.hpp); `validate` checks them the same way.
  std::vector<io::Diagnostic> loaded_diagnostics;
  check_loaded_scenario(out.scenario, loaded_diagnostics, src.load_traces);
  for (const auto& d : loaded_diagnostics) err << d.str() << '\n';
  if (io::count_errors(loaded_diagnostics) > 0) return std::nullopt;
  return out;
}

}  // namespace sim
