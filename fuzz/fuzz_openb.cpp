// Harness 2a: bytes -> an openb CSV file -> read as node list and as pod list (strict and
// --skip-bad-rows), then merged into a scenario and simulated like `schedsim run` does.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_trace_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim::io;
  if (fuzz::skip_huge_numbers(data, size)) return 0;
  const std::string path = fuzz::write_temp(data, size, "openb.csv");
  TraceCfg nodes_only;
  nodes_only.format = "openb";
  nodes_only.nodes = path;
  fuzz::load_both_ways(nodes_only);
  TraceCfg pods;
  pods.format = "openb";
  pods.path = path;
  fuzz::load_both_ways(pods);
  pods.resource_type = size % 2 ? "reserved" : "spot";  // a second mapping of qos / pool
  pods.pool = "trace";
  pods.time_scale = 0.5;
  pods.limit = 8;
  fuzz::load_both_ways(pods);
  // Both lists from the same file (a header may carry both column sets), then simulate.
  TraceCfg both;
  both.format = "openb";
  both.nodes = path;
  both.path = path;
  fuzz::merge_and_simulate(both);
  return 0;
}
