// GPU fragmentation measured against the workload's distribution of requests, as in
// Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
// Gradient Descent", USENIX ATC'23 (FGD), Sec. 3.
//
// For one task type m (a ReplicaShape) and one node n:
//   F_n(m) = all free milli-GPU of n                     if m cannot run on n at all
//                                                       (CPU, memory, model, too few usable GPUs)
//          = sum of free_g over GPUs g with free_g < m.gpu_milli   otherwise
//   (a CPU-only m that fits fragments nothing: F_n(m) = 0).
// For the workload M = {(m, p_m)} with popularity p_m (sum 1): F_n(M) = sum_m p_m F_n(m).
// Cluster fragmentation is the sum over nodes. Units: milli-GPU.
//
// Example: node with 8 GPUs free (1000,1000,500,0,...); m = 1 x 1000: F = 500 (the half GPU);
// m = 4 x 1000: only 2 whole GPUs, m cannot run, F = 2500.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "libsched/cluster.hpp"

namespace libsched {

/// The workload's distribution of replica shapes (task types) with popularity weights summing
/// to 1. Built from the shapes of the tasks of a trace or scenario.
struct WorkloadDistribution {
  std::vector<ReplicaShape> shapes;
  std::vector<double> weights;

  bool empty() const { return shapes.empty(); }

  /// Aggregates identical shapes and normalises counts into popularity.
  static WorkloadDistribution from_shapes(const std::vector<ReplicaShape>& all) {
    std::vector<std::pair<ReplicaShape, std::size_t>> counted;
    counted.reserve(all.size());
    for (const auto& s : all) counted.emplace_back(s, 1);
    return from_counts(counted);
  }
  /// The same from (shape, number of replicas) pairs, a shape possibly in several pairs (a
  /// gang's workers counted at once instead of listed one by one).
  static WorkloadDistribution from_counts(const std::vector<std::pair<ReplicaShape, std::size_t>>& counted) {
    std::map<std::tuple<std::int32_t, std::int32_t, std::int64_t, std::int64_t, ModelMask>, std::size_t> count;
    std::size_t total = 0;
    for (const auto& [s, n] : counted) {
      if (n == 0) continue;
      count[{s.num_gpu, s.gpu_milli, s.cpu_milli, s.mem_mib, s.models}] += n;
      total += n;
    }
    WorkloadDistribution d;
    for (const auto& [k, c] : count) {
      auto [g, m, cpu, mem, models] = k;
      d.shapes.push_back(ReplicaShape{g, m, cpu, mem, models});
      d.weights.push_back(double(c) / double(total));
    }
    return d;
  }
};

namespace detail {
/// Can task type `m` not run on a node of GPU model `model` (-1: none) with `free_cpu`
/// milli-vCPU and `free_mem` MiB free, whatever its GPUs (vCPU, memory or model)? Then F_n(m)
/// is all the node's free milli-GPU.
inline bool shape_excluded(std::int32_t model, std::int64_t free_cpu, std::int64_t free_mem, const ReplicaShape& m) {
  const bool model_ok = m.num_gpu == 0 || (model >= 0 && (m.models == 0 || (m.models >> model) & 1u));
  return m.cpu_milli > free_cpu || m.mem_mib > free_mem || !model_ok;
}
/// F_n(m) on a node described by its model, free CPU/memory and per-GPU free array.
inline double fragment_for(std::int32_t model, std::int64_t free_cpu, std::int64_t free_mem,
                           const std::int32_t* gpu_free, std::int32_t gpus, const ReplicaShape& m) {
  std::int64_t total = 0;
  for (std::int32_t i = 0; i < gpus; ++i) total += gpu_free[i];
  if (total == 0) return 0;
  if (shape_excluded(model, free_cpu, free_mem, m)) return double(total);
  if (m.num_gpu == 0) return 0;
  std::int64_t frag = 0;
  std::int32_t usable = 0;
  for (std::int32_t i = 0; i < gpus; ++i) {
    if (gpu_free[i] >= m.gpu_milli) ++usable;
    else frag += gpu_free[i];
  }
  if (usable < m.num_gpu) return double(total);
  return double(frag);
}
}  // namespace detail

/// F_n(M) of node `id` now, in milli-GPU. Down nodes count like up ones.
inline double node_fragmentation(const Cluster& c, NodeId id, const WorkloadDistribution& w) {
  const Node& n = c.node(id);
  double f = 0;
  for (std::size_t k = 0; k < w.shapes.size(); ++k)
    f += w.weights[k] * detail::fragment_for(n.model, n.free.cpu_milli, n.free.mem_mib, c.gpu_free_begin(id), n.gpus, w.shapes[k]);
  return f;
}

/// F_n(M) of node `id` if `r` were placed on it (same GPU choice as Cluster::allocate).
/// Precondition: c.fits(id, r). O(GPUs x |M|).
inline double node_fragmentation_after(const Cluster& c, NodeId id, const ReplicaShape& r, const WorkloadDistribution& w) {
  const Node& n = c.node(id);
  std::int32_t g[kMaxGpusPerNode];
  detail::free_after(c.gpu_free_begin(id), n.gpus, r, g);
  double f = 0;
  for (std::size_t k = 0; k < w.shapes.size(); ++k)
    f += w.weights[k] * detail::fragment_for(n.model, n.free.cpu_milli - r.cpu_milli, n.free.mem_mib - r.mem_mib, g, n.gpus, w.shapes[k]);
  return f;
}

/// Cluster fragmentation: sum of F_n(M) over all nodes, in milli-GPU.
inline double cluster_fragmentation(const Cluster& c, const WorkloadDistribution& w) {
  double f = 0;
  for (std::size_t i = 0; i < c.size(); ++i) f += node_fragmentation(c, NodeId(std::int32_t(i)), w);
  return f;
}

/// Cluster fragmentation kept up to date incrementally: F_n(M) per node, recomputed only for
/// the nodes reported changed (Cluster::take_changed). O(changed nodes x |M| x GPUs) per update.
class FragmentationTracker {
 public:
  FragmentationTracker(const Cluster& c, WorkloadDistribution w) : w_(std::move(w)), node_(c.size(), 0.0) {
    for (const auto& m : w_.shapes) milli_.push_back(m.gpu_milli);
    std::sort(milli_.begin(), milli_.end());
    milli_.erase(std::unique(milli_.begin(), milli_.end()), milli_.end());
    for (const auto& m : w_.shapes)
      threshold_of_.push_back(std::size_t(std::lower_bound(milli_.begin(), milli_.end(), m.gpu_milli) - milli_.begin()));
    usable_.resize(milli_.size());
    below_.resize(milli_.size());
    for (std::size_t i = 0; i < c.size(); ++i) {
      node_[i] = node_fragmentation(c, NodeId(std::int32_t(i)), w_);
      total_ += node_[i];
    }
  }
  /// Recomputes the nodes in `changed` (nodes added since construction included). A node whose
  /// free vCPU, memory and per-GPU free milli are those of its last computation keeps its value
  /// (the same inputs give the same F_n(M)): a preemption search releases victims and rolls
  /// them back, which reports nodes changed that end as they were.
  void update(const Cluster& c, const std::vector<NodeId>& changed) {
    if (node_.size() < c.size()) node_.resize(c.size(), 0.0);
    if (seen_.size() < c.size()) seen_.resize(c.size());
    for (NodeId n : changed) {
      // A node without GPUs (a CPU cluster's, a removed node's) has F_n(M) = 0: nothing to
      // compute once its value is 0 (the sum then adds +0.0 - +0.0, which changes nothing).
      if (c.node(n).gpus == 0 && node_[n.index()] == 0.0) continue;
      if (same_as_seen(c, n)) continue;
      double f = fast_node_fragmentation(c, n);
      total_ += f - node_[n.index()];
      node_[n.index()] = f;
    }
  }
  /// Sum over nodes of F_n(M), milli-GPU (re-summed on demand to avoid drift).
  double total() const {
    double s = 0;
    for (double f : node_) s += f;
    return s;
  }
  /// Running total (may drift by rounding over millions of updates; total() is exact).
  double running_total() const { return total_; }
  const WorkloadDistribution& workload() const { return w_; }
  /// Whether update() looks a node's F_n(M) up by its inputs (a memo of the values computed
  /// before: nodes of one kind pass through the same states) or always computes it (for tests).
  /// The same values either way.
  void set_memo(bool on) { memo_on_ = on; }
  /// How many times the memo filled up and started again (for tests).
  std::size_t memo_restarts() const { return memo_restarts_; }

