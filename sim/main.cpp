// schedsim: command-line entry point (CLI11). Subcommands: validate (here); run, convert and fill
// are added the same way: one add_<name>_command function that registers the subcommand and
// sets `exit_code` in its callback, plus one line in main().
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "sim/convert_cli.hpp"
#include "sim/io/validate_cli.hpp"

namespace {

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
  cmd->add_option("--limit", o->trace.limit, "Read at most this many jobs");
  cmd->add_option("--procs-per-node", o->trace.procs_per_node, "SWF: processors per node")->check(CLI::PositiveNumber);
  cmd->add_option("--pool", o->trace.pool, "Pool of the trace's nodes (default: the format name)");
  cmd->add_option("--resource-type", o->trace.resource_type, "Resource type of the tasks")
      ->check(CLI::IsMember({"reserved", "pay_as_you_go", "spot", "idle"}));
  cmd->add_option("--placement", o->placement, "scheduler.placement of the scenario written");
  cmd->add_flag("--skip-bad-rows", o->skip_bad_rows, "Skip and count malformed rows instead of failing");
  cmd->add_option("--out", o->out, "Scenario file to write")->required();
  cmd->callback([o, &exit_code] { exit_code = sim::convert_command(*o, std::cout, std::cerr); });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"schedsim: gang-scheduling simulator for GPU training platforms"};
  app.require_subcommand(1);
  int exit_code = 0;
  add_validate_command(app, exit_code);
  add_convert_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help/usage; 0 for --help
    return rc == 0 ? 0 : sim::io::exit_invalid_input;
  }
  return exit_code;
}
