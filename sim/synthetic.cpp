#include "sim/synthetic.hpp"

#include <algorithm>
#include <cmath>

#include <boost/random/discrete_distribution.hpp>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <fmt/format.h>

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
constexpr double kMedianS = 1321, kMeanS = 35595, kCapS = 7 * 86400;
}  // namespace

io::Scenario synthetic_scenario(const SyntheticOptions& o) {
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

  boost::random::mt19937_64 rng(o.seed);
  boost::random::discrete_distribution<int> gang(std::begin(kGangWeights), std::end(kGangWeights));
  boost::random::discrete_distribution<int> gpu(std::begin(kGpuWeights), std::end(kGpuWeights));
  const double mu = std::log(kMedianS);
  const double sigma = std::sqrt(2.0 * std::log(kMeanS / kMedianS));
  boost::random::lognormal_distribution<double> dur(mu, sigma);
  boost::random::uniform_real_distribution<double> u01(0.0, 1.0);
  boost::random::uniform_int_distribution<int> prio(1, 9);
  boost::random::uniform_int_distribution<int> user(0, 49);

  s.tasks.reserve(o.tasks);
  double gpu_seconds = 0;
  for (std::size_t i = 0; i < o.tasks; ++i) {
    io::TaskCfg t;
    t.name = fmt::format("job-{}", i);
    t.user = fmt::format("user-{}", user(rng));
    int replicas = kGangReplicas[gang(rng)];
    io::ReplicaCfg r;
    if (replicas == 1) {
      GpuReq g = kGpuReqs[gpu(rng)];
      r.gpus = g.gpus;
      r.gpu_milli = g.milli;
    } else {
      r.gpus = 8;
    }
    r.vcpu = std::max(1.0, 12.0 * r.gpus * r.gpu_milli / 1000.0);
    r.memory_gib = std::max(4.0, 96.0 * r.gpus * r.gpu_milli / 1000.0);
    t.workers = replicas - 1;
    t.replica = r;
    t.duration_s = std::round(std::clamp(dur(rng), 10.0, kCapS));
    t.runtime_estimate_s = std::round(t.duration_s * (1.0 + u01(rng)));   // users overestimate
    t.checkpoint_interval_s = 1800;
    t.fault_tolerance.max_resubmissions = 3;
    bool spot = u01(rng) < o.spot_share;
    t.resource_type = spot ? "spot" : "pay_as_you_go";
    t.priority = prio(rng);
    t.priority_set = true;
    gpu_seconds += t.duration_s * replicas * r.gpus * r.gpu_milli / 1000.0;
    s.tasks.push_back(std::move(t));
  }
  // Poisson arrivals over the span that offers `load` x capacity.
  const double capacity_gpus = double(o.nodes) * 8.0;
  const double span = gpu_seconds / (o.load * capacity_gpus);
  boost::random::exponential_distribution<double> gap(double(o.tasks) / std::max(span, 1.0));
  double t = 0;
  for (auto& task : s.tasks) {
    task.submit_s = std::round(t);
    t += gap(rng);
  }
  return s;
}

}  // namespace sim
