// `schedsim fill`: the FGD workload-inflation experiment on a scenario's cluster and trace,
// for one policy and seed (DIR/fill.csv, the contract's file) or a sweep over policies and
// seeds (also DIR/fill_curves.csv and DIR/fill_summary.csv).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <libsched/registry.hpp>

#include "sim/io/scenario.hpp"
#include "sim/experiments/shard.hpp"

namespace sim {

struct FillCommandOptions {
  std::string out_dir;
  std::optional<std::string> policy;        ///< --policy: overrides scheduler.placement
  std::optional<std::uint64_t> seed;        ///< --seed: overrides the scenario seed
  std::optional<double> target_pct;         ///< --target-pct: overrides fill.target_pct (default 130)
  std::vector<std::string> policies;        ///< --policies: sweep these (empty: just `policy`)
  int seeds = 0;                            ///< --seeds K: sweep seeds seed, seed+1, ..., seed+K-1
  std::string semantics = "reference";      ///< --semantics: "reference" (FGD authors' simulator) or "platform"
  /// Placement policies by name; nullptr = libsched::Registry::builtin().
  const libsched::Registry* registry = nullptr;
  /// --shard I/N: run only the runs q (policy-major: q = policy index x seeds + seed index) with
  /// q mod N = I and write DIR/shard.json instead of the fill files (docs/sharding.md).
  std::optional<ShardSpec> shard;
  /// --emit slurm|k8s: run the first policy and seed once (memory estimate) and write the job
  /// scripts of a sharded fill into DIR instead of running it (emit_jobs).
  std::optional<EmitOptions> emit;
  /// The scenario before its traces were loaded (ResolvedScenario::resolved_json), part of the
  /// shard fingerprint; empty: resolved_scenario_json(sc), slower (every trace task inline).
  std::string resolved_json;
};

/// Runs the fill experiment(s) on a scenario whose traces are already applied. Writes, each
/// completely or not at all:
///   DIR/fill.csv          the first policy and seed: arrived_pct,allocated_gpu_pct,frag_gpu_pct,failed_tasks,
///                         allocated_gpu_pct_mean,frag_gpu_pct_mean,window_states (sim/fill.hpp FillRow)
///   DIR/fill_curves.csv   (sweeps) policy,seed, then the fill.csv columns
///   DIR/fill_summary.csv  (sweeps) policy,runs,alloc_at_target_mean,alloc_at_target_std,frag_at_target_mean,
///                         alloc_window_mean,alloc_window_std,frag_window_mean (the target row's window means),
///                         frag_at_target_std,frag_window_std
/// and prints a table on `out` (the window means, as the FGD paper reports "130 %"). Returns 0; 2 after printing an input problem on `err`; 1 when
/// --out cannot be written (checked before any experiment runs); 130/143 on SIGINT/SIGTERM.
int fill_command(const io::Scenario& sc, const FillCommandOptions& opts, std::ostream& out, std::ostream& err);

/// `schedsim merge` of fill shards (read_shards checked them): every run put back in the
/// unsharded order and written by fill_command's formatter, so fill.csv, fill_curves.csv and
/// fill_summary.csv are those of the unsharded fill, byte for byte (the printed table's wall
/// time is the sum of the runs' times as measured in the shards). Returns 0; 2 when
/// a shard's runs do not match its share; 1 for I/O problems.
int fill_merge(const std::vector<ShardFile>& shards, const std::string& out_dir, std::ostream& out, std::ostream& err);

}  // namespace sim
