#include "sim/experiments/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <utility>

#include <boost/math/distributions/normal.hpp>
#include <fmt/format.h>

#include "sim/io/limits.hpp"
#include "sim/io/workload.hpp"

namespace sim {

namespace {
// Philly: servers per job (1, 2, 4, 8, 16, 32) with the trace's counts.
constexpr int kGangReplicas[] = {1, 2, 4, 8, 16, 32};
constexpr double kGangWeights[] = {107853, 2222 + 22, 891 + 1 + 8 + 3, 374 + 17, 134 + 8, 16};
// openb single-replica GPU requests: milli-GPU share or whole GPUs (CPU-only pods left out).
struct GpuReq { int gpus; int milli; };
constexpr GpuReq kGpuReqs[] = {{1, 1000}, {1, 800}, {1, 500}, {1, 600}, {1, 300}, {1, 200},
                               {1, 400},  {8, 1000}, {1, 100}, {2, 1000}, {4, 1000}};
constexpr double kGpuWeights[] = {3911, 1078, 897, 400, 340, 276, 55, 44, 25, 16, 15};
constexpr double kMedianS = 1321, kMeanS = 35595, kMinS = 10, kCapS = 2 * 86400;

/// E[clamp(X, a, b)] for X lognormal(mu, sigma).
double clamped_lognormal_mean(double mu, double sigma, double a, double b) {
  const boost::math::normal n;
  auto cdf = [&](double x) { return boost::math::cdf(n, x); };
  const double za = (std::log(a) - mu) / sigma, zb = (std::log(b) - mu) / sigma;
  const double m = std::exp(mu + sigma * sigma / 2);
  const double inside = m * (cdf(zb - sigma) - cdf(za - sigma));  // E[X; a < X < b]
  return a * cdf(za) + inside + b * (1 - cdf(zb));
}

io::ReplicaCfg replica(int gpus, int milli) {
  io::ReplicaCfg r;
  r.gpus = gpus;
  r.gpu_milli = milli;
  r.vcpu = std::max(1.0, 12.0 * gpus * milli / 1000.0);
  r.memory_gib = std::max(4.0, 96.0 * gpus * milli / 1000.0);
  return r;
}
}  // namespace

io::WorkloadCfg synthetic_workload(const SyntheticOptions& o) {
  if (!(o.spot_share >= 0 && o.spot_share <= 1))
    throw io::WorkloadError(fmt::format("synthetic: spot_share: {}: must be in [0, 1]", o.spot_share));
  if (!(o.load > 0)) throw io::WorkloadError(fmt::format("synthetic: load: {}: must be > 0", o.load));
  io::WorkloadCfg w;
  w.tasks = static_cast<std::int64_t>(o.tasks);
  w.name_prefix = "job-";
  io::DurationCfg d;
  d.distribution = "lognormal";
  d.median_s = kMedianS;
  d.mean_s = kMeanS;
  d.min_s = kMinS;
  d.max_s = kCapS;
  w.duration = d;
  for (int u = 0; u < 50; ++u) w.users.push_back({fmt::format("user-{}", u), 1});

  const double gang_total = std::accumulate(std::begin(kGangWeights), std::end(kGangWeights), 0.0);
  const double gpu_total = std::accumulate(std::begin(kGpuWeights), std::end(kGpuWeights), 0.0);
  const double single = kGangWeights[0] / gang_total;
  io::ChoiceCfg<int> priorities;
  for (int p = 1; p <= 9; ++p) priorities.values.push_back(p), priorities.shares.push_back(1);

  auto base_task = [](const io::ReplicaCfg& r) {
    io::TaskCfg t;
    t.replica = r;
    t.checkpoint_interval_s = 1800;
    t.fault_tolerance.max_resubmissions = 3;
    return t;
  };
  std::vector<io::WorkloadClassCfg> classes;
  double expected_gpus = 0;  // E[GPUs of a task] = sum share x replicas x GPUs per replica
  for (std::size_t i = 0; i < std::size(kGpuReqs); ++i) {
    io::WorkloadClassCfg c;
    c.name = fmt::format("single-{}-{}", kGpuReqs[i].gpus, kGpuReqs[i].milli);
    c.share = single * kGpuWeights[i] / gpu_total;
    c.task = base_task(replica(kGpuReqs[i].gpus, kGpuReqs[i].milli));
    expected_gpus += c.share * kGpuReqs[i].gpus * kGpuReqs[i].milli / 1000.0;
    classes.push_back(std::move(c));
  }
  {
    io::WorkloadClassCfg c;
    c.name = "gang";
    c.share = 1 - single;
    c.task = base_task(replica(8, 1000));
    c.workers = {};
    for (std::size_t i = 1; i < std::size(kGangReplicas); ++i) {
      c.workers.values.push_back(kGangReplicas[i] - 1);
      c.workers.shares.push_back(kGangWeights[i]);
      expected_gpus += kGangWeights[i] / gang_total * kGangReplicas[i] * 8;
    }
    c.task.workers = c.workers.values.back();
    classes.push_back(std::move(c));
  }
  // Each class on pay-as-you-go capacity and, for spot_share of the tasks, on spot capacity.
  for (auto& c : classes) {
    c.priority = priorities;
    c.task.priority_set = true;
    c.runtime_estimate_factor = std::pair{1.0, 2.0};  // users overestimate
    for (auto [type, part] : {std::pair{"pay_as_you_go", 1 - o.spot_share}, std::pair{"spot", o.spot_share}}) {
      if (part <= 0) continue;
      io::WorkloadClassCfg k = c;
      k.task.resource_type = type;
      k.share = c.share * part;
      if (std::string(type) == "spot") k.name += "-spot";
      w.classes.push_back(std::move(k));
    }
  }
  // Arrival rate: `load` x capacity GPU-seconds per second, divided by the expected GPU-seconds
  // of one task (clamped lognormal mean x expected GPUs).
  const double mu = std::log(kMedianS), sigma = std::sqrt(2.0 * std::log(kMeanS / kMedianS));
  const double gpu_seconds = clamped_lognormal_mean(mu, sigma, kMinS, kCapS) * expected_gpus;
  const double capacity_gpus = std::max(1.0, double(o.nodes) * 8.0);
  w.rate_per_hour = std::min(o.load * capacity_gpus * 3600.0 / gpu_seconds, io::limits::max_arrival_rate_per_hour);
  return w;
}

io::Scenario synthetic_scenario_spec(const SyntheticOptions& o) {
  io::Scenario s;
  s.name = fmt::format("synthetic-{}n-{}t", o.nodes, o.tasks);
  s.seed = o.seed;
  s.cluster.name = "synthetic";
  s.scheduler.placement = o.placement;
  s.scheduler.queueing = o.queueing;
  s.scheduler.preemption = o.preemption;
  io::PoolCfg pool;
  pool.name = "shared";
  std::size_t a100 = o.nodes * 6 / 10;
  for (auto [prefix, model, count] : {std::tuple{"a100-", "A100", a100}, std::tuple{"v100-", "V100", o.nodes - a100}}) {
    if (count == 0) continue;
    io::NodeGroupCfg g;
    g.prefix = prefix;
    g.count = int(count);
    g.gpu_model = model;
    g.gpus = 8;
    g.vcpu = 96;
    g.memory_gib = 768;
    g.nodes_per_rack = 32;
    g.racks_per_switch = 8;
    pool.node_groups.push_back(g);
  }
  s.cluster.pools.push_back(pool);
  s.workload = synthetic_workload(o);
  return s;
}

io::Scenario synthetic_scenario(const SyntheticOptions& o) {
  io::Scenario s = synthetic_scenario_spec(o);
  if (o.tasks > 0) io::apply_workload(s);
  s.workload.reset();
  return s;
}

}  // namespace sim
