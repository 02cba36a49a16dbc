#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sim/engine/event_queue.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using sim::BasicEventQueue;

TEST_CASE("events come out in time order and FIFO among equal times") {
  BasicEventQueue<int> q;
  q.schedule(20, 1);
  q.schedule(10, 2);
  q.schedule(20, 3);
  q.schedule(10, 4);
  std::vector<int> got;
  q.run([&](sim::Time, int e) { got.push_back(e); });
  REQUIRE(got == std::vector<int>{2, 4, 1, 3});
  REQUIRE(q.empty());
  REQUIRE(q.now() == 20);
}

TEST_CASE("peek shows the heap's top, cancelled or not, without delivering it") {
  BasicEventQueue<int> q;
  CHECK(q.peek() == nullptr);
  q.schedule(20, 1);
  const auto h = q.schedule(10, 2);
  REQUIRE(q.peek() != nullptr);
  CHECK(q.peek()->event == 2);
  CHECK(q.peek()->time == 10);
  CHECK(q.size() == 2);
  CHECK(q.now() == 0);
  q.cancel(h);
  REQUIRE(q.peek() != nullptr);
  CHECK(q.peek()->event == 2);  // a tombstone until step() drops it
  auto it = q.step();
  REQUIRE(it);
  CHECK(it->event == 1);
  CHECK(q.peek() == nullptr);
}

TEST_CASE("a cancelled event is never delivered and cancel of a delivered one is a no-op") {
  BasicEventQueue<int> q;
  auto a = q.schedule(5, 1);
  auto b = q.schedule(6, 2);
  REQUIRE(q.size() == 2);
  REQUIRE(q.cancel(a));
  REQUIRE_FALSE(q.cancel(a));
  REQUIRE(q.size() == 1);
  auto it = q.step();
  REQUIRE(it);
  REQUIRE(it->event == 2);
  REQUIRE_FALSE(q.cancel(b));
  REQUIRE_FALSE(q.step());
}

TEST_CASE("run_until processes events at exactly the boundary and keeps later ones") {
  BasicEventQueue<int> q;
  q.schedule(100, 1);
  q.schedule(200, 2);
  q.schedule(201, 3);
  std::vector<int> got;
  auto n = q.run_until(200, [&](sim::Time, int e) { got.push_back(e); });
  REQUIRE(n == 2);
  REQUIRE(got == std::vector<int>{1, 2});
  REQUIRE(q.size() == 1);
  REQUIRE(q.next_time() == 201);
  q.run_until(500, [&](sim::Time, int e) { got.push_back(e); });
  REQUIRE(q.now() == 500);
  REQUIRE(got.back() == 3);
}

TEST_CASE("events scheduled while running at the current time are delivered in the same run") {
  BasicEventQueue<int> q;
  q.schedule(10, 1);
  std::vector<int> got;
  q.run([&](sim::Time t, int e) {
    got.push_back(e);
    if (e == 1) q.schedule(t, 2);
  });
  REQUIRE(got == std::vector<int>{1, 2});
}

TEST_CASE("scheduling in the past is rejected") {
  BasicEventQueue<int> q;
  q.schedule(10, 1);
  q.step();
  REQUIRE_THROWS_AS(q.schedule(5, 2), std::invalid_argument);
}

TEST_CASE("the simulator queue holds typed variant events") {
  sim::EventQueue q;
  q.schedule(1, sim::SubmitEv{3});
  q.schedule(1, sim::NodeDownEv{2, false});
  auto a = q.step();
  REQUIRE(std::holds_alternative<sim::SubmitEv>(a->event));
  auto b = q.step();
  REQUIRE(std::get<sim::NodeDownEv>(b->event).node == 2);
}

TEST_CASE("the queue's memory is bounded by its pending events, not by the events delivered") {
  sim::BasicEventQueue<int> q;
  // A retry loop: each delivered event schedules the next one (as an image pull retried
  // without a breaker does), a million times.
  q.schedule(0, 0);
  std::size_t delivered = 0, most = 0, widest = 0;
  bool all_pending = true;
  while (auto it = q.step()) {
    ++delivered;
    most = std::max(most, q.tracked_handles());
    widest = std::max(widest, q.flag_window());
    if (it->event < 1'000'000) {
      sim::EventHandle h = q.schedule(it->time + 1, it->event + 1);
      all_pending = all_pending && q.pending(h);
    }
  }
  CHECK(all_pending);
  CHECK(delivered == 1'000'001);
  CHECK(most <= 1);
  // The pending flags cover at most about 128 words of 64 handles, not the million delivered.
  CHECK(widest <= 130 * 64);
  // Cancelled events are tombstones until they reach the top, then forgotten.
  auto a = q.schedule(q.now() + 5, 1);
  q.schedule(q.now() + 10, 2);
  CHECK(q.cancel(a));
  CHECK_FALSE(q.pending(a));
  CHECK(q.tracked_handles() == 2);
  REQUIRE(q.step()->event == 2);
  CHECK(q.tracked_handles() == 0);
}

TEST_CASE("pending flags agree with a set of pending handles under random schedule, cancel and step") {
  // A reference model (an ordered set of pending handles and a multimap of their times) against
  // the queue's bit flags, with a few long-lived events so that the flag window keeps old words
  // while thousands of later handles come and go.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    BasicEventQueue<std::uint64_t> q;
    std::set<sim::EventHandle> pending;
    std::map<std::pair<sim::Time, sim::EventHandle>, std::uint64_t> model;
    std::mt19937_64 rng(seed);
    std::vector<sim::EventHandle> issued;
    for (int op = 0; op < 20000; ++op) {
      const auto r = rng() % 100;
      if (r < 45 || model.empty()) {
        const sim::Time t = q.now() + sim::Time(rng() % 50) + (r < 2 ? 1'000'000 : 0);
        const sim::EventHandle h = q.schedule(t, rng());
        REQUIRE(pending.insert(h).second);
        issued.push_back(h);
        model[{t, h}] = h;
      } else if (r < 70) {
        const sim::EventHandle h = issued[rng() % issued.size()];
        const bool was = pending.erase(h) != 0;
        REQUIRE(q.cancel(h) == was);
        if (was) std::erase_if(model, [h](const auto& kv) { return kv.first.second == h; });
      } else {
        auto it = q.step();
        REQUIRE(it);
        auto first = model.begin();
        REQUIRE(it->time == first->first.first);
        REQUIRE(it->handle == first->first.second);
        pending.erase(it->handle);
        model.erase(first);
      }
      REQUIRE(q.size() == pending.size());
      if (op % 97 == 0)
        for (sim::EventHandle h = 1; h <= issued.size(); ++h) REQUIRE(q.pending(h) == (pending.count(h) != 0));
    }
  }
}

}  // namespace SCHEDSIM_UNITY_ID
