// detail::SchedulerCore: the state a Scheduler owns (cluster, quota book, node policies, tasks,
// the queue, the running set, the plugins, the request classes, and the memo that lets a pass
// skip requests known to fail), and ReleasedCapacity, the capacity a reservation walk counts as
// free. Read and changed through a Session (session.hpp), which every action and explain() use;
// nothing else touches it (docs/architecture.md).
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
#include <string>
#include <tuple>
#include <vector>

#include "libsched/cluster.hpp"
#include "libsched/decisions.hpp"
#include "libsched/detail/queue_array.hpp"
#include "libsched/detail/request_classes.hpp"
#include "libsched/detail/signature_map.hpp"
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

namespace detail {

/// Clusters from this many nodes on keep the first-fit tree under a first-fit policy
/// (Cluster::keep_fit_tree).
inline constexpr std::size_t kFitTreeMinNodes = 1024;

/// Capacity counted as free on top of the cluster's, node by node: what tasks expected to end
/// by some future time release (actions::reservation walks it instead of releasing into the
/// cluster). Filled with add(), read with Session::fits_by_slots, emptied with clear() in
/// O(nodes touched).
struct ReleasedCapacity {
  std::vector<Resources> node;       ///< per node id (milli-vCPU, MiB; gpu_milli unused)
  std::vector<std::int32_t> gpu;     ///< per GPU, Node::gpu_offset layout
  std::vector<char> touched_flag;    ///< per node id
  std::vector<NodeId> touched;
  bool touches(NodeId n) const { return n.index() < touched_flag.size() && touched_flag[n.index()]; }
  void add(const Cluster& c, const ReplicaAllocation& a) {
    const Node& n = c.nodes()[a.node.index()];
    if (node.size() < c.size()) {
      node.resize(c.size());
      touched_flag.resize(c.size(), 0);
    }
    if (gpu.size() < std::size_t(n.gpu_offset) + std::size_t(n.gpus)) gpu.resize(std::size_t(n.gpu_offset) + std::size_t(n.gpus), 0);
    if (!touched_flag[a.node.index()]) {
      touched_flag[a.node.index()] = 1;
      touched.push_back(a.node);
    }
    node[a.node.index()].cpu_milli += a.cpu_milli;
    node[a.node.index()].mem_mib += a.mem_mib;
    for (std::uint64_t m = a.gpu_mask; m; m &= m - 1) gpu[n.gpu_offset + std::uint32_t(std::countr_zero(m))] += a.gpu_milli;
  }
  /// Takes back what add(c, a) counted for `a` (added since the last clear()); its node stays
  /// touched (with nothing counted, it offers the slots it offers without releases).
  void remove(const Cluster& c, const ReplicaAllocation& a) {
    const Node& n = c.nodes()[a.node.index()];
    node[a.node.index()].cpu_milli -= a.cpu_milli;
    node[a.node.index()].mem_mib -= a.mem_mib;
    for (std::uint64_t m = a.gpu_mask; m; m &= m - 1) gpu[n.gpu_offset + std::uint32_t(std::countr_zero(m))] -= a.gpu_milli;
  }
  void clear(const Cluster& c) {
    for (NodeId id : touched) {
      node[id.index()] = Resources{};
      touched_flag[id.index()] = 0;
      const Node& n = c.nodes()[id.index()];
      std::fill_n(gpu.begin() + std::ptrdiff_t(n.gpu_offset), n.gpus, 0);
    }
    touched.clear();
  }
};

/// The state a Scheduler owns. Members keep the Scheduler's own names (Scheduler derives from
/// this). `mutable` members are those explain() (a const query) touches while it probes: its
/// trials run in rolled-back transactions and leave them as they were.
struct SchedulerCore {
  SchedulerCore(Cluster cluster, SchedulerOptions options, const Registry& registry)
      : cluster_(std::move(cluster)), options_(std::move(options)) {
    PolicyContext ctx{options_.seed, options_.workload, options_.las_thresholds_gpu_s, options_.las_starvation,
                        options_.service_gpu_s, options_.qssf_default, options_.fair_shares};
    policy_ = registry.placement.create(options_.placement, ctx);
    queue_order_ = registry.queue_order.create(options_.queue_order, ctx);
    victim_order_ = registry.victim_order.create(options_.victim_order, ctx);
    admission_ = registry.admission.create(options_.admission, ctx);
    // The builtin plugins run devirtualised (the same rule, called directly).
    builtin_queue_order_ = dynamic_cast<const plugins::PriorityFifo*>(queue_order_.get()) != nullptr;
    builtin_victim_order_ = dynamic_cast<const plugins::IdleSpotFirst*>(victim_order_.get()) != nullptr;
    builtin_admission_ = dynamic_cast<const plugins::QuotaAdmission*>(admission_.get()) != nullptr;
    // First-fit as built in (FirstFit is final: no override of its hooks): Session::place_gang
    // scans for its nodes itself.
    builtin_first_fit_ = dynamic_cast<const placement::FirstFit*>(policy_.get()) != nullptr;
    feasible_only_placement_ = builtin_first_fit_ || dynamic_cast<const placement::BestFit*>(policy_.get()) != nullptr ||
                               dynamic_cast<const placement::WorstFit*>(policy_.get()) != nullptr;
    order_preempts_ = !builtin_queue_order_ && queue_order_->preemptive();
    order_victims_grow_ = order_preempts_ && queue_order_->victims_grow();
    order_by_tenant_ = !builtin_queue_order_ && queue_order_->ranks_by_tenant_service();
    promote_after_ = builtin_queue_order_ ? 0 : queue_order_->promote_after();
    // An order that preempts tells equal requests apart (what each may preempt depends on its
    // own rank): no merging of equal requests then (nor request classes).
    memo_by_signature_ = builtin_admission_ && policy_->shape_only() && !order_preempts_;
    // (Without preemption, idle reclaim or spot eviction only explain()'s hypothetical searches
    // read victims: they scan the running set, and no run pays for the buckets' upkeep.)
    bucket_victims_ = options_.fast_paths && builtin_victim_order_ && !order_preempts_ &&
                      (options_.preemption || options_.idle_reclaim || options_.spot_eviction);
    // Only best-fit / worst-fit style policies read the free index (placement::pick_node).
    cluster_.keep_free_index(policy_->scan_order() != PlacementPolicy::ScanOrder::all_nodes);
    // First-fit jumps over full nodes with the fit tree (placement::pick_full_scan) on large
    // clusters; not when the reference full scan is asked for. On a few hundred nodes a scan
    // is cheaper than the tree's O(log N) upkeep at every allocation and release (measured:
    // 100 and 240 nodes 2x slower with it, 2,496 nodes 25 % faster).
    cluster_.keep_fit_tree(policy_->first_feasible_wins() && !options_.full_scan_placement && options_.fast_paths &&
                           cluster_.size() >= kFitTreeMinNodes);
    node_tasks_.resize(cluster_.size());
    keep_ends_ = options_.queueing == Queueing::backfill;
    // (request classes hold queue keys, which an order by tenant service changes: off then)
    classes_on_ = options_.fast_paths && options_.request_classes && memo_by_signature_ &&
                  (options_.queueing == Queueing::greedy || options_.queueing == Queueing::backfill) && !order_by_tenant_;
  }

