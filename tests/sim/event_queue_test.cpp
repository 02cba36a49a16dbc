#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/event_queue.hpp"

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
