// `--outputs LIST` parsing (sim/output_names.hpp).
#include "sim/io/output_names.hpp"

#include <fmt/format.h>

#include "sim/io/diagnostics.hpp"

namespace sim {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string accepted_names() {
  std::string v;
  for (const auto& o : k_outputs) v += fmt::format("{}{}", v.empty() ? "" : ", ", o.name);
  return v + ", all";
}

}  // namespace

std::optional<OutputSelection> parse_outputs(std::string_view list, std::string& error) {
  OutputSelection sel = OutputSelection::none();
  bool any = false;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string_view name = trim(list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (name == "all") {
      sel = OutputSelection::all();
      any = true;
    } else if (!name.empty()) {
      bool found = false;
      for (const auto& o : k_outputs)
        if (o.name == name) {
          sel.set(o.output);
          found = true;
        }
      if (!found) {
        error = fmt::format("--outputs: {}: unknown output `{}`; accepted names (comma-separated): {}",
                            io::escape_for_diagnostic(list), io::escape_for_diagnostic(name), accepted_names());
        return std::nullopt;
      }
      any = true;
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (!any) {
    error = fmt::format("--outputs: {}: must name at least one output; accepted names (comma-separated): {}",
                        io::escape_for_diagnostic(list), accepted_names());
    return std::nullopt;
  }
  return sel;
}

}  // namespace sim