 private:
  /// A node's inputs at its last computation by update(): free vCPU and memory, its GPU count
  /// and (in seen_gpu_ from `at`) each GPU's free milli. `slots` GPUs reserved there.
  struct Seen {
    std::int64_t cpu = -1, mem = -1;
    std::int32_t gpus = -1;  ///< -1: never computed by update()
    std::int32_t slots = 0;
    std::size_t at = 0;
  };
  /// True when node `id`'s inputs equal those of its last computation; else records them.
  bool same_as_seen(const Cluster& c, NodeId id) {
    const Node& n = c.node(id);
    const std::int32_t* g = c.gpu_free_begin(id);
    Seen& s = seen_[id.index()];
    if (s.gpus == n.gpus && s.cpu == n.free.cpu_milli && s.mem == n.free.mem_mib &&
        std::equal(g, g + n.gpus, seen_gpu_.begin() + std::ptrdiff_t(s.at)))
      return true;
    if (n.gpus > s.slots) {
      s.at = seen_gpu_.size();
      s.slots = n.gpus;
      seen_gpu_.resize(seen_gpu_.size() + std::size_t(n.gpus));
    }
    std::copy(g, g + n.gpus, seen_gpu_.begin() + std::ptrdiff_t(s.at));
    s.gpus = n.gpus;
    s.cpu = n.free.cpu_milli;
    s.mem = n.free.mem_mib;
    return false;
  }
  /// node_fragmentation(c, id, w_), the same double: every F_n(m) is the same integer and the
  /// weighted sum is added in the same order. The GPU frees are sorted once per node and swept
  /// once along the distinct gpu_milli of the shapes (ascending): at each, the GPUs with at
  /// least that much free and the free milli-GPU of the others. O(GPUs log GPUs + |M|).
  double fast_node_fragmentation(const Cluster& c, NodeId id) {
    const Node& n = c.node(id);
    const std::int32_t* g = c.gpu_free_begin(id);
    std::int32_t v[kMaxGpusPerNode];
    std::int64_t total = 0;
    for (std::int32_t i = 0; i < n.gpus; ++i) total += v[i] = g[i];
    if (total == 0) return 0.0;  // every F_n(m) is 0 (a sum of weights x 0: +0.0)
    std::sort(v, v + n.gpus);
    MemoSlot* slot = nullptr;
    if (memo_on_ && n.gpus <= kMemoGpus) {
      // The memo: F_n(M) is a function of (model, free vCPU, free memory, the sorted frees).
      std::uint64_t h = std::uint64_t(n.free.cpu_milli) * 0x9E3779B97F4A7C15ull;
      h = (h ^ std::uint64_t(n.free.mem_mib)) * 0xC2B2AE3D27D4EB4Full;
      h = (h ^ std::uint64_t(std::uint32_t(n.model)) ^ (std::uint64_t(std::uint32_t(n.gpus)) << 32)) * 0x165667B19E3779F9ull;
      for (std::int32_t i = 0; i < n.gpus; ++i) h = (h ^ std::uint64_t(std::uint32_t(v[i]))) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 31;
      h |= 1;  // 0 marks a free slot
      if (memo_.empty()) memo_.resize(kMemoSlots);
      for (std::size_t i = std::size_t(h) & (kMemoSlots - 1);; i = (i + 1) & (kMemoSlots - 1)) {
        MemoSlot& m = memo_[i];
        if (m.hash == 0) {
          slot = &m;
          break;
        }
        if (m.hash == h && m.cpu == n.free.cpu_milli && m.mem == n.free.mem_mib && m.model == n.model && m.gpus == n.gpus &&
            std::equal(v, v + n.gpus, m.v))
          return m.f;
      }
      if (memo_used_ == kMemoSlots / 2) {  // half full: start again (the values do not depend on it)
        std::fill(memo_.begin(), memo_.end(), MemoSlot{});
        memo_used_ = 0;
        ++memo_restarts_;
        slot = &memo_[std::size_t(h) & (kMemoSlots - 1)];
      }
      ++memo_used_;
      slot->hash = h;
      slot->cpu = n.free.cpu_milli;
      slot->mem = n.free.mem_mib;
      slot->model = n.model;
      slot->gpus = n.gpus;
      std::copy(v, v + n.gpus, slot->v);
    }
    std::int32_t p = 0;  // v[0, p) < milli_[t]
    std::int64_t below = 0;
    for (std::size_t t = 0; t < milli_.size(); ++t) {
      while (p < n.gpus && v[p] < milli_[t]) below += v[p++];
      usable_[t] = n.gpus - p;
      below_[t] = below;
    }
    double f = 0;
    for (std::size_t k = 0; k < w_.shapes.size(); ++k) {
      const ReplicaShape& m = w_.shapes[k];
      std::int64_t x;  // F_n(m), as detail::fragment_for
      if (detail::shape_excluded(n.model, n.free.cpu_milli, n.free.mem_mib, m)) x = total;
      else if (m.num_gpu == 0) x = 0;
      else if (usable_[threshold_of_[k]] < m.num_gpu) x = total;
      else x = below_[threshold_of_[k]];
      f += w_.weights[k] * double(x);
    }
    if (slot) slot->f = f;
    return f;
  }

