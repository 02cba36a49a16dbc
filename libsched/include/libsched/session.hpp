// One scheduling cycle's view of the scheduler's state, and the predicates every action and
// explain() share (docs/architecture.md).
//
// detail::SchedulerCore (detail/scheduler_core.hpp) is the state a Scheduler owns (cluster, quota book, node policies,
// tasks, the queue, the running set, the plugins, and the memo that lets a pass skip requests
// known to fail). A Session is a handle on it for one call (schedule(), explain(), ...): it
// answers the narrow questions of placement (is a node eligible? which node for this replica?
// does the whole gang place?), admission, and the victim rule, and applies decided starts and
// releases. The actions (actions/allocate.hpp, backfill.hpp, preempt.hpp) and explain.hpp are
// written against it; none of them re-derives a predicate.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "libsched/cluster.hpp"
#include "libsched/decisions.hpp"
#include "libsched/detail/scheduler_core.hpp"
#include "libsched/detail/request_classes.hpp"
#include "libsched/node_policy.hpp"
#include "libsched/options.hpp"
#include "libsched/placement/pick.hpp"
#include "libsched/placement/policy.hpp"
#include "libsched/plugins/admission.hpp"
#include "libsched/plugins/queue_order.hpp"
#include "libsched/plugins/victim_order.hpp"
#include "libsched/quota.hpp"
#include "libsched/registry.hpp"
#include "libsched/status.hpp"
#include "libsched/task.hpp"
#include "libsched/transaction.hpp"

namespace libsched {

/// One call's handle on the scheduler state: the shared predicates (eligibility, placement,
/// admission, the victim rule) and the two state changes every action ends in (a gang starts,
/// a task is released). Cheap to construct (two words); not copyable into another call.
class Session {
 public:
  using Core = detail::SchedulerCore;
  using State = Core::State;
  using Entry = Core::Entry;
  using RunInfo = Core::RunInfo;

  Session(Core& core, Time now) : st(core), now(now) {}

  Core& st;        ///< the state (cluster, quotas, tasks, queue, memo)
  const Time now;  ///< the instant of this call (ms)

  const TaskSpec& spec(TaskId t) const { return st.tasks_[t.index()].spec; }
  const SchedulerOptions& options() const { return st.options_; }

  // ------------------------------------------------------------------ eligibility
  /// At most two capacity classes, in order (no allocation: asked on every trial).
  struct ClassList {
    std::array<ResourceType, 2> v{};
    std::uint8_t n = 0;
    const ResourceType* begin() const { return v.data(); }
    const ResourceType* end() const { return v.data() + n; }
    std::size_t size() const { return n; }
  };
  /// Capacity classes a task may run on, in the order tried.
  static ClassList classes(const TaskSpec& s) {
    if (s.resource_type != ResourceType::reserved) return {{s.resource_type, s.resource_type}, 1};
    if (s.prefer_idle) return {{ResourceType::idle, ResourceType::reserved}, 2};
    if (s.accept_idle) return {{ResourceType::reserved, ResourceType::idle}, 2};
    return {{ResourceType::reserved, ResourceType::reserved}, 1};
  }
  static QuotaKey quota_key(const TaskSpec& s, ResourceType cls) { return QuotaKey{s.user, cls, s.pool}; }

  /// Pools whose idle capacity task `s` may use. An idle task: its `pool` if set, else every
  /// pool. A reserved task falling back to idle capacity (accept_idle / prefer_idle): every
  /// pool except its own, because the nodes of its own pool are its reserved capacity; taking
  /// some of them as "idle" would combine reserved and idle capacity in one gang (and bypass
  /// its quota). [choice: whatever the pool's kind]
  static bool idle_pool_ok(const TaskSpec& s, PoolId pool) {
    if (s.resource_type == ResourceType::idle) return !s.pool.valid() || pool == s.pool;
    return pool != s.pool;
  }

