// schedsim: command-line entry point (CLI11), sim::cli_main (sim/cli.hpp). Subcommands: run,
// validate, convert, import k8s, fill, decide, report, show-default, compare, sweep, plan, merge. Each is one add_<name>_command function that
// registers the subcommand and sets `exit_code` in its callback, plus one line in cli_main().
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include <fmt/format.h>
#include <libsched/version.hpp>

#include "sim/cli/cli.hpp"
#include "sim/cli/backtest_cli.hpp"
#include "sim/cli/convert_cli.hpp"
#include "sim/cli/decide_cli.hpp"
#include "sim/cli/fill_cli.hpp"
#include "sim/cli/forecast_cli.hpp"
#include "sim/cli/import_cli.hpp"
#include "sim/cli/merge_cli.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/io/overrides.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"
#include "sim/outputs/report.hpp"
#include "sim/cli/run_cli.hpp"
#include "sim/cli/validate_cli.hpp"
#include "sim/experiments/multirun.hpp"
#include "sim/cli/multirun_cli.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/experiments/shard.hpp"
#include "sim/io/version.hpp"

namespace {

/// A CLI11 validator: the whole value parses as a T with std::from_chars (no sign for unsigned
/// types, no spaces, no trailing text) and `ok(x)` holds; otherwise the error is "VALUE: RULE".
/// CLI11 alone wraps `-1` into unsigned values and saturates overflow silently.
template <class T, class Ok>
CLI::Validator parsed_check(Ok ok, std::string rule, std::string description) {
  return CLI::Validator(
      [ok, rule](std::string& v) -> std::string {
        T x{};
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size() || !ok(x)) return v + ": " + rule;
        return {};
      },
      std::move(description));
}

/// --seed: a decimal integer 0..2^64-1.
const CLI::Validator k_seed_check = parsed_check<std::uint64_t>(
    [](std::uint64_t) { return true; }, "must be an integer from 0 to 18446744073709551615", "UINT64");

/// --until: a finite number of seconds in [0, 1e9] (the scenario's bound for every time).
const CLI::Validator k_until_check = parsed_check<double>(
    [](double x) { return std::isfinite(x) && x >= 0 && x <= 1e9; }, "must be a number of seconds from 0 to 1e9", "SECONDS");

/// --scheduler-timeout: seconds one exchange with --scheduler-cmd may take, > 0 and <= 86400.
const CLI::Validator k_scheduler_timeout_check = parsed_check<double>(
    [](double x) { return std::isfinite(x) && x > 0 && x <= 86400; }, "must be a number of seconds > 0 and <= 86400", "SECONDS");

/// --scheduler-cmd / --scheduler-timeout on `cmd` (run and validate check them alike).
void add_scheduler_cmd_options(CLI::App* cmd, std::string& command, double& timeout_s) {
  cmd->add_option("--scheduler-cmd", command,
                  "External scheduler: a command (sh -c) answering one `decide` snapshot line per scheduling instant "
                  "(docs/external-scheduler.md)")
      ->check(CLI::Validator([](std::string& v) { return v.find_first_not_of(" \t") == std::string::npos ? std::string("must not be empty") : std::string(); },
                             "COMMAND"));
  cmd->add_option("--scheduler-timeout", timeout_s, "Seconds one --scheduler-cmd exchange may take (default 10)")
      ->check(k_scheduler_timeout_check);
}

/// --arrival-scale: a number > 0 and <= 1000 (traces[i].arrival_scale).
const CLI::Validator k_arrival_scale_check = parsed_check<double>(
    [](double x) { return std::isfinite(x) && x > 0 && x <= 1000; },
    "must be a number > 0 and <= 1000 (the factor on the gaps between arrivals)", "FACTOR");

/// --limit: a decimal integer >= 0 (CLI11 alone turns `-1` into 2^64-1, i.e. "unlimited").
const CLI::Validator k_limit_check = parsed_check<std::uint64_t>(
    [](std::uint64_t) { return true; }, "must be an integer >= 0 (a number of jobs)", "JOBS");

/// --seeds K (run, compare, sweep, plan): an integer from 1 to 10000.
const CLI::Validator k_seeds_check = parsed_check<int>(
    [](int x) { return x >= 1 && x <= 10000; }, "must be an integer from 1 to 10000 (a number of seeds)", "K");

/// --jobs N: an integer from 1 to sim::kMaxJobs.
const CLI::Validator k_jobs_check = parsed_check<unsigned>(
    [](unsigned x) { return x >= 1 && x <= sim::kMaxJobs; },
    "must be an integer from 1 to " + std::to_string(sim::kMaxJobs) + " (simulations run in parallel)", "N");

/// --set PATH=VALUE (repeatable), and with `shortcuts` also --placement NAME and --queueing MODE
/// (docs/scenario-format.md "Overrides").
struct OverrideArgs {
  std::vector<std::string> sets;
  std::string placement, queueing, trace;
  CLI::Option* placement_opt = nullptr;
  CLI::Option* queueing_opt = nullptr;
  CLI::Option* trace_opt = nullptr;  ///< fill: --trace PATH = traces[0].path

