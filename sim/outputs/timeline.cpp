// timeline.json of sim::Simulator: the run as a Chrome trace-event file that Perfetto
// (ui.perfetto.dev) and chrome://tracing open. Format and size: docs/outputs.md "timeline.json".
// Deterministic: built from the attempts, node changes and snapshots in their recorded order.
// Streamed: the slices are kept as light records (attempt, replica, node, times, lane), and each
// event is appended as one line, formatted as nlohmann::json::dump() prints the event's object
// (same keys in the same order, numbers and string escapes; sim/outputs/json_text.hpp).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/io/version.hpp"
#include "sim/outputs/json_text.hpp"

namespace sim {

namespace {

using detail::append_int;
using detail::append_json_string;
using detail::append_seconds_json;

/// One slice of timeline.json: an attempt replica (`attempt` set, `replica` its index) or a
/// node-down period (`attempt` null, `replica` 1 when stochastic, 0 when injected). 40 bytes.
struct TimelineSlice {
  const AttemptRecord* attempt;
  std::uint32_t node;     // cluster node index
  std::uint32_t replica;
  Time from, to;          // ms
  std::uint32_t lane = 0;
};

/// Appends `"KEY":` (KEY needs no escape).
void tl_key(std::string& o, std::string_view key) {
  o += '"';
  o += key;
  o += "\":";
}

/// Appends a metadata event ({"name":..,"ph":"M","pid":..,"tid":..,"args":{"KEY":..}}) without
/// its args value and closing braces.
void tl_metadata_head(std::string& o, std::string_view name, int pid, int tid, std::string_view arg_key) {
  o += "{\"name\":\"";
  o += name;
  o += "\",\"ph\":\"M\",\"pid\":";
  append_int(o, pid);
  o += ",\"tid\":";
  append_int(o, tid);
  o += ",\"args\":{";
  tl_key(o, arg_key);
}

}  // namespace

std::string Simulator::timeline_json() const {
  std::string out;
  timeline_json_to(out, [] {});
  return out;
}

void Simulator::timeline_json_to(std::string& o, const std::function<void()>& flush) const {
  if (!opt_.keep_snapshots) throw std::logic_error("Simulator::timeline_json: needs a run that keeps its time series");
  const libsched::Cluster& cl = sched_->cluster();
  // Process ids: 1 = the cluster's counters, 2.. = the pools in scenario order. Thread ids: one
  // track per (node, lane), numbered from 1 in scenario order of the nodes, then lane order (0 =
  // the counter track of process 1).
  constexpr int k_cluster_pid = 1;
  auto pool_pid = [](std::size_t pool) { return int(pool) + 2; };
  std::map<std::string_view, std::size_t> node_index;
  for (std::size_t n = 0; n < cl.nodes().size(); ++n) node_index.emplace(cl.nodes()[n].name, n);

  // The slices first (attempt replicas, then node-down periods, in their recorded order), each on
  // its node; the lanes are assigned below.
  std::vector<TimelineSlice> slices;
  auto add_slice = [&](std::string_view node, Time from, Time to, const AttemptRecord* a, std::size_t replica) {
    auto it = node_index.find(node);
    if (it == node_index.end()) return;
    slices.push_back({a, std::uint32_t(it->second), std::uint32_t(replica), from, to});
  };

  // Reserved to the attempt replicas plus the node_down changes (each opens at most one period):
  // grown by doubling, its capacity could reach twice the records, and each growth holds both
  // copies (HPC2N: 1.3 M slices, about 51 MB reserved, against a 126 MB peak grown).
  const std::vector<const AttemptRecord*> atts = attempts();
  std::size_t most = 0;
  for (const AttemptRecord* a : atts)
    if (a->start >= 0) most += a->nodes.size();
  for (const NodeChange& c : node_changes()) most += c.kind == NodeChange::state && !c.up;
  slices.reserve(most);

  // One complete event per started attempt replica, on the replica's node.
  for (const AttemptRecord* a : atts) {
    if (a->start < 0) continue;
    const Time end = std::max(a->start, a->end >= 0 ? a->end : makespan_);
    for (std::size_t r = 0; r < a->nodes.size(); ++r) add_slice(node_name(a->nodes[r]), a->start, end, a, r);
  }

  // Node down periods: a slice from node_down to node_up (or the end of the run).
  std::map<std::string, Time> down_since;
  std::map<std::string, bool> down_stochastic;
  auto down_slice = [&](const std::string& node, Time from, Time to, bool stochastic) {
    add_slice(node, from, std::max(from, to), nullptr, stochastic ? 1 : 0);
  };
  for (const NodeChange& c : node_changes()) {
    if (c.kind != NodeChange::state) continue;  // precheck cordons: the node stays up
    if (!c.up) {
      down_since.emplace(c.node, c.time);
      down_stochastic.emplace(c.node, c.stochastic);
    } else if (auto it = down_since.find(c.node); it != down_since.end()) {
      down_slice(c.node, it->second, c.time, down_stochastic[c.node]);
      down_since.erase(it);
      down_stochastic.erase(c.node);
    }
  }
  for (const auto& [node, since] : down_since) down_slice(node, since, std::max(since, makespan_), down_stochastic[node]);

  // Lanes: per node, the slices in (start, recorded order) each take the lowest lane free at their
  // start (a lane is free from the end of its last slice on), so slices on a track never overlap.
  {
    std::vector<std::uint32_t> order(slices.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = std::uint32_t(i);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
      if (slices[x].node != slices[y].node) return slices[x].node < slices[y].node;
      return slices[x].from < slices[y].from;
    });
    std::vector<Time> lane_end;  // of the current node
    for (std::size_t k = 0; k < order.size(); ++k) {
      TimelineSlice& s = slices[order[k]];
      if (k == 0 || slices[order[k - 1]].node != s.node) lane_end.clear();
      std::size_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] > s.from) ++lane;
      if (lane == lane_end.size()) lane_end.push_back(s.to);
      else lane_end[lane] = s.to;
      s.lane = std::uint32_t(lane);
    }
  }
  std::vector<std::size_t> lanes(cl.nodes().size(), 1);  // tracks per node; an idle node keeps lane 0
  for (const TimelineSlice& s : slices) lanes[s.node] = std::max<std::size_t>(lanes[s.node], s.lane + 1);
  std::vector<int> first_tid(cl.nodes().size(), 1);  // tid of (node, lane 0)
  for (std::size_t n = 1; n < cl.nodes().size(); ++n) first_tid[n] = first_tid[n - 1] + int(lanes[n - 1]);

  // One event per line (readable, diff-friendly); the whole is one JSON object. The events are
  // separated by ",\n" (each event but the first starts with it: the lines already handed to
  // `flush` stay as they are), the last one ends in "\n".
  o += "{\"traceEvents\": [\n";
  bool first_event = true;
  auto next_event = [&] {
    if (!first_event) o += ",\n";
    first_event = false;
  };
  auto metadata_name = [&](std::string_view event, int pid, int tid, std::string_view name) {
    next_event();
    tl_metadata_head(o, event, pid, tid, "name");
    append_json_string(o, name);
    o += "}}";
  };
  auto metadata_sort = [&](std::string_view event, int pid, int tid, int index) {
    next_event();
    tl_metadata_head(o, event, pid, tid, "sort_index");
    append_int(o, index);
    o += "}}";
  };
  metadata_name("process_name", k_cluster_pid, 0, "cluster " + sc_.cluster.name);
  metadata_sort("process_sort_index", k_cluster_pid, 0, 0);
  metadata_name("thread_name", k_cluster_pid, 0, "counters");
  for (std::size_t p = 0; p < cl.pools().size(); ++p) {
    metadata_name("process_name", pool_pid(p), 0, "pool " + cl.pools()[p].name);
    metadata_sort("process_sort_index", pool_pid(p), 0, int(p) + 1);
  }
  for (std::size_t n = 0; n < cl.nodes().size(); ++n) {
    const auto& node = cl.nodes()[n];
    const int pid = pool_pid(std::size_t(node.pool.index()));
    for (std::size_t lane = 0; lane < lanes[n]; ++lane) {
      const int tid = first_tid[n] + int(lane);
      metadata_name("thread_name", pid, tid, node.name + " lane " + std::to_string(lane));
      metadata_sort("thread_sort_index", pid, tid, tid - 1);
    }
    flush();
  }
  // The slices: {"name","cat","ph":"X","pid","tid","ts","dur","args"}; an attempt's args
  // {"task","attempt","replica","spec","gpus","capacity","state","end_reason","node"}, a node
  // down's {"node","source"}. The node's name escaped once per node.
  std::vector<std::string> node_json(cl.nodes().size());
  auto node_json_of = [&](std::uint32_t n) -> const std::string& {
    if (node_json[n].empty()) append_json_string(node_json[n], cl.nodes()[n].name);
    return node_json[n];
  };
  std::string task_json;
  for (const TimelineSlice& s : slices) {
    const AttemptRecord* a = s.attempt;
    next_event();
    o += "{\"name\":";
    if (a) {
      task_json.clear();
      append_json_string(task_json, task_name(std::size_t(a->task)));
      o += task_json;
      o += ",\"cat\":\"attempt\"";
    } else {
      o += "\"node down\",\"cat\":\"node\"";
    }
    o += ",\"ph\":\"X\",\"pid\":";
    append_int(o, pool_pid(std::size_t(cl.nodes()[s.node].pool.index())));
    o += ",\"tid\":";
    append_int(o, first_tid[s.node] + int(s.lane));
    o += ",\"ts\":";
    append_int(o, s.from * 1000);  // ms -> trace microseconds
    o += ",\"dur\":";
    append_int(o, (s.to - s.from) * 1000);
    o += ",\"args\":{";
    if (a) {
      o += "\"task\":";
      o += task_json;
      o += ",\"attempt\":";
      append_int(o, a->attempt);
      o += ",\"replica\":";
      append_int(o, std::int64_t(s.replica));
      o += ",\"spec\":";
      append_json_string(o, a->spec);
      o += ",\"gpus\":";  // of this replica: an integer when whole
      append_seconds_json(o, s.replica < a->replica_gpu_milli.size() ? a->replica_gpu_milli[s.replica] : 0);
      o += ",\"capacity\":";
      append_json_string(o, a->capacity);
      o += ",\"state\":";
      append_json_string(o, to_string(a->state));
      o += ",\"end_reason\":";
      append_json_string(o, to_string(a->end_reason));
      o += ",\"node\":";
      o += node_json_of(s.node);
    } else {
      o += "\"node\":";
      o += node_json_of(s.node);
      o += s.replica ? ",\"source\":\"stochastic\"" : ",\"source\":\"injected\"";
    }
    o += "}}";
    flush();
  }
  std::vector<TimelineSlice>().swap(slices);

  // Counters at every change instant (the values after scheduling at that instant).
  std::string class_keys[4];
  for (int c = 0; c < 4; ++c) append_json_string(class_keys[c], libsched::to_string(libsched::ResourceType(c)));
  for (const Snapshot& s : snapshots()) {
    next_event();
    o += "{\"name\":\"queue length\",\"ph\":\"C\",\"pid\":";
    append_int(o, k_cluster_pid);
    o += ",\"tid\":0,\"ts\":";
    append_int(o, s.time * 1000);
    o += ",\"args\":{\"waiting tasks\":";
    append_int(o, std::int64_t(s.queue));
    o += ",\"running tasks\":";
    append_int(o, std::int64_t(s.running));
    o += "}},\n{\"name\":\"GPUs allocated\",\"ph\":\"C\",\"pid\":";
    append_int(o, k_cluster_pid);
    o += ",\"tid\":0,\"ts\":";
    append_int(o, s.time * 1000);
    o += ",\"args\":{";
    for (int c = 0; c < 4; ++c) {
      if (c > 0) o += ',';
      o += class_keys[c];
      o += ':';
      append_seconds_json(o, s.gpu_by_class[c]);
    }
    o += "}}";
    flush();
  }

  nlohmann::ordered_json other = {{"generator", std::string("schedsim ") + version()},
                                  {"scenario", sc_.name},
                                  {"seed", seed_},
                                  {"makespan_s", double(makespan_) / 1000.0},
                                  {"time_unit", "ts and dur are microseconds of simulated time"}};
  o += "\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": " + other.dump() + "\n}\n";
  flush();
}

}  // namespace sim
