// `schedsim import k8s`: Kubernetes objects (nodes, PyTorchJob, TrainJob, RayJob, priority
// classes, Kueue queues and flavors, pods) to a scenario or a `decide` snapshot
// (docs/kubernetes.md gives the mapping field by field).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario.hpp"

namespace sim::io {

struct K8sImportOptions {
  /// Files (any name) or folders (every *.yaml, *.yml, *.json below, recursively, in name order).
  std::vector<std::string> paths;
  /// Node label whose value names a node's pool; "" = every node in one pool `default`.
  std::string pool_label;
  /// Duration (s) of a job whose objects give no start and completion time; > 0.
  double duration_s = 3600;
  std::string name = "k8s-import";  ///< the scenario's `name`
};

/// What one imported job looked like in the cluster when the objects were read.
struct K8sJobState {
  bool completed = false;               ///< status gives a completion (end) time
  std::optional<double> start_s;        ///< status.startTime, on the scenario's clock (s)
  std::vector<std::string> pod_nodes;   ///< nodes of its running pods, master/head first; empty = no pod read
  std::string object;                   ///< "KIND ns/name", for messages
};

/// The result of an import: the scenario (every job a task, submit times relative to the
/// earliest creation), each task's observed state (same index as scenario.tasks), the nodes
/// marked unschedulable, and one warning line per field that changes scheduling but could not be
/// mapped (`import: KIND ns/name: FIELD: not mapped: REASON`, each at most once).
struct K8sImport {
  Scenario scenario;
  std::vector<K8sJobState> jobs;
  std::vector<std::string> unschedulable_nodes;
  std::vector<std::string> warnings;
  std::vector<Diagnostic> errors;  ///< bad input (`FILE: PATH: VALUE: RULE`); the scenario is unusable when non-empty
  bool ok() const { return errors.empty(); }
};

/// Reads every object of opts.paths and maps them (docs/kubernetes.md). Never throws on bad
/// input: unreadable files, malformed YAML/JSON, bad quantities or timestamps and values outside
/// the scenario's limits are appended to `errors`, one each.
K8sImport import_k8s(const K8sImportOptions& opts);

/// The `decide` snapshot (docs/decide.md) of an import: the cluster, quotas and scheduler of the
/// scenario, the jobs not completed (running ones with `running` placed on their pods' nodes;
/// started jobs whose pods were not read are left out with a warning appended to
/// `import.warnings`), `now_s` = the latest submit or start time among them, unschedulable
/// nodes as `node_state` drained. Task `duration_s` is left out (a scheduler does not know it).
nlohmann::json k8s_snapshot_json(K8sImport& import);

/// A Kubernetes quantity ("500m", "8", "1.5", "64Gi", "100M", "1e3") in base units (cores,
/// bytes, devices). Gives nullopt for text that is not a quantity or a negative one.
std::optional<double> parse_k8s_quantity(std::string_view text);

/// An RFC 3339 timestamp ("2024-05-01T10:00:00Z", fractions and offsets allowed) in seconds since
/// the Unix epoch; nullopt when malformed.
std::optional<double> parse_k8s_time(std::string_view text);

/// Maps the distinct priority-class values (sorted ascending) onto platform priorities 1..9:
/// one value gives 5; n > 1 values give 1 + round(8 x rank / (n - 1)) (lowest 1, highest 9).
int k8s_priority_level(std::size_t rank, std::size_t n_values);

}  // namespace sim::io
