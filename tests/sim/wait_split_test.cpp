// summary.json's wait split: each waiting second lands in the bucket of the scheduler's reason.
#include <initializer_list>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "builders.hpp"
#include "sim/cli/run_cli.hpp"
#include "sim/experiments/synthetic.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using simtest::cluster;
using simtest::task;

namespace {
nlohmann::json split_of(const sim::io::Scenario& sc) {
  sim::Simulator s(sc);
  s.run();
  return nlohmann::json::parse(s.summary_json())["wait_split_s"];
}

/// Two 8-GPU nodes, alice's reserved quota of 8 GPUs, and one reserved 8-GPU task of 100 s
/// submitted at 0 per name.
sim::io::Scenario quota_bound(std::initializer_list<const char*> names) {
  auto sc = cluster(2);
  sim::io::QuotaCfg q;
  q.user = "alice";
  q.resource_type = "reserved";
  q.pool = "p";
  q.gpus = 8;
  q.vcpu = 1000;
  q.memory_gib = 10000;
  sc.quotas.push_back(q);
  for (const char* n : names) {
    auto t = task(n, 0, 100);
    t.resource_type = "reserved";
    sc.tasks.push_back(t);
  }
  return sc;
}
}  // namespace

TEST_CASE("a task held back by its user's quota counts its wait as quota wait") {
  auto w = split_of(quota_bound({"first", "second"}));
  CHECK(w["quota"] == 100);
  CHECK(w["capacity"] == 0);
  CHECK(w["fragmentation"] == 0);
}

TEST_CASE("under strict queueing a task held behind an identical head counts queue wait, not the head's reason") {
  // second waits for quota (the head); third, the same request, waits behind it first: its
  // own status is blocked_by_queue (counted with capacity), as explain() gives it, even though
  // the diagnosis of an identical request is memoised at that instant.
  auto sc = quota_bound({"first", "second", "third"});
  sc.scheduler.queueing = "strict";
  auto w = split_of(sc);
  CHECK(w["quota"] == 200);     // second 0-100, third 100-200
  CHECK(w["capacity"] == 100);  // third behind second, 0-100
  CHECK(w["fragmentation"] == 0);
}

TEST_CASE("a gang that needs a whole node while GPUs are free only in pieces counts fragmentation wait") {
  auto sc = cluster(2);
  // Two 4-GPU tasks on the two nodes (worst-fit spreads them), then an 8-GPU task: 8 GPUs are
  // free in total but no node has 8.
  sc.scheduler.placement = "worst-fit";
  sc.cluster.instance_specs.push_back({"a100.4x", "A100", 4, 1000, 48, 480});
  sc.tasks.push_back(task("half-a", 0, 300, 0, "a100.4x"));
  sc.tasks.push_back(task("half-b", 0, 300, 0, "a100.4x"));
  sc.tasks.push_back(task("whole", 10, 100));
  auto w = split_of(sc);
  CHECK(w["fragmentation"] == 290);
  CHECK(w["capacity"] == 0);
}

TEST_CASE("a task blocked by a node blacklist counts node-policy wait until the block expires") {
  auto sc = cluster(1);
  sim::io::NodePolicyCfg p;
  p.name = "block";
  p.type = "NodeNotIn";
  p.scope = "tenant";
  p.nodes = {"a100-0"};
  p.created_s = 0;
  p.expire_s = 600;
  sc.node_policies.push_back(p);
  sc.tasks.push_back(task("blocked", 0, 100));
  auto w = split_of(sc);
  CHECK(w["node_policy"] == 600);
  CHECK(w["capacity"] == 0);
}

TEST_CASE("a task waiting for busy capacity counts capacity wait") {
  auto sc = cluster(1);
  sc.tasks.push_back(task("running", 0, 500));
  sc.tasks.push_back(task("waiting", 100, 50));
  auto w = split_of(sc);
  CHECK(w["capacity"] == 400);
  CHECK(w["quota"] == 0);
}

namespace {
/// Checks that every task's wait buckets sum to its queued time (every attempt from submit to
/// start, or to the makespan when it never started). Returns the total queued time (ms).
libsched::Time check_buckets_sum(const sim::Simulator& s) {
  std::vector<libsched::Time> queued(s.task_stats().size(), 0);
  for (const sim::AttemptRecord* a : s.attempts())
    queued[std::size_t(a->task)] += (a->start >= 0 ? a->start : std::max(a->submit, s.makespan())) - a->submit;
  libsched::Time total = 0;
  for (std::size_t i = 0; i < queued.size(); ++i) {
    const auto& st = s.task_stats()[i];
    libsched::Time sum = st.wait_quota + st.wait_capacity + st.wait_fragmentation + st.wait_cpu_memory + st.wait_node_policy +
               st.wait_idle_stability + st.wait_preemption;
    INFO("task " << s.task_name(i));
    CHECK(sum == queued[i]);
    total += queued[i];
  }
  return total;
}
}  // namespace

