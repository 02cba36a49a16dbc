// The --scheduler-cmd child process (scheduler_process.hpp).
#include "sim/engine/scheduler_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "sim/engine/child_process.hpp"
#include "sim/engine/interrupt.hpp"
#include "sim/io/limits.hpp"

namespace sim {

namespace {

using sched_clock = std::chrono::steady_clock;

/// Milliseconds left until `deadline` (0 when past), for poll(2).
int sched_proc_ms_left(sched_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - sched_clock::now()).count();
  return left <= 0 ? 0 : left > 1'000'000'000 ? 1'000'000'000 : int(left);
}

[[noreturn]] void sched_proc_fail(const std::string& rule) { throw ExternalSchedulerError(rule); }

}  // namespace

SchedulerProcess::SchedulerProcess(std::string command, double timeout_s) : command_(std::move(command)), timeout_s_(timeout_s) {}

SchedulerProcess::~SchedulerProcess() { stop(); }

void SchedulerProcess::start() {
  // A write to a scheduler that exited must fail with EPIPE, not kill schedsim.
  struct sigaction ign{};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  if (::sigaction(SIGPIPE, &ign, &old_pipe_) == 0) sigpipe_saved_ = true;
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    const int err = errno;
    for (int fd : {in[0], in[1], out[0], out[1]})
      if (fd >= 0) ::close(fd);
    throw std::runtime_error(fmt::format("--scheduler-cmd: cannot create pipes: {}", std::strerror(err)));
  }
  int err = 0;
  const pid_t pid = child_process::spawn_in_group({"/bin/sh", "-c", command_}, {in[0], "", 0}, {out[1], "", 0}, false, err);
  ::close(in[0]);
  ::close(out[1]);
  if (pid < 0) {
    ::close(in[1]);
    ::close(out[0]);
    throw std::runtime_error(fmt::format("--scheduler-cmd: cannot start /bin/sh: {}", std::strerror(err)));
  }
  pid_ = pid;
  to_child_ = in[1];
  from_child_ = out[0];
  ::fcntl(to_child_, F_SETFL, ::fcntl(to_child_, F_GETFL) | O_NONBLOCK);
  ::fcntl(from_child_, F_SETFL, ::fcntl(from_child_, F_GETFL) | O_NONBLOCK);
}

void SchedulerProcess::stop() {
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  if (pid_ > 0) {
    // A scheduler that reads EOF may end by itself; give it a moment, then kill its group.
    child_process::ended_within(pid_, 20, 5);
    child_process::kill_group_and_reap(pid_);
    pid_ = -1;
  }
  if (sigpipe_saved_) ::sigaction(SIGPIPE, &old_pipe_, nullptr);
  sigpipe_saved_ = false;
}

std::string SchedulerProcess::exit_text() {
  // The child closed its stdout; it usually exits at the same time.
  if (!child_process::ended_within(pid_, 100, 2)) return "closed its stdout without answering";
  const int status = child_process::kill_group_and_reap(pid_);
  pid_ = -1;
  if (WIFEXITED(status)) return fmt::format("exited with status {} without answering", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {} without answering", WTERMSIG(status));
  return "ended without answering";
}

std::string SchedulerProcess::exchange(const std::string& line) {
  if (pid_ < 0 && to_child_ < 0) start();
  if (pid_ < 0) sched_proc_fail("scheduler: has ended (an earlier exchange failed)");
  const auto t0 = sched_clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<sched_clock::duration>(std::chrono::duration<double>(timeout_s_));
  const std::string timeout_rule = fmt::format("scheduler: no answer within {} s (--scheduler-timeout)", timeout_s_);
  std::string msg = line;
  msg += '\n';
  std::size_t sent = 0;
  std::string answer;
  bool have = false;
  // The answer may arrive while the snapshot is still being written (a scheduler that answers
  // before reading everything): poll both ends until the line is sent and an answer is read.
  while (!have) {
    pollfd fds[2];
    nfds_t n = 0;
    const bool sending = sent < msg.size();
    if (sending) fds[n++] = {to_child_, POLLOUT, 0};
    fds[n++] = {from_child_, POLLIN, 0};
    const int ms = sched_proc_ms_left(deadline);
    if (ms == 0) sched_proc_fail(timeout_rule);
    const int pr = ::poll(fds, n, ms);
    if (pr < 0) {
      if (errno == EINTR) {
        throw_if_interrupted();
        continue;
      }
      throw std::runtime_error(fmt::format("--scheduler-cmd: poll: {}", std::strerror(errno)));
    }
    if (pr == 0) sched_proc_fail(timeout_rule);
    if (sending && (fds[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t w = ::write(to_child_, msg.data() + sent, msg.size() - sent);
      if (w > 0) sent += std::size_t(w);
      else if (w < 0 && errno == EPIPE) sched_proc_fail("scheduler: " + exit_text());
      else if (w < 0 && errno != EAGAIN && errno != EINTR)
        throw std::runtime_error(fmt::format("--scheduler-cmd: write: {}", std::strerror(errno)));
    }
    const pollfd& rd = fds[n - 1];
    if (rd.revents & (POLLIN | POLLERR | POLLHUP)) {
      char buf[65536];
      const ssize_t r = ::read(from_child_, buf, sizeof buf);
      if (r == 0) sched_proc_fail("scheduler: " + exit_text());
      if (r < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        throw std::runtime_error(fmt::format("--scheduler-cmd: read: {}", std::strerror(errno)));
      }
      pending_.append(buf, std::size_t(r));
    }
    if (const auto nl = pending_.find('\n'); nl != std::string::npos) {
      if (sent < msg.size()) continue;  // answered before reading the whole snapshot: finish sending
      answer = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      have = true;
    } else if (pending_.size() > io::limits::max_scenario_bytes) {
      sched_proc_fail(fmt::format("scheduler: an answer line longer than {} bytes", io::limits::max_scenario_bytes));
    }
  }
  ++exchanges_;
  seconds_ += std::chrono::duration<double>(sched_clock::now() - t0).count();
  return answer;
}

}  // namespace sim
