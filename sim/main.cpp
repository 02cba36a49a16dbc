// schedsim: command-line entry point (CLI11). Subcommands: run, validate, convert, fill, decide. Each is
// one add_<name>_command function that registers the subcommand and sets `exit_code` in its
// callback, plus one line in main().
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "sim/convert_cli.hpp"
#include "sim/decide_cli.hpp"
#include "sim/fill_cli.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/io/traces.hpp"
#include "sim/run_cli.hpp"
#include "sim/io/validate_cli.hpp"

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

/// `schedsim validate SCENARIO`: checks a scenario, prints diagnostics, exits 0 or 2.
void add_validate_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("validate", "Check a scenario file and report every problem");
  auto path = std::make_shared<std::string>();
  cmd->add_option("SCENARIO", *path, "Scenario JSON file")->required();
  cmd->callback([path, &exit_code] { exit_code = sim::io::validate_command(*path, std::cout, std::cerr); });
}

/// `schedsim convert --format F --path P [--nodes N] ... --out S.json`: a trace to a scenario.
void add_convert_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("convert", "Convert a public trace (openb, philly, swf) into a scenario file");
  auto o = std::make_shared<sim::ConvertOptions>();
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

/// Loads a scenario file and its traces; prints every problem and returns nullopt on error.
std::optional<sim::io::Scenario> load_with_traces(const std::string& path, bool skip_bad_rows) {
  auto sc = sim::io::load_or_report(path, std::cerr);
  if (!sc) return std::nullopt;
  try {
    std::size_t skipped = sim::io::apply_traces(*sc, sim::io::TraceOptions{skip_bad_rows});
    if (skipped) std::cerr << path << ": skipped " << skipped << " malformed trace rows (--skip-bad-rows)\n";
  } catch (const sim::io::TraceError& e) {
    std::cerr << sim::io::escape_for_diagnostic(path) << ": " << sim::io::escape_for_diagnostic(e.what()) << "\n";
    return std::nullopt;
  }
  return sc;
}

/// `schedsim run [SCENARIO] --out DIR [--seed N] [--until T]`: simulate; no scenario = the
/// embedded default scenario.
void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Simulate a scenario (default: the embedded default scenario) and write outputs");
  struct Args { std::string path; sim::RunOptions run; bool skip_bad_rows = false; std::uint64_t seed = 0; double until = 0; };
  auto a = std::make_shared<Args>();
  a->run.out_dir = "out";
  cmd->add_option("SCENARIO", a->path, "Scenario JSON file (omit for the embedded default scenario)");
  cmd->add_option("--out", a->run.out_dir, "Output directory (default: out)");
  auto* seed = cmd->add_option("--seed", a->seed, "Random seed (overrides the scenario's)")->check(k_seed_check);
  auto* until = cmd->add_option("--until", a->until, "Stop the simulation at this time (seconds)")->check(k_until_check);
  cmd->add_flag("--skip-bad-rows", a->skip_bad_rows, "Skip and count malformed trace rows instead of failing");
  cmd->add_flag("!--no-progress", a->run.progress, "Do not show the progress line");
  cmd->callback([a, seed, until, &exit_code] {
    if (*seed) a->run.seed = a->seed;
    if (*until) a->run.until_s = a->until;
    std::optional<sim::io::Scenario> sc;
    if (a->path.empty()) {
      sc = sim::default_scenario(a->run.seed.value_or(1));
    } else {
      sc = load_with_traces(a->path, a->skip_bad_rows);
      if (!sc) {
        exit_code = sim::io::exit_invalid_input;
        return;
      }
    }
    exit_code = sim::run_command(*sc, a->run, std::cout, std::cerr);
  });
}

/// `schedsim fill SCENARIO --out DIR [--policy NAME] [--seed N] [--target-pct P]`.
void add_fill_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("fill", "FGD workload-inflation experiment: place the trace's tasks until P % of GPUs arrived");
  struct Args { std::string path; sim::FillCommandOptions fill; std::uint64_t seed = 0; double target = 0; std::string policy; };
  auto a = std::make_shared<Args>();
  a->fill.out_dir = "out";
  cmd->add_option("SCENARIO", a->path, "Scenario JSON file with a cluster and a trace")->required();
  cmd->add_option("--out", a->fill.out_dir, "Output directory (default: out)");
  auto* policy = cmd->add_option("--policy", a->policy, "Placement policy (overrides scheduler.placement)");
  auto* seed = cmd->add_option("--seed", a->seed, "Seed of the shuffle and copies (overrides the scenario's)")->check(k_seed_check);
  auto* target = cmd->add_option("--target-pct", a->target, "Stop when requested GPUs reach this % of cluster GPUs (default 130)");
  cmd->add_option("--policies", a->fill.policies, "Sweep these policies (comma separated)")->delimiter(',');
  cmd->add_option("--seeds", a->fill.seeds, "Sweep this many seeds from --seed")->check(CLI::PositiveNumber);
  cmd->callback([a, policy, seed, target, &exit_code] {
    if (*policy) a->fill.policy = a->policy;
    if (*seed) a->fill.seed = a->seed;
    if (*target) a->fill.target_pct = a->target;
    auto sc = load_with_traces(a->path, false);
    if (!sc) {
      exit_code = sim::io::exit_invalid_input;
      return;
    }
    exit_code = sim::fill_command(*sc, a->fill, std::cout, std::cerr);
  });
}

/// `schedsim decide < SNAPSHOT.json`: one scheduling decision as JSON (docs/decide.md).
void add_decide_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("decide", "Read a cluster snapshot (JSON) on stdin and print one scheduling decision (JSON)");
  cmd->callback([&exit_code] { exit_code = sim::decide_command(std::cin, std::cout, std::cerr); });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"schedsim: gang-scheduling simulator for GPU training platforms"};
  app.require_subcommand(1);
  int exit_code = 0;
  add_validate_command(app, exit_code);
  add_convert_command(app, exit_code);
  add_run_command(app, exit_code);
  add_fill_command(app, exit_code);
  add_decide_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help/usage; 0 for --help
    return rc == 0 ? 0 : sim::io::exit_invalid_input;
  }
  return exit_code;
}
