// `schedsim forecast SNAPSHOT.json --out DIR`: when each waiting task of a decide snapshot will
// start, as quantiles over K forward simulations (docs/forecast.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include <libsched/registry.hpp>

namespace sim {

/// The command's options (checked by the command line: samples 1..10000, spread 0..1,
/// horizon_s > 0 and <= 1e9).
struct ForecastArgs {
  std::string snapshot;         ///< path of the decide snapshot
  std::string out;              ///< output directory
  int samples = 100;            ///< K forward simulations
  std::uint64_t seed = 1;       ///< seeds the sampled remaining times
  double spread = 0.5;          ///< s: a running task's duration is uniform in [L(1-s), L(1+s)]
  double horizon_s = 604800;    ///< simulate up to now_s + horizon_s (seconds)
};

/// Reads the snapshot, simulates forward, writes DIR/forecast.csv and DIR/forecast.json (both or
/// neither). Returns 0; 2 for invalid input (`FILE: PATH: VALUE: RULE` lines on `err`, nothing
/// written); 1 when the output cannot be written or the file cannot be read as a file; 130/143
/// when interrupted.
int forecast_command(const ForecastArgs& args, std::ostream& out, std::ostream& err,
                     const libsched::Registry& registry = libsched::Registry::builtin());

}  // namespace sim
