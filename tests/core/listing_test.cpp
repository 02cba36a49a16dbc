// The visited listing (Scheduler::take_visited_waiting) and what it computes for each listed
// task (Scheduler::listed): the simulator's wait attribution reads those answers instead of
// querying the scheduler task by task, so they must be the queries' answers.
#include <catch2/catch.hpp>
#include "builders.hpp"
#include "tests/common/unity.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {

/// Random backfill (or greedy / strict) run on two 8-GPU nodes: arrivals of 1-8 GPU tasks with
/// estimates (some unknown), some of a second user with a quota, releases of random running
/// tasks. At each instant, schedule(), then the listing and each listed task's answers compared
/// with held_by_queue, request_signature and request_class. Returns the tasks compared
/// (held ones counted in `held`).
std::size_t compare_listings(std::uint32_t seed, Queueing q, bool fast, std::size_t& held) {
  SchedulerOptions o;
  o.queueing = q;
  o.preemption = false;
  o.fast_paths = fast;
  Scheduler s(make_cluster().pool("p").nodes("n", 2).build(), o);
  const PoolId p = s.cluster().find_pool("p");
  s.quotas().set_limit(QuotaKey{"bob", ResourceType::reserved, p}, gpu_quota(6));
  boost::random::mt19937 rng(seed);
  auto draw = [&](int lo, int hi) { return boost::random::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<TaskId> running;
  std::size_t compared = 0;
  Time now = 0;
  for (int step = 0; step < 120; ++step, now += 1000 * draw(1, 20)) {
    for (int k = draw(0, 3); k > 0; --k) {
      TaskBuilder b = make_task("t" + std::to_string(step) + "-" + std::to_string(k));
      b.option("x", gpus(draw(1, 8))).submitted(now);
      if (draw(0, 3) != 0) b.estimate(Time(1000) * draw(1, 200));
      if (draw(0, 2) == 0) b.user("bob").reserved(p);
      submit(s, b, now);
    }
    if (!running.empty() && draw(0, 1) == 0) {
      const std::size_t i = std::size_t(draw(0, int(running.size()) - 1));
      s.release(running[i], now);
      running.erase(running.begin() + std::ptrdiff_t(i));
    }
    const ScheduleResult r = s.schedule(now);
    running.insert(running.end(), r.started.begin(), r.started.end());
    const std::vector<TaskId> visited = s.take_visited_waiting();
    const auto& listed = s.listed();
    REQUIRE(listed.size() == visited.size());
    for (std::size_t i = 0; i < visited.size(); ++i) {
      INFO("seed " << seed << " step " << step << " task " << s.task(visited[i]).name);
      const bool h = s.held_by_queue(visited[i], now);
      REQUIRE(listed[i].held == h);
      if (!h) REQUIRE(listed[i].signature == s.request_signature(visited[i], now));
      REQUIRE(listed[i].request_class == s.request_class(visited[i]));
      held += h;
      ++compared;
    }
  }
  return compared;
}

}  // namespace

TEST_CASE("the listing's held flags, signatures and request classes are the per-task queries' answers") {
  std::size_t compared = 0, held = 0;
  for (std::uint32_t seed = 1; seed <= 40; ++seed)
    for (Queueing q : {Queueing::backfill, Queueing::greedy, Queueing::strict})
      for (bool fast : {true, false}) compared += compare_listings(seed, q, fast, held);
  // Not vacuous: many listed tasks, some of them held behind a head.
  CHECK(compared > 5000);
  CHECK(held > 500);
}

TEST_CASE("the listing is in (sequence, id) order without repeats, whether or not the passes listed in that order") {
  // Two passes at one instant (an arrival after a release) list some tasks twice; sequences
  // against the id order make the queue order differ from the listing's order.
  Scheduler s(make_cluster().pool("p").nodes("n", 1).build());
  TaskId r = submit(s, make_task("r").option("x", gpus(8)));
  REQUIRE(s.schedule(0).started == std::vector<TaskId>{r});
  TaskId a = submit(s, make_task("a").sequence(3).option("x", gpus(4)), 1000);
  TaskId b = submit(s, make_task("b").sequence(1).option("x", gpus(4)), 1000);
  TaskId c = submit(s, make_task("c").sequence(2).option("x", gpus(8)), 1000);
  CHECK(s.schedule(1000).started.empty());
  CHECK(s.schedule(1000).started.empty());
  CHECK(s.take_visited_waiting() == std::vector<TaskId>{b, c, a});
  CHECK(s.listed().size() == 3);
}

}  // namespace SCHEDSIM_UNITY_ID
