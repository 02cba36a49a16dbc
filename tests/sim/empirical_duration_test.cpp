// sim::empirical_duration and sim::backtest_scores (sim/experiments/forecast.hpp, backtest.hpp;
// docs/forecast.md "Backtest"): a task's duration drawn from the run times of finished tasks,
// and the backtest's scores.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/experiments/backtest.hpp"
#include "sim/experiments/forecast.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using sim::EmpiricalDurations;
using sim::empirical_duration;

TEST_CASE("empirical_duration: a waiting task with an estimate takes L x the ratio at floor(u n)", "[forecast]") {
  const EmpiricalDurations e{{0.25, 0.5, 1.0, 2.0}, {100'000}};
  CHECK(empirical_duration(e, 1'000'000, true, -1, 0.0) == 250'000);
  CHECK(empirical_duration(e, 1'000'000, true, -1, 0.49) == 500'000);   // floor(1.96) = 1
  CHECK(empirical_duration(e, 1'000'000, true, -1, 0.999) == 2'000'000);
}

TEST_CASE("empirical_duration: a task without an estimate takes the finished tasks' run times", "[forecast]") {
  const EmpiricalDurations e{{0.5}, {100'000, 300'000, 900'000}};
  CHECK(empirical_duration(e, 7'000, false, -1, 0.5) == 300'000);  // floor(1.5) = 1
  // No ratio known: an estimated task takes the run times too.
  const EmpiricalDurations d{{}, {100'000, 300'000}};
  CHECK(empirical_duration(d, 7'000, true, -1, 0.0) == 100'000);
}

TEST_CASE("empirical_duration: a running task takes a run time longer than its elapsed time", "[forecast]") {
  const EmpiricalDurations e{{}, {100'000, 300'000, 900'000, 1'200'000}};
  // Elapsed 200 s: candidates 300, 900, 1200 s; u 0.5 picks floor(1.5) = 1 of them: 900 s.
  CHECK(empirical_duration(e, 0, false, 200'000, 0.5) == 900'000);
  CHECK(empirical_duration(e, 0, false, 200'000, 0.0) == 300'000);
  // Elapsed 300 s exactly: only strictly longer ones (900, 1200 s).
  CHECK(empirical_duration(e, 0, false, 300'000, 0.0) == 900'000);
}

TEST_CASE("empirical_duration: past every run time, it ends within as long again as it ran", "[forecast]") {
  const EmpiricalDurations e{{}, {100'000, 300'000}};
  CHECK(empirical_duration(e, 0, false, 400'000, 0.25) == 500'000);  // 400 + 0.25 x 400 s
}

TEST_CASE("empirical_duration: nothing finished yet, the task's length (a running one never shorter than its elapsed time)", "[forecast]") {
  const EmpiricalDurations none;
  CHECK(empirical_duration(none, 1'000'000, true, -1, 0.7) == 1'000'000);
  CHECK(empirical_duration(none, 1'000'000, true, 400'000, 0.7) == 1'000'000);
  CHECK(empirical_duration(none, 1'000'000, true, 1'500'000, 0.7) == 1'500'000);
}

TEST_CASE("backtest_scores: shares, mean absolute error and coverage over the rows with a known start", "[backtest]") {
  using libsched::kTimeNever;
  std::vector<sim::BacktestRow> rows(4);
  // Errors of the forecast (P50): 30 s, 1200 s, a prediction past the horizon counted as
  // snapshot + horizon = 10000 s (error 10000 - 4000 = 6000 s); the last row never started.
  rows[0] = {0, "a", 100'000, 100'000, 50'000, 130'000, 200'000};
  rows[1] = {0, "b", 1'000'000, 1'000'000, 2'000'000, 2'200'000, 3'000'000};
  rows[2] = {0, "c", 4'000'000, 9'000'000, 3'000'000, kTimeNever, kTimeNever};
  rows[3] = {0, "d", kTimeNever, 1'000, 1'000, 1'000, 1'000};
  const sim::BacktestScores f = sim::backtest_scores(rows, 10'000'000, false);
  CHECK(f.within_1min == Approx(1.0 / 3));
  CHECK(f.within_10min == Approx(1.0 / 3));
  CHECK(f.within_1h == Approx(2.0 / 3));
  CHECK(f.mae_s == Approx((30.0 + 1200.0 + 6000.0) / 3));
  CHECK(f.p10_p90_coverage == Approx(2.0 / 3));  // a: 50 <= 100 <= 200; c: 3000 <= 4000, P90 empty
  // Baseline: errors 0, 0, 5000 s; coverage = exact hits.
  const sim::BacktestScores b = sim::backtest_scores(rows, 10'000'000, true);
  CHECK(b.within_1min == Approx(2.0 / 3));
  CHECK(b.within_1h == Approx(2.0 / 3));
  CHECK(b.mae_s == Approx(5000.0 / 3));
  CHECK(b.p10_p90_coverage == Approx(2.0 / 3));
}

}  // namespace SCHEDSIM_UNITY_ID
