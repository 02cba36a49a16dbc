#include "sim/io/diagnostics.hpp"

#include <algorithm>

namespace sim::io {

std::string Diagnostic::str() const {
  std::string s = file;
  s += ": ";
  if (severity == Severity::warning) s += "warning: ";
  if (!path.empty()) {
    s += path;
    s += ": ";
  }
  if (!value.empty()) {
    s += value;
    s += ": ";
  }
  s += rule;
  return s;
}

std::size_t count_errors(const std::vector<Diagnostic>& diagnostics) {
  return static_cast<std::size_t>(
      std::count_if(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.is_error(); }));
}

}  // namespace sim::io
