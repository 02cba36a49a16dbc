// Fill mode: the FGD paper's "workload inflation" experiment (Weng et al., USENIX ATC'23,
// Sec. 5.1; docs/outputs.md "fill.csv").
//
// The trace's tasks are shuffled with the seed; random copies are appended until the GPUs
// requested reach `target_pct` % of the cluster's GPUs; tasks are placed one by one with the
// chosen policy and nothing departs. Each time another whole percent of cluster GPUs has
// arrived, one row records the GPU allocation ratio, the fragmented GPUs (FGD's measure
// against the trace's task distribution) and the tasks that found no node so far.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libsched/cluster.hpp"
#include "libsched/registry.hpp"
#include "libsched/task.hpp"

namespace sim {

struct FillOptions {
  std::string policy = "fgd";     ///< a placement policy name (in `registry`)
  std::uint64_t seed = 1;
  double target_pct = 130;        ///< stop when requested GPUs reach this % of cluster GPUs
  /// Where `policy` is looked up; nullptr = Registry::builtin().
  const libsched::Registry* registry = nullptr;
};

/// One row of fill.csv. Percentages are of the cluster's GPUs (fractions of GPUs counted).
struct FillRow {
  int arrived_pct = 0;            ///< GPUs requested so far, floor, in %
  double allocated_gpu_pct = 0;   ///< GPUs allocated, in %
  double frag_gpu_pct = 0;        ///< fragmented GPUs F(M) (fragmentation.hpp), in %
  std::size_t failed_tasks = 0;   ///< tasks that found no node so far
};

struct FillResult {
  std::vector<FillRow> rows;      ///< arrived_pct = 0, 1, ..., floor(target_pct)
  std::size_t tasks_arrived = 0;
  std::size_t tasks_placed = 0;
};

/// Runs one fill experiment. `tasks` are the trace's tasks (their shapes; times ignored);
/// every task's first option is used. Throws std::out_of_range for an unknown policy and
/// std::invalid_argument when `tasks` is empty or the cluster has no GPU.
/// Cost: O(arrived tasks x nodes x policy score).
FillResult run_fill(const libsched::Cluster& cluster, const std::vector<libsched::TaskSpec>& tasks, const FillOptions& opts);

/// fill.csv text: header `arrived_pct,allocated_gpu_pct,frag_gpu_pct,failed_tasks`, one row
/// per FillRow, percentages with 4 decimals.
std::string fill_csv(const FillResult& r);

}  // namespace sim
