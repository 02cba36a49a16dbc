// Node schedule policies (NodeIn / NodeNotIn, scope, effect, workload types, expiry) and
// explain()'s wait codes (docs/platform.md "Node schedule policies"; status.hpp).
#include <catch2/catch.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {
Cluster three_nodes() { return make_cluster().nodes("n", 3).build(); }
}  // namespace

TEST_CASE("NodeNotIn removes the listed nodes and NodeIn keeps only the listed ones") {
  Cluster c = three_nodes();
  TaskSpec t = make_task("t").option("x", gpus(1));
  std::vector<NodePolicy> ps{make_policy("block").node_not_in().nodes(c, {"n0"})};
  NodeFilter f = NodeFilter::build(ps, t, 0, c.size());
  CHECK_FALSE(f.allowed(NodeId(0)));
  CHECK(f.allowed(NodeId(1)));
  CHECK(f.blocked() == std::vector<NodeId>{NodeId(0)});
  ps = {make_policy("only").node_in().nodes(c, {"n1", "n2"}), make_policy("block").node_not_in().nodes(c, {"n2"})};
  f = NodeFilter::build(ps, t, 0, c.size());
  CHECK_FALSE(f.allowed(NodeId(0)));
  CHECK(f.allowed(NodeId(1)));
  CHECK_FALSE(f.allowed(NodeId(2)));
  // Two NodeIn lists intersect.
  ps = {make_policy("a").node_in().nodes(c, {"n0", "n1"}), make_policy("b").node_in().nodes(c, {"n1", "n2"})};
  f = NodeFilter::build(ps, t, 0, c.size());
  CHECK((!f.allowed(NodeId(0)) && f.allowed(NodeId(1)) && !f.allowed(NodeId(2))));
}

TEST_CASE("a user-scoped policy applies to that user only, a tenant-scoped one to the tenant") {
  TaskSpec alice = make_task("a").user("alice").tenant("t1").option("x", gpus(1));
  TaskSpec bob = make_task("b").user("bob").tenant("t2").option("x", gpus(1));
  NodePolicy by_user = make_policy().for_user("alice");
  NodePolicy by_tenant = make_policy().for_tenant("t2");
  CHECK(by_user.applies(alice, 0));
  CHECK_FALSE(by_user.applies(bob, 0));
  CHECK_FALSE(by_tenant.applies(alice, 0));
  CHECK(by_tenant.applies(bob, 0));
}

TEST_CASE("an explicit policy applies only to tasks that select it, a default one to all") {
  TaskSpec plain = make_task("a").option("x", gpus(1));
  TaskSpec selecting = make_task("b").selects("gpu-block").option("x", gpus(1));
  NodePolicy expl = make_policy("gpu-block").explicit_only();
  NodePolicy dflt = make_policy("other");
  CHECK_FALSE(expl.applies(plain, 0));
  CHECK(expl.applies(selecting, 0));
  CHECK(dflt.applies(plain, 0));
}

