#include "sim/experiments/forecast.hpp"

#include <algorithm>
#include <cmath>

namespace sim {

namespace forecast_detail {

/// splitmix64: the stream of sample k of seed `seed` (the same on every platform).
struct SplitMix {
  std::uint64_t x;
  std::uint64_t next() {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with 53 bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};

}  // namespace forecast_detail

using libsched::kTimeNever;
using libsched::Time;

Time forecast_remaining(Time length, Time elapsed, double spread, double u) {
  const double lo = double(length) * (1.0 - spread);
  const double hi = double(length) * (1.0 + spread);
  const double e = double(elapsed);
  if (hi <= e) return Time(std::llround(u * spread * double(length)));
  const double a = std::max(lo, e);
  return std::max<Time>(0, Time(std::llround(a + u * (hi - a) - e)));
}

std::vector<std::vector<Time>> forecast_starts(const std::function<std::unique_ptr<libsched::Scheduler>()>& make, Time now,
                                               const std::vector<ForecastTask>& tasks, const ForecastParams& params) {
  const std::size_t n = tasks.size();
  std::vector<std::vector<Time>> starts(n, std::vector<Time>(std::size_t(params.samples), kTimeNever));
  const Time limit = now + params.horizon;
  std::size_t waiting = 0;
  for (const auto& t : tasks) waiting += t.start < 0 ? 1 : 0;
  for (int k = 0; k < params.samples; ++k) {
    forecast_detail::SplitMix rng{params.seed ^ (std::uint64_t(k) * 0xD1B54A32D192ED03ull)};
    rng.next();
    std::unique_ptr<libsched::Scheduler> s = make();
    std::vector<Time> end(n, kTimeNever);
    for (std::size_t i = 0; i < n; ++i)
      if (tasks[i].start >= 0) end[i] = now + forecast_remaining(tasks[i].length, now - tasks[i].start, params.spread, rng.uniform());
    std::size_t started = 0;
    for (Time t = now;;) {
      for (std::size_t i = 0; i < n; ++i)
        if (end[i] <= t) {
          s->release(libsched::TaskId(std::int32_t(i)), t);
          end[i] = kTimeNever;
        }
      const libsched::ScheduleResult res = s->schedule(t);
      for (const auto& p : res.preemptions) {
        end[p.victim.index()] = kTimeNever;
        s->enqueue(p.victim, t);
      }
      for (libsched::TaskId id : res.started) {
        if (!s->is_running(id)) continue;  // started, then preempted in the same call
        const std::size_t i = id.index();
        end[i] = t + tasks[i].length;
        if (tasks[i].start < 0 && starts[i][std::size_t(k)] == kTimeNever) {
          starts[i][std::size_t(k)] = t;
          ++started;
        }
      }
      if (started == waiting) break;
      Time next = *std::min_element(end.begin(), end.end());
      if (const Time e = s->next_eligibility_change(t); e != kTimeNever && e > t) next = std::min(next, e);
      if (next == kTimeNever || next > limit) break;
      t = std::max(next, t);
    }
  }
  return starts;
}

}  // namespace sim
