// The statistics and argument parsing of the multi-run commands (sim/multirun.hpp,
// sim/multirun_cli.hpp; docs/planning.md "Statistics").
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/experiments/multirun.hpp"
#include "sim/cli/multirun_cli.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

TEST_CASE("student_t_975 matches the tables", "[multirun]") {
  CHECK(sim::student_t_975(1) == Approx(12.706205).epsilon(1e-6));
  CHECK(sim::student_t_975(4) == Approx(2.7764451).epsilon(1e-7));
  CHECK(sim::student_t_975(9) == Approx(2.2621572).epsilon(1e-7));
  CHECK(sim::student_t_975(1000) == Approx(1.9623391).epsilon(1e-6));
  CHECK_THROWS_AS(sim::student_t_975(0), std::invalid_argument);
}

TEST_CASE("summarize: mean, sample std and the t-based 95 % interval", "[multirun]") {
  const std::vector<double> v{1, 2, 3, 4, 5};
  const auto s = sim::summarize(v);
  CHECK(s.n == 5);
  CHECK(s.mean == 3);
  CHECK(s.std == Approx(std::sqrt(2.5)));
  const double half = 2.7764451 * std::sqrt(2.5) / std::sqrt(5.0);  // 1.9632432
  CHECK(s.ci95_low == Approx(3 - half).epsilon(1e-7));
  CHECK(s.ci95_high == Approx(3 + half).epsilon(1e-7));
}

TEST_CASE("summarize: one value or equal values give an interval of width exactly 0", "[multirun]") {
  const std::vector<double> one{4.25};
  const auto s1 = sim::summarize(one);
  CHECK(s1.std == 0);
  CHECK(s1.ci95_low == 4.25);
  CHECK(s1.ci95_high == 4.25);
  const std::vector<double> same(7, 0.1);  // 0.1 * 7 / 7 is not exactly 0.1 in floating point
  const auto s = sim::summarize(same);
  CHECK(s.mean == 0.1);
  CHECK(s.std == 0);
  CHECK(s.ci95_low == 0.1);
  CHECK(s.ci95_high == 0.1);
  CHECK_THROWS_AS(sim::summarize(std::vector<double>{}), std::invalid_argument);
  CHECK_THROWS_AS(sim::summarize(std::vector<double>{1, NAN}), std::invalid_argument);
}

TEST_CASE("summarize_paired: the CI of the mean difference b - a", "[multirun]") {
  const std::vector<double> a{10, 12, 14}, b{8, 11, 11};  // differences -2, -1, -3
  const auto p = sim::summarize_paired(a, b);
  CHECK(p.a == 12);
  CHECK(p.b == 10);
  CHECK(p.diff == -2);
  const double half = sim::student_t_975(2) * 1.0 / std::sqrt(3.0);
  CHECK(p.ci95_low == Approx(-2 - half));
  CHECK(p.ci95_high == Approx(-2 + half));
  const auto z = sim::summarize_paired(a, a);
  CHECK(z.diff == 0);
  CHECK(z.ci95_low == 0);
  CHECK(z.ci95_high == 0);
  CHECK_THROWS_AS(sim::summarize_paired(a, std::vector<double>{1}), std::invalid_argument);
}

TEST_CASE("metrics_from_summary: every numeric top-level key but seed, in the documented order", "[multirun]") {
  const auto j = nlohmann::json::parse(R"({"scenario": "x", "seed": 3, "events": 9, "tasks": 2, "mean_wait_s": 1.5,
    "wait_split_s": {"quota": 1}, "new_metric": 4,
    "groups": {"tenant": {"a": {"tasks": 2, "mean_wait_s": 1.5}}, "user": {"u": {"tasks": 2}}}})");
  const auto m = sim::metrics_from_summary(j);
  CHECK(m.seed == 3);
  REQUIRE(m.scalars.size() == 4);
  CHECK(m.scalars[0].first == "tasks");
  CHECK(m.scalars[1].first == "mean_wait_s");
  CHECK(m.scalars[2].first == "events");
  CHECK(m.scalars[3].first == "new_metric");
  REQUIRE(m.groups.count("tenant") == 1);
  REQUIRE(m.groups.count("user") == 1);  // every dimension is read (compare_groups.csv, DIMENSION[KEY].METRIC)
  CHECK(m.groups.at("user").at("u")[0].second == 2);
  CHECK(m.groups.count("pool") == 0);  // absent from the summary
  const auto& a = m.groups.at("tenant").at("a");
  REQUIRE(a.size() == sim::group_metric_names().size());
  CHECK(a[0].second == 2);
  CHECK(a[5].first == "mean_wait_s");
  CHECK(a[5].second == 1.5);
}

