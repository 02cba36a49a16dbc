// Shared body of the trace harnesses (openb, philly, swf): the input is one trace file.
#pragma once

#include "fuzz/fuzz_common.hpp"

namespace fuzz {

/// Hunting aid: SCHEDSIM_FUZZ_SKIP_KNOWN=1 makes the trace harnesses look past the open findings
/// (fuzz/findings/) so that a long run can find others.
inline bool skip_known() {
  static const bool on = [] {
    const char* e = std::getenv("SCHEDSIM_FUZZ_SKIP_KNOWN");
    return e && *e == '1';
  }();
  return on;
}

/// With skip_known(): inputs that hold a run of 10 or more digits, the trigger of the integer
/// overflow and huge-allocation findings, are ignored.
inline bool skip_huge_numbers(const std::uint8_t* data, std::size_t size) {
  if (!skip_known()) return false;
  int run = 0;
  for (std::size_t i = 0; i < size; ++i) {
    run = (data[i] >= '0' && data[i] <= '9') ? run + 1 : 0;
    if (run >= 10) return true;
  }
  return false;
}

/// Traces whose header asks for more nodes than this are legal (the reader's own limit is higher)
/// but take seconds per load under ASan: the harnesses read them once and go no further, so that
/// an hour-long run measures the reader rather than one slow input (see docs/fuzzing.md).
inline constexpr std::size_t kMaxFuzzNodes = 100000;

/// Reads `path` as the given TraceCfg with skip_bad_rows, then strictly; only TraceError may
/// come out. Returns what the lenient read gave (empty on TraceError). The strict read is skipped
/// when the lenient one gave more than kMaxFuzzNodes nodes.
inline sim::io::TraceLoad load_both_ways(const sim::io::TraceCfg& cfg) {
  using namespace sim::io;
  TraceLoad lenient;
  try {
    lenient = load_trace(cfg, TraceOptions{true});
  } catch (const TraceError&) {
  }
  if (lenient.nodes.size() > kMaxFuzzNodes) return lenient;
  try {
    (void)load_trace(cfg, TraceOptions{false});
  } catch (const TraceError&) {
  }
  return lenient;
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
  // convert: scenario_to_json, then the user runs it (parse + validate). Bounded: a header may
  // ask for 300000 nodes, which is legal but too slow to re-parse under ASan.
  if (sc.tasks.size() + nodes <= 2000) {
    std::string text;
    try {
      text = scenario_to_json(sc).dump();
    } catch (const nlohmann::json::exception& e) {
      // Finding philly-gpu-mem-invalid-utf8: text from the trace is not checked for UTF-8.
      if (skip_known()) return;
      fail(std::string("convert: scenario_to_json(...).dump() throws: ") + e.what());
    }
    ParseResult r = parse_scenario_text(text, "converted.json");
    check_diagnostics(r, "converted.json");
  }
  if (sc.tasks.size() <= 16 && nodes <= 32) simulate_and_check(sc, 1e9);
}

}  // namespace fuzz
