// Cluster state: pools, nodes, each node's capacity and free capacity in every dimension, with
// each GPU's free milli-GPU (the value types of nodes, replicas and node groups: node.hpp; docs/platform.md
// "Entities"; the Alibaba 2023 trace asks for fractions of one GPU, and FGD reasons per GPU).
//
// Invariant, per node and dimension: free + used == capacity, 0 <= free <= capacity; per GPU
// 0 <= free_milli <= 1000. Allocation and release are O(GPUs per node), independent of the
// number of nodes. Every public function checks its preconditions and throws a typed error
// (libsched/errors.hpp) before changing anything.
//
// Node lifecycle: add_node at any time; set_up (down / up: a failure, a repair); set_drained
// (cordon: no new placement, what runs stays); remove_node (only when nothing is allocated on
// it). NodeIds are dense indices in insertion order and never reused: a removed node stays as a
// tombstone (`removed`, down, zero capacity, no GPUs, out of the free index), so every index
// kept by callers stays valid.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "libsched/detail/fit_tree.hpp"
#include "libsched/detail/free_order.hpp"
#include "libsched/errors.hpp"
#include "libsched/ids.hpp"
#include "libsched/node.hpp"
#include "libsched/resources.hpp"

namespace libsched {

/// The cluster: interned GPU models, pools and nodes with free capacity.
/// NodeIds are dense indices in insertion order, never reused (removed nodes are tombstones).
/// Not thread-safe: const member functions may run concurrently with each other, never with a
/// non-const one on the same Cluster; distinct Clusters are independent.
class Cluster {
 public:
  /// Interns a GPU model name; returns its index. Throws InvalidArgument past 64 models.
  std::int32_t intern_model(std::string_view model) {
    if (auto it = model_ids_.find(std::string(model)); it != model_ids_.end()) return it->second;
    if (models_.size() >= std::size_t(kMaxGpuModels))
      throw InvalidArgument("Cluster::intern_model: " + std::string(model) + ": more than 64 GPU models");
    auto id = std::int32_t(models_.size());
    models_.emplace_back(model);
    model_ids_.emplace(std::string(model), id);
    return id;
  }
  /// Index of a known model, or -1.
  std::int32_t find_model(std::string_view model) const {
    auto it = model_ids_.find(std::string(model));
    return it == model_ids_.end() ? -1 : it->second;
  }
  const std::vector<std::string>& models() const { return models_; }
  ModelMask model_bit(std::int32_t model) const { return model < 0 ? 0 : (ModelMask{1} << model); }

  /// Adds an empty pool. Throws InvalidArgument on a duplicate name.
  PoolId add_pool(std::string name, PoolKind kind) {
    if (find_pool(name).valid()) throw InvalidArgument("Cluster::add_pool: duplicate pool " + name);
    pools_.push_back(Pool{std::move(name), kind});
    return PoolId(std::int32_t(pools_.size() - 1));
  }
  PoolId find_pool(std::string_view name) const {
    for (std::size_t i = 0; i < pools_.size(); ++i)
      if (pools_[i].name == name) return PoolId(std::int32_t(i));
    return PoolId();
  }
  /// Throws UnknownPool for an id that is not a pool of this cluster.
  const Pool& pool(PoolId id) const {
    check_pool(id, "Cluster::pool");
    return pools_[id.index()];
  }
  const std::vector<Pool>& pools() const { return pools_; }

  /// Adds a node (all free, up, not drained) with the next id; reported by take_changed().
  /// Throws InvalidArgument on a duplicate name (of a node that is not removed), GPUs outside
  /// 0..64, negative vCPU or memory, or a 65th GPU model; UnknownPool on an unknown pool.
  NodeId add_node(const NodeDesc& d) {
    if (node_ids_.count(d.name)) throw InvalidArgument("Cluster::add_node: duplicate node " + d.name);
    check_pool(d.pool, "Cluster::add_node: node " + d.name);
    if (d.gpus < 0 || d.gpus > kMaxGpusPerNode)
      throw InvalidArgument("Cluster::add_node: node " + d.name + ": gpus " + std::to_string(d.gpus) + " out of 0..64");
    if (d.cpu_milli < 0 || d.mem_mib < 0)
      throw InvalidArgument("Cluster::add_node: node " + d.name + ": negative vCPU or memory");
    Node n;
    n.name = d.name;
    n.pool = d.pool;
    n.model = d.gpu_model.empty() ? -1 : intern_model(d.gpu_model);
    n.gpus = d.gpus;
    n.capacity = Resources{std::int64_t(d.gpus) * kMilliPerGpu, d.cpu_milli, d.mem_mib};
    n.free = n.capacity;
    n.rack = d.rack;
    n.switch_id = d.switch_id;
    n.gpu_offset = std::uint32_t(gpu_free_.size());
    n.full_free_gpus = d.gpus;
    n.gpu_state = std::uint64_t(d.gpus) * Node::mix64(kMilliPerGpu);
    n.labels = d.labels;
    gpu_free_.insert(gpu_free_.end(), std::size_t(d.gpus), kMilliPerGpu);
    NodeId id(std::int32_t(nodes_.size()));
    node_ids_.emplace(n.name, id);
    nodes_.push_back(std::move(n));
    total_ += nodes_.back().capacity;
    if (free_index_on_) order_in(id);
    up_capacity_ += nodes_.back().capacity;
    takes_(nodes_.back(), +1);
    changed_flag_.push_back(0);
    mark_changed(id);
    if (group_opts_) {
      node_group_.push_back(-1);
      group_in(id);
    }
    if (fit_tree_on_) build_fit_tree();  // the tree may need to grow
    ++schedulable_version_;
    return id;
  }

