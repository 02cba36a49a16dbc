// Scenario overrides (`--set PATH=VALUE`, `--placement NAME`, `--queueing MODE`): edits of the
// scenario's JSON document, applied before it is parsed, so an overridden scenario is validated
// exactly like a file. Path syntax and rules: docs/scenario-format.md "Overrides".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario_json.hpp"

namespace sim::io {

/// One override: set the value at `path` in the scenario document.
///
/// `path` uses the form validation diagnostics print: keys separated by dots, array elements
/// selected by `[i]` (0-based index), `[NAME]` (the element whose `name` is NAME, when NAME is
/// not a decimal number) or `[KEY=VALUE]` (the element whose KEY is VALUE, e.g.
/// `[prefix=h800-]`, `[user=alice]`) or `[K1=V1,K2=V2,...]` (the element matching every
/// KEY=VALUE, e.g. `quotas[user=alice,pool=p]`; when a comma-separated part is not KEY=VALUE
/// the whole text after the first `=` is one value); a selector must match exactly one
/// element. Example: `cluster.pools[a100-pool].node_groups[0].count`.
struct Override {
  std::string option;      ///< what gave it: "--set", "--placement", "--queueing", "--trace" (fill), "set" (Python) (FILE part of its diagnostics)
  std::string path;        ///< as written by the user
  std::string value_text;  ///< as written by the user
  nlohmann::json value;    ///< value_text parsed as JSON when it is valid JSON, else value_text as a string

  /// How the user wrote it, e.g. `--set tasks[x].priority=9` or `--placement fgd`.
  std::string origin() const;
};

/// An override of `path` with `value_text` (parsed as JSON when it is valid JSON, else taken as
/// a string), given by `option`.
Override make_override(std::string option, std::string path, std::string value_text);

/// Parses a `--set` argument `PATH=VALUE` (split at the first `=` outside brackets). A missing
/// `=` or an empty PATH appends an error diagnostic (FILE part `--set`) and returns nullopt.
std::optional<Override> parse_set_argument(std::string_view arg, std::vector<Diagnostic>& diagnostics);

/// Applies `overrides` to `doc` in order. Missing object keys on the way are created (a value
/// for a key the format does not know is then refused by attribute_diagnostics); array elements
/// are never created. Each override that cannot be applied (bad path syntax, no such element, a
/// selector matching several elements, stepping into a number or string) appends one error
/// diagnostic `OPTION: PATH: VALUE: RULE` and leaves `doc` unchanged for it. On success
/// `resolved_paths[i]` is override i's path with every selector replaced by its index (the
/// form diagnostics use), else empty. Returns true when all overrides applied.
bool apply_overrides(nlohmann::json& doc, const std::vector<Override>& overrides, std::vector<std::string>& resolved_paths,
                     std::vector<Diagnostic>& diagnostics);

/// Relates the diagnostics of an overridden document to the overrides: a diagnostic at (or
/// under) an override's resolved path gets ` (from --set PATH=VALUE)` appended to its rule, and
/// an "unknown key" warning at (or above) a resolved path becomes an error (a `--set` of a key
/// the scenario format does not know would otherwise be silently ignored).
void attribute_diagnostics(std::vector<Diagnostic>& diagnostics, const std::vector<Override>& overrides,
                           const std::vector<std::string>& resolved_paths);

/// Applies `overrides` to the scenario document `doc` and parses the result with `file_label`
/// as FILE: the returned ParseResult holds the override errors (then no scenario) or the
/// overridden scenario with every validation diagnostic, attributed as above. A diagnostic no
/// override's path relates to (a rule on a parent object of what an override set, a reference
/// elsewhere to a node or spec an override removed) is compared with the document without the
/// overrides: when that has it too it is left as it is, else it names the overrides that cause
/// it alone, else all of them (` (from --set A, --set B)`). `doc`
/// is left overridden (the resolved document).
ParseResult parse_with_overrides(nlohmann::json& doc, const std::string& file_label, const std::vector<Override>& overrides,
                                 const libsched::Registry& registry = libsched::Registry::builtin());

/// Reads the scenario file `path` and applies `overrides` (none: exactly load_scenario_file).
/// When `document` is given it receives the (overridden) JSON document, or null when the file
/// could not be read or parsed.
/// `registry`: the placement policies `scheduler.placement` may name.
ParseResult load_scenario_file(const std::string& path, const std::vector<Override>& overrides,
                               nlohmann::json* document = nullptr,
                               const libsched::Registry& registry = libsched::Registry::builtin());

}  // namespace sim::io