  /// May a replica of `s` run on node `n` as class `cls` at time `now` (pool, idle stability,
  /// node policies unless `ignore_filter`)? Fit is checked separately (Cluster::fits).
  /// May task `s` use node `node`'s capacity as class `cls` (pools only)?
  bool pool_ok(const TaskSpec& s, ResourceType cls, const Node& node) const { return pool_ok(st, s, cls, node); }
  static bool pool_ok(const Core& core, const TaskSpec& s, ResourceType cls, const Node& node) {
    return pool_ok(core, s, cls, node.pool);
  }
  /// The same for every node of pool `pool`.
  static bool pool_ok(const Core& core, const TaskSpec& s, ResourceType cls, PoolId pool) {
    switch (cls) {
      case ResourceType::reserved: return pool == s.pool;
      case ResourceType::pay_as_you_go:
      case ResourceType::spot:
        return s.pool.valid() ? pool == s.pool : core.cluster_.pool(pool).kind == PoolKind::shared;
      case ResourceType::idle: return idle_pool_ok(s, pool);
    }
    return false;
  }
  bool node_eligible(const TaskSpec& s, ResourceType cls, NodeId n, const NodeFilter& f, Time now, bool ignore_filter) const {
    return node_eligible(st, s, cls, n, f, now, ignore_filter);
  }
  /// The same on `core` (pick_node's loop passes a local reference: no reload per node).
  static bool node_eligible(const Core& core, const TaskSpec& s, ResourceType cls, NodeId n, const NodeFilter& f, Time now,
                            bool ignore_filter) {
    const Node& node = core.cluster_.node(n);
    if (!pool_ok(core, s, cls, node)) return false;
    if (cls == ResourceType::idle) {
      Time age = now - (core.owner_override_ ? core.owner_at_[n.index()] : node.last_owner_change);
      if (s.idle_stability == IdleStability::high && age < core.options_.idle_stability_high) return false;
      if (s.idle_stability == IdleStability::medium && age < core.options_.idle_stability_medium) return false;
    }
    return ignore_filter || f.allowed(n);
  }

  // ------------------------------------------------------------------ admission
  /// The configured admission plugin (the builtin quota rule is called directly).
  bool admits(const QuotaKey& k, const TaskSpec& s, TaskId t, const Resources& demand) const {
    return st.builtin_admission_ ? st.quotas_.admits(k, demand) : st.admission_->admits(st.quotas_, k, s, t, demand);
  }
  bool never_admits(const QuotaKey& k, const TaskSpec& s, TaskId t, const Resources& demand) const {
    return st.builtin_admission_ ? st.quotas_.never_admits(k, demand) : st.admission_->never_admits(st.quotas_, k, s, t, demand);
  }

  // ------------------------------------------------------------------ placement
  /// The node the placement policy picks for replica `q` among the eligible nodes that fit it,
  /// or an invalid id. Nodes are visited in the policy's scan order (PlacementPolicy).
  /// `from`: scan hint (placement::pick_node).
  NodeId pick_node(const ReplicaRequest& q, const NodeFilter& f, Time now, bool ignore_filter, std::size_t from = 0) {
    const TaskSpec& s = q.task;
    const ResourceType cls = q.capacity;
    const Core& core = st;
    auto group_ok = [&](NodeId n) { return pool_ok(core, s, cls, core.cluster_.node(n)); };
    auto node_ok = [&](NodeId n) { return node_eligible(core, s, cls, n, f, now, ignore_filter); };
    return placement::pick_node(st.cluster_, *st.policy_, q, NodeCheck(group_ok, node_ok), st.options_.full_scan_placement, from);
  }

