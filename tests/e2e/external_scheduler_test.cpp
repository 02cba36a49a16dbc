// `schedsim run --scheduler-cmd` (docs/external-scheduler.md): an external scheduler answers the
// `decide` snapshot at every scheduling instant; examples/fifo_scheduler.py reproduces the
// built-in greedy + first-fit run byte for byte, and every broken rule (garbage, a hang, an early
// exit, an answer libsched refuses) is exit 2 naming the instant.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/files.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

testutil::CommandResult schedsim(const std::string& args) {
  return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "external-scheduler");
}

fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("external-" + name);
  fs::create_directories(d);
  return d;
}

bool have_python3() { return std::system("command -v python3 >/dev/null 2>&1") == 0; }

/// Nodes a-0, a-1 (8 GPUs), b-0, b-1 (4 GPUs) in one shared pool; greedy, first-fit, no
/// preemption. By hand (queue: priority, then submit, then name): at 0 t3 (8 GPUs) takes a-0,
/// t1 (4) a-1, t2 (2 x 4) a-1 and b-0; at 100 t4 (4 x 4) fits nowhere, t5 (2) takes b-1; t6
/// (8, at 200) waits for t3's end at 300 and runs on a-0 until 400; t4 waits for t2's end at 900
/// and starts on a-0, a-0, a-1, a-1.
std::string scenario(const std::string& extra = "") {
  return R"({
  "schema": "schedsim/v1", "name": "fifo-external", "seed": 1,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "g4", "gpu_model": "A100", "gpus": 4, "vcpu": 16, "memory_gib": 64}],
    "pools": [{"name": "shared", "kind": "shared", "node_groups": [
      {"prefix": "a-", "count": 2, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960},
      {"prefix": "b-", "count": 2, "gpu_model": "A100", "gpus": 4, "vcpu": 48, "memory_gib": 480}]}]},
  "scheduler": {"queueing": "greedy", "placement": "first-fit", "preemption": false},
  "tasks": [
    {"name": "t1", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "replica": {"gpus": 4, "vcpu": 16, "memory_gib": 64},
     "resource_type": "pay_as_you_go", "duration_s": 600},
    {"name": "t2", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 1, "specs": ["g4"],
     "resource_type": "pay_as_you_go", "duration_s": 900},
    {"name": "t3", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "replica": {"gpus": 8, "vcpu": 32, "memory_gib": 128},
     "resource_type": "pay_as_you_go", "priority": 7, "duration_s": 300},
    {"name": "t4", "user": "u", "submit_s": 100, "type": "PyTorchJob", "workers": 3, "replica": {"gpus": 4, "vcpu": 16, "memory_gib": 64},
     "resource_type": "pay_as_you_go", "duration_s": 200},
    {"name": "t5", "user": "v", "submit_s": 100, "type": "PyTorchJob", "workers": 0, "replica": {"gpus": 2, "vcpu": 8, "memory_gib": 32},
     "resource_type": "pay_as_you_go", "priority": 3, "duration_s": 1000},
    {"name": "t6", "user": "v", "submit_s": 200, "type": "PyTorchJob", "workers": 0, "replica": {"gpus": 8, "vcpu": 32, "memory_gib": 128},
     "resource_type": "pay_as_you_go", "priority": 9, "duration_s": 100}
  ])" + extra + "}\n";
}

fs::path write_file(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
  return p;
}

/// A scheduler script answering every snapshot line with `answer` (one JSON line).
fs::path answering(const fs::path& dir, const std::string& answer) {
  return write_file(dir / "answer.sh", "while read -r line; do printf '%s\\n' '" + answer + "'; done\n");
}

/// Runs the scenario with `--scheduler-cmd 'sh SCRIPT'` (and `more`) and returns the result.
testutil::CommandResult run_with(const fs::path& dir, const fs::path& script, const std::string& more = "",
                                 const std::string& extra = "") {
  const fs::path s = write_file(dir / "s.json", scenario(extra));
  return schedsim("run " + s.string() + " --out " + (dir / "out").string() + " --no-progress --scheduler-cmd 'sh " + script.string() +
                  "' " + more);
}

