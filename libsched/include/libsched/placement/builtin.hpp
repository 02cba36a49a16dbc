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

/// random: a uniformly random feasible node, seeded. The score is a pure function of
/// (seed, node id, the node's free capacity, the request, the replica's index in the gang),
/// hashed with splitmix64 into [0, 1): so for a given cluster state every feasible node is
/// equally likely to win across seeds, a seed always gives the same decisions, and calls that
/// only look (explain(), backfill reservations, rolled-back trials) never perturb later
/// decisions, which a stateful generator (one draw per score() call) would.
/// Cost: a full scan, O(nodes) per replica. The score depends on the request and the replica's
/// index, so node groups cannot keep their members in a fixed rank order; a node-state-only
/// rank (which would make it O(groups)) makes consecutive decisions pick the same next node,
/// a first-fit over a random order that packs like a scoring policy (docs/scheduler.md).
class Random final : public ShapeScore<Random> {
 public:
  explicit Random(std::uint64_t seed) : seed_(seed) {}
  std::string_view name() const override { return "random"; }
  void begin_gang(const Cluster&) override { index_ = 0; }
  void replica_placed(const Cluster&, const ReplicaAllocation&) override { ++index_; }
  double score(const Cluster& c, NodeId id, const ReplicaShape& r) override {
    const Node& n = c.node(id);
    std::uint64_t h = mix(seed_ ^ 0x5bd1e995u);
    for (std::uint64_t v : {std::uint64_t(id.value), std::uint64_t(n.free.gpu_milli), std::uint64_t(n.free.cpu_milli),
                            std::uint64_t(n.free.mem_mib), std::uint64_t(r.num_gpu), std::uint64_t(r.gpu_milli),
                            std::uint64_t(r.cpu_milli), std::uint64_t(r.mem_mib), index_})
      h = mix(h ^ v);
    return double(h >> 11) * 0x1.0p-53;
  }

 private:
  static std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  std::uint64_t seed_;
  std::uint64_t index_ = 0;
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

}  // namespace libsched::placement
