// Harness 1: bytes -> scenario JSON text -> parse + validate (as `schedsim validate` does, traces
// included). Every problem must come back as a Diagnostic (or a TraceError for the traces):
// nothing may throw out, abort or trip a sanitizer. A valid scenario must also survive the
// documented round trip: parse(scenario_to_json(s)) is valid again and serialises identically.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::isolate_data_root();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim::io;
  const std::string label = "fuzz.json";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ParseResult r = parse_scenario_text(text, label);
  fuzz::check_diagnostics(r, label);
  if (!r.ok()) return 0;

  // Round trip (scenario_json.hpp: "parse(scenario_to_json(s)) yields s again").
  const std::string once = scenario_to_json(*r.scenario).dump();
  ParseResult again = parse_scenario_text(once, label);
  fuzz::check_diagnostics(again, label);
  if (!again.ok()) {
    std::string why;
    for (const auto& d : again.diagnostics) why += "\n  " + d.str();
    fuzz::fail("scenario_to_json output of a valid scenario is invalid:" + why + "\n  json: " + once);
  }
  const std::string twice = scenario_to_json(*again.scenario).dump();
  fuzz::check(once == twice, "round trip changed the scenario:\n  " + once + "\n  " + twice);

  (void)expanded_node_names(r.scenario->cluster);
  // `validate` then loads the traces; the data root is an empty scratch directory, so each one is
  // a TraceError (missing file). Paths that could leave the data root are not tried.
  if (fuzz::traces_are_contained(*r.scenario)) {
    try {
      apply_traces(*r.scenario);
    } catch (const TraceError&) {
    }
  }
  return 0;
}