  /// Removes node `id`: it keeps its id and name as a tombstone (`removed`, down, zero
  /// capacity and GPUs, out of free_index()) and its name may be given to a new node. Reported
  /// by take_changed(). O(log N). Throws UnknownNode; InvalidState when something is still
  /// allocated on it (release it first) or it was removed already.
  void remove_node(NodeId id) {
    check_node(id, "Cluster::remove_node");
    Node& n = nodes_[id.index()];
    if (n.removed) throw InvalidState("Cluster::remove_node: node " + n.name + " was removed already");
    if (!(n.free == n.capacity)) throw InvalidState("Cluster::remove_node: replicas are still allocated on " + n.name);
    group_out(id);
    takes_(n, -1);
    if (free_index_on_) order_out(id);
    total_ -= n.capacity;
    if (n.up) up_capacity_ -= n.capacity;
    node_ids_.erase(n.name);
    n.up = false;
    n.drained = false;
    n.removed = true;
    n.capacity = n.free = Resources{};
    n.gpus = 0;
    n.full_free_gpus = 0;
    n.gpu_state = 0;
    mark_changed(id);
    fit_update(id);
    ++schedulable_version_;
  }

  /// Drains (cordons, `drained` true) or undrains node `id`: a drained node takes no new
  /// replica (fits() is false); replicas on it stay until released. Throws UnknownNode;
  /// InvalidState for a removed node.
  void set_drained(NodeId id, bool drained) {
    check_node(id, "Cluster::set_drained");
    if (nodes_[id.index()].removed) throw InvalidState("Cluster::set_drained: node " + nodes_[id.index()].name + " was removed");
    group_out(id);
    takes_(nodes_[id.index()], -1);
    nodes_[id.index()].drained = drained;
    ++schedulable_version_;
    takes_(nodes_[id.index()], +1);
    mark_changed(id);
    group_in(id);
    fit_update(id);
  }

  /// Moves on whenever a node is added or removed or its up or drained state is set: what
  /// depends only on which nodes take replicas (and their pools and models) stays valid while it
  /// does not change (Core::ReleaseSum).
  std::uint64_t schedulable_version() const { return schedulable_version_; }
  /// Number of node ids (removed nodes included).
  std::size_t size() const { return nodes_.size(); }
  /// Throws UnknownNode for an id that is not a node of this cluster.
  const Node& node(NodeId id) const {
    check_node(id, "Cluster::node");
    return nodes_[id.index()];
  }
  const std::vector<Node>& nodes() const { return nodes_; }
  NodeId find_node(std::string_view name) const {
    auto it = node_ids_.find(std::string(name));
    return it == node_ids_.end() ? NodeId() : it->second;
  }
  /// Sum of all nodes' capacity (up or down; removed nodes count zero).
  const Resources& total_capacity() const { return total_; }

  /// Key of the free-capacity index: (free milli-GPU, free milli-vCPU, node id).
  using FreeKey = std::tuple<std::int64_t, std::int64_t, std::int32_t>;
  /// Every node keyed by (free milli-GPU, free milli-vCPU, node id), ascending: lets best-fit /
  /// worst-fit visit nodes in leftover order and stop at the first feasible node. A copy of
  /// free_order()'s keys, made on the first call after a change (O(N)); the schedulers read
  /// free_order(). Not thread-safe on that first call.
  /// Throws InvalidState when the index is not kept (keep_free_index(false)).
  const std::set<FreeKey>& free_index() const {
    if (!free_index_on_) throw InvalidState("Cluster::free_index: the index is not kept (keep_free_index(false) was called)");
    flush_order();
    if (free_keys_stale_) {
      free_keys_ = free_order_.keys();
      free_keys_stale_ = false;
    }
    return free_keys_;
  }
  /// The nodes in free_index() order, in blocks that know their nodes' largest gpu_cap():
  /// FreeOrder::find_from skips blocks of nodes that cannot take a replica (O(log B + 64)
  /// upkeep per allocation or release, B = N / 64 to N / 128 blocks).
  /// Allocations and releases move their nodes in the order lazily: this call brings it up to
  /// date, so a reference kept across an allocation or release shows the order as of the call
  /// until free_order() is called again. Not thread-safe (the call may move nodes).
  /// Throws InvalidState when the index is not kept.
  const detail::FreeOrder& free_order() const {
    if (!free_index_on_) throw InvalidState("Cluster::free_order: the index is not kept (keep_free_index(false) was called)");
    flush_order();
    return free_order_;
  }
  /// GPU capability of node `n` (FreeOrder): 1000 x its fully free GPUs when it has one, else
  /// its largest free share of one GPU (milli-GPU). O(GPUs) when no GPU is fully free.
  std::int32_t gpu_cap(const Node& n) const {
    if (n.full_free_gpus > 0) return n.full_free_gpus * kMilliPerGpu;
    std::int32_t m = 0;
    const std::int32_t* g = gpu_free_.data() + n.gpu_offset;
    for (std::int32_t i = 0; i < n.gpus; ++i) m = std::max(m, g[i]);
    return m;
  }
  /// The gpu_cap() a node needs for replica `r` to fit (necessary; sufficient for whole GPUs
  /// and a single share as far as GPUs go): 1000 x GPUs for whole GPUs, else the share.
  static constexpr std::int32_t gpu_cap_need(const ReplicaShape& r) {
    return r.gpu_milli >= kMilliPerGpu ? r.num_gpu * kMilliPerGpu : r.gpu_milli;
  }
  /// Keep free_index() / free_order() up to date (the default), or not: a scheduler whose
  /// placement policy never reads them turns them off and saves two updates per allocation
  /// and release. Turning it on again rebuilds the order, O(N log N).
  void keep_free_index(bool on) {
    if (on == free_index_on_) return;
    flush_order();
    free_index_on_ = on;
    free_order_.clear();
    free_keys_stale_ = true;
    if (on)
      for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (!nodes_[i].removed) order_in(NodeId(std::int32_t(i)));
  }
  bool keeps_free_index() const { return free_index_on_; }
  /// Whether a read of free_order() with many deferred moves makes them in one pass
  /// (FreeOrder::move_all, the default) or one by one: the same order (for tests).
  void set_bulk_order_moves(bool on) { bulk_moves_ = on; }