TEST_CASE("a policy applies only to its workload types and only while not expired") {
  TaskSpec ray = make_task("r").ray().option("x", gpus(1));
  TaskSpec pt = make_task("p").option("x", gpus(1));
  NodePolicy ray_only = make_policy().workload(TaskType::ray_job).active(60'000, 120'000);
  CHECK_FALSE(ray_only.applies(pt, 90'000));
  CHECK_FALSE(ray_only.applies(ray, 59'999));
  CHECK(ray_only.applies(ray, 60'000));
  CHECK(ray_only.applies(ray, 119'999));
  CHECK_FALSE(ray_only.applies(ray, 120'000));
}

TEST_CASE("the scheduler honours a block until it expires") {
  Cluster c = make_cluster().nodes("n", 1).build();
  Scheduler s(c);
  s.add_node_policy(make_policy("skip").node_not_in().nodes(c, {"n0"}).active(0, 100'000));
  TaskId t = submit(s, make_task("t").option("x", gpus(1)));
  s.schedule(0);
  CHECK(s.is_waiting(t));
  s.schedule(100'000);
  CHECK(s.is_running(t));
}

TEST_CASE("a NodeIn policy places the task on its listed nodes only") {
  Cluster c = three_nodes();
  Scheduler s(c);
  s.add_node_policy(make_policy("only-n2").node_in().for_user("alice").nodes(c, {"n2"}));
  TaskId t = submit(s, make_task("t").workers(1).option("x", gpus(4)));
  TaskId b = submit(s, make_task("b").user("bob").option("x", gpus(4)));
  s.schedule(0);
  CHECK(nodes_of(s, t) == std::vector<std::string>{"n2", "n2"});
  CHECK(nodes_of(s, b) == std::vector<std::string>{"n0"});
}

TEST_CASE("explain names the blacklisted nodes when a block leaves the task unschedulable") {
  Cluster c = three_nodes();
  Scheduler s(c);
  TaskId busy = submit(s, make_task("busy").guaranteed().option("x", gpus(8)));
  s.schedule(0);
  REQUIRE(nodes_of(s, busy) == std::vector<std::string>{"n0"});
  s.add_node_policy(make_policy("skip").node_not_in().nodes(c, {"n1", "n2"}));
  TaskId t = submit(s, make_task("t").option("x", gpus(8)));
  s.schedule(0);
  REQUIRE(s.is_waiting(t));
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::blocked_by_node_policy);
  CHECK_THAT(w.reason, Catch::StartsWith("quota check failed due to node blacklist: n1,n2 ("));
}

TEST_CASE("explain does not blame the blacklist when the task would wait anyway") {
  Cluster c = make_cluster().nodes("n", 2).build();
  Scheduler s(c);
  submit(s, make_task("a").guaranteed().option("x", gpus(8)));
  submit(s, make_task("b").guaranteed().option("x", gpus(8)));
  s.schedule(0);
  s.add_node_policy(make_policy("skip").node_not_in().nodes(c, {"n1"}));
  TaskId t = submit(s, make_task("t").option("x", gpus(8)));
  s.schedule(0);
  CHECK(s.explain(t, 0).code == WaitCode::waits_for_capacity);
}

TEST_CASE("explain reports never_fits with the numbers") {
  Scheduler s(make_cluster().nodes("n", 2).build());
  TaskId t = submit(s, make_task("t").workers(1).option("x", gpus(16)));
  s.schedule(0);
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::never_fits);
  CHECK(w.reason == "needs 2 x 16 GPU on any GPU model; largest node has 8 GPU");
}

TEST_CASE("explain reports waits_for_capacity with the free GPUs") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  submit(s, make_task("g").guaranteed().option("x", gpus(6)));
  s.schedule(0);
  TaskId t = submit(s, make_task("t").option("x", gpus(4)));
  s.schedule(0);
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::waits_for_capacity);
  CHECK_THAT(w.reason, Catch::Contains("2 GPU free"));
}

TEST_CASE("explain returns the running status for a task that started") {
  Scheduler s(make_cluster().nodes("n", 1).build());
  TaskId t = submit(s, make_task("t").option("x", gpus(4)));
  s.schedule(0);
  REQUIRE(s.is_running(t));
  CHECK(s.explain(t, 0).reason.empty());
}

TEST_CASE("a NodeIn restriction is not reported as a blacklist") {
  Cluster c = make_cluster().nodes("n", 2).build();
  Scheduler s(c);
  TaskId busy = submit(s, make_task("busy").user("bob").guaranteed().option("x", gpus(8)));
  s.schedule(0);
  REQUIRE(nodes_of(s, busy) == std::vector<std::string>{"n0"});
  s.add_node_policy(make_policy("only-n0").node_in().for_user("alice").nodes(c, {"n0"}));
  TaskId t = submit(s, make_task("t").option("x", gpus(8)));
  s.schedule(0);
  REQUIRE(s.is_waiting(t));
  WaitStatus w = s.explain(t, 0);
  CHECK(w.code == WaitCode::blocked_by_node_policy);
  CHECK_THAT(w.reason, !Catch::Contains("blacklist"));
  CHECK_THAT(w.reason, Catch::Contains("NodeIn"));
}

TEST_CASE("a policy naming an unknown node ignores that name") {
  Cluster c = make_cluster().nodes("n", 2).build();
  TaskSpec t = make_task("t").option("x", gpus(1));
  std::vector<NodePolicy> ps{make_policy("block").node_not_in().nodes(c, {"n1", "no-such-node"}),
                             make_policy("only").node_in().nodes(c, {"n0", "n1", "missing"})};
  NodeFilter f = NodeFilter::build(ps, t, 0, c.size());
  CHECK(f.allowed(NodeId(0)));
  CHECK_FALSE(f.allowed(NodeId(1)));
  CHECK(f.blocked() == std::vector<NodeId>{NodeId(1)});
}

}  // namespace SCHEDSIM_UNITY_ID
