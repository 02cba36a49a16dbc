// The forecast loop of `schedsim forecast` (docs/forecast.md): from a scheduler in a snapshot's
// state, simulate forward K times with sampled remaining run times of the running tasks and
// collect, for every waiting task, the instant it starts in each sample.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <libsched/libsched.hpp>

namespace sim {

/// One task of the snapshot, indexed by TaskId (task i has TaskId i).
struct ForecastTask {
  libsched::Time length = 0;  ///< its run time when it starts, and the centre of its sampled duration while it runs (ms, >= 0)
  libsched::Time start = -1;  ///< a running task: when its attempt started (ms); -1: it waits
  bool estimated = true;      ///< `length` is the task's runtime estimate (the empirical model scales it), else a stand-in
};

/// The empirical duration model (docs/forecast.md "The empirical model"): what finished tasks
/// ran. Both lists sorted ascending; either may be empty.
struct EmpiricalDurations {
  std::vector<double> ratios;               ///< run time / runtime estimate of finished tasks that had an estimate (> 0)
  std::vector<libsched::Time> durations;    ///< run times of finished tasks (ms, >= 0)
};

/// The remaining-time model and the loop's bounds.
struct ForecastParams {
  int samples = 100;             ///< K, 1..10000
  std::uint64_t seed = 1;        ///< same seed, same starts
  double spread = 0.5;           ///< s in [0, 1]: a running task's duration is uniform in [L(1-s), L(1+s)]
  libsched::Time horizon = 0;    ///< simulate up to now + horizon (ms); later starts are "never"
  /// Non-null: the empirical model replaces the uniform one (spread unused); must outlive the call.
  const EmpiricalDurations* empirical = nullptr;
};

/// A task's sampled duration (ms) under the empirical model, `u` in [0, 1) the draw. The
/// candidates: `length` x each ratio when the task is `estimated` and `ratios` is not empty, else
/// the `durations`; none: `length`. A waiting task (`elapsed` < 0) takes candidate floor(u n) of
/// the n sorted ones. A running task takes one uniformly among the candidates longer than
/// `elapsed`; when there is none it ends after a time uniform in [0, elapsed] from now, i.e. its
/// duration is elapsed + u x elapsed. Rounded to the millisecond.
libsched::Time empirical_duration(const EmpiricalDurations& e, libsched::Time length, bool estimated, libsched::Time elapsed, double u);

/// A running task's remaining time (ms) given `elapsed` (ms) of it: its duration D uniform in
/// [lo, hi] = [L(1-s), L(1+s)] conditional on D > elapsed, i.e. D uniform in [max(lo, elapsed),
/// hi], remaining = D - elapsed; when hi <= elapsed (it overran the whole range) remaining is
/// uniform in [0, s L]. `u` in [0, 1) is the uniform draw. s = 0 gives max(L - elapsed, 0) exactly.
libsched::Time forecast_remaining(libsched::Time length, libsched::Time elapsed, double spread, double u);

/// Start times per task and sample: result[i][k] is when task i starts (ms) in sample k, or
/// libsched::kTimeNever when it does not start by now + horizon (always kTimeNever for a task
/// that runs at the snapshot). `make` returns a fresh Scheduler in the snapshot's state (its
/// exceptions propagate). Each sample: the running tasks end at now + their sampled remaining
/// time; at `now` and at every later event (an end, Scheduler::next_eligibility_change) the
/// tasks ending then are released in id order, then schedule() runs; a task that starts runs for
/// its `length`; a preempted task is queued again and later restarts for its whole `length`. No
/// arrivals. Deterministic: sample k draws from splitmix64(seed, k) in task id order (uniform
/// model: one draw per running task; empirical model: one per task, and a task that starts runs
/// for its sampled empirical_duration).
std::vector<std::vector<libsched::Time>> forecast_starts(const std::function<std::unique_ptr<libsched::Scheduler>()>& make,
                                                         libsched::Time now, const std::vector<ForecastTask>& tasks,
                                                         const ForecastParams& params);

}  // namespace sim