  /// A necessary condition for place_gang(s, opt, cls), in O(pools x GPU models): the free
  /// capacity summed over the nodes that may hold the replicas (pools open to `s` on `cls`,
  /// up, not drained, GPU model allowed; Cluster::free_sum) covers the gang's total vCPU,
  /// memory, milli-GPU and whole GPUs. False means no placement exists, whatever the policy,
  /// node policies or idle stability (they only remove nodes); true promises nothing.
  /// `delta`: capacity to count as free on top (per pool x Cluster::kSlotsPerPool + model + 1),
  /// e.g. what tasks expected to end by some time will release (actions::may_jump).
  /// `GpuSideOnly`: the same test for the request with every replica's vCPU and memory set to
  /// 0 (the slots summed and the whole GPUs depend only on the GPU side of the shapes), as
  /// Explain's GPU-only diagnosis asks, without building that request.
  template <bool GpuSideOnly = false>
  bool may_fit(const TaskSpec& s, std::size_t opt, ResourceType cls, const std::vector<Cluster::FreeSum>* delta = nullptr) const {
    const Cluster& c = st.cluster_;
    const GangOption& o = s.options[opt];
    auto enough = [&](const ReplicaShape& r, const Resources& need, std::int64_t whole_gpus) {
      Cluster::FreeSum sum;
      for_each_slot(s, cls, r, [&](std::size_t i) {
        sum += c.free_sum(i);
        if (delta && i < delta->size()) sum += (*delta)[i];
      });
      const std::int64_t cpu = GpuSideOnly ? 0 : need.cpu_milli, mem = GpuSideOnly ? 0 : need.mem_mib;
      return cpu <= sum.cpu_milli && mem <= sum.mem_mib && need.gpu_milli <= sum.gpu_milli && whole_gpus <= sum.full_free_gpus;
    };
    const std::int64_t w = s.workers;
    if (one_slot_set(o)) return enough(o.head, s.demand(opt), whole_gpus(s, opt));
    return enough(o.head, o.head.resources(), whole_gpus(o.head)) &&
           (w == 0 || enough(o.worker, o.worker.resources() * w, w * whole_gpus(o.worker)));
  }
  /// Whole GPUs replica `r` takes (GPUs asked at >= 1000 milli each); of option `opt`'s gang.
  static std::int64_t whole_gpus(const ReplicaShape& r) { return r.gpu_milli >= kMilliPerGpu ? std::int64_t(r.num_gpu) : 0; }
  static std::int64_t whole_gpus(const TaskSpec& s, std::size_t opt) {
    return whole_gpus(s.options[opt].head) + s.workers * whole_gpus(s.options[opt].worker);
  }
  /// Does may_fit check option `o`'s whole gang against one set of slots (head and workers
  /// both CPU-only or both GPU replicas, of the same models)? Else head and workers separately.
  bool one_slot_set(const GangOption& o) const {
    return slot_models(o.head) == slot_models(o.worker) && (o.head.num_gpu == 0) == (o.worker.num_gpu == 0);
  }
  /// Calls `fn(i)` for each (pool, model) slot i = pool x Cluster::kSlotsPerPool + model + 1
  /// (Cluster::free_sum), in ascending order, that may hold replica `r` of `s` on class `cls`,
  /// as may_fit sums them:
  /// open pools; CPU-only replicas any node (CPU-only nodes and every model), GPU replicas
  /// nodes of an allowed model.
  template <class Fn>
  void for_each_slot(const TaskSpec& s, ResourceType cls, const ReplicaShape& r, Fn&& fn) const {
    const ModelMask models = slot_models(r);
    for (std::size_t p = 0; p < st.cluster_.pools().size(); ++p) {
      if (!pool_ok(st, s, cls, PoolId(static_cast<std::int32_t>(p)))) continue;
      if (r.num_gpu == 0) fn(p * Cluster::kSlotsPerPool);
      for (ModelMask m = models; m; m &= m - 1) fn(p * Cluster::kSlotsPerPool + std::size_t(std::countr_zero(m) + 1));
    }
  }
  /// The GPU models whose nodes may hold replica `r` (for a CPU-only replica: all of them).
  ModelMask slot_models(const ReplicaShape& r) const {
    const std::size_t n = st.cluster_.models().size();
    const ModelMask all = n >= 64 ? ~ModelMask{0} : (ModelMask{1} << n) - 1;
    return r.num_gpu == 0 || r.models == 0 ? all : (r.models & all);
  }

  /// Places every replica of option `opt` of `s` (task `t`, or a relaxed copy of its spec) on
  /// class `cls` inside `tx`, or none (tx as it was). With SchedulerOptions::fast_paths a gang
  /// that cannot possibly fit (may_fit) is refused before any node is tried.
  std::optional<std::vector<ReplicaAllocation>> place_gang(Transaction& tx, const TaskSpec& s, TaskId t, std::size_t opt,
                                                           ResourceType cls, const NodeFilter& f, Time now, bool ignore_filter) {
    if (st.options_.fast_paths && !may_fit(s, opt, cls)) return std::nullopt;
    std::size_t m = tx.mark();
    std::vector<ReplicaAllocation> out;
    out.reserve(std::size_t(s.replicas()));
    if (!st.builtin_first_fit_) st.policy_->begin_gang(st.cluster_);  // (first-fit's does nothing)
    // Fast paths: the next worker's scan starts at the previous worker's node (no node below
    // it fitted that shape, and placing replicas only takes capacity away).
    const bool hint = st.options_.fast_paths;
    std::size_t from = 0;
    // Fast paths: the builtin first-fit (its hooks do nothing) on vCPU replicas without the fit tree: the
    // scan placement::pick_node makes for it (the first node at or after the hint, among those
    // with vCPU free, that fits and is eligible), without the policy's virtual queries.
    const bool own_scan = st.options_.fast_paths && st.builtin_first_fit_ && !st.options_.full_scan_placement && !st.cluster_.keeps_fit_tree();
    for (std::int32_t i = 0; i < s.replicas(); ++i) {
      const ReplicaShape& r = i == 0 ? s.options[opt].head : s.options[opt].worker;
      NodeId n = own_scan && r.cpu_milli > 0 ? first_fit_node(s, cls, r, f, now, ignore_filter, hint && i >= 2 ? from : 0)
                                             : pick_node(ReplicaRequest{r, s, t, i, opt, cls}, f, now, ignore_filter, hint && i >= 2 ? from : 0);
      if (!n.valid()) {
        tx.rollback_to(m);
        return std::nullopt;
      }
      from = n.index();
      out.push_back(tx.allocate(n, r));
      if (!own_scan) st.policy_->replica_placed(st.cluster_, out.back());
    }
    return out;
  }