  /// First-fit search tree (off by default): a tree over node ids of the per-node free vCPU,
  /// memory, milli-GPU, whole free GPUs and largest per-GPU free share (maxima per subtree; a
  /// node that takes no replica counts as nothing free). first_fit_candidate() finds the
  /// lowest id >= `from` that may fit a shape in O(log N), skipping full nodes; a first-fit
  /// scheduler turns it on. Turning it on builds it, O(N x GPUs per node); updates are
  /// O(log N) per allocation, release or node change.
  void keep_fit_tree(bool on) {
    if (on == fit_tree_on_) return;
    fit_tree_on_ = on;
    fit_tree_.clear();
    if (on) build_fit_tree();
  }
  bool keeps_fit_tree() const { return fit_tree_on_; }
  /// The lowest node id >= `from` whose free capacity passes the necessary conditions of
  /// fits(id, r) (vCPU, memory, milli-GPU, whole GPUs or the largest per-GPU share), or
  /// size() when none. Every node below it, from `from` on, fails fits(id, r). Requires
  /// keep_fit_tree(true) (InvalidState otherwise).
  std::size_t first_fit_candidate(std::size_t from, const ReplicaShape& r) const {
    if (!fit_tree_on_) throw InvalidState("Cluster::first_fit_candidate: the fit tree is not kept (keep_fit_tree(true) first)");
    return fit_tree_.first_candidate(from, nodes_.size(), r);
  }

  /// Node groups: the schedulable nodes partitioned by NodeGroupKey, kept up to date by every
  /// change (allocate, release, reacquire, set_up, set_drained, add_node, remove_node) once
  /// enabled: O(GPUs log GPUs + log N) per change. Scoring policies whose score depends only on
  /// the key score each group once (placement/pick.hpp) instead of each node. Enabling builds
  /// the groups in O(N log N); enabling again with the same options is O(1), with other
  /// options rebuilds.
  void enable_node_groups(const NodeGroupOptions& o) {
    if (group_opts_ && *group_opts_ == o) return;
    group_opts_ = o;
    groups_.clear();
    free_groups_.clear();
    group_of_key_.clear();
    node_group_.assign(nodes_.size(), -1);
    for (std::size_t i = 0; i < nodes_.size(); ++i) group_in(NodeId(std::int32_t(i)));
  }
  bool node_groups_enabled() const { return group_opts_.has_value(); }
  const std::optional<NodeGroupOptions>& node_group_options() const { return group_opts_; }
  /// Every group slot (skip those with no `ids`). Empty unless enable_node_groups was called.
  const std::vector<NodeGroup>& node_groups() const { return groups_; }
  /// The group slot of node `id`, or -1 (not schedulable, or groups not enabled).
  std::int32_t node_group(NodeId id) const {
    return id.index() < node_group_.size() ? node_group_[id.index()] : -1;
  }
  /// The NodeGroupKey of node `id` now. Throws UnknownNode.
  NodeGroupKey group_key(NodeId id) const {
    check_node(id, "Cluster::group_key");
    const Node& n = nodes_[id.index()];
    NodeGroupKey k;
    k.pool = n.pool.value;
    k.model = n.model;
    k.gpus = n.gpus;
    k.cpu_capacity = n.capacity.cpu_milli;
    k.mem_capacity = n.capacity.mem_mib;
    k.cpu_free = n.free.cpu_milli;
    k.mem_free = n.free.mem_mib;
    const std::int32_t* g = gpu_free_.data() + n.gpu_offset;
    for (int i = 0; i < n.gpus; ++i) k.gpu_free[std::size_t(i)] = std::int16_t(g[i]);
    std::sort(k.gpu_free.begin(), k.gpu_free.begin() + n.gpus, std::greater<>());
    return k;
  }

  /// Free milli-GPU of GPU `g` of node `id`. Throws UnknownNode; InvalidArgument when `g` is
  /// not in 0 .. node(id).gpus - 1.
  std::int32_t gpu_free(NodeId id, int g) const {
    check_node(id, "Cluster::gpu_free");
    if (g < 0 || g >= nodes_[id.index()].gpus)
      throw InvalidArgument("Cluster::gpu_free: node " + nodes_[id.index()].name + " has no GPU " + std::to_string(g));
    return gpu_free_[nodes_[id.index()].gpu_offset + std::size_t(g)];
  }
  /// Pointer to node `id`'s per-GPU free milli array (length node(id).gpus). Throws UnknownNode.
  const std::int32_t* gpu_free_begin(NodeId id) const {
    check_node(id, "Cluster::gpu_free_begin");
    return gpu_free_.data() + nodes_[id.index()].gpu_offset;
  }

