// The built-in placement policies, registered in PlacementRegistry::builtin() under the names
// used by `scheduler.placement` (the registry is defined in libsched/src/builtin_registry.cpp;
// the `topology` policy lives in placement/topology.hpp, the only header using Boost.Graph). Every score is "higher is better"; ties go to the lowest
// node id. Notation: f_d = free amount of dimension d on the node before placement,
// r_d = the replica's request, C_d = node capacity.
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <unordered_map>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>


#include "libsched/fragmentation.hpp"
#include "libsched/placement/pick.hpp"
#include "libsched/placement/policy.hpp"

namespace libsched::placement {

/// first-fit: the first feasible node in node-id order (classic First Fit).
class FirstFit final : public ShapeScore<FirstFit> {
 public:
  std::string_view name() const override { return "first-fit"; }
  double score(const Cluster&, NodeId, const ReplicaShape&) override { return 0; }
  bool first_feasible_wins() const override { return true; }
};

namespace detail {
/// Leftover after placement, lexicographic and exact in a double: GPU replicas by
/// (free milli-GPU left) x 2^31 + free milli-vCPU left; CPU-only replicas by free milli-vCPU
/// left x 2^31 + free MiB left / 1024.
inline double leftover(const Cluster& c, NodeId id, const ReplicaShape& r) {
  const Node& n = c.node(id);
  constexpr double k = 2147483648.0;
  if (r.num_gpu > 0) return double(n.free.gpu_milli - r.total_gpu_milli()) * k + double(n.free.cpu_milli - r.cpu_milli);
  return double(n.free.cpu_milli - r.cpu_milli) * k + double(n.free.mem_mib - r.mem_mib) / 1024.0;
}
}  // namespace detail

/// best-fit: the node left with the least free GPU (milli-GPU) after placement, then the least
/// free vCPU (CPU-only replicas: least vCPU, then least memory). score = -leftover.
class BestFit final : public StateScore<BestFit> {
 public:
  std::string_view name() const override { return "best-fit"; }
  double score(const Cluster& c, NodeId id, const ReplicaShape& r) override { return -detail::leftover(c, id, r); }
  ScanOrder scan_order() const override { return ScanOrder::least_free_first; }
};

/// worst-fit: the node left with the most free capacity (spreads load). score = +leftover.
class WorstFit final : public StateScore<WorstFit> {
 public:
  std::string_view name() const override { return "worst-fit"; }
  double score(const Cluster& c, NodeId id, const ReplicaShape& r) override { return detail::leftover(c, id, r); }
  ScanOrder scan_order() const override { return ScanOrder::most_free_first; }
};

/// dot-product (Tetris, Grandl et al., SIGCOMM'14): alignment of the request with the free
/// capacity, both normalised by node capacity: score = sum_d (r_d / C_d) * (f_d / C_d)
/// over d in {GPU, vCPU, memory}.
class DotProduct final : public StateScore<DotProduct> {
 public:
  std::string_view name() const override { return "dot-product"; }
  double score(const Cluster& c, NodeId id, const ReplicaShape& r) override {
    const Node& n = c.node(id);
    auto term = [](double req, double free, double cap) { return cap > 0 ? (req / cap) * (free / cap) : 0.0; };
    return term(double(r.total_gpu_milli()), double(n.free.gpu_milli), double(n.capacity.gpu_milli)) +
           term(double(r.cpu_milli), double(n.free.cpu_milli), double(n.capacity.cpu_milli)) +
           term(double(r.mem_mib), double(n.free.mem_mib), double(n.capacity.mem_mib));
  }
};

/// gpu-packing (FGD paper baseline "GPU Packing", Weng et al. ATC'23 Sec. 5): prefer, in
/// tiers, (2) a node with a partly used GPU that can take this share, (1) a node already
/// running something (some GPU used), (0) an idle node; within a tier, best-fit.
/// score = tier * 1e15 - leftover.
class GpuPacking final : public StateScore<GpuPacking> {
 public:
  std::string_view name() const override { return "gpu-packing"; }
  double score(const Cluster& c, NodeId id, const ReplicaShape& r) override {
    const Node& n = c.node(id);
    int tier = 0;
    if (n.free.gpu_milli < n.capacity.gpu_milli) tier = 1;
    if (r.num_gpu == 1 && r.gpu_milli < kMilliPerGpu) {
      const std::int32_t* g = c.gpu_free_begin(id);
      for (int i = 0; i < n.gpus; ++i)
        if (g[i] < kMilliPerGpu && g[i] >= r.gpu_milli) { tier = 2; break; }
    }
    return tier * 1e15 - detail::leftover(c, id, r);
  }
};

/// gpu-clustering (FGD paper baseline "GPU Clustering"): keep tasks of the same GPU request
/// together: a share prefers a node with a partly used GPU whose used milli is a multiple of
/// the share (same-size shares already there); whole-GPU replicas prefer nodes with no shared
/// GPU. score = same_kind * 1e15 - leftover.
class GpuClustering final : public StateScore<GpuClustering> {
 public:
  std::string_view name() const override { return "gpu-clustering"; }
  double score(const Cluster& c, NodeId id, const ReplicaShape& r) override {
    const Node& n = c.node(id);
    const std::int32_t* g = c.gpu_free_begin(id);
    bool same = false;
    if (r.num_gpu == 1 && r.gpu_milli < kMilliPerGpu) {
      for (int i = 0; i < n.gpus && !same; ++i) {
        std::int32_t used = kMilliPerGpu - g[i];
        same = used > 0 && used < kMilliPerGpu && g[i] >= r.gpu_milli && used % r.gpu_milli == 0;
      }
    } else {
      same = true;
      for (int i = 0; i < n.gpus; ++i)
        if (g[i] > 0 && g[i] < kMilliPerGpu) { same = false; break; }
    }
    return (same ? 1e15 : 0.0) - detail::leftover(c, id, r);
  }
};

/// random: a uniformly random feasible node, seeded (the FGD paper's "Random" baseline draws
/// one feasible node uniformly). The rule, stated by pick_by_rule() (the reference, one pass
/// over every node) and found by pick_grouped() in O(groups):
///  1. The candidate groups: the schedulable nodes partitioned by state (NodeGroupKey) whose
///     state fits the replica and whose pool passes the check; w_g = the group's member count
///     (eligible or not).
///  2. A draw key h: splitmix64 over (seed, the replica's shape, its index in the gang, and
///     the sum over the candidate groups of mix(key hash, w_g)). A pure function of the seed,
///     the request and the cluster's state: calls that only look (explain(), backfill
///     reservations, rolled-back trials) never perturb later decisions, which a stateful
///     generator would.
///  3. Each candidate group g draws u_g in (0, 1) and a rank k_g in [0, w_g) from
///     splitmix64(h ^ key hash). The group with the highest log(u_g) / w_g wins (an exponential
///     race: group g wins with probability w_g / sum of w), and in it the member of rank k_g in
///     id order; if that member is not eligible (node policies, idle stability), the next
///     eligible member in id order, wrapping around. A group without an eligible member drops
///     out of the race. Equal race values: the lowest node id.
/// So when every feasible node is eligible each is drawn with probability 1 / (feasible
/// nodes), and a seed always gives the same decisions.
class Random final : public PlacementPolicy {
 public:
  explicit Random(std::uint64_t seed) : seed_(seed) {}
  std::string_view name() const override { return "random"; }
  void begin_gang(const Cluster&) override { index_ = 0; }
  void replica_placed(const Cluster&, const ReplicaAllocation&) override { ++index_; }
  bool shape_only() const override { return true; }
  std::optional<NodeGroupOptions> node_groups() const override {
    NodeGroupOptions o;
    o.ranked = true;
    return o;
  }

