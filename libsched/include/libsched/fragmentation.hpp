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
/// F_n(m) on a node described by its model, free CPU/memory and per-GPU free array.
inline double fragment_for(std::int32_t model, std::int64_t free_cpu, std::int64_t free_mem,
                           const std::int32_t* gpu_free, std::int32_t gpus, const ReplicaShape& m) {
  std::int64_t total = 0;
  for (std::int32_t i = 0; i < gpus; ++i) total += gpu_free[i];
  if (total == 0) return 0;
  bool model_ok = m.num_gpu == 0 || (model >= 0 && (m.models == 0 || (m.models >> model) & 1u));
  if (m.cpu_milli > free_cpu || m.mem_mib > free_mem || !model_ok) return double(total);
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
    for (std::size_t i = 0; i < c.size(); ++i) {
      node_[i] = node_fragmentation(c, NodeId(std::int32_t(i)), w_);
      total_ += node_[i];
    }
  }
  /// Recomputes the nodes in `changed` (nodes added since construction included).
  void update(const Cluster& c, const std::vector<NodeId>& changed) {
    if (node_.size() < c.size()) node_.resize(c.size(), 0.0);
    for (NodeId n : changed) {
      double f = node_fragmentation(c, n, w_);
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

 private:
  WorkloadDistribution w_;
  std::vector<double> node_;
  double total_ = 0;
};

}  // namespace libsched
