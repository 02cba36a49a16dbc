// sim::detail::utilization_sums (sim/outputs/utilization.hpp): the summary's allocated and
// available GPU- and vCPU-time summed in integers must equal the long double loop's sums exactly,
// and fall back to that loop when integers cannot give them.
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/outputs/utilization.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {
namespace {

using sim::Snapshot;
using sim::detail::utilization_sums;
using sim::detail::utilization_sums_long_double;

/// `n` snapshots at increasing times (gaps up to `max_gap` ms), values up to `max_value`.
std::vector<Snapshot> series(std::mt19937_64& rng, std::size_t n, std::int64_t max_gap, std::int64_t max_value) {
  std::vector<Snapshot> v(n);
  std::int64_t t = std::int64_t(rng() % 1000);
  for (auto& s : v) {
    s.time = t;
    t += std::int64_t(rng() % std::uint64_t(max_gap + 1));  // (equal times too)
    for (auto& g : s.gpu_by_class) g = std::int64_t(rng() % std::uint64_t(max_value / 4 + 1));
    s.gpu_up = std::int64_t(rng() % std::uint64_t(max_value + 1));
    s.cpu_alloc = std::int64_t(rng() % std::uint64_t(max_value + 1));
    s.cpu_up = std::int64_t(rng() % std::uint64_t(max_value + 1));
  }
  return v;
}

void check_same(const std::vector<Snapshot>& v, std::int64_t lo, std::int64_t hi, std::int64_t makespan) {
  const auto want = utilization_sums_long_double(v, lo, hi, makespan);
  const auto got = utilization_sums(v, lo, hi, makespan);
  CHECK(got.gpu_alloc == want.gpu_alloc);
  CHECK(got.gpu_up == want.gpu_up);
  CHECK(got.cpu_alloc == want.cpu_alloc);
  CHECK(got.cpu_up == want.cpu_up);
}

}  // namespace

TEST_CASE("utilization sums in integers equal the long double loop's", "[utilization]") {
  std::mt19937_64 rng(38);
  constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  for (int round = 0; round < 50; ++round) {
    // Integer sums (values and gaps below 2^32).
    auto v = series(rng, 1 + rng() % 2000, 100000, 4000000);
    const std::int64_t end = v.back().time + 500;
    check_same(v, 0, kNever, end);
    check_same(v, v[v.size() / 3].time + 7, v[v.size() / 2].time + 3, end);  // a window
    check_same(v, 0, kNever, v.front().time);                                 // makespan at the start: nothing
    // A value or gap of 2^32 or more, or a negative value: the long double loop.
    auto big = series(rng, 1 + rng() % 300, 100000, 4000000);
    big[rng() % big.size()].cpu_up = std::int64_t{1} << 40;
    check_same(big, 0, kNever, big.back().time + 1);
    auto gap = series(rng, 2 + rng() % 300, 100000, 4000000);
    gap.back().time += std::int64_t{1} << 33;
    check_same(gap, 0, kNever, gap.back().time + 1);
    auto negative = series(rng, 1 + rng() % 300, 100000, 4000000);
    negative[rng() % negative.size()].gpu_by_class[2] = -5;
    check_same(negative, 0, kNever, negative.back().time + 1);
  }
  // Sums past 2^64 (values and gaps just below 2^32): the integers wrap, the long double loop
  // rounds; the result is still the loop's.
  std::vector<Snapshot> wrap(40);
  for (std::size_t i = 0; i < wrap.size(); ++i) {
    wrap[i].time = std::int64_t(i) * 4000000000LL;
    wrap[i].gpu_up = wrap[i].cpu_up = 4000000000LL;
  }
  check_same(wrap, 0, kNever, wrap.back().time + 4000000000LL);
  CHECK(utilization_sums(wrap, 0, kNever, wrap.back().time + 4000000000LL).gpu_up > 1.8e19L);
  // No snapshot.
  check_same({}, 0, kNever, 100);
}

}  // namespace SCHEDSIM_UNITY_ID
