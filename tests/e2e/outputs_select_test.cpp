// `schedsim run --outputs LIST` and timeline.json seen from the CLI (docs/outputs.md "Choosing
// the outputs", "timeline.json").
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

using testutil::slurp;

using Result = testutil::CommandResult;

/// Runs `schedsim ARGS`, capturing stdout and stderr.
Result schedsim(const std::string& args) { return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "outputs"); }

fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("outputs-" + name);
  fs::create_directories(d);
  return d;
}

std::map<std::string, std::string> files(const fs::path& d) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::directory_iterator(d)) m[e.path().filename().string()] = slurp(e.path());
  return m;
}

/// Two pools: `a` with nodes a-0, a-1 (8 GPUs each), `b` with node b-0. `gang` needs both nodes
/// of `a` (two 8-GPU replicas), `solo` runs on b-0, `later` waits for `gang` to end, and
/// b-0 goes down at 500 s (ending `solo`) and comes back at 900 s.
const char* k_two_pools = R"({"schema": "schedsim/v1", "name": "two-pools", "seed": 3,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "g8", "gpu_model": "A100", "gpus": 8, "vcpu": 32, "memory_gib": 256},
                       {"name": "g2", "gpu_model": "A100", "gpus": 2, "vcpu": 8, "memory_gib": 64}],
    "pools": [{"name": "a", "kind": "shared", "node_groups": [{"prefix": "a-", "count": 2, "gpu_model": "A100",
               "gpus": 8, "vcpu": 96, "memory_gib": 960}]},
              {"name": "b", "kind": "shared", "node_groups": [{"prefix": "b-", "count": 1, "gpu_model": "A100",
               "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
  "tasks": [
    {"name": "gang", "user": "u", "tenant": "team-a", "submit_s": 0, "type": "PyTorchJob", "workers": 1, "specs": ["g8"],
     "resource_type": "pay_as_you_go", "pool": "a", "duration_s": 1000},
    {"name": "solo", "user": "v", "tenant": "team-b", "submit_s": 10, "type": "PyTorchJob", "workers": 0, "specs": ["g2"],
     "resource_type": "pay_as_you_go", "pool": "b", "duration_s": 2000},
    {"name": "later", "user": "u", "tenant": "team-a", "submit_s": 20, "type": "PyTorchJob", "workers": 0, "specs": ["g8"],
     "resource_type": "pay_as_you_go", "pool": "a", "duration_s": 300}],
  "events": [{"kind": "node_down", "at_s": 500, "node": "b-0"}, {"kind": "node_up", "at_s": 900, "node": "b-0"}]})";

const std::vector<std::string> k_default_files = {"events.jsonl", "groups.csv",     "metrics.prom",          "scenario.resolved.json",
                                                  "summary.json", "tasks.csv",      "timeseries.csv"};

std::vector<std::string> names(const fs::path& d) {
  std::vector<std::string> v;
  for (const auto& [k, _] : files(d)) v.push_back(k);
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      v.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  v.push_back(cur);
  return v;
}

}  // namespace

TEST_CASE("run --outputs writes exactly the files named, and the default is today's seven files") {
  fs::path w = work_dir("select");
  std::ofstream(w / "s.json") << k_two_pools;
  const std::string s = (w / "s.json").string();
  REQUIRE(schedsim("run " + s + " --no-progress --out " + (w / "def").string()).status == 0);
  CHECK(names(w / "def") == k_default_files);
  REQUIRE(schedsim("run " + s + " --no-progress --outputs tasks,summary --out " + (w / "two").string()).status == 0);
  CHECK(names(w / "two") == std::vector<std::string>{"summary.json", "tasks.csv"});
  REQUIRE(schedsim("run " + s + " --no-progress --outputs ' timeline , resolved,timeline' --out " + (w / "tl").string()).status == 0);
  CHECK(names(w / "tl") == std::vector<std::string>{"scenario.resolved.json", "timeline.json"});
  REQUIRE(schedsim("run " + s + " --no-progress --outputs all --out " + (w / "all").string()).status == 0);
  auto all = names(w / "all");
  auto expected = k_default_files;
  expected.push_back("timeline.json");
  std::sort(expected.begin(), expected.end());
  CHECK(all == expected);
  fs::remove_all(w);
}

TEST_CASE("run --outputs leaves the selected files byte-identical to a default run") {
  fs::path w = work_dir("bytes");
  std::ofstream(w / "s.json") << k_two_pools;
  const std::string s = (w / "s.json").string();
  REQUIRE(schedsim("run " + s + " --no-progress --out " + (w / "def").string()).status == 0);
  REQUIRE(schedsim("run " + s + " --no-progress --outputs tasks,summary,groups,events,timeseries,metrics,resolved --out " +
                   (w / "named").string())
              .status == 0);
  REQUIRE(schedsim("run " + s + " --no-progress --outputs all --out " + (w / "all").string()).status == 0);
  REQUIRE(schedsim("run " + s + " --no-progress --outputs events --out " + (w / "one").string()).status == 0);
  const auto def = files(w / "def");
  CHECK(files(w / "named") == def);
  auto all = files(w / "all");
  REQUIRE(all.count("timeline.json") == 1);
  all.erase("timeline.json");
  CHECK(all == def);
  CHECK(files(w / "one").at("events.jsonl") == def.at("events.jsonl"));
  fs::remove_all(w);
}

TEST_CASE("run --outputs with an unknown or empty name exits 2 naming the option, the value and the accepted names") {
  fs::path w = work_dir("bad");
  std::ofstream(w / "s.json") << k_two_pools;
  for (const std::string list : {"tasks,timelines", "", " , "}) {
    INFO(list);
    const auto r = schedsim("run " + (w / "s.json").string() + " --no-progress --outputs '" + list + "' --out " + (w / "o").string());
    CHECK(r.status == 2);
    CHECK(r.err.find("--outputs") != std::string::npos);
    CHECK(r.err.find("tasks, summary, groups, events, timeseries, metrics, resolved, timeline, all") != std::string::npos);
    if (!list.empty() && list != " , ") CHECK(r.err.find("timelines") != std::string::npos);
    CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
    CHECK_FALSE(fs::exists(w / "o"));
  }
  fs::remove_all(w);
}

TEST_CASE("timeline.json is Chrome trace-event JSON: every event well-formed, metadata for every process and thread used") {
  fs::path w = work_dir("schema");
  std::ofstream(w / "s.json") << k_two_pools;
  REQUIRE(schedsim("run " + (w / "s.json").string() + " --no-progress --outputs timeline --out " + (w / "o").string()).status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "timeline.json"));
  REQUIRE(j.is_object());
  REQUIRE(j.at("traceEvents").is_array());
  CHECK(j.at("displayTimeUnit") == "ms");
  CHECK(j.at("otherData").is_object());
  std::set<int> named_pids;
  std::set<std::pair<int, int>> named_threads, used_threads;
  std::set<int> used_pids;
  int x = 0, c = 0;
  for (const auto& e : j["traceEvents"]) {
    INFO(e.dump());
    REQUIRE(e.is_object());
    REQUIRE(e.contains("name"));
    CHECK(e["name"].is_string());
    REQUIRE(e.contains("ph"));
    const std::string ph = e["ph"];
    CHECK((ph == "X" || ph == "M" || ph == "C"));
    REQUIRE(e.contains("pid"));
    REQUIRE(e.contains("tid"));
    REQUIRE(e["pid"].is_number_integer());
    REQUIRE(e["tid"].is_number_integer());
    const int pid = e["pid"], tid = e["tid"];
    if (ph == "M") {
      REQUIRE(e["args"].is_object());
      if (e["name"] == "process_name") named_pids.insert(pid);
      if (e["name"] == "thread_name") named_threads.insert({pid, tid});
      if (e["name"] == "process_name" || e["name"] == "thread_name") CHECK(e["args"]["name"].is_string());
      if (e["name"] == "process_sort_index" || e["name"] == "thread_sort_index") CHECK(e["args"]["sort_index"].is_number_integer());
      continue;
    }
    REQUIRE(e.contains("ts"));
    REQUIRE(e["ts"].is_number());
    CHECK(e["ts"].get<double>() >= 0);
    used_pids.insert(pid);
    used_threads.insert({pid, tid});
    if (ph == "X") {
      ++x;
      REQUIRE(e.contains("dur"));
      REQUIRE(e["dur"].is_number());
      CHECK(e["dur"].get<double>() >= 0);
    } else {
      ++c;
      REQUIRE(e.contains("args"));
      REQUIRE(e["args"].is_object());
      CHECK_FALSE(e["args"].empty());
      for (const auto& [k, v] : e["args"].items()) CHECK(v.is_number());
    }
  }
  CHECK(x >= 5);  // gang (2 replicas), solo, later, b-0 down
  CHECK(c >= 2);
  for (int pid : used_pids) CHECK(named_pids.count(pid) == 1);
  for (const auto& t : used_threads) CHECK(named_threads.count(t) == 1);
  fs::remove_all(w);
}

