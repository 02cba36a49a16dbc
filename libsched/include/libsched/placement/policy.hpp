// Placement policy interface and the registry that maps scenario names to factories
// (docs/architecture: kube-scheduler framework score plugins; one small typed interface).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "libsched/cluster.hpp"
#include "libsched/fragmentation.hpp"

namespace libsched {

/// What a policy may know when it is created.
struct PolicyContext {
  std::uint64_t seed = 1;             ///< for `random`
  WorkloadDistribution workload;      ///< for `fgd` (empty: each gang's own shapes are used)
};

/// Scores candidate nodes for one replica at a time.
///
/// Contract: the scheduler calls begin_gang() once per gang trial (per candidate option), then
/// for each replica (master/head first) calls score() for every node that passes the filters
/// and fits the replica, in node-id order, and places the replica on the node with the highest
/// score (ties: the lowest node id), then calls replica_placed(). score() must not modify the
/// cluster. Complexity of score() should be O(GPUs per node) (fgd: O(GPUs x task types)).
class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view name() const = 0;
  virtual void begin_gang(const Cluster&) {}
  virtual void replica_placed(const Cluster&, const ReplicaAllocation&) {}
  /// Higher is better. Called only for feasible nodes.
  virtual double score(const Cluster& c, NodeId node, const ReplicaShape& r) = 0;
  /// When true the first feasible node in id order wins and the scan stops (first-fit).
  virtual bool first_feasible_wins() const { return false; }

  /// How the scheduler may visit candidate nodes for a GPU replica.
  /// `all_nodes`: score every feasible node, in id order. `least_free_first` /
  /// `most_free_first`: visit nodes in Cluster::free_index() order (free milli-GPU, then free
  /// milli-vCPU; ascending or descending; equal keys by ascending id) and take the FIRST
  /// feasible node. A policy may return these only if its score is strictly decreasing
  /// (least_free_first) or increasing (most_free_first) in (free GPU, free vCPU) taken
  /// lexicographically, and equal for equal keys.
  enum class ScanOrder { all_nodes, least_free_first, most_free_first };
  virtual ScanOrder scan_order() const { return ScanOrder::all_nodes; }
};

using PlacementFactory = std::function<std::unique_ptr<PlacementPolicy>(const PolicyContext&)>;

/// Name -> factory. `builtin()` holds the nine policies of placement/builtin.hpp and
/// placement/topology.hpp (defined in the compiled part of libsched, so link libsched::libsched
/// or `pkg-config --libs libsched`); copy it and add() your own to extend. add() rejects duplicates (std::invalid_argument); create() throws
/// std::out_of_range for an unknown name.
class PlacementRegistry {
 public:
  void add(std::string name, PlacementFactory f) {
    if (factories_.count(name)) throw std::invalid_argument("placement policy already registered: " + name);
    factories_.emplace(std::move(name), std::move(f));
  }
  bool contains(std::string_view name) const { return factories_.count(std::string(name)) > 0; }
  std::unique_ptr<PlacementPolicy> create(std::string_view name, const PolicyContext& ctx) const {
    auto it = factories_.find(std::string(name));
    if (it == factories_.end()) throw std::out_of_range("unknown placement policy: " + std::string(name));
    return it->second(ctx);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& [k, f] : factories_) v.push_back(k);
    return v;
  }
  static const PlacementRegistry& builtin();

 private:
  std::map<std::string, PlacementFactory> factories_;
};

}  // namespace libsched