  /// placement::pick_node's answer for the builtin first-fit and a replica `r` that takes vCPU,
  /// without the fit tree: the lowest node id >= `from` with vCPU free (Cluster::cpu_free_nodes)
  /// that fits `r` and is eligible.
  NodeId first_fit_node(const TaskSpec& s, ResourceType cls, const ReplicaShape& r, const NodeFilter& f, Time now,
                        bool ignore_filter, std::size_t from) const {
    const Core& core = st;
    return placement::first_cpu_free_node(core.cluster_, r, from,
                                          [&](NodeId id) { return node_eligible(core, s, cls, id, f, now, ignore_filter); });
  }

  /// Tries every class and candidate spec in order; on success the gang and its quota are
  /// taken inside `tx` and the placement is returned (the start decision of allocate, and the
  /// probe of every other action and of explain).
  /// `only`: try that capacity class alone (preemption tries one class at a time).
  std::optional<Placement> try_start(Transaction& tx, TaskId t, Time now, bool ignore_filter = false,
                                     std::optional<ResourceType> only = std::nullopt) {
    const TaskSpec& s = spec(t);
    NodeFilter f = NodeFilter::build(st.policies_, s, now, st.cluster_.size());
    for (ResourceType cls : classes(s)) {
      if (only && cls != *only) continue;
      QuotaKey k = quota_key(s, cls);
      for (std::size_t i = 0; i < s.options.size(); ++i) {
        Resources d = s.demand(i);
        if (!admits(k, s, t, d)) continue;
        auto reps = place_gang(tx, s, t, i, cls, f, now, ignore_filter);
        if (!reps) continue;
        tx.charge(k, d, +1);
        Placement p;
        p.task = t;
        p.option = i;
        p.capacity = cls;
        p.replicas = std::move(*reps);
        p.start = now;
        p.quota_key = k;
        p.quota_held = cls == ResourceType::idle ? Resources{} : d;
        return p;
      }
    }
    return std::nullopt;
  }

