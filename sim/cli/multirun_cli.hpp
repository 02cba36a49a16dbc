// `schedsim run --seeds K`, `schedsim compare`, `schedsim sweep`, `schedsim plan`: many runs of
// one scenario (seeds, overrides, grids) summarised with 95 % confidence intervals. File formats,
// statistics and the plan algorithm: docs/planning.md. The runs use sim/multirun.hpp.
//
// Every command validates all its input first (exit 2, nothing written), then checks --out
// and creates its staging directory (exit 1), then simulates and publishes its files together,
// completely or not at all (sim/publish.hpp). 130/143 after SIGINT/SIGTERM, nothing published.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cli/run_cli.hpp"
#include "sim/experiments/multirun.hpp"
#include "sim/experiments/shard.hpp"

namespace sim {

/// Options shared by the multi-run commands.
struct MultirunOptions {
  std::string out_dir;  ///< --out: output directory (created if missing)
  int seeds = 1;        ///< --seeds K: seeds s, s+1, ..., s+K-1 with s = --seed or the scenario's seed
  unsigned jobs = 1;    ///< --jobs N: simulations run in parallel (1 .. kMaxJobs)
  bool progress = true; ///< progress line on stderr (only when stderr is a terminal)
  /// sweep --shard I/N: run only the grid points p with p mod N = I and write DIR/shard.json
  /// (for `schedsim merge`) instead of sweep.csv and sweep_summary.csv.
  std::optional<ShardSpec> shard;
  /// sweep --emit slurm|k8s: validate, run the first point once (memory estimate) and write the
  /// job scripts of a sharded sweep into DIR instead of running it (emit_jobs).
  std::optional<EmitOptions> emit;
  /// --metric NAME (repeatable; run --seeds, sweep, plan): a group metric `DIMENSION[KEY].METRIC`
  /// becomes a column / entry after the summary metrics; a summary metric is one already.
  std::vector<std::string> metrics;
  /// --slo METRIC<=VALUE (repeatable; run --seeds, sweep, compare; plan has its own): each is
  /// checked with 95 % confidence (slo_met) and reported (seeds_summary.json / compare.json
  /// `slos`, sweep_slo.csv); the exit status does not depend on it.
  std::vector<std::string> slos;
};

/// Most simulations one sweep (points x seeds) may ask for (more: exit 2).
inline constexpr std::uint64_t kMaxSweepRuns = 10'000;
/// Most grid values one --vary of plan may have (more: exit 2).
inline constexpr std::uint64_t kMaxPlanValues = 10'000;

/// One --vary option: PATH and its values as text, in the order given (a `lo..hi[:step]` range
/// expanded, each number printed with fmt "{}").
struct VaryAxis {
  std::string path;
  std::vector<std::string> values;  ///< each parsed like a --set VALUE (JSON when valid, else a string)
  bool range = false;               ///< given as lo..hi[:step]
  std::vector<double> numbers;      ///< range only: the values as numbers
  /// Range of integers only (lo, hi and step written as integers): the values exactly.
  std::vector<std::int64_t> integers;
  /// The --zip options after this --vary: each moves with it (value i with value i; as many values).
  std::vector<VaryAxis> zipped;
};

/// One --vary or --zip argument of sweep or plan, in command-line order (a --zip belongs to the
/// --vary before it).
struct GridOption {
  std::string text;  ///< PATH=VALUES
  bool zip = false;  ///< --zip (else --vary)
};

/// Parses `PATH=v1,v2,...` (commas inside [], {} or "..." do not split) or `PATH=lo..hi[:step]`
/// (numbers; no step = 1; integers, computed exactly in int64, when lo, hi and step are written
/// as integers, else decimals rounded to the most decimals written). `max_values` bounds a
/// range's length. On error (also an integer outside int64) returns nullopt and sets `error` to
/// `--vary: ARG: RULE`.
std::optional<VaryAxis> parse_vary(std::string_view arg, std::uint64_t max_values, std::string& error);

/// A metric named in --slo or --metric: a summary metric (`p95_wait_s`, one of
/// summary_metric_names()) or a group metric `DIMENSION[KEY].METRIC` (`tenant[vision].p95_wait_s`:
/// DIMENSION one of group_by_names(), METRIC one of group_metric_names(), KEY any non-empty text
/// without `]`). In a run where the group has no task every group metric is 0.
struct MetricRef {
  std::string text;      ///< as written (the column / entry name in the outputs)
  std::string group_by;  ///< "" for a summary metric
  std::string group;     ///< KEY
  std::string metric;    ///< the summary or group metric name
};

/// Parses a metric name. On error returns nullopt and sets `rule` to why (unknown dimension or
/// metric, listing the valid ones; malformed `DIMENSION[KEY].METRIC`).
std::optional<MetricRef> parse_metric_ref(std::string_view text, std::string& rule);

/// The value of `ref` in run `r` (0 when the run has no such metric or group).
double metric_value(const RunMetrics& r, const MetricRef& ref);

/// One --slo: `METRIC<=VALUE` (also `<`, `>=`, `>`); METRIC a MetricRef.
struct Slo {
  std::string metric;  ///< METRIC as written (MetricRef::text)
  std::string op;  ///< "<=", "<", ">=" or ">"
  double value = 0;
  std::string text;  ///< as given
  MetricRef ref;     ///< METRIC parsed
};

/// Parses a --slo argument. On error returns nullopt and sets `error` to `--slo: ARG: RULE`
/// (unknown metric or dimension, missing or bad operator, a value that is not a finite number).
std::optional<Slo> parse_slo(std::string_view arg, std::string& error);

/// Whether an SLO holds "with 95 % confidence": for `<=` / `<` the CI upper bound must satisfy
/// it, for `>=` / `>` the CI lower bound.
bool slo_met(const Slo& slo, double ci95_low, double ci95_high);

/// `schedsim run --seeds K` (K > 1): K runs of `source` (seeds s .. s+K-1), printed table
/// `metric mean std ci95_low ci95_high`; writes DIR/seeds_summary.json, DIR/seeds.csv and
/// DIR/scenario.resolved.json (seed s). Returns 0; 2 for input problems; 1 for I/O problems;
/// 130/143 when interrupted.
int seeds_command(const ScenarioSource& source, const MultirunOptions& opts, std::ostream& out, std::ostream& err);

/// `schedsim compare A B`: K paired runs of `a` and `b` with the same seeds (s = --seed or A's
/// seed); writes DIR/compare.json, DIR/compare_groups.csv, DIR/a.resolved.json,
/// DIR/b.resolved.json and prints a table. Exit codes as seeds_command.
int compare_command(const ScenarioSource& a, const ScenarioSource& b, const MultirunOptions& opts, std::ostream& out,
                    std::ostream& err);

/// `schedsim sweep`: the cartesian grid of the --vary options of `grid` (first = slowest), each
/// --zip moving with the --vary before it (one dimension, one column per PATH), K seeds each;
/// every point is validated before any simulation. Writes DIR/sweep.csv and
/// DIR/sweep_summary.csv; with opts.shard DIR/shard.json; with opts.emit the job scripts
/// (docs/sharding.md). A --zip with another count of values than its --vary, or none before
/// it, exits 2. Exit codes as seeds_command.
int sweep_command(const ScenarioSource& source, const std::vector<GridOption>& grid, const MultirunOptions& opts,
                  std::ostream& out, std::ostream& err);

/// `schedsim merge` of sweep shards (read_shards checked them): the runs of every shard put back
/// in the unsharded order and written by the formatter of sweep_command, so DIR/sweep.csv and
/// DIR/sweep_summary.csv are byte for byte those of the unsharded sweep. Returns 0; 2 when a
/// shard's runs do not match its share of the grid; 1 for I/O problems.
int sweep_merge(const std::vector<ShardFile>& shards, const std::string& out_dir, std::ostream& out, std::ostream& err);

/// Arguments of `schedsim plan` besides the shared ones.
struct PlanArgs {
  /// --vary PATH=lo..hi[:step]: exactly one without --minimize; with --minimize one or more,
  /// also PATH=v1,v2,... lists (the cartesian grid, first = slowest, as sweep).
  std::vector<std::string> vary;
  std::vector<std::string> slos;          ///< --slo METRIC<=VALUE (repeatable, at least one)
  std::optional<std::string> complement;  ///< --complement PATH2=TOTAL: PATH2 = TOTAL - the sum of the varied values
  std::optional<std::string> minimize;    ///< --minimize METRIC: a scalar metric (summary_metric_names())
  std::optional<std::string> search;      ///< --search bisection|exhaustive (default bisection)
  std::vector<std::string> zip;           ///< --zip PATH2=VALUES: as many values as the --vary before it, moving with it
  /// --vary and --zip in command-line order (a --zip joins the --vary before it); when empty,
  /// `vary` then `zip` (every --zip joins the last --vary).
  std::vector<GridOption> grid;
};

/// `schedsim plan`. Without --minimize: the smallest grid value of the --vary PATH meeting every
/// SLO with 95 % confidence: bisection, then the two grid values below the answer are checked;
/// when the evaluated values are not monotone every value below the answer is evaluated and the
/// answer is the smallest value meeting the SLOs; `--search exhaustive` evaluates every value.
/// With --minimize METRIC: every point of the grid, the answer is the point with the smallest
/// mean METRIC meeting every SLO, and DIR/pareto.csv holds the Pareto front. Writes
/// DIR/plan.json, prints the evaluated points and the answer as the last line. Exit codes as
/// seeds_command (an unmet plan is exit 0 with `"met": false`; an unknown --minimize metric, a
/// bad --search: 2).
int plan_command(const ScenarioSource& source, const PlanArgs& args, const MultirunOptions& opts, std::ostream& out,
                 std::ostream& err);

}  // namespace sim
