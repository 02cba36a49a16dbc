// summary.json's wait split: each waiting second lands in the bucket of the scheduler's reason.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "builders.hpp"

using simtest::cluster;
using simtest::task;

namespace {
nlohmann::json split_of(const sim::io::Scenario& sc) {
  sim::Simulator s(sc);
  s.run();
  return nlohmann::json::parse(s.summary_json())["wait_split_s"];
}
}  // namespace

TEST_CASE("a task held back by its user's quota counts its wait as quota wait") {
  auto sc = cluster(2);
  sim::io::QuotaCfg q;
  q.user = "alice";
  q.resource_type = "reserved";
  q.pool = "p";
  q.gpus = 8;
  q.vcpu = 1000;
  q.memory_gib = 10000;
  sc.quotas.push_back(q);
  for (const char* n : {"first", "second"}) {
    auto t = task(n, 0, 100);
    t.resource_type = "reserved";
    sc.tasks.push_back(t);
  }
  auto w = split_of(sc);
  CHECK(w["quota"] == 100);
  CHECK(w["capacity"] == 0);
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
