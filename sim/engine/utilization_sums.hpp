// sim::detail::UtilizationAccumulator: the allocated and available GPU- and vCPU-time of a run
// (summary.json allocation_ratio, cpu_allocation_ratio) summed as the snapshots are taken, so a
// run needs no time series to report them (SimOptions::keep_snapshots false). The sums equal, to
// the last bit, those of the plain loop over the run's snapshot log: each snapshot's values times
// the time they were held, added in long double in snapshot order (tests/sim/utilization_test.cpp
// holds that loop and compares the two).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include <libsched/libsched.hpp>

#include "sim/engine/snapshot_log.hpp"

namespace sim::detail {

/// Sums over the snapshots of value x time held, in milli-GPU x ms and milli-vCPU x ms.
struct UtilizationSums {
  long double gpu_alloc = 0, gpu_up = 0, cpu_alloc = 0, cpu_up = 0;
};

/// The sums over [lo, min(hi, makespan)) of each snapshot's values held from its time (at least
/// `lo`) to the next snapshot's (at most the makespan and `hi`), added in snapshot order: in
/// 64-bit integers while every value and duration is below 2^32 and no sum wraps (then each
/// product and partial sum is an integer a 64-bit-mantissa long double holds exactly), in long
/// double from the first term that is not (initialised from the exact integer sums), as the
/// reference loop adds them.
///
/// The makespan is known only at the end, and snapshots may follow it (after the last task
/// ends). push() is told a lower bound of it; an interval that ends at or before the bound is
/// added at once, a later one waits (in order) until the bound passes its end or sums() clips
/// it. O(1) amortised per push; memory: the intervals past the bound.
class UtilizationAccumulator {
 public:
  using Time = libsched::Time;
  /// Sums over the window [lo, hi) (ms; lo <= hi).
  UtilizationAccumulator(Time lo, Time hi) : lo_(lo), hi_(hi) {}

  /// The snapshot `s` of instant s.time (non-decreasing over the calls; a snapshot of the same
  /// instant replaces the previous one), taken when the makespan is known to be at least
  /// `makespan_bound` (ms; non-decreasing over the calls).
  void push(const Snapshot& s, Time makespan_bound) {
    Held h{s.time,
           {s.gpu_by_class[0] + s.gpu_by_class[1] + s.gpu_by_class[2] + s.gpu_by_class[3], s.gpu_up, s.cpu_alloc, s.cpu_up}};
    if (has_last_ && s.time != last_.time) {
      pending_.push_back(Interval{last_, s.time});
      settle(makespan_bound);
    }
    last_ = h;
    has_last_ = true;
  }

  /// The sums with the run's makespan `makespan` (ms; at least every bound given to push).
  UtilizationSums sums(Time makespan) const {
    UtilizationAccumulator a = *this;
    for (std::size_t i = a.head_; i < a.pending_.size(); ++i) a.add(a.pending_[i].held, a.pending_[i].end, makespan);
    if (a.has_last_) a.add(a.last_, makespan, makespan);
    if (a.exact_) return {(long double)a.isum_[0], (long double)a.isum_[1], (long double)a.isum_[2], (long double)a.isum_[3]};
    return {a.lsum_[0], a.lsum_[1], a.lsum_[2], a.lsum_[3]};
  }

  /// Intervals waiting for the makespan (for tests).
  std::size_t pending() const { return pending_.size() - head_; }

 private:
  struct Held {
    Time time;
    std::int64_t v[4];  // allocated milli-GPU (all classes), up milli-GPU, allocated and up milli-vCPU
  };
  struct Interval {
    Held held;
    Time end;  // the next snapshot's time
  };

  // Adds the intervals that end at or before `bound` (<= the makespan, so not clipped by it).
  void settle(Time bound) {
    while (head_ < pending_.size() && pending_[head_].end <= bound) {
      add(pending_[head_].held, pending_[head_].end, pending_[head_].end);
      ++head_;
    }
    if (head_ == pending_.size()) {
      pending_.clear();
      head_ = 0;
    }
  }

  // The reference loop's step for one snapshot: held from h.time to `next`, clipped.
  void add(const Held& h, Time next, Time makespan) {
    const Time t0 = std::max(h.time, lo_);
    const Time t1 = std::min({next, makespan, hi_});
    if (t1 <= t0) return;
    if constexpr (std::numeric_limits<long double>::digits >= 64) {
      if (exact_) {
        const std::uint64_t dt = std::uint64_t(t1 - t0);
        bool ok = ((dt | std::uint64_t(h.v[0]) | std::uint64_t(h.v[1]) | std::uint64_t(h.v[2]) | std::uint64_t(h.v[3])) >> 32) == 0;
        std::uint64_t next_sum[4];
        for (int k = 0; k < 4 && ok; ++k) {
          const std::uint64_t p = std::uint64_t(h.v[k]) * dt;  // < 2^64: both factors < 2^32
          next_sum[k] = isum_[k] + p;
          if (next_sum[k] < p) ok = false;  // wrapped
        }
        if (ok) {
          for (int k = 0; k < 4; ++k) isum_[k] = next_sum[k];
          return;
        }
        // The first term integers cannot give: the loop's sums so far are these integers.
        for (int k = 0; k < 4; ++k) lsum_[k] = (long double)isum_[k];
        exact_ = false;
      }
    } else {
      exact_ = false;
    }
    for (int k = 0; k < 4; ++k) lsum_[k] += (long double)h.v[k] * (long double)(t1 - t0);
  }

  Time lo_, hi_;
  Held last_{};
  bool has_last_ = false;
  std::vector<Interval> pending_;  // [head_, size): closed intervals past the makespan bound, in order
  std::size_t head_ = 0;
  bool exact_ = true;
  std::uint64_t isum_[4] = {0, 0, 0, 0};
  long double lsum_[4] = {0, 0, 0, 0};
};

}  // namespace sim::detail