  /// Marks node `id` up or down (a down node takes no replica). Reported by take_changed().
  /// Whether replicas may stay on a down node is the caller's rule (Scheduler::set_node_up
  /// refuses). Throws UnknownNode; InvalidState for a removed node.
  void set_up(NodeId id, bool up) {
    check_node(id, "Cluster::set_up");
    Node& n = nodes_[id.index()];
    if (n.removed) throw InvalidState("Cluster::set_up: node " + n.name + " was removed");
    if (n.up != up) {
      up_capacity_ += up ? n.capacity : Resources{} - n.capacity;
      up_allocated_cpu_ += (up ? 1 : -1) * (n.capacity.cpu_milli - n.free.cpu_milli);
    }
    group_out(id);
    takes_(n, -1);
    n.up = up;
    ++schedulable_version_;
    takes_(n, +1);
    mark_changed(id);
    group_in(id);
    fit_update(id);
  }
  /// Sum of the capacity of the nodes that are up.
  const Resources& up_capacity() const { return up_capacity_; }
  /// milli-vCPU allocated on the nodes that are up (capacity minus free, summed). O(1).
  std::int64_t up_allocated_cpu_milli() const { return up_allocated_cpu_; }

  /// The nodes that take replicas (up, not drained) and have some vCPU free, one bit per node
  /// id (bit i % 64 of word i / 64; words past the end count as zero). Kept with the free sums
  /// on every allocation, release and node state change (O(1) each). A node without its bit has
  /// replica_slots() 0 for every shape that takes vCPU: scans for such shapes visit only these
  /// nodes (Session::fits_by_slots).
  const std::vector<std::uint64_t>& cpu_free_nodes() const { return cpu_free_bits_; }

  /// Free capacity summed over the nodes that take replicas (up, not drained) of one pool and
  /// one GPU model (milli-vCPU, MiB, milli-GPU, whole free GPUs). Kept on every allocation,
  /// release and node state change (O(1) each). An upper bound of what any set of replicas can
  /// take there: the scheduler's cheap "cannot possibly fit" test (Session::may_fit).
  struct FreeSum {
    std::int64_t cpu_milli = 0, mem_mib = 0, gpu_milli = 0, full_free_gpus = 0;
    FreeSum& operator+=(const FreeSum& o) {
      cpu_milli += o.cpu_milli;
      mem_mib += o.mem_mib;
      gpu_milli += o.gpu_milli;
      full_free_gpus += o.full_free_gpus;
      return *this;
    }
  };
  static constexpr std::size_t kSlotsPerPool = std::size_t(kMaxGpuModels) + 1;
  /// The sum of pool `p`'s nodes of GPU model `model` (-1: CPU-only nodes). O(1).
  FreeSum free_sum(PoolId p, std::int32_t model) const { return free_sum(std::size_t(p.index()) * kSlotsPerPool + std::size_t(model + 1)); }
  /// Node `n`'s slot index in free_sum(slot): its pool x kSlotsPerPool + its model + 1.
  static std::size_t slot_of(const Node& n) { return std::size_t(n.pool.index()) * kSlotsPerPool + std::size_t(n.model + 1); }
  /// The same by slot index: pool x kSlotsPerPool + model + 1. O(1).
  FreeSum free_sum(std::size_t slot) const { return slot < free_sums_.size() ? free_sums_[slot] : FreeSum{}; }

  /// Nodes whose free capacity or up/down state changed since the last call, each once, in
  /// the order of their first change; clears the list. O(changed nodes). Lets observers
  /// (fragmentation tracking, metrics) update incrementally.
  std::vector<NodeId> take_changed() {
    std::vector<NodeId> v;
    take_changed(v);
    return v;
  }
  /// The same into `out` (its content replaced), swapping buffers with the list: no allocation
  /// once both have grown (an observer calling it at every instant keeps `out`).
  void take_changed(std::vector<NodeId>& out) {
    out.clear();
    out.swap(changed_);
    for (NodeId n : out) changed_flag_[n.index()] = 0;
  }
  /// Records that the owners' (non-idle) allocation on node `id` changed at `now` (idle
  /// stability ages from there). Throws UnknownNode.
  void touch_owner(NodeId id, Time now) {
    check_node(id, "Cluster::touch_owner");
    nodes_[id.index()].last_owner_change = now;
  }

  /// Can `r` go on node `id` now (up, not drained, model, CPU, memory, and enough GPUs each
  /// with `r.gpu_milli` free)? Filters by pool and policy are the caller's. O(GPUs per node).
  /// Throws UnknownNode.
  bool fits(NodeId id, const ReplicaShape& r) const {
    check_node(id, "Cluster::fits");
    const Node& n = nodes_[id.index()];
    if (!n.up || n.drained) return false;
    if (r.cpu_milli > n.free.cpu_milli || r.mem_mib > n.free.mem_mib) return false;
    if (r.num_gpu == 0) return true;
    if (n.model < 0 || (r.models != 0 && !(r.models & model_bit(n.model)))) return false;
    if (r.total_gpu_milli() > n.free.gpu_milli) return false;
    if (r.gpu_milli >= kMilliPerGpu) return n.full_free_gpus >= r.num_gpu;
    return usable_gpus(n, r.gpu_milli) >= r.num_gpu;
  }

