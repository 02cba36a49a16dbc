// Seeded synthetic clusters and workloads for benchmarks and what-if sweeps, built on the
// scenario's workload generator (docs/scenario-format.md "Workload generator", "Presets").
//
// Gang sizes follow the Philly trace's distribution of servers per job, GPUs per replica the
// Alibaba 2023 (openb) distribution of GPU requests for single-replica tasks (GPU shares of
// 0.1-0.9 GPU, 1, 2, 4, 8 GPUs) and 8 GPUs per replica for multi-server gangs, as Philly's
// multi-server jobs mostly are; durations are log-normal with Philly's median (1,321 s) and
// mean (35,595 s), clamped to [10 s, 2 days]. Arrivals are a Poisson process whose rate offers
// `load` x the cluster's GPU capacity (in expectation). All draws use Boost.Random (portable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/io/scenario.hpp"

namespace sim {

struct SyntheticOptions {
  std::size_t nodes = 1000;        ///< 8-GPU nodes, two GPU models (A100 60 %, V100 40 %), racks of 32
  std::size_t tasks = 10000;
  std::uint64_t seed = 1;
  double load = 1.0;               ///< offered GPU load over the arrival span (expected GPU-seconds / capacity)
  std::string placement = "best-fit";
  std::string queueing = "greedy";
  bool preemption = true;
  double spot_share = 0.1;         ///< share of tasks on spot capacity, in [0, 1]
};

/// The Philly/openb workload as a `workload` section: classes `single-G-M` (one replica of G GPUs
/// at M milli-GPU, openb shares), `gang` (8-GPU replicas, Philly gang sizes) and their `-spot`
/// twins (`spot_share` of the tasks), priorities 1..9 and 50 users `user-0`..`user-49` with equal
/// shares, runtime estimate factor uniform in [1, 2], checkpoints every 1,800 s, 3 resubmissions,
/// `tasks` tasks at the rate that offers `load` x the GPUs of `nodes` 8-GPU nodes.
io::WorkloadCfg synthetic_workload(const SyntheticOptions& o);

/// The synthetic scenario with its `workload` section and no tasks yet: what a scenario file
/// would hold (scenario_to_json writes it); resolving it (io::apply_workload) draws the tasks.
io::Scenario synthetic_scenario_spec(const SyntheticOptions& o);

/// A complete scenario (cluster, scheduler options, tasks with runtime estimates) ready to run:
/// synthetic_scenario_spec(o) with its workload generated from `o.seed` (io::apply_workload) and
/// the section then removed (the tasks are inline). Throws io::WorkloadError only on a bad
/// option (spot_share outside [0, 1], load <= 0).
io::Scenario synthetic_scenario(const SyntheticOptions& o);

}  // namespace sim
