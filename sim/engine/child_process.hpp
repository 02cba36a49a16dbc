// Child processes in their own process group, shared by `--scheduler-cmd` (scheduler_process.hpp)
// and `schedsim report --format svg,pdf` (outputs/report_export.cpp): started with posix_spawn with
// SIGPIPE, SIGINT and SIGTERM at their defaults and no signal blocked, waited for without being
// reaped (while the child is a zombie its id, which names its process group, cannot be reused),
// then killed as a group (whatever it started goes too) and reaped.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace sim::child_process {

/// One standard stream of the child: `fd` >= 0 is duplicated onto it (dup2 clears close-on-exec);
/// otherwise `path` is opened with `flags` (mode 0644 when created).
struct Stream {
  int fd = -1;
  std::string path;
  int flags = 0;
};

/// Starts the program at path `argv[0]` with arguments `argv` and the environment, stdin and
/// stdout from `in` and `out`, stderr inherited or, with `err_to_out`, the same as stdout, in a
/// new process group. Returns the child's pid, or -1 with `error` set to the errno value when it
/// cannot start (posix_spawn's error; a missing program fails here).
pid_t spawn_in_group(const std::vector<std::string>& argv, const Stream& in, const Stream& out, bool err_to_out, int& error);

/// True when child `pid` has ended (or is not a child any more); it is not reaped.
bool has_ended(pid_t pid);

/// has_ended, asked up to `tries` times `ms` milliseconds apart; true when it ended.
bool ended_within(pid_t pid, int tries, int ms);

/// Kills child `pid`'s process group with SIGKILL and reaps the child; its wait status.
int kill_group_and_reap(pid_t pid);

}  // namespace sim::child_process