  /// Can fits_by_slots answer for `s`? Fast paths on, no idle ageing (node eligibility does
  /// not depend on owners' changes), and every option's gang is replicas of one shape (head =
  /// worker, or no worker) for which Cluster::replica_slots_exact holds.
  bool slots_decide(const TaskSpec& s) const {
    if (!st.options_.fast_paths || st.stability_threshold(s) != 0) return false;
    return std::all_of(s.options.begin(), s.options.end(), [&s](const GangOption& o) {
      return Cluster::replica_slots_exact(o.head) && (s.workers == 0 || o.worker == o.head);
    });
  }
  /// try_start(tx, t, at, false, only).has_value() without placing anything, for a task with
  /// slots_decide(spec(t)), as if `released` (per node) were free on top of the cluster; `delta`
  /// is the same capacity per (pool, model) (Session::may_fit) or null when `released` is
  /// empty. Every placement policy picks a node that fits whenever one does (PlacementPolicy),
  /// and a replica placed lowers only its node's slots, by one (Cluster::replica_slots_exact):
  /// so the gang places exactly when the eligible nodes' slots reach its replica count.
  /// Quota is read as it stands (the caller charges what the releases give back).
  /// O(classes x options x nodes), stopping at the first node that completes the count; for a
  /// shape that takes vCPU only the nodes `released` touches and those with vCPU free now
  /// (Cluster::cpu_free_nodes) are visited (a full cluster's other nodes have no slot).
  bool fits_by_slots(TaskId t, Time at, const detail::ReleasedCapacity& released, const std::vector<Cluster::FreeSum>* delta,
                     std::optional<ResourceType> only = std::nullopt) const {
    const TaskSpec& s = spec(t);
    const Cluster& c = st.cluster_;
    NodeFilter f = NodeFilter::build(st.policies_, s, at, c.size());
    const std::int64_t need = s.replicas();
    for (ResourceType cls : classes(s)) {
      if (only && cls != *only) continue;
      QuotaKey k = quota_key(s, cls);
      for (std::size_t i = 0; i < s.options.size(); ++i) {
        if (!admits(k, s, t, s.demand(i)) || !may_fit(s, i, cls, delta)) continue;
        const ReplicaShape& r = s.options[i].head;
        std::int64_t have = 0;
        if (r.cpu_milli > 0) {
          // Only nodes that can hold a replica contribute (the answer does not depend on the
          // order): those `released` touches, then the others with vCPU free now
          // (Cluster::cpu_free_nodes; any other node has no slot for a shape that takes vCPU).
          for (std::size_t k = 0; k < released.touched.size() && have < need; ++k) {
            const NodeId id = released.touched[k];
            const std::int64_t slots = c.replica_slots(id, r, released.node[id.index()], released.gpu.data() + c.nodes()[id.index()].gpu_offset);
            if (slots > 0 && node_eligible(st, s, cls, id, f, at, false)) have += slots;
          }
          const std::vector<std::uint64_t>& bits = c.cpu_free_nodes();
          for (std::size_t w = 0; w < bits.size() && have < need; ++w)
            for (std::uint64_t b = bits[w]; b != 0 && have < need; b &= b - 1) {
              const NodeId id(static_cast<std::int32_t>(w * 64 + std::size_t(std::countr_zero(b))));
              if (released.touches(id)) continue;
              const std::int64_t slots = c.replica_slots(id, r);
              if (slots > 0 && node_eligible(st, s, cls, id, f, at, false)) have += slots;
            }
          if (have >= need) return true;
          continue;
        }
        for (std::size_t n = 0; n < c.size() && have < need; ++n) {
          NodeId id(static_cast<std::int32_t>(n));
          std::int64_t slots = released.touches(id) ? c.replica_slots(id, r, released.node[n], released.gpu.data() + c.nodes()[n].gpu_offset)
                                                     : c.replica_slots(id, r);
          if (slots > 0 && node_eligible(st, s, cls, id, f, at, false)) have += slots;
        }
        if (have >= need) return true;
      }
    }
    return false;
  }
  /// Replicas of shape `r` (vCPU, no GPU) that released replica `a`'s vCPU and memory alone
  /// would hold (0 when they hold none): what `a` adds at least to its node's slots.
  static std::int64_t slots_of_release(const ReplicaShape& r, const ReplicaAllocation& a) {
    if (a.cpu_milli < r.cpu_milli || a.mem_mib < r.mem_mib) return 0;
    std::int64_t k = a.cpu_milli / r.cpu_milli;
    if (r.mem_mib > 0) k = std::min(k, a.mem_mib / r.mem_mib);
    return k;
  }
  /// `have` plus the slots of shape `r` (Cluster::replica_slots) on the nodes with vCPU free now
  /// that `eligible(NodeId)` admits, counted until the sum reaches `need`.
  template <class Eligible>
  std::int64_t add_free_slots(const ReplicaShape& r, std::int64_t have, std::int64_t need, Eligible&& eligible) const {
    const Cluster& c = st.cluster_;
    const std::vector<std::uint64_t>& bits = c.cpu_free_nodes();
    for (std::size_t w = 0; w < bits.size() && have < need; ++w)
      for (std::uint64_t b = bits[w]; b != 0 && have < need; b &= b - 1) {
        const NodeId id(static_cast<std::int32_t>(w * 64 + std::size_t(std::countr_zero(b))));
        const std::int64_t slots = c.replica_slots(id, r);
        if (slots > 0 && eligible(id)) have += slots;
      }
    return have;
  }
  /// A sufficient test for fits_by_slots: true only when fits_by_slots(t, at, released, delta)
  /// is true for every `released` that holds at least the replicas of `pending` (counted on
  /// top of the cluster), with `delta` the same capacity per (pool, model). For options whose
  /// replica shape takes vCPU and no GPU: a node's slots with releases are at least its slots
  /// now plus, for each replica released there, the replicas of the shape that this replica's
  /// vCPU and memory alone would hold (floor(x + y) >= floor(x) + floor(y), and a minimum of
  /// sums is at least the sum of the minimums). So these counts, summed over the eligible up,
  /// undrained nodes, bound from below the slots fits_by_slots counts. False when unsure
  /// (other shapes, or released fragments that only add up on one node). Counts no
  /// ReleasedCapacity: O(classes x options x (replicas of pending + nodes with vCPU free)).
  bool fits_by_slots_at_least(TaskId t, Time at, std::span<const Placement* const> pending,
                              const std::vector<Cluster::FreeSum>* delta) const {
    const TaskSpec& s = spec(t);
    const Cluster& c = st.cluster_;
    const std::int64_t need = s.replicas();
    const NodeFilter f = NodeFilter::build(st.policies_, s, at, c.size());
    for (ResourceType cls : classes(s)) {
      QuotaKey k = quota_key(s, cls);
      for (std::size_t i = 0; i < s.options.size(); ++i) {
        const ReplicaShape& r = s.options[i].head;
        if (r.num_gpu != 0 || r.cpu_milli <= 0) continue;
        if (!admits(k, s, t, s.demand(i)) || !may_fit(s, i, cls, delta)) continue;
        std::int64_t have = 0;
        for (std::size_t j = 0; j < pending.size() && have < need; ++j)
          for (const auto& a : pending[j]->replicas) {
            const std::int64_t n = slots_of_release(r, a);
            if (n <= 0) continue;
            const Node& node = c.nodes()[a.node.index()];
            if (node.up && !node.drained && node_eligible(st, s, cls, a.node, f, at, false)) have += n;
          }
        if (add_free_slots(r, have, need, [&](NodeId id) { return node_eligible(st, s, cls, id, f, at, false); }) >= need)
          return true;
      }
    }
    return false;
  }

