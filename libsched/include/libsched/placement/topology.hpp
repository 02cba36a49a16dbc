// The `topology` placement policy and the network tree it measures distances on. This is the
// only libsched header that includes Boost.Graph: <libsched/libsched.hpp> does not include it,
// so embedders that do not name this policy's class never parse Boost.Graph. The policy is
// registered in PlacementRegistry::builtin() as "topology" (libsched/src/builtin_registry.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>

#include "libsched/placement/builtin.hpp"

namespace libsched::placement {

/// The cluster's network as a Boost.Graph tree: core -> switches -> racks -> nodes (racks are
/// keyed by (switch, rack) as given on the nodes). One breadth-first search from the core
/// records every vertex's parent and depth (O(nodes) time and memory); the hop distance
/// between two nodes is the path length through their lowest common ancestor: 0 same node,
/// 2 same rack, 4 same switch, 6 otherwise.
class TopologyGraph {
 public:
  void build(const Cluster& c) {
    using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
    std::map<std::int32_t, std::size_t> switches;
    std::map<std::pair<std::int32_t, std::int32_t>, std::size_t> racks;
    for (const Node& n : c.nodes()) {
      switches.emplace(n.switch_id, 0);
      racks.emplace(std::make_pair(n.switch_id, n.rack), 0);
    }
    std::size_t v = 1;  // 0 = core
    for (auto& [k, id] : switches) id = v++;
    for (auto& [k, id] : racks) id = v++;
    node_vertex_.resize(c.size());
    Graph g(v + c.size());
    for (const auto& [k, id] : switches) boost::add_edge(0, id, g);
    for (const auto& [k, id] : racks) boost::add_edge(switches.at(k.first), id, g);
    for (std::size_t i = 0; i < c.size(); ++i) {
      const Node& n = c.nodes()[i];
      node_vertex_[i] = v + i;
      boost::add_edge(racks.at({n.switch_id, n.rack}), v + i, g);
    }
    parent_.assign(boost::num_vertices(g), 0);
    depth_.assign(boost::num_vertices(g), 0);
    boost::breadth_first_search(
        g, boost::vertex(0, g),
        boost::visitor(boost::make_bfs_visitor(std::make_pair(boost::record_predecessors(parent_.data(), boost::on_tree_edge()),
                                                              boost::record_distances(depth_.data(), boost::on_tree_edge())))));
    built_for_ = c.size();
  }
  bool built_for(const Cluster& c) const { return built_for_ == c.size() && c.size() > 0; }
  /// Hops between two nodes through their lowest common ancestor. O(tree depth).
  int hops(NodeId a, NodeId b) const {
    std::size_t x = node_vertex_[a.index()], y = node_vertex_[b.index()];
    int h = 0;
    while (x != y) {
      if (depth_[x] >= depth_[y]) x = parent_[x];
      else y = parent_[y];
      ++h;
    }
    return h;
  }

 private:
  std::vector<std::size_t> node_vertex_;
  std::vector<std::size_t> parent_;
  std::vector<std::size_t> depth_;
  std::size_t built_for_ = 0;
};

/// topology: keep a gang's replicas within the fewest racks, then switches. The first replica
/// goes best-fit; each next replica scores -(sum of hop distances (TopologyGraph) to the
/// replicas placed so far) * 1e15 - leftover, so a gang fills one rack, then one switch,
/// before it spreads.
class Topology final : public ShapeScore<Topology> {
 public:
  std::string_view name() const override { return "topology"; }
  void begin_gang(const Cluster& c) override {
    placed_.clear();
    if (!graph_.built_for(c)) graph_.build(c);
  }
  void replica_placed(const Cluster&, const ReplicaAllocation& a) override { placed_.push_back(a.node); }
  double score(const Cluster& c, NodeId id, const ReplicaShape& r) override {
    double d = 0;
    for (NodeId p : placed_) d += distance(c, p, id);
    return -d * 1e15 - detail::leftover(c, id, r);
  }
  /// Fast path: node groups that also order members by switch and by rack. A node's hop sum
  /// to the placed replicas depends only on where it sits: far from all of them (6 hops to
  /// each), in a placed replica's switch, in its rack, or on its node. So the winner is the best
  /// of: every group at the far sum, every group within each placed switch at that switch's
  /// sum, within each placed rack at that rack's sum, and each placed node scored itself. A
  /// node offered at a shallower level gets a sum at least its own (a lower score, -d x 1e15
  /// being monotone), so the maximum and its lowest id are the full scan's.
  /// O(groups x (placed switches + placed racks) x log N).
  std::optional<NodeGroupOptions> node_groups() const override {
    NodeGroupOptions o;
    o.topology = true;
    return o;
  }
  NodeId pick_grouped(const Cluster& c, const ReplicaRequest& q, const NodeCheck& check) override {
    const ReplicaShape& r = q.shape;
    Best best;
    // The same expression as score(), with the hop sum given.
    auto at = [&](double d) { return [&c, &r, d](NodeId rep) { return -d * 1e15 - detail::leftover(c, rep, r); }; };
    double far = 0;
    for (std::size_t i = 0; i < placed_.size(); ++i) far += 6;
    best_in_groups(c, r, check, GroupScope{}, at(far), best);
    std::vector<std::int32_t> switches;
    std::vector<std::pair<std::int32_t, std::int32_t>> racks;
    std::vector<NodeId> nodes;
    for (NodeId p : placed_) {
      const Node& n = c.node(p);
      if (std::find(switches.begin(), switches.end(), n.switch_id) == switches.end()) switches.push_back(n.switch_id);
      if (std::find(racks.begin(), racks.end(), std::make_pair(n.switch_id, n.rack)) == racks.end())
        racks.emplace_back(n.switch_id, n.rack);
      if (std::find(nodes.begin(), nodes.end(), p) == nodes.end()) nodes.push_back(p);
    }
    for (std::int32_t sw : switches) {
      double d = 0;
      for (NodeId p : placed_) d += c.node(p).switch_id == sw ? 4 : 6;
      best_in_groups(c, r, check, GroupScope{GroupScope::Kind::in_switch, sw, 0}, at(d), best);
    }
    for (const auto& [sw, rack] : racks) {
      double d = 0;
      for (NodeId p : placed_) {
        const Node& n = c.node(p);
        d += n.switch_id != sw ? 6 : n.rack != rack ? 4 : 2;
      }
      best_in_groups(c, r, check, GroupScope{GroupScope::Kind::in_rack, sw, rack}, at(d), best);
    }
    for (NodeId x : nodes) {
      if (!c.fits(x, r) || !check.node_ok(x)) continue;
      const double sc = score(c, x, r);
      if (best.beaten_by(sc, x.value)) best = Best{x, sc};
    }
    return best.id;
  }
  /// Hops between two nodes: 0 same node, 2 same rack, 4 same switch, else 6.
  double distance(const Cluster& c, NodeId a, NodeId b) {
    if (!graph_.built_for(c)) graph_.build(c);
    return graph_.hops(a, b);
  }

 private:
  std::vector<NodeId> placed_;
  TopologyGraph graph_;
};

}  // namespace libsched::placement
