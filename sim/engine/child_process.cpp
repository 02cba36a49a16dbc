// Child processes in their own process group (child_process.hpp).
#include "sim/engine/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

extern char** environ;

namespace sim::child_process {

namespace {

void child_stream(posix_spawn_file_actions_t& fa, const Stream& s, int target) {
  if (s.fd >= 0) posix_spawn_file_actions_adddup2(&fa, s.fd, target);
  else posix_spawn_file_actions_addopen(&fa, target, s.path.c_str(), s.flags, 0644);
}

}  // namespace

pid_t spawn_in_group(const std::vector<std::string>& argv, const Stream& in, const Stream& out, bool err_to_out, int& error) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  child_stream(fa, in, STDIN_FILENO);
  child_stream(fa, out, STDOUT_FILENO);
  if (err_to_out) posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  sigset_t def, none;
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  sigaddset(&def, SIGINT);
  sigaddset(&def, SIGTERM);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);  // its own process group: killed as a whole
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  cargv.reserve(args.size() + 1);
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args.at(0).c_str(), &fa, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  error = rc;
  return rc == 0 ? pid : -1;
}

bool has_ended(pid_t pid) {
  siginfo_t info{};
  const int w = ::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  if (w == 0) return info.si_pid == pid;
  return errno != EINTR;  // ECHILD: not ours (any more)
}

bool ended_within(pid_t pid, int tries, int ms) {
  for (int i = 0; i < tries; ++i) {
    if (has_ended(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
  return false;
}

int kill_group_and_reap(pid_t pid) {
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace sim::child_process
