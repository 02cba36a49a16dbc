// Harness 2c: bytes -> an SWF file (plain, or gzip when it starts with 1f 8b) -> read_swf via
// load_trace (strict and --skip-bad-rows, several procs_per_node), then merged into a scenario
// and simulated like `schedsim run` does.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_trace_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim::io;
  if (fuzz::skip_huge_numbers(data, size)) return 0;
  const std::string path = fuzz::write_temp(data, size, "trace.swf");
  TraceCfg cfg;
  cfg.format = "swf";
  cfg.path = path;
  const bool huge = fuzz::load_both_ways(cfg).nodes.size() > fuzz::kMaxFuzzNodes;
  cfg.procs_per_node = 1 + static_cast<int>(size % 64);
  cfg.nodes = "none";
  cfg.limit = 16;
  cfg.time_scale = 0.001;
  fuzz::load_both_ways(cfg);
  if (huge) return 0;
  TraceCfg sim_cfg;
  sim_cfg.format = "swf";
  sim_cfg.path = path;
  sim_cfg.procs_per_node = cfg.procs_per_node;
  fuzz::merge_and_simulate(sim_cfg);
  return 0;
}
