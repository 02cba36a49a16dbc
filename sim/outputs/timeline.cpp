// timeline.json of sim::Simulator: the run as a Chrome trace-event file that Perfetto
// (ui.perfetto.dev) and chrome://tracing open. Format and size: docs/outputs.md "timeline.json".
// Deterministic: built from the attempts, node changes and snapshots in their recorded order;
// strings are escaped by nlohmann/json.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/io/version.hpp"

namespace sim {

namespace {

using ojson = nlohmann::ordered_json;

/// ms of simulated time -> trace microseconds.
std::int64_t us(Time ms) { return ms * 1000; }

/// A number of GPUs from milli-GPU: an integer when whole.
ojson gpus_json(std::int64_t milli) {
  if (milli % 1000 == 0) return milli / 1000;
  return double(milli) / 1000.0;
}

ojson metadata(const char* name, int pid, int tid, ojson args) {
  ojson e;
  e["name"] = name;
  e["ph"] = "M";
  e["pid"] = pid;
  e["tid"] = tid;
  e["args"] = std::move(args);
  return e;
}

}  // namespace

std::string Simulator::timeline_json() const {
  const libsched::Cluster& cl = sched_->cluster();
  // Process ids: 1 = the cluster's counters, 2.. = the pools in scenario order. Thread ids: one
  // track per (node, lane), numbered from 1 in scenario order of the nodes, then lane order (0 =
  // the counter track of process 1).
  constexpr int k_cluster_pid = 1;
  auto pool_pid = [](std::size_t pool) { return int(pool) + 2; };
  std::map<std::string, std::size_t> node_index;
  for (std::size_t n = 0; n < cl.nodes().size(); ++n) node_index.emplace(cl.nodes()[n].name, n);

  // The slices first (attempt replicas, then node-down periods, in their recorded order), each on
  // its node; the lanes are assigned below.
  struct TimelineSlice {
    std::size_t node;
    Time from, to;
    std::string name;
    const char* cat;
    ojson args;
  };
  std::vector<TimelineSlice> slices;
  auto add_slice = [&](const std::string& node, Time from, Time to, std::string name, const char* cat, ojson args) {
    auto it = node_index.find(node);
    if (it == node_index.end()) return;
    slices.push_back({it->second, from, to, std::move(name), cat, std::move(args)});
  };

  // One complete event per started attempt replica, on the replica's node.
  for (const AttemptRecord* a : attempts()) {
    if (a->start < 0) continue;
    const Time end = std::max(a->start, a->end >= 0 ? a->end : makespan_);
    const std::string& task = task_name(std::size_t(a->task));
    for (std::size_t r = 0; r < a->nodes.size(); ++r) {
      ojson args = {{"task", task},
                    {"attempt", a->attempt},
                    {"replica", r},
                    {"spec", a->spec},
                    {"gpus", gpus_json(r < a->replica_gpu_milli.size() ? a->replica_gpu_milli[r] : 0)},
                    {"capacity", a->capacity},
                    {"state", std::string(to_string(a->state))},
                    {"end_reason", std::string(to_string(a->end_reason))},
                    {"node", node_name(a->nodes[r])}};
      add_slice(node_name(a->nodes[r]), a->start, end, task, "attempt", std::move(args));
    }
  }

  // Node down periods: a slice from node_down to node_up (or the end of the run).
  std::map<std::string, Time> down_since;
  auto down_slice = [&](const std::string& node, Time from, Time to, const std::string& source) {
    add_slice(node, from, std::max(from, to), "node down", "node", {{"node", node}, {"source", source}});
  };
  std::map<std::string, std::string> down_source;
  for (const NodeChange& c : node_changes()) {
    if (c.kind != NodeChange::state) continue;  // precheck cordons: the node stays up
    if (!c.up) {
      down_since.emplace(c.node, c.time);
      down_source.emplace(c.node, c.stochastic ? "stochastic" : "injected");
    } else if (auto it = down_since.find(c.node); it != down_since.end()) {
      down_slice(c.node, it->second, c.time, down_source[c.node]);
      down_since.erase(it);
      down_source.erase(c.node);
    }
  }
  for (const auto& [node, since] : down_since) down_slice(node, since, std::max(since, makespan_), down_source[node]);

  // Lanes: per node, the slices in (start, recorded order) each take the lowest lane free at their
  // start (a lane is free from the end of its last slice on), so slices on a track never overlap.
  std::vector<std::size_t> order(slices.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (slices[x].node != slices[y].node) return slices[x].node < slices[y].node;
    return slices[x].from < slices[y].from;
  });
  std::vector<std::size_t> lane_of(slices.size(), 0);
  std::vector<std::size_t> lanes(cl.nodes().size(), 1);  // tracks per node; an idle node keeps lane 0
  std::vector<Time> lane_end;                             // of the current node
  for (std::size_t k = 0; k < order.size(); ++k) {
    const TimelineSlice& s = slices[order[k]];
    if (k == 0 || slices[order[k - 1]].node != s.node) lane_end.clear();
    std::size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > s.from) ++lane;
    if (lane == lane_end.size()) lane_end.push_back(s.to);
    else lane_end[lane] = s.to;
    lane_of[order[k]] = lane;
    lanes[s.node] = std::max(lanes[s.node], lane_end.size());
  }
  std::vector<int> first_tid(cl.nodes().size(), 1);  // tid of (node, lane 0)
  for (std::size_t n = 1; n < cl.nodes().size(); ++n) first_tid[n] = first_tid[n - 1] + int(lanes[n - 1]);

  ojson events = ojson::array();
  events.push_back(metadata("process_name", k_cluster_pid, 0, {{"name", "cluster " + sc_.cluster.name}}));
  events.push_back(metadata("process_sort_index", k_cluster_pid, 0, {{"sort_index", 0}}));
  events.push_back(metadata("thread_name", k_cluster_pid, 0, {{"name", "counters"}}));
  for (std::size_t p = 0; p < cl.pools().size(); ++p) {
    events.push_back(metadata("process_name", pool_pid(p), 0, {{"name", "pool " + cl.pools()[p].name}}));
    events.push_back(metadata("process_sort_index", pool_pid(p), 0, {{"sort_index", int(p) + 1}}));
  }
  for (std::size_t n = 0; n < cl.nodes().size(); ++n) {
    const auto& node = cl.nodes()[n];
    const int pid = pool_pid(std::size_t(node.pool.index()));
    for (std::size_t lane = 0; lane < lanes[n]; ++lane) {
      const int tid = first_tid[n] + int(lane);
      events.push_back(metadata("thread_name", pid, tid, {{"name", node.name + " lane " + std::to_string(lane)}}));
      events.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", tid - 1}}));
    }
  }
  for (std::size_t i = 0; i < slices.size(); ++i) {
    TimelineSlice& s = slices[i];
    ojson e;
    e["name"] = std::move(s.name);
    e["cat"] = s.cat;
    e["ph"] = "X";
    e["pid"] = pool_pid(std::size_t(cl.nodes()[s.node].pool.index()));
    e["tid"] = first_tid[s.node] + int(lane_of[i]);
    e["ts"] = us(s.from);
    e["dur"] = us(s.to - s.from);
    e["args"] = std::move(s.args);
    events.push_back(std::move(e));
  }

  // Counters at every change instant (the values after scheduling at that instant).
  for (const Snapshot& s : snapshots()) {
    ojson q;
    q["name"] = "queue length";
    q["ph"] = "C";
    q["pid"] = k_cluster_pid;
    q["tid"] = 0;
    q["ts"] = us(s.time);
    q["args"] = {{"waiting tasks", s.queue}, {"running tasks", s.running}};
    events.push_back(std::move(q));
    ojson g;
    g["name"] = "GPUs allocated";
    g["ph"] = "C";
    g["pid"] = k_cluster_pid;
    g["tid"] = 0;
    g["ts"] = us(s.time);
    ojson args;
    for (int c = 0; c < 4; ++c) args[std::string(libsched::to_string(libsched::ResourceType(c)))] = gpus_json(s.gpu_by_class[c]);
    g["args"] = std::move(args);
    events.push_back(std::move(g));
  }

  // One event per line (readable, diff-friendly); the whole is one JSON object.
  ojson other = {{"generator", std::string("schedsim ") + version()},
                    {"scenario", sc_.name},
                    {"seed", seed_},
                    {"makespan_s", double(makespan_) / 1000.0},
                    {"time_unit", "ts and dur are microseconds of simulated time"}};
  std::string out = "{\"traceEvents\": [\n";
  for (std::size_t i = 0; i < events.size(); ++i) out += events[i].dump() + (i + 1 < events.size() ? ",\n" : "\n");
  out += "],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": " + other.dump() + "\n}\n";
  return out;
}

}  // namespace sim