TEST_CASE("a task short of vCPU counts cpu_memory wait, not fragmentation") {
  auto sc = cluster(1);  // 8 GPU, 96 vCPU
  sc.cluster.instance_specs.push_back({"hog", "A100", 1, 1000, 90, 100});
  sc.cluster.instance_specs.push_back({"a100.7x", "A100", 7, 1000, 8, 100});
  sc.tasks.push_back(task("hog", 0, 300, 0, "hog"));
  sc.tasks.push_back(task("seven", 10, 100, 0, "a100.7x"));
  sim::Simulator s(sc);
  s.run();
  auto w = nlohmann::json::parse(s.summary_json())["wait_split_s"];
  CHECK(w["cpu_memory"] == 290);
  CHECK(w["fragmentation"] == 0);
  CHECK(w["capacity"] == 0);
  check_buckets_sum(s);
}

TEST_CASE("an idle task waiting for its node to age counts idle_stability wait") {
  auto sc = cluster(1);
  sc.scheduler.idle_stability_high_s = 60;
  sc.tasks.push_back(task("owner", 0, 100));
  auto t = task("idle", 0, 50, 0, "a100.1x");
  t.resource_type = "idle";
  t.idle_stability = "high";
  t.pool = "";
  sc.tasks.push_back(t);
  sim::Simulator s(sc);
  s.run();
  auto w = nlohmann::json::parse(s.summary_json())["wait_split_s"];
  CHECK(w["capacity"] == 100);       // 0..100: the owner holds every GPU
  CHECK(w["idle_stability"] == 60);  // 100..160: free, but younger than 60 s (the wake-up at 160 starts it)
  const auto atts = s.attempts();
  REQUIRE(atts.size() == 2);
  CHECK(atts[1]->start == 160'000);
  check_buckets_sum(s);
}

TEST_CASE("a task whose demand exceeds its quota even with nothing running counts quota wait") {
  auto sc = cluster(2);
  sim::io::QuotaCfg q;
  q.user = "alice";
  q.resource_type = "reserved";
  q.pool = "p";
  q.gpus = 4;
  q.vcpu = 1000;
  q.memory_gib = 10000;
  sc.quotas.push_back(q);
  auto big = task("big", 0, 100);
  big.resource_type = "reserved";
  sc.tasks.push_back(big);
  sc.tasks.push_back(task("other", 0, 100));
  sim::Simulator s(sc);
  s.run();
  auto w = nlohmann::json::parse(s.summary_json())["wait_split_s"];
  CHECK(w["quota"] == 100);
  CHECK(w["capacity"] == 0);
  check_buckets_sum(s);
}

TEST_CASE("when quota and capacity both never admit, the reason lists both and the wait counts as quota") {
  auto sc = cluster(1);
  sim::io::QuotaCfg q;
  q.user = "alice";
  q.resource_type = "reserved";
  q.pool = "p";
  q.gpus = 4;
  q.vcpu = 1000;
  q.memory_gib = 10000;
  sc.quotas.push_back(q);
  sc.cluster.instance_specs.push_back({"a100.16x", "A100", 16, 1000, 96, 960});
  auto big = task("big", 0, 100, 0, "a100.16x");  // 16 GPU on 8-GPU nodes, quota 4 GPU
  big.resource_type = "reserved";
  sc.tasks.push_back(big);
  sc.tasks.push_back(task("other", 0, 100));
  sim::Simulator s(sc);
  s.run();
  auto w = nlohmann::json::parse(s.summary_json())["wait_split_s"];
  CHECK(w["quota"] == 100);
  CHECK(s.attempts().front()->reason.find("[blocking: quota, capacity]") != std::string::npos);
}

TEST_CASE("the reason of a task still waiting at an until_s cut is computed before running attempts stop") {
  auto sc = cluster(1);
  sc.tasks.push_back(task("running", 0, 1000));
  sc.tasks.push_back(task("waiting", 10, 100));
  sc.until_s = 500;
  sim::Simulator s(sc);
  s.run();
  const sim::AttemptRecord* a = s.attempts().back();
  REQUIRE(a->state == sim::AttemptState::queued);
  // At the cut `running` still holds the node: 0 GPU free. Stopping it first made the node
  // look free ("8 GPU free in total but largest free fragment 8 GPU").
  CHECK(a->reason.find("0 GPU free in eligible nodes") != std::string::npos);
  CHECK(a->reason.find("fits now") == std::string::npos);
  check_buckets_sum(s);
}

TEST_CASE("the wait buckets sum to each task's queued time (default scenario, synthetic sweeps)") {
  {
    sim::Simulator s(sim::default_scenario(1));
    s.run();
    CHECK(check_buckets_sum(s) > 0);
  }
  for (const char* q : {"greedy", "strict", "backfill"}) {
    INFO(q);
    sim::SyntheticOptions o;
    o.nodes = 8;
    o.tasks = 150;
    o.load = 1.5;
    o.queueing = q;
    o.seed = 3;
    sim::Simulator s(sim::synthetic_scenario(o));
    s.run();
    CHECK(check_buckets_sum(s) > 0);
  }
}

}  // namespace SCHEDSIM_UNITY_ID
