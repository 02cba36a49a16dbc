// Harness 4: bytes -> scenario JSON text -> parse + validate -> simulate, exactly as
// `schedsim run SCENARIO` does (minus the output files): no bound other than the scenario's own
// `until_s`, so a valid scenario that never ends shows up as a libFuzzer timeout. Scenarios with
// `traces` are skipped (the data root is empty). The five output files are written to a scratch
// folder (write_outputs) and the attempts checked (fuzz_common.hpp).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
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
  ParseResult r;
  try {
    r = parse_scenario_text(std::string_view(reinterpret_cast<const char*>(data), size), label);
  } catch (const nlohmann::json::out_of_range&) {
    // Finding scenario-number-overflow-throws (owned by the scenario harness); hunting aid only.
    const char* e = std::getenv("SCHEDSIM_FUZZ_SKIP_KNOWN");
    if (e && *e == '1') return 0;
    throw;
  }
  fuzz::check_diagnostics(r, label);
  if (!r.ok() || !r.scenario->traces.empty()) return 0;
  fuzz::simulate_and_check(*r.scenario, std::nullopt, /*write_files=*/true);
  return 0;
}
