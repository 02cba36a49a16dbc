// timeline.json of sim::Simulator: the run as a Chrome trace-event file that Perfetto
// (ui.perfetto.dev) and chrome://tracing open. Format and size: docs/outputs.md "timeline.json".
// Deterministic: built from the attempts, node changes and snapshots in their recorded order;
// strings are escaped by nlohmann/json.
#include <map>
#include <string>

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
  // Process ids: 1 = the cluster's counters, 2.. = the pools in scenario order. Thread ids: the
  // node's index in scenario order + 1 (0 = the counter track of process 1).
  constexpr int k_cluster_pid = 1;
  auto pool_pid = [](std::size_t pool) { return int(pool) + 2; };
  ojson events = ojson::array();
  events.push_back(metadata("process_name", k_cluster_pid, 0, {{"name", "cluster " + sc_.cluster.name}}));
  events.push_back(metadata("process_sort_index", k_cluster_pid, 0, {{"sort_index", 0}}));
  events.push_back(metadata("thread_name", k_cluster_pid, 0, {{"name", "counters"}}));
  for (std::size_t p = 0; p < cl.pools().size(); ++p) {
    events.push_back(metadata("process_name", pool_pid(p), 0, {{"name", "pool " + cl.pools()[p].name}}));
    events.push_back(metadata("process_sort_index", pool_pid(p), 0, {{"sort_index", int(p) + 1}}));
  }
  std::map<std::string, std::size_t> node_index;
  for (std::size_t n = 0; n < cl.nodes().size(); ++n) {
    const auto& node = cl.nodes()[n];
    node_index.emplace(node.name, n);
    const int pid = pool_pid(std::size_t(node.pool.index()));
    events.push_back(metadata("thread_name", pid, int(n) + 1, {{"name", node.name}}));
    events.push_back(metadata("thread_sort_index", pid, int(n) + 1, {{"sort_index", int(n)}}));
  }
  auto track = [&](const std::string& node, int& pid, int& tid) {
    auto it = node_index.find(node);
    if (it == node_index.end()) return false;
    pid = pool_pid(std::size_t(cl.nodes()[it->second].pool.index()));
    tid = int(it->second) + 1;
    return true;
  };

  // One complete event per started attempt replica, on the replica's node.
  for (const AttemptRecord* a : attempts()) {
    if (a->start < 0) continue;
    const Time end = a->end >= 0 ? a->end : std::max(a->start, makespan_);
    const std::string& task = task_name(std::size_t(a->task));
    for (std::size_t r = 0; r < a->nodes.size(); ++r) {
      int pid = 0, tid = 0;
      if (!track(a->nodes[r], pid, tid)) continue;
      ojson e;
      e["name"] = task;
      e["cat"] = "attempt";
      e["ph"] = "X";
      e["pid"] = pid;
      e["tid"] = tid;
      e["ts"] = us(a->start);
      e["dur"] = us(end - a->start);
      e["args"] = {{"task", task},
                   {"attempt", a->attempt},
                   {"replica", r},
                   {"spec", a->spec},
                   {"gpus", gpus_json(r < a->replica_gpu_milli.size() ? a->replica_gpu_milli[r] : 0)},
                   {"capacity", a->capacity},
                   {"state", std::string(to_string(a->state))},
                   {"end_reason", std::string(to_string(a->end_reason))}};
      events.push_back(std::move(e));
    }
  }

  // Node down periods: a slice from node_down to node_up (or the end of the run).
  std::map<std::string, Time> down_since;
  auto down_slice = [&](const std::string& node, Time from, Time to, const std::string& source) {
    int pid = 0, tid = 0;
    if (!track(node, pid, tid)) return;
    ojson e;
    e["name"] = "node down";
    e["cat"] = "node";
    e["ph"] = "X";
    e["pid"] = pid;
    e["tid"] = tid;
    e["ts"] = us(from);
    e["dur"] = us(std::max<Time>(0, to - from));
    e["args"] = {{"node", node}, {"source", source}};
    events.push_back(std::move(e));
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
