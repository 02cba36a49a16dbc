// timeline.json tracks (docs/outputs.md "timeline.json"): every concurrently running task of a
// node gets its own track (the lowest lane free at its start), so the slices on one track never
// overlap, and a node has as many tracks as it ever ran slices at once. Its bytes (one event per
// line, as nlohmann's dump() prints each event) and the streamed file write_outputs writes.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "builders.hpp"
#include "sim/io/version.hpp"
#include "tests/common/files.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

namespace {

struct TlSlice {
  std::string name, node;
  double ts, end;
};

/// The X slices of a timeline.json per (pid, tid), and the thread names.
struct TlTracks {
  std::map<std::pair<int, int>, std::vector<TlSlice>> slices;
  std::map<std::pair<int, int>, std::string> names;
};

TlTracks tl_parse(const std::string& text) {
  TlTracks t;
  const auto j = nlohmann::json::parse(text);
  for (const auto& e : j.at("traceEvents")) {
    const std::pair<int, int> track{e.at("pid").get<int>(), e.at("tid").get<int>()};
    if (e["ph"] == "M" && e["name"] == "thread_name") t.names[track] = e["args"]["name"];
    if (e["ph"] != "X") continue;
    const double ts = e.at("ts").get<double>();
    t.slices[track].push_back({e["name"], e["args"]["node"], ts, ts + e.at("dur").get<double>()});
  }
  return t;
}

/// 3 shared nodes of 8 GPUs: 90 one-GPU tasks and 10 two-replica gangs of one GPU per replica,
/// arriving within 2 h and running 5-90 min, and a node failure: most of the run several tasks
/// share each node.
sim::io::Scenario tl_busy() {
  sim::io::Scenario sc = simtest::cluster(3);
  sc.scheduler.queueing = "greedy";
  for (int i = 0; i < 100; ++i) {
    sc.tasks.push_back(simtest::task(fmt::format("t{:03}", i), (i * 37) % 7200, 300 + (i * 131) % 5100,
                                     i % 10 == 0 ? 1 : 0, "a100.1x"));
  }
  sc.events.push_back(simtest::node_event(3000, "node_down", "a100-1"));
  sc.events.push_back(simtest::node_event(4000, "node_up", "a100-1"));
  return sc;
}

}  // namespace

TEST_CASE("timeline.json: on a busy scenario with shared nodes no two slices on one track overlap, "
          "and a node has as many tracks as slices it ran at once") {
  sim::Simulator s(tl_busy());
  s.run();
  const TlTracks t = tl_parse(s.timeline_json());
  std::map<std::string, std::size_t> tracks_of_node;
  std::size_t slices = 0;
  for (const auto& [track, list] : t.slices) {
    INFO("track " << t.names.at(track));
    auto sorted = list;
    std::sort(sorted.begin(), sorted.end(), [](const TlSlice& a, const TlSlice& b) { return a.ts < b.ts; });
    for (std::size_t i = 0; i + 1 < sorted.size(); ++i) {
      INFO(sorted[i].name << " [" << sorted[i].ts << ", " << sorted[i].end << ") and " << sorted[i + 1].name << " ["
                          << sorted[i + 1].ts << ", " << sorted[i + 1].end << ")");
      CHECK(sorted[i].end <= sorted[i + 1].ts);
    }
    for (const TlSlice& sl : list) CHECK(t.names.at(track).rfind(sl.node + " lane ", 0) == 0);  // on its node's tracks
    slices += list.size();
  }
  CHECK(slices >= 110);  // every task started: 90 + 10 x 2 replicas, plus the resubmitted ones and the down period
  for (const auto& [track, name] : t.names)
    if (track.first > 1) ++tracks_of_node[name.substr(0, name.find(" lane "))];
  REQUIRE(tracks_of_node.size() == 3);
  // Most slices at once on a node = its number of tracks (lowest free lane: no lane more than needed).
  for (const auto& [node, tracks] : tracks_of_node) {
    INFO(node);
    std::vector<std::pair<double, int>> edges;  // (time, +1 start / -1 end); ends first at a tie
    for (const auto& [track, list] : t.slices)
      for (const TlSlice& sl : list)
        if (sl.node == node) {
          edges.push_back({sl.ts, +1});
          edges.push_back({sl.end, -1});
        }
    std::sort(edges.begin(), edges.end());
    int now = 0, most = 0;
    for (const auto& [time, d] : edges) most = std::max(most, now += d);
    CHECK(most >= 4);  // busy: several tasks share the node
    CHECK(std::size_t(most) == tracks);
  }
}

