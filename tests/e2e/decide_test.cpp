// `schedsim decide` (docs/decide.md): a snapshot on stdin, one decision as JSON on stdout. The
// binary is run as a user would; its placements are compared with the library's own decision
// on the same snapshot built through the libsched API.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <libsched/libsched.hpp>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;
using nlohmann::json;
using namespace libsched;

namespace {

struct Run {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs `schedsim decide` with `snapshot` on stdin.
Run decide(const std::string& snapshot, const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("schedsim-decide-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  std::ofstream(d / "in.json") << snapshot;
  const std::string cmd = std::string(SCHEDSIM_BINARY) + " decide < " + (d / "in.json").string() + " > " +
                          (d / "out.json").string() + " 2> " + (d / "err.txt").string();
  const int st = std::system(cmd.c_str());
  Run r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(d / "out.json");
  r.err = slurp(d / "err.txt");
  fs::remove_all(d);
  return r;
}

/// One placement as both sides print it: task, spec, capacity, and per replica node + GPUs.
struct Seen {
  std::string task, spec, capacity;
  std::vector<std::pair<std::string, std::vector<int>>> replicas;
  friend bool operator==(const Seen&, const Seen&) = default;
};
std::vector<Seen> from_json(const json& d) {
  std::vector<Seen> v;
  for (const auto& p : d.at("placements")) {
    Seen s{p.at("task"), p.at("spec"), p.at("capacity"), {}};
    for (const auto& r : p.at("replicas")) s.replicas.emplace_back(r.at("node"), r.at("gpus").get<std::vector<int>>());
    v.push_back(std::move(s));
  }
  return v;
}
std::vector<Seen> from_library(const Scheduler& s, const ScheduleResult& res) {
  std::vector<Seen> v;
  for (TaskId t : res.started) {
    const Placement* p = s.placement_of(t);
    Seen seen{s.task(t).name, s.task(t).options[p->option].label, std::string(to_string(p->capacity)), {}};
    for (const auto& a : p->replicas) {
      std::vector<int> g;
      for (int i = 0; i < 64; ++i)
        if ((a.gpu_mask >> i) & 1u) g.push_back(i);
      seen.replicas.emplace_back(s.cluster().node(a.node).name, g);
    }
    v.push_back(std::move(seen));
  }
  return v;
}

/// Four 8-GPU A100 nodes in one shared pool; specs a100.8x and a100.1x.
const char* k_cluster = R"(
  "cluster": {
    "instance_specs": [
      {"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 64, "memory_gib": 512},
      {"name": "a100.1x", "gpu_model": "A100", "gpus": 1, "vcpu": 8, "memory_gib": 64}
    ],
    "pools": [{"name": "shared", "node_groups": [
      {"prefix": "a100-", "count": 4, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]
  })";

std::string snapshot(const std::string& body) { return "{\n" + std::string(k_cluster) + ",\n" + body + "\n}\n"; }

}  // namespace

TEST_CASE("decide on a snapshot gives the same placements as the library on the same snapshot") {
  const std::string snap = snapshot(R"(
  "now_s": 100,
  "scheduler": {"placement": "best-fit"},
  "tasks": [
    {"name": "old", "user": "u1", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.1x"],
     "resource_type": "pay_as_you_go", "count_per_node": 4,
     "running": {"start_s": 5, "replicas": [{"node": "a100-2", "gpus": [2, 3, 4, 5]}]}},
    {"name": "gang", "user": "u1", "submit_s": 10, "type": "PyTorchJob", "workers": 1, "specs": ["a100.8x"],
     "resource_type": "pay_as_you_go"},
    {"name": "small", "user": "u2", "submit_s": 20, "type": "PyTorchJob", "workers": 2, "specs": ["a100.1x"],
     "resource_type": "pay_as_you_go", "priority": 7},
    {"name": "share", "user": "u3", "submit_s": 30, "type": "PyTorchJob", "workers": 0,
     "replica": {"gpus": 1, "gpu_milli": 500, "vcpu": 2, "memory_gib": 8}, "resource_type": "pay_as_you_go"}
  ])");
  Run r = decide(snap, "same");
  INFO(r.err);
  REQUIRE(r.status == 0);
  json d = json::parse(r.out);

  // The same snapshot through the library.
  Cluster c;
  PoolId pool = c.add_pool("shared", PoolKind::shared);
  for (int i = 0; i < 4; ++i) c.add_node({fmt::format("a100-{}", i), pool, "A100", 8, 96000, 960 * 1024, 0, 0, {}});
  const ModelMask a100 = c.model_bit(c.find_model("A100"));
  const ReplicaShape x8{8, 1000, 64000, 512 * 1024, a100}, x1{1, 1000, 8000, 64 * 1024, a100};
  const ReplicaShape x1by4{4, 1000, 32000, 256 * 1024, a100}, share{1, 500, 2000, 8 * 1024, 0};
  Scheduler s(std::move(c));
  auto task = [](std::string name, std::string user, Time submit, std::int32_t workers, GangOption o, std::int32_t prio = 5) {
    TaskSpec t;
    t.name = std::move(name);
    t.user = std::move(user);
    t.resource_type = ResourceType::pay_as_you_go;
    t.submit = submit;
    t.workers = workers;
    t.priority = prio;
    t.options.push_back(std::move(o));
    return t;
  };
  s.adopt_task(task("old", "u1", 0, 0, {"a100.1x", x1by4, x1by4}),
               Adoption{0, ResourceType::pay_as_you_go, {{s.cluster().find_node("a100-2"), 0b111100}}, 5'000});
  for (const TaskSpec& t : {task("gang", "u1", 10'000, 1, {"a100.8x", x8, x8}), task("small", "u2", 20'000, 2, {"a100.1x", x1, x1}, 7),
                            task("share", "u3", 30'000, 0, {"", share, share})})
    s.enqueue(s.add_task(t), 100'000);
  ScheduleResult res = s.schedule(100'000);

  const std::vector<Seen> lib = from_library(s, res);
  REQUIRE(lib.size() == 3);  // gang, small and share all start
  CHECK(from_json(d) == lib);
  CHECK(d.at("preemptions").empty());
  CHECK(d.at("waiting").empty());
  CHECK(d.at("now_s") == 100);
}

TEST_CASE("decide reports a preemption with its victim, preemptor and kind") {
  const std::string snap = snapshot(R"(
  "now_s": 50,
  "tasks": [
    {"name": "low-0", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "resource_type": "pay_as_you_go", "priority": 1, "running": {"start_s": 0, "replicas": [{"node": "a100-0"}]}},
    {"name": "low-1", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "resource_type": "pay_as_you_go", "priority": 2, "running": {"start_s": 0, "replicas": [{"node": "a100-1"}]}},
    {"name": "spot-0", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "resource_type": "spot", "running": {"start_s": 0, "replicas": [{"node": "a100-2"}]}},
    {"name": "keep", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "resource_type": "pay_as_you_go", "priority": 9, "running": {"start_s": 0, "replicas": [{"node": "a100-3"}]}},
    {"name": "urgent", "user": "v", "submit_s": 40, "type": "PyTorchJob", "workers": 1, "specs": ["a100.8x"],
     "resource_type": "pay_as_you_go", "priority": 8}
  ])");
  Run r = decide(snap, "preempt");
  INFO(r.err);
  REQUIRE(r.status == 0);
  json d = json::parse(r.out);
  // Spot first (spot eviction), then the lowest priority: two nodes for the 2-replica gang.
  REQUIRE(d.at("preemptions").size() == 2);
  CHECK(d["preemptions"][0] == json{{"victim", "spot-0"}, {"preemptor", "urgent"}, {"kind", "spot_eviction"}});
  CHECK(d["preemptions"][1] == json{{"victim", "low-0"}, {"preemptor", "urgent"}, {"kind", "priority"}});
  REQUIRE(d.at("placements").size() == 1);
  CHECK(d["placements"][0]["task"] == "urgent");
  std::vector<std::string> nodes;
  for (const auto& x : d["placements"][0]["replicas"]) nodes.push_back(x["node"]);
  std::sort(nodes.begin(), nodes.end());
  CHECK(nodes == std::vector<std::string>{"a100-0", "a100-2"});
}

TEST_CASE("decide gives every task still waiting its wait code, blocking list and reason") {
  const std::string snap = snapshot(R"(
  "now_s": 10,
  "quotas": [{"user": "bob", "resource_type": "reserved", "pool": "shared", "gpus": 8, "vcpu": 1000, "memory_gib": 10000}],
  "tasks": [
    {"name": "bob-running", "user": "bob", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"],
     "pool": "shared", "running": {"start_s": 0, "replicas": [{"node": "a100-0"}]}},
    {"name": "bob-next", "user": "bob", "submit_s": 5, "type": "PyTorchJob", "workers": 0, "specs": ["a100.1x"], "pool": "shared"},
    {"name": "huge", "user": "carol", "submit_s": 6, "type": "PyTorchJob", "workers": 0, "replica": {"gpus": 16},
     "resource_type": "pay_as_you_go"}
  ])");
  Run r = decide(snap, "waiting");
  INFO(r.err);
  REQUIRE(r.status == 0);
  json d = json::parse(r.out);
  CHECK(d.at("placements").empty());
  REQUIRE(d.at("waiting").size() == 2);
  const json& bob = d["waiting"][0];
  CHECK(bob["task"] == "bob-next");
  CHECK(bob["code"] == "waits_for_quota");  // the adopted task holds bob's 8 GPUs of quota
  CHECK(bob["bucket"] == "quota");
  CHECK(bob["blocking"] == json::array({"waits_for_quota"}));
  CHECK(bob["reason"].get<std::string>().find("exceeds remaining quota 0 GPU of bob") != std::string::npos);
  CHECK(d["waiting"][1]["task"] == "huge");
  CHECK(d["waiting"][1]["code"] == "never_fits");
}

TEST_CASE("decide places next to an adopted task on the GPUs it leaves free") {
  const std::string snap = snapshot(R"(
  "now_s": 10,
  "node_state": [{"node": "a100-1", "drained": true}, {"node": "a100-2", "up": false}, {"node": "a100-3", "drained": true}],
  "tasks": [
    {"name": "half", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.1x"], "count_per_node": 4,
     "resource_type": "pay_as_you_go", "running": {"start_s": 0, "replicas": [{"node": "a100-0", "gpus": [0, 2, 4, 6]}]}},
    {"name": "whole", "user": "u", "submit_s": 1, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"], "resource_type": "pay_as_you_go"},
    {"name": "four", "user": "u", "submit_s": 2, "type": "PyTorchJob", "workers": 0, "specs": ["a100.1x"], "count_per_node": 4,
     "resource_type": "pay_as_you_go"}
  ])");
  Run r = decide(snap, "adopted");
  INFO(r.err);
  REQUIRE(r.status == 0);
  json d = json::parse(r.out);
  REQUIRE(d.at("placements").size() == 1);
  CHECK(d["placements"][0]["task"] == "four");
  CHECK(d["placements"][0]["replicas"][0]["node"] == "a100-0");
  CHECK(d["placements"][0]["replicas"][0]["gpus"] == json::array({1, 3, 5, 7}));
  REQUIRE(d.at("waiting").size() == 1);
  CHECK(d["waiting"][0]["task"] == "whole");
  CHECK(d["waiting"][0]["code"] != "fits_now");
}

TEST_CASE("decide output is byte-identical for the same snapshot") {
  const std::string snap = snapshot(R"(
  "now_s": 0,
  "scheduler": {"placement": "random"},
  "tasks": [
    {"name": "a", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 3, "specs": ["a100.1x"], "resource_type": "pay_as_you_go"},
    {"name": "b", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 1, "specs": ["a100.8x"], "resource_type": "pay_as_you_go"}
  ])");
  Run a = decide(snap, "det-a"), b = decide(snap, "det-b");
  REQUIRE(a.status == 0);
  CHECK(a.out == b.out);
}

TEST_CASE("decide refuses a snapshot without now_s and with an unknown node, exit 2 and nothing on stdout") {
  const std::string snap = snapshot(R"(
  "tasks": [
    {"name": "a", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"], "resource_type": "pay_as_you_go",
     "running": {"start_s": 0, "replicas": [{"node": "nope"}]}}
  ])");
  Run r = decide(snap, "bad");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("<stdin>: now_s: <missing>: required key is missing") != std::string::npos);
  CHECK(r.err.find("<stdin>: tasks[0].running.replicas[0].node: \"nope\": must name a cluster node") != std::string::npos);
}

TEST_CASE("decide refuses a running task that does not fit its node, naming its path") {
  const std::string snap = snapshot(R"(
  "now_s": 10,
  "tasks": [
    {"name": "a", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"], "resource_type": "pay_as_you_go",
     "running": {"start_s": 0, "replicas": [{"node": "a100-0"}]}},
    {"name": "b", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.1x"], "resource_type": "pay_as_you_go",
     "running": {"start_s": 0, "replicas": [{"node": "a100-0"}]}}
  ])");
  Run r = decide(snap, "nofit");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("<stdin>: tasks[1].running: ") != std::string::npos);
}

TEST_CASE("decide reports every problem of a snapshot in one pass: a scenario error, a running replica and a node_state entry give 3 lines") {
  const std::string snap = snapshot(R"(
  "now_s": 10,
  "tasks": [
    {"name": "a", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"], "resource_type": "pay_as_you_go",
     "running": {"start_s": 0, "replicas": [{"node": "nope"}]}},
    {"name": "b", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"], "resource_type": "pay_as_you_go",
     "priority": 12}
  ],
  "node_state": [{"node": "a100-1", "up": "yes"}])");
  Run r = decide(snap, "three");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "<stdin>: tasks[1].priority: 12: must be between 1 and 9\n"
        "<stdin>: tasks[0].running.replicas[0].node: \"nope\": must name a cluster node\n"
        "<stdin>: node_state[0].up: \"yes\": must be a boolean (true or false)\n");
}

TEST_CASE("decide words a replica that does not fit in the snapshot's terms: path, the running entry, the node and the rule, no function name") {
  const std::string snap = snapshot(R"(
  "now_s": 10,
  "tasks": [
    {"name": "a", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"], "resource_type": "pay_as_you_go",
     "running": {"start_s": 0, "replicas": [{"node": "a100-0"}]}},
    {"name": "b", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.1x"], "resource_type": "pay_as_you_go",
     "running": {"start_s": 0, "replicas": [{"node": "a100-0"}]}},
    {"name": "c", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 1, "specs": ["a100.1x"], "resource_type": "pay_as_you_go",
     "running": {"start_s": 0, "replicas": [{"node": "a100-1"}]}}
  ])");
  Run r = decide(snap, "words");
  CHECK(r.status == 2);
  CHECK(r.err ==
        "<stdin>: tasks[1].running: {\"replicas\":[{\"node\":\"a100-0\"}],\"start_s\":0}: node a100-0: not enough free GPUs\n"
        "<stdin>: tasks[2].running: {\"replicas\":[{\"node\":\"a100-1\"}],\"start_s\":0}: 1 replicas given for a gang of 2\n");
  CHECK(r.err.find("::") == std::string::npos);
}

TEST_CASE("decide refuses scenario-level errors with the scenario's diagnostics") {
  const std::string snap = snapshot(R"(
  "now_s": 10,
  "tasks": [{"name": "a", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a100.8x"], "priority": 12}]
  )");
  Run r = decide(snap, "scenario-error");
  CHECK(r.status == 2);
  CHECK(r.err.find("<stdin>: tasks[0].priority: 12: must be between 1 and 9") != std::string::npos);
}

TEST_CASE("decide refuses malformed JSON with its line and column") {
  Run r = decide("{\"now_s\": 1,,}", "malformed");
  CHECK(r.status == 2);
  CHECK(r.err.find("<stdin>: line 1, column") != std::string::npos);
}

TEST_CASE("decide refuses a NUL byte on stdin like a scenario file does, naming its position") {
  // The bytes after the NUL would be ignored by the JSON parser: a snapshot is text.
  Run r = decide(std::string("{\"now_s\": 1}\0{\"tasks\": []}", 26), "nul");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("<stdin>: line 1, column 13") != std::string::npos);
  CHECK(r.err.find("NUL byte") != std::string::npos);
}

TEST_CASE("decide accepts a snapshot with no task and answers with empty lists") {
  Run r = decide(snapshot(R"("now_s": 0)"), "empty");
  INFO(r.err);
  REQUIRE(r.status == 0);
  json d = json::parse(r.out);
  CHECK(d.at("placements").empty());
  CHECK(d.at("waiting").empty());
  CHECK(d.at("next_eligibility_change_s").is_null());
}

TEST_CASE("the example of docs/decide.md is what decide prints for its snapshot") {
  const std::string doc = slurp(fs::path(SCHEDSIM_TEST_DIR) / ".." / "docs" / "decide.md");
  std::vector<std::string> blocks;
  for (std::size_t at = doc.find("```json\n"); at != std::string::npos; at = doc.find("```json\n", at)) {
    const std::size_t begin = at + 8, end = doc.find("```", begin);
    blocks.push_back(doc.substr(begin, end - begin));
    at = end + 3;
  }
  REQUIRE(blocks.size() == 2);
  Run r = decide(blocks[0], "doc-example");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == blocks[1]);
}

}  // namespace SCHEDSIM_UNITY_ID
