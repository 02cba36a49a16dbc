// libsched::detail::FitTree: the first-fit search tree of Cluster::keep_fit_tree. A max-tree
// over node ids of each node's free vCPU, memory, milli-GPU, whole free GPUs and largest free
// share of one GPU (a node that takes no replica counts as nothing free), so the lowest id from
// some id on that may fit a replica is found in O(log N), jumping over full nodes.
//
// Layout: a heap, leaves at [leaves, 2 x leaves), internal node k = element-wise max of 2k and
// 2k + 1; padding leaves hold -1 everywhere and never pass. Updates are O(log N).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "libsched/node.hpp"

namespace libsched::detail {

class FitTree {
 public:
  /// What a subtree may offer: the maxima over its nodes (milli-vCPU, MiB, milli-GPU, whole
  /// free GPUs, largest free share of one GPU in milli-GPU).
  struct Key {
    std::int64_t cpu_milli = -1, mem_mib = -1, gpu_milli = -1;
    std::int32_t full_free_gpus = -1, max_gpu_free = -1;
  };

  /// Node `n`'s leaf; `gpu_free` points at its per-GPU free milli-GPU (n.gpus entries).
  static Key leaf(const Node& n, const std::int32_t* gpu_free) {
    if (!n.up || n.drained || n.removed) return Key{};
    Key k{n.free.cpu_milli, n.free.mem_mib, n.free.gpu_milli, n.full_free_gpus, 0};
    for (std::int32_t j = 0; j < n.gpus; ++j) k.max_gpu_free = std::max(k.max_gpu_free, gpu_free[j]);
    return k;
  }

  /// Empties the tree (no node).
  void clear() {
    tree_.clear();
    leaves_ = 0;
  }
  /// Builds the tree over nodes 0 .. n - 1, `leaf_of(i)` giving node i's Key. O(n).
  template <class LeafOf>
  void build(std::size_t n, LeafOf&& leaf_of) {
    leaves_ = 1;
    while (leaves_ < n) leaves_ *= 2;
    tree_.assign(2 * leaves_, Key{});
    for (std::size_t i = 0; i < n; ++i) tree_[leaves_ + i] = leaf_of(i);
    for (std::size_t k = leaves_; k-- > 1;) tree_[k] = max(tree_[2 * k], tree_[2 * k + 1]);
  }
  /// Sets node i's leaf (i below the n of the last build) and the maxima above it. O(log N).
  void update(std::size_t i, const Key& leaf) {
    std::size_t k = leaves_ + i;
    tree_[k] = leaf;
    for (k >>= 1; k >= 1; k >>= 1) tree_[k] = max(tree_[2 * k], tree_[2 * k + 1]);
  }
  /// The lowest node id >= `from` whose leaf passes the necessary conditions for replica `r`
  /// (vCPU, memory, milli-GPU, whole GPUs or the largest share), or `size` (the n of the last
  /// build) when none.
  std::size_t first_candidate(std::size_t from, std::size_t size, const ReplicaShape& r) const {
    if (from >= size) return size;
    auto ok = [&r](const Key& v) {
      if (v.cpu_milli < r.cpu_milli || v.mem_mib < r.mem_mib) return false;
      if (r.num_gpu == 0) return true;
      if (v.gpu_milli < r.total_gpu_milli()) return false;
      return r.gpu_milli >= kMilliPerGpu ? v.full_free_gpus >= r.num_gpu : v.max_gpu_free >= r.gpu_milli;
    };
    // From leaf `from`: a subtree whose maxima pass is descended (left child first); one that
    // fails, or whose children both fail, is left for the next subtree on its right.
    std::size_t i = leaves_ + from;
    while (true) {
      if (ok(tree_[i])) {
        while (i < leaves_) {
          if (ok(tree_[2 * i])) i = 2 * i;
          else if (ok(tree_[2 * i + 1])) i = 2 * i + 1;
          else break;
        }
        if (i >= leaves_) return i - leaves_;  // padding leaves never pass
      }
      while (i & 1) {  // a right child (or the root): the next ids are right of its parent
        i >>= 1;
        if (i == 0) return size;
      }
      ++i;
    }
  }

 private:
  static Key max(const Key& a, const Key& b) {
    return {std::max(a.cpu_milli, b.cpu_milli), std::max(a.mem_mib, b.mem_mib), std::max(a.gpu_milli, b.gpu_milli),
            std::max(a.full_free_gpus, b.full_free_gpus), std::max(a.max_gpu_free, b.max_gpu_free)};
  }
  std::vector<Key> tree_;
  std::size_t leaves_ = 0;
};

}  // namespace libsched::detail
