// File helpers shared by the test areas (tests/<area>/*.cpp include "tests/common/files.hpp").
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace testutil
