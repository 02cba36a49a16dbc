#include "sim/experiments/forecast.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

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

Time empirical_duration(const EmpiricalDurations& e, Time length, bool estimated, Time elapsed, double u) {
  const bool scaled = estimated && !e.ratios.empty();
  const std::size_t n = scaled ? e.ratios.size() : e.durations.size();
  if (n == 0) return elapsed >= 0 ? std::max(length, elapsed) : length;
  const auto value = [&](std::size_t j) -> double { return scaled ? e.ratios[j] * double(length) : double(e.durations[j]); };
  if (elapsed < 0) return Time(std::llround(value(std::min(n - 1, std::size_t(u * double(n))))));
  // First candidate longer than elapsed (the candidates are sorted: binary search).
  std::size_t lo = 0, hi = n;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (value(mid) > double(elapsed)) hi = mid;
    else lo = mid + 1;
  }
  if (lo == n) return elapsed + Time(std::llround(u * double(elapsed)));
  return std::max(elapsed, Time(std::llround(value(std::min(n - 1, lo + std::size_t(u * double(n - lo)))))));
}

std::vector<std::vector<Time>> forecast_starts(const std::function<std::unique_ptr<libsched::Scheduler>()>& make, Time now,
                                               const std::vector<ForecastTask>& tasks, const ForecastParams& params) {
  const std::size_t n = tasks.size();
  std::vector<std::vector<Time>> starts(n, std::vector<Time>(std::size_t(params.samples), kTimeNever));
  const Time limit = now + params.horizon;
  std::size_t waiting = 0;
  for (const auto& t : tasks) waiting += t.start < 0 ? 1 : 0;
  using Ending = std::pair<Time, std::size_t>;  // (end, task): a min-heap with stale entries skipped
  std::vector<Ending> heap;
  std::vector<std::size_t> due;
  for (int k = 0; k < params.samples; ++k) {
    forecast_detail::SplitMix rng{params.seed ^ (std::uint64_t(k) * 0xD1B54A32D192ED03ull)};
    rng.next();
    std::unique_ptr<libsched::Scheduler> s = make();
    std::vector<Time> end(n, kTimeNever);
    std::vector<Time> length(n);
    heap.clear();
    for (std::size_t i = 0; i < n; ++i) {
      const ForecastTask& ft = tasks[i];
      length[i] = ft.length;
      if (params.empirical) {
        const double u = rng.uniform();
        const Time d = empirical_duration(*params.empirical, ft.length, ft.estimated, ft.start >= 0 ? now - ft.start : -1, u);
        if (ft.start >= 0) end[i] = now + std::max<Time>(0, d - (now - ft.start));
        else length[i] = d;
      } else if (ft.start >= 0) {
        end[i] = now + forecast_remaining(ft.length, now - ft.start, params.spread, rng.uniform());
      }
      if (end[i] != kTimeNever) heap.emplace_back(end[i], i);
    }
    std::make_heap(heap.begin(), heap.end(), std::greater<>());
    std::size_t started = 0;
    for (Time t = now;;) {
      // The tasks ending by t, released in task order.
      due.clear();
      while (!heap.empty() && heap.front().first <= t) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<>());
        const auto [e, i] = heap.back();
        heap.pop_back();
        if (end[i] == e) due.push_back(i);
      }
      std::sort(due.begin(), due.end());
      due.erase(std::unique(due.begin(), due.end()), due.end());
      for (std::size_t i : due) {
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
        end[i] = t + length[i];
        heap.emplace_back(end[i], i);
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
        if (tasks[i].start < 0 && starts[i][std::size_t(k)] == kTimeNever) {
          starts[i][std::size_t(k)] = t;
          ++started;
        }
      }
      if (started == waiting) break;
      while (!heap.empty() && end[heap.front().second] != heap.front().first) {  // stale: preempted or ended
        std::pop_heap(heap.begin(), heap.end(), std::greater<>());
        heap.pop_back();
      }
      Time next = heap.empty() ? kTimeNever : heap.front().first;
      if (const Time e = s->next_eligibility_change(t); e != kTimeNever && e > t) next = std::min(next, e);
      if (next == kTimeNever || next > limit) break;
      t = std::max(next, t);
    }
  }
  return starts;
}

}  // namespace sim
