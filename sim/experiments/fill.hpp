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
#include <string_view>
#include <vector>

#include "libsched/cluster.hpp"
#include "libsched/registry.hpp"
#include "libsched/task.hpp"

namespace sim {

/// Which semantics `fill` places pods with.
/// - reference (default): the FGD authors' simulator (docs/fill.md): integer scores of
///   libsched/placement/fgd_compat.hpp, ties to a per-seed random node rank, GPU choice per
///   policy, clones appended until the next one would pass the target, fragmentation against the
///   typical pods (95 % popularity cut). Policies: random, dot-product, gpu-clustering,
///   gpu-packing, best-fit, fgd.
/// - platform: libsched's Scheduler with any registered placement policy (its own formulas,
///   lowest-node-id ties) and FragmentationTracker over every replica shape of the trace.
enum class FillSemantics { reference, platform };

/// "reference" / "platform".
std::string_view to_string(FillSemantics s);

/// The policies `FillSemantics::reference` knows, in the FGD paper's order.
const std::vector<std::string>& reference_fill_policies();

struct FillOptions {
  std::string policy = "fgd";     ///< reference: one of reference_fill_policies(); platform: a name in `registry`
  FillSemantics semantics = FillSemantics::reference;
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
  /// Means over the "window" of k: every state right after a task (and the initial state) whose
  /// arrived GPUs round (half to even) to k % (i.e. [k - 0.5, k + 0.5) %); if none, those
  /// rounding to k - 1..k + 1; if still none, the row's own values. This is how the FGD paper
  /// reports the allocation at "130 %".
  double allocated_gpu_pct_mean = 0;
  double frag_gpu_pct_mean = 0;
  std::size_t window_states = 0;  ///< states averaged (0: the fallback to the row's own values)
};

/// The cluster right after one task arrived and was placed or dropped (the first: before any task).
struct FillPoint {
  std::int64_t arrived_milli = 0;  ///< GPUs requested so far, milli-GPU
  std::int64_t allocated_milli = 0;
  double frag_milli = 0;
};

struct FillResult {
  std::vector<FillRow> rows;      ///< arrived_pct = 0, 1, ..., floor(target_pct)
  std::vector<FillPoint> points;  ///< every state, in arrival order (rows are computed from them)
  std::size_t tasks_arrived = 0;
  std::size_t tasks_placed = 0;
};

/// Runs one fill experiment. `tasks` are the trace's tasks (their shapes; times ignored);
/// every task's first option is used. Throws std::out_of_range for an unknown policy and
/// std::invalid_argument when `tasks` is empty, the cluster has no GPU, or (reference) no task
/// asks for a GPU or a task is a gang of more than one replica.
/// Cost: O(arrived tasks x nodes x policy score).
FillResult run_fill(const libsched::Cluster& cluster, const std::vector<libsched::TaskSpec>& tasks, const FillOptions& opts);

/// fill.csv text: header `arrived_pct,allocated_gpu_pct,frag_gpu_pct,failed_tasks,
/// allocated_gpu_pct_mean,frag_gpu_pct_mean,window_states`, one row per FillRow, percentages
/// with 4 decimals.
std::string fill_csv(const FillResult& r);

}  // namespace sim
