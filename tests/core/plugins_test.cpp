// Plugin points (docs/architecture.md "Plugins"): placement score, queue order, victim order,
// admission, all registered by name in one Registry.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {

/// Shortest runtime estimate first (ignores priority).
class ShortestFirst final : public QueueOrder {
 public:
  std::string_view name() const override { return "shortest-first"; }
  Rank rank(const TaskSpec& s, TaskId) const override { return {s.runtime_estimate, 0, 0}; }
};

/// The newest attempt is preempted first (the default takes the least work lost, so the same
/// victim for tasks without checkpoints; this one reverses the start order).
class OldestFirst final : public VictimOrder {
 public:
  std::string_view name() const override { return "oldest-first"; }
  Rank rank(const VictimCandidate& c) const override { return {c.start, 0, 0}; }
};

/// Admits only users whose name starts with "vip" (on top of nothing: no quota check).
class VipOnly final : public Admission {
 public:
  std::string_view name() const override { return "vip-only"; }
  bool admits(const QuotaBook&, const QuotaKey&, const TaskSpec& s, TaskId, const Resources&) const override {
    return s.user.rfind("vip", 0) == 0;
  }
};

/// Places each user's replicas on the node whose index is the user name's length modulo the
/// node count (reads the task, not just the shape); the master of team "b" prefers the last node.
class ByUser final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "by-user"; }
  double score(const Cluster& c, NodeId n, const ReplicaRequest& r) override {
    std::int32_t want = std::int32_t(r.task.user.size() % c.size());
    if (r.task.user == "b" && r.replica == 0) want = std::int32_t(c.size()) - 1;
    return n.value == want ? 1.0 : 0.0;
  }
};

Registry with_plugins() {
  Registry r = Registry::builtin();
  r.queue_order.add("shortest-first", [](const PolicyContext&) { return std::make_unique<ShortestFirst>(); });
  r.victim_order.add("oldest-first", [](const PolicyContext&) { return std::make_unique<OldestFirst>(); });
  r.admission.add("vip-only", [](const PolicyContext&) { return std::make_unique<VipOnly>(); });
  r.placement.add("by-user", [](const PolicyContext&) { return std::make_unique<ByUser>(); });
  return r;
}

}  // namespace

TEST_CASE("the builtin registry names today's behaviour as the defaults") {
  SchedulerOptions o;
  const Registry& r = Registry::builtin();
  CHECK(r.placement.contains(o.placement));
  CHECK(r.queue_order.names() == std::vector<std::string>{"fair", "gittins", "las", "priority-fifo", "qssf", "sjf", "sjf-estimate", "srtf", "srtf-estimate"});
  CHECK(r.victim_order.names() == std::vector<std::string>{"idle-spot-first"});
  CHECK(r.admission.names() == std::vector<std::string>{"quota"});
  CHECK(o.queue_order == "priority-fifo");
  CHECK(o.victim_order == "idle-spot-first");
  CHECK(o.admission == "quota");
  CHECK(r.placement.names() == PlacementRegistry::builtin().names());
}

TEST_CASE("a custom queue order changes the start order") {
  auto run = [](const std::string& order) {
    SchedulerOptions o;
    o.queue_order = order;
    Scheduler s(make_cluster().nodes("n", 1).build(), o, with_plugins());
    TaskId longer = submit(s, make_task("long").priority(9).estimate(5000).option("x", gpus(8)));
    TaskId shorter = submit(s, make_task("short").priority(1).estimate(1000).option("x", gpus(8)));
    CHECK(s.queue().size() == 2);
    s.schedule(0);
    return std::make_pair(s.is_running(longer), s.is_running(shorter));
  };
  CHECK(run("priority-fifo") == std::make_pair(true, false));
  CHECK(run("shortest-first") == std::make_pair(false, true));
}

TEST_CASE("a custom queue order is the order queue() reports") {
  SchedulerOptions o;
  o.queue_order = "shortest-first";
  Scheduler s(make_cluster().nodes("n", 1).build(), o, with_plugins());
  TaskId a = submit(s, make_task("a").priority(9).estimate(3000).option("x", gpus(1)));
  TaskId b = submit(s, make_task("b").priority(1).estimate(1000).option("x", gpus(1)));
  TaskId c = submit(s, make_task("c").priority(5).estimate(2000).option("x", gpus(1)));
  CHECK(s.queue() == std::vector<TaskId>{b, c, a});
}

TEST_CASE("sjf-estimate: shortest estimate first, tasks without an estimate last in submit order") {
  SchedulerOptions o;
  o.queue_order = "sjf-estimate";
  Scheduler s(make_cluster().nodes("n", 1).build(), o);
  // Without an estimate: "z" (submitted at 0) before "b" (at 2), against name order.
  TaskId z = submit(s, make_task("z").submitted(0).option("x", gpus(1)));
  TaskId a = submit(s, make_task("a").submitted(1).estimate(3000).option("x", gpus(1)), 1);
  TaskId b = submit(s, make_task("b").submitted(2).option("x", gpus(1)), 2);
  TaskId c = submit(s, make_task("c").submitted(3).estimate(1000).option("x", gpus(1)), 3);
  CHECK(s.queue() == std::vector<TaskId>{c, a, z, b});
}

