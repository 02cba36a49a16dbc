// Diagnostics reported while reading a scenario (sim::io): one per problem, never "stop at first".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sim::io {

/// Exit status for invalid input (contract: "Invalid input: exit status 2").
inline constexpr int exit_invalid_input = 2;

/// One problem found in an input file.
///
/// Rendered by str() as `FILE: JSON.PATH: VALUE: RULE`, for example
/// `s.json: tasks[1].priority: 12: must be between 1 and 9`. Warnings render as
/// `FILE: warning: JSON.PATH: VALUE: RULE`. `path` uses dots for keys and `[i]` for array
/// indices (`cluster.pools[0].node_groups[1].count`); `value` is the JSON dump of the offending
/// value, or `<missing>` for a required key that is absent. For malformed JSON, `path` holds
/// `line L, column C` and `line`/`column` are set (1-based); otherwise they are 0.
struct Diagnostic {
  enum class Severity { error, warning };
  Severity severity = Severity::error;
  std::string file;
  std::string path;
  std::string value;
  std::string rule;
  int line = 0;    ///< malformed JSON only: 1-based line of the error
  int column = 0;  ///< malformed JSON only: 1-based column of the error

  /// The one-line rendering described above (each part through escape_for_diagnostic). Empty
  /// `path` or `value` parts are left out.
  std::string str() const;
  bool is_error() const { return severity == Severity::error; }
};

/// Value dump used for a required key that is absent.
inline constexpr const char* missing_value = "<missing>";

/// The one escaping rule for text printed in a diagnostic (file names, JSON paths built from
/// keys, values, rules quoting keys, trace messages): control characters (< 0x20, 0x7f) become
/// `\n`, `\r`, `\t` or `\xHH`; invalid UTF-8 bytes become `\xHH`; the C1 controls and the
/// Unicode line/paragraph separators (U+0080..U+009F, U+2028, U+2029) become `\u{XXXX}`. Printable
/// text (ASCII and valid UTF-8) is kept. So a diagnostic is always exactly one line, whatever the
/// input's keys and values.
std::string escape_for_diagnostic(std::string_view text);

/// Number of diagnostics with Severity::error.
std::size_t count_errors(const std::vector<Diagnostic>& diagnostics);

}  // namespace sim::io
