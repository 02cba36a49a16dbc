// sim::detail::UtilizationAccumulator (sim/engine/utilization_sums.hpp): the summary's allocated
// and available GPU- and vCPU-time, summed as the snapshots are taken, must equal to the last bit
// the plain long double loop over the snapshot log, also when snapshots follow the makespan,
// with a measurement window, and when integers cannot give the sums. A run without a time series
// (SimOptions::keep_snapshots false) writes the same summary.json and refuses the files that need one.
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "builders.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/engine/utilization_sums.hpp"
#include "sim/experiments/synthetic.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {
namespace {

using sim::Snapshot;
using sim::detail::UtilizationAccumulator;
using sim::detail::UtilizationSums;
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

/// The reference: each snapshot's values held from its time (at least `lo`) to the next
/// snapshot's (at most `makespan` and `hi`), added in long double in snapshot order.
template <class Snapshots>
UtilizationSums reference(const Snapshots& snaps, std::int64_t lo, std::int64_t hi, std::int64_t makespan) {
  UtilizationSums u;
  for (auto it = snaps.begin(), end = snaps.end(); it != end;) {
    const Snapshot s = *it;  // a copy: a log's iterator decodes the next one in place
    const std::int64_t t0 = std::max(s.time, lo);
    std::int64_t t1 = ++it != end ? it->time : makespan;
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

void check_equal(const UtilizationSums& got, const UtilizationSums& want) {
  CHECK(got.gpu_alloc == want.gpu_alloc);
  CHECK(got.gpu_up == want.gpu_up);
  CHECK(got.cpu_alloc == want.cpu_alloc);
  CHECK(got.cpu_up == want.cpu_up);
}

/// `n` snapshots at non-decreasing times (gaps up to `max_gap` ms, a third of them 0: the
/// same instant again), values up to `max_value`.
std::vector<Snapshot> series(std::mt19937_64& rng, std::size_t n, std::int64_t max_gap, std::int64_t max_value) {
  std::vector<Snapshot> v(n);
  std::int64_t t = std::int64_t(rng() % 1000);
  for (auto& s : v) {
    s.time = t;
    if (rng() % 3 != 0) t += 1 + std::int64_t(rng() % std::uint64_t(max_gap));
    for (auto& g : s.gpu_by_class) g = std::int64_t(rng() % std::uint64_t(max_value / 4 + 1));
    s.gpu_up = std::int64_t(rng() % std::uint64_t(max_value + 1));
    s.cpu_alloc = std::int64_t(rng() % std::uint64_t(max_value + 1));
    s.cpu_up = std::int64_t(rng() % std::uint64_t(max_value + 1));
  }
  return v;
}

/// The series as the log keeps it: a snapshot of the same instant replaces the previous one.
std::vector<Snapshot> as_logged(const std::vector<Snapshot>& v) {
  std::vector<Snapshot> out;
  for (const auto& s : v) {
    if (!out.empty() && out.back().time == s.time) out.back() = s;
    else out.push_back(s);
  }
  return out;
}

/// Pushes `v` into an accumulator over [lo, hi), telling each push a makespan bound that grows
/// at random towards `makespan` (never past it nor past the snapshot's own time), and checks its
/// sums against the reference over the logged series.
void check_series(std::mt19937_64& rng, const std::vector<Snapshot>& v, std::int64_t lo, std::int64_t hi, std::int64_t makespan) {
  UtilizationAccumulator acc(lo, hi);
  std::int64_t bound = 0;
  for (const auto& s : v) {
    if (rng() % 2 == 0) bound = std::max(bound, std::min(s.time, makespan));  // a task ended now
    acc.push(s, bound);
  }
  check_equal(acc.sums(makespan), reference(as_logged(v), lo, hi, makespan));
}

}  // namespace

TEST_CASE("utilization sums kept online equal the long double loop over the log", "[utilization]") {
  std::mt19937_64 rng(38);
  for (int round = 0; round < 50; ++round) {
    CAPTURE(round);
    // Integer sums (values and gaps below 2^32).
    auto v = series(rng, 1 + rng() % 2000, 100000, 4000000);
    const std::int64_t last = v.back().time;
    check_series(rng, v, 0, kNever, last + 500);
    check_series(rng, v, v[v.size() / 3].time + 7, v[v.size() / 2].time + 3, last + 500);  // a window
    check_series(rng, v, 0, kNever, v.front().time);                                     // makespan at the start: nothing
    check_series(rng, v, 0, kNever, v[v.size() / 2].time + 1);  // snapshots after the makespan: clipped
    // A value or gap of 2^32 or more, or a negative value: long double from that term on.
    auto big = series(rng, 1 + rng() % 300, 100000, 4000000);
    big[rng() % big.size()].cpu_up = std::int64_t{1} << 40;
    check_series(rng, big, 0, kNever, big.back().time + 1);
    auto gap = series(rng, 2 + rng() % 300, 100000, 4000000);
    gap.back().time += std::int64_t{1} << 33;
    check_series(rng, gap, 0, kNever, gap.back().time + 1);
    auto negative = series(rng, 1 + rng() % 300, 100000, 4000000);
    negative[rng() % negative.size()].gpu_by_class[2] = -5;
    check_series(rng, negative, 0, kNever, negative.back().time + 1);
  }
  // Sums past 2^64 (values and gaps just below 2^32): the integers would wrap, the loop rounds;
  // the result is still the loop's.
  std::vector<Snapshot> wrap(40);
  for (std::size_t i = 0; i < wrap.size(); ++i) {
    wrap[i].time = std::int64_t(i) * 4000000000LL;
    wrap[i].gpu_up = wrap[i].cpu_up = 4000000000LL;
  }
  const std::int64_t end = wrap.back().time + 4000000000LL;
  check_series(rng, wrap, 0, kNever, end);
  UtilizationAccumulator acc(0, kNever);
  for (const auto& s : wrap) acc.push(s, s.time);
  CHECK(acc.sums(end).gpu_up > 1.8e19L);
  // Nothing pushed.
  check_equal(UtilizationAccumulator(0, kNever).sums(100), reference(std::vector<Snapshot>{}, 0, kNever, 100));
}

TEST_CASE("utilization sums: an interval waits only while it may pass the makespan", "[utilization]") {
  // Held values 1000 from 0, 2000 from 10, 3000 from 20; the makespan turns out to be 15.
  auto snap = [](std::int64_t t, std::int64_t up) {
    Snapshot s;
    s.time = t;
    s.gpu_up = up;
    return s;
  };
  UtilizationAccumulator acc(0, kNever);
  acc.push(snap(0, 1000), 0);
  acc.push(snap(10, 2000), 10);  // a task ended at 10: [0, 10) is settled
  CHECK(acc.pending() == 0);
  acc.push(snap(20, 3000), 10);  // nothing ended since: [10, 20) may pass the makespan
  CHECK(acc.pending() == 1);
  CHECK(acc.sums(15).gpu_up == 1000.0L * 10 + 2000.0L * 5);
  CHECK(acc.sums(30).gpu_up == 1000.0L * 10 + 2000.0L * 10 + 3000.0L * 10);
  acc.push(snap(25, 3000), 25);  // a task ended at 25: both waiting intervals are settled
  CHECK(acc.pending() == 0);
  CHECK(acc.sums(25).gpu_up == 1000.0L * 10 + 2000.0L * 10 + 3000.0L * 5);
}

TEST_CASE("a run's utilization sums are the loop's over its snapshot log", "[utilization]") {
  // A queue of gangs with a node failure, a task that never fits submitted after the last end
  // (a snapshot after the makespan), a measurement window, a run cut by until_s.
  std::vector<sim::io::Scenario> cases;
  {
    sim::SyntheticOptions o;
    o.nodes = 30;
    o.tasks = 400;
    cases.push_back(sim::synthetic_scenario(o));
  }
  auto sc = simtest::cluster(3);
  for (int i = 0; i < 12; ++i) sc.tasks.push_back(simtest::task("t" + std::to_string(i), 7.0 * i, 100 + 13 * i, i % 3));
  sc.events.push_back(simtest::node_event(50, "node_down", "a100-1"));
  sc.events.push_back(simtest::node_event(90, "node_up", "a100-1"));
  sc.tasks.push_back(simtest::task("never-fits", 50000, 10, 5));  // submitted after every other task ended
  cases.push_back(sc);
  sc.measure = sim::io::MeasureCfg{40, 300};
  cases.push_back(sc);
  sc.measure.reset();
  sc.until_s = 200;
  cases.push_back(sc);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    sim::Simulator s(cases[i]);
    s.run();
    REQUIRE(s.snapshots().size() > 3);
    if (i == 1) REQUIRE(s.snapshots().back().time > s.makespan());  // the case this test is for
    check_equal(s.utilization_sums(), reference(s.snapshots(), s.window_start(), s.window_end(), s.makespan()));
    sim::SimOptions lean;
    lean.keep_snapshots = false;
    sim::Simulator l(cases[i], lean);
    l.run();
    CHECK(l.snapshots().empty());
    CHECK(l.summary_json() == s.summary_json());
  }
}

TEST_CASE("a run without a time series refuses timeseries.csv and timeline.json", "[utilization]") {
  sim::SimOptions lean;
  lean.keep_snapshots = false;
  auto sc = simtest::cluster(1);
  sc.tasks.push_back(simtest::task("a", 0, 10));
  sim::Simulator s(sc, lean);
  s.run();
  const auto dir = std::filesystem::temp_directory_path() / "schedsim-utilization-test-nonexistent";
  for (sim::Output o : {sim::Output::timeseries, sim::Output::timeline}) {
    auto which = sim::OutputSelection::none();
    which.set(o);
    CHECK_THROWS_AS(s.write_outputs(dir.string(), which), std::logic_error);
  }
  CHECK_FALSE(std::filesystem::exists(dir));
  CHECK_THROWS_AS(s.timeline_json(), std::logic_error);
  CHECK_NOTHROW(s.summary_json());
}

}  // namespace SCHEDSIM_UNITY_ID