TEST_CASE("timeline.json: one slice per attempt replica on one of its node's tracks, ts/dur = tasks.csv start/end x 1e6, nodes in scenario order") {
  fs::path w = work_dir("content");
  std::ofstream(w / "s.json") << k_two_pools;
  REQUIRE(schedsim("run " + (w / "s.json").string() + " --no-progress --outputs tasks,timeline --out " + (w / "o").string()).status == 0);
  const auto j = nlohmann::json::parse(slurp(w / "o" / "timeline.json"));
  // Tracks: (pid, tid) -> node name, pid -> pool name, sort indexes.
  std::map<std::pair<int, int>, std::string> thread;
  std::map<int, std::string> process;
  std::map<std::string, int> thread_sort;
  std::map<std::string, std::pair<int, int>> track_of;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      thread[{e["pid"], e["tid"]}] = e["args"]["name"];
      track_of[e["args"]["name"]] = {e["pid"], e["tid"]};
    } else if (e["ph"] == "M" && e["name"] == "process_name") {
      process[e["pid"]] = e["args"]["name"];
    }
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_sort_index") thread_sort[thread.at({e["pid"], e["tid"]})] = e["args"]["sort_index"];
  REQUIRE(track_of.count("a-0 lane 0") == 1);
  REQUIRE(track_of.count("a-1 lane 0") == 1);
  REQUIRE(track_of.count("b-0 lane 0") == 1);
  CHECK(process.at(track_of["a-0 lane 0"].first) == "pool a");
  CHECK(track_of["a-0 lane 0"].first == track_of["a-1 lane 0"].first);
  CHECK(process.at(track_of["b-0 lane 0"].first) == "pool b");
  CHECK(thread_sort.at("a-0 lane 0") < thread_sort.at("a-1 lane 0"));
  CHECK(thread_sort.at("a-1 lane 0") < thread_sort.at("b-0 lane 0"));

  // Every started attempt of tasks.csv: one slice per node (replica), matching start/end.
  const auto rows = split(slurp(w / "o" / "tasks.csv"), '\n');
  const auto head = split(rows[0], ',');
  auto col = [&](const std::string& name) { return std::size_t(std::find(head.begin(), head.end(), name) - head.begin()); };
  std::size_t slices = 0, started = 0;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].empty()) continue;
    const auto f = split(rows[r], ',');
    if (f[col("start_s")].empty()) continue;
    const double start = std::stod(f[col("start_s")]), end = std::stod(f[col("end_s")]);
    const auto nodes = split(f[col("nodes")], ';');
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      ++started;
      INFO(rows[r] << " replica " << k);
      int found = 0;
      for (const auto& e : j["traceEvents"]) {
        if (e["ph"] != "X" || e["name"] != f[col("task")] || e["args"]["attempt"] != std::stoi(f[col("attempt")]) ||
            e["args"]["replica"] != k)
          continue;
        ++found;
        CHECK(thread.at({e["pid"], e["tid"]}).rfind(nodes[k] + " lane ", 0) == 0);
        CHECK(e["args"]["node"] == nodes[k]);
        CHECK(e["ts"].get<double>() == start * 1e6);
        CHECK(e["dur"].get<double>() == (end - start) * 1e6);
        CHECK(e["args"]["end_reason"] == f[col("end_reason")]);
        CHECK(e["args"]["spec"] == f[col("spec")]);
        CHECK(e["args"]["gpus"].get<double>() > 0);
      }
      CHECK(found == 1);
    }
  }
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "attempt") ++slices;
  CHECK(started == 4);  // gang x2, solo (ended by the node failure), later
  CHECK(slices == started);
  // b-0 was down from 500 s to 900 s.
  int down = 0;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "node down") {
      ++down;
      CHECK(std::make_pair(e["pid"].get<int>(), e["tid"].get<int>()) == track_of.at("b-0 lane 0"));
      CHECK(e["ts"].get<double>() == 500e6);
      CHECK(e["dur"].get<double>() == 400e6);
    }
  CHECK(down == 1);
  fs::remove_all(w);
}

TEST_CASE("timeline.json is deterministic") {
  fs::path w = work_dir("determinism");
  std::ofstream(w / "s.json") << k_two_pools;
  REQUIRE(schedsim("run " + (w / "s.json").string() + " --no-progress --outputs timeline --out " + (w / "a").string()).status == 0);
  REQUIRE(schedsim("run " + (w / "s.json").string() + " --no-progress --outputs all --out " + (w / "b").string()).status == 0);
  const std::string a = slurp(w / "a" / "timeline.json");
  CHECK(a == slurp(w / "b" / "timeline.json"));
  CHECK(nlohmann::json::parse(a)["otherData"]["seed"] == 3);
  fs::remove_all(w);
}

}  // namespace SCHEDSIM_UNITY_ID
