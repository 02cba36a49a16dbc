// The cluster's value types (cluster.hpp holds the Cluster itself): what a replica asks for
// (ReplicaShape) and holds (ReplicaAllocation), a node's description (NodeDesc) and state (Node),
// pools, how a replica's GPUs are chosen on a node (detail::choose_gpus), and the node groups:
// schedulable nodes of equal state, which fit and the state-only placement scores cannot tell
// apart (NodeGroupKey, NodeGroup). docs/platform.md "Entities"; docs/scheduler.md "Placement".
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "libsched/ids.hpp"
#include "libsched/resources.hpp"

namespace libsched {

/// Bit set over GPU models interned in a Cluster (at most 64 models). 0 means "any model".
using ModelMask = std::uint64_t;
inline constexpr int kMaxGpuModels = 64;
/// At most 64 GPUs per node (a replica's GPUs are a 64-bit mask).
inline constexpr int kMaxGpusPerNode = 64;
inline constexpr std::int32_t kMilliPerGpu = 1000;

enum class PoolKind : std::uint8_t { shared, dedicated };

/// What one replica (one pod) asks for; it must fit on one node.
/// `num_gpu` GPUs of `gpu_milli` each (1000 = whole GPUs; < 1000 only with num_gpu == 1, a
/// GPU share as in the Alibaba 2023 trace), plus CPU and memory. `models` restricts the GPU
/// model (0 = any; ignored when num_gpu == 0).
struct ReplicaShape {
  std::int32_t num_gpu = 0;
  std::int32_t gpu_milli = kMilliPerGpu;
  std::int64_t cpu_milli = 0;
  std::int64_t mem_mib = 0;
  ModelMask models = 0;

  constexpr std::int64_t total_gpu_milli() const { return std::int64_t(num_gpu) * gpu_milli; }
  constexpr Resources resources() const { return {total_gpu_milli(), cpu_milli, mem_mib}; }
  friend constexpr bool operator==(const ReplicaShape&, const ReplicaShape&) = default;
};

/// Number of GPUs in a replica's GPU mask. std::popcount compiles to a libgcc call on the
/// baseline x86-64 target (no POPCNT instruction); masks are mostly 0 (CPU-only replicas) or
/// a few bits, so this clears one bit per GPU inline instead (O(GPUs), at most 64).
constexpr int gpu_count(std::uint64_t mask) {
  int n = 0;
  for (; mask; mask &= mask - 1) ++n;
  return n;
}

/// What a replica holds on its node: which GPUs (bit i = GPU i of the node), how much of each,
/// and CPU and memory. Produced by Cluster::allocate, given back to Cluster::release.
struct ReplicaAllocation {
  NodeId node;
  std::uint64_t gpu_mask = 0;
  std::int32_t gpu_milli = 0;   ///< per GPU in gpu_mask
  std::int64_t cpu_milli = 0;
  std::int64_t mem_mib = 0;

  std::int64_t total_gpu_milli() const { return std::int64_t(gpu_count(gpu_mask)) * gpu_milli; }
  Resources resources() const { return {total_gpu_milli(), cpu_milli, mem_mib}; }
};

/// Static description of a node, as given to Cluster::add_node.
struct NodeDesc {
  std::string name;
  PoolId pool;
  std::string gpu_model;        ///< empty: CPU-only node
  std::int32_t gpus = 0;
  std::int64_t cpu_milli = 0;
  std::int64_t mem_mib = 0;
  std::int32_t rack = 0;        ///< topology domain ids (see placement/topology)
  std::int32_t switch_id = 0;
  std::map<std::string, std::string> labels;
};

/// One node: its description and its dynamic accounting.
struct Node {
  std::string name;
  PoolId pool;
  std::int32_t model = -1;      ///< interned GPU model, -1 for CPU-only
  std::int32_t gpus = 0;
  Resources capacity;
  Resources free;
  std::int32_t rack = 0;
  std::int32_t switch_id = 0;
  bool up = true;
  bool drained = false;         ///< cordoned: takes no new replica; what runs on it stays (set_drained)
  bool removed = false;         ///< tombstone of a removed node: down, zero capacity (remove_node)
  std::uint32_t gpu_offset = 0; ///< first GPU of this node in Cluster's per-GPU array
  std::int32_t full_free_gpus = 0;  ///< GPUs with all 1000 milli free
  std::uint32_t version = 0;        ///< bumped at every change of free capacity or up/down state
  std::uint64_t gpu_state = 0;      ///< sum of mix(free milli) over GPUs: a hash of the multiset of per-GPU free

