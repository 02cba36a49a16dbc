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
};

/// The remaining-time model and the loop's bounds.
struct ForecastParams {
  int samples = 100;             ///< K, 1..10000
  std::uint64_t seed = 1;        ///< same seed, same starts
  double spread = 0.5;           ///< s in [0, 1]: a running task's duration is uniform in [L(1-s), L(1+s)]
  libsched::Time horizon = 0;    ///< simulate up to now + horizon (ms); later starts are "never"
};

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
/// arrivals. Deterministic: sample k draws from splitmix64(seed, k) in task id order.
std::vector<std::vector<libsched::Time>> forecast_starts(const std::function<std::unique_ptr<libsched::Scheduler>()>& make,
                                                         libsched::Time now, const std::vector<ForecastTask>& tasks,
                                                         const ForecastParams& params);

}  // namespace sim
