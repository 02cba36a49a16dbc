// sim::child_process (sim/engine/child_process.hpp), which --scheduler-cmd and report export
// share: the child's streams, a start failure, waiting without reaping, and killing the whole
// process group (a grandchild goes with the child).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "sim/engine/child_process.hpp"
#include "tests/common/files.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

namespace cp = sim::child_process;

TEST_CASE("child process: stdout and stderr go to the log, stdin is /dev/null", "[child_process]") {
  const auto dir = testutil::fresh_dir("child-log");
  std::filesystem::create_directories(dir);
  const auto log = dir / "log.txt";
  int err = -1;
  const pid_t pid = cp::spawn_in_group({"/bin/sh", "-c", "echo out; echo err >&2; cat; echo end"},
                                       {-1, "/dev/null", O_RDONLY}, {-1, log.string(), O_WRONLY | O_CREAT | O_TRUNC}, true, err);
  REQUIRE(pid > 0);
  CHECK(err == 0);
  REQUIRE(cp::ended_within(pid, 500, 10));
  CHECK(cp::has_ended(pid));  // not reaped by the check
  const int status = cp::kill_group_and_reap(pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(testutil::slurp(log) == "out\nerr\nend\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("child process: a missing program fails to start with its errno", "[child_process]") {
  int err = 0;
  const pid_t pid = cp::spawn_in_group({"/nonexistent/program"}, {-1, "/dev/null", O_RDONLY}, {-1, "/dev/null", O_WRONLY}, false, err);
  CHECK(pid == -1);
  CHECK(err == ENOENT);
}

TEST_CASE("child process: killing the group ends the child and what it started", "[child_process]") {
  const auto dir = testutil::fresh_dir("child-group");
  std::filesystem::create_directories(dir);
  const auto pidfile = dir / "grandchild";
  int err = -1;
  // The shell starts a sleeping grandchild, writes its pid, and waits for it.
  const pid_t pid = cp::spawn_in_group({"/bin/sh", "-c", "sleep 60 & echo $! > '" + pidfile.string() + "'; wait"},
                                       {-1, "/dev/null", O_RDONLY}, {-1, "/dev/null", O_WRONLY}, true, err);
  REQUIRE(pid > 0);
  std::string text;
  for (int i = 0; i < 500 && text.find('\n') == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    text = testutil::slurp(pidfile);
  }
  REQUIRE(text.find('\n') != std::string::npos);
  const pid_t grandchild = pid_t(std::stol(text));
  CHECK_FALSE(cp::ended_within(pid, 3, 10));  // still waiting for its sleep
  CHECK(::getpgid(grandchild) == pid);        // the grandchild is in the child's group
  const int status = cp::kill_group_and_reap(pid);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  // The grandchild is gone, or a zombie its new parent has not reaped (a container's init may not).
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    const std::string stat = testutil::slurp("/proc/" + std::to_string(grandchild) + "/stat");
    const auto close = stat.rfind(')');
    gone = (::kill(grandchild, 0) != 0 && errno == ESRCH) || (close != std::string::npos && stat.substr(close + 2, 1) == "Z");
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(gone);
  std::filesystem::remove_all(dir);
}

}  // namespace SCHEDSIM_UNITY_ID
