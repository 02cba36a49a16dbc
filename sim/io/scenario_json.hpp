// Scenario JSON <-> sim::io::Scenario, with validation (contract v1, docs/scenario-format.md).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <libsched/registry.hpp>
#include <nlohmann/json.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario.hpp"

namespace sim::io {

/// Outcome of reading a scenario: the typed model (absent only when the text is not a JSON object
/// at all) and every diagnostic found, in file order within each pass.
struct ParseResult {
  std::optional<Scenario> scenario;
  std::vector<Diagnostic> diagnostics;
  /// True when there is a scenario and no diagnostic is an error (warnings are fine).
  bool ok() const;
};

/// Parses and validates scenario text. `file_label` is used as the FILE part of diagnostics and
/// stored in Scenario::file. Never throws on bad input: malformed JSON gives one error with its
/// line and column; otherwise every type, range, enum, reference, duplicate and cross-field
/// problem is reported (one Diagnostic each) and unknown keys give warnings with the nearest
/// known key. The scenario is returned even when it has errors (fields with errors keep their
/// defaults); use it only when ok(). `scheduler.placement` must be a name registered in
/// `registry` (the error lists the registered names); embedders that add policies pass their
/// registry here and to the simulator (SimOptions::registry).
ParseResult parse_scenario_text(std::string_view text, const std::string& file_label,
                                const libsched::Registry& registry = libsched::Registry::builtin());

/// The two steps of parse_scenario_text. Syntax: the JSON document of `text` (a NUL byte,
/// nesting deeper than 100 levels, malformed JSON and duplicate keys append error diagnostics and
/// give nullopt).
std::optional<nlohmann::json> parse_scenario_json(std::string_view text, const std::string& file_label,
                                                  std::vector<Diagnostic>& diagnostics);
/// Model: reads and validates a scenario document (every rule of parse_scenario_text after the
/// syntax). Used directly for documents built in memory (overrides, the embedded default).
ParseResult parse_scenario_document(const nlohmann::json& document, const std::string& file_label,
                                    const libsched::Registry& registry = libsched::Registry::builtin());

/// Reads a scenario (or `decide` snapshot) text from `in` in chunks: input larger than
/// limits::max_scenario_bytes or a read error appends one error diagnostic (FILE part `label`,
/// rule naming `what`, e.g. "a scenario file") and gives nullopt; reading stops just after a NUL
/// byte (which parse_scenario_json then reports with its position). On a read error `in.bad()`
/// is true afterwards (an environment failure, not bad input).
std::optional<std::string> read_scenario_stream(std::istream& in, const std::string& label, std::string_view what,
                                                std::vector<Diagnostic>& diagnostics);

/// Reads the text of the scenario file `path`: a directory, an unreadable file or one larger than
/// limits::max_scenario_bytes appends one error diagnostic and gives nullopt. Reading stops just
/// after a NUL byte (which parse_scenario_json then reports with its position).
std::optional<std::string> read_scenario_file(const std::string& path, std::vector<Diagnostic>& diagnostics);

/// Reads `path` and calls parse_scenario_text with `path` as the label. An unreadable file gives
/// one error diagnostic and no scenario.
ParseResult load_scenario_file(const std::string& path,
                               const libsched::Registry& registry = libsched::Registry::builtin());

/// Cross-field checks on a typed scenario (references to specs/pools/policies/nodes/tasks,
/// duplicate names, name prefix rule, block expiry window, `pool` for reserved, autoscaling
/// bounds, and the "replica larger than every node" warning). Appends to `diagnostics`; an error
/// whose JSON path (or an enclosing path) already has an error in `diagnostics` is not repeated.
/// Paths are derived from vector indices, so they match the file the scenario was read from.
void validate_scenario(const Scenario& scenario, std::vector<Diagnostic>& diagnostics);

/// Does trace `t` bring nodes into the cluster? An swf trace makes its nodes unless `nodes` is
/// "none" (docs/traces.md "SWF"); openb and philly read them from their `nodes` file when given.
bool trace_makes_nodes(const TraceCfg& t);

/// The node names of events (`node`, `nodes`) and node policies (`nodes`) checked against the
/// cluster once the traces are loaded (validate_scenario cannot check them when a trace makes
/// nodes: trace_makes_nodes). Call after apply_traces; does nothing when no trace makes nodes.
/// Appends one error per unknown name (`events[i].node: "NAME": unknown node (...)`).
void check_trace_node_references(const Scenario& scenario, std::vector<Diagnostic>& diagnostics);

/// Node names of the cluster in order: each node group expands to prefix + 0..count-1, then
/// each pool's explicit `nodes`; pools in file order.
std::vector<std::string> expanded_node_names(const ClusterCfg& cluster);

/// The inverse of parsing: every key with its value (defaults written out), omitting only keys
/// that are absent optionals or that the validation rules forbid for this task/event shape
/// (e.g. `priority` on an idle task that never set it, `head_spec` on a PyTorchJob).
/// parse(scenario_to_json(s)) yields s again (Scenario::file aside).
nlohmann::json scenario_to_json(const Scenario& scenario);
/// One entry of a scenario's `tasks` as scenario_to_json writes it (the `decide` snapshot's task
/// keys too).
nlohmann::json task_to_json(const TaskCfg& task);

}  // namespace sim::io