  // ------------------------------------------------------------------ the victim rule
  bool may_preempt(TaskId t) const {
    const TaskSpec& s = spec(t);
    if (s.resource_type == ResourceType::idle || s.resource_type == ResourceType::spot) return false;
    return st.options_.preemption || st.options_.idle_reclaim || st.options_.spot_eviction;
  }
  /// The one rule behind Scheduler::preemption_kind() and the victim scan: may a task running
  /// on `capacity` with `priority` / `guarantee` yield to preemptor `p`, and as what?
  /// `hypothetical`: as if preemption, idle reclaim and spot eviction were all enabled (for
  /// explain()'s fits_after_preemption when the options disable them).
  std::optional<PreemptionKind> victim_kind(const TaskSpec& p, ResourceType capacity, std::int32_t priority, bool guarantee,
                                            bool hypothetical) const {
    const SchedulerOptions& o = st.options_;
    if (p.resource_type == ResourceType::idle || p.resource_type == ResourceType::spot) return std::nullopt;
    // Guarantee means non-preemptible capacity: it protects on reserved and pay-as-you-go
    // capacity only. Once on idle capacity (an accept_idle fallback) idle rules apply; spot
    // capacity is preemptible by definition.
    if (guarantee && capacity != ResourceType::idle && capacity != ResourceType::spot) return std::nullopt;
    // Idle capacity is preemptible by any task of strictly higher priority (docs/platform.md
    // "Resource types"). An idle task has no priority (0 internally): every preemptor
    // outranks it. A reserved task that fell back to idle capacity keeps its own: a borrower
    // yields only to a higher-priority task, so two borrowers never evict each other
    // (without this, a priority-2 borrower reclaimed a priority-8 one and back, forever).
    if (capacity == ResourceType::idle) {
      if ((o.idle_reclaim || hypothetical) && priority < p.priority) return PreemptionKind::idle_reclaim;
      return std::nullopt;
    }
    if (capacity == ResourceType::spot) {
      if (o.spot_eviction || hypothetical) return PreemptionKind::spot_eviction;
      return std::nullopt;
    }
    if ((o.preemption || hypothetical) && priority < p.priority) return PreemptionKind::priority;
    return std::nullopt;
  }
  /// May some task running on capacity `c` yield to preemptor `p` (victim_kind)? Asks the
  /// most exposed one, the lowest priority guarantee does not protect there
  /// (Core::lowest_exposed_priority), so no scan of the running set: false means no running
  /// task on `c` is a candidate.
  bool may_yield_on(const TaskSpec& p, ResourceType c, bool hypothetical) const {
    if (st.running_on_[std::size_t(c)] == 0) return false;
    if (order_may_preempt(p, c, hypothetical)) return true;  // (not known without a scan)
    const std::optional<std::int32_t> lowest = st.lowest_exposed_priority(c);
    if (!lowest) return false;  // every task on `c` has guarantee there
    return victim_kind(p, c, *lowest, false, hypothetical).has_value();
  }
  /// may_yield_on for some capacity class.
  bool may_yield_any(const TaskSpec& p, bool hypothetical) const {
    // No setting lets a running task yield (priority preemption and the order's own are off;
    // idle reclaim and spot eviction are off or nothing runs there): false for every `p`
    // without the per-class look-ups (allocate asks for each failed task after a start).
    const SchedulerOptions& o = st.options_;
    if (!hypothetical && !o.preemption && !st.order_preempts_ &&
        (!o.idle_reclaim || st.running_on_[std::size_t(ResourceType::idle)] == 0) &&
        (!o.spot_eviction || st.running_on_[std::size_t(ResourceType::spot)] == 0))
      return false;
    for (ResourceType c : {ResourceType::reserved, ResourceType::pay_as_you_go, ResourceType::spot, ResourceType::idle})
      if (may_yield_on(p, c, hypothetical)) return true;
    return false;
  }
  std::optional<PreemptionKind> preemption_kind(TaskId preemptor, TaskId victim, bool hypothetical) const {
    const Entry& p = st.tasks_.at(preemptor.index());
    const Entry& v = st.tasks_.at(victim.index());
    if (v.state != State::running) return std::nullopt;
    const Placement& pl = st.placement(v);
    if (auto k = victim_kind(p.spec, pl.capacity, v.spec.priority, v.spec.guarantee, hypothetical)) return k;
    return order_kind(p.spec, victim, pl.capacity, pl.start, std::max(now, st.last_now_), hypothetical);
  }
  /// Could the queue order's own preemption (QueueOrder::preemptive) take some task running on
  /// capacity `c` for preemptor `p`? Reserved and pay-as-you-go capacity only (idle and spot
  /// tasks already yield by the platform rules), with `scheduler.preemption` on.
  bool order_may_preempt(const TaskSpec& p, ResourceType c, bool hypothetical) const {
    if (!st.order_preempts_ || p.resource_type == ResourceType::idle || p.resource_type == ResourceType::spot) return false;
    return (st.options_.preemption || hypothetical) && (c == ResourceType::reserved || c == ResourceType::pay_as_you_go);
  }
  /// The queue order's own preemption (docs/scheduler.md "Research queue orders"): running task
  /// `victim` (on `capacity`, its attempt started at `start`) yields to preemptor `p` at `now`
  /// when it is not guaranteed, has p's priority and the order says so
  /// (QueueOrder::preempts). Reported as a priority preemption.
  std::optional<PreemptionKind> order_kind(const TaskSpec& p, TaskId victim, ResourceType capacity, Time start, Time now,
                                           bool hypothetical) const {
    if (!order_may_preempt(p, capacity, hypothetical)) return std::nullopt;
    const TaskSpec& v = spec(victim);
    if (v.guarantee || v.priority != p.priority || !st.queue_order_->preempts(p, v, start, gpu_milli_of(victim), now))
      return std::nullopt;
    return PreemptionKind::priority;
  }
  /// Milli-GPU held by running task `t` (all replicas).
  std::int64_t gpu_milli_of(TaskId t) const { return st.held_gpu_milli(t); }

