// Builders for small hand-made scenarios (tests/sim).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "sim/io/scenario.hpp"
#include "sim/engine/simulator.hpp"

namespace simtest {

/// One shared pool "p" of `nodes` nodes named a100-0.. with 8 A100 GPUs each; specs a100.8x
/// (8 GPU) and a100.1x (1 GPU).
inline sim::io::Scenario cluster(int nodes) {
  sim::io::Scenario sc;
  sc.name = "golden";
  sc.seed = 7;
  sc.cluster.name = "c1";
  sc.cluster.region = "r1";
  sc.cluster.instance_specs.push_back({"a100.8x", "A100", 8, 1000, 96, 960});
  sc.cluster.instance_specs.push_back({"a100.1x", "A100", 1, 1000, 12, 120});
  sim::io::PoolCfg p;
  p.name = "p";
  sim::io::NodeGroupCfg g;
  g.prefix = "a100-";
  g.count = nodes;
  g.gpu_model = "A100";
  g.gpus = 8;
  g.vcpu = 96;
  g.memory_gib = 960;
  p.node_groups.push_back(g);
  sc.cluster.pools.push_back(p);
  return sc;
}

/// A pay-as-you-go PyTorchJob of 1 + `workers` replicas of `spec`.
inline sim::io::TaskCfg task(const std::string& name, double submit_s, double duration_s, int workers = 0,
                             const std::string& spec = "a100.8x") {
  sim::io::TaskCfg t;
  t.name = name;
  t.user = "alice";
  t.submit_s = submit_s;
  t.duration_s = duration_s;
  t.workers = workers;
  t.specs = {spec};
  t.resource_type = "pay_as_you_go";
  t.pool = "p";
  return t;
}

inline sim::io::EventCfg fault(double at_s, const std::string& task, const std::string& error) {
  sim::io::EventCfg e;
  e.at_s = at_s;
  e.kind = "task_fault";
  e.task = task;
  e.error = error;
  return e;
}

inline sim::io::EventCfg node_event(double at_s, const std::string& kind, const std::string& node) {
  sim::io::EventCfg e;
  e.at_s = at_s;
  e.kind = kind;
  e.node = node;
  return e;
}

/// tasks.csv rows (without the header) cut to the contract's 9 columns.
inline std::vector<std::string> rows(const sim::Simulator& s) {
  std::istringstream in(s.tasks_csv());
  std::string line;
  std::getline(in, line);
  std::vector<std::string> out;
  while (std::getline(in, line)) {
    // cut after the 9th field (fields may be quoted)
    int field = 0;
    bool quoted = false;
    std::size_t i = 0;
    for (; i < line.size(); ++i) {
      if (line[i] == '"') quoted = !quoted;
      if (line[i] == ',' && !quoted && ++field == 9) break;
    }
    out.push_back(line.substr(0, i));
  }
  return out;
}

inline std::vector<std::string> run_rows(const sim::io::Scenario& sc) {
  sim::Simulator s(sc);
  s.run();
  return rows(s);
}

}  // namespace simtest
