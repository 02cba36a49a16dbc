// The one way schedsim reads a JSON document from a file, a stream or a string: scenario files,
// `decide` snapshots, shard.json (merge), every file `report` reads, and the Python module's
// scenarios. Every reader gets the same limits (docs/scenario-format.md "Limits"):
//  - the file must be a regular file (or a pipe, where the caller allows one): a directory, a
//    device such as /dev/zero, a socket are refused before a byte is read;
//  - at most `max_bytes` are read (default limits::max_scenario_bytes), so an endless source is
//    refused, never read until memory runs out;
//  - a NUL byte, nesting deeper than limits::max_json_depth levels (a walk or dump of such a value
//    would overflow the stack), malformed JSON (with line and column), invalid UTF-8 and
//    duplicate keys (both positions) are errors.
// Problems are appended as Diagnostics (`FILE: PATH: VALUE: RULE`); nothing here throws on bad
// input. A read error of the file system is reported with `environment = true` (exit 1, not 2).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/io/limits.hpp"

namespace sim::io {

/// What a JSON reader accepts besides a regular file, and how much it reads.
struct JsonReadOptions {
  std::uint64_t max_bytes = limits::max_scenario_bytes;  ///< bytes read at most
  bool allow_pipe = false;  ///< also a FIFO (e.g. a scenario given as `<(generate ...)`)
};

/// Outcome of reading a text: the text (absent on any problem), and whether the problem was the
/// environment's (a read error: exit 1) rather than the input's (exit 2).
struct TextRead {
  std::optional<std::string> text;
  bool environment = false;
};

/// Reads `in` in chunks: more than `max_bytes` or a read error appends one error diagnostic
/// (FILE part `label`, rule naming `what`, e.g. "a scenario file") and gives nullopt; reading
/// stops just after a NUL byte (which parse_json_text then reports with its position). On a read
/// error `in.bad()` is true afterwards.
std::optional<std::string> read_text_stream(std::istream& in, const std::string& label, std::string_view what,
                                            std::vector<Diagnostic>& diagnostics,
                                            std::uint64_t max_bytes = limits::max_scenario_bytes);

/// Reads the whole text file `path` (`what` names it in diagnostics, e.g. "a shard file"): a
/// missing file, a directory, a device, a socket (or a pipe unless allowed), an unreadable file
/// or one larger than `options.max_bytes` appends one error diagnostic and gives no text.
TextRead read_text_file(const std::string& path, std::string_view what, std::vector<Diagnostic>& diagnostics,
                        const JsonReadOptions& options = {});

/// Parses `text` as one JSON document (nlohmann::json or nlohmann::ordered_json). A NUL byte,
/// nesting deeper than limits::max_json_depth, malformed JSON (position as `line L, column C`),
/// a number out of range and duplicate keys append error diagnostics and give nullopt.
template <class Json>
std::optional<Json> parse_json_text(std::string_view text, const std::string& label, std::vector<Diagnostic>& diagnostics);

extern template std::optional<nlohmann::json> parse_json_text<nlohmann::json>(std::string_view, const std::string&,
                                                                              std::vector<Diagnostic>&);
extern template std::optional<nlohmann::ordered_json> parse_json_text<nlohmann::ordered_json>(std::string_view, const std::string&,
                                                                                              std::vector<Diagnostic>&);

/// read_text_file then parse_json_text: the JSON document of `path`, or nullopt with the
/// problems appended (`environment` set when the file could not be read for a system reason).
template <class Json>
struct JsonRead {
  std::optional<Json> json;
  bool environment = false;
};
template <class Json>
JsonRead<Json> read_json_file(const std::string& path, std::string_view what, std::vector<Diagnostic>& diagnostics,
                              const JsonReadOptions& options = {}) {
  JsonRead<Json> r;
  TextRead t = read_text_file(path, what, diagnostics, options);
  r.environment = t.environment;
  if (t.text) r.json = parse_json_text<Json>(*t.text, path, diagnostics);
  return r;
}

}  // namespace sim::io