  NodeId pick_grouped(const Cluster& c, const ReplicaRequest& q, const NodeCheck& check) override {
    const auto& groups = c.node_groups();
    candidates_.clear();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const NodeGroup& g = groups[i];
      if (g.ids.empty()) continue;
      const NodeId rep(*g.ids.begin());
      if (!c.fits(rep, q.shape) || !check.group_ok(rep)) continue;
      candidates_.push_back(Candidate{NodeGroupKey::Hash{}(g.key), std::uint32_t(g.ids.size()), std::uint32_t(i)});
    }
    return draw(q.shape, [&](std::uint32_t slot, std::uint32_t rank) {
      return first_eligible_from(groups[slot].ranked, rank, check);
    });
  }

  std::optional<NodeId> pick_by_rule(const Cluster& c, const ReplicaRequest& q, const NodeCheck& check) override {
    std::unordered_map<NodeGroupKey, std::vector<std::int32_t>, NodeGroupKey::Hash> by_state;
    for (std::size_t i = 0; i < c.size(); ++i) {
      const NodeId id(static_cast<std::int32_t>(i));
      const Node& n = c.node(id);
      if (n.up && !n.drained && !n.removed) by_state[c.group_key(id)].push_back(id.value);
    }
    std::vector<const std::vector<std::int32_t>*> lists;
    candidates_.clear();
    for (const auto& [key, ids] : by_state) {
      const NodeId rep(ids.front());
      if (!c.fits(rep, q.shape) || !check.group_ok(rep)) continue;
      candidates_.push_back(Candidate{NodeGroupKey::Hash{}(key), std::uint32_t(ids.size()), std::uint32_t(lists.size())});
      lists.push_back(&ids);
    }
    return draw(q.shape, [&](std::uint32_t slot, std::uint32_t rank) { return first_eligible_from(*lists[slot], rank, check); });
  }