  /// True when replica_slots(id, r) is exact: placing one replica of `r` on a node that fits
  /// it (allocate) lowers that node's slots by exactly one and no other node's. So a gang of k
  /// replicas all of shape `r` is placed, whatever node each pick chooses among those that fit,
  /// if and only if the eligible nodes' slots sum to at least k. Holds for CPU-only shapes,
  /// whole GPUs (gpu_milli = 1000) and a single GPU share (num_gpu = 1, 0 < gpu_milli < 1000);
  /// not for several shares (which GPUs a share takes changes what the next one can use).
  static constexpr bool replica_slots_exact(const ReplicaShape& r) {
    return r.num_gpu == 0 || (r.gpu_milli == kMilliPerGpu && r.num_gpu > 0) ||
           (r.num_gpu == 1 && r.gpu_milli > 0 && r.gpu_milli < kMilliPerGpu);
  }
  /// How many replicas of `r` node `id` could take one after another (0 when it is down,
  /// drained or of a model `r` does not allow), counting `released` (milli-vCPU, MiB) and
  /// `released_gpu` (per-GPU milli-GPU, node.gpus entries; may be null) as free on top: the
  /// capacity tasks release by some future time (actions::reservation). Saturates at
  /// kUnboundedSlots (a shape that takes nothing a node has). Meaningful as a count only for
  /// replica_slots_exact shapes. O(GPUs per node). Does not check the id (hot path).
  static constexpr std::int64_t kUnboundedSlots = std::int64_t{1} << 40;
  std::int64_t replica_slots(NodeId id, const ReplicaShape& r, const Resources& released = {},
                             const std::int32_t* released_gpu = nullptr) const {
    const Node& n = nodes_[id.index()];
    if (!n.up || n.drained) return 0;
    std::int64_t s = kUnboundedSlots;
    // (a full node, the common case in a busy cluster, answers 0 without a division)
    if (r.cpu_milli > 0) {
      const std::int64_t free = n.free.cpu_milli + released.cpu_milli;
      if (free < r.cpu_milli) return 0;
      s = std::min(s, free / r.cpu_milli);
    }
    if (r.mem_mib > 0) {
      const std::int64_t free = n.free.mem_mib + released.mem_mib;
      if (free < r.mem_mib) return 0;
      s = std::min(s, free / r.mem_mib);
    }
    if (r.num_gpu == 0) return s;
    if (n.model < 0 || (r.models != 0 && !(r.models & model_bit(n.model)))) return 0;
    const std::int32_t* g = gpu_free_.data() + n.gpu_offset;
    std::int64_t k = 0;
    if (r.gpu_milli >= kMilliPerGpu && !released_gpu) {
      k = n.full_free_gpus;
    } else {
      for (std::int32_t i = 0; i < n.gpus; ++i) {
        const std::int64_t free = g[i] + (released_gpu ? released_gpu[i] : 0);
        k += r.gpu_milli >= kMilliPerGpu ? free == kMilliPerGpu : free / r.gpu_milli;
      }
    }
    return std::min(s, k / r.num_gpu);
  }

  /// Number of GPUs of node `n` with at least `milli` free.
  std::int32_t usable_gpus(const Node& n, std::int32_t milli) const {
    if (milli >= kMilliPerGpu) return n.full_free_gpus;
    std::int32_t c = 0;
    const std::int32_t* g = gpu_free_.data() + n.gpu_offset;
    for (std::int32_t i = 0; i < n.gpus; ++i) c += g[i] >= milli;
    return c;
  }

  /// Takes `r` from node `id`. GPUs: whole GPUs take the lowest-index fully free GPUs; a share
  /// takes the GPU with the least free milli that still fits it (best fit per GPU; ties to the
  /// lowest index), which keeps whole GPUs whole. Throws UnknownNode; InvalidState unless
  /// fits(id, r).
  ReplicaAllocation allocate(NodeId id, const ReplicaShape& r) {
    if (!fits(id, r)) throw InvalidState("Cluster::allocate: replica does not fit on " + nodes_[id.index()].name);
    Node& n = nodes_[id.index()];
    ReplicaAllocation a;
    a.node = id;
    a.cpu_milli = r.cpu_milli;
    a.mem_mib = r.mem_mib;
    a.gpu_milli = r.num_gpu > 0 ? r.gpu_milli : 0;
    auto mask = detail::choose_gpus(gpu_free_.data() + n.gpu_offset, n.gpus, r);
    if (!mask) throw InvalidState("Cluster::allocate: replica does not fit on " + n.name);
    a.gpu_mask = *mask;
    apply(n, a, -1);
    return a;
  }