  enum class State : std::uint8_t { idle_state, waiting, running };
  /// A task's record. The fields a walk of the queue reads at every step (actions::allocate:
  /// dormancy, failure memo, signature cache, request class, listing) come first and fill the
  /// entry's first 64-byte line (the entry is line-aligned): a step costs one line, not three.
  struct alignas(64) Entry {
    State state = State::idle_state;
    /// The last take_visited_waiting listed it while a queue hold of the last pass applied
    /// (its observer's status: blocked_by_queue). A pass that holds it again (fast paths) does
    /// not list it again: nothing it reports changed. Reset at enqueue.
    bool reported_held = false;
    /// The last take_visited_waiting listed it not held while it was dormant (dormant()), right
    /// after the schedule() call it failed in (nothing changed since): its observer's code is
    /// then the diagnosis of a dormant request, which reads the nodes' state and the request
    /// only (actions::dormant_eligible), not the free capacity. While no such input changed
    /// since that listing (stable_code), a later walk that fails it as dormant does not list it
    /// again, even after releases. Reset at enqueue.
    bool reported_stable = false;
    /// The queue hold its last pass put on it: none, behind `hold_head` under strict queueing,
    /// or would delay `hold_head`'s reservation (backfill). explain() turns it into a
    /// WaitStatus (Explain::hold_status) only when asked.
    enum class Hold : std::uint8_t { none, strict, backfill };
    Hold hold = Hold::none;
    /// The dormant generation it failed in (Core::dormant_gen_; 0: none).
    std::uint32_t dormant_gen = 0;
    std::uint64_t failed_epoch = ~std::uint64_t{0};  ///< capacity epoch of its last failed try
    /// The schedule() call (pass_) whose last visit tried it and failed, the failure
    /// remembered (failed_epoch); 0 otherwise (explain's failed_in_settled_pass).
    std::uint64_t failed_pass = 0;
    /// Session::signature's hash of the spec (0: not computed yet), valid while the quota
    /// book has spec_hash_quotas entries (entries are only ever added); reset at enqueue.
    std::uint64_t spec_hash = 0;
    std::size_t spec_hash_quotas = 0;
    /// The listing (Core::listings_) that set reported_held; a listing of every waiting task by
    /// request class after it (Core::all_listed_at_) reported it not held (reported_held_now).
    std::uint64_t reported_at = 0;
    /// Its request class while it waits (classes_, kNoClass otherwise) and the class_joins_
    /// count when it joined (failed_epoch_of).
    std::uint64_t join_seq = 0;
    std::uint32_t req_class = ~std::uint32_t{0};
    /// Slot of its placement in SchedulerCore::placements_ while it runs (kNoSlot otherwise):
    /// placements are held for running tasks only, not in every task's entry.
    std::uint32_t placement_slot = kNoSlot;
    // ---- (end of the first line)
    TaskSpec spec;
    TaskId hold_head;
    Rank rank{};                                      ///< queue rank, set at enqueue
    Time enqueued_at = 0;                             ///< `now` of its last enqueue
    /// (pass, capacity epoch, now) of the pass that set a blocked_by_queue status.
    std::tuple<std::uint64_t, std::uint64_t, Time> hold_stamp{0, 0, 0};
  };
  /// The queue's sort key: (rank, name, sequence, id) (TaskSpec::sequence: the embedder's
  /// order, then the id).
  struct QueueKey {
    Rank rank;
    std::string name;
    std::uint64_t sequence = 0;
    TaskId id;
    /// The order's fields as references: compare with std::tie(rank, name, sequence, id) of a
    /// task without copying its name into a key.
    auto tied() const { return std::tie(rank, name, sequence, id); }
    friend bool operator<(const QueueKey& a, const QueueKey& b) { return a.tied() < b.tied(); }
  };
  /// Running tasks, unordered (swap-remove), with what victim eligibility and order need.
  struct RunInfo {
    TaskId id;
    ResourceType capacity;
    std::int32_t priority;
    bool guarantee;
    Time start;
    Time checkpoint;
    std::uint64_t sequence;  ///< TaskSpec::sequence (victim order's tie-break before the id)
    /// Its placement (placements_ is a deque: the element stays put while the task runs), read
    /// by the victim search's slot bound without a lookup through the task's entry.
    const Placement* placement = nullptr;
  };
  struct ScratchRel { std::int64_t cpu = 0, mem = 0; std::int32_t gpu[kMaxGpusPerNode]; };

