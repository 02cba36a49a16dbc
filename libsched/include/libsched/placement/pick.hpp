// How the scheduler finds the node a placement policy picks for one replica (the rule of
// PlacementPolicy: the feasible node with the highest score, ties to the lowest node id), and
// the three ways it gets there with identical results:
//  - the full scan (pick_full_scan): score every feasible node in id order. The reference.
//  - the free-capacity index (best-fit, worst-fit: PlacementPolicy::scan_order).
//  - first-fit without the fit tree: the nodes with vCPU free only (Cluster::cpu_free_nodes).
//  - node groups (Cluster::enable_node_groups): nodes in the same state score the same for a
//    given replica shape, so a policy scores each group once and takes the group's lowest
//    eligible member (StateScore below; `random` and `topology` in builtin.hpp/topology.hpp).
//    O(groups x log N) per replica instead of O(N) when node policies and idle stability
//    leave the groups' first members eligible.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "libsched/cluster.hpp"
#include "libsched/placement/policy.hpp"

namespace libsched::placement {

/// The best candidate so far: the highest score, ties to the lowest id.
struct Best {
  NodeId id;
  double score = 0;
  /// Would (sc, id) replace this candidate in the full scan's order?
  bool beaten_by(double sc, std::int32_t id_value) const {
    return !id.valid() || sc > score || (sc == score && id_value < id.value);
  }
};

/// Which members of a node group a search looks at: all, those of one switch, those of one
/// rack (racks are (switch, rack) pairs, as placement/topology.hpp keys them).
struct GroupScope {
  enum class Kind : std::uint8_t { all, in_switch, in_rack };
  Kind kind = Kind::all;
  std::int32_t switch_id = 0;
  std::int32_t rack = 0;
};

namespace detail {
/// The lowest id < `bound` among the members of `g` in `scope` with check.node_ok; invalid if
/// none. The scoped orders need NodeGroupOptions::topology.
inline NodeId first_eligible(const NodeGroup& g, const GroupScope& scope, const NodeCheck& check, std::int32_t bound) {
  constexpr std::int32_t lo = std::numeric_limits<std::int32_t>::min();
  switch (scope.kind) {
    case GroupScope::Kind::all:
      for (auto it = g.ids.begin(); it != g.ids.end() && *it < bound; ++it)
        if (check.node_ok(NodeId(*it))) return NodeId(*it);
      break;
    case GroupScope::Kind::in_switch:
      for (auto it = g.by_switch.lower_bound({scope.switch_id, lo}); it != g.by_switch.end() && it->first == scope.switch_id &&
                                                                     it->second < bound;
           ++it)
        if (check.node_ok(NodeId(it->second))) return NodeId(it->second);
      break;
    case GroupScope::Kind::in_rack:
      for (auto it = g.by_rack.lower_bound({scope.switch_id, scope.rack, lo});
           it != g.by_rack.end() && std::get<0>(*it) == scope.switch_id && std::get<1>(*it) == scope.rack &&
           std::get<2>(*it) < bound;
           ++it)
        if (check.node_ok(NodeId(std::get<2>(*it)))) return NodeId(std::get<2>(*it));
      break;
  }
  return NodeId();
}

/// Has `g` a member in `scope`?
inline bool has_member_in(const NodeGroup& g, const GroupScope& scope) {
  constexpr std::int32_t lo = std::numeric_limits<std::int32_t>::min();
  switch (scope.kind) {
    case GroupScope::Kind::all: return !g.ids.empty();
    case GroupScope::Kind::in_switch: {
      auto it = g.by_switch.lower_bound({scope.switch_id, lo});
      return it != g.by_switch.end() && it->first == scope.switch_id;
    }
    case GroupScope::Kind::in_rack: {
      auto it = g.by_rack.lower_bound({scope.switch_id, scope.rack, lo});
      return it != g.by_rack.end() && std::get<0>(*it) == scope.switch_id && std::get<1>(*it) == scope.rack;
    }
  }
  return false;
}
}  // namespace detail

/// Updates `best` with every node group's members in `scope`, each group scored once:
/// `group_score(rep)` is the score of every member of rep's group in this scope (or a lower
/// bound of a member's score, when that member is also offered at its true score elsewhere:
/// the maximum and its lowest id stay the full scan's). Only groups whose representative fits
/// `r` and passes check.group_ok count; in a group, the lowest member with check.node_ok that
/// could still win is taken. O(groups x (log N + ineligible members skipped)).
template <class ScoreFn>
void best_in_groups(const Cluster& c, const ReplicaShape& r, const NodeCheck& check, const GroupScope& scope,
                    ScoreFn&& group_score, Best& best) {
  for (const NodeGroup& g : c.node_groups()) {
    if (g.ids.empty() || !detail::has_member_in(g, scope)) continue;
    const NodeId rep(*g.ids.begin());
    if (!c.fits(rep, r) || !check.group_ok(rep)) continue;
    const double sc = group_score(rep);
    std::int32_t bound = std::numeric_limits<std::int32_t>::max();
    if (best.id.valid()) {
      if (sc == best.score) bound = best.id.value;
      else if (!(sc > best.score)) continue;
    }
    const NodeId m = detail::first_eligible(g, scope, check, bound);
    if (m.valid()) best = Best{m, sc};
  }
}

/// Base of policies whose score depends only on the replica's shape and the node's
/// NodeGroupKey (dot-product, gpu-packing, gpu-clustering, fgd): implement
/// `double score(const Cluster&, NodeId, const ReplicaShape&) override` in `Derived`; the
/// scheduler then scores each node group once (best_in_groups).
template <class Derived>
class StateScore : public ShapeScore<Derived> {
 public:
  std::optional<NodeGroupOptions> node_groups() const override { return NodeGroupOptions{}; }
  NodeId pick_grouped(const Cluster& c, const ReplicaRequest& q, const NodeCheck& check) override {
    Best best;
    Derived& self = *static_cast<Derived*>(this);
    best_in_groups(c, q.shape, check, GroupScope{}, [&](NodeId rep) { return self.Derived::score(c, rep, q.shape); }, best);
    return best.id;
  }
};

/// The lowest node id >= `from` with vCPU free (Cluster::cpu_free_nodes, a bit per node) that
/// fits `r` and passes `ok(id)`; invalid when none. A node without its bit cannot fit a replica
/// that takes vCPU (down, drained, or no vCPU free), so for such `r` this is the full scan's
/// first feasible node at or after `from`. O(N / 64 + nodes visited). Inlined: every one-slot
/// replica of a first-fit placement scans here.
template <class Ok>
[[gnu::always_inline]] inline NodeId first_cpu_free_node(const Cluster& c, const ReplicaShape& r, std::size_t from, Ok&& ok) {
  const std::vector<std::uint64_t>& bits = c.cpu_free_nodes();
  for (std::size_t w = from / 64; w < bits.size(); ++w) {
    std::uint64_t b = bits[w];
    if (w == from / 64) b &= ~std::uint64_t{0} << (from % 64);
    for (; b != 0; b &= b - 1) {
      const NodeId id(static_cast<std::int32_t>(w * 64 + std::size_t(std::countr_zero(b))));
      if (c.fits(id, r) && ok(id)) return id;
    }
  }
  return NodeId();
}

/// The reference: every node in id order that fits `q.shape` and passes check.node_ok is
/// scored (first-fit: the first one wins); the highest score wins, ties to the lowest id.
/// O(N) score() calls. A policy with its own rule (PlacementPolicy::pick_by_rule) answers
/// through that instead.
/// `from`: nodes below it are known not to fit or not to be eligible (first-fit only; see
/// pick_node).
inline NodeId pick_full_scan(const Cluster& c, PlacementPolicy& policy, const ReplicaRequest& q, const NodeCheck& check,
                             std::size_t from = 0) {
  if (auto ruled = policy.pick_by_rule(c, q, check)) return *ruled;
  const bool first_wins = policy.first_feasible_wins();
  NodeId best;
  double best_score = 0;
  if (first_wins && c.keeps_fit_tree()) {
    // Jump over the nodes that cannot fit (Cluster::first_fit_candidate): the same first node.
    for (std::size_t i = c.first_fit_candidate(from, q.shape); i < c.size(); i = c.first_fit_candidate(i + 1, q.shape)) {
      NodeId id(static_cast<std::int32_t>(i));
      if (c.fits(id, q.shape) && check.node_ok(id)) return id;
    }
    return NodeId();
  }
  for (std::size_t i = first_wins ? from : 0, n = c.size(); i < n; ++i) {
    NodeId id(static_cast<std::int32_t>(i));
    if (!c.fits(id, q.shape)) continue;
    if (!check.node_ok(id)) continue;
    if (first_wins) return id;
    double sc = policy.score(c, id, q);
    if (!best.valid() || sc > best_score) {
      best = id;
      best_score = sc;
    }
  }
  return best;
}

/// The node `policy` picks for replica `q`: the full scan's winner, found through the free
/// index (GPU replicas of best-fit / worst-fit), the policy's node groups, or the full scan.
/// `full_scan` forces the full scan (the reference the fast paths are tested against).
/// Enables the policy's node groups on `c` on first use.
/// `from` (a scan hint for policies whose first feasible node wins): the caller knows no node
/// below it fits `q` and is eligible, e.g. the node of the gang's previous replica of the same
/// shape (placing replicas only takes capacity away). Ignored by the other policies.
inline NodeId pick_node(Cluster& c, PlacementPolicy& policy, const ReplicaRequest& q, const NodeCheck& check,
                        bool full_scan = false, std::size_t from = 0) {
  if (full_scan) return pick_full_scan(c, policy, q, check);
  const ReplicaShape& r = q.shape;
  const auto order_kind = policy.scan_order();
  if (r.num_gpu > 0 && order_kind != PlacementPolicy::ScanOrder::all_nodes) {
    // The policy's score order is the free order: the first feasible node wins. Nodes whose
    // GPU capability is below what the replica needs cannot fit it: skipped, block by block.
    const auto& order = c.free_order();
    const std::int32_t need = Cluster::gpu_cap_need(r);
    auto ok = [&](std::int32_t id) {
      NodeId n(id);
      return c.fits(n, r) && check.node_ok(n);
    };
    if (order_kind == PlacementPolicy::ScanOrder::least_free_first) {
      auto it = order.find_from(order.lower_bound({r.total_gpu_milli(), r.cpu_milli, -1}), need, ok);
      return it == order.end() ? NodeId() : NodeId(it->id);
    }
    // most_free_first: groups of equal (GPU, vCPU) from the top, each in ascending id order.
    auto group_end = order.end();
    while (!(group_end == order.begin())) {
      auto last = group_end;
      --last;
      if (last->gpu < r.total_gpu_milli()) break;
      auto group_begin = order.lower_bound({last->gpu, last->cpu, -1});
      for (auto it = group_begin; !(it == group_end); ++it)
        if (it->cap >= need && ok(it->id)) return NodeId(it->id);
      group_end = group_begin;
    }
    return NodeId();
  }
  if (!policy.first_feasible_wins()) {
    if (auto g = policy.node_groups()) {
      c.enable_node_groups(*g);
      return policy.pick_grouped(c, q, check);
    }
  }
  if (policy.first_feasible_wins() && r.cpu_milli > 0 && !c.keeps_fit_tree()) {
    // The full scan's first feasible node at or after `from`, visiting only the nodes with vCPU
    // free (Cluster::cpu_free_nodes, ascending ids): a node without its bit cannot fit a
    // replica that takes vCPU (down, drained, or no vCPU free), so the same node wins.
    if (auto ruled = policy.pick_by_rule(c, q, check)) return *ruled;
    return first_cpu_free_node(c, r, from, [&check](NodeId id) { return check.node_ok(id); });
  }
  return pick_full_scan(c, policy, q, check, from);
}

}  // namespace libsched::placement