 private:
  struct Candidate {
    std::uint64_t key_hash;
    std::uint32_t weight;  ///< w_g: the group's member count
    std::uint32_t slot;    ///< which group (pick_grouped: a node_groups() slot)
    double race = 0;
    std::uint32_t rank = 0;
  };
  static std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  /// The member of rank `rank` in `ids` (ascending) if eligible, else the next eligible one,
  /// wrapping around; invalid if none is.
  static NodeId first_eligible_from(const std::vector<std::int32_t>& ids, std::uint32_t rank, const NodeCheck& check) {
    for (std::size_t k = 0, n = ids.size(); k < n; ++k) {
      const std::size_t at = rank + k < n ? rank + k : rank + k - n;
      if (check.node_ok(NodeId(ids[at]))) return NodeId(ids[at]);
    }
    return NodeId();
  }
  /// Steps 2 and 3 over candidates_ (their order does not matter): `member(slot, rank)` is the
  /// group's member of rank `rank` or the next eligible one, wrapping around, or an invalid id.
  template <class Member>
  NodeId draw(const ReplicaShape& r, Member&& member) {
    std::uint64_t digest = 0;
    for (const Candidate& x : candidates_) digest += mix(x.key_hash ^ mix(x.weight));
    std::uint64_t h = mix(seed_ ^ 0x5bd1e995u);
    for (std::uint64_t v : {std::uint64_t(r.num_gpu), std::uint64_t(r.gpu_milli), std::uint64_t(r.cpu_milli),
                            std::uint64_t(r.mem_mib), index_, digest})
      h = mix(h ^ v);
    for (Candidate& x : candidates_) {
      const std::uint64_t a = mix(h ^ x.key_hash);
      x.race = std::log((double(a >> 11) + 0.5) * 0x1.0p-53) / double(x.weight);
      x.rank = std::uint32_t(mix(a) % x.weight);
    }
    while (!candidates_.empty()) {
      double top = candidates_.front().race;
      for (const Candidate& x : candidates_) top = std::max(top, x.race);
      NodeId best;
      for (const Candidate& x : candidates_) {
        if (x.race != top) continue;
        const NodeId m = member(x.slot, x.rank);
        if (m.valid() && (!best.valid() || m.value < best.value)) best = m;
      }
      if (best.valid()) return best;
      std::erase_if(candidates_, [top](const Candidate& x) { return x.race == top; });
    }
    return NodeId();
  }

  std::uint64_t seed_;
  std::uint64_t index_ = 0;
  std::vector<Candidate> candidates_;  ///< scratch, kept between calls (no allocation per pick)
};