  /// A 64-bit fingerprint of what fragmentation and fit depend on: model, free vCPU, free
  /// memory and the multiset of per-GPU free milli-GPU. Equal states give equal fingerprints.
  std::uint64_t state_fingerprint() const {
    return gpu_state ^ mix64(std::uint64_t(free.cpu_milli) * 0x9E3779B97F4A7C15ull ^ std::uint64_t(free.mem_mib) << 20 ^
                             std::uint64_t(std::int64_t(model)) << 56 ^ std::uint64_t(gpus) << 48);
  }
  /// splitmix64 finaliser.
  static constexpr std::uint64_t mix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  /// Last time the non-idle (owners') allocation on this node changed; idle stability uses
  /// now - this as the fragment's expected remaining idle time. Starts "long ago".
  Time last_owner_change = -kTimeNever / 2;
  std::map<std::string, std::string> labels;
};

struct Pool {
  std::string name;
  PoolKind kind = PoolKind::shared;
};

namespace detail {
/// The GPUs a replica takes on a node whose per-GPU free milli-GPU is `g[0..gpus)`: whole-GPU
/// replicas take the lowest-index fully free GPUs; a share takes the GPU with the least free
/// milli-GPU that still fits it (best fit per GPU; ties to the lowest index). Returns the GPU
/// mask, or nullopt when the replica does not fit. O(num_gpu x gpus).
inline std::optional<std::uint64_t> choose_gpus(const std::int32_t* g, std::int32_t gpus, const ReplicaShape& r) {
  std::uint64_t mask = 0;
  for (std::int32_t k = 0; k < r.num_gpu; ++k) {
    int best = -1;
    for (int i = 0; i < gpus; ++i) {
      if ((mask >> i) & 1u || g[i] < r.gpu_milli) continue;
      if (best < 0 || g[i] < g[best]) best = i;
      if (r.gpu_milli >= kMilliPerGpu) break;
    }
    if (best < 0) return std::nullopt;
    mask |= std::uint64_t{1} << best;
  }
  return mask;
}
/// Copies a node's per-GPU free array into `out` and takes `r` from it as choose_gpus would.
inline void free_after(const std::int32_t* g, std::int32_t gpus, const ReplicaShape& r, std::int32_t* out) {
  std::copy(g, g + gpus, out);
  if (auto m = choose_gpus(g, gpus, r))
    for (std::uint64_t b = *m; b; b &= b - 1) out[std::countr_zero(b)] -= r.gpu_milli;
}
}  // namespace detail

/// What Cluster's node groups keep besides the members in id order (Cluster::enable_node_groups).
struct NodeGroupOptions {
  bool topology = false;          ///< members also by (switch, id) and by (switch, rack, id)
  bool ranked = false;            ///< members also in a sorted vector: the k-th member in O(1)
  friend bool operator==(const NodeGroupOptions&, const NodeGroupOptions&) = default;
};

/// The state that every node of a node group shares: pool, GPU model, GPU count, vCPU and
/// memory capacity, free vCPU and memory, and the multiset of per-GPU free milli-GPU (sorted
/// descending in `gpu_free[0..gpus)`, the rest 0). Whether a replica fits a schedulable node
/// (Cluster::fits), and every state-only score (dot-product, gpu-packing, gpu-clustering, fgd,
/// the leftover of best-fit), is a function of this key alone: the GPUs' order on the node
/// changes neither which GPUs' amounts are taken (detail::choose_gpus) nor any total.
struct NodeGroupKey {
  std::int32_t pool = -1;
  std::int32_t model = -1;
  std::int32_t gpus = 0;
  std::int64_t cpu_capacity = 0;
  std::int64_t mem_capacity = 0;
  std::int64_t cpu_free = 0;
  std::int64_t mem_free = 0;
  std::array<std::int16_t, kMaxGpusPerNode> gpu_free{};
  friend bool operator==(const NodeGroupKey&, const NodeGroupKey&) = default;
  struct Hash {
    std::size_t operator()(const NodeGroupKey& k) const noexcept {
      std::uint64_t h = 0x243F6A8885A308D3ull;
      auto add = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001B3ull; h ^= h >> 29; };
      add(std::uint64_t(k.pool) << 32 ^ std::uint32_t(k.model));
      add(std::uint64_t(k.gpus));
      add(std::uint64_t(k.cpu_capacity));
      add(std::uint64_t(k.mem_capacity));
      add(std::uint64_t(k.cpu_free));
      add(std::uint64_t(k.mem_free));
      for (int i = 0; i < k.gpus; ++i) add(std::uint64_t(std::uint16_t(k.gpu_free[std::size_t(i)])));
      return std::size_t(h);
    }
  };
};

/// One node group: the schedulable nodes (up, not drained, not removed) whose NodeGroupKey is
/// `key`. `ids` ascending; the other orders are kept only when NodeGroupOptions asks for them.
/// A slot whose `ids` is empty is unused (Cluster reuses it).
struct NodeGroup {
  NodeGroupKey key;
  std::set<std::int32_t> ids;
  std::set<std::pair<std::int32_t, std::int32_t>> by_switch;                    ///< (switch, id)
  std::set<std::tuple<std::int32_t, std::int32_t, std::int32_t>> by_rack;       ///< (switch, rack, id)
  /// The members ascending in a vector (NodeGroupOptions::ranked; the `random` placement's
  /// uniform draw): `ranked[k]` is the k-th lowest id in O(1); a member joins or leaves in
  /// O(log N) comparisons plus a move of the members above it (4 bytes each). Kept out of the
  /// Boost headers that a ranked tree would need (<libsched/libsched.hpp> includes none).
  std::vector<std::int32_t> ranked;
};

}  // namespace libsched
