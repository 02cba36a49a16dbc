// TaskSpec::sequence: the tie-break between equal ranks before the task id, so that decisions do
// not depend on how ids are handed out (forget_task reuses them). Each test gives two tasks
// equal ranks and sequences in the reverse of their ids: the task with the smaller sequence
// (the larger id) must come first; with every sequence 0 the smaller id does, as before.
#include <catch2/catch.hpp>

#include <vector>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {

/// Two whole-node tasks with equal ranks under priority-fifo (same priority, submit time and
/// name) on one 8-GPU node: `first` registered first (id 0), `second` next (id 1).
struct Twins {
  Scheduler s{make_cluster().nodes("n", 1).build()};
  TaskId first, second;
  Twins(std::uint64_t seq_first, std::uint64_t seq_second) {
    first = submit(s, make_task("twin").priority(5).sequence(seq_first).option("x", gpus(8)));
    second = submit(s, make_task("twin").priority(5).sequence(seq_second).option("x", gpus(8)));
  }
};

}  // namespace

TEST_CASE("sequence: equal queue ranks are ordered by sequence, not by id") {
  Twins t(2, 1);
  REQUIRE(t.first.value == 0);
  REQUIRE(t.second.value == 1);
  CHECK(t.s.queue() == std::vector<TaskId>{t.second, t.first});
  ScheduleResult r = t.s.schedule(0);  // one node: only the head of the queue starts
  REQUIRE(r.started.size() == 1);
  CHECK(r.started[0] == t.second);
  CHECK(t.s.is_waiting(t.first));
}

TEST_CASE("sequence: with every sequence 0, equal queue ranks are ordered by id") {
  Twins t(0, 0);
  CHECK(t.s.queue() == std::vector<TaskId>{t.first, t.second});
  ScheduleResult r = t.s.schedule(0);
  REQUIRE(r.started.size() == 1);
  CHECK(r.started[0] == t.first);
}

TEST_CASE("sequence: equal victim ranks are preempted by sequence, not by id") {
  // a (id 0, sequence 7) and b (id 1, sequence 3) run since 0 on one node each, priority 1, no
  // checkpoints: idle-spot-first ranks both (pay-as-you-go 2, priority 1, 1 ms lost) at 1 ms.
  // A priority-9 whole-node task needs one of them: b, the smaller sequence.
  for (bool by_sequence : {true, false}) {
    CAPTURE(by_sequence);
    Scheduler s(make_cluster().nodes("n", 2).build());
    TaskId a = submit(s, make_task("a").priority(1).sequence(by_sequence ? 7 : 0).option("x", gpus(8)));
    TaskId b = submit(s, make_task("b").priority(1).sequence(by_sequence ? 3 : 0).option("x", gpus(8)));
    REQUIRE(s.schedule(0).started.size() == 2);
    TaskId hi = submit(s, make_task("hi").priority(9).sequence(by_sequence ? 9 : 0).option("x", gpus(8)), 1);
    ScheduleResult r = s.schedule(1);
    REQUIRE(r.preemptions.size() == 1);
    CHECK(r.preemptions[0].victim == (by_sequence ? b : a));  // without sequences: the lower id
    CHECK(r.preemptions[0].preemptor == hi);
    CHECK(s.is_running(by_sequence ? a : b));
  }
}

TEST_CASE("sequence: visited waiting tasks and the tasks on a node are listed by sequence") {
  // Two half-node tasks share n0 (ids 0, 1 with sequences 5, 4); two whole-node tasks (ids 2, 3
  // with sequences 2, 1) wait behind them and are visited by the pass.
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId h0 = submit(s, make_task("h0").sequence(5).option("x", gpus(4)));
  TaskId h1 = submit(s, make_task("h1").sequence(4).option("x", gpus(4)));
  REQUIRE(s.schedule(0).started.size() == 2);
  TaskId w2 = submit(s, make_task("w2").sequence(2).option("x", gpus(8)), 1);
  TaskId w3 = submit(s, make_task("w3").sequence(1).option("x", gpus(8)), 1);
  CHECK(s.schedule(1).empty());
  CHECK(s.take_visited_waiting() == std::vector<TaskId>{w3, w2});
  CHECK(s.tasks_on_node(NodeId(0)) == std::vector<TaskId>{h1, h0});
}

TEST_CASE("queue_order_preempts: true only for an order that preempts by itself") {
  auto with_order = [](const char* order) {
    SchedulerOptions o;
    o.queue_order = order;
    return Scheduler(make_cluster().nodes("n", 1).build(), o).queue_order_preempts();
  };
  CHECK_FALSE(with_order("priority-fifo"));
  CHECK_FALSE(with_order("sjf"));
  CHECK(with_order("srtf"));
  CHECK(with_order("las"));
}

}  // namespace SCHEDSIM_UNITY_ID
