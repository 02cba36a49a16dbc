// sim::forecast_remaining (sim/experiments/forecast.hpp, docs/forecast.md "The model"): a running
// task's remaining time, uniform around its run time L conditional on its elapsed time.
#include <catch2/catch.hpp>

#include "sim/experiments/forecast.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using sim::forecast_remaining;

TEST_CASE("forecast_remaining: spread 0 is exactly L - elapsed, never negative", "[forecast]") {
  CHECK(forecast_remaining(1'000'000, 400'000, 0.0, 0.73) == 600'000);
  CHECK(forecast_remaining(1'000'000, 1'000'000, 0.0, 0.73) == 0);
  CHECK(forecast_remaining(1'000'000, 1'200'000, 0.0, 0.73) == 0);
}

TEST_CASE("forecast_remaining: D uniform in [max(L(1-s), elapsed), L(1+s)], minus elapsed", "[forecast]") {
  // L 1000 s, s 0.5: [500, 1500]. Elapsed 400 < 500: D = 500 + u 1000.
  CHECK(forecast_remaining(1'000'000, 400'000, 0.5, 0.0) == 100'000);
  CHECK(forecast_remaining(1'000'000, 400'000, 0.5, 0.5) == 600'000);
  // Elapsed 1200 inside the range: D = 1200 + u 300.
  CHECK(forecast_remaining(1'000'000, 1'200'000, 0.5, 0.0) == 0);
  CHECK(forecast_remaining(1'000'000, 1'200'000, 0.5, 0.5) == 150'000);
}

TEST_CASE("forecast_remaining: past the whole range, uniform in [0, s L]", "[forecast]") {
  // L 1000 s, s 0.5, elapsed 2000 >= 1500: remaining u 500 s.
  CHECK(forecast_remaining(1'000'000, 2'000'000, 0.5, 0.5) == 250'000);
  CHECK(forecast_remaining(1'000'000, 1'500'000, 0.5, 0.2) == 100'000);
}

}  // namespace SCHEDSIM_UNITY_ID