  /// The memo of fast_node_fragmentation (nodes of up to kMemoGpus GPUs): open addressing,
  /// linear probing, emptied when half full. A node's inputs as hashed and compared in full.
  static constexpr std::int32_t kMemoGpus = 8;
  static constexpr std::size_t kMemoSlots = std::size_t(1) << 15;
  struct MemoSlot {
    std::uint64_t hash = 0;  ///< 0: free
    std::int64_t cpu = 0, mem = 0;
    std::int32_t model = 0, gpus = 0;
    std::int32_t v[kMemoGpus] = {};  ///< the sorted per-GPU free milli
    double f = 0;
  };
  std::vector<MemoSlot> memo_;
  std::size_t memo_used_ = 0, memo_restarts_ = 0;
  bool memo_on_ = true;

  WorkloadDistribution w_;
  std::vector<double> node_;
  double total_ = 0;
  std::vector<std::int32_t> milli_;         ///< the distinct gpu_milli of the shapes, ascending
  std::vector<std::size_t> threshold_of_;   ///< per shape: its index in milli_
  std::vector<std::int32_t> usable_;        ///< scratch, per milli_: GPUs with at least that much free
  std::vector<std::int64_t> below_;         ///< scratch, per milli_: free milli-GPU of the GPUs with less
  std::vector<Seen> seen_;                  ///< per node (update())
  std::vector<std::int32_t> seen_gpu_;      ///< the per-GPU free milli of seen_
};

}  // namespace libsched