  QueueKey key(TaskId t) const {
    const Entry& e = tasks_[t.index()];
    return {e.rank, e.spec.name, e.spec.sequence, t};
  }
  /// key(t) as references to the entry's fields (QueueKey::tied's form): compares with a
  /// QueueKey's tied() or another tied_key without copying the task's name. Valid while the
  /// entry is not moved (no task added).
  std::tuple<const Rank&, const std::string&, const std::uint64_t&, TaskId> tied_key(TaskId t) const {
    const Entry& e = tasks_[t.index()];
    return {e.rank, e.spec.name, e.spec.sequence, t};
  }
  /// The tie-break key of task `t` between equal ranks: (TaskSpec::sequence, id). O(1).
  std::pair<std::uint64_t, TaskId> order_key(TaskId t) const { return {tasks_[t.index()].spec.sequence, t}; }
  /// Sorts `ids` by order_key and drops repeats, through `scratch` (keys copied once: no
  /// lookup per comparison). O(n log n).
  void sort_by_order_key(std::vector<TaskId>& ids, std::vector<std::pair<std::uint64_t, TaskId>>& scratch) const {
    scratch.clear();
    for (TaskId t : ids) scratch.push_back(order_key(t));
    // (a pass lists tasks in queue order, often already this order: FIFO traces; then, with
    // no repeat, `ids` is the answer as it stands)
    if (std::adjacent_find(scratch.begin(), scratch.end(), [](const auto& a, const auto& b) { return !(a < b); }) == scratch.end())
      return;
    if (!std::is_sorted(scratch.begin(), scratch.end())) std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
    ids.clear();
    for (const auto& k : scratch) ids.push_back(k.second);
  }
  /// The rank of task `t` (spec `s`) enqueued at `now`.
  Rank queue_rank(const TaskSpec& s, TaskId t, Time now) const {
    if (builtin_queue_order_) return plugins::PriorityFifo::of(s);
    if (order_by_tenant_) return queue_order_->rank_for_tenant(s, t, tenant_gpu_s(s.tenant, now));
    return queue_order_->rank(s, t);
  }
  /// Milli-GPU held by running task `t` (all replicas).
  std::int64_t held_gpu_milli(TaskId t) const {
    std::int64_t m = 0;
    for (const auto& a : placement(tasks_[t.index()]).replicas) m += a.total_gpu_milli();
    return m;
  }
  /// GPU x seconds of running task `ri` from its start to `now` (the unit of attained service).
  double run_gpu_s(const RunInfo& ri, Time now) const { return double(held_gpu_milli(ri.id)) * double(now - ri.start) / 1e6; }
  /// Attained service of `tenant` at `now` (order_by_tenant_ only): GPU x seconds of its ended
  /// attempts and of its running ones so far. O(running tasks).
  double tenant_gpu_s(std::string_view tenant, Time now) const {
    const auto it = tenant_ended_gpu_s_.find(tenant);
    double g = it == tenant_ended_gpu_s_.end() ? 0.0 : it->second;
    for (const RunInfo& ri : run_info_)
      if (tasks_[ri.id.index()].spec.tenant == tenant) g += run_gpu_s(ri, now);
    return g;
  }
  /// Ranks every waiting task anew at `now` (order_by_tenant_): each tenant's attained service
  /// once, then the queue's keys, reusing its nodes. Returns whether any rank changed.
  /// O(running + queue x log queue).
  bool rerank_queue(Time now) {
    std::map<std::string_view, double, std::less<>> by_tenant;
    for (const auto& [tenant, g] : tenant_ended_gpu_s_) by_tenant[tenant] = g;
    for (const RunInfo& ri : run_info_) by_tenant[tasks_[ri.id.index()].spec.tenant] += run_gpu_s(ri, now);
    bool changed = false;
    std::set<QueueKey> q;
    while (!queue_.empty()) {
      auto node = queue_.extract(queue_.begin());
      Entry& e = tasks_[node.value().id.index()];
      const auto it = by_tenant.find(e.spec.tenant);
      const Rank r = queue_order_->rank_for_tenant(e.spec, node.value().id, it == by_tenant.end() ? 0.0 : it->second);
      if (!(r == e.rank)) changed = true;
      e.rank = node.value().rank = r;
      q.insert(std::move(node));
    }
    queue_.swap(q);
    queue_array_.rebuild(queue_);
    return changed;
  }
  /// Tasks whose candidate nodes can grow with time alone: idle fragments offered at high or
  /// medium stability age into eligibility.
  static bool ages(const TaskSpec& s) {
    bool may_idle = s.resource_type == ResourceType::idle || s.accept_idle || s.prefer_idle;
    return may_idle && s.idle_stability != IdleStability::low;
  }
  /// Fragment age a task's idle placements need (0: any fragment, or it never runs on idle).
  Time stability_threshold(const TaskSpec& s) const {
    if (!ages(s)) return 0;
    return s.idle_stability == IdleStability::high ? options_.idle_stability_high : options_.idle_stability_medium;
  }
  /// Did the last pass, at `now` with nothing released since, put a queue hold on waiting task
  /// `t`? Then a new pass would hold it the same way (explain's first answer): the head it
  /// waits behind, else nullopt. A task that pass skipped as held since an earlier pass
  /// (strict_tail_) counts as held by it, behind its head.
  std::optional<TaskId> last_pass_hold(TaskId t, Time now) const {
    const Entry& e = tasks_[t.index()];
    if (e.state != State::waiting || e.hold == Entry::Hold::none) return std::nullopt;
    const auto stamp = std::make_tuple(pass_, capacity_epoch_, now);
    if (e.hold_stamp == stamp) return e.hold_head;
    if (e.hold == Entry::Hold::strict && strict_tail_ && strict_tail_stamp_ == stamp &&
        strict_tail_->tied() < std::tie(e.rank, e.spec.name, e.spec.sequence, t))
      return strict_tail_head_;
    return std::nullopt;
  }
  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
  /// The placement of a running task's entry (an empty one for any other task).
  const Placement& placement(const Entry& e) const {
    static const Placement k_none{};
    return e.placement_slot == kNoSlot ? k_none : placements_[e.placement_slot];
  }
  /// The placement of a running task's entry, to change it (adding or removing a worker).
  Placement& placement(Entry& e) { return placements_[e.placement_slot]; }
  /// Gives `e` a slot holding `p` (a freed slot first).
  void hold_placement(Entry& e, Placement&& p) {
    if (free_slots_.empty()) {
      e.placement_slot = std::uint32_t(placements_.size());
      placements_.push_back(std::move(p));
    } else {
      e.placement_slot = free_slots_.back();
      free_slots_.pop_back();
      placements_[e.placement_slot] = std::move(p);
    }
    placement_changed(e);
  }
  /// What running task `e`'s placement releases on the nodes that take replicas, for
  /// actions::add_released: computed on first use (actions::release_sum), valid while the
  /// cluster's schedulable_version() is `version` and the placement does not change
  /// (placement_changed). `one_slot`: every counted replica is on a node of one (pool, model)
  /// slot `slot` (pool `pool`), holds no GPU, and takes `cpu_milli` vCPU and `mem_mib` MiB; then
  /// `sum` is their capacity and `count` their number (else add_released goes replica by replica).
  struct ReleaseSum {
    std::uint64_t version = ~std::uint64_t{0};
    bool one_slot = false;
    std::size_t slot = 0;
    PoolId pool;
    Cluster::FreeSum sum;
    std::int64_t count = 0;
    std::int64_t cpu_milli = 0, mem_mib = 0;
  };
  /// By placement slot (Entry::placement_slot).
  std::vector<ReleaseSum> release_sums_;
  /// Running task `e`'s placement was set or changed (a worker added or removed): its
  /// ReleaseSum is stale.
  void placement_changed(const Entry& e) {
    if (release_sums_.size() <= e.placement_slot) release_sums_.resize(std::size_t(e.placement_slot) + 1);
    release_sums_[e.placement_slot].version = ~std::uint64_t{0};
  }
  /// Frees `e`'s slot (its placement cleared).
  void drop_placement(Entry& e) {
    placement_changed(e);
    placements_[e.placement_slot] = Placement{};
    free_slots_.push_back(e.placement_slot);
    e.placement_slot = kNoSlot;
  }
  void account(const Placement& p, const TaskSpec& s, int sign) {
    for (const auto& a : p.replicas) allocated_[std::size_t(p.capacity)] += sign * a.total_gpu_milli();
    running_on_[std::size_t(p.capacity)] += sign;
    if (exposed(p.capacity, s.guarantee)) exposed_by_priority_[std::size_t(p.capacity)][priority_slot(s.priority)] += sign;
  }
  /// May a task running on `capacity` be a victim at all as far as guarantee goes? Guarantee
  /// protects on reserved and pay-as-you-go capacity only (Session::victim_kind).
  static bool exposed(ResourceType capacity, bool guarantee) {
    return !guarantee || capacity == ResourceType::idle || capacity == ResourceType::spot;
  }
  static std::size_t priority_slot(std::int32_t priority) { return std::size_t(std::clamp(priority, 0, 10)); }
  /// The lowest priority of a running task on capacity `c` that guarantee does not protect
  /// (exposed(): the most exposed victim there), or nullopt when none runs there.
  std::optional<std::int32_t> lowest_exposed_priority(ResourceType c) const {
    const auto& counts = exposed_by_priority_[std::size_t(c)];
    for (std::size_t q = 0; q < counts.size(); ++q)
      if (counts[q] > 0) return std::int32_t(q);
    return std::nullopt;
  }

