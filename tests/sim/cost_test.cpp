// Costs (docs/outputs.md "Costs"): each capacity class, the reserved commitment over the span, an
// idle fallback at the idle price, lost work, autoscaling, and the groups summing to the totals.
// Every expected value is computed by hand: GPUs x hours held x price per GPU-hour.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "builders.hpp"
#include "sim/io/resolve.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

using namespace simtest;
using nlohmann::json;

/// Prices in USD for A100: reserved, pay-as-you-go, spot, idle per GPU-hour (-1: not priced).
sim::io::PricesCfg a100(double reserved, double payg, double spot, double idle) {
  sim::io::PricesCfg p;
  p.currency = "USD";
  auto& m = p.gpu_models["A100"];
  if (reserved >= 0) m.reserved = reserved;
  if (payg >= 0) m.pay_as_you_go = payg;
  if (spot >= 0) m.spot = spot;
  if (idle >= 0) m.idle = idle;
  return p;
}

struct Run {
  json summary;
  std::vector<std::string> costs;  // tasks.csv `cost`, one per attempt row
  std::string prom;
};

Run run(const sim::io::Scenario& sc) {
  sim::Simulator s(sc);
  s.run();
  Run r;
  r.summary = json::parse(s.summary_json());
  std::istringstream in(s.tasks_csv());
  std::string line;
  std::getline(in, line);
  // `cost` is followed by the seven wait-split columns (docs/outputs.md "tasks.csv").
  const std::string tail = ",cost,wait_quota_s,wait_capacity_s,wait_fragmentation_s,wait_cpu_memory_s,wait_node_policy_s,"
                           "wait_idle_stability_s,wait_preemption_s";
  REQUIRE(line.size() > tail.size());
  REQUIRE(line.substr(line.size() - tail.size()) == tail);
  const auto cost_of = [](const std::string& row) {
    std::size_t end = row.size();
    for (int k = 0; k < 7; ++k) end = row.rfind(',', end - 1);  // skip the seven wait-split fields
    const std::size_t begin = row.rfind(',', end - 1) + 1;
    return row.substr(begin, end - begin);
  };
  while (std::getline(in, line)) r.costs.push_back(cost_of(line));
  return r;
}

TEST_CASE("cost: a pay-as-you-go attempt pays its GPUs x hours x the model's price") {
  auto sc = cluster(1);
  sc.tasks = {task("a", 0, 3600)};  // 8 GPUs for 1 h at 4.0
  sc.prices = a100(-1, 4.0, -1, -1);
  const Run r = run(sc);
  CHECK(r.costs == std::vector<std::string>{"32"});
  CHECK(r.summary["currency"] == "USD");
  CHECK(r.summary["cost_pay_as_you_go"] == 32);
  CHECK(r.summary["cost_total"] == 32);
  CHECK(r.summary["cost_reserved"] == 0);
  CHECK(r.summary["cost_lost_work"] == 0);
}

TEST_CASE("cost: a spot attempt pays the spot price") {
  auto sc = cluster(1);
  auto t = task("s", 0, 1800, 0, "a100.1x");  // 1 GPU for 0.5 h at 1.6
  t.resource_type = "spot";
  sc.tasks = {t};
  sc.prices = a100(-1, 4.0, 1.6, -1);
  const Run r = run(sc);
  CHECK(r.costs == std::vector<std::string>{"0.8"});
  CHECK(r.summary["cost_spot"] == 0.8);
  CHECK(r.summary["cost_pay_as_you_go"] == 0);
  CHECK(r.summary["cost_total"] == 0.8);
}

TEST_CASE("cost: an instance spec's price replaces the GPU model's for replicas of that spec") {
  auto sc = cluster(2);
  sc.tasks = {task("a", 0, 1800, 1)};  // 2 replicas of a100.8x for 0.5 h at 30 per instance-hour
  sc.prices = a100(-1, 4.0, -1, -1);
  sc.prices->instance_specs["a100.8x"].pay_as_you_go = 30.0;
  CHECK(run(sc).costs == std::vector<std::string>{"30"});
}

TEST_CASE("cost: a CPU-only replica pays per vCPU-hour") {
  auto sc = cluster(1);
  sc.cluster.instance_specs.push_back({"cpu.4", "", 0, 1000, 4, 16});
  sc.tasks = {task("c", 0, 3600, 0, "cpu.4")};  // 4 vCPU for 1 h at 0.05
  sc.prices = a100(-1, 4.0, -1, -1);
  sc.prices->cpu_vcpu.pay_as_you_go = 0.05;
  CHECK(run(sc).costs == std::vector<std::string>{"0.2"});
}