  // ------------------------------------------------------------------ applying decisions
  /// Frees a running task's replicas and quota inside `tx`.
  void release_into(Transaction& tx, TaskId t) { release_into(tx, st.placement(st.tasks_[t.index()])); }
  /// The same for a running task's placement `p` (RunInfo::placement).
  void release_into(Transaction& tx, const Placement& p) {
    for (const auto& a : p.replicas) tx.release(a);
    if (p.capacity != ResourceType::idle) tx.charge(p.quota_key, p.quota_held, -1);
  }
  /// After release_into() was committed: the task is no longer running (its attempt ended at
  /// `now`).
  void finish_release(TaskId t, Time now) {
    Entry& e = st.tasks_[t.index()];
    const Placement& pl = st.placement(e);
    const double attempt_gpu_s = double(gpu_milli_of(t)) * double(now - pl.start) / 1e6;  // milli-GPU x ms -> GPU x s
    e.spec.attained_gpu_s += attempt_gpu_s;
    if (st.order_by_tenant_) st.tenant_ended_gpu_s_[e.spec.tenant] += attempt_gpu_s;
    for (const auto& a : pl.replicas) {
      auto& v = st.node_tasks_[a.node.index()];
      v.erase(std::find(v.begin(), v.end(), t));
      if (pl.capacity != ResourceType::idle) st.cluster_.touch_owner(a.node, now);
    }
    st.running_.erase(t);
    if (st.keep_ends_) st.expected_ends_.erase({Core::raw_end(e.spec, pl.start), st.run_info_[st.run_pos_[t.index()]].sequence, t});
    {
      std::size_t pos = st.run_pos_[t.index()];
      st.bucket_erase(st.run_info_[pos]);
      st.run_pos_[st.run_info_.back().id.index()] = pos;
      st.run_info_[pos] = st.run_info_.back();
      st.run_info_.pop_back();
    }
    st.account(pl, e.spec, -1);
    e.state = State::idle_state;
    st.drop_placement(e);
    ++st.capacity_epoch_;
    ++st.state_epoch_;
  }
  /// After try_start()'s transaction was committed: the task runs with placement `p`.
  void commit_start(TaskId t, Placement p, Time now) {
    Entry& e = st.tasks_[t.index()];
    st.class_leave(t);
    st.queue_erase(t);
    if (!st.aging_.empty()) st.aging_.erase(std::remove(st.aging_.begin(), st.aging_.end(), t), st.aging_.end());
    e.state = State::running;
    e.hold = Entry::Hold::none;
    for (const auto& a : p.replicas) {
      st.node_tasks_[a.node.index()].push_back(t);
      if (p.capacity != ResourceType::idle) st.cluster_.touch_owner(a.node, now);
    }
    st.hold_placement(e, std::move(p));
    const Placement& pl = st.placement(e);
    st.account(pl, e.spec, +1);
    st.started_now_.push_back(t);
    st.running_.insert(t);
    ++st.state_epoch_;
    if (st.run_pos_.size() < st.tasks_.size()) st.run_pos_.resize(st.tasks_.size(), 0);
    st.run_pos_[t.index()] = st.run_info_.size();
    st.run_info_.push_back(RunInfo{t, pl.capacity, e.spec.priority, e.spec.guarantee, pl.start,
                                   e.spec.checkpoint_interval, e.spec.sequence, &pl});
    st.bucket_insert(st.run_info_.back());
    if (st.keep_ends_) st.expected_ends_.emplace(Core::raw_end(e.spec, pl.start), e.spec.sequence, t);
  }

