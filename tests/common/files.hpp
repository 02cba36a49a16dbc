// File helpers shared by the test areas (tests/<area>/*.cpp include "tests/common/files.hpp").
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace testutil {

/// The whole content of file `p` ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// A path in the temporary directory, unique to `name` and this process, that does not exist
/// (removed if a previous run left it).
inline std::filesystem::path fresh_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("schedsim-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  return d;
}

/// Exit status and captured output of a shell command.
struct CommandResult {
  int status = -1;   ///< exit status; 128 + signal when killed by a signal
  std::string out;   ///< stdout
  std::string err;   ///< stderr
};

/// Runs `command` with /bin/sh, capturing stdout and stderr in temporary files named after `tag`
/// and this process (removed afterwards).
inline CommandResult run_command(const std::string& command, const std::string& tag) {
  const auto base = std::filesystem::temp_directory_path() / ("schedsim-" + tag + "-" + std::to_string(::getpid()));
  const std::string cmd = command + " >" + base.string() + ".out 2>" + base.string() + ".err";
  const int st = std::system(cmd.c_str());
  CommandResult r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = slurp(base.string() + ".out");
  r.err = slurp(base.string() + ".err");
  std::filesystem::remove(base.string() + ".out");
  std::filesystem::remove(base.string() + ".err");
  return r;
}

/// What a command that writes an `--out` folder did (forecast, backtest, ...).
struct OutFolderRun {
  int status = -1;                            ///< exit status; -1 when killed by a signal
  std::string err;                            ///< stderr
  bool wrote = false;                         ///< the --out folder exists afterwards
  std::map<std::string, std::string> files;   ///< each asked-for output file's content ("" when absent)
};

/// Writes `input` as `input_name` into a fresh folder named after `tag`, runs
/// `binary subcommand FOLDER/input_name --out FOLDER/out options` (stdout discarded), reads each
/// file of `outputs` from the out folder, and removes the folder.
inline OutFolderRun run_out_folder(const std::string& binary, const std::string& subcommand, const std::string& input_name,
                                   const std::string& input, const std::string& options, const std::vector<std::string>& outputs,
                                   const std::string& tag) {
  const auto d = fresh_dir(tag);
  std::filesystem::create_directories(d);
  std::ofstream(d / input_name) << input;
  const std::string cmd = binary + " " + subcommand + " " + (d / input_name).string() + " --out " + (d / "out").string() + " " +
                          options + " > /dev/null 2> " + (d / "err.txt").string();
  const int st = std::system(cmd.c_str());
  OutFolderRun r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.wrote = std::filesystem::exists(d / "out");
  for (const auto& f : outputs) r.files[f] = slurp(d / "out" / f);
  r.err = slurp(d / "err.txt");
  std::filesystem::remove_all(d);
  return r;
}

}  // namespace testutil
