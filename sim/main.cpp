// schedsim: command-line entry point (CLI11). Subcommands: validate (here); run, convert and fill
// are added the same way: one add_<name>_command function that registers the subcommand and
// sets `exit_code` in its callback, plus one line in main().
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "sim/io/validate_cli.hpp"

namespace {

/// `schedsim validate SCENARIO`: checks a scenario, prints diagnostics, exits 0 or 2.
void add_validate_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("validate", "Check a scenario file and report every problem");
  auto path = std::make_shared<std::string>();
  cmd->add_option("SCENARIO", *path, "Scenario JSON file")->required();
  cmd->callback([path, &exit_code] { exit_code = sim::io::validate_command(*path, std::cout, std::cerr); });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"schedsim: gang-scheduling simulator for GPU training platforms"};
  app.require_subcommand(1);
  int exit_code = 0;
  add_validate_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help/usage; 0 for --help
    return rc == 0 ? 0 : sim::io::exit_invalid_input;
  }
  return exit_code;
}