  void add_to(CLI::App* cmd, bool shortcuts) {
    cmd->add_option("--set", sets, "Override a scenario value: PATH=VALUE, e.g. cluster.pools[a100].node_groups[0].count=10 (repeatable)")
        ->allow_extra_args(false);
    if (!shortcuts) return;
    placement_opt = cmd->add_option("--placement", placement, "Override scheduler.placement");
    queueing_opt = cmd->add_option("--queueing", queueing, "Override scheduler.queueing");
  }
  /// The overrides in order (--set, then --placement, then --queueing); prints problems and
  /// returns nullopt when a --set is not PATH=VALUE.
  std::optional<std::vector<sim::io::Override>> get() const {
    std::vector<sim::io::Override> out;
    std::vector<sim::io::Diagnostic> diags;
    for (const auto& a : sets)
      if (auto o = sim::io::parse_set_argument(a, diags)) out.push_back(std::move(*o));
    if (placement_opt && *placement_opt) out.push_back(sim::io::make_override("--placement", "scheduler.placement", placement));
    if (queueing_opt && *queueing_opt) out.push_back(sim::io::make_override("--queueing", "scheduler.queueing", queueing));
    if (trace_opt && *trace_opt) out.push_back(sim::io::make_override("--trace", "traces[0].path", trace));
    for (auto& o : out)  // a shortcut's value is a name, never JSON
      if (o.option != "--set") o.value = o.value_text;
    for (const auto& d : diags) std::cerr << d.str() << "\n";
    if (!diags.empty()) return std::nullopt;
    return out;
  }
};

/// --shard I/N, --emit slurm|k8s, --shards N and --image IMAGE of sweep and fill (docs/sharding.md).
struct ShardArgs {
  std::string shard, emit, image;
  unsigned shards = 0;
  CLI::Option* shard_opt = nullptr;
  CLI::Option* emit_opt = nullptr;
  CLI::Option* shards_opt = nullptr;
  CLI::Option* image_opt = nullptr;

  void add_to(CLI::App* cmd, const char* points) {
    shard_opt = cmd->add_option("--shard", shard,
                                fmt::format("Run only shard I of N (0 <= I < N): the {} p with p mod N = I; writes DIR/shard.json "
                                            "for `schedsim merge`",
                                            points));
    emit_opt = cmd->add_option("--emit", emit, "Write the job scripts of a sharded run into --out DIR instead of running: slurm (job "
                                               "array) or k8s (Indexed Job)")
                   ->check(CLI::IsMember({"slurm", "k8s"}));
    shards_opt = cmd->add_option("--shards", shards, fmt::format("With --emit: number of shards (default: the number of {}, at most 64)", points))
                     ->check(parsed_check<unsigned>([](unsigned x) { return x >= 1 && x <= sim::kMaxShards; },
                                                    "must be an integer from 1 to " + std::to_string(sim::kMaxShards), "N"));
    image_opt = cmd->add_option("--image", image, "With --emit k8s: the container image with schedsim on its PATH (default schedsim:latest)");
  }
  /// Sets `out_shard` / `out_emit` from the options; prints one line and returns false when they
  /// are wrong or do not go together. `argv` is the whole command line (the emitted jobs repeat it).
  bool get(const std::string& command, const std::vector<std::string>& argv, std::optional<sim::ShardSpec>& out_shard,
           std::optional<sim::EmitOptions>& out_emit) const {
    if (*shard_opt) {
      std::string error;
      out_shard = sim::parse_shard(shard, error);
      if (!out_shard) {
        std::cerr << error << "\n";
        return false;
      }
      if (*emit_opt) {
        std::cerr << fmt::format("--shard: {}: not with --emit (each emitted job passes its own --shard)\n", shard);
        return false;
      }
    }
    if (*shards_opt && !*emit_opt) {
      std::cerr << fmt::format("--shards: {}: only with --emit slurm|k8s (--shard I/N runs one shard)\n", shards);
      return false;
    }
    if (*image_opt && emit != "k8s") {
      std::cerr << fmt::format("--image: {}: only with --emit k8s\n", image);
      return false;
    }
    if (*emit_opt) {
      sim::EmitOptions e;
      e.target = emit;
      if (*shards_opt) e.shards = std::uint32_t(shards);
      if (*image_opt) e.image = image;
      e.args = sim::shard_command_args(argv, command);
      out_emit = std::move(e);
    }
    return true;
  }
};

/// `schedsim validate SCENARIO [--set ...]`: checks a scenario, prints diagnostics, exits 0 or 2.
void add_validate_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("validate", "Check a scenario file and report every problem");
  auto path = std::make_shared<std::string>();
  auto ov = std::make_shared<OverrideArgs>();
  cmd->add_option("SCENARIO", *path, "Scenario JSON file")->required();
  ov->add_to(cmd, true);
  // Accepted (and checked) as `run` takes them; validate starts no process.
  auto scheduler_cmd = std::make_shared<std::pair<std::string, double>>("", 10.0);
  add_scheduler_cmd_options(cmd, scheduler_cmd->first, scheduler_cmd->second);
  cmd->callback([path, ov, scheduler_cmd, &exit_code, &registry] {
    (void)scheduler_cmd;  // kept alive while CLI11 writes into it
    const auto overrides = ov->get();
    exit_code =
        overrides ? sim::io::validate_command(*path, std::cout, std::cerr, *overrides, registry) : sim::io::exit_invalid_input;
  });
}