TEST_CASE("timeline.json: a slice takes the lowest lane free at its start; tracks are named NODE lane K") {
  // One node: t0 runs [0, 100) s, t1 [10, 50) s, t2 [60, 200) s. t0 takes lane 0, t1 lane 1
  // (lane 0 is busy at 10 s), t2 lane 1 again (free since 50 s; lane 0 busy until 100 s).
  sim::io::Scenario sc = simtest::cluster(1);
  sc.tasks.push_back(simtest::task("t0", 0, 100, 0, "a100.1x"));
  sc.tasks.push_back(simtest::task("t1", 10, 40, 0, "a100.1x"));
  sc.tasks.push_back(simtest::task("t2", 60, 140, 0, "a100.1x"));
  sim::Simulator s(sc);
  s.run();
  const TlTracks t = tl_parse(s.timeline_json());
  CHECK(t.names.at({2, 1}) == "a100-0 lane 0");
  CHECK(t.names.at({2, 2}) == "a100-0 lane 1");
  CHECK(t.names.count({2, 3}) == 0);
  REQUIRE(t.slices.at({2, 1}).size() == 1);
  CHECK(t.slices.at({2, 1})[0].name == "t0");
  CHECK(t.slices.at({2, 1})[0].ts == 0);
  CHECK(t.slices.at({2, 1})[0].end == 100e6);
  REQUIRE(t.slices.at({2, 2}).size() == 2);
  CHECK(t.slices.at({2, 2})[0].name == "t1");
  CHECK(t.slices.at({2, 2})[0].ts == 10e6);
  CHECK(t.slices.at({2, 2})[0].end == 50e6);
  CHECK(t.slices.at({2, 2})[1].name == "t2");
  CHECK(t.slices.at({2, 2})[1].ts == 60e6);
  CHECK(t.slices.at({2, 2})[1].end == 200e6);
}

