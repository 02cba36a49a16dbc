// Sharded sweeps (docs/sharding.md): `schedsim sweep|fill ... --shard I/N` runs one share of the
// grid and writes DIR/shard.json; `schedsim merge SHARD_DIR... --out DIR` combines the N shard
// folders into the files one unsharded run writes; `--emit slurm|k8s` writes the job scripts
// that run the shards on a Slurm cluster (job array) or on Kubernetes (Indexed Job).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sim {

/// --shard I/N: shard I (0-based) of N.
struct ShardSpec {
  std::uint32_t index = 0;
  std::uint32_t count = 1;
};

/// Most shards one sweep may be cut into (--shard I/N, --shards N), the limit of runs of a sweep.
inline constexpr std::uint32_t kMaxShards = 10'000;

/// Default --shards of --emit: min(points, 64), at least 1 (points = grid points of a sweep,
/// policy x seed runs of a fill).
std::uint32_t default_shard_count(std::size_t points);

/// Parses `I/N`: two decimal integers, 1 <= N <= kMaxShards, 0 <= I < N. On error returns
/// nullopt and sets `error` to the one-line diagnostic `--shard: VALUE: RULE`.
std::optional<ShardSpec> parse_shard(std::string_view text, std::string& error);

/// The stable assignment of points to shards: point p (0-based, in the unsharded output order)
/// belongs to shard p mod N. It depends only on p and N, so every shard computes its share
/// without talking to the others, and neighbouring points (often of similar cost) are spread.
inline bool in_shard(std::size_t point, const ShardSpec& s) { return point % s.count == s.index; }

/// The points of `points` that belong to shard `s`, increasing.
std::vector<std::size_t> shard_points(std::size_t points, const ShardSpec& s);

/// 64-bit FNV-1a hash of `text` as 16 lowercase hex digits (the grid fingerprint of shard.json;
/// detects shards of different sweeps, not an adversary).
std::string fingerprint_hex(std::string_view text);

/// The file every shard folder holds.
inline constexpr const char* kShardFileName = "shard.json";

/// shard.json text: `{"schema": "schedsim/shard/v1", "command", "schedsim" (version),
/// "fingerprint", "shard", "shards", "grid", "runs"}` (2-space indent, ending in a newline).
/// `grid` describes the whole sweep (the same in every shard); `runs` holds this shard's results
/// at full precision (doubles round-trip), in the unsharded order.
std::string shard_document(const std::string& command, const std::string& fingerprint, const ShardSpec& shard,
                           const nlohmann::ordered_json& grid, const nlohmann::ordered_json& runs);

/// The exact readers of shard.json values (merge must never take a value it did not write):
/// an unsigned integer no larger than `max` (not a float, not a negative number, not a boolean),
/// and a finite number. Both throw std::invalid_argument naming the rule.
std::uint64_t shard_uint(const nlohmann::ordered_json& v, std::uint64_t max);
double shard_number(const nlohmann::ordered_json& v);

/// One shard folder read back by `schedsim merge`.
struct ShardFile {
  std::string dir;          ///< as given on the command line
  std::string file;         ///< dir/shard.json (the FILE of diagnostics)
  std::string command;      ///< "sweep" or "fill"
  std::string fingerprint;  ///< of the grid and scenario (fingerprint_hex)
  ShardSpec shard;
  nlohmann::ordered_json grid;
  nlohmann::ordered_json runs;  ///< an array
};

/// Reads the shard.json of every folder in `dirs` and checks that they are exactly shards 0 ..
/// N-1 of one sweep: the same command, fingerprint, N and grid; no index twice; none missing.
/// Prints one line per problem (`FILE: KEY: VALUE: RULE`; a missing shard as
/// `schedsim merge: shard: I: ...`) and returns nullopt with `exit_code` 2 (1 when a folder
/// exists but cannot be read). On success the shards are sorted by index.
std::optional<std::vector<ShardFile>> read_shards(const std::vector<std::string>& dirs, std::ostream& err, int& exit_code);

// ------------------------------------------------------------------ --emit slurm|k8s

/// --emit: what to write instead of running.
struct EmitOptions {
  std::string target;                   ///< "slurm" or "k8s"
  std::optional<std::uint32_t> shards;  ///< --shards N (default default_shard_count)
  std::string image = "schedsim:latest";  ///< --image (k8s): container image holding schedsim on its PATH
  /// The command's arguments after its name, as given, without --out, --emit, --shards, --jobs,
  /// --image (each shard passes them to `schedsim COMMAND`, adding --shard and --out).
  std::vector<std::string> args;
};

/// The arguments of `argv` after the first `command` token, without --out, --emit, --shards,
/// --jobs and --image (both `--opt VALUE` and `--opt=VALUE`).
std::vector<std::string> shard_command_args(const std::vector<std::string>& argv, const std::string& command);

/// Peak resident memory of this process so far (getrusage ru_maxrss), in MiB, rounded up.
std::uint64_t peak_rss_mib();

/// The memory each shard asks for, in MiB: the measured peak `peak_mib` of one run x 1.5 + 64,
/// rounded up to a multiple of 64, at least 256 (docs/sharding.md "Memory request").
std::uint64_t shard_memory_mib(std::uint64_t peak_mib);

/// What --emit needs to know about the sweep.
struct EmitPlan {
  std::string command;       ///< "sweep" or "fill"
  std::string fingerprint;   ///< names the Kubernetes objects
  std::size_t points = 0;    ///< the shardable units (grid points; fill: policy x seed runs)
  std::uint64_t peak_mib = 0;  ///< peak_rss_mib() after one run of the first point
};

/// Writes the job scripts of `plan` into `out_dir` (completely or not at all; sim/publish.hpp):
/// slurm: slurm-shards.sbatch (job array 0..N-1, one core, --mem), slurm-merge.sbatch and
/// submit.sh (sbatch --parsable, then the merge with --dependency=afterok:ARRAY), plus an empty
/// logs/; k8s: k8s-volume.yaml (ReadWriteMany claim), k8s-shards.yaml (Indexed Job),
/// k8s-merge.yaml (the merge Job) and submit.sh (kubectl apply, wait, apply). Prints what was
/// written. Returns 0; 2 for a bad --shards; 1 for I/O problems.
int emit_jobs(const EmitPlan& plan, const EmitOptions& emit, const std::string& out_dir, std::ostream& out, std::ostream& err);

}  // namespace sim