/// `schedsim show-default [--seed N]`: prints the embedded default scenario as a scenario file.
void add_show_default_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("show-default", "Print the embedded default scenario (what `run` without a scenario runs)");
  auto seed = std::make_shared<std::uint64_t>(1);
  cmd->add_option("--seed", *seed, "Seed of the generated workload (default 1, as `run`)")->check(k_seed_check);
  cmd->callback([seed, &exit_code] {
    std::cout << sim::resolved_scenario_json(sim::default_scenario(*seed));
    exit_code = 0;  // a write error is seen at the end (finish_stdout)
  });
}

/// `schedsim convert --format F --path P [--nodes N] ... --out S.json`: a trace to a scenario.
void add_convert_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("convert", "Convert a public trace (openb, philly, swf) into a scenario file");
  auto o = std::make_shared<sim::ConvertOptions>();
  o->registry = &registry;
  cmd->add_option("--format", o->trace.format, "Trace format")->required()->check(CLI::IsMember({"openb", "philly", "swf"}));
  cmd->add_option("--path", o->trace.path, "Pod/job file, absolute or relative to $SCHEDSIM_DATA")->required();
  cmd->add_option("--nodes", o->trace.nodes, "Node/machine list (openb, philly), absolute or relative to $SCHEDSIM_DATA");
  cmd->add_option("--limit", o->trace.limit, "Read at most this many jobs")->check(k_limit_check);
  cmd->add_option("--procs-per-node", o->trace.procs_per_node, "SWF: processors per node")->check(CLI::PositiveNumber);
  cmd->add_option("--arrival-scale", o->trace.arrival_scale,
                  "Multiply the gaps between arrivals (durations kept; 0.5 = twice the arrival rate)")
      ->check(k_arrival_scale_check);
  cmd->add_option("--pool", o->trace.pool, "Pool of the trace's nodes (default: the format name)");
  cmd->add_option("--resource-type", o->trace.resource_type, "Resource type of the tasks")
      ->check(CLI::IsMember({"reserved", "pay_as_you_go", "spot", "idle"}));
  cmd->add_option("--placement", o->placement, "scheduler.placement of the scenario written");
  cmd->add_flag("--skip-bad-rows", o->skip_bad_rows, "Skip and count malformed rows instead of failing");
  cmd->add_option("--out", o->out, "Scenario file to write")->required();
  cmd->callback([o, &exit_code] { exit_code = sim::convert_command(*o, std::cout, std::cerr); });
}

/// `schedsim import k8s PATH... [--out S.json] [--snapshot OUT.json]`: Kubernetes objects to a
/// scenario and/or a decide snapshot (docs/kubernetes.md).
void add_import_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("import", "Import objects of another system into a scenario");
  cmd->require_subcommand(1);
  auto* k8s = cmd->add_subcommand("k8s", "Kubernetes objects (nodes, PyTorchJob, TrainJob, RayJob, Kueue) to a scenario or a snapshot");
  auto o = std::make_shared<sim::ImportK8sOptions>();
  k8s->add_option("paths", o->import.paths, "YAML or JSON files, or folders of them")->required();
  k8s->add_option("--out", o->out, "Scenario file to write");
  k8s->add_option("--snapshot", o->snapshot, "decide snapshot to write (docs/decide.md)");
  k8s->add_option("--pool-label", o->import.pool_label, "Node label naming each node's pool (default: one pool `default`)");
  k8s->add_option("--duration-s", o->import.duration_s, "Duration (s) of a job without start and completion times")
      ->capture_default_str();
  k8s->add_option("--name", o->import.name, "The scenario's name")->capture_default_str();
  k8s->callback([o, &exit_code] { exit_code = sim::import_k8s_command(*o, std::cout, std::cerr); });
}

/// Loads a scenario file with its overrides and traces; prints every problem and returns nullopt on error.
std::optional<sim::ResolvedScenario> load_with_traces(const std::string& path, bool skip_bad_rows, const OverrideArgs& ov,
                                                      const libsched::Registry& registry) {
  const auto overrides = ov.get();
  if (!overrides) return std::nullopt;
  sim::ScenarioSource src;
  src.path = path;
  src.overrides = *overrides;
  src.skip_bad_rows = skip_bad_rows;
  src.registry = &registry;
  return sim::resolve_scenario(src, std::cerr);
}