  // ---- request classes (SchedulerOptions::request_classes; actions::allocate_by_class)
  using ClassIndex = RequestClassIndex<QueueKey>;
  static constexpr std::uint32_t kNoClass = ClassIndex::kNone;
  /// The capacity epoch of waiting task `e`'s last failed try: its own, or its class's when the
  /// class failed after it joined (a failing member stands for the members behind it, which the
  /// pass skips by signature).
  std::uint64_t failed_epoch_of(const Entry& e) const { return classes_.failed_epoch_of(e.req_class, e.join_seq, e.failed_epoch); }
  /// The schedule() call whose last visit tried waiting task `e` and failed (Entry::failed_pass),
  /// or its class's failure after it joined (a class pass skips the members behind a failure).
  /// A dormant task (dormant()) counts as failed in every walk that skipped it.
  std::uint64_t failed_pass_of(const Entry& e) const {
    const std::uint64_t p = classes_.failed_pass_of(e.req_class, e.join_seq, e.failed_pass);
    return dormant(e) ? std::max(p, dormant_walk_pass_) : p;
  }
  /// Did the last listing of waiting task `e` (Scheduler::take_visited_waiting) report it held?
  /// Not when every waiting task was listed by class since (no holds in a class pass).
  bool reported_held_now(const Entry& e) const { return e.reported_held && e.reported_at > all_listed_at_; }
  /// Does waiting task `e`'s observer hold the code a diagnosis gives now, as long as the task
  /// fails as dormant (actions::allocate's failure path)? Its last listing reported it stable
  /// (Entry::reported_stable) and nothing a dormant request's diagnosis reads changed since
  /// (code_changed_at_). O(1).
  bool stable_code(const Entry& e) const { return e.reported_stable && e.reported_at > code_changed_at_; }
  /// Something a dormant request's wait code may read changed (node state, quota, node
  /// policies, the running tasks' specs or workers, the queue order's ranks...; every change
  /// of the state epoch other than a task's start or release): no listing before now vouches
  /// for a code any more (stable_code).
  void note_code_change() { code_changed_at_ = listings_; }
  /// A backfill class pass (actions::allocate_by_class) visits every waiting task and holds
  /// none; the members it skips keep the queue hold of an earlier pass in their entry. Drops
  /// such a stale hold (one set before the last class pass, on a task that joined before it):
  /// what a walk of the queue would have done (Entry::hold is read once the task stops waiting).
  void drop_stale_hold(Entry& e) const {
    if (e.hold != Entry::Hold::none && e.req_class != kNoClass && e.join_seq <= class_pass_joins_ &&
        std::get<0>(e.hold_stamp) < class_pass_no_)
      e.hold = Entry::Hold::none;
  }
  /// detail::request_hash of waiting task `t`, cached in its entry while the quota book's entry
  /// count stays the same (a waiting task's spec does not change; entries are only added).
  std::uint64_t request_hash(TaskId t) { return request_hash(tasks_[t.index()]); }
  /// The same for waiting task entry `e` (the walk has it at hand).
  std::uint64_t request_hash(Entry& e) {
    const std::size_t quotas = quotas_.entries().size();
    if (e.spec_hash == 0 || e.spec_hash_quotas != quotas) {
      e.spec_hash = detail::request_hash(e.spec, quotas_);
      e.spec_hash_quotas = quotas;
    }
    return e.spec_hash;
  }
  /// Waiting task `t` (already in queue_) joins its request class. O(log class).
  void class_join(TaskId t) {
    if (!classes_on_) return;
    if (quotas_.entries().size() != classes_.quota_entries) return rebuild_classes();  // (t joins there)
    std::tie(tasks_[t.index()].req_class, tasks_[t.index()].join_seq) = classes_.join(request_hash(t), key(t));
  }
  /// Task `t` leaves its request class (it starts or is dequeued), keeping its failure memo.
  void class_leave(TaskId t) {
    Entry& e = tasks_[t.index()];
    if (e.req_class == kNoClass) return;
    e.failed_epoch = failed_epoch_of(e);
    e.failed_pass = failed_pass_of(e);
    drop_stale_hold(e);
    classes_.leave(e.req_class, key(t));
    e.req_class = kNoClass;
  }
  /// The quota book gained an entry (signatures may change): every waiting task joins its class
  /// anew, its failure memo (failed_epoch_of) kept in its own entry. O(queue).
  void rebuild_classes() {
    for (const auto& k : queue_) {
      Entry& e = tasks_[k.id.index()];
      e.failed_epoch = failed_epoch_of(e);
      e.failed_pass = failed_pass_of(e);
      drop_stale_hold(e);
      e.req_class = kNoClass;
    }
    classes_.clear(quotas_.entries().size());
    for (const auto& k : queue_) std::tie(tasks_[k.id.index()].req_class, tasks_[k.id.index()].join_seq) = classes_.join(request_hash(k.id), k);
  }
  /// May this pass visit classes instead of tasks (actions::allocate_by_class)? Signatures do
  /// not depend on time: no node policy, no ageing task.
  bool class_passes() const { return classes_on_ && policies_.empty() && aging_.empty(); }
  /// Does some running task have a known expected end (backfill queueing: expected_ends_, an
  /// unknown estimate sorting last)? Without one, no head has a reservation (actions::reservation).
  bool known_running_end() const { return !expected_ends_.empty() && std::get<0>(*expected_ends_.begin()) != kTimeNever; }

