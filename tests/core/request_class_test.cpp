// Request classes (SchedulerOptions::request_classes, docs/scheduler.md "How the queue pass
// stays cheap"): waiting tasks grouped by request signature, the greedy pass by class, the
// backfill pass by class while no head has a reservation, and the visited list by class. The equality of decisions with the classes off is the property
// test in property_test.cpp.
#include <catch2/catch.hpp>

#include "builders.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

using namespace libsched;
using namespace libsched::testing;

namespace {
SchedulerOptions greedy(bool classes = true) {
  SchedulerOptions o;
  o.queueing = Queueing::greedy;
  o.preemption = false;
  o.request_classes = classes;
  return o;
}
std::vector<TaskId> members(const Scheduler& s, std::uint32_t c) {
  std::vector<TaskId> v;
  s.for_each_class_member(c, [&](TaskId t) { v.push_back(t); });
  return v;
}
SchedulerOptions backfill(bool classes = true) {
  SchedulerOptions o = greedy(classes);
  o.queueing = Queueing::backfill;
  return o;
}
constexpr std::uint32_t kNone = ~std::uint32_t{0};
}  // namespace

TEST_CASE("equal requests share one request class, kept in queue order; a start leaves it") {
  // One node of 8 GPUs runs R (6 GPUs). A, B, C ask 4 GPUs each (B submitted first), D 2 GPUs.
  Scheduler s(make_cluster().pool("p").nodes("n", 1).build(), greedy());
  TaskId r = submit(s, make_task("r").pay_as_you_go().option("x", gpus(6)));
  REQUIRE(s.schedule(0).started == std::vector<TaskId>{r});
  TaskId a = submit(s, make_task("a").pay_as_you_go().submitted(20).option("x", gpus(4)), 0);
  TaskId b = submit(s, make_task("b").pay_as_you_go().submitted(10).option("x", gpus(4)), 0);
  TaskId c = submit(s, make_task("c").pay_as_you_go().submitted(30).option("x", gpus(4)), 0);
  TaskId d = submit(s, make_task("d").pay_as_you_go().submitted(40).option("x", gpus(2)), 0);
  CHECK(s.request_class(a) == s.request_class(b));
  CHECK(s.request_class(c) == s.request_class(a));
  CHECK(s.request_class(d) != s.request_class(a));
  CHECK(s.request_class(r) == kNone);  // running: in no class
  CHECK(members(s, s.request_class(a)) == std::vector<TaskId>{b, a, c});
  CHECK(s.schedule(0).started == std::vector<TaskId>{d});
  CHECK(s.request_class(d) == kNone);
  CHECK(members(s, s.request_class(a)) == std::vector<TaskId>{b, a, c});
  s.dequeue(a);
  CHECK(s.request_class(a) == kNone);
  CHECK(members(s, s.request_class(b)) == std::vector<TaskId>{b, c});
}

TEST_CASE("a greedy pass by class starts members in queue order until one fails") {
  // Two nodes of 8 GPUs; five tasks of 4 GPUs (one class) and one of 1 GPU third in the queue:
  // the pass starts big0 and big1 (node 0), one and big2 (node 1, 3 GPUs left); big3 fails, and
  // big4 behind it is not tried. The classes off decide the same.
  for (bool classes : {true, false}) {
    INFO("classes " << classes);
    Scheduler s(make_cluster().pool("p").nodes("n", 2).build(), greedy(classes));
    std::vector<TaskId> big;
    for (int i = 0; i < 5; ++i) big.push_back(submit(s, make_task("big" + std::to_string(i)).pay_as_you_go().submitted(i * 10).option("x", gpus(4))));
    TaskId one = submit(s, make_task("one").pay_as_you_go().submitted(15).option("x", gpus(1)));
    CHECK(s.schedule(0).started == std::vector<TaskId>{big[0], big[1], one, big[2]});
    CHECK(s.is_waiting(big[3]));
    CHECK(s.is_waiting(big[4]));
  }
}