TEST_CASE("a custom victim order changes the victims chosen") {
  auto victim = [](const std::string& order) {
    SchedulerOptions o;
    o.victim_order = order;
    Scheduler s(make_cluster().nodes("n", 2).build(), o, with_plugins());
    // Same priority, no checkpoints: the default takes the least work lost (the newest start).
    TaskId older = submit(s, make_task("older").priority(1).option("x", gpus(8)));
    s.schedule(0);
    TaskId newer = submit(s, make_task("newer").priority(1).option("x", gpus(8)), 10);
    s.schedule(10);
    REQUIRE((s.is_running(older) && s.is_running(newer)));
    submit(s, make_task("hi").priority(9).option("x", gpus(8)), 20);
    ScheduleResult r = s.schedule(20);
    REQUIRE(r.preemptions.size() == 1);
    return r.preemptions[0].victim == older ? "older" : "newer";
  };
  CHECK(std::string(victim("idle-spot-first")) == "newer");
  CHECK(std::string(victim("oldest-first")) == "older");
}

TEST_CASE("a custom admission changes what is admitted") {
  SchedulerOptions o;
  o.admission = "vip-only";
  Scheduler s(make_cluster().nodes("n", 2).build(), o, with_plugins());
  TaskId plain = submit(s, make_task("plain").user("alice").option("x", gpus(8)));
  TaskId vip = submit(s, make_task("vip").user("vip-bob").option("x", gpus(8)));
  s.schedule(0);
  CHECK(s.is_waiting(plain));
  CHECK(s.is_running(vip));
  // The default admission (quota: pay-as-you-go without a quota entry is unlimited) admits both.
  Scheduler d(make_cluster().nodes("n", 2).build(), SchedulerOptions{}, with_plugins());
  TaskId p2 = submit(d, make_task("plain").user("alice").option("x", gpus(8)));
  TaskId v2 = submit(d, make_task("vip").user("vip-bob").option("x", gpus(8)));
  d.schedule(0);
  CHECK((d.is_running(p2) && d.is_running(v2)));
}

TEST_CASE("a placement score that reads the task and the replica index changes placement") {
  SchedulerOptions o;
  o.placement = "by-user";
  Scheduler s(make_cluster().nodes("n", 4).build(), o, with_plugins());
  TaskId a = submit(s, make_task("a").user("abc").option("x", gpus(1)));        // 3 % 4 = n3
  TaskId b = submit(s, make_task("b").user("b").workers(1).option("x", gpus(1)));  // master n3, worker 1 % 4 = n1
  s.schedule(0);
  CHECK(nodes_of(s, a) == std::vector<std::string>{"n3"});
  CHECK(nodes_of(s, b) == std::vector<std::string>{"n3", "n1"});
  // best-fit puts both on n0.
  Scheduler d(make_cluster().nodes("n", 4).build());
  TaskId a2 = submit(d, make_task("a").user("abc").option("x", gpus(1)));
  d.schedule(0);
  CHECK(nodes_of(d, a2) == std::vector<std::string>{"n0"});
}

TEST_CASE("each registry part rejects a duplicate name with DuplicateName") {
  Registry r = Registry::builtin();
  CHECK_THROWS_AS(r.queue_order.add("priority-fifo", [](const PolicyContext&) { return std::make_unique<ShortestFirst>(); }),
                  DuplicateName);
  CHECK_THROWS_AS(r.victim_order.add("idle-spot-first", [](const PolicyContext&) { return std::make_unique<OldestFirst>(); }),
                  DuplicateName);
  CHECK_THROWS_AS(r.admission.add("quota", [](const PolicyContext&) { return std::make_unique<VipOnly>(); }), DuplicateName);
  CHECK_THROWS_AS(r.placement.add("best-fit", [](const PolicyContext&) { return std::make_unique<ByUser>(); }), DuplicateName);
  // Every libsched error is a libsched::Error and the standard exception of its kind.
  try {
    r.admission.add("quota", [](const PolicyContext&) { return std::make_unique<VipOnly>(); });
    FAIL("no exception");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "admission already registered: quota");
    CHECK(dynamic_cast<const std::invalid_argument*>(&e) != nullptr);
  }
}

TEST_CASE("an unknown plugin name in the options fails construction with UnknownName") {
  for (auto set : {+[](SchedulerOptions& o) { o.queue_order = "lifo"; }, +[](SchedulerOptions& o) { o.victim_order = "youngest"; },
                   +[](SchedulerOptions& o) { o.admission = "none"; }, +[](SchedulerOptions& o) { o.placement = "nope"; }}) {
    SchedulerOptions o;
    set(o);
    CHECK_THROWS_AS(Scheduler(make_cluster().nodes("n", 1).build(), o), UnknownName);
  }
  try {
    SchedulerOptions o;
    o.victim_order = "youngest";
    Scheduler s(make_cluster().nodes("n", 1).build(), o);
    FAIL("no exception");
  } catch (const std::out_of_range& e) {
    CHECK(std::string(e.what()) == "unknown victim order: youngest");
  }
}

TEST_CASE("explain is a const query") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId big = submit(s, make_task("big").option("x", gpus(8)));
  TaskId t = submit(s, make_task("t").option("x", gpus(8)));
  s.schedule(0);
  const Scheduler& view = s;
  REQUIRE(s.is_running(big));
  CHECK(view.explain(t, 0).code == WaitCode::waits_for_capacity);
  CHECK(view.reservation(t, 0) == kTimeNever);
}

}  // namespace SCHEDSIM_UNITY_ID
