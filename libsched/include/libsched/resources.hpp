// Resources: a small dense integer vector (milli-GPU, milli-CPU, MiB) and time units.
//
// Integers only, never floating point, so that accounting is exact and outputs are
// reproducible (docs/architecture: KAI-Scheduler's resource vector).
#pragma once

#include <cstdint>
#include <algorithm>
#include <limits>

namespace libsched {

/// Simulated time in milliseconds since the start of the run. libsched never reads a clock:
/// every `now` comes in as an argument.
using Time = std::int64_t;
inline constexpr Time kTimeNever = std::numeric_limits<Time>::max();
inline constexpr Time kMsPerSecond = 1000;

/// Seconds (as in scenario files) to Time, rounded to the nearest millisecond.
constexpr Time from_seconds(double s) {
  return static_cast<Time>(s * 1000.0 + (s >= 0 ? 0.5 : -0.5));
}
constexpr double to_seconds(Time t) { return static_cast<double>(t) / 1000.0; }

/// An amount of resources in every dimension the scheduler accounts for.
/// Units: `gpu_milli` milli-GPU (1000 = one whole GPU), `cpu_milli` milli-vCPU, `mem_mib` MiB.
struct Resources {
  std::int64_t gpu_milli = 0;
  std::int64_t cpu_milli = 0;
  std::int64_t mem_mib = 0;

  constexpr Resources& operator+=(const Resources& o) {
    gpu_milli += o.gpu_milli;
    cpu_milli += o.cpu_milli;
    mem_mib += o.mem_mib;
    return *this;
  }
  constexpr Resources& operator-=(const Resources& o) {
    gpu_milli -= o.gpu_milli;
    cpu_milli -= o.cpu_milli;
    mem_mib -= o.mem_mib;
    return *this;
  }
  constexpr Resources operator*(std::int64_t k) const { return {gpu_milli * k, cpu_milli * k, mem_mib * k}; }
  friend constexpr Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend constexpr Resources operator-(Resources a, const Resources& b) { return a -= b; }
  friend constexpr bool operator==(const Resources&, const Resources&) = default;

  /// True when every dimension of `request` is <= the same dimension of `free`.
  static constexpr bool fits(const Resources& request, const Resources& free) {
    return request.gpu_milli <= free.gpu_milli && request.cpu_milli <= free.cpu_milli &&
           request.mem_mib <= free.mem_mib;
  }
  /// True when some dimension of *this is larger than the same dimension of `limit`.
  constexpr bool exceeds_any(const Resources& limit) const { return !fits(*this, limit); }
  constexpr bool any_negative() const { return gpu_milli < 0 || cpu_milli < 0 || mem_mib < 0; }
  /// Largest share of `total` that this amount takes in any dimension (DRF's dominant share);
  /// dimensions where `total` is zero are skipped.
  constexpr double dominant_share(const Resources& total) const {
    double s = 0;
    if (total.gpu_milli > 0) s = std::max(s, double(gpu_milli) / double(total.gpu_milli));
    if (total.cpu_milli > 0) s = std::max(s, double(cpu_milli) / double(total.cpu_milli));
    if (total.mem_mib > 0) s = std::max(s, double(mem_mib) / double(total.mem_mib));
    return s;
  }
};

}  // namespace libsched