TEST_CASE("parallel_for fills every slot and rethrows the smallest failing index", "[multirun]") {
  std::vector<int> out(100, -1);
  sim::parallel_for(out.size(), 4, [&](std::size_t i) { out[i] = int(i * i); });
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == int(i * i));
  try {
    sim::parallel_for(50, 3, [](std::size_t i) {
      if (i == 7 || i == 30) throw std::runtime_error("fail " + std::to_string(i));
    });
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "fail 7");
  }
}

TEST_CASE("parse_vary: lists, integer and decimal ranges", "[multirun]") {
  std::string e;
  auto l = sim::parse_vary(R"(tasks[x].specs=["a","b"],["c"],fgd)", 100, e);
  REQUIRE(l);
  CHECK(l->path == "tasks[x].specs");
  CHECK(l->values == std::vector<std::string>{R"(["a","b"])", R"(["c"])", "fgd"});
  CHECK_FALSE(l->range);
  auto r = sim::parse_vary("a.count=1..9:4", 100, e);
  REQUIRE(r);
  CHECK(r->values == std::vector<std::string>{"1", "5", "9"});
  auto d = sim::parse_vary("a.x=0.1..0.3:0.1", 100, e);
  REQUIRE(d);
  CHECK(d->values == std::vector<std::string>{"0.1", "0.2", "0.3"});
  auto one = sim::parse_vary("a.x=2..4", 100, e);
  REQUIRE(one);
  CHECK(one->values == std::vector<std::string>{"2", "3", "4"});
  CHECK_FALSE(sim::parse_vary("a.x=1..5:-1", 100, e));
  CHECK(e == "--vary: a.x=1..5:-1: step `-1` must be a number > 0");
  CHECK_FALSE(sim::parse_vary("a.x=5..1", 100, e));
  CHECK(e == "--vary: a.x=5..1: lo 5 is greater than hi 1");
  CHECK_FALSE(sim::parse_vary("a.x=1..1000", 100, e));
  CHECK(e == "--vary: a.x=1..1000: 1000 values; at most 100 are allowed");
  CHECK_FALSE(sim::parse_vary("a.x", 100, e));
  CHECK(e.rfind("--vary: a.x: expected PATH=", 0) == 0);
  CHECK_FALSE(sim::parse_vary("a.x=1,,2", 100, e));
  CHECK(e == "--vary: a.x=1,,2: value 2 is empty");
}

TEST_CASE("parse_slo and slo_met: the CI bound on the side of the operator", "[multirun]") {
  std::string e;
  auto s = sim::parse_slo("p95_wait_s<=3600", e);
  REQUIRE(s);
  CHECK(s->metric == "p95_wait_s");
  CHECK(s->op == "<=");
  CHECK(s->value == 3600);
  CHECK(sim::slo_met(*s, 0, 3600));
  CHECK_FALSE(sim::slo_met(*s, 0, 3600.5));
  auto g = sim::parse_slo("gpu_allocation_ratio > 0.5", e);
  REQUIRE(g);
  CHECK(g->op == ">");
  CHECK(sim::slo_met(*g, 0.51, 0.9));
  CHECK_FALSE(sim::slo_met(*g, 0.5, 0.9));
  CHECK_FALSE(sim::parse_slo("p95_wait_s=<3", e));
  CHECK_FALSE(sim::parse_slo("p95_wait_s<>3", e));
  CHECK(e == "--slo: p95_wait_s<>3: bad operator `<>` (operators <=, <, >=, >)");
  CHECK_FALSE(sim::parse_slo("p95_wait_s<=inf", e));
  CHECK_FALSE(sim::parse_slo("<=3", e));
}

}  // namespace SCHEDSIM_UNITY_ID
