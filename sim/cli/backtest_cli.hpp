// `schedsim backtest SCENARIO --every T --out DIR`: replay a scenario, forecast from a snapshot
// every T seconds with only what was known then, and score the predicted starts against the
// replay's (docs/forecast.md "Backtest").
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include <libsched/registry.hpp>

namespace sim {

/// The command's options (checked by the command line: every_s > 0 and <= 1e9, samples
/// 1..10000, spread 0..1, horizon_s > 0 and <= 1e9, max_snapshots 0..100000, model empirical or
/// uniform).
struct BacktestArgs {
  std::string scenario;         ///< scenario file (traces loaded as `run` does)
  std::string out;              ///< output directory: backtest.json, backtest.csv
  double every_s = 0;           ///< T, seconds between snapshots
  int samples = 8;              ///< K forward simulations per snapshot
  std::uint64_t seed = 1;       ///< seeds the forecast's draws
  double spread = 0.5;          ///< the uniform model's width
  std::string model = "empirical";  ///< empirical | uniform
  double horizon_s = 604800;    ///< each forward simulation covers snapshot + horizon_s (seconds)
  int max_snapshots = 0;        ///< the first N snapshots only (0: all)
};

/// Resolves the scenario (exit 2 on invalid input, one `FILE: PATH: VALUE: RULE` line each),
/// replays it once with the snapshots, writes DIR/backtest.json and DIR/backtest.csv (both or
/// neither) and prints the scores. Returns 0; 2 for invalid input or a broken runtime bound; 1
/// when the output cannot be written; 130/143 when interrupted.
int backtest_command(const BacktestArgs& args, std::ostream& out, std::ostream& err,
                     const libsched::Registry& registry = libsched::Registry::builtin());

}  // namespace sim
