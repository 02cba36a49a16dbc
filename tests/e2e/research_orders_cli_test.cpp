// The research queue orders' keys seen from the CLI (docs/scheduler.md "Research queue
// orders"): `validate` refuses what `run` refuses, with the same one line, and `run` writes
// nothing then.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

/// Runs `schedsim ARGS`, capturing stdout and stderr.
Result schedsim(const std::string& args) {
  const fs::path base = fs::temp_directory_path() / ("schedsim-research-orders-" + std::to_string(::getpid()));
  const std::string cmd = std::string(SCHEDSIM_BINARY) + " " + args + " >" + base.string() + ".out 2>" + base.string() + ".err";
  const int st = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = testutil::slurp(base.string() + ".out");
  r.err = testutil::slurp(base.string() + ".err");
  fs::remove(base.string() + ".out");
  fs::remove(base.string() + ".err");
  return r;
}

const std::string k_scenario = std::string(SCHEDSIM_SOURCE_DIR) + "/scenarios/what-if-capacity.json";

/// `validate` and `run` with `set` must both exit 2 with exactly `err`; run writes nothing.
void both_refuse(const std::string& set, const std::string& err) {
  const fs::path out = fs::temp_directory_path() / ("schedsim-research-orders-never-" + std::to_string(::getpid()));
  const auto v = schedsim("validate " + k_scenario + " --set '" + set + "'");
  CHECK(v.status == 2);
  CHECK(v.err == err);
  const auto r = schedsim("run " + k_scenario + " --no-progress --out " + out.string() + " --set '" + set + "'");
  CHECK(r.status == 2);
  CHECK(r.err == err);
  CHECK_FALSE(fs::exists(out));
}

}  // namespace

TEST_CASE("scheduler.fair_shares: a share of 0 is refused by validate and run alike (exit 2)") {
  both_refuse("scheduler.fair_shares={\"a\":0}",
              k_scenario + ": scheduler.fair_shares.a: 0: must be > 0 and <= 1e15 (a share) (from --set scheduler.fair_shares={\"a\":0})\n");
}

TEST_CASE("scheduler.queue_order: an unknown name exits 2 listing every registered order") {
  both_refuse("scheduler.queue_order=nope",
              k_scenario +
                  ": scheduler.queue_order: \"nope\": must be one of `fair`, `gittins`, `las`, `priority-fifo`, `qssf`, `sjf`, "
                  "`sjf-estimate`, `srtf`, `srtf-estimate` (from --set scheduler.queue_order=nope)\n");
}

TEST_CASE("scheduler.las_starvation_s and qssf_default_s: negative values are refused by validate and run alike") {
  both_refuse("scheduler.las_starvation_s=-1",
              k_scenario + ": scheduler.las_starvation_s: -1: must be between 0 and 1000000000 (from --set scheduler.las_starvation_s=-1)\n");
  both_refuse("scheduler.qssf_default_s=-1",
              k_scenario + ": scheduler.qssf_default_s: -1: must be between 0 and 1000000000 (from --set scheduler.qssf_default_s=-1)\n");
}

}  // namespace SCHEDSIM_UNITY_ID
