// Shared body of the trace harnesses (openb, philly, swf): the input is one trace file.
#pragma once

#include "fuzz/fuzz_common.hpp"

namespace fuzz {

/// Hunting aid: with SCHEDSIM_FUZZ_SKIP_HUGE=1 the trace harnesses ignore inputs that hold a run
/// of 10 or more digits, the trigger of the open findings (integer overflow and huge
/// allocations from absurd counts, fuzz/findings/), so that a long run can look past them.
inline bool skip_huge_numbers(const std::uint8_t* data, std::size_t size) {
  static const bool on = [] {
    const char* e = std::getenv("SCHEDSIM_FUZZ_SKIP_HUGE");
    return e && *e == '1';
  }();
  if (!on) return false;
  int run = 0;
  for (std::size_t i = 0; i < size; ++i) {
    run = (data[i] >= '0' && data[i] <= '9') ? run + 1 : 0;
    if (run >= 10) return true;
  }
  return false;
}

/// Reads `path` as the given TraceCfg both strictly and with skip_bad_rows; only TraceError may
/// come out. Returns what the lenient read gave (empty on TraceError).
inline sim::io::TraceLoad load_both_ways(const sim::io::TraceCfg& cfg) {
  using namespace sim::io;
  try {
    (void)load_trace(cfg, TraceOptions{false});
  } catch (const TraceError&) {
  }
  try {
    return load_trace(cfg, TraceOptions{true});
  } catch (const TraceError&) {
    return {};
  }
}

/// What `schedsim run SCENARIO` does with a scenario whose only content is this trace: merge it
/// (apply_traces), then simulate without a further validation. Also checks that the result can be
/// written by `convert` (scenario_to_json) and parsed again without an exception. Bounded: small
/// traces only.
inline void merge_and_simulate(const sim::io::TraceCfg& cfg) {
  using namespace sim::io;
  Scenario sc;
  sc.name = "fuzz-trace";
  PoolCfg pool;
  pool.name = "trace";
  sc.cluster.pools.push_back(pool);
  sc.traces.push_back(cfg);
  try {
    apply_traces(sc, TraceOptions{true});
  } catch (const TraceError&) {
    return;
  }
  sc.traces.clear();
  std::size_t nodes = 0;
  for (const auto& p : sc.cluster.pools) nodes += p.nodes.size();
  // convert: scenario_to_json, then the user runs it (parse + validate).
  const std::string text = scenario_to_json(sc).dump();
  ParseResult r = parse_scenario_text(text, "converted.json");
  check_diagnostics(r, "converted.json");
  if (sc.tasks.size() <= 16 && nodes <= 32) simulate_and_check(sc, 1e9);
}

}  // namespace fuzz