/// The row of task `name` in tasks.csv text (its one attempt).
std::string row_of(const std::string& csv, const std::string& name) {
  const auto at = csv.find("\n" + name + ",");
  return at == std::string::npos ? std::string() : csv.substr(at + 1, csv.find('\n', at + 1) - at - 1);
}

}  // namespace

TEST_CASE("--scheduler-cmd with examples/fifo_scheduler.py reproduces the built-in greedy first-fit tasks.csv byte for byte") {
  if (!have_python3()) {
    WARN("skipped: python3 is not installed (the example scheduler is a Python script)");
    return;
  }
  const fs::path w = work_dir("fifo");
  const fs::path s = write_file(w / "s.json", scenario());
  auto builtin = schedsim("run " + s.string() + " --out " + (w / "builtin").string() + " --no-progress");
  REQUIRE(builtin.status == 0);
  auto external = schedsim("run " + s.string() + " --out " + (w / "external").string() + " --no-progress --scheduler-cmd 'python3 " +
                           std::string(SCHEDSIM_SOURCE_DIR) + "/examples/fifo_scheduler.py'");
  INFO(external.err);
  REQUIRE(external.status == 0);
  const std::string a = testutil::slurp(w / "builtin" / "tasks.csv"), b = testutil::slurp(w / "external" / "tasks.csv");
  // The hand-derived schedule (scenario()): start_s and nodes of the tasks that wait.
  CHECK(row_of(a, "t5").rfind("t5,1,Succeeded,100,100,1100,,b-1,", 0) == 0);
  CHECK(row_of(a, "t6").rfind("t6,1,Succeeded,200,300,400,,a-0,", 0) == 0);
  CHECK(row_of(a, "t4").rfind("t4,1,Succeeded,100,900,1100,,a-0;a-0;a-1;a-1,", 0) == 0);
  CHECK(a == b);
  // Instants with a waiting task: 0, 100, 200, 300, 400, 600, 900 (each one exchange).
  CHECK(external.out.find("scheduler_cmd_instants" + std::string(12, ' ') + "7\n") != std::string::npos);
}

TEST_CASE("--scheduler-cmd: an answer that is not JSON is exit 2 naming the instant") {
  const fs::path w = work_dir("garbage");
  auto r = run_with(w, write_file(w / "garbage.sh", "while read -r line; do echo 'not json'; done\n"));
  CHECK(r.status == 2);
  CHECK(r.err.rfind("--scheduler-cmd: t=0 s: answer: not JSON: \"not json\"\n", 0) == 0);
  CHECK_FALSE(fs::exists(w / "out"));
}

TEST_CASE("--scheduler-cmd: an answer of the wrong shape is exit 2 naming the instant") {
  const fs::path w = work_dir("shape");
  auto r = run_with(w, answering(w, R"({"placements":{"task":"t1"}})"));
  CHECK(r.status == 2);
  CHECK(r.err == "--scheduler-cmd: t=0 s: answer: `placements`: must be an array\n");
}

TEST_CASE("--scheduler-cmd: a scheduler that does not answer within --scheduler-timeout is exit 2 and killed") {
  const fs::path w = work_dir("hang");
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_with(w, write_file(w / "hang.sh", "sleep 37.25\n"), "--scheduler-timeout 1");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(r.status == 2);
  CHECK(r.err == "--scheduler-cmd: t=0 s: scheduler: no answer within 1 s (--scheduler-timeout)\n");
  CHECK(wall < 10);  // the child's group was killed, not waited for
  CHECK(std::system("pgrep -f 'slee[p] 37[.]25' >/dev/null") != 0);
}

TEST_CASE("--scheduler-cmd: a scheduler that exits before answering is exit 2 naming the instant") {
  const fs::path w = work_dir("exits");
  auto r = run_with(w, write_file(w / "exits.sh", "read -r line; exit 3\n"));
  CHECK(r.status == 2);
  CHECK(r.err == "--scheduler-cmd: t=0 s: scheduler: exited with status 3 without answering\n");
}

TEST_CASE("--scheduler-cmd: a scheduler that stops after some instants is exit 2 naming the later instant") {
  const fs::path w = work_dir("stops");
  // Answers the first snapshot (t=0) with nothing placed, then exits at the next one (t=100).
  auto r = run_with(w, write_file(w / "stops.sh", "read -r line; echo '{\"placements\":[]}'; read -r line; exit 0\n"));
  CHECK(r.status == 2);
  CHECK(r.err == "--scheduler-cmd: t=100 s: scheduler: exited with status 0 without answering\n");
}