TEST_CASE("cost: a reserved quota is committed over [0, makespan]; reserved tasks inside it pay nothing per use") {
  auto sc = cluster(2);
  sc.quotas.push_back({"alice", "reserved", "p", 16, 192, 1920});
  auto r1 = task("r", 0, 1800);  // reserved, 8 GPUs for 0.5 h
  r1.resource_type = "reserved";
  auto q = task("q", 0, 3600);   // bob, pay-as-you-go 8 GPUs for 1 h: the span is 1 h
  q.user = "bob";
  sc.tasks = {r1, q};
  sc.prices = a100(2.5, 4.0, -1, -1);
  const Run r = run(sc);
  CHECK(r.costs == std::vector<std::string>{"0", "32"});
  CHECK(r.summary["makespan_s"] == 3600);
  CHECK(r.summary["cost_reserved"] == 40);         // 16 GPUs x 1 h x 2.5
  CHECK(r.summary["cost_reserved_unused"] == 30);  // 40 - 8 GPUs x 0.5 h x 2.5
  CHECK(r.summary["cost_pay_as_you_go"] == 32);
  CHECK(r.summary["cost_total"] == 72);
  CHECK(r.summary["groups"]["user"]["alice"]["cost"] == 40);
  CHECK(r.summary["groups"]["user"]["bob"]["cost"] == 32);
  CHECK(r.summary["groups"]["capacity"]["reserved"]["cost"] == 40);
  CHECK(r.summary["groups"]["capacity"]["pay_as_you_go"]["cost"] == 32);
}

TEST_CASE("cost: a commitment nobody uses is all unused and gets its user's group row") {
  auto sc = cluster(1);
  sc.quotas.push_back({"carol", "reserved", "p", 8, 96, 960});  // no task of carol's
  sc.tasks = {task("a", 0, 3600)};
  sc.prices = a100(2.5, 4.0, -1, -1);
  const Run r = run(sc);
  CHECK(r.summary["cost_reserved"] == 20);  // 8 GPUs x 1 h x 2.5
  CHECK(r.summary["cost_reserved_unused"] == 20);
  CHECK(r.summary["cost_total"] == 52);
  CHECK(r.summary["groups"]["user"]["carol"]["tasks"] == 0);
  CHECK(r.summary["groups"]["user"]["carol"]["cost"] == 20);
  CHECK(r.summary["groups"]["tenant"]["default"]["cost"] == 52);
}

TEST_CASE("cost: a reserved task that fell back to idle capacity pays the idle price") {
  // alice's quota (8 GPU) in pool `mine` cannot hold the 16-GPU gang: it runs on idle capacity of
  // pool `other` for 100 s (docs/scheduler.md "accept_idle never mixes").
  auto sc = cluster(0);
  sim::io::PoolCfg mine = cluster(1).cluster.pools[0], other = cluster(2).cluster.pools[0];
  mine.name = "mine";
  mine.kind = "dedicated";
  mine.node_groups[0].prefix = "r";
  other.name = "other";
  other.kind = "dedicated";
  other.node_groups[0].prefix = "i";
  sc.cluster.pools = {mine, other};
  sc.quotas.push_back({"alice", "reserved", "mine", 8, 96, 960});
  auto t = task("t", 0, 100, 1);
  t.resource_type = "reserved";
  t.pool = "mine";
  t.accept_idle = true;
  sc.tasks = {t};
  sc.prices = a100(3.6, 4.0, -1, 0.9);
  const Run r = run(sc);
  CHECK(r.costs == std::vector<std::string>{"0.4"});  // 16 GPUs x 100 s x 0.9 / 3600
  CHECK(r.summary["cost_idle"] == 0.4);
  CHECK(r.summary["cost_reserved"] == 0.8);         // 8 GPUs x 100 s x 3.6 / 3600
  CHECK(r.summary["cost_reserved_unused"] == 0.8);  // the task used none of it
  CHECK(r.summary["cost_total"] == 1.2);
  CHECK(r.summary["groups"]["capacity"]["idle"]["cost"] == 0.4);
  CHECK(r.summary["groups"]["capacity"]["reserved"]["cost"] == 0.8);
}

TEST_CASE("cost: a preempted attempt's work beyond its last checkpoint is lost money, priced at its class") {
  auto sc = cluster(1);
  auto low = task("low", 0, 1000);
  low.priority = 3;
  low.checkpoint_interval_s = 100;
  low.fault_tolerance.max_resubmissions = 1;
  auto high = task("high", 250, 500);
  high.priority = 7;
  sc.tasks = {low, high};
  sc.prices = a100(-1, 9.0, -1, -1);  // 8 GPUs at 9.0: 0.02 per second
  const Run r = run(sc);
  // low 0..250 (checkpoint at 200: 50 s lost), high 250..750, low again 750..1550.
  CHECK(r.costs == std::vector<std::string>{"5", "16", "10"});
  CHECK(r.summary["cost_lost_work"] == 1);
  CHECK(r.summary["cost_total"] == 31);
}

TEST_CASE("cost: a failed attempt without a checkpoint loses all it paid, its start-up included") {
  auto sc = cluster(1);
  auto t = task("a", 0, 3600);
  t.image_pull_s = 200;
  sc.tasks = {t};
  sc.events.push_back(fault(1000, "a", "transient"));
  sc.prices = a100(-1, 9.0, -1, -1);
  const Run r = run(sc);
  CHECK(r.costs == std::vector<std::string>{"20"});  // 1000 s x 0.02
  CHECK(r.summary["cost_lost_work"] == 20);
}

