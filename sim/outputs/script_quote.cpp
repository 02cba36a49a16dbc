// Quoting for generated scripts and manifests (sim/script_quote.hpp).
#include "sim/outputs/script_quote.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/io/diagnostics.hpp"

namespace sim {

std::string shell_quote(std::string_view s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_-./:=,@%+").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(s);
  std::string r = "'";
  for (char c : s) {
    if (c == '\'') r += "'\\''";
    else r += c;
  }
  return r + "'";
}

void check_one_line(std::string_view what, std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f)
      throw ScriptValueError(fmt::format("{}: {}: holds a control character, which cannot be written into a job script line",
                                         what, io::escape_for_diagnostic(s)));
}

std::string sbatch_quote(std::string_view what, std::string_view s) {
  check_one_line(what, s);
  std::string r = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"' || c == '\'' || c == '#') r += '\\';
    r += c;
  }
  return r + "\"";
}

std::string slurm_filename_literal(std::string_view s) {
  std::string r;
  for (char c : s) {
    if (c == '%') r += '%';
    r += c;
  }
  return r;
}

std::string yaml_quote(std::string_view what, std::string_view s) {
  try {
    return nlohmann::json(std::string(s)).dump();  // strict: throws on invalid UTF-8
  } catch (const nlohmann::json::exception&) {
    throw ScriptValueError(fmt::format("{}: {}: is not valid UTF-8, which a YAML manifest cannot hold", what,
                                       io::escape_for_diagnostic(s)));
  }
}

}  // namespace sim
