// Internal to sim/outputs (writers.cpp): the allocated and available GPU- and vCPU-time over a
// run's snapshots (summary.json allocation_ratio, cpu_allocation_ratio).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "sim/engine/snapshot_log.hpp"

namespace sim::detail {

/// Sums over the snapshots of value x time held, in milli-GPU x ms and milli-vCPU x ms.
struct UtilizationSums {
  long double gpu_alloc = 0, gpu_up = 0, cpu_alloc = 0, cpu_up = 0;
};

/// The sums over [lo, min(hi, makespan)): each snapshot's values held from its time (at least
/// `lo`) to the next snapshot's (at most `makespan` and `hi`), added in long double in snapshot
/// order. The reference for utilization_sums. No errors.
template <class Snapshots>
UtilizationSums utilization_sums_long_double(const Snapshots& snaps, libsched::Time lo, libsched::Time hi,
                                             libsched::Time makespan) {
  UtilizationSums u;
  for (auto it = snaps.begin(), end = snaps.end(); it != end;) {
    const Snapshot s = *it;  // a copy: the iterator decodes the next one in place
    const libsched::Time t0 = std::max(s.time, lo);
    libsched::Time t1 = ++it != end ? it->time : makespan;
    t1 = std::min({t1, makespan, hi});
    if (t1 <= t0) continue;
    const std::int64_t a = s.gpu_by_class[0] + s.gpu_by_class[1] + s.gpu_by_class[2] + s.gpu_by_class[3];
    u.gpu_alloc += (long double)a * (long double)(t1 - t0);
    u.gpu_up += (long double)s.gpu_up * (long double)(t1 - t0);
    u.cpu_alloc += (long double)s.cpu_alloc * (long double)(t1 - t0);
    u.cpu_up += (long double)s.cpu_up * (long double)(t1 - t0);
  }
  return u;
}

/// utilization_sums_long_double's result, summed in 64-bit integers when every value and
/// duration is below 2^32 and no sum wraps: then every product and partial sum the long double
/// loop makes is an integer below 2^64, which a long double of 64 mantissa bits holds exactly,
/// so both give the same sums. Otherwise (or with a narrower long double) the long double loop
/// itself. (The long double accumulators live in memory, and each of their updates stalls.)
template <class Snapshots>
UtilizationSums utilization_sums(const Snapshots& snaps, libsched::Time lo, libsched::Time hi, libsched::Time makespan) {
  if constexpr (std::numeric_limits<long double>::digits < 64) {
    return utilization_sums_long_double(snaps, lo, hi, makespan);
  } else {
    std::uint64_t sum[4] = {0, 0, 0, 0};
    bool exact = true;
    for (auto it = snaps.begin(), end = snaps.end(); it != end && exact;) {
      const Snapshot s = *it;
      const libsched::Time t0 = std::max(s.time, lo);
      libsched::Time t1 = ++it != end ? it->time : makespan;
      t1 = std::min({t1, makespan, hi});
      if (t1 <= t0) continue;
      const std::uint64_t dt = std::uint64_t(t1 - t0);
      const std::int64_t v[4] = {s.gpu_by_class[0] + s.gpu_by_class[1] + s.gpu_by_class[2] + s.gpu_by_class[3], s.gpu_up,
                                 s.cpu_alloc, s.cpu_up};
      if ((dt | std::uint64_t(v[0]) | std::uint64_t(v[1]) | std::uint64_t(v[2]) | std::uint64_t(v[3])) >> 32) {
        exact = false;  // (a negative value too: its high bits are set)
        break;
      }
      for (int k = 0; k < 4; ++k) {
        const std::uint64_t p = std::uint64_t(v[k]) * dt;  // < 2^64: both factors < 2^32
        sum[k] += p;
        if (sum[k] < p) exact = false;  // wrapped
      }
    }
    if (!exact) return utilization_sums_long_double(snaps, lo, hi, makespan);
    return {(long double)sum[0], (long double)sum[1], (long double)sum[2], (long double)sum[3]};
  }
}

}  // namespace sim::detail