TEST_CASE("timeline.json: the exact bytes of a small run (two lanes, a GPU share, node-down periods ended and open, "
          "an escaped cluster name)") {
  // Nodes a100-0 and a100-1. job-a (half a GPU) runs [0, 10) s on a100-0 lane 0, t1 (one GPU)
  // [5, 15) s on a100-0 lane 1 (lane 0 busy until 10 s); a100-1 is down [2, 8) s and from 12 s
  // to the end of the run (15 s), both on its lane 0. Counters at 0, 2, 5, 8, 10, 12 and 15 s.
  sim::io::Scenario sc = simtest::cluster(2);
  sc.cluster.name = "c \"1\"\\";
  sc.cluster.instance_specs.push_back({"a100.half", "A100", 1, 500, 6, 60});
  sc.tasks.push_back(simtest::task("job-a", 0, 10, 0, "a100.half"));
  sc.tasks.push_back(simtest::task("t1", 5, 10, 0, "a100.1x"));
  sc.events.push_back(simtest::node_event(2, "node_down", "a100-1"));
  sc.events.push_back(simtest::node_event(8, "node_up", "a100-1"));
  sc.events.push_back(simtest::node_event(12, "node_down", "a100-1"));
  sim::Simulator s(sc);
  s.run();
  auto meta = [](const char* name, int pid, int tid, const std::string& args) {
    return fmt::format(R"({{"name":"{}","ph":"M","pid":{},"tid":{},"args":{{{}}}}},)", name, pid, tid, args) + "\n";
  };
  auto attempt = [](const char* task, int tid, int ts_s, int dur_s, const char* spec, const char* gpus) {
    return fmt::format(R"({{"name":"{0}","cat":"attempt","ph":"X","pid":2,"tid":{1},"ts":{2},"dur":{3},)"
                       R"("args":{{"task":"{0}","attempt":1,"replica":0,"spec":"{4}","gpus":{5},"capacity":"pay_as_you_go",)"
                       R"("state":"Succeeded","end_reason":"succeeded","node":"a100-0"}}}},)",
                       task, tid, ts_s * 1000000, dur_s * 1000000, spec, gpus) + "\n";
  };
  auto down = [](int ts_s, int dur_s) {
    return fmt::format(R"({{"name":"node down","cat":"node","ph":"X","pid":2,"tid":3,"ts":{},"dur":{},)"
                       R"("args":{{"node":"a100-1","source":"injected"}}}},)", ts_s * 1000000, dur_s * 1000000) + "\n";
  };
  auto counters = [](int ts_s, int running, const char* payg) {
    return fmt::format(R"({{"name":"queue length","ph":"C","pid":1,"tid":0,"ts":{0},"args":{{"waiting tasks":0,"running tasks":{1}}}}},)"
                       "\n"
                       R"({{"name":"GPUs allocated","ph":"C","pid":1,"tid":0,"ts":{0},"args":{{"reserved":0,"pay_as_you_go":{2},"spot":0,"idle":0}}}},)"
                       "\n", ts_s * 1000000, running, payg);
  };
  std::string expected = "{\"traceEvents\": [\n";
  expected += meta("process_name", 1, 0, R"("name":"cluster c \"1\"\\")");
  expected += meta("process_sort_index", 1, 0, R"("sort_index":0)");
  expected += meta("thread_name", 1, 0, R"("name":"counters")");
  expected += meta("process_name", 2, 0, R"("name":"pool p")");
  expected += meta("process_sort_index", 2, 0, R"("sort_index":1)");
  expected += meta("thread_name", 2, 1, R"("name":"a100-0 lane 0")");
  expected += meta("thread_sort_index", 2, 1, R"("sort_index":0)");
  expected += meta("thread_name", 2, 2, R"("name":"a100-0 lane 1")");
  expected += meta("thread_sort_index", 2, 2, R"("sort_index":1)");
  expected += meta("thread_name", 2, 3, R"("name":"a100-1 lane 0")");
  expected += meta("thread_sort_index", 2, 3, R"("sort_index":2)");
  expected += attempt("job-a", 1, 0, 10, "a100.half", "0.5");
  expected += attempt("t1", 2, 5, 10, "a100.1x", "1");
  expected += down(2, 6);
  expected += down(12, 3);
  expected += counters(0, 1, "0.5") + counters(2, 1, "0.5") + counters(5, 2, "1.5") + counters(8, 2, "1.5");
  expected += counters(10, 1, "1") + counters(12, 1, "1") + counters(15, 0, "0");
  expected.erase(expected.size() - 2, 1);  // the last event ends without a comma
  expected += "],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {\"generator\":\"schedsim " + std::string(sim::version()) +
              R"(","scenario":"golden","seed":7,"makespan_s":15.0,"time_unit":"ts and dur are microseconds of simulated time"})" +
              "\n}\n";
  CHECK(s.timeline_json() == expected);
}

TEST_CASE("timeline.json: the file write_outputs streams (1 MiB chunks) is timeline_json(), on a run larger than a chunk") {
  // 6000 one-GPU tasks of 1-60 s on 4 nodes, one submitted per second: 6000 slices of more than
  // 200 bytes each, so the file is more than a chunk long (flushed while it is being written).
  sim::io::Scenario sc = simtest::cluster(4);
  for (int i = 0; i < 6000; ++i) sc.tasks.push_back(simtest::task(fmt::format("t{}", i), i, 1 + (i * 7) % 60, 0, "a100.1x"));
  sim::Simulator s(sc);
  s.run();
  const std::filesystem::path d = std::filesystem::temp_directory_path() / ("schedsim-test-timeline-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  auto which = sim::OutputSelection::none();
  which.set(sim::Output::timeline);
  s.write_outputs(d.string(), which);
  const std::string file = testutil::slurp(d / "timeline.json");
  std::filesystem::remove_all(d);
  CHECK(file.size() > std::size_t(1) << 20);
  CHECK(file == s.timeline_json());
  const auto j = nlohmann::json::parse(file);  // well-formed across the chunk boundaries
  std::size_t slices = 0;
  for (const auto& e : j.at("traceEvents")) slices += e.at("ph") == "X";
  CHECK(slices == 6000);
}

}  // namespace SCHEDSIM_UNITY_ID
