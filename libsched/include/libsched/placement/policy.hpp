// Placement policy interface (the score extension point, as in the kube-scheduler framework's
// score plugins) and PlacementRegistry, the placement part of the plugin Registry
// (libsched/registry.hpp; docs/architecture.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "libsched/cluster.hpp"
#include "libsched/fragmentation.hpp"
#include "libsched/named_registry.hpp"
#include "libsched/task.hpp"

namespace libsched {

/// The replica being placed, as score() sees it.
struct ReplicaRequest {
  const ReplicaShape& shape;  ///< what this replica asks for (head or worker of `option`)
  const TaskSpec& task;       ///< the task (a relaxed copy of it while explain() probes what-ifs)
  TaskId id;                  ///< the task's id (invalid for a gang that is not a registered task)
  std::int32_t replica = 0;   ///< 0 = master/head, 1..workers = the workers in order
  std::size_t option = 0;     ///< index into task.options
  ResourceType capacity = ResourceType::reserved;  ///< the capacity class being tried
};

/// Which nodes a replica may use besides fit (pool, idle stability, node policies): a
/// non-owning view of two predicates. `group_ok(n)` must depend only on what node `n` shares
/// with its node group (its pool); `node_ok(n)` is the whole rule for node `n` and implies
/// group_ok(n). Fit (Cluster::fits) is checked separately.
class NodeCheck {
 public:
  /// `group` and `node` must outlive the NodeCheck.
  template <class G, class N>
  NodeCheck(const G& group, const N& node)
      : g_(&group), n_(&node),
        gf_([](const void* p, NodeId id) { return bool((*static_cast<const G*>(p))(id)); }),
        nf_([](const void* p, NodeId id) { return bool((*static_cast<const N*>(p))(id)); }) {}
  bool group_ok(NodeId rep) const { return gf_(g_, rep); }
  bool node_ok(NodeId id) const { return nf_(n_, id); }

 private:
  const void* g_;
  const void* n_;
  bool (*gf_)(const void*, NodeId);
  bool (*nf_)(const void*, NodeId);
};

/// Scores candidate nodes for one replica at a time.
///
/// Contract: the scheduler calls begin_gang() once per gang trial (per candidate option), then
/// for each replica (master/head first) calls score() for every node that passes the filters
/// and fits the replica, in node-id order, and places the replica on the node with the highest
/// score (ties: the lowest node id), then calls replica_placed(). (That is the rule; the
/// scheduler may find the same winner with fewer score() calls: scan_order(), node_groups().
/// A policy may instead define its rule by pick_by_rule(), as `random` does.) score() must not modify the
/// cluster, and must be a pure function of its arguments and of what begin_gang() /
/// replica_placed() told the policy (explain() and reservations call it on what-ifs).
/// Complexity of score() should be O(GPUs per node) (fgd: O(GPUs x task types)).
///
/// Override ONE of the two score() overloads: the ReplicaRequest one when the score depends on
/// the task (its name, user, priority, ...) or on the replica index; the ReplicaShape one when
/// the shape is enough. The scheduler calls the ReplicaRequest overload, whose default forwards
/// to the ReplicaShape one. (A class that overrides only one overload hides the other from
/// name lookup in the class itself; add `using PlacementPolicy::score;` if a compiler warns.)
class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view name() const = 0;
  virtual void begin_gang(const Cluster&) {}
  virtual void replica_placed(const Cluster&, const ReplicaAllocation&) {}
  /// Higher is better. Called only for feasible nodes. Default: the shape-only score.
  virtual double score(const Cluster& c, NodeId node, const ReplicaRequest& r) { return score(c, node, r.shape); }
  /// Higher is better. Default 0 (every feasible node ties: the lowest id wins).
  virtual double score(const Cluster&, NodeId, const ReplicaShape&) { return 0; }
  /// When true the first feasible node in id order wins and the scan stops (first-fit).
  virtual bool first_feasible_wins() const { return false; }
  /// True when score() depends on the replica's shape, index and capacity class only, never on
  /// which task asks: the scheduler may then treat identical requests of different tasks as
  /// one (a request that failed is not retried in the same pass). ShapeScore policies say true.
  virtual bool shape_only() const { return false; }

