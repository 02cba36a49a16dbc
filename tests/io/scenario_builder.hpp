// Test fixture: a minimal valid scenario as JSON, to be mutated one thing at a time.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/io/scenario_json.hpp"

namespace sim::io::test {

/// A valid scenario touching every section: two pools (a node group a100-0..a100-3 and an
/// explicit node solo-0), three specs, a quota, a NodeNotIn and a NodeIn policy, a reserved
/// PyTorchJob, an idle RayJob and a reserved RayJob with accept_idle + autoscaling, and events.
inline nlohmann::json valid_scenario() {
  using nlohmann::json;
  return json::parse(R"({
  "schema": "schedsim/v1",
  "name": "base",
  "seed": 7,
  "cluster": {
    "name": "c1", "region": "r1",
    "instance_specs": [
      {"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960},
      {"name": "a100.1x", "gpu_model": "A100", "gpus": 1, "vcpu": 12, "memory_gib": 120},
      {"name": "cpu.4", "vcpu": 4, "memory_gib": 16}
    ],
    "pools": [
      {"name": "shared-a100", "kind": "shared",
       "node_groups": [{"prefix": "a100-", "count": 4, "gpu_model": "A100",
                        "gpus": 8, "vcpu": 96, "memory_gib": 960, "unhealthy_prob": 0.01}]},
      {"name": "ded", "kind": "dedicated",
       "nodes": [{"name": "solo-0", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}
    ]
  },
  "quotas": [
    {"user": "alice", "resource_type": "reserved", "pool": "shared-a100",
     "gpus": 24, "vcpu": 288, "memory_gib": 2880}
  ],
  "node_policies": [
    {"name": "skip-bad", "type": "NodeNotIn", "scope": "tenant", "effect": "default",
     "workload_types": ["PyTorchJob", "RayJob"], "nodes": ["a100-3"],
     "created_s": 0, "expire_s": 7200},
    {"name": "pin", "type": "NodeIn", "scope": "user", "user": "alice", "effect": "explicit",
     "nodes": ["a100-0", "solo-0"], "created_s": 10}
  ],
  "scheduler": {"placement": "best-fit", "preemption": true, "queueing": "greedy"},
  "tasks": [
    {"name": "pretrain", "user": "alice", "submit_s": 0, "type": "PyTorchJob",
     "workers": 2, "specs": ["a100.8x", "a100.1x"], "count_per_node": 1,
     "resource_type": "reserved", "pool": "shared-a100", "priority": 7, "guarantee": true,
     "duration_s": 3600, "checkpoint_interval_s": 600, "image_pull_retries": -1,
     "runtime_estimate_s": 4000, "node_policies": ["pin"],
     "fault_tolerance": {"max_resubmissions": 2}},
    {"name": "sweep", "user": "bob", "submit_s": 60, "type": "RayJob",
     "workers": 3, "specs": ["a100.1x"], "head_spec": "cpu.4",
     "resource_type": "idle", "idle_stability": "low", "duration_s": 1200},
    {"name": "ray-res", "user": "alice", "submit_s": 5, "type": "RayJob",
     "workers": 1, "specs": ["a100.1x"], "resource_type": "reserved", "pool": "shared-a100",
     "accept_idle": true, "prefer_idle": false, "idle_stability": "high", "duration_s": 100,
     "debug": true, "debug_retention_s": 300,
     "autoscaling": {"enabled": true, "min_workers": 1, "max_workers": 4, "idle_reclaim_s": 60,
                     "scale_out": "aggressive", "demand": [{"at_s": 10, "workers": 3}]}}
  ],
  "events": [
    {"at_s": 1800, "kind": "node_down", "node": "a100-0"},
    {"at_s": 2400, "kind": "node_up", "node": "a100-0"},
    {"at_s": 100, "kind": "task_fault", "task": "pretrain", "error": "transient"},
    {"at_s": 200, "kind": "spot_reclaim", "nodes": ["a100-1", "solo-0"]}
  ]
})");
}

inline ParseResult parse_json(const nlohmann::json& j, const std::string& label = "s.json") {
  return parse_scenario_text(j.dump(2), label);
}

/// JSON paths of the error diagnostics, in order.
inline std::vector<std::string> error_paths(const ParseResult& r) {
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics)
    if (d.is_error()) out.push_back(d.path);
  return out;
}

inline std::vector<std::string> warning_paths(const ParseResult& r) {
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics)
    if (!d.is_error()) out.push_back(d.path);
  return out;
}

inline std::string all_text(const ParseResult& r) {
  std::string s;
  for (const auto& d : r.diagnostics) s += d.str() + "\n";
  return s;
}

}  // namespace sim::io::test
