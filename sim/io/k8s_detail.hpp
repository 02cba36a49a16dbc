// Internal to sim/io/k8s_*.cpp: the objects read and the import context shared by the readers of
// the cluster, the Kueue objects and the jobs. Not installed API.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/io/k8s_import.hpp"

namespace sim::io::k8s_detail {

/// One Kubernetes object, with where it was read.
struct Object {
  std::string file;
  std::string kind;
  std::string ns;    ///< "" for cluster-scoped objects
  std::string name;
  nlohmann::json j;
  /// "KIND ns/name" (or "KIND name"): how warnings name the object.
  std::string id() const { return ns.empty() ? kind + " " + name : kind + " " + ns + "/" + name; }
  /// "KIND/ns/name": the first part of an error's PATH.
  std::string path() const { return ns.empty() ? kind + "/" + name : kind + "/" + ns + "/" + name; }
};

/// Reads every file of `paths` (folders recursively) into objects; `kind: List` items are
/// flattened. Problems go to `errors`.
std::vector<Object> read_objects(const std::vector<std::string>& paths, std::vector<Diagnostic>& errors);

/// A replica's resource demand (whole GPUs, vCPU, GiB).
struct Shape {
  int gpus = 0;
  double vcpu = 0;
  double memory_gib = 0;
  bool operator==(const Shape&) const = default;
};

/// A flavor's (or queue's) placement: pool and GPU model ("" = any).
struct Placement {
  std::string pool;
  std::string gpu_model;
};

/// A ClusterQueue as tasks see it.
struct Queue {
  std::string name;
  Placement placement;
  bool accept_idle = false;   ///< in a cohort with borrowing allowed
};

/// Shared state of one import.
struct Context {
  const K8sImportOptions& opts;
  K8sImport& out;
  std::set<std::string> warned;                       ///< "object\nfield" already warned
  std::map<std::string, std::pair<int, bool>> priority_classes;   ///< PriorityClass name -> (value, globalDefault)
  std::map<std::string, int> workload_priority_classes;          ///< WorkloadPriorityClass name -> value
  std::map<std::string, Placement> flavors;           ///< ResourceFlavor name -> placement
  std::map<std::string, Queue> cluster_queues;        ///< ClusterQueue name -> queue
  std::map<std::string, std::string> local_queues;    ///< "ns/name" -> ClusterQueue name
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> nodes;  ///< (node name, labels), read order
  std::map<std::string, std::string> pool_of_node;
  std::map<std::string, std::string> model_of_node;

  /// `import: OBJECT: FIELD: not mapped: REASON`, once per object and field.
  void warn(const Object& o, const std::string& field, const std::string& reason);
  /// `FILE: KIND/ns/name.FIELD: VALUE: RULE`.
  void error(const Object& o, const std::string& field, const nlohmann::json& value, const std::string& rule);
};

/// Nodes -> pools (explicit nodes); PriorityClass / WorkloadPriorityClass values.
void read_cluster(Context& cx, const std::vector<Object>& objects);
/// ResourceFlavor, ClusterQueue (quotas, queueing strategy), LocalQueue.
void read_kueue(Context& cx, const std::vector<Object>& objects);
/// PyTorchJob, TrainJob, RayJob -> tasks (with pods -> running placements), then priorities and times.
void read_jobs(Context& cx, const std::vector<Object>& objects);

/// Quantity of `v` (string or number) at `field` of `o`; reports an error and gives nullopt when bad.
std::optional<double> quantity(Context& cx, const Object& o, const std::string& field, const nlohmann::json& v);
/// Sums a pod template's demand (containers; init containers by the max rule) and warns on the
/// pod spec fields that change scheduling and are not mapped. `field` is the template's path.
Shape pod_shape(Context& cx, const Object& o, const std::string& field, const nlohmann::json& pod_template);
/// Demand of a `resources` object ({requests, limits}) at `field`.
Shape resources_shape(Context& cx, const Object& o, const std::string& field, const nlohmann::json& resources);

/// The boolean at `key` of `obj` (false when absent or null); another type is an error at
/// `field` (the path of `obj`) + "." + key.
bool flag(Context& cx, const Object& o, const std::string& field, const nlohmann::json& obj, const char* key);

/// The array at `key` of `obj` (an empty array when absent or null); another type is an error at
/// `field` + "." + key and gives an empty array.
nlohmann::json array_at(Context& cx, const Object& o, const std::string& field, const nlohmann::json& obj, const char* key);

/// The string at `key` of `j`, or "" when absent or not a string.
std::string str_at(const nlohmann::json& j, const char* key);

}  // namespace sim::io::k8s_detail
