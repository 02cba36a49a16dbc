// Quoting of every value schedsim writes into a generated script or manifest (`--emit slurm`:
// submit.sh and the *.sbatch files; `--emit k8s`: the YAML manifests and submit.sh). One function
// per target syntax, used for every value: a path or argument can never run a command, add a
// line or change an option (docs/sharding.md "Quoting").
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace sim {

/// A value that no quoting can carry into the target syntax (a control character in a
/// `#SBATCH` line or a comment, invalid UTF-8 in YAML). The command refuses it: exit 2.
struct ScriptValueError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// `s` as one word of a POSIX shell command: unchanged when every character is one the shell
/// never interprets (letters, digits, `_-./:=,@%+`), else in single quotes with each `'` written
/// as `'\''`. Any byte string is quoted exactly (newlines included); the empty string is `''`.
std::string shell_quote(std::string_view s);

/// `s` as one argument of a `#SBATCH` line, as sbatch's script parser reads it: in double
/// quotes, with `\`, `"`, `'` and `#` escaped by a backslash (so no `#` starts a comment and no
/// quote ends the word). Throws ScriptValueError when `s` holds a control character (a newline
/// would end the `#SBATCH` line and start a script line). `what` names the value in the error.
std::string sbatch_quote(std::string_view what, std::string_view s);

/// `s` as literal text in a Slurm filename pattern (--output): `%` doubled, since `%j`, `%a`,
/// ... are replaced by sbatch.
std::string slurm_filename_literal(std::string_view s);

/// Throws ScriptValueError when `s` holds a control character (< 0x20 or 0x7f): such a value
/// cannot stand in a one-line comment or a `#SBATCH` line. `what` names the value.
void check_one_line(std::string_view what, std::string_view s);

/// `s` as a YAML double-quoted scalar (JSON string syntax, which YAML 1.2 reads the same way;
/// control characters escaped). Throws ScriptValueError when `s` is not valid UTF-8 (nothing is
/// replaced silently).
std::string yaml_quote(std::string_view what, std::string_view s);

}  // namespace sim