/// fgd (Fragmentation Gradient Descent, Weng et al., USENIX ATC'23): the node whose expected
/// fragmentation F_n(M) (fragmentation.hpp) grows least when the replica is placed:
/// score = -(F_n(M) after - F_n(M) before). M is the workload distribution of the context,
/// or, when empty, the replica's own shape with weight 1.
///
/// F_n(M) depends only on the node's state (GPU model, free vCPU and memory, and the multiset
/// of per-GPU free milli-GPU), so values are memoised by that state: clusters have many nodes
/// in identical states. The scheduler scores each node group once (StateScore), and the memo
/// keeps repeated decisions to one hash look-up per group.
class Fgd final : public StateScore<Fgd> {
 public:
  explicit Fgd(WorkloadDistribution w) : workload_(std::move(w)) {}
  std::string_view name() const override { return "fgd"; }
  double score(const Cluster& c, NodeId id, const ReplicaShape& r) override {
    if (workload_.empty()) {
      self_.shapes.assign(1, r);
      self_.weights.assign(1, 1.0);
      return -(node_fragmentation_after(c, id, r, self_) - node_fragmentation(c, id, self_));
    }
    const Node& n = c.node(id);
    if (n.gpus > kCachedGpus) return -(node_fragmentation_after(c, id, r, workload_) - node_fragmentation(c, id, workload_));
    // Memo by (node state fingerprint, request): nodes in identical states score a request
    // identically, and clusters have many of them.
    if (!(r == last_shape_)) {
      last_shape_ = r;
      auto [it, inserted] = shape_ids_.emplace(shape_key(r), std::uint32_t(shape_ids_.size() + 1));
      last_shape_id_ = it->second;
    }
    const std::uint64_t memo_key = n.state_fingerprint() ^ Node::mix64(last_shape_id_);
    if (auto it = memo_.find(memo_key); it != memo_.end()) return it->second;
    State before = state_of(n, c.gpu_free_begin(id), n.free.cpu_milli, n.free.mem_mib);
    // The state after placing r with Cluster::allocate's GPU choice (best fit per GPU).
    std::int32_t g[kCachedGpus];
    libsched::detail::free_after(c.gpu_free_begin(id), n.gpus, r, g);
    State after = state_of(n, g, n.free.cpu_milli - r.cpu_milli, n.free.mem_mib - r.mem_mib);
    double sc = -(frag(after) - frag(before));
    if (memo_.size() > (1u << 20)) memo_.clear();
    memo_.emplace(memo_key, sc);
    return sc;
  }

 private:
  static constexpr int kCachedGpus = 16;
  struct State {
    std::int64_t cpu = 0, mem = 0;
    std::int32_t model = -1;
    std::int32_t gpus = 0;
    std::array<std::int16_t, kCachedGpus> free{};   // sorted descending
    friend bool operator==(const State&, const State&) = default;
  };
  struct StateHash {
    std::size_t operator()(const State& s) const noexcept {
      std::uint64_t h = 1469598103934665603ull;
      auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
      mix(std::uint64_t(s.cpu));
      mix(std::uint64_t(s.mem));
      mix(std::uint64_t(std::int64_t(s.model)));
      for (int i = 0; i < s.gpus; ++i) mix(std::uint64_t(std::uint16_t(s.free[std::size_t(i)])));
      return std::size_t(h ^ (h >> 32));
    }
  };
  static State state_of(const Node& n, const std::int32_t* g, std::int64_t cpu, std::int64_t mem) {
    State s;
    s.cpu = cpu;
    s.mem = mem;
    s.model = n.model;
    s.gpus = n.gpus;
    for (int i = 0; i < n.gpus; ++i) s.free[std::size_t(i)] = std::int16_t(g[i]);
    std::sort(s.free.begin(), s.free.begin() + n.gpus, std::greater<>());
    return s;
  }
  double frag(const State& s) {
    auto it = cache_.find(s);
    if (it != cache_.end()) return it->second;
    std::int32_t g[kCachedGpus];
    for (int i = 0; i < s.gpus; ++i) g[i] = s.free[std::size_t(i)];
    double f = 0;
    for (std::size_t k = 0; k < workload_.shapes.size(); ++k)
      f += workload_.weights[k] * libsched::detail::fragment_for(s.model, s.cpu, s.mem, g, s.gpus, workload_.shapes[k]);
    if (cache_.size() > (1u << 20)) cache_.clear();
    cache_.emplace(s, f);
    return f;
  }