/// `schedsim run [SCENARIO] --out DIR [--seed N] [--until T]`: simulate; no scenario = the
/// embedded default scenario.
void add_run_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("run", "Simulate a scenario (default: the embedded default scenario) and write outputs");
  struct Args {
    std::string path;
    sim::RunOptions run;
    bool skip_bad_rows = false;
    std::uint64_t seed = 0;
    double until = 0;
    int seeds = 1;
    unsigned jobs = 1;
    std::string outputs;
    std::vector<std::string> metrics;
    std::vector<std::string> slos;
    OverrideArgs ov;
  };
  auto a = std::make_shared<Args>();
  a->run.out_dir = "out";
  a->run.registry = &registry;
  cmd->add_option("SCENARIO", a->path, "Scenario JSON file (omit for the embedded default scenario)");
  cmd->add_option("--out", a->run.out_dir, "Output directory (default: out)");
  auto* seed = cmd->add_option("--seed", a->seed, "Random seed (overrides the scenario's)")->check(k_seed_check);
  auto* until = cmd->add_option("--until", a->until, "Stop the simulation at this time (seconds)")->check(k_until_check);
  cmd->add_flag("--skip-bad-rows", a->skip_bad_rows, "Skip and count malformed trace rows instead of failing");
  cmd->add_flag("!--no-progress", a->run.progress, "Do not show the progress line");
  cmd->add_option("--seeds", a->seeds, "Run K seeds s..s+K-1 (s = --seed or the scenario's) and write seeds_summary.json, seeds.csv")
      ->check(k_seeds_check);
  cmd->add_option("--jobs", a->jobs, "With --seeds: simulations run in parallel (default 1)")->check(k_jobs_check);
  cmd->add_option("--metric", a->metrics, "With --seeds: a group metric DIMENSION[KEY].METRIC as a further column (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--slo", a->slos, "With --seeds: METRIC<=VALUE (also <, >=, >) checked with 95 % confidence (repeatable)")
      ->allow_extra_args(false);
  auto* outputs = cmd->add_option("--outputs", a->outputs,
                                  "Files to write, comma-separated: tasks, summary, groups, events, timeseries, metrics, "
                                  "resolved, timeline, or all (default: all but timeline)");
  a->ov.add_to(cmd, true);
  add_scheduler_cmd_options(cmd, a->run.scheduler_cmd, a->run.scheduler_timeout_s);
  cmd->callback([a, seed, until, outputs, &exit_code, &registry] {
    if (*seed) a->run.seed = a->seed;
    if (*until) a->run.until_s = a->until;
    if (*outputs) {
      std::string error;
      auto sel = sim::parse_outputs(a->outputs, error);
      if (!sel) {
        std::cerr << "schedsim run: " << error << "\n";
        exit_code = sim::io::exit_invalid_input;
        return;
      }
      a->run.outputs = *sel;
    }
    const auto overrides = a->ov.get();
    if (!a->metrics.empty() && a->seeds <= 1) {
      std::cerr << "--metric: " << a->metrics.front() << ": needs --seeds K with K > 1 (a single run writes every group to groups.csv)\n";
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    if (!a->slos.empty() && a->seeds <= 1) {
      std::cerr << "--slo: " << a->slos.front() << ": needs --seeds K with K > 1 (an SLO is checked on the 95 % interval over seeds)\n";
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    if (!a->run.scheduler_cmd.empty() && a->seeds > 1) {
      std::cerr << "--scheduler-cmd: runs one simulation: not with --seeds K > 1\n";
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    if (overrides && a->seeds > 1) {  // K runs summarised (sim/multirun_cli.hpp); K = 1: a plain run
      sim::ScenarioSource src;
      src.path = a->path;
      src.overrides = *overrides;
      src.seed = a->run.seed;
      src.until_s = a->run.until_s;
      src.skip_bad_rows = a->skip_bad_rows;
      src.registry = &registry;
      const sim::MultirunOptions mo{a->run.out_dir, a->seeds, a->jobs, a->run.progress, {}, {}, a->metrics, a->slos};
      exit_code = sim::seeds_command(src, mo, std::cout, std::cerr);
      return;
    }
    std::optional<sim::ResolvedScenario> r;
    if (overrides) {
      sim::ScenarioSource src;
      src.path = a->path;
      src.overrides = *overrides;
      src.seed = a->run.seed;
      src.until_s = a->run.until_s;
      src.skip_bad_rows = a->skip_bad_rows;
      src.registry = &registry;
      r = sim::resolve_scenario(src, std::cerr);
    }
    if (!r) {
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    exit_code = sim::run_command(std::move(r->scenario), a->run, std::cout, std::cerr, r->resolved_json);
  });
}

/// `schedsim fill SCENARIO --out DIR [--policy NAME] [--seed N] [--target-pct P] [--semantics reference|platform]`.
void add_fill_command(CLI::App& app, int& exit_code, const libsched::Registry& registry, const std::vector<std::string>& argv) {
  auto* cmd = app.add_subcommand("fill", "FGD workload-inflation experiment: place the trace's tasks until P % of GPUs arrived");
  struct Args { std::string path; sim::FillCommandOptions fill; std::uint64_t seed = 0; double target = 0; std::string policy; OverrideArgs ov; ShardArgs sh; };
  auto a = std::make_shared<Args>();
  a->fill.out_dir = "out";
  a->fill.registry = &registry;
  cmd->add_option("SCENARIO", a->path, "Scenario JSON file with a cluster and a trace")->required();
  cmd->add_option("--out", a->fill.out_dir, "Output directory (default: out)");
  auto* policy = cmd->add_option("--policy", a->policy, "Placement policy (overrides scheduler.placement)");
  auto* seed = cmd->add_option("--seed", a->seed, "Seed of the shuffle and copies (overrides the scenario's)")->check(k_seed_check);
  auto* target = cmd->add_option("--target-pct", a->target, "Stop when requested GPUs reach this % of cluster GPUs (default 130)");
  cmd->add_option("--policies", a->fill.policies, "Sweep these policies (comma separated)")->delimiter(',');
  cmd->add_option("--seeds", a->fill.seeds, "Sweep this many seeds from --seed")->check(CLI::PositiveNumber);
  cmd->add_option("--semantics", a->fill.semantics,
                  "reference (default: the FGD authors' simulator, docs/fill.md) or platform (libsched's scheduler and policies)");
  a->ov.add_to(cmd, false);
  a->ov.trace_opt = cmd->add_option("--trace", a->ov.trace,
                                    "Replace the pod list of the scenario's first trace (traces[0].path; relative to the data root), "
                                    "e.g. openb/openb_pod_list_gpushare40.csv");
  a->sh.add_to(cmd, "runs (policy x seed, policy-major)");
  cmd->callback([a, policy, seed, target, &exit_code, &registry, &argv] {
    if (!a->sh.get("fill", argv, a->fill.shard, a->fill.emit)) {
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    if (*policy) a->fill.policy = a->policy;
    if (*seed) a->fill.seed = a->seed;
    if (*target) a->fill.target_pct = a->target;
    auto r = load_with_traces(a->path, false, a->ov, registry);
    if (!r) {
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    a->fill.resolved_json = std::move(r->resolved_json);
    exit_code = sim::fill_command(r->scenario, a->fill, std::cout, std::cerr);
  });
}

/// Options every multi-run command (compare, sweep, plan) takes besides its own.
struct MultirunArgs {
  std::uint64_t seed = 0;
  double until = 0;
  bool skip_bad_rows = false;
  CLI::Option* seed_opt = nullptr;
  CLI::Option* until_opt = nullptr;
  sim::MultirunOptions run;

  void add_to(CLI::App* cmd, const char* seeds_help, bool seeds_required = false) {
    cmd->add_option("--out", run.out_dir, "Output directory")->required();
    cmd->add_option("--seeds", run.seeds, seeds_help)->check(k_seeds_check)->required(seeds_required);
    cmd->add_option("--jobs", run.jobs, "Simulations run in parallel (default 1)")->check(k_jobs_check);
    seed_opt = cmd->add_option("--seed", seed, "First seed (default: the scenario's seed)")->check(k_seed_check);
    until_opt = cmd->add_option("--until", until, "Stop every simulation at this time (seconds)")->check(k_until_check);
    cmd->add_flag("--skip-bad-rows", skip_bad_rows, "Skip and count malformed trace rows instead of failing");
    cmd->add_flag("!--no-progress", run.progress, "Do not show the progress line");
  }
  /// The scenario source of `path` with these options and `overrides`.
  sim::ScenarioSource source(const std::string& path, std::vector<sim::io::Override> overrides, const libsched::Registry& registry) const {
    sim::ScenarioSource src;
    src.path = path;
    src.overrides = std::move(overrides);
    if (*seed_opt) src.seed = seed;
    if (*until_opt) src.until_s = until;
    src.skip_bad_rows = skip_bad_rows;
    src.registry = &registry;
    return src;
  }
};

/// `schedsim compare A B --out DIR [--seeds K] [--set ...] [--set-a ...] [--set-b ...]`.
void add_compare_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("compare", "Paired runs of two scenarios with the same seeds: differences with 95 % CIs");
  struct Args { std::string a, b; MultirunArgs m; OverrideArgs ov; std::vector<std::string> set_a, set_b; };
  auto a = std::make_shared<Args>();
  cmd->add_option("A", a->a, "Scenario A (JSON file)")->required();
  cmd->add_option("B", a->b, "Scenario B (JSON file; may be A with other --set-b overrides)")->required();
  a->m.add_to(cmd, "Paired runs with seeds s..s+K-1 (default 1)");
  cmd->add_option("--slo", a->m.run.slos, "METRIC<=VALUE (also <, >=, >) checked on A and on B (repeatable)")->allow_extra_args(false);
  a->ov.add_to(cmd, true);
  cmd->add_option("--set-a", a->set_a, "Override a value of A only: PATH=VALUE (repeatable, after --set)")->allow_extra_args(false);
  cmd->add_option("--set-b", a->set_b, "Override a value of B only: PATH=VALUE (repeatable, after --set)")->allow_extra_args(false);
  cmd->callback([a, &exit_code, &registry] {
    auto both = a->ov.get();
    std::vector<sim::io::Diagnostic> diags;
    auto side = [&](const std::vector<std::string>& args, const char* option) {
      std::vector<sim::io::Override> out = both ? *both : std::vector<sim::io::Override>{};
      for (const auto& s : args) {
        std::vector<sim::io::Diagnostic> d;
        if (auto o = sim::io::parse_set_argument(s, d)) {
          o->option = option;
          out.push_back(std::move(*o));
        }
        for (auto& x : d) x.file = option;
        diags.insert(diags.end(), d.begin(), d.end());
      }
      return out;
    };
    auto oa = side(a->set_a, "--set-a");
    auto ob = side(a->set_b, "--set-b");
    for (const auto& d : diags) std::cerr << d.str() << "\n";
    if (!both || !diags.empty()) {
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    exit_code = sim::compare_command(a->m.source(a->a, std::move(oa), registry), a->m.source(a->b, std::move(ob), registry), a->m.run,
                                     std::cout, std::cerr);
  });
}

/// `schedsim sweep SCENARIO --vary PATH=VALUES [--vary ...] --seeds K --out DIR [--set ...]`.
void add_sweep_command(CLI::App& app, int& exit_code, const libsched::Registry& registry, const std::vector<std::string>& argv) {
  auto* cmd = app.add_subcommand("sweep", "Run a grid of overrides (--vary), K seeds each: sweep.csv and sweep_summary.csv");
  struct Args { std::string path; MultirunArgs m; OverrideArgs ov; std::vector<std::string> vary, zip; ShardArgs sh; };
  auto a = std::make_shared<Args>();
  cmd->add_option("SCENARIO", a->path, "Scenario JSON file")->required();
  auto* vary = cmd->add_option("--vary", a->vary, "PATH=v1,v2,... or PATH=lo..hi[:step] (repeatable: the cartesian grid)")
                   ->required()
                   ->allow_extra_args(false);
  auto* zip = cmd->add_option("--zip", a->zip, "PATH=VALUES moving with the preceding --vary (as many values; repeatable)")
                  ->allow_extra_args(false);
  cmd->add_option("--metric", a->m.run.metrics, "A group metric DIMENSION[KEY].METRIC as a further column (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--slo", a->m.run.slos, "METRIC<=VALUE (also <, >=, >) checked at every point: sweep_slo.csv (repeatable)")
      ->allow_extra_args(false);
  a->m.add_to(cmd, "Seeds s..s+K-1 per grid point", true);
  a->ov.add_to(cmd, true);
  a->sh.add_to(cmd, "grid points");
  cmd->callback([a, cmd, vary, zip, &exit_code, &registry, &argv] {
    const auto overrides = a->ov.get();
    if (!overrides || !a->sh.get("sweep", argv, a->m.run.shard, a->m.run.emit)) {
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    // --vary and --zip in command-line order: a --zip belongs to the --vary before it.
    std::vector<sim::GridOption> grid;
    std::size_t nv = 0, nz = 0;
    for (const CLI::Option* o : cmd->parse_order()) {
      if (o == vary && nv < a->vary.size()) grid.push_back({a->vary[nv++], false});
      else if (o == zip && nz < a->zip.size()) grid.push_back({a->zip[nz++], true});
    }
    exit_code = sim::sweep_command(a->m.source(a->path, *overrides, registry), grid, a->m.run, std::cout, std::cerr);
  });
}

/// `schedsim plan SCENARIO --vary PATH=lo..hi[:step] --slo 'METRIC<=V' ... --out DIR`.
void add_plan_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("plan", "Smallest value of PATH in [lo, hi] meeting every SLO with 95 % confidence "
                                         "(--minimize METRIC: the grid point with the smallest METRIC meeting them)");
  struct Args {
    std::string path; MultirunArgs m; OverrideArgs ov; sim::PlanArgs plan; std::string complement, minimize, search;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("SCENARIO", a->path, "Scenario JSON file")->required();
  auto* vary = cmd->add_option("--vary", a->plan.vary, "PATH=lo..hi[:step] (step default 1); with --minimize repeatable, also PATH=v1,v2,...")
                   ->required()
                   ->allow_extra_args(false);
  cmd->add_option("--slo", a->plan.slos, "METRIC<=VALUE (also <, >=, >; repeatable)")->required()->allow_extra_args(false);
  auto* comp = cmd->add_option("--complement", a->complement, "PATH2=TOTAL: set PATH2 to TOTAL - the sum of the varied values");
  auto* mini = cmd->add_option("--minimize", a->minimize, "METRIC: evaluate the whole grid, answer the point meeting every SLO "
                                                          "with the smallest mean METRIC; writes pareto.csv too");
  auto* search = cmd->add_option("--search", a->search, "bisection (default) or exhaustive (evaluate every value)");
  auto* zip = cmd->add_option("--zip", a->plan.zip, "PATH2=VALUES moving with the preceding --vary (as many values; repeatable)")
                  ->allow_extra_args(false);
  cmd->add_option("--metric", a->m.run.metrics, "A group metric DIMENSION[KEY].METRIC as a further entry of every point (repeatable)")
      ->allow_extra_args(false);
  a->m.add_to(cmd, "Seeds s..s+K-1 per evaluated value (default 1)");
  a->ov.add_to(cmd, true);
  cmd->callback([a, cmd, vary, zip, comp, mini, search, &exit_code, &registry] {
    const auto overrides = a->ov.get();
    if (!overrides) {
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    // --vary and --zip in command-line order: a --zip belongs to the --vary before it.
    std::size_t nv = 0, nz = 0;
    for (const CLI::Option* o : cmd->parse_order()) {
      if (o == vary && nv < a->plan.vary.size()) a->plan.grid.push_back({a->plan.vary[nv++], false});
      else if (o == zip && nz < a->plan.zip.size()) a->plan.grid.push_back({a->plan.zip[nz++], true});
    }
    if (*comp) a->plan.complement = a->complement;
    if (*mini) a->plan.minimize = a->minimize;
    if (*search) a->plan.search = a->search;
    exit_code = sim::plan_command(a->m.source(a->path, *overrides, registry), a->plan, a->m.run, std::cout, std::cerr);
  });
}

/// `schedsim merge SHARD_DIR... --out DIR`: the shards of a sweep or fill into its outputs (docs/sharding.md).
void add_merge_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("merge", "Combine the shard folders of `sweep --shard` or `fill --shard` into the files of one unsharded run");
  struct Args { std::vector<std::string> dirs; std::string out; };
  auto a = std::make_shared<Args>();
  cmd->add_option("SHARD_DIR", a->dirs, "Shard folders (each with shard.json), all N of one sweep, in any order")->required();
  cmd->add_option("--out", a->out, "Output directory")->required();
  cmd->callback([a, &exit_code] { exit_code = sim::merge_command(a->dirs, a->out, std::cout, std::cerr); });
}

/// `schedsim report DIR [--format html,svg,pdf]`: DIR/report.html, a self-contained page of charts, its charts as SVG
/// files and the page as a PDF (docs/report.md).
void add_report_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("report",
                                 "Write DIR/report.html: charts and tables of a run, --seeds, compare, sweep or plan folder");
  struct Args { std::string dir, format = "html"; };
  auto a = std::make_shared<Args>();
  cmd->add_option("DIR", a->dir, "Output folder of schedsim run, run --seeds, compare, sweep or plan")->required();
  cmd->add_option("--format", a->format,
                  "Files to write, comma-separated: html (DIR/report.html, the default), svg (DIR/report-svg/NN-TITLE.svg per "
                  "chart; needs node), pdf (DIR/report.pdf; needs chromium)");
  cmd->callback([a, &exit_code] {
    sim::ReportFormats f;
    try {
      f = sim::parse_report_formats(a->format);
    } catch (const sim::ReportInputError& e) {
      std::cerr << "schedsim report: " << e.what() << "\n";
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    exit_code = sim::report_command(a->dir, f, std::cout, std::cerr);
  });
}

/// `schedsim decide < SNAPSHOT.json`: one scheduling decision as JSON (docs/decide.md). Stdin
/// that cannot be read (closed, a directory, a read error) is the environment's failure: exit 1.
void add_decide_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("decide", "Read a cluster snapshot (JSON) on stdin and print one scheduling decision (JSON)");
  cmd->callback([&exit_code, &registry] {
    struct stat st {};
    if (::fstat(STDIN_FILENO, &st) != 0) {
      std::cerr << fmt::format("schedsim decide: <stdin>: cannot be read: {}\n", std::strerror(errno));
      exit_code = sim::exit_environment;
      return;
    }
    if (S_ISDIR(st.st_mode)) {
      std::cerr << "schedsim decide: <stdin>: cannot be read: is a directory (expected a snapshot)\n";
      exit_code = sim::exit_environment;
      return;
    }
    std::clearerr(stdin);
    exit_code = sim::decide_command(std::cin, std::cout, std::cerr, registry);
    if (exit_code != 0 && std::ferror(stdin)) {  // what was read is cut short: not the snapshot's fault
      std::cerr << "schedsim decide: <stdin>: read error\n";
      exit_code = sim::exit_environment;
    }
  });
}

/// `schedsim forecast SNAPSHOT.json --out DIR [--samples K] [--seed S] [--spread F] [--horizon-s H]`
/// (docs/forecast.md).
void add_forecast_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("forecast", "When each waiting task of a decide snapshot starts: P10/P50/P90 over K forward simulations");
  auto a = std::make_shared<sim::ForecastArgs>();
  cmd->add_option("SNAPSHOT", a->snapshot, "A decide snapshot (docs/decide.md)")->required();
  cmd->add_option("--out", a->out, "Output directory (forecast.csv, forecast.json)")->required();
  cmd->add_option("--samples", a->samples, "Forward simulations K (default 100)")
      ->check(parsed_check<int>([](int x) { return x >= 1 && x <= 10000; }, "must be an integer from 1 to 10000 (a number of samples)", "K"));
  cmd->add_option("--seed", a->seed, "Seed of the sampled remaining times (default 1)")->check(k_seed_check);
  cmd->add_option("--spread", a->spread, "Running tasks' duration uniform in [L(1-F), L(1+F)] (default 0.5; 0: exact)")
      ->check(parsed_check<double>([](double x) { return std::isfinite(x) && x >= 0 && x <= 1; }, "must be a number from 0 to 1", "F"));
  cmd->add_option("--horizon-s", a->horizon_s, "Simulate up to now_s + H seconds (default 604800)")
      ->check(parsed_check<double>([](double x) { return std::isfinite(x) && x > 0 && x <= 1e9; },
                                   "must be a number of seconds > 0 and <= 1e9", "H"));
  cmd->callback([a, &exit_code, &registry] { exit_code = sim::forecast_command(*a, std::cout, std::cerr, registry); });
}

/// `schedsim backtest SCENARIO --every T --out DIR [--samples K] [--seed S] [--model M] [--spread F]
/// [--horizon-s H] [--max-snapshots N]` (docs/forecast.md "Backtest").
void add_backtest_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("backtest", "Replay a scenario, forecast from a snapshot every T s, score the starts against the replay's");
  auto a = std::make_shared<sim::BacktestArgs>();
  const auto seconds = [](double lo_excl) {
    return parsed_check<double>([lo_excl](double x) { return std::isfinite(x) && x > lo_excl && x <= 1e9; },
                                "must be a number of seconds > 0 and <= 1e9", "SECONDS");
  };
  cmd->add_option("SCENARIO", a->scenario, "Scenario JSON file (its traces are loaded as run does)")->required();
  cmd->add_option("--out", a->out, "Output directory (backtest.json, backtest.csv)")->required();
  cmd->add_option("--every", a->every_s, "Seconds between snapshots (T > 0)")->required()->check(seconds(0));
  cmd->add_option("--samples", a->samples, "Forward simulations K per snapshot (default 8)")
      ->check(parsed_check<int>([](int x) { return x >= 1 && x <= 10000; }, "must be an integer from 1 to 10000 (a number of samples)", "K"));
  cmd->add_option("--seed", a->seed, "Seed of the forecast's draws (default 1)")->check(k_seed_check);
  cmd->add_option("--model", a->model, "empirical (run times of the tasks finished by then; default) or uniform (--spread)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string { return v == "empirical" || v == "uniform" ? std::string() : v + ": must be empirical or uniform"; },
          "MODEL"));
  cmd->add_option("--spread", a->spread, "The uniform model's width F (default 0.5)")
      ->check(parsed_check<double>([](double x) { return std::isfinite(x) && x >= 0 && x <= 1; }, "must be a number from 0 to 1", "F"));
  cmd->add_option("--horizon-s", a->horizon_s, "Each forward simulation covers snapshot + H seconds (default 604800)")->check(seconds(0));
  cmd->add_option("--max-snapshots", a->max_snapshots, "Only the first N snapshots (default 0: all)")
      ->check(parsed_check<int>([](int x) { return x >= 0 && x <= 100000; }, "must be an integer from 0 to 100000", "N"));
  cmd->callback([a, &exit_code, &registry] { exit_code = sim::backtest_command(*a, std::cout, std::cerr, registry); });
}

/// The end of every command: stdout is flushed and checked (`> /dev/full`, a closed pipe, a
/// full disk). A write error is the environment's failure: exit 1 with one line on stderr
/// (a command that already failed keeps its status).
int finish_stdout(int rc) {
  errno = 0;
  std::cout.flush();  // (synced with stdio: fflush(stdout), whose errno is kept)
  const bool flushed = std::fflush(stdout) == 0;
  const int e = errno;
  if (flushed && std::cout.good() && !std::ferror(stdout)) return rc;
  std::cerr << "schedsim: stdout: write error" << (e != 0 ? std::string(": ") + std::strerror(e) : std::string()) << "\n";
  std::clearerr(stdout);
  std::cout.clear();
  return rc == 0 ? sim::exit_environment : rc;
}

}  // namespace

int sim::cli_main(int argc, char** argv, const libsched::Registry& registry) {
  CLI::App app{"schedsim: gang-scheduling simulator for GPU training platforms"};
  app.set_version_flag("--version", fmt::format("schedsim {} (libsched {})", sim::version(), LIBSCHED_VERSION_STRING),
                       "Print the version and exit");
  app.require_subcommand(1);
  int exit_code = 0;
  const std::vector<std::string> args(argv, argv + argc);  // --emit repeats the command line
  add_validate_command(app, exit_code, registry);
  add_convert_command(app, exit_code, registry);
  add_import_command(app, exit_code);
  add_run_command(app, exit_code, registry);
  add_fill_command(app, exit_code, registry, args);
  add_decide_command(app, exit_code, registry);
  add_forecast_command(app, exit_code, registry);
  add_backtest_command(app, exit_code, registry);
  add_report_command(app, exit_code);
  add_show_default_command(app, exit_code);
  add_compare_command(app, exit_code, registry);
  add_sweep_command(app, exit_code, registry, args);
  add_plan_command(app, exit_code, registry);
  add_merge_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help/usage/version; 0 for --help and --version
    return finish_stdout(rc == 0 ? 0 : sim::io::exit_invalid_input);
  }
  return finish_stdout(exit_code);
}