  /// Takes replica `r` on node `id` on exactly the GPUs of `gpu_mask` (bit i = GPU i), as an
  /// allocation restored from elsewhere (Scheduler::adopt_task). `gpu_mask` 0 for a GPU replica
  /// lets the node choose as allocate() does. Unlike allocate() a drained node is accepted (what
  /// ran there before the drain). Throws UnknownNode; InvalidArgument when the mask names GPUs
  /// the node does not have, or not exactly `r.num_gpu` GPUs (0 for a CPU-only replica);
  /// InvalidState when the node is down or removed or the replica does not fit its free
  /// capacity (model, vCPU, memory, each named GPU's free milli-GPU).
  ReplicaAllocation allocate_exact(NodeId id, const ReplicaShape& r, std::uint64_t gpu_mask) {
    check_node(id, "Cluster::allocate_exact");
    Node& n = nodes_[id.index()];
    const std::string where = "Cluster::allocate_exact: node " + n.name;
    if (!n.up) throw InvalidState(where + " is " + (n.removed ? "removed" : "down"));
    if (r.num_gpu == 0 && gpu_mask != 0) throw InvalidArgument(where + ": GPUs given for a CPU-only replica");
    if (gpu_mask != 0) {
      if (n.gpus < 64 && (gpu_mask >> n.gpus) != 0) throw InvalidArgument(where + ": names a GPU the node does not have");
      if (std::popcount(gpu_mask) != r.num_gpu)
        throw InvalidArgument(where + ": " + std::to_string(std::popcount(gpu_mask)) + " GPUs given for a replica of " +
                              std::to_string(r.num_gpu));
    }
    if (r.cpu_milli > n.free.cpu_milli || r.mem_mib > n.free.mem_mib) throw InvalidState(where + ": not enough free vCPU or memory");
    if (r.num_gpu > 0 && (n.model < 0 || (r.models != 0 && !(r.models & model_bit(n.model)))))
      throw InvalidState(where + ": GPU model does not match");
    const std::int32_t* g = gpu_free_.data() + n.gpu_offset;
    if (r.num_gpu > 0 && gpu_mask == 0) {
      auto m = detail::choose_gpus(g, n.gpus, r);
      if (!m) throw InvalidState(where + ": not enough free GPUs");
      gpu_mask = *m;
    }
    for (std::uint64_t m = gpu_mask; m; m &= m - 1)
      if (g[std::countr_zero(m)] < r.gpu_milli)
        throw InvalidState(where + ": GPU " + std::to_string(std::countr_zero(m)) + " has not enough free milli-GPU");
    ReplicaAllocation a;
    a.node = id;
    a.cpu_milli = r.cpu_milli;
    a.mem_mib = r.mem_mib;
    a.gpu_milli = r.num_gpu > 0 ? r.gpu_milli : 0;
    a.gpu_mask = gpu_mask;
    apply(n, a, -1);
    return a;
  }

  /// Gives back what `a` holds (`a` came from allocate on this cluster and was not released
  /// yet). Throws UnknownNode; InvalidState when `a` holds more than is allocated on its node
  /// (released twice, or not from this cluster).
  void release(const ReplicaAllocation& a) {
    check_node(a.node, "Cluster::release");
    Node& n = nodes_[a.node.index()];
    const std::int32_t* g = gpu_free_.data() + n.gpu_offset;
    bool ok = a.gpu_milli >= 0 && a.cpu_milli >= 0 && a.mem_mib >= 0 && Resources::fits(n.free + a.resources(), n.capacity) &&
              (n.gpus >= 64 || (a.gpu_mask >> n.gpus) == 0);
    for (std::uint64_t m = a.gpu_mask; m && ok; m &= m - 1) ok = g[std::countr_zero(m)] + a.gpu_milli <= kMilliPerGpu;
    if (!ok) throw InvalidState("Cluster::release: more than is allocated on " + n.name + " (released twice?)");
    apply(n, a, +1);
  }

  /// Re-applies an allocation taken earlier and released since (used by transaction
  /// rollback). Throws UnknownNode; InvalidState when it no longer fits the free capacity.
  void reacquire(const ReplicaAllocation& a) {
    check_node(a.node, "Cluster::reacquire");
    Node& n = nodes_[a.node.index()];
    const std::int32_t* g = gpu_free_.data() + n.gpu_offset;
    bool ok = a.gpu_milli >= 0 && a.cpu_milli >= 0 && a.mem_mib >= 0 && Resources::fits(a.resources(), n.free) &&
              (n.gpus >= 64 || (a.gpu_mask >> n.gpus) == 0);
    for (std::uint64_t m = a.gpu_mask; m && ok; m &= m - 1) ok = g[std::countr_zero(m)] >= a.gpu_milli;
    if (!ok) throw InvalidState("Cluster::reacquire: the allocation no longer fits on " + n.name);
    apply(n, a, -1);
  }

