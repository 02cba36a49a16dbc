// Seeded synthetic clusters and workloads for benchmarks and what-if sweeps.
//
// Gang sizes follow the Philly trace's distribution of servers per job, GPUs per replica the
// Alibaba 2023 (openb) distribution of GPU requests for single-replica tasks (GPU shares of
// 0.1-0.9 GPU, 1, 2, 4, 8 GPUs) and 8 GPUs per replica for multi-server gangs, as Philly's
// multi-server jobs mostly are; durations are log-normal with Philly's median (1,321 s) and
// mean (35,595 s), capped at 7 days. Arrivals are a Poisson process whose rate offers
// `load` x the cluster's GPU capacity. All draws use Boost.Random (portable).
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
  double load = 0.9;               ///< offered GPU load over the arrival span
  std::string placement = "best-fit";
  std::string queueing = "greedy";
  bool preemption = true;
  double spot_share = 0.1;         ///< share of tasks on spot capacity
};

/// A complete scenario (cluster, scheduler options, tasks with runtime estimates) ready to run.
io::Scenario synthetic_scenario(const SyntheticOptions& o);

}  // namespace sim
