// The embedded default scenario: a 64-node, two-pool, two-GPU-model cluster with a seeded
// generated workload (Boost.Random, portable) that exercises every capacity class, both task
// types, priorities, guarantee, preemption, node policies, injected faults and resubmissions.
#include <algorithm>
#include <cmath>

#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <fmt/format.h>

#include "sim/io/resolve.hpp"

namespace sim {

io::Scenario default_scenario(std::uint64_t seed) {
  using namespace io;
  Scenario sc;
  sc.name = "default";
  sc.file = "<default>";
  sc.seed = seed;
  sc.cluster.name = "sim-cluster";
  sc.cluster.region = "region-1";
  sc.cluster.instance_specs = {
      {"a100.8x", "A100", 8, 1000, 96, 960}, {"a100.4x", "A100", 4, 1000, 48, 480}, {"a100.1x", "A100", 1, 1000, 12, 120},
      {"h800.8x", "H800", 8, 1000, 128, 1600}, {"h800.2x", "H800", 2, 1000, 32, 400},
  };
  PoolCfg shared;
  shared.name = "shared-a100";
  shared.kind = "shared";
  NodeGroupCfg a100;
  a100.prefix = "a100-";
  a100.count = 40;
  a100.gpu_model = "A100";
  a100.gpus = 8;
  a100.vcpu = 96;
  a100.memory_gib = 960;
  a100.nodes_per_rack = 8;
  a100.racks_per_switch = 2;
  a100.mtbf_s = 30 * 24 * 3600.0;   // about one failure per node a month
  a100.mttr_s = 1800;
  a100.unhealthy_prob = 0.01;
  shared.node_groups.push_back(a100);
  PoolCfg dedicated;
  dedicated.name = "dedicated-h800";
  dedicated.kind = "dedicated";
  NodeGroupCfg h800;
  h800.prefix = "h800-";
  h800.count = 24;
  h800.gpu_model = "H800";
  h800.gpus = 8;
  h800.vcpu = 128;
  h800.memory_gib = 1600;
  h800.nodes_per_rack = 8;
  dedicated.node_groups.push_back(h800);
  sc.cluster.pools = {shared, dedicated};

  const std::vector<std::string> users = {"alice", "bob", "carol", "dave", "erin"};
  for (const auto& u : users) {
    sc.quotas.push_back({u, "reserved", "shared-a100", 96, 1152, 11520});
    sc.quotas.push_back({u, "reserved", "dedicated-h800", 64, 1024, 12800});
  }

  NodePolicyCfg block;
  block.name = "skip-flaky";
  block.type = "NodeNotIn";
  block.scope = "tenant";
  block.nodes = {"a100-0", "a100-1", "a100-2"};
  block.created_s = 0;
  block.expire_s = 4 * 3600.0;
  sc.node_policies.push_back(block);
  NodePolicyCfg pin;
  pin.name = "pin-h800";
  pin.type = "NodeIn";
  pin.scope = "user";
  pin.user = "carol";
  pin.effect = "explicit";
  pin.nodes = {"h800-0", "h800-1", "h800-2", "h800-3", "h800-4", "h800-5", "h800-6", "h800-7"};
  sc.node_policies.push_back(pin);

  sc.scheduler.placement = "best-fit";
  sc.scheduler.preemption = true;
  sc.scheduler.queueing = "greedy";

  boost::random::mt19937_64 g(seed * 0x9e3779b97f4a7c15ull + 12345);
  auto uni = [&](double a, double b) { return boost::random::uniform_real_distribution<double>(a, b)(g); };
  auto pick = [&](int a, int b) { return boost::random::uniform_int_distribution<int>(a, b)(g); };
  auto coin = [&](double p) { return boost::random::bernoulli_distribution<double>(p)(g); };
  auto secs = [](double x) { return std::round(x); };

  const int n = 300;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += boost::random::exponential_distribution<double>(1.0 / 60.0)(g);
    TaskCfg k;
    k.name = fmt::format("job-{:03d}", i);
    k.user = users[std::size_t(pick(0, int(users.size()) - 1))];
    k.submit_s = secs(t);
    k.duration_s = std::clamp(secs(boost::random::exponential_distribution<double>(1.0 / 1800.0)(g)), 60.0, 4 * 3600.0);
    k.type = coin(0.25) ? "RayJob" : "PyTorchJob";
    double r = uni(0, 1);
    k.resource_type = r < 0.40 ? "reserved" : r < 0.65 ? "pay_as_you_go" : r < 0.80 ? "spot" : "idle";
    bool h = k.resource_type == "reserved" && coin(0.35);
    k.pool = k.resource_type == "reserved" ? (h ? "dedicated-h800" : "shared-a100") : "";
    int shape = pick(0, 3);
    if (h) {
      k.specs = shape < 2 ? std::vector<std::string>{"h800.8x"} : std::vector<std::string>{"h800.2x"};
    } else {
      switch (shape) {
        case 0: k.specs = {"a100.8x", "a100.4x"}; break;
        case 1: k.specs = {"a100.4x"}; break;
        case 2: k.specs = {"a100.1x"}; k.count_per_node = pick(1, 2); break;
        default: k.specs = {"a100.8x"}; break;
      }
    }
    k.workers = pick(0, 3);
    if (k.resource_type != "idle") {
      k.priority = pick(1, 9);
      k.priority_set = true;
      k.guarantee = k.resource_type == "reserved" && coin(0.1);
      k.guarantee_set = true;
    }
    if (k.resource_type == "reserved" && !h && coin(0.2)) {
      k.accept_idle = true;
      k.idle_stability = coin(0.5) ? "medium" : "low";
    }
    if (k.resource_type == "idle") k.idle_stability = coin(0.3) ? "high" : "low";
    if (coin(0.5)) k.checkpoint_interval_s = 600;
    k.fault_tolerance.max_resubmissions = pick(0, 3);
    if (coin(0.5)) k.runtime_estimate_s = secs(k.duration_s * uni(0.8, 1.5));
    if (k.user == "carol" && h) k.node_policies = {"pin-h800"};
    if (coin(0.2)) k.precheck_s = 60;
    if (coin(0.3)) {
      k.image_pull_s = 30;
      k.image_pull_failure_prob = 0.1;
      int m = pick(0, 2);
      k.image_pull_retries = m == 0 ? 0 : m == 1 ? -1 : 3;
    }
    if (coin(0.2)) k.transient_failure_rate_per_h = 0.05;
    if (k.type == "RayJob") {
      if (!h) k.head_spec = "a100.1x";
      if (coin(0.25)) k.debug = true;
      if (coin(0.35)) {
        k.autoscaling.edit().enabled = true;
        k.autoscaling.edit().min_workers = std::min(1, k.workers);
        k.autoscaling.edit().max_workers = k.workers + 2;
        k.autoscaling.edit().idle_reclaim_s = 300;
        k.autoscaling.edit().scale_out = coin(0.5) ? "aggressive" : "conservative";
        k.autoscaling.edit().demand = {{secs(k.duration_s * 0.2), k.workers + 2}, {secs(k.duration_s * 0.6), 0}};
      }
    }
    sc.tasks.push_back(std::move(k));
  }