 private:
  // The checks sit on the placement hot path (node(), fits()): one comparison inline (an invalid
  // id's index() is huge), the throw out of line.
  void check_node(NodeId id, std::string_view fn) const {
    if (id.index() >= nodes_.size()) [[unlikely]]
      unknown_node(id, fn);
  }
  void check_pool(PoolId id, std::string_view fn) const {
    if (id.index() >= pools_.size()) [[unlikely]]
      unknown_pool(id, fn);
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void unknown_node(NodeId id, std::string_view fn) {
    throw UnknownNode(std::string(fn) + ": unknown node id " + std::to_string(id.value));
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void unknown_pool(PoolId id, std::string_view fn) {
    throw UnknownPool(std::string(fn) + ": unknown pool id " + std::to_string(id.value));
  }
  void mark_changed(NodeId id) {
    ++nodes_[id.index()].version;
    if (changed_flag_[id.index()]) return;
    changed_flag_[id.index()] = 1;
    changed_.push_back(id);
  }
  void apply(Node& n, const ReplicaAllocation& a, int sign) {
    if (a.gpu_mask == 0 && !group_opts_ && !fit_tree_on_) return apply_no_gpu(n, a, sign);
    mark_changed(a.node);
    group_out(a.node);
    takes_(n, -1);
    const bool moves = free_index_on_ && (a.gpu_mask != 0 || a.cpu_milli != 0);  // the key (or cap) moves
    if (moves) order_defer(n, a.node);
    std::int32_t* g = gpu_free_.data() + n.gpu_offset;
    for (std::uint64_t m = a.gpu_mask; m; m &= m - 1) {
      int i = std::countr_zero(m);
      if (g[i] == kMilliPerGpu) --n.full_free_gpus;
      n.gpu_state -= Node::mix64(std::uint64_t(g[i]));
      g[i] += sign * a.gpu_milli;
      n.gpu_state += Node::mix64(std::uint64_t(g[i]));
      if (g[i] == kMilliPerGpu) ++n.full_free_gpus;
    }
    Resources d = a.resources();
    if (sign > 0) n.free += d; else n.free -= d;
    if (n.up) up_allocated_cpu_ -= sign * a.cpu_milli;
    takes_(n, +1);
    group_in(a.node);
    fit_update(a.node);
  }
  /// apply() of an allocation that holds no GPU (gpu_mask 0) with node groups and the fit tree
  /// off: the same changes in one pass (takes_ -1 then +1 leave the node's (pool, model) sum
  /// moved by the allocation's vCPU and memory alone; its GPUs do not change).
  void apply_no_gpu(Node& n, const ReplicaAllocation& a, int sign) {
    mark_changed(a.node);
    if (free_index_on_ && a.cpu_milli != 0) order_defer(n, a.node);
    n.free.cpu_milli += sign * a.cpu_milli;
    n.free.mem_mib += sign * a.mem_mib;
    if (n.up) up_allocated_cpu_ -= sign * a.cpu_milli;
    const bool takes = n.up && !n.drained;
    set_cpu_free_bit(a.node.index(), takes && n.free.cpu_milli > 0);
    if (!takes) return;
    FreeSum& f = sum_of(n);
    f.cpu_milli += sign * a.cpu_milli;
    f.mem_mib += sign * a.mem_mib;
  }
  /// Adds (sign +1) or takes away (-1) node `n`'s free capacity to its (pool, model) sum
  /// when it takes replicas (up, not drained).
  /// Also keeps the node's bit of cpu_free_nodes(): cleared before a change (sign -1), set
  /// after it (sign +1) when the node takes replicas and has vCPU free.
  void takes_(const Node& n, int sign) {
    const std::size_t id = std::size_t(&n - nodes_.data());
    if (sign < 0) set_cpu_free_bit(id, false);
    else if (n.up && !n.drained && n.free.cpu_milli > 0) set_cpu_free_bit(id, true);
    if (!n.up || n.drained) return;
    FreeSum& f = sum_of(n);
    f.cpu_milli += sign * n.free.cpu_milli;
    f.mem_mib += sign * n.free.mem_mib;
    f.gpu_milli += sign * n.free.gpu_milli;
    f.full_free_gpus += sign * n.full_free_gpus;
  }
  /// Sets (`on`) or clears node `id`'s bit of cpu_free_nodes().
  [[gnu::always_inline]] void set_cpu_free_bit(std::size_t id, bool on) {  // (every apply and release: keep it inline)
    const std::uint64_t bit = std::uint64_t{1} << (id % 64);
    if (on) {
      if (id / 64 >= cpu_free_bits_.size()) cpu_free_bits_.resize(id / 64 + 1, 0);
      cpu_free_bits_[id / 64] |= bit;
    } else if (id / 64 < cpu_free_bits_.size()) {
      cpu_free_bits_[id / 64] &= ~bit;
    }
  }
  /// Node `n`'s (pool, model) sum, the pool's slots added when first needed.
  [[gnu::always_inline]] FreeSum& sum_of(const Node& n) {
    const std::size_t i = slot_of(n);
    if (i >= free_sums_.size()) free_sums_.resize((std::size_t(n.pool.index()) + 1) * kSlotsPerPool);
    return free_sums_[i];
  }
  /// Takes node `id` out of its group (no-op when groups are off or it is in none).
  void group_out(NodeId id) {
    if (!group_opts_) return;
    std::int32_t gi = node_group_[id.index()];
    if (gi < 0) return;
    node_group_[id.index()] = -1;
    NodeGroup& g = groups_[std::size_t(gi)];
    const Node& n = nodes_[id.index()];
    g.ids.erase(id.value);
    if (group_opts_->topology) {
      g.by_switch.erase({n.switch_id, id.value});
      g.by_rack.erase({n.switch_id, n.rack, id.value});
    }
    if (group_opts_->ranked) g.ranked.erase(std::lower_bound(g.ranked.begin(), g.ranked.end(), id.value));
    if (g.ids.empty()) {
      group_of_key_.erase(g.key);
      g.by_switch.clear();
      g.by_rack.clear();
      g.ranked.clear();
      free_groups_.push_back(gi);
    }
  }
  /// Puts node `id` into the group of its current key if it is schedulable.
  void group_in(NodeId id) {
    if (!group_opts_) return;
    const Node& n = nodes_[id.index()];
    if (!n.up || n.drained || n.removed) return;
    NodeGroupKey k = group_key(id);
    std::int32_t gi;
    if (auto it = group_of_key_.find(k); it != group_of_key_.end()) {
      gi = it->second;
    } else {
      if (!free_groups_.empty()) {
        gi = free_groups_.back();
        free_groups_.pop_back();
      } else {
        gi = std::int32_t(groups_.size());
        groups_.emplace_back();
      }
      groups_[std::size_t(gi)].key = k;
      group_of_key_.emplace(k, gi);
    }
    node_group_[id.index()] = gi;
    NodeGroup& g = groups_[std::size_t(gi)];
    g.ids.insert(id.value);
    if (group_opts_->topology) {
      g.by_switch.emplace(n.switch_id, id.value);
      g.by_rack.emplace(n.switch_id, n.rack, id.value);
    }
    if (group_opts_->ranked) g.ranked.insert(std::lower_bound(g.ranked.begin(), g.ranked.end(), id.value), id.value);
  }

  std::vector<std::string> models_;
  std::unordered_map<std::string, std::int32_t> model_ids_;
  std::vector<Pool> pools_;
  std::vector<Node> nodes_;
  std::unordered_map<std::string, NodeId> node_ids_;
  std::vector<std::int32_t> gpu_free_;
  // free_order(): node `id` in / out at its current free capacity and gpu_cap.
  // (Any pending deferred move first: the order must hold every node at its indexed entry.)
  void order_in(NodeId id) {
    flush_order();
    const Node& n = nodes_[id.index()];
    free_order_.insert({n.free.gpu_milli, n.free.cpu_milli, id.value, gpu_cap(n)});
    free_keys_stale_ = true;
  }
  void order_out(NodeId id) {
    flush_order();
    const Node& n = nodes_[id.index()];
    free_order_.erase(FreeKey{n.free.gpu_milli, n.free.cpu_milli, id.value});
    free_keys_stale_ = true;
  }
  // Allocations and releases (apply) do not move their node in free_order_ at once: the node's
  // entry as indexed is noted the first time (order_defer), and the next reader of the order
  // (free_order(), free_index(), keep_free_index, order_in / order_out) moves each noted node
  // once to its current entry, or not at all when it is back at the indexed one. A preemption
  // search releases hundreds of victims and rolls them back: the nodes that end as they were
  // cost no move. The order's entries are those of the eager upkeep at every read.
  void order_defer(const Node& n, NodeId id) {
    if (order_dirty_flag_.size() <= id.index()) order_dirty_flag_.resize(nodes_.size(), 0);
    if (order_dirty_flag_[id.index()]) return;
    order_dirty_flag_[id.index()] = 1;
    order_dirty_.push_back({n.free.gpu_milli, n.free.cpu_milli, id.value, gpu_cap(n)});
  }
  // More moves at a read than kFewMoves and 1 / kBulkShare of the nodes: one pass (FreeOrder::move_all;
  // a victim search's probe moves hundreds of nodes); fewer: one by one. The same order.
  static constexpr std::size_t kFewMoves = 8, kBulkShare = 64;  // (by instruction counts at 1M tasks)
  void flush_order() const {
    if (order_dirty_.empty()) return;
    const std::size_t bulk_above = bulk_moves_ ? std::max(kFewMoves, free_order_.size() / kBulkShare) : order_dirty_.size();
    const bool gather = order_dirty_.size() > bulk_above;  // (else few noted: no lists)
    order_gone_.clear();
    order_added_.clear();
    for (const auto& old : order_dirty_) {
      order_dirty_flag_[std::size_t(old.id)] = 0;
      const Node& n = nodes_[std::size_t(old.id)];
      const detail::FreeOrder::Entry now{n.free.gpu_milli, n.free.cpu_milli, old.id, gpu_cap(n)};
      if (now.gpu == old.gpu && now.cpu == old.cpu && now.cap == old.cap) continue;
      free_keys_stale_ = true;
      if (gather) {
        order_gone_.push_back(old.key());
        order_added_.push_back(now);
      } else {
        free_order_.erase(old.key());
        free_order_.insert(now);
      }
    }
    order_dirty_.clear();
    free_order_.move_all(order_gone_, order_added_, bulk_above);  // (empty unless gathered; few left after the check above: one by one)
  }
  mutable std::vector<detail::FreeOrder::Key> order_gone_;  // flush_order(): moved nodes' indexed keys
  mutable std::vector<detail::FreeOrder::Entry> order_added_;  // ... and current entries
  bool bulk_moves_ = true;                                     // set_bulk_order_moves()
  mutable std::vector<detail::FreeOrder::Entry> order_dirty_;  // the noted nodes' indexed entries
  mutable std::vector<std::uint8_t> order_dirty_flag_;          // per node: noted in order_dirty_
  mutable detail::FreeOrder free_order_;
  mutable std::set<FreeKey> free_keys_;  // free_index(): a copy of free_order_'s keys
  mutable bool free_keys_stale_ = true;
  bool free_index_on_ = true;
  detail::FitTree fit_tree_;  ///< keep_fit_tree (detail/fit_tree.hpp)
  bool fit_tree_on_ = false;
  void build_fit_tree() {
    fit_tree_.build(nodes_.size(), [this](std::size_t i) { return detail::FitTree::leaf(nodes_[i], gpu_free_.data() + nodes_[i].gpu_offset); });
  }
  void fit_update(NodeId id) {
    if (!fit_tree_on_) return;
    const Node& n = nodes_[id.index()];
    fit_tree_.update(id.index(), detail::FitTree::leaf(n, gpu_free_.data() + n.gpu_offset));
  }
  std::vector<FreeSum> free_sums_;  ///< per (pool, model + 1), kSlotsPerPool per pool
  std::uint64_t schedulable_version_ = 0;  ///< schedulable_version()
  std::vector<std::uint64_t> cpu_free_bits_;  ///< cpu_free_nodes()
  std::vector<NodeId> changed_;
  std::vector<char> changed_flag_;
  Resources total_;
  Resources up_capacity_;
  std::int64_t up_allocated_cpu_ = 0;  ///< up_allocated_cpu_milli()
  // Node groups (enable_node_groups): slots, free slots, key -> slot, node -> slot (-1: none).
  std::optional<NodeGroupOptions> group_opts_;
  std::vector<NodeGroup> groups_;
  std::vector<std::int32_t> free_groups_;
  std::unordered_map<NodeGroupKey, std::int32_t, NodeGroupKey::Hash> group_of_key_;
  std::vector<std::int32_t> node_group_;
};

}  // namespace libsched
