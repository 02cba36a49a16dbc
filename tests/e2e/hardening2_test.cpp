// Issue #36 (hardening round 2), seen from the command line: options that would be silently
// ignored are refused, seeds never wrap, stdout write errors and unreadable stdin are exit 1,
// decide refuses snapshots that contradict themselves, override text must be UTF-8.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

using Result = testutil::CommandResult;

/// Runs `schedsim ARGS` through /bin/sh (ARGS may redirect), capturing stdout and stderr.
Result schedsim(const std::string& args) { return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "hardening2"); }

/// A fresh work directory.
fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("hardening2-" + name);
  fs::create_directories(d);
  return d;
}

/// Two one-node jobs on two 8-GPU nodes (seed 7): a valid scenario that runs in milliseconds.
const char* k_scenario = R"({
  "schema": "schedsim/v1", "name": "h2", "seed": 7,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}],
    "pools": [{"name": "p", "kind": "shared",
      "node_groups": [{"prefix": "n-", "count": 2, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
  "tasks": [
    {"name": "t0", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "resource_type": "pay_as_you_go", "duration_s": 600},
    {"name": "t1", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "resource_type": "pay_as_you_go", "duration_s": 600}
  ]
}
)";

std::string write(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

const std::string k_seed_rule =
    "the seed cannot be overridden here: the runs use the seeds S .. S+K-1 of --seed S and --seeds K (use --seed)";

/// Runs `schedsim decide` on `snapshot` (written to a file in `dir`).
Result decide(const fs::path& dir, const std::string& snapshot) {
  return schedsim("decide < " + write(dir, "snap.json", snapshot));
}

/// A decide snapshot: two 8-GPU nodes, now_s 100, and `body` (node_state, tasks).
std::string snapshot(const std::string& body) {
  return std::string(R"({"now_s": 100,
  "cluster": {"instance_specs": [{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 64, "memory_gib": 512}],
    "pools": [{"name": "shared", "node_groups": [
      {"prefix": "a100-", "count": 2, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
)") + body + "}\n";
}

}  // namespace

// ------------------------------------------------------------------ seeds come from --seed only

TEST_CASE("sweep refuses --vary seed=... (every point would run the first seed), pointing to --seed", "[hardening2]") {
  const fs::path w = work_dir("sweep-seed");
  const auto s = write(w, "s.json", k_scenario);
  const auto r = schedsim("sweep " + s + " --vary seed=1,2,3 --seeds 1 --out " + (w / "o").string());
  CHECK(r.status == 2);
  CHECK(r.err == "--vary: seed=1,2,3: " + k_seed_rule + "\n");
  const auto set = schedsim("sweep " + s + " --vary 'tasks[t0].priority=1,2' --set seed=3 --seeds 1 --out " + (w / "o").string());
  CHECK(set.status == 2);
  CHECK(set.err == "--set: seed: 3: " + k_seed_rule + "\n");
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("plan refuses --vary seed=lo..hi and --complement seed=TOTAL", "[hardening2]") {
  const fs::path w = work_dir("plan-seed");
  const auto s = write(w, "s.json", k_scenario);
  const auto r = schedsim("plan " + s + " --vary seed=1..3 --slo 'mean_wait_s<=1' --out " + (w / "o").string());
  CHECK(r.status == 2);
  CHECK(r.err == "--vary: seed=1..3: " + k_seed_rule + "\n");
  const auto c = schedsim("plan " + s + " --vary 'cluster.pools[p].node_groups[0].count=1..2' --complement seed=10 --slo 'mean_wait_s<=1' --out " +
                          (w / "o").string());
  CHECK(c.status == 2);
  CHECK(c.err == "--complement: seed=10: " + k_seed_rule + "\n");
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("compare refuses seed in --set, --set-a and --set-b, naming each option once", "[hardening2]") {
  const fs::path w = work_dir("compare-seed");
  const auto s = write(w, "s.json", k_scenario);
  const auto r = schedsim("compare " + s + " " + s + " --set seed=3 --set-a seed=4 --set-b seed=5 --out " + (w / "o").string());
  CHECK(r.status == 2);
  CHECK(r.err == "--set: seed: 3: " + k_seed_rule + "\n--set-a: seed: 4: " + k_seed_rule + "\n--set-b: seed: 5: " + k_seed_rule + "\n");
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("fill --seeds K refuses seeds past 2^64 - 1 instead of wrapping to 0", "[hardening2]") {
  const fs::path w = work_dir("fill-seed");
  const auto s = write(w, "s.json", k_scenario);
  const auto r = schedsim("fill " + s + " --seeds 2 --seed 18446744073709551615 --out " + (w / "o").string());
  CHECK(r.status == 2);
  CHECK(r.err == "--seeds: 2: the seeds 18446744073709551615 .. 18446744073709551615 + 2 - 1 do not fit in 0 .. "
                 "18446744073709551615\n");
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("sweep runs an integer range past 2^53 exactly", "[hardening2]") {
  const fs::path w = work_dir("sweep-exact");
  const auto s = write(w, "s.json", k_scenario);
  // The values reach validation exactly (as doubles they would be 9007199254740992, ...94, ...96).
  const auto r = schedsim("sweep " + s + " --vary 'tasks[t0].priority=9007199254740993..9007199254740995' --seeds 1 --out " +
                          (w / "o").string());
  CHECK(r.status == 2);
  for (const char* v : {"9007199254740993", "9007199254740994", "9007199254740995"})
    CHECK(r.err.find(fmt::format("tasks[0].priority: {}: must be between 1 and 9", v)) != std::string::npos);
  fs::remove_all(w);
}

// ------------------------------------------------------------------ exit status 1: environment

TEST_CASE("validate, run, show-default and --version exit 1 when stdout cannot be written", "[hardening2]") {
  if (!fs::exists("/dev/full")) return;
  const fs::path w = work_dir("devfull");
  const auto s = write(w, "s.json", k_scenario);
  for (const std::string& args : {"validate " + s, "run " + s + " --out " + (w / "o").string(), std::string("show-default"),
                                  std::string("--version")}) {
    INFO(args);
    const auto r = testutil::run_command("{ " + std::string(SCHEDSIM_BINARY) + " " + args + " > /dev/full; }", "hardening2");
    CHECK(r.status == 1);
    CHECK(r.err.find("schedsim: stdout: write error") != std::string::npos);  // ": No space left on device" when flush saw it
  }
  // An input error keeps its status 2.
  const auto bad = testutil::run_command("{ " + std::string(SCHEDSIM_BINARY) + " validate " + (w / "none.json").string() +
                                          " > /dev/full; }", "hardening2");
  CHECK(bad.status == 2);
  fs::remove_all(w);
}

TEST_CASE("decide exits 1 when stdin is a directory or closed", "[hardening2]") {
  const fs::path w = work_dir("decide-stdin");
  const auto d = schedsim("decide < " + w.string());
  CHECK(d.status == 1);
  CHECK(d.err == "schedsim decide: <stdin>: cannot be read: is a directory (expected a snapshot)\n");
  CHECK(d.out.empty());
  const auto c = schedsim("decide <&-");
  CHECK(c.status == 1);
  CHECK(c.err == "schedsim decide: <stdin>: cannot be read: Bad file descriptor\n");
  fs::remove_all(w);
}

// ------------------------------------------------------------------ decide: one snapshot, one truth

TEST_CASE("decide refuses two node_state entries for one node", "[hardening2]") {
  const fs::path w = work_dir("decide-state");
  const auto r = decide(w, snapshot(R"("node_state": [{"node": "a100-0", "drained": true}, {"node": "a100-1"},
                                                      {"node": "a100-0", "up": false}])"));
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "<stdin>: node_state[2].node: \"a100-0\": node_state[0] is already about this node: one entry per node\n");
  fs::remove_all(w);
}

TEST_CASE("decide refuses a waiting or running task submitted after now_s", "[hardening2]") {
  const fs::path w = work_dir("decide-future");
  const auto r = decide(w, snapshot(R"("tasks": [
    {"name": "w", "user": "u", "submit_s": 101, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"], "resource_type": "pay_as_you_go"},
    {"name": "r", "user": "u", "submit_s": 150, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"], "resource_type": "pay_as_you_go",
     "running": {"start_s": 50, "replicas": [{"node": "a100-0"}]}}])"));
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "<stdin>: tasks[0].submit_s: 101: must be <= now_s (100): the task is not submitted yet\n"
        "<stdin>: tasks[1].submit_s: 150: must be <= now_s (100): the task is not submitted yet\n"
        "<stdin>: tasks[1].running.start_s: 50: must be >= the task's submit_s (150): an attempt starts after its submission\n");
  fs::remove_all(w);
}

// ------------------------------------------------------------------ what run refuses, validate refuses

TEST_CASE("a --set value that is not UTF-8 is refused by validate and run (never an abort)", "[hardening2]") {
  const fs::path w = work_dir("set-utf8");
  const auto s = write(w, "s.json", k_scenario);
  const std::string expected = "--set: name: \"a\\xff\": VALUE is not valid UTF-8 (byte 2): every text of a scenario must be UTF-8\n";
  const auto v = schedsim("validate " + s + " --set \"$(printf 'name=a\\377')\"");
  CHECK(v.status == 2);
  CHECK(v.err == expected);
  const auto r = schedsim("run " + s + " --set \"$(printf 'name=a\\377')\" --out " + (w / "o").string());
  CHECK(r.status == 2);
  CHECK(r.err == expected);
  const auto p = schedsim("validate " + s + " --set \"$(printf 'tasks[t0].x\\377=1')\"");
  CHECK(p.status == 2);
  CHECK(p.err == "--set: tasks[t0].x\\xff: 1: PATH is not valid UTF-8 (byte 12): every text of a scenario must be UTF-8\n");
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

}  // namespace SCHEDSIM_UNITY_ID
