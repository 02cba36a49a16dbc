// schedsim: command-line entry point (CLI11), sim::cli_main (sim/cli.hpp). Subcommands: run,
// validate, convert, fill, decide, show-default. Each is one add_<name>_command function that
// registers the subcommand and sets `exit_code` in its callback, plus one line in cli_main().
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include <fmt/format.h>
#include <libsched/version.hpp>

#include "sim/cli.hpp"
#include "sim/convert_cli.hpp"
#include "sim/decide_cli.hpp"
#include "sim/fill_cli.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/io/overrides.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"
#include "sim/run_cli.hpp"
#include "sim/io/validate_cli.hpp"
#include "sim/version.hpp"

namespace {

/// --seed: a decimal integer 0..2^64-1 (CLI11 alone wraps `-1` and saturates overflow silently).
const CLI::Validator k_seed_check(
    [](std::string& v) -> std::string {
      std::uint64_t x = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (v.empty() || ec != std::errc() || end != v.data() + v.size())
        return v + ": must be an integer from 0 to 18446744073709551615";
      return {};
    },
    "UINT64");

/// --until: a finite number of seconds in [0, 1e9] (the scenario's bound for every time).
const CLI::Validator k_until_check(
    [](std::string& v) -> std::string {
      double x = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (v.empty() || ec != std::errc() || end != v.data() + v.size() || !std::isfinite(x) || x < 0 || x > 1e9)
        return v + ": must be a number of seconds from 0 to 1e9";
      return {};
    },
    "SECONDS");

/// --limit: a decimal integer >= 0 (CLI11 alone turns `-1` into 2^64-1, i.e. "unlimited").
const CLI::Validator k_limit_check(
    [](std::string& v) -> std::string {
      std::uint64_t x = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (v.empty() || ec != std::errc() || end != v.data() + v.size())
        return v + ": must be an integer >= 0 (a number of jobs)";
      return {};
    },
    "JOBS");

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

/// `schedsim validate SCENARIO [--set ...]`: checks a scenario, prints diagnostics, exits 0 or 2.
void add_validate_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("validate", "Check a scenario file and report every problem");
  auto path = std::make_shared<std::string>();
  auto ov = std::make_shared<OverrideArgs>();
  cmd->add_option("SCENARIO", *path, "Scenario JSON file")->required();
  ov->add_to(cmd, true);
  cmd->callback([path, ov, &exit_code, &registry] {
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
    std::cout << sim::resolved_scenario_json(sim::default_scenario(*seed)) << std::flush;
    exit_code = std::cout ? 0 : 1;
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
  cmd->add_option("--pool", o->trace.pool, "Pool of the trace's nodes (default: the format name)");
  cmd->add_option("--resource-type", o->trace.resource_type, "Resource type of the tasks")
      ->check(CLI::IsMember({"reserved", "pay_as_you_go", "spot", "idle"}));
  cmd->add_option("--placement", o->placement, "scheduler.placement of the scenario written");
  cmd->add_flag("--skip-bad-rows", o->skip_bad_rows, "Skip and count malformed rows instead of failing");
  cmd->add_option("--out", o->out, "Scenario file to write")->required();
  cmd->callback([o, &exit_code] { exit_code = sim::convert_command(*o, std::cout, std::cerr); });
}

/// Loads a scenario file with its overrides and traces; prints every problem and returns nullopt on error.
std::optional<sim::io::Scenario> load_with_traces(const std::string& path, bool skip_bad_rows, const OverrideArgs& ov,
                                                  const libsched::Registry& registry) {
  const auto overrides = ov.get();
  if (!overrides) return std::nullopt;
  sim::ScenarioSource src;
  src.path = path;
  src.overrides = *overrides;
  src.skip_bad_rows = skip_bad_rows;
  src.registry = &registry;
  auto r = sim::resolve_scenario(src, std::cerr);
  if (!r) return std::nullopt;
  return std::move(r->scenario);
}

/// `schedsim run [SCENARIO] --out DIR [--seed N] [--until T]`: simulate; no scenario = the
/// embedded default scenario.
void add_run_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("run", "Simulate a scenario (default: the embedded default scenario) and write outputs");
  struct Args { std::string path; sim::RunOptions run; bool skip_bad_rows = false; std::uint64_t seed = 0; double until = 0; OverrideArgs ov; };
  auto a = std::make_shared<Args>();
  a->run.out_dir = "out";
  a->run.registry = &registry;
  cmd->add_option("SCENARIO", a->path, "Scenario JSON file (omit for the embedded default scenario)");
  cmd->add_option("--out", a->run.out_dir, "Output directory (default: out)");
  auto* seed = cmd->add_option("--seed", a->seed, "Random seed (overrides the scenario's)")->check(k_seed_check);
  auto* until = cmd->add_option("--until", a->until, "Stop the simulation at this time (seconds)")->check(k_until_check);
  cmd->add_flag("--skip-bad-rows", a->skip_bad_rows, "Skip and count malformed trace rows instead of failing");
  cmd->add_flag("!--no-progress", a->run.progress, "Do not show the progress line");
  a->ov.add_to(cmd, true);
  cmd->callback([a, seed, until, &exit_code, &registry] {
    if (*seed) a->run.seed = a->seed;
    if (*until) a->run.until_s = a->until;
    const auto overrides = a->ov.get();
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
    exit_code = sim::run_command(r->scenario, a->run, std::cout, std::cerr, r->resolved_json);
  });
}

/// `schedsim fill SCENARIO --out DIR [--policy NAME] [--seed N] [--target-pct P] [--semantics reference|platform]`.
void add_fill_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("fill", "FGD workload-inflation experiment: place the trace's tasks until P % of GPUs arrived");
  struct Args { std::string path; sim::FillCommandOptions fill; std::uint64_t seed = 0; double target = 0; std::string policy; OverrideArgs ov; };
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
  cmd->callback([a, policy, seed, target, &exit_code, &registry] {
    if (*policy) a->fill.policy = a->policy;
    if (*seed) a->fill.seed = a->seed;
    if (*target) a->fill.target_pct = a->target;
    auto sc = load_with_traces(a->path, false, a->ov, registry);
    if (!sc) {
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    exit_code = sim::fill_command(*sc, a->fill, std::cout, std::cerr);
  });
}

/// `schedsim decide < SNAPSHOT.json`: one scheduling decision as JSON (docs/decide.md).
void add_decide_command(CLI::App& app, int& exit_code, const libsched::Registry& registry) {
  auto* cmd = app.add_subcommand("decide", "Read a cluster snapshot (JSON) on stdin and print one scheduling decision (JSON)");
  cmd->callback([&exit_code, &registry] { exit_code = sim::decide_command(std::cin, std::cout, std::cerr, registry); });
}

}  // namespace

int sim::cli_main(int argc, char** argv, const libsched::Registry& registry) {
  CLI::App app{"schedsim: gang-scheduling simulator for GPU training platforms"};
  app.set_version_flag("--version", fmt::format("schedsim {} (libsched {})", sim::version(), LIBSCHED_VERSION_STRING),
                       "Print the version and exit");
  app.require_subcommand(1);
  int exit_code = 0;
  add_validate_command(app, exit_code, registry);
  add_convert_command(app, exit_code, registry);
  add_run_command(app, exit_code, registry);
  add_fill_command(app, exit_code, registry);
  add_decide_command(app, exit_code, registry);
  add_show_default_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help/usage/version; 0 for --help and --version
    return rc == 0 ? 0 : sim::io::exit_invalid_input;
  }
  return exit_code;
}
