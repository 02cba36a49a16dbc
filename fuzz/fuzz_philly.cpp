// Harness 2b: bytes -> a Philly file -> read as machine list and as job trace (strict and
// --skip-bad-rows), then merged into a scenario and simulated like `schedsim run` does.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_trace_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim::io;
  if (fuzz::skip_huge_numbers(data, size)) return 0;
  const std::string path = fuzz::write_temp(data, size, "philly.csv");
  TraceCfg machines;
  machines.format = "philly";
  machines.nodes = path;
  fuzz::load_both_ways(machines);
  TraceCfg jobs;
  jobs.format = "philly";
  jobs.path = path;
  fuzz::load_both_ways(jobs);
  jobs.resource_type = "reserved";
  jobs.pool = "trace";
  jobs.time_scale = 3.0;
  jobs.limit = 4;
  fuzz::load_both_ways(jobs);
  TraceCfg both;
  both.format = "philly";
  both.nodes = path;
  both.path = path;
  fuzz::merge_and_simulate(both);
  return 0;
}