  // ---- configuration and plugins
  mutable Cluster cluster_;
  SchedulerOptions options_;
  std::unique_ptr<PlacementPolicy> policy_;
  std::unique_ptr<QueueOrder> queue_order_;
  std::unique_ptr<VictimOrder> victim_order_;
  std::unique_ptr<Admission> admission_;
  bool builtin_queue_order_ = false, builtin_victim_order_ = false, builtin_admission_ = false;
  bool builtin_first_fit_ = false;  ///< the placement policy is placement::FirstFit
  /// The placement policy is first-fit, best-fit or worst-fit (placement/builtin.hpp): the node
  /// it picks for a replica depends only on the nodes that fit it (their own free capacity and
  /// ids), never on a node that does not fit (actions::preempt places on part of a release).
  bool feasible_only_placement_ = false;
  /// The queue order preempts by itself (QueueOrder::preemptive(), e.g. srtf): Session::order_kind.
  bool order_preempts_ = false;
  /// ... and a running task may become its victim by time alone (QueueOrder::victims_grow, las):
  /// every new instant drops the failure memos (Session::note_time).
  bool order_victims_grow_ = false;
  /// The queue order ranks by tenant service (QueueOrder::ranks_by_tenant_service, fair): the
  /// tenants' attained service is kept and the queue ranked anew at every new instant.
  bool order_by_tenant_ = false;
  /// The order's starvation guard (QueueOrder::promote_after, ms; 0 = none): promote_starving.
  Time promote_after_ = 0;
  /// Promotes every waiting task the order's starvation guard allows at `now` (waited
  /// promote_after_ since its enqueue): its attained service reset to 0, its rank anew.
  /// Returns whether any was. O(queue) per instant, only with the guard on.
  bool promote_starving(Time now) {
    std::vector<TaskId> due;
    for (const auto& k : queue_) {
      const Entry& e = tasks_[k.id.index()];
      if (e.enqueued_at + promote_after_ <= now && queue_order_->promotable(e.spec)) due.push_back(k.id);
    }
    for (TaskId t : due) {
      Entry& e = tasks_[t.index()];
      queue_erase(t);
      e.spec.attained_gpu_s = 0;
      e.rank = queue_rank(e.spec, t, now);
      queue_insert(t);
    }
    return !due.empty();
  }
  /// GPU x seconds of every tenant's ended attempts (order_by_tenant_ only).
  std::map<std::string, double, std::less<>> tenant_ended_gpu_s_;
  /// Identical requests of different tasks get the same decisions (the plugins look at shapes,
  /// class, pool, priority and quota owner only): Session::signature() may merge them.
  bool memo_by_signature_ = false;
  mutable QuotaBook quotas_;
  std::vector<NodePolicy> policies_;