  // Injected faults: on tasks picked by the generator.
  const char* errors[] = {"transient", "transient", "transient", "gpu_oom", "bad_command", "image_unavailable", "invalid_data_path"};
  for (int i = 0; i < 16; ++i) {
    const auto& k = sc.tasks[std::size_t(pick(0, n - 1))];
    EventCfg e;
    e.kind = "task_fault";
    e.task = k.name;
    e.error = errors[std::size_t(pick(0, 6))];
    e.at_s = secs(k.submit_s + uni(0, k.duration_s));
    sc.events.push_back(e);
  }
  for (int i = 0; i < 3; ++i) {
    EventCfg d;
    d.kind = "node_down";
    d.node = fmt::format("h800-{}", pick(0, 23));
    d.at_s = secs(uni(0, t));
    EventCfg u = d;
    u.kind = "node_up";
    u.at_s = d.at_s + secs(uni(600, 3600));
    sc.events.push_back(d);
    sc.events.push_back(u);
  }
  for (int i = 0; i < 2; ++i) {
    EventCfg s;
    s.kind = "spot_reclaim";
    for (int j = 0; j < 8; ++j) s.nodes.push_back(fmt::format("a100-{}", pick(0, 39)));
    std::sort(s.nodes.begin(), s.nodes.end());
    s.nodes.erase(std::unique(s.nodes.begin(), s.nodes.end()), s.nodes.end());
    s.at_s = secs(uni(0, t));
    sc.events.push_back(s);
  }
  std::stable_sort(sc.events.begin(), sc.events.end(), [](const EventCfg& a, const EventCfg& b) { return a.at_s < b.at_s; });
  return sc;
}

}  // namespace sim