TEST_CASE("cost: precheck and debug holding are paid") {
  auto sc = cluster(1);
  auto t = task("ray", 0, 1000);
  t.type = "RayJob";
  t.precheck_s = 100;
  t.debug = true;
  t.debug_retention_s = 600;
  sc.tasks = {t};
  sc.prices = a100(-1, 9.0, -1, -1);
  const Run r = run(sc);
  CHECK(r.costs == std::vector<std::string>{"34"});  // held 0..1700 s x 0.02
  CHECK(r.summary["cost_lost_work"] == 0);
}

TEST_CASE("cost: autoscaling workers are paid from when they are added until they are removed") {
  auto sc = cluster(1);
  auto ray = task("ray", 0, 1000, 2, "a100.1x");
  ray.type = "RayJob";
  ray.autoscaling.edit().enabled = true;
  ray.autoscaling.edit().min_workers = 1;
  ray.autoscaling.edit().max_workers = 3;
  ray.autoscaling.edit().idle_reclaim_s = 60;
  ray.autoscaling.edit().scale_out = "aggressive";
  ray.autoscaling.edit().demand = {{100, 5}, {500, 0}};
  sc.tasks = {ray};
  sc.prices = a100(-1, 3.6, -1, -1);  // 0.001 per GPU-second
  // 2 GPUs 0..100, 4 GPUs 100..560, 2 GPUs 560..1000: 200 + 1840 + 880 GPU-seconds.
  CHECK(run(sc).costs == std::vector<std::string>{"2.92"});
}

TEST_CASE("cost: without prices every cost is 0, the currency empty and metrics.prom has no cost series") {
  auto sc = cluster(1);
  sc.quotas.push_back({"alice", "reserved", "p", 8, 96, 960});
  sc.tasks = {task("a", 0, 3600)};
  const Run r = run(sc);
  CHECK(r.costs == std::vector<std::string>{"0"});
  CHECK(r.summary["currency"] == "");
  for (const char* k : {"cost_total", "cost_reserved", "cost_pay_as_you_go", "cost_spot", "cost_idle", "cost_reserved_unused",
                        "cost_lost_work"})
    CHECK(r.summary[k] == 0);
  CHECK(r.summary["groups"]["user"]["alice"]["cost"] == 0);
}

TEST_CASE("cost: each group dimension sums to cost_total, and the classes too (default scenario)") {
  sim::io::Scenario sc = sim::default_scenario(3);
  sim::io::PricesCfg p;
  p.currency = "USD";
  for (const auto& spec : sc.cluster.instance_specs)
    if (!spec.gpu_model.empty()) p.gpu_models[spec.gpu_model] = {2.0, 4.0, 1.5, 1.0};
  p.cpu_vcpu = {std::nullopt, 0.05, 0.02, 0.01};
  sc.prices = p;
  sim::Simulator s(sc);
  s.run();
  const json j = json::parse(s.summary_json());
  const double total = j["cost_total"].get<double>();
  REQUIRE(total > 0);
  CHECK(j["cost_spot"].get<double>() > 0);
  CHECK(j["cost_idle"].get<double>() > 0);
  CHECK(j["cost_reserved"].get<double>() > 0);
  CHECK(j["cost_pay_as_you_go"].get<double>() > 0);
  const double classes = j["cost_reserved"].get<double>() + j["cost_pay_as_you_go"].get<double>() +
                         j["cost_spot"].get<double>() + j["cost_idle"].get<double>();
  CHECK(std::fabs(classes - total) <= 0.002);
  for (const char* by : {"user", "tenant", "pool", "gpu_model", "capacity"}) {
    double sum = 0;
    std::size_t groups = 0;
    for (const auto& [k, g] : j["groups"][by].items()) sum += g["cost"].get<double>(), ++groups;
    INFO(by);
    CHECK(std::fabs(sum - total) <= 0.0005 * double(groups + 1));  // each value rounded to 3 decimals
  }
  CHECK(j["cost_reserved_unused"].get<double>() <= j["cost_reserved"].get<double>());
  CHECK(j["cost_lost_work"].get<double>() >= 0);
}

TEST_CASE("cost: metrics.prom gives the costs with a currency label") {
  auto sc = cluster(1);
  sc.tasks = {task("a", 0, 3600)};
  sc.prices = a100(-1, 4.0, -1, -1);
  sim::Simulator s(sc);
  s.run();
  const auto dir = std::filesystem::temp_directory_path() / ("schedsim-cost-prom-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  s.write_outputs(dir.string());
  std::ifstream f(dir / "metrics.prom");
  std::stringstream text;
  text << f.rdbuf();
  std::filesystem::remove_all(dir);
  CHECK(text.str().find("schedsim_cost{cluster=\"c1\",region=\"r1\",currency=\"USD\",kind=\"total\"} 32\n") != std::string::npos);
  CHECK(text.str().find("schedsim_cost{cluster=\"c1\",region=\"r1\",currency=\"USD\",kind=\"pay_as_you_go\"} 32\n") !=
        std::string::npos);
  CHECK(text.str().find(",currency=\"USD\"} 32\n") != std::string::npos);  // schedsim_task_cost of task a
}

}  // namespace SCHEDSIM_UNITY_ID