  /// How the scheduler may visit candidate nodes for a GPU replica.
  /// `all_nodes`: score every feasible node, in id order. `least_free_first` /
  /// `most_free_first`: visit nodes in Cluster::free_index() order (free milli-GPU, then free
  /// milli-vCPU; ascending or descending; equal keys by ascending id) and take the FIRST
  /// feasible node. A policy may return these only if its score is strictly decreasing
  /// (least_free_first) or increasing (most_free_first) in (free GPU, free vCPU) taken
  /// lexicographically, and equal for equal keys.
  enum class ScanOrder { all_nodes, least_free_first, most_free_first };
  virtual ScanOrder scan_order() const { return ScanOrder::all_nodes; }

  /// Optional fast path for `all_nodes` policies. A policy that returns node group options
  /// here promises that pick_grouped() returns exactly the node the full scan would (the
  /// feasible node with the highest score, ties to the lowest id), in time that depends on the
  /// number of node groups (Cluster::enable_node_groups) rather than on the number of nodes.
  /// The scheduler then enables those groups on its cluster and calls pick_grouped() instead
  /// of scoring every node (SchedulerOptions::full_scan_placement turns this off).
  virtual std::optional<NodeGroupOptions> node_groups() const { return std::nullopt; }
  /// The full scan's winner for `q` among the nodes with check.node_ok and Cluster::fits, or an
  /// invalid id; `c` has node groups enabled with node_groups(). Default: none.
  virtual NodeId pick_grouped(const Cluster&, const ReplicaRequest&, const NodeCheck&) { return NodeId(); }

  /// For a policy whose rule is not "the highest score() wins" (`random`: a uniform draw among
  /// the feasible nodes): the node its rule picks for `q` among the nodes with check.node_ok
  /// and Cluster::fits, found by a plain pass over every node, without node groups. It is the
  /// reference (the full scan) that pick_grouped() must then match. std::nullopt (the default)
  /// means the rule is the score() scan.
  virtual std::optional<NodeId> pick_by_rule(const Cluster&, const ReplicaRequest&, const NodeCheck&) { return std::nullopt; }
};

namespace placement {
/// Base of policies whose score needs only the replica's shape: implement
/// `double score(const Cluster&, NodeId, const ReplicaShape&) override` in `Derived`; the
/// scheduler's call then costs one virtual call per node (the shape score is called directly).
template <class Derived>
class ShapeScore : public PlacementPolicy {
 public:
  double score(const Cluster& c, NodeId node, const ReplicaRequest& r) final {
    return static_cast<Derived*>(this)->Derived::score(c, node, r.shape);
  }
  double score(const Cluster& c, NodeId node, const ReplicaShape& r) override = 0;
  bool shape_only() const final { return true; }
};
}  // namespace placement

using PlacementFactory = NamedRegistry<PlacementPolicy>::Factory;

/// Placement policies by name (`scheduler.placement`). `builtin()` holds the ten policies of
/// placement/builtin.hpp and placement/topology.hpp (defined in the compiled part of libsched:
/// link libsched::libsched or `pkg-config --libs libsched`); copy it and add() your own to extend. add() rejects duplicates
/// (DuplicateName, a std::invalid_argument); create() throws UnknownName (a std::out_of_range)
/// for an unknown name. The placement part of libsched::Registry.
class PlacementRegistry : public NamedRegistry<PlacementPolicy> {
 public:
  PlacementRegistry() : NamedRegistry<PlacementPolicy>("placement policy") {}
  static const PlacementRegistry& builtin();
};

}  // namespace libsched