  static std::string shape_key(const ReplicaShape& r) {
    return std::to_string(r.num_gpu) + ',' + std::to_string(r.gpu_milli) + ',' + std::to_string(r.cpu_milli) + ',' +
           std::to_string(r.mem_mib) + ',' + std::to_string(r.models);
  }
  WorkloadDistribution workload_;
  WorkloadDistribution self_;
  std::unordered_map<State, double, StateHash> cache_;
  std::unordered_map<std::uint64_t, double> memo_;
  std::map<std::string, std::uint32_t> shape_ids_;
  ReplicaShape last_shape_{-1, 0, 0, 0, 0};
  std::uint32_t last_shape_id_ = 0;
};

/// fastest-model (GPU heterogeneity, Gavel, Narayanan et al., OSDI'20): the feasible node
/// whose GPU model runs the task fastest (TaskSpec::speed_on; models it does not list: 1.0),
/// then best-fit among nodes of equal speed (least free GPU left, then vCPU), then the lowest
/// id. The rule is lexicographic, so it is stated in pick_by_rule (one pass over the nodes, the
/// reference); pick_grouped finds the same node over the node groups (speed and leftover depend
/// only on a group's state: its GPU model and free capacity). score() is the speed alone. Reads
/// the task: shape_only() is false.
class FastestModel final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "fastest-model"; }
  using PlacementPolicy::score;
  double score(const Cluster& c, NodeId id, const ReplicaRequest& r) override { return speed(c, id, r.task); }
  std::optional<NodeId> pick_by_rule(const Cluster& c, const ReplicaRequest& q, const NodeCheck& check) override {
    NodeId best;
    double best_speed = 0, best_left = 0;
    for (std::size_t i = 0, n = c.size(); i < n; ++i) {
      NodeId id(static_cast<std::int32_t>(i));
      if (!c.fits(id, q.shape) || !check.node_ok(id)) continue;
      const double sp = speed(c, id, q.task);
      const double left = detail::leftover(c, id, q.shape);
      if (!best.valid() || sp > best_speed || (sp == best_speed && left < best_left)) {
        best = id;
        best_speed = sp;
        best_left = left;
      }
    }
    return best;
  }
  std::optional<NodeGroupOptions> node_groups() const override { return NodeGroupOptions{}; }
  NodeId pick_grouped(const Cluster& c, const ReplicaRequest& q, const NodeCheck& check) override {
    NodeId best;
    double best_speed = 0, best_left = 0;
    for (const NodeGroup& g : c.node_groups()) {
      if (g.ids.empty()) continue;
      const NodeId rep(*g.ids.begin());
      if (!c.fits(rep, q.shape) || !check.group_ok(rep)) continue;
      const double sp = speed(c, rep, q.task);
      const double left = detail::leftover(c, rep, q.shape);
      std::int32_t bound = std::numeric_limits<std::int32_t>::max();
      if (best.valid()) {
        if (sp == best_speed && left == best_left) bound = best.value;  // a tie: only a lower id wins
        else if (!(sp > best_speed || (sp == best_speed && left < best_left))) continue;
      }
      const NodeId m = detail::first_eligible(g, GroupScope{}, check, bound);
      if (m.valid()) {
        best = m;
        best_speed = sp;
        best_left = left;
      }
    }
    return best;
  }

 private:
  static double speed(const Cluster& c, NodeId id, const TaskSpec& t) {
    if (t.gpu_speed.empty()) return 1.0;
    const std::int32_t m = c.node(id).model;
    return m < 0 ? 1.0 : t.speed_on(c.models()[std::size_t(m)]);
  }
};

}  // namespace libsched::placement
