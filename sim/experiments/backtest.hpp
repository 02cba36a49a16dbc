// The backtest of `schedsim backtest` (docs/forecast.md "Backtest"): replay a scenario once, take
// a decide snapshot every T seconds, forecast from each with only what was known then (runtime
// estimates, elapsed times, the run times of the tasks finished before it) and compare every
// waiting task's predicted start with its start in the replay, for the forecast and for a
// baseline (one deterministic replay with the estimates, what `squeue --start` does).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <libsched/libsched.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/experiments/forecast.hpp"
#include "sim/io/scenario.hpp"

namespace sim {

/// The backtest's options (checked by the command line).
struct BacktestParams {
  libsched::Time every = 0;      ///< T: a snapshot at every k T, k >= 1 (ms, > 0)
  int samples = 8;               ///< K forward simulations per snapshot (1..10000)
  std::uint64_t seed = 1;        ///< seeds the forecast's draws (the same seed at every snapshot)
  bool empirical = true;         ///< the empirical model (durations known at the snapshot); false: uniform with `spread`
  double spread = 0.5;           ///< the uniform model's width (0..1)
  libsched::Time horizon = 0;    ///< each forward simulation stops at snapshot + horizon (ms, > 0)
  int max_snapshots = 0;         ///< at most this many snapshots, the first ones (0: no limit)
};

/// One snapshot's tasks as the forecast sees them (task i has TaskId i in `make()`'s Scheduler).
struct BacktestSnapshot {
  std::vector<ForecastTask> tasks;  ///< estimated = the snapshot gives runtime_estimate_s (then length = it), else length 0
  std::vector<std::string> names;   ///< the tasks' names, same order
  std::function<std::unique_ptr<libsched::Scheduler>()> make;  ///< a fresh Scheduler in the snapshot's state
};

/// Reads a decide snapshot (one JSON line, Simulator::decide_snapshot). Throws std::runtime_error
/// when it is not a valid snapshot.
using BacktestReader = std::function<BacktestSnapshot(const std::string& text)>;

/// One task waiting at one snapshot. Times in ms on the scenario's clock; kTimeNever: never /
/// not by the horizon.
struct BacktestRow {
  libsched::Time snapshot = 0;
  std::string task;
  libsched::Time actual = libsched::kTimeNever;    ///< its next start in the replay
  libsched::Time baseline = libsched::kTimeNever;  ///< the baseline's predicted start
  libsched::Time p10 = libsched::kTimeNever, p50 = libsched::kTimeNever, p90 = libsched::kTimeNever;  ///< the forecast's quantiles
};

/// Scores of one predictor over the rows whose task started in the replay. A prediction past the
/// horizon counts as snapshot + horizon for the error; for the coverage an empty P90 is +infinity.
struct BacktestScores {
  double within_1min = 0, within_10min = 0, within_1h = 0;  ///< shares of rows with |predicted - actual| <= 60, 600, 3600 s
  double mae_s = 0;                                         ///< mean |predicted - actual| (seconds)
  double p10_p90_coverage = 0;                              ///< share with P10 <= actual <= P90 (baseline: predicted == actual)
};

struct BacktestResult {
  std::vector<BacktestRow> rows;   ///< snapshot order, then queue order
  int snapshots = 0;               ///< snapshots taken
  int snapshots_skipped = 0;       ///< taken but not forecast: a task without estimate and no task finished yet
  std::size_t compared = 0;        ///< rows whose task started in the replay (the scores' rows)
  BacktestScores forecast, baseline;
};

/// Scores `rows` (those with a known actual start); `horizon` in ms. Pure: the test's arithmetic.
BacktestScores backtest_scores(const std::vector<BacktestRow>& rows, libsched::Time horizon, bool baseline);

/// Replays `sc` once (options `opt`; its observer is set here), takes a snapshot at every k T
/// (up to max_snapshots), reads it with `read` and forecasts from it: the baseline is one
/// forward simulation with the uniform model and spread 0; the forecast K with the chosen model.
/// A task without a runtime estimate gets as its length the median run time of the tasks finished
/// by then (none finished: the snapshot is skipped). The empirical model's lists are the tasks
/// finished by the snapshot (a succeeded attempt that ended at or before it): run time = end -
/// start, and run time / estimate for those with an estimate. Throws what the Simulator throws
/// (SimulationLimitError, Interrupted) and the reader's std::runtime_error.
BacktestResult backtest(io::Scenario sc, SimOptions opt, const BacktestParams& params, const BacktestReader& read);

}  // namespace sim