  // ---- tasks
  std::vector<Entry> tasks_;
  // Placements of running tasks (Entry::placement_slot): a deque, so a placement does not move
  // while its task runs (Scheduler::placement_of hands out pointers); freed slots reused.
  std::deque<Placement> placements_;
  std::vector<std::uint32_t> free_slots_;
  std::set<QueueKey> queue_;
  /// queue_'s order as a contiguous array (actions::allocate walks it), kept in step at every
  /// insertion and erasure (queue_insert, queue_erase), or stale after an insertion far from
  /// the end until the next walk from the front rebuilds it (QueueArray::refresh).
  QueueArray queue_array_;
  /// Waiting task `t` (its rank set) enters the queue. O(log queue), plus O(1) when it goes
  /// last and at most 64 slots moved otherwise (QueueArray::insert).
  void queue_insert(TaskId t) {
    const auto it = queue_.insert(key(t)).first;
    queue_array_.insert(queue_, it);
  }
  /// Task `t` leaves the queue if it is in it (a task adopted or started from outside may not
  /// be). O(log queue).
  void queue_erase(TaskId t) {
    // (find and erase at the iterator: one descent, where erase by key looks up a range)
    if (const auto it = queue_.find(key(t)); it != queue_.end()) {
      queue_.erase(it);
      queue_array_.erase(t);
    }
  }
  IdSet<TaskId> running_;
  std::vector<RunInfo> run_info_;
  std::vector<std::size_t> run_pos_;
  /// Fast paths with the builtin victim order, a queue order that does not preempt, and
  /// preemption, idle reclaim or spot eviction on: the running tasks guarantee does not protect (exposed()), bucketed by (capacity class, priority
  /// slot), the first two keys of the order (plugins::IdleSpotFirst), so that a victim search
  /// builds and orders only the buckets it reaches (actions/preempt.hpp VictimStream). Kept at
  /// every start and release (swap-remove), O(1).
  bool bucket_victims_ = false;
  static constexpr std::size_t kPrioritySlots = 11;
  std::array<std::vector<RunInfo>, 4 * kPrioritySlots> victim_buckets_;
  std::vector<std::uint32_t> bucket_pos_;  ///< per task id: its index in its victim bucket
  static std::size_t victim_bucket(ResourceType c, std::int32_t priority) {
    return std::size_t(c) * kPrioritySlots + priority_slot(priority);
  }
  void bucket_insert(const RunInfo& ri) {
    if (!bucket_victims_ || !exposed(ri.capacity, ri.guarantee)) return;
    auto& b = victim_buckets_[victim_bucket(ri.capacity, ri.priority)];
    if (bucket_pos_.size() <= ri.id.index()) bucket_pos_.resize(tasks_.size(), 0);
    bucket_pos_[ri.id.index()] = std::uint32_t(b.size());
    b.push_back(ri);
  }
  void bucket_erase(const RunInfo& ri) {
    if (!bucket_victims_ || !exposed(ri.capacity, ri.guarantee)) return;
    auto& b = victim_buckets_[victim_bucket(ri.capacity, ri.priority)];
    const std::uint32_t pos = bucket_pos_[ri.id.index()];
    bucket_pos_[b.back().id.index()] = pos;
    b[pos] = b.back();
    b.pop_back();
  }
  /// Backfill queueing only (keep_ends_): the running tasks by (start + runtime estimate,
  /// TaskSpec::sequence, id), kTimeNever for an unknown estimate. EASY's reservation walk (actions/backfill.hpp) reads
  /// the running tasks in expected-end order and usually stops early, instead of collecting and
  /// sorting every running task at each walk. O(log running) per start and release.
  bool keep_ends_ = false;
  using EndKey = std::tuple<Time, std::uint64_t, TaskId>;  ///< (expected end, sequence, id)
  std::set<EndKey> expected_ends_;
  static Time raw_end(const TaskSpec& s, Time start) { return s.runtime_estimate < 0 ? kTimeNever : start + s.runtime_estimate; }
  std::vector<std::vector<TaskId>> node_tasks_;
  std::vector<char> forgotten_;         ///< per task id: 1 while forgotten (Scheduler::forget_task)
  std::vector<std::int32_t> free_ids_;  ///< min-heap of forgotten ids, reused lowest first
  std::int64_t allocated_[4] = {0, 0, 0, 0};
  std::int64_t running_on_[4] = {0, 0, 0, 0};  ///< running tasks per capacity class (ResourceType)
  /// Running tasks guarantee does not protect (exposed()) per capacity class and priority
  /// (clamped to 0..10; task priorities are 1..9, an idle task's is 0): lowest_exposed_priority.
  std::array<std::array<std::int32_t, 11>, 4> exposed_by_priority_{};

