// Spot that behaves like spot (issue 39): a `spot_reclaim` event with a notice, the stochastic
// reclaim model of the `spot_reclaim` section (a Poisson process per node, seeded from the run
// seed) and `checkpoint_on_notice`. Expected values are derived by hand: a reclaim noticed at N
// and evicted at N + notice loses the work since the last save (the last periodic checkpoint, or
// N itself with checkpoint_on_notice), priced at GPUs x hours x the spot price. For the stochastic
// model N is drawn in the test from the reclaim stream's seed and distribution, as the simulator
// draws it (sim::FaultModel::reclaim_stream_seed).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <boost/random/exponential_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "builders.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

using namespace simtest;
using libsched::from_seconds;
using libsched::Time;
using nlohmann::json;

constexpr double k_spot_price = 1.6;  // USD per A100 GPU-hour

/// One 8-GPU node; one spot task `s` of 1 GPU running `duration_s` from 0 with a checkpoint every
/// `checkpoint_s` (0: none) and `resubmissions` resubmissions; spot priced at 1.6 per GPU-hour.
static sim::io::Scenario spot_scenario(double duration_s, double checkpoint_s, bool on_notice, int resubmissions = 1) {
  auto sc = cluster(1);
  auto t = task("s", 0, duration_s, 0, "a100.1x");
  t.resource_type = "spot";
  if (checkpoint_s > 0) t.checkpoint_interval_s = checkpoint_s;
  t.checkpoint_on_notice = on_notice;
  t.fault_tolerance.max_resubmissions = resubmissions;
  sc.tasks = {t};
  sim::io::PricesCfg p;
  p.currency = "USD";
  p.gpu_models["A100"].spot = k_spot_price;
  sc.prices = p;
  return sc;
}

/// A `spot_reclaim` event on a100-0 at `at_s` with `notice_s` of notice.
static sim::io::EventCfg reclaim(double at_s, std::optional<double> notice_s) {
  sim::io::EventCfg e;
  e.at_s = at_s;
  e.kind = "spot_reclaim";
  e.nodes = {"a100-0"};
  e.notice_s = notice_s;
  return e;
}

/// The stochastic model: every A100 node reclaimed at `rate` per node-hour with `notice_s` of notice.
static void reclaim_a100(sim::io::Scenario& sc, double rate, double notice_s) {
  sim::io::SpotReclaimCfg c;
  c.gpu_models["A100"] = {rate, notice_s};
  sc.spot_reclaim = c;
}

/// The first reclaim time (ms) of the first node a model covers, drawn as the simulator draws it.
static Time first_reclaim_ms(std::uint64_t seed, double rate_per_node_h) {
  boost::random::mt19937_64 rng(sim::FaultModel::reclaim_stream_seed(seed));
  boost::random::exponential_distribution<double> d(rate_per_node_h / 3600.0);
  return from_seconds(d(rng));
}

/// Currency of one GPU held `ms` at the spot price.
static double spot_cost(Time ms) { return k_spot_price * double(ms) / 3.6e6; }