TEST_CASE("after a full greedy pass every waiting task counts as visited, listed or by class") {
  Scheduler s(make_cluster().pool("p").nodes("n", 1).build(), greedy());
  TaskId r = submit(s, make_task("r").pay_as_you_go().option("x", gpus(8)));
  REQUIRE(s.schedule(0).started == std::vector<TaskId>{r});
  TaskId a = submit(s, make_task("a").pay_as_you_go().submitted(1).option("x", gpus(4)), 0);
  TaskId b = submit(s, make_task("b").pay_as_you_go().submitted(2).option("x", gpus(4)), 0);
  s.schedule(0);
  (void)s.take_visited_waiting();
  s.release(r, 1'000);
  TaskId c = submit(s, make_task("c").pay_as_you_go().submitted(3).option("x", gpus(6)), 1'000);
  CHECK(s.schedule(1'000).started == std::vector<TaskId>{a, b});
  std::vector<TaskId> listed;
  CHECK(s.take_visited_by_class(listed));  // a full pass: every waiting task (c), by class
  std::size_t classes = 0;
  s.for_each_request_class([&](std::uint32_t k, TaskId front) {
    ++classes;
    CHECK(front == c);
    CHECK(members(s, k) == std::vector<TaskId>{c});
  });
  CHECK(classes == 1);
  // Nothing changed since: the next pass visits nobody.
  s.schedule(2'000);
  CHECK_FALSE(s.take_visited_by_class(listed));
  CHECK(listed.empty());
}

TEST_CASE("a quota entry added hands the class ids out anew") {
  Scheduler s(make_cluster().pool("p").nodes("n", 1).build(), greedy());
  TaskId a = submit(s, make_task("a").pay_as_you_go().option("x", gpus(16)));
  const std::uint64_t g = s.request_classes_generation();
  s.quotas().set_limit(QuotaKey{"bob", ResourceType::pay_as_you_go, PoolId()}, gpu_quota(3));
  s.schedule(0);
  CHECK(s.request_classes_generation() == g + 1);
  CHECK(s.request_class(a) == 0);
  CHECK(s.request_class_count() == 1);
}

TEST_CASE("a backfill pass by class: without a known expected end the head has no reservation and nothing is held") {
  // One node of 8 GPUs runs R (6 GPUs, no runtime estimate). big0-big2 ask 4 GPUs each (one
  // class), one asks 1 GPU and queues last. big0 fails: the head; its reservation is unknown
  // (R never ends as far as the scheduler knows), so `one` jumps it and starts on the 2 free
  // GPUs; big1 and big2 are not tried (their class failed). Nothing is held: every waiting task
  // counts as visited by class (classes on) or is listed (off), each waiting for capacity
  // (1 GPU free < 4).
  for (bool classes : {true, false}) {
    INFO("classes " << classes);
    Scheduler s(make_cluster().pool("p").nodes("n", 1).build(), backfill(classes));
    TaskId r = submit(s, make_task("r").pay_as_you_go().option("x", gpus(6)));
    REQUIRE(s.schedule(0).started == std::vector<TaskId>{r});
    (void)s.take_visited_waiting();
    std::vector<TaskId> big;
    for (int i = 0; i < 3; ++i) big.push_back(submit(s, make_task("big" + std::to_string(i)).pay_as_you_go().submitted(10 + i).option("x", gpus(4)), 0));
    TaskId one = submit(s, make_task("one").pay_as_you_go().submitted(20).option("x", gpus(1)), 0);
    s.release(r, 1'000);  // (a release: the next pass visits the whole queue)
    TaskId r2 = submit(s, make_task("r2").pay_as_you_go().option("x", gpus(6)), 1'000);
    CHECK(s.schedule(1'000).started == std::vector<TaskId>{r2, one});
    std::vector<TaskId> listed;
    CHECK(s.take_visited_by_class(listed) == classes);
    if (!classes) CHECK(listed == big);
    for (TaskId b : big) {
      CHECK_FALSE(s.held_by_queue(b, 1'000));
      CHECK(s.wait_code(b, 1'000) == WaitCode::waits_for_capacity);
    }
  }
}

TEST_CASE("a backfill pass by class falls back to the walk when a start brings a reservation") {
  // One node of 8 GPUs runs R (2 GPUs, no estimate). In queue order: e (4 GPUs, estimate
  // 100 s) starts; head (5 GPUs) fails: 2 GPUs free; its reservation is e's expected end,
  // 100 s (then 6 free). small (2 GPUs, no estimate) fits now, but with it running only 4 GPUs
  // are free at 100 s: it would delay the head and is held. The class pass starts e, finds the
  // head, and walks the queue once the reservation is known: the same decisions, with the
  // hold listed task by task.
  for (bool classes : {true, false}) {
    INFO("classes " << classes);
    Scheduler s(make_cluster().pool("p").nodes("n", 1).build(), backfill(classes));
    TaskId r = submit(s, make_task("r").pay_as_you_go().option("x", gpus(2)));
    REQUIRE(s.schedule(0).started == std::vector<TaskId>{r});
    TaskId e = submit(s, make_task("e").pay_as_you_go().submitted(1).estimate(100'000).option("x", gpus(4)), 0);
    TaskId head = submit(s, make_task("head").pay_as_you_go().submitted(2).option("x", gpus(5)), 0);
    TaskId small = submit(s, make_task("small").pay_as_you_go().submitted(3).option("x", gpus(2)), 0);
    CHECK(s.schedule(0).started == std::vector<TaskId>{e});
    CHECK(s.held_by_queue(small, 0));
    CHECK_FALSE(s.held_by_queue(head, 0));
    CHECK(s.explain(small, 0).code == WaitCode::blocked_by_queue);
    std::vector<TaskId> listed;
    CHECK_FALSE(s.take_visited_by_class(listed));
    CHECK(listed == std::vector<TaskId>{head, small});
  }
}

}  // namespace SCHEDSIM_UNITY_ID
