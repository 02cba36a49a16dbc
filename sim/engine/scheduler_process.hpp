// The process behind --scheduler-cmd: `/bin/sh -c CMD` started with posix_spawn, its stdin and
// stdout on pipes, stderr inherited. One exchange = one line written, one line read, within a
// timeout. The child runs in its own process group, which is killed (SIGKILL) and the child
// reaped when the object is destroyed, on every exit path. SIGPIPE is ignored while it lives
// (a scheduler that exits early is an error, not a crash), and set back to the default in the
// child.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <string>

#include "sim/engine/external.hpp"

namespace sim {

class SchedulerProcess final : public ExternalScheduler {
 public:
  /// Stores the command; the process starts at the first exchange. `timeout_s` (> 0): seconds
  /// one exchange (write the snapshot, read the answer) may take.
  SchedulerProcess(std::string command, double timeout_s);
  /// Closes the pipes, kills the process group and reaps the child.
  ~SchedulerProcess() override;
  SchedulerProcess(const SchedulerProcess&) = delete;
  SchedulerProcess& operator=(const SchedulerProcess&) = delete;

  /// One exchange (ExternalScheduler). Throws ExternalSchedulerError: no answer within the
  /// timeout, the scheduler closed its stdout or exited, an answer line longer than 256 MiB;
  /// std::runtime_error when the process cannot be started (environment: exit 1);
  /// sim::Interrupted on SIGINT/SIGTERM.
  std::string exchange(const std::string& line) override;

  /// Exchanges so far and the wall-clock seconds spent in them (the protocol's cost plus the
  /// scheduler's own thinking).
  std::uint64_t exchanges() const { return exchanges_; }
  double exchange_seconds() const { return seconds_; }

 private:
  void start();
  void stop();
  /// "exited with status N" / "was killed by signal N" / "closed its stdout" once the child ended.
  std::string exit_text();

  std::string command_;
  double timeout_s_;
  pid_t pid_ = -1;
  int to_child_ = -1;    // the child's stdin (write end)
  int from_child_ = -1;  // the child's stdout (read end)
  std::string pending_;  // bytes read after the last answer's newline
  bool sigpipe_saved_ = false;
  struct sigaction old_pipe_{};
  std::uint64_t exchanges_ = 0;
  double seconds_ = 0;
};

}  // namespace sim