  // ---- the pass memo (what lets a pass skip requests known to fail)
  std::uint64_t pass_ = 0;   ///< schedule() calls so far (stamps queue holds for explain)
  std::vector<TaskId> visited_;
  std::vector<std::pair<std::uint64_t, TaskId>> order_scratch_;  ///< scratch of sort_by_order_key
  /// Storage lent to the transactions of a pass's trials and reservations (Transaction's
  /// `spare`): no allocation per trial.
  Transaction::Log tx_log_spare_;
  /// Bumped whenever capacity may have grown for some waiting task (a release, a node up, a
  /// node policy created or expired, a quota change). A task that failed in the current
  /// epoch cannot start until it changes.
  std::uint64_t capacity_epoch_ = 0;
  std::uint64_t last_pass_epoch_ = ~std::uint64_t{0};
  /// Bumped at every change of what a reservation walk reads (a start or release, node state,
  /// quota, node policies, a running task's spec or replicas): with capacity_epoch_ and `now`
  /// it stamps the reservation memo.
  std::uint64_t state_epoch_ = 0;
  /// Reservations (and may_jump walks) computed on the committed state: (head, candidate or
  /// invalid) -> reservation, valid while reservation_stamp_ holds (actions/backfill.hpp).
  mutable std::map<std::pair<std::int32_t, std::int32_t>, Time> reservation_memo_;
  mutable std::tuple<std::uint64_t, std::uint64_t, Time> reservation_stamp_{~std::uint64_t{0}, 0, 0};
  /// The last reservation walked for a head alone (no tentative start) whose gang does not
  /// age into idle fragments: at `at`, on the state of the two epochs, valid for the same head
  /// before `valid_until` (the first node-policy time after `at`) and `value`
  /// (actions::reservation).
  struct HeadReservation {
    TaskId head;
    Time value = kTimeNever;
    std::uint64_t capacity_epoch = ~std::uint64_t{0}, state_epoch = 0;
    Time at = 0, valid_until = 0;
  };
  mutable HeadReservation head_reservation_;
  /// Bumped at every enqueue and dequeue (not at starts: a start bumps state_epoch_).
  std::uint64_t queue_epoch_ = 0;
  /// (pass_, state_epoch_, capacity_epoch_, queue_epoch_, now) when the last schedule() call
  /// ended: while it holds, nothing changed since that call's last (complete) pass.
  std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, Time> settled_{0, 0, 0, 0, 0};
  std::vector<TaskId> pass_order_;                   ///< scratch of actions::allocate
  SignatureMap<char> pass_failed_signatures_;        ///< scratch of actions::allocate (a set)
  std::vector<TaskId> pass_fresh_;                   ///< scratch of actions::allocate
  SignatureMap<char> pass_held_signatures_;          ///< scratch of actions::allocate (a set)
  // ---- dormant failures (actions::allocate's backfill walk; actions::dormant_on)
  /// A waiting task that failed in a backfill walk goes dormant when neither its failure nor
  /// its wait code (Explain's diagnosis) can change while only the walks' own starts and
  /// enqueues change the state (actions::dormant_eligible). It stays dormant while the
  /// capacity and state epochs are those stamped here (a walk's start moves the stamp on
  /// after actions::dormant_victim said no), and its failure memo is of dormant_cap_. Later
  /// walks do not visit it: what a visit did is done without it (it may become the head, its
  /// signature counts as failed in the pass, failed_pass_of counts the walk), and it is not
  /// listed again (Scheduler::take_visited_waiting): its observer's code stays.
  std::uint32_t dormant_gen_ = 1;
  std::uint64_t dormant_cap_ = ~std::uint64_t{0};
  std::uint64_t dormant_state_ = ~std::uint64_t{0};
  std::uint64_t dormant_walk_pass_ = 0;   ///< the schedule() call of the last walk that skipped dormant tasks
  std::int32_t dormant_max_priority_ = 0;  ///< the highest priority among this generation's dormant tasks
  /// actions::dormant_eligible's Session::may_yield_any (hypothetical) per priority slot (-1:
  /// not asked yet) at state epoch dormant_yield_state_.
  std::array<std::int8_t, 11> dormant_yield_{};
  std::uint64_t dormant_yield_state_ = ~std::uint64_t{0};
  bool dormant_valid() const { return dormant_cap_ == capacity_epoch_ && dormant_state_ == state_epoch_; }
  bool dormant(const Entry& e) const { return e.dormant_gen == dormant_gen_ && e.failed_epoch == dormant_cap_ && dormant_valid(); }
  /// A new generation stamped with the current epochs: no task is dormant.
  void dormant_restart() {
    if (++dormant_gen_ == 0) {  // (wrapped: no entry may keep an old generation's number)
      for (auto& e : tasks_) e.dormant_gen = 0;
      dormant_gen_ = 1;
    }
    dormant_cap_ = capacity_epoch_;
    dormant_state_ = state_epoch_;
    dormant_max_priority_ = 0;
  }
  /// Strict queueing (fast paths): the key of the head the last complete pass stopped at;
  /// every waiting task after it was held by a pass and not visited since, except the tasks
  /// in fresh_ (actions::allocate). Empty when that pass was not blocked.
  std::optional<QueueKey> strict_tail_;
  TaskId strict_tail_head_;  ///< the head of that pass
  std::tuple<std::uint64_t, std::uint64_t, Time> strict_tail_stamp_{0, 0, 0};  ///< (pass_, capacity_epoch_, now) of that pass
  bool retry_all_next_ = false;  ///< a task failed while tasks started at this instant were victims it could take
  /// Backfill (fast paths): what the last complete pass leaves for a fresh-only pass
  /// (actions::backfill_from_fresh). `bf_chainable_`: that pass was a backfill pass that ended
  /// normally and held no task after a preemption trial; `bf_head_` its head (none: nothing
  /// failed); the state and queue epochs when it ended; `bf_anchor_` the time of the last pass
  /// that visited the whole queue (a fresh-only pass keeps it).
  bool bf_chainable_ = false;
  std::optional<TaskId> bf_head_;
  std::uint64_t bf_state_epoch_ = 0, bf_queue_epoch_ = 0;
  Time bf_anchor_ = 0;
  /// Memo of actions::backfill_from_fresh: the earliest expected end (start + estimate) of a
  /// running task after the anchor, stamped by (state epoch, capacity epoch, anchor).
  Time bf_next_end_ = 0;
  std::tuple<std::uint64_t, std::uint64_t, Time> bf_next_end_stamp_{~std::uint64_t{0}, 0, 0};
  Time last_now_ = -kTimeNever;
  std::vector<TaskId> fresh_;   ///< enqueued since the last pass
  std::vector<TaskId> aging_;   ///< waiting tasks whose feasibility grows with time (idle stability)
  /// Request classes (SchedulerOptions::request_classes, greedy): kept while classes_on_.
  bool classes_on_ = false;
  ClassIndex classes_;
  /// Every waiting task counts as visited by the passes since the last take_visited_waiting
  /// (a full pass by class, or a greedy fresh-only pass that started a task).
  bool visited_all_ = false;
  /// Listings of visited tasks so far (Scheduler::take_visited_waiting), and the last one that
  /// counted every waiting task by request class (Entry::reported_at, reported_held_now).
  std::uint64_t listings_ = 0;
  std::uint64_t all_listed_at_ = 0;
  /// The listing count at the last note_code_change() (stable_code).
  std::uint64_t code_changed_at_ = 0;
  /// The last class pass that ended normally: its schedule() call and the class joins by then
  /// (drop_stale_hold).
  std::uint64_t class_pass_no_ = 0;
  std::uint64_t class_pass_joins_ = 0;
  std::vector<std::pair<const QueueKey*, std::uint32_t>> class_heap_;  ///< scratch of allocate_by_class
  std::vector<std::tuple<std::uint32_t, TaskId, std::size_t>> class_retired_;  ///< scratch of allocate_by_class
  std::vector<TaskId> started_now_;  ///< tasks started at instant started_now_at_ (never victims then)
  Time started_now_at_ = -kTimeNever;