TEST_CASE("--scheduler-cmd: placing an unknown task is exit 2 naming the instant and the task") {
  const fs::path w = work_dir("unknown");
  auto r = run_with(w, answering(w, R"({"placements":[{"task":"nope","replicas":[{"node":"a-0"}]}],"preemptions":[]})"));
  CHECK(r.status == 2);
  CHECK(r.err == "--scheduler-cmd: t=0 s: task nope: not a task of the scenario\n");
}

TEST_CASE("--scheduler-cmd: placing part of a gang is exit 2 (a gang starts whole)") {
  const fs::path w = work_dir("split");
  auto r = run_with(w, answering(w, R"({"placements":[{"task":"t2","spec":"g4","replicas":[{"node":"a-0"}]}]})"));
  CHECK(r.status == 2);
  CHECK(r.err == "--scheduler-cmd: t=0 s: task t2: 1 replicas given for a gang of 2 (a gang starts whole or not at all)\n");
}

TEST_CASE("--scheduler-cmd: a placement that does not fit its node is exit 2 naming the task") {
  const fs::path w = work_dir("nofit");
  auto r = run_with(w, answering(w, R"({"placements":[{"task":"t3","replicas":[{"node":"b-0"}]}]})"));
  CHECK(r.status == 2);
  CHECK(r.err == "--scheduler-cmd: t=0 s: task t3: Cluster::allocate_exact: node b-0: not enough free GPUs\n");
}

TEST_CASE("--scheduler-cmd: a placement beyond the user's quota is exit 2 naming the task") {
  const fs::path w = work_dir("quota");
  auto r = run_with(w, answering(w, R"({"placements":[{"task":"t3","replicas":[{"node":"a-0"}]}]})"), "",
                    R"(, "quotas": [{"user": "u", "resource_type": "pay_as_you_go", "gpus": 4, "vcpu": 1000, "memory_gib": 10000}])");
  CHECK(r.status == 2);
  CHECK(r.err.find("--scheduler-cmd: t=0 s: task t3: admission (quota) refuses the gang's demand on pay_as_you_go capacity (quota of "
                   "u)\n") != std::string::npos);
}

TEST_CASE("--scheduler-cmd: a preemption the rules forbid is exit 2 naming the victim") {
  const fs::path w = work_dir("preempt");
  // At 0, t3 starts on a-0 (first answer); at 100 the scheduler preempts it for t4, with
  // scheduler.preemption false.
  auto r = run_with(w, write_file(w / "preempt.sh",
                                  "read -r line; echo '{\"placements\":[{\"task\":\"t3\",\"replicas\":[{\"node\":\"a-0\"}]}]}'\n"
                                  "read -r line; echo '{\"placements\":[{\"task\":\"t5\",\"replicas\":[{\"node\":\"a-0\"}]}],"
                                  "\"preemptions\":[{\"victim\":\"t3\",\"preemptor\":\"t5\"}]}'; sleep 5\n"));
  CHECK(r.status == 2);
  CHECK(r.err ==
        "--scheduler-cmd: t=100 s: task t3: victim t3 may not be preempted by t5 (priority, guarantee, capacity class or the "
        "scheduler's preemption switches)\n");
}

TEST_CASE("--scheduler-cmd runs one simulation: refused with --seeds, and validate checks --scheduler-timeout") {
  const fs::path w = work_dir("options");
  const fs::path s = write_file(w / "s.json", scenario());
  auto seeds = schedsim("run " + s.string() + " --out " + (w / "o").string() + " --seeds 2 --scheduler-cmd 'cat'");
  CHECK(seeds.status == 2);
  CHECK(seeds.err == "--scheduler-cmd: runs one simulation: not with --seeds K > 1\n");
  CHECK(schedsim("validate " + s.string() + " --scheduler-cmd 'cat' --scheduler-timeout 5").status == 0);
  auto bad = schedsim("validate " + s.string() + " --scheduler-cmd 'cat' --scheduler-timeout 0");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--scheduler-timeout: 0: must be a number of seconds > 0 and <= 86400") != std::string::npos);
}

}  // namespace SCHEDSIM_UNITY_ID