TEST_CASE("spot reclaim: after a notice the attempt is evicted and loses the work since its last checkpoint") {
  auto sc = spot_scenario(3600, 600, false);
  sc.events = {reclaim(1000, 120)};
  sim::Simulator s(sc);
  s.run();
  const auto at = s.attempts();
  REQUIRE(at.size() == 2);
  // Noticed at 1000 s, evicted at 1120 s: 1120 s of work, saved floor(1120 / 600) x 600 = 600 s.
  CHECK(at[0]->end == 1'120'000);
  CHECK(sim::to_string(at[0]->end_reason) == "spot_eviction");
  CHECK(at[0]->state == sim::AttemptState::failed);
  CHECK(std::string(at[0]->reason) ==
        "spot eviction: spot capacity reclaimed on a100-0 (notice at 1000 s, 120 s before the eviction)");
  CHECK(at[0]->preemptor.empty());
  CHECK(at[0]->work_done == 1'120'000);
  CHECK(at[0]->lost_work == 520'000);
  CHECK(at[0]->cost == Approx(1.6 * 1120 / 3600));
  CHECK(at[0]->lost_cost == Approx(1.6 * 520 / 3600));
  // Resubmitted at 1120 s (retry_on has spot_eviction) with 3600 - 600 = 3000 s to do.
  CHECK(at[1]->submit == 1'120'000);
  CHECK(at[1]->start == 1'120'000);
  CHECK(at[1]->work_needed == 3'000'000);
  CHECK(at[1]->end == 4'120'000);
  const json j = json::parse(s.summary_json());
  CHECK(j["lost_work_s"] == 520);
  CHECK(j["preemptions"] == 1);
  CHECK(j["cost_lost_work"] == 0.231);                 // 1.6 x 520 / 3600 = 0.2311
  CHECK(j["cost_spot"] == 1.831);                      // 1.6 x (1120 + 3000) / 3600 = 1.8311
}

TEST_CASE("spot reclaim: with checkpoint_on_notice only the work after the notice is lost") {
  auto sc = spot_scenario(3600, 600, true);
  sc.events = {reclaim(1000, 120)};
  sim::Simulator s(sc);
  s.run();
  const auto at = s.attempts();
  REQUIRE(at.size() == 2);
  // Saved at the notice: max(600, 1000) = 1000 s; lost 1120 - 1000 = 120 s.
  CHECK(at[0]->end == 1'120'000);
  CHECK(std::string(at[0]->reason) ==
        "spot eviction: spot capacity reclaimed on a100-0 (notice at 1000 s, 120 s before the eviction; work saved at the notice)");
  CHECK(at[0]->lost_work == 120'000);
  CHECK(at[0]->lost_cost == Approx(1.6 * 120 / 3600));
  CHECK(at[1]->work_needed == 2'600'000);
  CHECK(at[1]->end == 3'720'000);
  const json j = json::parse(s.summary_json());
  CHECK(j["lost_work_s"] == 120);
  CHECK(j["cost_lost_work"] == 0.053);  // 1.6 x 120 / 3600 = 0.0533
  CHECK(j["cost_spot"] == 1.653);       // 1.6 x (1120 + 2600) / 3600 = 1.6533
}

TEST_CASE("spot reclaim: without periodic checkpoints the notice save is the only one") {
  SECTION("without checkpoint_on_notice the whole attempt is lost") {
    auto sc = spot_scenario(3600, 0, false);
    sc.events = {reclaim(1000, 120)};
    sim::Simulator s(sc);
    s.run();
    const auto at = s.attempts();
    REQUIRE(at.size() == 2);
    CHECK(at[0]->lost_work == 1'120'000);
    CHECK(at[0]->lost_cost == Approx(spot_cost(1'120'000)));
    CHECK(at[1]->work_needed == 3'600'000);
  }
  SECTION("with checkpoint_on_notice the 1000 s before the notice are saved") {
    auto sc = spot_scenario(3600, 0, true);
    sc.events = {reclaim(1000, 120)};
    sim::Simulator s(sc);
    s.run();
    const auto at = s.attempts();
    REQUIRE(at.size() == 2);
    CHECK(at[0]->lost_work == 120'000);
    CHECK(at[0]->lost_cost == Approx(spot_cost(120'000)));
    CHECK(at[1]->work_needed == 2'600'000);
  }
}

TEST_CASE("spot reclaim: a periodic checkpoint inside the notice is the last save") {
  // Noticed at 1150 s, evicted at 1270 s; checkpoint at 1200 s > the notice: lost 70 s.
  auto sc = spot_scenario(3600, 600, true);
  sc.events = {reclaim(1150, 120)};
  sim::Simulator s(sc);
  s.run();
  const auto at = s.attempts();
  REQUIRE(at.size() == 2);
  CHECK(at[0]->lost_work == 70'000);
  CHECK(at[1]->work_needed == 2'400'000);
}

TEST_CASE("spot reclaim: an event without notice_s evicts at once, as before, and checkpoint_on_notice saves nothing") {
  auto sc = spot_scenario(3600, 600, true);
  sc.events = {reclaim(1000, std::nullopt)};
  sim::Simulator s(sc);
  s.run();
  const auto at = s.attempts();
  REQUIRE(at.size() == 2);
  CHECK(at[0]->end == 1'000'000);
  CHECK(std::string(at[0]->reason) == "spot eviction: was preempted by another task (spot capacity reclaimed on a100-0)");
  CHECK(at[0]->lost_work == 400'000);  // 1000 - 600
}

TEST_CASE("spot reclaim: an attempt that ends during its notice is not evicted") {
  auto sc = spot_scenario(1050, 600, false);
  sc.events = {reclaim(1000, 120)};
  sim::Simulator s(sc);
  s.run();
  const auto at = s.attempts();
  REQUIRE(at.size() == 1);
  CHECK(sim::to_string(at[0]->end_reason) == "succeeded");
  CHECK(at[0]->end == 1'050'000);
  CHECK(s.preemptions() == 0);
}

TEST_CASE("spot reclaim: the stochastic model evicts at the drawn time plus the notice, losing work since the last checkpoint") {
  auto sc = spot_scenario(1e6, 600, false, 0);
  reclaim_a100(sc, 1.0, 120);
  const Time n = first_reclaim_ms(sc.seed, 1.0);
  REQUIRE(n + 120'000 < Time(1e9));  // inside the task's run
  sim::Simulator s(sc);
  s.run();
  const auto at = s.attempts();
  REQUIRE(at.size() == 1);
  const Time e = n + 120'000;
  const Time lost = e - e / 600'000 * 600'000;
  CHECK(at[0]->end == e);
  CHECK(sim::to_string(at[0]->end_reason) == "spot_eviction");
  CHECK(at[0]->work_done == e);
  CHECK(at[0]->lost_work == lost);
  CHECK(at[0]->lost_cost == Approx(spot_cost(lost)));
  CHECK(s.cost_summary().lost_work == Approx(spot_cost(lost)));
}

TEST_CASE("spot reclaim: the stochastic model with checkpoint_on_notice loses only the notice period") {
  auto sc = spot_scenario(1e6, 600, true, 0);
  reclaim_a100(sc, 1.0, 120);
  const Time n = first_reclaim_ms(sc.seed, 1.0);
  sim::Simulator s(sc);
  s.run();
  const auto at = s.attempts();
  REQUIRE(at.size() == 1);
  const Time e = n + 120'000;
  const Time saved = std::max(e / 600'000 * 600'000, n);
  CHECK(at[0]->end == e);
  CHECK(at[0]->lost_work == e - saved);
  CHECK(at[0]->lost_cost == Approx(spot_cost(e - saved)));
}

TEST_CASE("spot reclaim: a notice of 0 s evicts at the drawn time with the reason of an immediate reclaim") {
  auto sc = spot_scenario(1e6, 600, true, 0);
  reclaim_a100(sc, 1.0, 0);
  const Time n = first_reclaim_ms(sc.seed, 1.0);
  sim::Simulator s(sc);
  s.run();
  const auto at = s.attempts();
  REQUIRE(at.size() == 1);
  CHECK(at[0]->end == n);
  CHECK(std::string(at[0]->reason) == "spot eviction: was preempted by another task (spot capacity reclaimed on a100-0)");
  CHECK(at[0]->lost_work == n - n / 600'000 * 600'000);  // no notice, nothing saved at it
}

TEST_CASE("spot reclaim: a pool's entry replaces its GPU model's") {
  auto sc = spot_scenario(20000, 600, false, 0);
  reclaim_a100(sc, 1.0, 120);
  sc.spot_reclaim->pools["p"] = {0.0, 120};  // the pool's nodes are never reclaimed
  sim::Simulator s(sc);
  s.run();
  const auto at = s.attempts();
  REQUIRE(at.size() == 1);
  CHECK(sim::to_string(at[0]->end_reason) == "succeeded");
  CHECK(at[0]->end == 20'000'000);
}

/// Four nodes, rate 1 per node-hour: spot, pay-as-you-go, reserved and reserved + guarantee tasks
/// of 1 GPU each, long enough to be hit.
static sim::io::Scenario mixed(std::uint64_t seed) {
  auto sc = cluster(4);
  sc.seed = seed;
  sc.quotas.push_back({"alice", "reserved", "p", 16, 192, 1920});
  std::vector<sim::io::TaskCfg> tasks;
  for (int k = 0; k < 4; ++k) {
    for (const char* cls : {"spot", "pay_as_you_go", "reserved", "guarantee"}) {
      auto t = task(std::string(cls == std::string("pay_as_you_go") ? "payg" : cls) + "-" + std::to_string(k), 60.0 * k, 20000,
                    0, "a100.1x");
      t.resource_type = std::string(cls) == "guarantee" ? "reserved" : cls;
      t.guarantee = std::string(cls) == "guarantee";
      t.checkpoint_interval_s = 600;
      t.checkpoint_on_notice = k % 2 == 0;
      t.fault_tolerance.max_resubmissions = 20;
      tasks.push_back(t);
    }
  }
  sc.tasks = tasks;
  reclaim_a100(sc, 1.0, 120);
  return sc;
}

TEST_CASE("spot reclaim: same seed, byte-identical outputs; another seed, other reclaim times") {
  auto run = [](std::uint64_t seed) {
    sim::Simulator s(mixed(seed));
    s.run();
    std::vector<Time> evictions;
    for (const auto* a : s.attempts())
      if (a->end_reason == sim::EndReason::spot_eviction) evictions.push_back(a->end);
    return std::tuple(s.tasks_csv(), s.summary_json(), s.groups_csv(), evictions);
  };
  const auto a = run(7), b = run(7), c = run(8);
  CHECK(std::get<0>(a) == std::get<0>(b));
  CHECK(std::get<1>(a) == std::get<1>(b));
  CHECK(std::get<2>(a) == std::get<2>(b));
  REQUIRE_FALSE(std::get<3>(a).empty());
  REQUIRE_FALSE(std::get<3>(c).empty());
  CHECK(std::get<3>(a) != std::get<3>(c));
}

TEST_CASE("spot reclaim: reclaims hit only spot attempts, never reserved, guarantee or pay-as-you-go ones") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    sim::Simulator s(mixed(seed));
    s.run();
    int reclaimed = 0;
    for (const auto* a : s.attempts()) {
      const bool by_reclaim = std::string(a->reason).find("spot capacity reclaimed") != std::string::npos;
      if (by_reclaim) {
        ++reclaimed;
        CHECK(a->capacity == "spot");
      }
      if (a->capacity != "spot") CHECK(a->end_reason != sim::EndReason::spot_eviction);
    }
    INFO("seed " << seed);
    CHECK(reclaimed > 0);
    for (std::size_t ti = 0; ti < s.task_count(); ++ti) {
      if (s.task_cfg(ti).resource_type == "spot") continue;
      CHECK(s.task_stats()[ti].resubmissions == 0);  // nothing else fails them in this scenario
    }
  }
}

}  // namespace SCHEDSIM_UNITY_ID