  // ------------------------------------------------------------------ the pass memo
  /// Signature of a request for the per-pass failure memo; 0 = do not memoise (node policies
  /// apply, or a plugin may tell tasks with identical requests apart).
  std::uint64_t signature(TaskId t, Time now) const {
    if (!st.memo_by_signature_) return 0;
    const TaskSpec& s = spec(t);
    for (const auto& p : st.policies_)
      if (p.applies(s, now)) return 0;
    // The hash reads the spec and whether a quota entry exists for it: cached while the task
    // waits (Core::request_hash).
    return st.request_hash(t);
  }
  /// Bumps the epoch when a node policy starts or ends in (last_now_, now].
  void note_time(Time now) {
    if (policies_change_by(now) || (st.order_victims_grow_ && now > st.last_now_)) {
      ++st.capacity_epoch_;
      ++st.state_epoch_;
      st.note_code_change();
    }
    // The starvation guard (las): promotions due by now (their preemptions may start now).
    if (st.promote_after_ > 0 && now > st.last_now_ && st.promote_starving(now)) {
      ++st.queue_epoch_;
      ++st.capacity_epoch_;
      ++st.state_epoch_;
      st.note_code_change();
    }
    // An order by tenant service (fair): the ranks of this instant. A new order changes which
    // task heads the queue (strict / backfill holds), not what capacity a task finds.
    if (st.order_by_tenant_ && now > st.last_now_ && st.rerank_queue(now)) {
      ++st.queue_epoch_;
      ++st.state_epoch_;
      st.note_code_change();
      st.strict_tail_.reset();
      st.bf_chainable_ = false;
    }
    st.last_now_ = std::max(st.last_now_, now);
  }
  /// Would a node policy start or end in (last pass, now]? Then schedule() bumps the capacity
  /// epoch first (note_time) and a remembered failure no longer holds.
  bool policies_change_by(Time now) const {
    for (const auto& p : st.policies_)
      if ((p.created > st.last_now_ && p.created <= now) || (p.expire > st.last_now_ && p.expire <= now)) return true;
    return false;
  }
};

}  // namespace libsched