  // ---- scratch of probes (restored after each use)
  mutable std::vector<std::int32_t> scratch_slot_;  ///< per node, -1 between uses (preemption_may_help)
  mutable std::vector<ScratchRel> scratch_rel_;
  /// While a reservation walks the future: each node's hypothetical last owner change (tasks
  /// expected to end by then have touched their nodes), read by node_eligible instead of the
  /// node's own.
  mutable bool owner_override_ = false;
  mutable std::vector<Time> owner_at_;
  mutable ReleasedCapacity released_;  ///< scratch of actions::reservation (empty between uses)
  /// Scratch of Explain::capacity_diagnosis: its relaxed copy of a request, assigned anew at
  /// each use (a kept spec reuses its buffers: no allocation per diagnosis).
  mutable TaskSpec relaxed_spec_;
  ReleasedCapacity preempt_released_;              ///< scratch of actions::preempt's probes by slots (empty between uses)
  std::vector<Cluster::FreeSum> preempt_delta_;    ///< ... and their per-(pool, model) sums
  /// Whether the last victim search over the buckets found no prefix that meets the slot bound
  /// (actions::preempt_class: the next search checks every candidate in bucket order first,
  /// cheaper when it fails, and skips that check while searches succeed). A cost hint only.
  bool preempt_bound_failed_ = true;
  mutable std::vector<const Placement*> reservation_pending_;  ///< scratch of actions::reservation
  mutable std::vector<Cluster::FreeSum> reservation_delta_;     ///< scratch of actions::reservation
  mutable std::vector<std::size_t> slots_a_, slots_b_;  ///< scratch of actions::starves_head
  /// Explain's memo for "could the empty cluster ever host this replica" (its diagnosis step 2):
  /// every distinct capacity kind of the cluster's nodes, removed ones included (pool, GPU
  /// model, GPUs, vCPU and memory capacity: all that step reads of a node), sorted; valid while
  /// the cluster's schedulable_version() is capacity_kinds_version_ (adding and removing nodes
  /// move it).
  mutable std::vector<std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int64_t, std::int64_t>> capacity_kinds_;
  mutable std::uint64_t capacity_kinds_version_ = ~std::uint64_t{0};
  /// actions::released_by's memo: per (pool, model), stamped (state, capacity epochs, now, by).
  mutable std::vector<Cluster::FreeSum> released_by_;
  mutable std::tuple<std::uint64_t, std::uint64_t, Time, Time> released_by_stamp_{~std::uint64_t{0}, 0, 0, 0};
};

}  // namespace detail

}  // namespace libsched
