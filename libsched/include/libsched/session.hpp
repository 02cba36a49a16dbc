// One scheduling cycle's view of the scheduler's state, and the predicates every action and
// explain() share (docs/architecture.md).
//
// detail::SchedulerCore is the state a Scheduler owns (cluster, quota book, node policies,
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
#include <string>
#include <tuple>
#include <vector>

#include "libsched/cluster.hpp"
#include "libsched/decisions.hpp"
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
    order_preempts_ = !builtin_queue_order_ && queue_order_->preemptive();
    order_victims_grow_ = order_preempts_ && queue_order_->victims_grow();
    order_by_tenant_ = !builtin_queue_order_ && queue_order_->ranks_by_tenant_service();
    promote_after_ = builtin_queue_order_ ? 0 : queue_order_->promote_after();
    // An order that preempts tells equal requests apart (what each may preempt depends on its
    // own rank): no merging of equal requests then (nor request classes).
    memo_by_signature_ = builtin_admission_ && policy_->shape_only() && !order_preempts_;
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
  struct Entry {
    TaskSpec spec;
    State state = State::idle_state;
    /// The last take_visited_waiting listed it while a queue hold of the last pass applied
    /// (its observer's status: blocked_by_queue). A pass that holds it again (fast paths) does
    /// not list it again: nothing it reports changed. Reset at enqueue.
    bool reported_held = false;
    /// The listing (Core::listings_) that set reported_held; a listing of every waiting task by
    /// request class after it (Core::all_listed_at_) reported it not held (reported_held_now).
    std::uint64_t reported_at = 0;
    /// Slot of its placement in SchedulerCore::placements_ while it runs (kNoSlot otherwise):
    /// placements are held for running tasks only, not in every task's entry.
    std::uint32_t placement_slot = kNoSlot;
    /// The queue hold its last pass put on it: none, behind `hold_head` under strict queueing,
    /// or would delay `hold_head`'s reservation (backfill). explain() turns it into a
    /// WaitStatus (Explain::hold_status) only when asked.
    enum class Hold : std::uint8_t { none, strict, backfill };
    Hold hold = Hold::none;
    TaskId hold_head;
    Rank rank{};                                      ///< queue rank, set at enqueue
    Time enqueued_at = 0;                             ///< `now` of its last enqueue
    std::uint64_t failed_epoch = ~std::uint64_t{0};  ///< capacity epoch of its last failed try
    /// (pass, capacity epoch, now) of the pass that set a blocked_by_queue status.
    std::tuple<std::uint64_t, std::uint64_t, Time> hold_stamp{0, 0, 0};
    /// The schedule() call (pass_) whose last visit tried it and failed, the failure
    /// remembered (failed_epoch); 0 otherwise (explain's failed_in_settled_pass).
    std::uint64_t failed_pass = 0;
    /// Session::signature's hash of the spec (0: not computed yet), valid while the quota
    /// book has spec_hash_quotas entries (entries are only ever added); reset at enqueue.
    std::uint64_t spec_hash = 0;
    std::size_t spec_hash_quotas = 0;
    /// Its request class while it waits (classes_, kNoClass otherwise) and the class_joins_
    /// count when it joined (failed_epoch_of).
    std::uint32_t req_class = ~std::uint32_t{0};
    std::uint64_t join_seq = 0;
  };
  /// The queue's sort key: (rank, name, id).
  struct QueueKey {
    Rank rank;
    std::string name;
    TaskId id;
    /// The order's fields as references: compare with std::tie(rank, name, id) of a task
    /// without copying its name into a key.
    auto tied() const { return std::tie(rank, name, id); }
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
  };
  struct ScratchRel { std::int64_t cpu = 0, mem = 0; std::int32_t gpu[kMaxGpusPerNode]; };

  QueueKey key(TaskId t) const {
    const Entry& e = tasks_[t.index()];
    return {e.rank, e.spec.name, t};
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
        strict_tail_->tied() < std::tie(e.rank, e.spec.name, t))
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
  }
  /// Frees `e`'s slot (its placement cleared).
  void drop_placement(Entry& e) {
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
  std::uint64_t failed_pass_of(const Entry& e) const { return classes_.failed_pass_of(e.req_class, e.join_seq, e.failed_pass); }
  /// Did the last listing of waiting task `e` (Scheduler::take_visited_waiting) report it held?
  /// Not when every waiting task was listed by class since (no holds in a class pass).
  bool reported_held_now(const Entry& e) const { return e.reported_held && e.reported_at > all_listed_at_; }
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
  std::uint64_t request_hash(TaskId t) {
    auto& e = tasks_[t.index()];
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
  bool known_running_end() const { return !expected_ends_.empty() && expected_ends_.begin()->first != kTimeNever; }

  // ---- configuration and plugins
  mutable Cluster cluster_;
  SchedulerOptions options_;
  std::unique_ptr<PlacementPolicy> policy_;
  std::unique_ptr<QueueOrder> queue_order_;
  std::unique_ptr<VictimOrder> victim_order_;
  std::unique_ptr<Admission> admission_;
  bool builtin_queue_order_ = false, builtin_victim_order_ = false, builtin_admission_ = false;
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
      queue_.erase(key(t));
      e.spec.attained_gpu_s = 0;
      e.rank = queue_rank(e.spec, t, now);
      queue_.insert(key(t));
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
  IdSet<TaskId> running_;
  std::vector<RunInfo> run_info_;
  std::vector<std::size_t> run_pos_;
  /// Backfill queueing only (keep_ends_): the running tasks by (start + runtime estimate, id),
  /// kTimeNever for an unknown estimate. EASY's reservation walk (actions/backfill.hpp) reads
  /// the running tasks in expected-end order and usually stops early, instead of collecting and
  /// sorting every running task at each walk. O(log running) per start and release.
  bool keep_ends_ = false;
  std::set<std::pair<Time, TaskId>> expected_ends_;
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
  std::vector<std::uint64_t> pass_failed_signatures_;  ///< scratch of actions::allocate
  std::vector<TaskId> pass_fresh_;                   ///< scratch of actions::allocate
  std::vector<std::uint64_t> pass_held_signatures_;  ///< scratch of actions::allocate
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
  mutable std::vector<const Placement*> reservation_pending_;  ///< scratch of actions::reservation
  mutable std::vector<Cluster::FreeSum> reservation_delta_;     ///< scratch of actions::reservation
  mutable std::vector<std::size_t> slots_a_, slots_b_;  ///< scratch of actions::starves_head
  /// actions::released_by's memo: per (pool, model), stamped (state, capacity epochs, now, by).
  mutable std::vector<Cluster::FreeSum> released_by_;
  mutable std::tuple<std::uint64_t, std::uint64_t, Time, Time> released_by_stamp_{~std::uint64_t{0}, 0, 0, 0};
};

}  // namespace detail

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
  bool may_fit(const TaskSpec& s, std::size_t opt, ResourceType cls, const std::vector<Cluster::FreeSum>* delta = nullptr) const {
    const Cluster& c = st.cluster_;
    const GangOption& o = s.options[opt];
    auto enough = [&](const ReplicaShape& r, const Resources& need, std::int64_t whole_gpus) {
      Cluster::FreeSum sum;
      for_each_slot(s, cls, r, [&](std::size_t i) {
        sum += c.free_sum(i);
        if (delta && i < delta->size()) sum += (*delta)[i];
      });
      return need.cpu_milli <= sum.cpu_milli && need.mem_mib <= sum.mem_mib && need.gpu_milli <= sum.gpu_milli &&
             whole_gpus <= sum.full_free_gpus;
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
    st.policy_->begin_gang(st.cluster_);
    // Fast paths: the next worker's scan starts at the previous worker's node (no node below
    // it fitted that shape, and placing replicas only takes capacity away).
    const bool hint = st.options_.fast_paths;
    std::size_t from = 0;
    for (std::int32_t i = 0; i < s.replicas(); ++i) {
      const ReplicaShape& r = i == 0 ? s.options[opt].head : s.options[opt].worker;
      NodeId n = pick_node(ReplicaRequest{r, s, t, i, opt, cls}, f, now, ignore_filter, hint && i >= 2 ? from : 0);
      if (!n.valid()) {
        tx.rollback_to(m);
        return std::nullopt;
      }
      from = n.index();
      out.push_back(tx.allocate(n, r));
      st.policy_->replica_placed(st.cluster_, out.back());
    }
    return out;
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
  /// try_start(tx, t, at).has_value() without placing anything, for a task with
  /// slots_decide(spec(t)), as if `released` (per node) were free on top of the cluster; `delta`
  /// is the same capacity per (pool, model) (Session::may_fit) or null when `released` is
  /// empty. Every placement policy picks a node that fits whenever one does (PlacementPolicy),
  /// and a replica placed lowers only its node's slots, by one (Cluster::replica_slots_exact):
  /// so the gang places exactly when the eligible nodes' slots reach its replica count.
  /// Quota is read as it stands (the caller charges what the releases give back).
  /// O(classes x options x nodes), stopping at the first node that completes the count.
  bool fits_by_slots(TaskId t, Time at, const detail::ReleasedCapacity& released, const std::vector<Cluster::FreeSum>* delta) const {
    const TaskSpec& s = spec(t);
    const Cluster& c = st.cluster_;
    NodeFilter f = NodeFilter::build(st.policies_, s, at, c.size());
    const std::int64_t need = s.replicas();
    for (ResourceType cls : classes(s)) {
      QuotaKey k = quota_key(s, cls);
      for (std::size_t i = 0; i < s.options.size(); ++i) {
        if (!admits(k, s, t, s.demand(i)) || !may_fit(s, i, cls, delta)) continue;
        const ReplicaShape& r = s.options[i].head;
        std::int64_t have = 0;
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
  void release_into(Transaction& tx, TaskId t) {
    const Placement& p = st.placement(st.tasks_[t.index()]);
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
    if (st.keep_ends_) st.expected_ends_.erase({Core::raw_end(e.spec, pl.start), t});
    {
      std::size_t pos = st.run_pos_[t.index()];
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
    st.queue_.erase(st.key(t));
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
                                   e.spec.checkpoint_interval});
    if (st.keep_ends_) st.expected_ends_.emplace(Core::raw_end(e.spec, pl.start), t);
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
    }
    // The starvation guard (las): promotions due by now (their preemptions may start now).
    if (st.promote_after_ > 0 && now > st.last_now_ && st.promote_starving(now)) {
      ++st.queue_epoch_;
      ++st.capacity_epoch_;
      ++st.state_epoch_;
    }
    // An order by tenant service (fair): the ranks of this instant. A new order changes which
    // task heads the queue (strict / backfill holds), not what capacity a task finds.
    if (st.order_by_tenant_ && now > st.last_now_ && st.rerank_queue(now)) {
      ++st.queue_epoch_;
      ++st.state_epoch_;
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
