// The gang scheduler: given the cluster, the running tasks, the waiting queue and `now`,
// decides which gangs start where, which tasks are preempted, and why the others wait.
//
// libsched never reads a clock and never sees a task's actual runtime: `now` is an argument
// and runtimes are the user's estimates. Rules: docs/platform.md; keys and queueing modes:
// docs/scenario-format.md; design notes: docs/scheduler.md.
//
// Typical use (the simulator does exactly this, see sim/simulator.cpp):
//   Scheduler s(cluster, options);             // cluster built with Cluster::add_pool/add_node
//   TaskId t = s.add_task(spec); s.enqueue(t, now);
//   ScheduleResult r = s.schedule(now);        // placements and preemptions, already applied
//   ... later: s.release(t, now) when the attempt ends; s.enqueue(t, now) to resubmit.
//
// Errors: every public function checks its preconditions first and throws a typed error
// (libsched/errors.hpp: InvalidArgument, UnknownTask, UnknownNode, UnknownPool,
// TimeWentBackwards, InvalidState); after a throw nothing has changed.
// Thread safety: a Scheduler is not thread-safe. Distinct Schedulers share no mutable state and
// may run on different threads at once. Const member functions of one Scheduler may run
// concurrently with each other while no non-const member function runs; explain() and
// reservation() are non-const (they probe placements on a transaction that is rolled back).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "libsched/cluster.hpp"
#include "libsched/detail/validate.hpp"
#include "libsched/errors.hpp"
#include "libsched/fragmentation.hpp"
#include "libsched/node_policy.hpp"
#include "libsched/placement/builtin.hpp"
#include "libsched/placement/policy.hpp"
#include "libsched/quota.hpp"
#include "libsched/status.hpp"
#include "libsched/task.hpp"
#include "libsched/transaction.hpp"

namespace libsched {

/// `scheduler.queueing` (docs/scenario-format.md "scheduler").
enum class Queueing : std::uint8_t {
  greedy,    ///< every waiting task, in queue order, starts if it fits now
  strict,    ///< the first waiting task that cannot start blocks every task behind it
  backfill,  ///< greedy, but a later task starts only if it does not delay the head's reservation
};

struct SchedulerOptions {
  std::string placement = "best-fit";
  bool preemption = true;           ///< priority preemption of lower-priority, non-guaranteed tasks
  bool idle_reclaim = true;         ///< non-idle tasks may preempt tasks running on idle capacity
  bool spot_eviction = true;        ///< non-spot tasks may evict spot tasks
  Queueing queueing = Queueing::greedy;
  Time idle_stability_high = 3600 * kMsPerSecond;    ///< fragment age offered at `high`
  Time idle_stability_medium = 600 * kMsPerSecond;   ///< fragment age offered at `medium`
  std::uint64_t seed = 1;
  WorkloadDistribution workload;    ///< for fgd
};

enum class PreemptionKind : std::uint8_t { priority, idle_reclaim, spot_eviction };
inline std::string_view to_string(PreemptionKind k) {
  switch (k) {
    case PreemptionKind::priority: return "priority";
    case PreemptionKind::idle_reclaim: return "idle_reclaim";
    case PreemptionKind::spot_eviction: return "spot_eviction";
  }
  return "?";
}

/// A started gang. replicas[0] is the master/head, then the workers in order.
struct Placement {
  TaskId task;
  std::size_t option = 0;               ///< index into TaskSpec::options
  ResourceType capacity = ResourceType::reserved;  ///< class it runs on (idle for an accept_idle fallback)
  std::vector<ReplicaAllocation> replicas;
  Time start = 0;
  QuotaKey quota_key;
  Resources quota_held;
};

struct Preemption {
  TaskId victim;
  TaskId preemptor;
  PreemptionKind kind = PreemptionKind::priority;
};

/// What one schedule() call did, in the order it happened. Victims are already released;
/// placed tasks are already running.
struct ScheduleResult {
  std::vector<Preemption> preemptions;
  std::vector<TaskId> started;
  bool empty() const { return preemptions.empty() && started.empty(); }
};

// ---- Adoption (Scheduler::adopt_task): a running task restored from a snapshot.

/// Where one replica of an adopted task runs: its node and, for a GPU replica, exactly which
/// GPUs (bit i = GPU i of the node; 0 = let the node choose as a placement would).
struct ReplicaAssignment {
  NodeId node;
  std::uint64_t gpu_mask = 0;
};

/// A running attempt as another scheduler (or an earlier run of this one) placed it.
struct Adoption {
  std::size_t option = 0;                          ///< index into TaskSpec::options
  ResourceType capacity = ResourceType::reserved;  ///< class it runs on (one of the task's classes)
  std::vector<ReplicaAssignment> replicas;         ///< master/head first, then the workers
  Time start = 0;                                  ///< when the attempt started (ms)
};

class Scheduler {
 public:
  /// Throws std::out_of_range when options.placement is not in `registry`.
  explicit Scheduler(Cluster cluster, SchedulerOptions options = {},
                     const PlacementRegistry& registry = PlacementRegistry::builtin())
      : cluster_(std::move(cluster)), options_(std::move(options)) {
    policy_ = registry.create(options_.placement, PolicyContext{options_.seed, options_.workload});
    node_tasks_.resize(cluster_.size());
  }

  // ======================================================================= embedding API
  // Nodes at any time, adoption of running tasks, forgetting ended tasks, quota entries
  // (docs/scheduler.md "Library API"). Every function checks its arguments first and throws a
  // typed error (libsched/errors.hpp) before it changes anything.

  /// Adds an empty pool (nodes come with add_node). Throws InvalidArgument on a duplicate name.
  PoolId add_pool(std::string name, PoolKind kind) { return cluster_.add_pool(std::move(name), kind); }

  /// Adds a node at any time: up, empty, not drained, with the next NodeId; it counts as idle
  /// since long ago (idle stability) and waiting tasks may use it at the next schedule(). Reported
  /// by take_changed_nodes(). Throws as Cluster::add_node (InvalidArgument, UnknownPool).
  NodeId add_node(const NodeDesc& d) {
    NodeId id = cluster_.add_node(d);
    node_tasks_.resize(cluster_.size());
    ++capacity_epoch_;
    return id;
  }

  /// Removes node `n` for good: it keeps its NodeId as a tombstone (Node::removed, down, zero
  /// capacity; node policies that name it name nothing) and its name may be reused by add_node.
  /// Throws UnknownNode; InvalidState when a task still runs on it (release it first, or drain
  /// the node and wait) or it was removed already.
  void remove_node(NodeId n) {
    const Node& node = cluster_.node(n);  // throws UnknownNode
    if (!node_tasks_[n.index()].empty())
      throw InvalidState("Scheduler::remove_node: tasks still run on " + node.name + " (release them first)");
    cluster_.remove_node(n);
  }

  /// Drains (cordons) node `n`: no new replica goes there (placements, preemption, backfill
  /// reservations, explain all see it as unable to take replicas); tasks already running on it
  /// continue until released. Idempotent. Throws UnknownNode; InvalidState for a removed node.
  void drain_node(NodeId n) { cluster_.set_drained(n, true); }
  /// Ends a drain: the node takes replicas again from the next schedule(). Idempotent. Throws
  /// UnknownNode; InvalidState for a removed node.
  void undrain_node(NodeId n) {
    cluster_.set_drained(n, false);
    ++capacity_epoch_;
  }

  /// Sets when the owners' (non-idle) allocation on node `n` last changed, e.g. restored from a
  /// snapshot: idle stability ages the node's idle fragment from `t` (docs/scheduler.md "Idle
  /// stability levels"). Throws UnknownNode.
  void set_owner_change(NodeId n, Time t) {
    cluster_.touch_owner(n, t);
    ++capacity_epoch_;
  }

  /// Sets (or replaces) a quota entry. Throws InvalidArgument for an idle key, a reserved key
  /// without a pool or a negative limit; UnknownPool.
  void set_quota(const QuotaKey& k, const Resources& limit) {
    detail::check_quota(k, limit, cluster_, "Scheduler::set_quota");
    quotas().set_limit(k, limit);
  }

  /// Registers `spec` as a task that is already running as `a` says (restoring a snapshot after
  /// a restart, or taking over from another scheduler) and returns its id. Each replica is
  /// taken on its node exactly (Cluster::allocate_exact: the named GPUs, or the node's choice
  /// when gpu_mask is 0); node pools and node policies are not checked (the snapshot is the
  /// truth), a drained node is accepted. Its quota is charged even beyond the limit (new tasks
  /// then wait for it). It counts as started at `a.start` (never a victim at that instant) and
  /// its node's idle age restarts at `a.start` unless the node changed later.
  /// Throws as add_task (InvalidArgument, UnknownPool); InvalidArgument when `a.option` is not an
  /// option of the task, `a.capacity` is not one of its capacity classes, or the number of
  /// replicas is not 1 + workers (a RayJob: at least 1, autoscaled workers included), or a GPU
  /// mask is malformed; UnknownNode; InvalidState when a replica does not fit its node (down,
  /// removed, model, free vCPU / memory / GPUs). On a throw nothing is taken.
  TaskId adopt_task(TaskSpec spec, const Adoption& a) {
    const char* fn = "Scheduler::adopt_task";
    detail::check_task(spec, cluster_, fn);
    const std::string who = std::string(fn) + ": task " + spec.name;
    if (a.option >= spec.options.size())
      throw InvalidArgument(fmt::format("{}: option {} of {}", who, a.option, spec.options.size()));
    const auto cls = classes(spec);
    if (std::find(cls.begin(), cls.end(), a.capacity) == cls.end())
      throw InvalidArgument(fmt::format("{}: may not run on {} capacity", who, to_string(a.capacity)));
    const bool ray = spec.type == TaskType::ray_job;
    if (ray ? a.replicas.empty() : a.replicas.size() != std::size_t(spec.replicas()))
      throw InvalidArgument(fmt::format("{}: {} replicas given for a gang of {}", who, a.replicas.size(), spec.replicas()));
    for (const auto& r : a.replicas) cluster_.node(r.node);  // throws UnknownNode
    std::vector<ReplicaAllocation> got;
    try {
      for (std::size_t i = 0; i < a.replicas.size(); ++i) {
        const GangOption& o = spec.options[a.option];
        got.push_back(cluster_.allocate_exact(a.replicas[i].node, i == 0 ? o.head : o.worker, a.replicas[i].gpu_mask));
      }
    } catch (...) {
      for (auto it = got.rbegin(); it != got.rend(); ++it) cluster_.release(*it);
      throw;
    }
    Resources held;
    for (const auto& r : got) held += r.resources();
    std::vector<std::pair<NodeId, Time>> owner_before;
    for (const auto& r : got) owner_before.emplace_back(r.node, cluster_.node(r.node).last_owner_change);
    TaskId id = add_task(std::move(spec));
    Placement p;
    p.task = id;
    p.option = a.option;
    p.capacity = a.capacity;
    p.replicas = std::move(got);
    p.start = a.start;
    p.quota_key = quota_key(tasks_[id.index()].spec, a.capacity);
    p.quota_held = a.capacity == ResourceType::idle ? Resources{} : held;
    if (a.capacity != ResourceType::idle) quotas_.charge(p.quota_key, p.quota_held, +1);
    commit_start(id, std::move(p), a.start);
    if (a.start != started_now_at_) started_now_.pop_back();  // not started at the current instant
    for (const auto& [n, t] : owner_before)
      if (t > a.start) cluster_.touch_owner(n, t);
    return id;
  }

  /// Forgets an ended task (registered and never enqueued, or whose attempt was released or
  /// dequeued) so that a long-lived embedder's memory stays bounded by the tasks it knows at
  /// once: its spec and status are freed and its id becomes unknown (every function taking it
  /// throws UnknownTask) until add_task / adopt_task hand the id out again for a new task (ids
  /// of forgotten tasks are reused, lowest first). Throws UnknownTask; InvalidState when it
  /// waits or runs.
  void forget_task(TaskId t) {
    check_task_id(t, "Scheduler::forget_task");
    Entry& e = tasks_[t.index()];
    if (e.state != State::idle_state)
      throw InvalidState("Scheduler::forget_task: task " + e.spec.name + (e.state == State::waiting ? " waits" : " runs"));
    e = Entry{};
    std::erase(fresh_, t);
    std::erase(visited_, t);
    std::erase(aging_, t);
    std::erase(started_now_, t);
    if (forgotten_.size() < tasks_.size()) forgotten_.resize(tasks_.size(), 0);
    forgotten_[t.index()] = 1;
    free_ids_.push_back(t.value);
    std::push_heap(free_ids_.begin(), free_ids_.end(), std::greater<>());
  }

  /// True when `t` names a task of this Scheduler (registered and not forgotten).
  bool knows_task(TaskId t) const {
    return t.valid() && t.index() < tasks_.size() && !(t.index() < forgotten_.size() && forgotten_[t.index()]);
  }

 private:
  void check_task_id(TaskId t, std::string_view fn) const {
    if (!knows_task(t)) throw UnknownTask(fmt::format("{}: unknown task id {}", fn, t.value));
  }
  /// The lowest id of a forgotten task, now known again (its Entry is empty), or an invalid id.
  TaskId reuse_forgotten_id() {
    if (free_ids_.empty()) return TaskId();
    std::pop_heap(free_ids_.begin(), free_ids_.end(), std::greater<>());
    TaskId id(free_ids_.back());
    free_ids_.pop_back();
    forgotten_[id.index()] = 0;
    return id;
  }
  std::vector<char> forgotten_;           ///< per task id: 1 while forgotten
  std::vector<std::int32_t> free_ids_;    ///< min-heap of forgotten ids
 public:
  // =================================================================== end of embedding API

  const Cluster& cluster() const { return cluster_; }
  /// Mutable quota book (e.g. to set limits); counts as a capacity change.
  QuotaBook& quotas() {
    ++capacity_epoch_;
    return quotas_;
  }
  const QuotaBook& quotas() const { return quotas_; }
  const SchedulerOptions& options() const { return options_; }
  /// Throws UnknownNode for a node that is not in the cluster; InvalidArgument when it expires
  /// before it is created.
  void add_node_policy(NodePolicy p) {
    detail::check_node_policy(p, cluster_, "Scheduler::add_node_policy");
    policies_.push_back(std::move(p));
    ++capacity_epoch_;
  }
  const std::vector<NodePolicy>& node_policies() const { return policies_; }

  /// Registers a task (not queued yet) and returns its id: the next id, or the lowest id of a
  /// forgotten task (forget_task). Throws InvalidArgument for a shape or field the scheduler
  /// cannot model (detail::check_task: no option, workers < 0, a 2-GPU replica of 500
  /// milli-GPU, negative vCPU or memory, priority outside 1..9, reserved without a pool, ...);
  /// UnknownPool for a pool that is not in the cluster.
  TaskId add_task(TaskSpec spec) {
    detail::check_task(spec, cluster_, "Scheduler::add_task");
    if (spec.is_idle()) spec.priority = 0;
    if (TaskId reused = reuse_forgotten_id(); reused.valid()) {
      tasks_[reused.index()].spec = std::move(spec);
      return reused;
    }
    TaskId id(std::int32_t(tasks_.size()));
    Entry e;
    e.spec = std::move(spec);
    tasks_.push_back(std::move(e));
    return id;
  }
  /// Throws UnknownTask.
  const TaskSpec& task(TaskId t) const {
    check_task_id(t, "Scheduler::task");
    return tasks_[t.index()].spec;
  }
  /// For the caller to update what a real scheduler would learn (e.g. the remaining runtime
  /// estimate of a resubmitted attempt). Not while waiting (the queue key would change): throws
  /// InvalidState then; UnknownTask.
  TaskSpec& mutable_task(TaskId t) {
    check_task_id(t, "Scheduler::mutable_task");
    if (tasks_.at(t.index()).state == State::waiting) throw InvalidState("Scheduler::mutable_task: task " + tasks_[t.index()].spec.name + " is waiting");
    return tasks_.at(t.index()).spec;
  }
  /// Number of task ids handed out, forgotten ones included (knows_task tells them apart).
  std::size_t task_count() const { return tasks_.size(); }

  /// Puts a registered (or ended) task in the queue. O(log queue). Throws UnknownTask;
  /// InvalidState when it already waits or runs.
  void enqueue(TaskId t, Time /*now*/) {
    check_task_id(t, "Scheduler::enqueue");
    Entry& e = tasks_.at(t.index());
    if (e.state != State::idle_state)
      throw InvalidState("Scheduler::enqueue: task " + e.spec.name + (e.state == State::waiting ? " already waits" : " runs"));
    e.state = State::waiting;
    e.wait = WaitStatus{};
    e.failed_epoch = ~std::uint64_t{0};
    queue_.insert(key(t));
    fresh_.push_back(t);
    if (ages(e.spec) && std::find(aging_.begin(), aging_.end(), t) == aging_.end()) aging_.push_back(t);
  }
  /// Removes a waiting task from the queue (e.g. the user stops it); no-op for a task that does
  /// not wait. Throws UnknownTask.
  void dequeue(TaskId t) {
    check_task_id(t, "Scheduler::dequeue");
    Entry& e = tasks_.at(t.index());
    if (e.state != State::waiting) return;
    queue_.erase(key(t));
    e.state = State::idle_state;
    if (!aging_.empty()) aging_.erase(std::remove(aging_.begin(), aging_.end(), t), aging_.end());
  }
  /// Throws UnknownTask.
  bool is_waiting(TaskId t) const {
    check_task_id(t, "Scheduler::is_waiting");
    return tasks_[t.index()].state == State::waiting;
  }
  /// Throws UnknownTask.
  bool is_running(TaskId t) const {
    check_task_id(t, "Scheduler::is_running");
    return tasks_[t.index()].state == State::running;
  }
  std::size_t waiting_count() const { return queue_.size(); }
  std::size_t running_count() const { return running_.size(); }
  /// Waiting tasks in queue order.
  std::vector<TaskId> queue() const {
    std::vector<TaskId> v;
    v.reserve(queue_.size());
    for (const auto& k : queue_) v.push_back(std::get<5>(k));
    return v;
  }
  /// Running tasks in id order.
  const std::set<TaskId>& running() const { return running_; }

  /// Milli-GPU held by running tasks on capacity class `c` (idle = accept_idle fallbacks too).
  std::int64_t allocated_gpu_milli(ResourceType c) const { return allocated_[std::size_t(c)]; }
  /// Nodes whose free capacity or state changed since the last call (Cluster::take_changed).
  std::vector<NodeId> take_changed_nodes() { return cluster_.take_changed(); }
  /// Waiting tasks that schedule() visited and did not start since the last call (tried and
  /// failed, or held by strict / backfill), each once; clears the list. Their wait status may
  /// have changed; other waiting tasks' have not been re-examined.
  std::vector<TaskId> take_visited_waiting() {
    std::vector<TaskId> v;
    v.swap(visited_);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::erase_if(v, [this](TaskId t) { return tasks_[t.index()].state != State::waiting; });
    return v;
  }
  /// Equal for two waiting tasks whose requests are identical for the scheduler (same shapes,
  /// class, pool, priority, quota owner; no node policy): they get the same decisions and wait
  /// status. 0 means "not comparable" (a node policy applies). Throws UnknownTask.
  std::uint64_t request_signature(TaskId t, Time now) const {
    check_task_id(t, "Scheduler::request_signature");
    return signature(t, now);
  }

  /// The placement of a running task (nullptr otherwise). Throws UnknownTask.
  const Placement* placement_of(TaskId t) const {
    check_task_id(t, "Scheduler::placement_of");
    const Entry& e = tasks_.at(t.index());
    return e.state == State::running ? &e.placement : nullptr;
  }

  /// Ends a running task's attempt: frees its replicas and quota at once. O(replicas).
  /// Throws UnknownTask; InvalidState when it does not run; TimeWentBackwards.
  void release(TaskId t, Time now) {
    check_task_id(t, "Scheduler::release");
    detail::check_time(now, last_now_, "Scheduler::release");
    Entry& e = tasks_.at(t.index());
    if (e.state != State::running) throw InvalidState("Scheduler::release: task " + e.spec.name + " does not run");
    Transaction tx(cluster_, quotas_);
    release_into(tx, t);
    tx.commit();
    finish_release(t, now);
  }

  /// Running tasks with a replica on node `n`, in id order. Throws UnknownNode.
  std::vector<TaskId> tasks_on_node(NodeId n) const {
    cluster_.node(n);  // throws UnknownNode
    std::vector<TaskId> v = node_tasks_.at(n.index());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }
  /// Marks a node up or down. Throws UnknownNode; InvalidState when taking it down while tasks
  /// run on it (release them first) or when it was removed; TimeWentBackwards.
  void set_node_up(NodeId n, bool up, Time now) {
    cluster_.node(n);  // throws UnknownNode
    detail::check_time(now, last_now_, "Scheduler::set_node_up");
    if (cluster_.node(n).removed) throw InvalidState("Scheduler::set_node_up: node " + cluster_.node(n).name + " was removed");
    if (!up && !node_tasks_.at(n.index()).empty())
      throw InvalidState("Scheduler::set_node_up: tasks still run on " + cluster_.node(n).name);
    cluster_.set_up(n, up);
    cluster_.touch_owner(n, now);
    if (up) ++capacity_epoch_;
  }

  /// One scheduling decision at `now`: passes over the queue in order (priority desc, submit
  /// asc, name, id; idle tasks last). Places every gang that may start under the queueing mode,
  /// preempting victims where that lets a whole gang start. A preemption frees capacity that
  /// tasks earlier in the queue may now use, so the pass restarts from the queue's front after
  /// each preemption (this terminates: a task started at this instant, in this call or an
  /// earlier call at the same `now`, is never a victim at this instant, so every restart
  /// consumes a task that was running before the instant).
  /// Cost per pass: O(queue x nodes x replicas) in the worst case; identical requests that
  /// failed in a pass are not retried in it. Throws TimeWentBackwards when `now` is earlier
  /// than the `now` of an earlier call.
  ScheduleResult schedule(Time now) {
    detail::check_time(now, last_now_, "Scheduler::schedule");
    ScheduleResult out;
    ++pass_;
    if (now != started_now_at_) {
      started_now_.clear();
      started_now_at_ = now;
    }
    note_time(now);
    for (bool first = true; schedule_pass(now, out, first); first = false) {
    }
    return out;
  }

 private:
  /// One pass; returns true when it preempted (and stopped right after that start).
  bool schedule_pass(Time now, ScheduleResult& out, bool first) {
    std::vector<TaskId> order;
    if (first && options_.queueing == Queueing::greedy && capacity_epoch_ == last_pass_epoch_) {
      // Nothing was released since the last pass: only tasks enqueued since then, and tasks
      // whose idle fragments age with time, can start now (everything else failed on at
      // least this much capacity).
      order = fresh_;
      for (TaskId t : aging_)
        if (tasks_[t.index()].state == State::waiting) order.push_back(t);
      std::sort(order.begin(), order.end(), [this](TaskId a, TaskId b) { return key(a) < key(b); });
      order.erase(std::unique(order.begin(), order.end()), order.end());
    } else {
      order = queue();
    }
    fresh_.clear();
    bool blocked = false;
    std::optional<TaskId> head;     // strict: the blocking task; backfill: first blocked task
    Time head_reservation = kTimeNever;
    std::unordered_set<std::uint64_t> failed_signatures;
    for (TaskId t : order) {
      Entry& e = tasks_[t.index()];
      if (e.state != State::waiting) continue;
      e.wait = WaitStatus{};  // this pass decides afresh (no stale blocked_by_queue)
      if (blocked) {
        e.wait = WaitStatus{WaitCode::blocked_by_queue, fmt::format("waits behind {} (strict queueing)", tasks_[head->index()].spec.name),
                            {WaitCode::blocked_by_queue}};
        e.hold_stamp = {pass_, capacity_epoch_, now};
        visited_.push_back(t);
        continue;
      }
      std::optional<Placement> p;
      std::vector<Preemption> victims;
      std::optional<Transaction> tx;
      std::uint64_t sig = signature(t, now);
      bool known_to_fail = (e.failed_epoch == capacity_epoch_ && !ages(e.spec)) ||
                           (sig != 0 && failed_signatures.count(sig));
      if (!known_to_fail) {
        tx.emplace(cluster_, quotas_);
        p = try_start(*tx, t, now);
        if (!p && may_preempt(t)) p = try_preempt(*tx, t, now, victims);
      }
      if (p && head && options_.queueing == Queueing::backfill) {
        // Would starting t delay the head's reserved start? Tentatively count t as running.
        const Placement* cand = &*p;
        Time r = reservation(*tx, *head, now, {&cand, 1}, victims);
        if (r > head_reservation) {
          e.wait = WaitStatus{WaitCode::blocked_by_queue,
                              fmt::format("would delay the reserved start of {} (backfill)", tasks_[head->index()].spec.name),
                              {WaitCode::blocked_by_queue}};
          e.hold_stamp = {pass_, capacity_epoch_, now};
          visited_.push_back(t);
          continue;  // tx rolls back
        }
      }
      if (!p) {
        visited_.push_back(t);
        // The failure memo (failed_epoch, and the fresh-only greedy pass) assumes that with no
        // release nothing more can start. Not so when a task started at this instant (in this
        // call or an earlier one) is a victim t could take but may not (no zero-length
        // attempts): at the next instant it may.
        bool fresh_victims = std::any_of(started_now_.begin(), started_now_.end(),
                                         [&](TaskId v) { return preemption_kind(t, v).has_value(); });
        if (fresh_victims) retry_all_next_ = true;
        else e.failed_epoch = capacity_epoch_;
        if (sig != 0) failed_signatures.insert(sig);
        if (options_.queueing == Queueing::strict) {
          blocked = true;
          head = t;
        } else if (options_.queueing == Queueing::backfill && !head) {
          head = t;
          head_reservation = reservation(*head, now);
        }
        continue;
      }
      tx->commit();
      for (const auto& v : victims) {
        finish_release(v.victim, now);
        out.preemptions.push_back(v);
      }
      commit_start(t, std::move(*p), now);
      out.started.push_back(t);
      if (!victims.empty()) return true;  // restart: earlier tasks may use what was freed
    }
    last_pass_epoch_ = retry_all_next_ ? ~std::uint64_t{0} : capacity_epoch_;
    retry_all_next_ = false;
    return false;
  }

 public:

  /// Why task `t` waits now (status code, the binding constraints and one line with numbers),
  /// answered for a schedule() call at `now` on the current state: explain never reports a
  /// waiting code for a task that such a call would start (it reports fits_now or
  /// fits_after_preemption), and it uses the same eligibility, fit, quota and preemption
  /// predicates as the placement code. Diagnosis order: docs/scheduler.md "Why a task waits".
  /// For a task that is not waiting, the status of its last pass. Does not change any state
  /// (every probe runs in a transaction that is rolled back). Throws UnknownTask;
  /// TimeWentBackwards (`now` earlier than the last schedule() call).
  WaitStatus explain(TaskId t, Time now) {
    check_task_id(t, "Scheduler::explain");
    detail::check_time(now, last_now_, "Scheduler::explain");
    Entry& e = tasks_.at(t.index());
    if (e.state != State::waiting) return e.wait;
    // Nothing changed since the pass that held it (the simulator asks right after schedule()):
    // a new pass would hold it the same way.
    if (e.wait.code == WaitCode::blocked_by_queue && !e.wait.reason.empty() &&
        e.hold_stamp == std::make_tuple(pass_, capacity_epoch_, now))
      return e.wait;
    // As the next schedule() call at `now` would see it: tasks started at `now` are no victims.
    if (options_.queueing != Queueing::greedy)
      if (auto hold = queue_hold(t, now)) return std::move(*hold);
    return diagnose(t, now);
  }

  /// RayJob autoscaling: places one more worker of the running task's chosen option, on its
  /// capacity class, charging quota per replica. Returns nullopt when it does not fit now or the
  /// task does not run. Throws UnknownTask; TimeWentBackwards.
  std::optional<ReplicaAllocation> add_worker(TaskId t, Time now) {
    check_task_id(t, "Scheduler::add_worker");
    detail::check_time(now, last_now_, "Scheduler::add_worker");
    Entry& e = tasks_.at(t.index());
    if (e.state != State::running) return std::nullopt;
    const ReplicaShape& w = e.spec.options[e.placement.option].worker;
    if (!quotas_.admits(e.placement.quota_key, w.resources())) return std::nullopt;
    NodeFilter f = NodeFilter::build(policies_, e.spec, now, cluster_.size());
    policy_->begin_gang(cluster_);
    for (const auto& a : e.placement.replicas) policy_->replica_placed(cluster_, a);
    NodeId best = pick_node(e.spec, e.placement.capacity, w, f, now, false);
    if (!best.valid()) return std::nullopt;
    ReplicaAllocation a = cluster_.allocate(best, w);
    quotas_.charge(e.placement.quota_key, w.resources(), +1);
    e.placement.quota_held += w.resources();
    e.placement.replicas.push_back(a);
    allocated_[std::size_t(e.placement.capacity)] += a.total_gpu_milli();
    node_tasks_[best.index()].push_back(t);
    if (e.placement.capacity != ResourceType::idle) cluster_.touch_owner(best, now);
    return a;
  }
  /// Releases the most recently added worker of a running task (never the master/head).
  /// Returns false when only the master/head is left or the task does not run. Throws
  /// UnknownTask; TimeWentBackwards.
  bool remove_worker(TaskId t, Time now) {
    check_task_id(t, "Scheduler::remove_worker");
    detail::check_time(now, last_now_, "Scheduler::remove_worker");
    Entry& e = tasks_.at(t.index());
    if (e.state != State::running || e.placement.replicas.size() <= 1) return false;
    ReplicaAllocation a = e.placement.replicas.back();
    e.placement.replicas.pop_back();
    allocated_[std::size_t(e.placement.capacity)] -= a.total_gpu_milli();
    cluster_.release(a);
    Resources r = a.resources();
    quotas_.charge(e.placement.quota_key, r, -1);
    e.placement.quota_held -= r;
    auto& v = node_tasks_[a.node.index()];
    v.erase(std::find(v.begin(), v.end(), t));
    if (e.placement.capacity != ResourceType::idle) cluster_.touch_owner(a.node, now);
    ++capacity_epoch_;
    return true;
  }

  /// May running task `victim` be preempted for waiting task `preemptor`? (docs/scheduler.md
  /// "Preemption"): the preemptor must be non-idle and non-spot; a victim on idle
  /// capacity yields to any such preemptor (idle_reclaim), guaranteed or not; a spot victim too
  /// (spot_eviction); any other victim only when not guaranteed, with `preemption` on and a
  /// strictly lower priority. Throws UnknownTask (either id).
  std::optional<PreemptionKind> preemption_kind(TaskId preemptor, TaskId victim) const {
    check_task_id(preemptor, "Scheduler::preemption_kind");
    check_task_id(victim, "Scheduler::preemption_kind");
    return preemption_kind(preemptor, victim, false);
  }

 private:
  /// `hypothetical`: as if preemption, idle reclaim and spot eviction were all enabled (for
  /// explain()'s fits_after_preemption when the options disable them).
  std::optional<PreemptionKind> preemption_kind(TaskId preemptor, TaskId victim, bool hypothetical) const {
    const Entry& p = tasks_.at(preemptor.index());
    const Entry& v = tasks_.at(victim.index());
    if (v.state != State::running) return std::nullopt;
    return victim_kind(p.spec, v.placement.capacity, v.spec.priority, v.spec.guarantee, hypothetical);
  }
  /// The one rule behind preemption_kind() and the victim scan: may a task running on
  /// `capacity` with `priority` / `guarantee` yield to preemptor `p`, and as what?
  std::optional<PreemptionKind> victim_kind(const TaskSpec& p, ResourceType capacity, std::int32_t priority, bool guarantee,
                                            bool hypothetical) const {
    if (p.resource_type == ResourceType::idle || p.resource_type == ResourceType::spot) return std::nullopt;
    // Guarantee means non-preemptible capacity: it protects on reserved and pay-as-you-go
    // capacity only. Once on idle capacity (an accept_idle fallback) idle rules apply; spot
    // capacity is preemptible by definition.
    if (guarantee && capacity != ResourceType::idle && capacity != ResourceType::spot) return std::nullopt;
    if (capacity == ResourceType::idle) {
      if (options_.idle_reclaim || hypothetical) return PreemptionKind::idle_reclaim;
      return std::nullopt;
    }
    if (capacity == ResourceType::spot) {
      if (options_.spot_eviction || hypothetical) return PreemptionKind::spot_eviction;
      return std::nullopt;
    }
    if ((options_.preemption || hypothetical) && priority < p.priority) return PreemptionKind::priority;
    return std::nullopt;
  }


 private:
  enum class State : std::uint8_t { idle_state, waiting, running };
  struct Entry {
    TaskSpec spec;
    State state = State::idle_state;
    Placement placement;
    WaitStatus wait;
    std::uint64_t failed_epoch = ~std::uint64_t{0};  ///< capacity epoch of its last failed try
    /// (pass, capacity epoch, now) of the pass that set a blocked_by_queue status.
    std::tuple<std::uint64_t, std::uint64_t, Time> hold_stamp{0, 0, 0};
  };
  std::uint64_t pass_ = 0;   ///< schedule() calls so far (stamps queue holds for explain)
  std::vector<TaskId> visited_;
  std::vector<std::int32_t> scratch_slot_;  ///< per node, -1 between uses (preemption_may_help)
  struct ScratchRel { std::int64_t cpu = 0, mem = 0; std::int32_t gpu[kMaxGpusPerNode]; };
  std::vector<ScratchRel> scratch_rel_;
  std::int64_t allocated_[4] = {0, 0, 0, 0};
  void account(const Placement& p, int sign) {
    for (const auto& a : p.replicas) allocated_[std::size_t(p.capacity)] += sign * a.total_gpu_milli();
  }

  /// Bumped whenever capacity may have grown for some waiting task (a release, a node up, a
  /// node policy created or expired, a quota change). A task that failed in the current
  /// epoch cannot start until it changes.
  std::uint64_t capacity_epoch_ = 0;
  std::uint64_t last_pass_epoch_ = ~std::uint64_t{0};
  bool retry_all_next_ = false;  ///< a task failed while tasks started at this instant were victims it could take
  Time last_now_ = -kTimeNever;
  std::vector<TaskId> fresh_;   ///< enqueued since the last pass
  std::vector<TaskId> aging_;   ///< waiting tasks whose feasibility grows with time (idle stability)
  std::vector<TaskId> started_now_;  ///< tasks started at instant started_now_at_ (never victims then)
  Time started_now_at_ = -kTimeNever;
  /// While a reservation walks the future: each node's hypothetical last owner change (tasks
  /// expected to end by then have touched their nodes), read by node_eligible instead of the
  /// node's own.
  bool owner_override_ = false;
  std::vector<Time> owner_at_;

  /// Tasks whose candidate nodes can grow with time alone: idle fragments offered at high or
  /// medium stability age into eligibility.
  static bool ages(const TaskSpec& s) {
    bool may_idle = s.resource_type == ResourceType::idle || s.accept_idle || s.prefer_idle;
    return may_idle && s.idle_stability != IdleStability::low;
  }
  /// Bumps the epoch when a node policy starts or ends in (last_now_, now].
  void note_time(Time now) {
    for (const auto& p : policies_) {
      if ((p.created > last_now_ && p.created <= now) || (p.expire > last_now_ && p.expire <= now)) {
        ++capacity_epoch_;
        break;
      }
    }
    last_now_ = std::max(last_now_, now);
  }
  // (idle last, priority desc, submit asc, name, id)
  using QueueKey = std::tuple<int, int, Time, std::string, int, TaskId>;
  QueueKey key(TaskId t) const {
    const TaskSpec& s = tasks_[t.index()].spec;
    return {s.is_idle() ? 1 : 0, -s.priority, s.submit, s.name, 0, t};
  }

  // ------------------------------------------------------------------ placement
  bool node_eligible(const TaskSpec& s, ResourceType cls, NodeId n, const NodeFilter& f, Time now, bool ignore_filter) const {
    const Node& node = cluster_.node(n);
    switch (cls) {
      case ResourceType::reserved:
        if (node.pool != s.pool) return false;
        break;
      case ResourceType::pay_as_you_go:
      case ResourceType::spot:
        if (s.pool.valid() ? node.pool != s.pool : cluster_.pool(node.pool).kind != PoolKind::shared) return false;
        break;
      case ResourceType::idle: {
        if (!idle_pool_ok(s, node.pool)) return false;
        Time age = now - (owner_override_ ? owner_at_[n.index()] : node.last_owner_change);
        if (s.idle_stability == IdleStability::high && age < options_.idle_stability_high) return false;
        if (s.idle_stability == IdleStability::medium && age < options_.idle_stability_medium) return false;
        break;
      }
    }
    return ignore_filter || f.allowed(n);
  }

  NodeId pick_node(const TaskSpec& s, ResourceType cls, const ReplicaShape& r, const NodeFilter& f, Time now, bool ignore_filter) {
    NodeId best;
    double best_score = 0;
    auto order = policy_->scan_order();
    if (r.num_gpu > 0 && order != PlacementPolicy::ScanOrder::all_nodes) {
      // The policy's score order is the index order: the first feasible node wins.
      const auto& idx = cluster_.free_index();
      auto ok = [&](std::int32_t id) {
        NodeId n(id);
        return cluster_.fits(n, r) && node_eligible(s, cls, n, f, now, ignore_filter);
      };
      if (order == PlacementPolicy::ScanOrder::least_free_first) {
        for (auto it = idx.lower_bound({r.total_gpu_milli(), r.cpu_milli, -1}); it != idx.end(); ++it)
          if (ok(std::get<2>(*it))) return NodeId(std::get<2>(*it));
        return NodeId();
      }
      // most_free_first: groups of equal (GPU, vCPU) from the top, each in ascending id order.
      auto group_end = idx.end();
      while (group_end != idx.begin()) {
        auto last = std::prev(group_end);
        if (std::get<0>(*last) < r.total_gpu_milli()) break;
        auto group_begin = idx.lower_bound({std::get<0>(*last), std::get<1>(*last), -1});
        for (auto it = group_begin; it != group_end; ++it)
          if (ok(std::get<2>(*it))) return NodeId(std::get<2>(*it));
        group_end = group_begin;
      }
      return NodeId();
    }
    bool first_wins = policy_->first_feasible_wins();
    for (std::size_t i = 0, n = cluster_.size(); i < n; ++i) {
      NodeId id(static_cast<std::int32_t>(i));
      if (!cluster_.fits(id, r)) continue;
      if (!node_eligible(s, cls, id, f, now, ignore_filter)) continue;
      if (first_wins) return id;
      double sc = policy_->score(cluster_, id, r);
      if (!best.valid() || sc > best_score) {
        best = id;
        best_score = sc;
      }
    }
    return best;
  }

  /// Places every replica of option `opt` on class `cls` inside `tx`, or none.
  std::optional<std::vector<ReplicaAllocation>> place_gang(Transaction& tx, const TaskSpec& s, std::size_t opt, ResourceType cls,
                                                           const NodeFilter& f, Time now, bool ignore_filter) {
    std::size_t m = tx.mark();
    std::vector<ReplicaAllocation> out;
    out.reserve(std::size_t(s.replicas()));
    policy_->begin_gang(cluster_);
    for (std::int32_t i = 0; i < s.replicas(); ++i) {
      const ReplicaShape& r = i == 0 ? s.options[opt].head : s.options[opt].worker;
      NodeId n = pick_node(s, cls, r, f, now, ignore_filter);
      if (!n.valid()) {
        tx.rollback_to(m);
        return std::nullopt;
      }
      out.push_back(tx.allocate(n, r));
      policy_->replica_placed(cluster_, out.back());
    }
    return out;
  }

  /// Capacity classes a task may run on, in the order tried.
  static std::vector<ResourceType> classes(const TaskSpec& s) {
    if (s.resource_type != ResourceType::reserved) return {s.resource_type};
    if (s.prefer_idle) return {ResourceType::idle, ResourceType::reserved};
    if (s.accept_idle) return {ResourceType::reserved, ResourceType::idle};
    return {ResourceType::reserved};
  }
  QuotaKey quota_key(const TaskSpec& s, ResourceType cls) const { return QuotaKey{s.user, cls, s.pool}; }

  /// Tries every class and candidate spec in order; on success the gang and its quota are
  /// taken inside `tx` and the placement is returned.
  /// `only`: try that capacity class alone (preemption tries one class at a time).
  std::optional<Placement> try_start(Transaction& tx, TaskId t, Time now, bool ignore_filter = false,
                                     std::optional<ResourceType> only = std::nullopt) {
    const TaskSpec& s = tasks_[t.index()].spec;
    NodeFilter f = NodeFilter::build(policies_, s, now, cluster_.size());
    for (ResourceType cls : classes(s)) {
      if (only && cls != *only) continue;
      QuotaKey k = quota_key(s, cls);
      for (std::size_t i = 0; i < s.options.size(); ++i) {
        Resources d = s.demand(i);
        if (!quotas_.admits(k, d)) continue;
        auto reps = place_gang(tx, s, i, cls, f, now, ignore_filter);
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

  bool may_preempt(TaskId t) const {
    const TaskSpec& s = tasks_[t.index()].spec;
    if (s.resource_type == ResourceType::idle || s.resource_type == ResourceType::spot) return false;
    return options_.preemption || options_.idle_reclaim || options_.spot_eviction;
  }

  Time work_lost(const Entry& v, Time now) const {
    Time e = now - v.placement.start;
    Time c = v.spec.checkpoint_interval;
    return c > 0 ? e - (e / c) * c : e;
  }

  /// Necessary condition for preemption to start `t`, without touching the cluster: on each
  /// node, give back to its GPUs (per GPU), vCPU and memory what the candidate victims hold
  /// there; the nodes of a usable model must then offer at least 1 + workers replica slots
  /// (slots = min(GPUs with enough free / GPUs per replica, vCPU / replica vCPU, memory /
  /// replica memory)). An upper bound on what preemption can achieve: it ignores pools, node
  /// policies, quota and the order replicas are placed in. O(victim replicas x GPUs per node
  /// + nodes with enough free GPU).
  template <class Cands>
  bool preemption_may_help(TaskId t, const Cands& cands) {
    const TaskSpec& s = tasks_[t.index()].spec;
    using Rel = ScratchRel;
    if (scratch_slot_.size() < cluster_.size()) scratch_slot_.assign(cluster_.size(), -1);
    std::vector<NodeId> touched;
    scratch_rel_.clear();
    for (const auto& c : cands)
      for (const auto& a : tasks_[c.id.index()].placement.replicas) {
        std::int32_t& slot = scratch_slot_[a.node.index()];
        const Node& node = cluster_.node(a.node);
        if (slot < 0) {
          slot = std::int32_t(scratch_rel_.size());
          scratch_rel_.emplace_back();
          Rel& r = scratch_rel_.back();
          r.cpu = node.free.cpu_milli;
          r.mem = node.free.mem_mib;
          std::copy(cluster_.gpu_free_begin(a.node), cluster_.gpu_free_begin(a.node) + node.gpus, r.gpu);
          touched.push_back(a.node);
        }
        Rel& r = scratch_rel_[std::size_t(slot)];
        r.cpu += a.cpu_milli;
        r.mem += a.mem_mib;
        for (std::uint64_t m = a.gpu_mask; m; m &= m - 1) r.gpu[std::countr_zero(m)] += a.gpu_milli;
      }
    auto slots_of = [](const ReplicaShape& r, std::int32_t usable, std::int64_t cpu, std::int64_t mem) {
      std::int64_t k = r.num_gpu > 0 ? usable / r.num_gpu : std::int64_t(1) << 40;
      if (r.cpu_milli > 0) k = std::min(k, cpu / r.cpu_milli);
      if (r.mem_mib > 0) k = std::min(k, mem / r.mem_mib);
      return k;
    };
    bool ok = false;
    for (std::size_t i = 0; i < s.options.size() && !ok; ++i) {
      const ReplicaShape& h = s.options[i].head;
      const ReplicaShape& w = s.options[i].worker;
      const ReplicaShape& r = h.total_gpu_milli() <= w.total_gpu_milli() ? h : w;
      if (r.num_gpu == 0) { ok = true; break; }
      auto model_ok = [&](const Node& n) { return n.up && n.model >= 0 && (r.models == 0 || ((r.models >> n.model) & 1u)); };
      std::int64_t slots = 0;
      for (NodeId n : touched) {
        const Node& node = cluster_.node(n);
        if (!model_ok(node)) continue;
        const Rel& rel = scratch_rel_[std::size_t(scratch_slot_[n.index()])];
        std::int32_t usable = 0;
        for (std::int32_t g = 0; g < node.gpus; ++g) usable += rel.gpu[g] >= r.gpu_milli;
        slots += slots_of(r, usable, rel.cpu, rel.mem);
      }
      const auto& idx = cluster_.free_index();
      for (auto it = idx.lower_bound({r.total_gpu_milli(), 0, -1}); it != idx.end() && slots < s.replicas(); ++it) {
        NodeId n(std::get<2>(*it));
        if (scratch_slot_[n.index()] >= 0) continue;
        const Node& node = cluster_.node(n);
        if (model_ok(node)) slots += slots_of(r, cluster_.usable_gpus(node, r.gpu_milli), node.free.cpu_milli, node.free.mem_mib);
      }
      ok = slots >= s.replicas();
    }
    for (NodeId n : touched) scratch_slot_[n.index()] = -1;
    return ok;
  }

  /// Gang-aware preemption: candidates ordered idle, spot, others; lowest priority first; then
  /// least work lost since the last checkpoint; then id. Adds victims until the whole gang
  /// starts, then drops every victim the gang does not need (newest first), so the set is
  /// minimal. Never preempts in vain: without a successful start nothing changes.
  std::optional<Placement> try_preempt(Transaction& tx, TaskId t, Time now, std::vector<Preemption>& victims,
                                       bool hypothetical = false) {
    // One capacity class at a time, in the task's order. A placement on idle capacity may
    // only reclaim tasks that run on idle capacity themselves: evicting an owner's task to
    // run on "idle" capacity would let the victim reclaim it right back (ping-pong).
    for (ResourceType cls : classes(tasks_[t.index()].spec)) {
      auto p = try_preempt_class(tx, t, now, victims, hypothetical, cls);
      if (p) return p;
    }
    return std::nullopt;
  }

  std::optional<Placement> try_preempt_class(Transaction& tx, TaskId t, Time now, std::vector<Preemption>& victims,
                                             bool hypothetical, ResourceType cls) {
    struct Cand { int cls; std::int32_t prio; Time lost; TaskId id; PreemptionKind kind; };
    std::vector<Cand> cands;
    // Compact scan over the running tasks (RunInfo keeps what eligibility needs together).
    const TaskSpec& ps = tasks_[t.index()].spec;
    for (const RunInfo& ri : run_info_) {
      if (ri.start >= now) continue;  // started at this instant: no zero-length attempts
      if (cls == ResourceType::idle && ri.capacity != ResourceType::idle) continue;
      auto k = victim_kind(ps, ri.capacity, ri.priority, ri.guarantee, hypothetical);
      if (!k) continue;
      PreemptionKind kind = *k;
      int vcls = ri.capacity == ResourceType::idle ? 0 : ri.capacity == ResourceType::spot ? 1 : 2;
      Time e = now - ri.start;
      Time lost = ri.checkpoint > 0 ? e - (e / ri.checkpoint) * ri.checkpoint : e;
      cands.push_back({vcls, ri.priority, lost, ri.id, kind});
    }
    if (cands.empty()) return std::nullopt;
    std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
      return std::tie(a.cls, a.prio, a.lost, a.id) < std::tie(b.cls, b.prio, b.lost, b.id);
    });
    if (!preemption_may_help(t, cands)) return std::nullopt;
    std::size_t m0 = tx.mark();
    // The shortest prefix of the candidate order that lets the whole gang start. Galloping
    // search (prefixes of 1, 2, 4, ... victims), then binary search inside the last doubling;
    // if even every candidate is not enough, nothing is preempted (never in vain). The prefix
    // is moved with transaction marks (release more, or roll back to a shorter prefix), so
    // finding a k-victim answer costs O(k) releases and O(log k) gang trials.
    std::vector<std::size_t> marks{m0};   // marks[i]: state with the first i candidates released
    auto set_prefix = [&](std::size_t k) {
      if (k + 1 < marks.size()) {
        tx.rollback_to(marks[k]);
        marks.resize(k + 1);
      }
      while (marks.size() <= k) {
        release_into(tx, cands[marks.size() - 1].id);
        marks.push_back(tx.mark());
      }
    };
    auto starts_with_prefix = [&](std::size_t k) {
      set_prefix(k);
      std::size_t m1 = tx.mark();
      bool ok = try_start(tx, t, now, false, cls).has_value();
      tx.rollback_to(m1);
      return ok;
    };
    std::size_t hi = 0;
    for (std::size_t size = 1;; size = std::min(size * 2, cands.size())) {
      if (starts_with_prefix(size)) {
        hi = size;
        break;
      }
      if (size == cands.size()) break;
    }
    if (hi == 0) {
      tx.rollback_to(m0);
      return std::nullopt;
    }
    std::size_t lo = hi / 2 + 1;
    while (lo < hi) {
      std::size_t mid = lo + (hi - lo) / 2;
      if (starts_with_prefix(mid)) hi = mid;
      else lo = mid + 1;
    }
    tx.rollback_to(m0);
    lo = hi;
    std::vector<std::size_t> chosen(lo);
    for (std::size_t i = 0; i < lo; ++i) chosen[i] = i;
    // Victims holding nothing on the nodes the gang would use are usually not needed: keep
    // only the ones on those nodes when that still starts the gang (then the quadratic
    // minimisation below runs on a handful).
    {
      for (std::size_t i = 0; i < lo; ++i) release_into(tx, cands[i].id);
      auto p = try_start(tx, t, now, false, cls);
      std::vector<NodeId> used;
      if (p)
        for (const auto& a : p->replicas) used.push_back(a.node);
      tx.rollback_to(m0);
      std::sort(used.begin(), used.end());
      std::vector<std::size_t> relevant;
      for (std::size_t i = 0; i < lo; ++i) {
        bool on_used = false;
        for (const auto& a : tasks_[cands[i].id.index()].placement.replicas)
          on_used = on_used || std::binary_search(used.begin(), used.end(), a.node);
        if (on_used) relevant.push_back(i);
      }
      if (relevant.size() < lo) {
        for (std::size_t i : relevant) release_into(tx, cands[i].id);
        bool ok = try_start(tx, t, now, false, cls).has_value();
        tx.rollback_to(m0);
        if (ok) chosen = relevant;
      }
    }
    // Minimise: drop each victim (newest first) if the gang still starts without it, and
    // repeat until a whole round drops nothing. One round is not enough: placement is greedy,
    // so freeing less can succeed where freeing more failed (a policy may pick a different,
    // worse node when more is free); only a round with no drop proves that every kept victim
    // is needed against the final set.
    std::vector<bool> keep(chosen.size(), true);
    for (bool dropped = true; dropped;) {
      dropped = false;
      for (std::size_t j = chosen.size(); j-- > 0;) {
        if (!keep[j]) continue;
        tx.rollback_to(m0);
        for (std::size_t q = 0; q < chosen.size(); ++q)
          if (keep[q] && q != j) release_into(tx, cands[chosen[q]].id);
        if (try_start(tx, t, now, false, cls)) {
          keep[j] = false;
          dropped = true;
        }
      }
    }
    tx.rollback_to(m0);
    for (std::size_t q = 0; q < chosen.size(); ++q) {
      if (!keep[q]) continue;
      release_into(tx, cands[chosen[q]].id);
      victims.push_back(Preemption{cands[chosen[q]].id, t, cands[chosen[q]].kind});
    }
    auto p = try_start(tx, t, now, false, cls);
    if (!p) {  // cannot happen: the kept set was tested; stay safe
      tx.rollback_to(m0);
      victims.clear();
    }
    return p;
  }

  void release_into(Transaction& tx, TaskId t) {
    const Placement& p = tasks_[t.index()].placement;
    for (const auto& a : p.replicas) tx.release(a);
    if (p.capacity != ResourceType::idle) tx.charge(p.quota_key, p.quota_held, -1);
  }

  void finish_release(TaskId t, Time now) {
    Entry& e = tasks_[t.index()];
    for (const auto& a : e.placement.replicas) {
      auto& v = node_tasks_[a.node.index()];
      v.erase(std::find(v.begin(), v.end(), t));
      if (e.placement.capacity != ResourceType::idle) cluster_.touch_owner(a.node, now);
    }
    running_.erase(t);
    {
      std::size_t pos = run_pos_[t.index()];
      run_pos_[run_info_.back().id.index()] = pos;
      run_info_[pos] = run_info_.back();
      run_info_.pop_back();
    }
    account(e.placement, -1);
    e.state = State::idle_state;
    e.placement = Placement{};
    ++capacity_epoch_;
  }

  void commit_start(TaskId t, Placement p, Time now) {
    Entry& e = tasks_[t.index()];
    queue_.erase(key(t));
    if (!aging_.empty()) aging_.erase(std::remove(aging_.begin(), aging_.end(), t), aging_.end());
    e.state = State::running;
    e.wait = WaitStatus{};
    for (const auto& a : p.replicas) {
      node_tasks_[a.node.index()].push_back(t);
      if (p.capacity != ResourceType::idle) cluster_.touch_owner(a.node, now);
    }
    e.placement = std::move(p);
    account(e.placement, +1);
    started_now_.push_back(t);
    running_.insert(t);
    if (run_pos_.size() < tasks_.size()) run_pos_.resize(tasks_.size(), 0);
    run_pos_[t.index()] = run_info_.size();
    run_info_.push_back(RunInfo{t, e.placement.capacity, e.spec.priority, e.spec.guarantee, e.placement.start,
                                e.spec.checkpoint_interval});
  }

  /// Signature of a request for the per-pass failure memo; 0 = do not memoise (node policies
  /// apply, or idle stability depends on node age).
  std::uint64_t signature(TaskId t, Time now) const {
    const TaskSpec& s = tasks_[t.index()].spec;
    for (const auto& p : policies_)
      if (p.applies(s, now)) return 0;
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; h ^= h >> 29; };
    mix(std::uint64_t(s.resource_type));
    mix(std::uint64_t(s.accept_idle) * 2 + std::uint64_t(s.prefer_idle));
    mix(std::uint64_t(s.idle_stability));
    mix(std::uint64_t(std::int64_t(s.pool.value)));
    mix(std::uint64_t(s.workers));
    mix(std::uint64_t(s.priority));
    mix(std::uint64_t(s.guarantee));
    for (const auto& o : s.options)
      for (const ReplicaShape* r : {&o.head, &o.worker}) {
        mix(std::uint64_t(r->num_gpu));
        mix(std::uint64_t(r->gpu_milli));
        mix(std::uint64_t(r->cpu_milli));
        mix(std::uint64_t(r->mem_mib));
        mix(r->models);
      }
    if (s.resource_type == ResourceType::reserved || quotas_.find(quota_key(s, s.resource_type)))
      mix(std::hash<std::string>{}(s.user));
    return h == 0 ? 1 : h;
  }

  // ------------------------------------------------------------------ backfill reservations
  /// Expected end of a running task: start + its runtime estimate (never if unknown; an
  /// overdue task is expected to end now).
  Time expected_end(TaskId t, Time now) const {
    const Entry& e = tasks_[t.index()];
    if (e.spec.runtime_estimate < 0) return kTimeNever;
    return std::max(now, e.placement.start + e.spec.runtime_estimate);
  }

  /// The reservation of waiting task `head` with the tasks `extras` tentatively placed inside
  /// `tx` (a backfill candidate; explain's replay of a pass), each expected to run until now +
  /// its estimate.
  /// `gone`: tasks already released inside tx (preemption victims of `extra`); they are not
  /// running any more and must not be released a second time at their expected end.
  /// Walks the future in time order: the expected ends of running tasks (releasing them), the
  /// creation and expiry of node policies that may apply to the head, and the times at which
  /// a node's idle fragment reaches the head's stability threshold (a node whose owners' task
  /// is expected to end then starts ageing from that end); the first time the whole gang fits
  /// is the answer. Leaves tx as it found it.
  Time reservation(Transaction& tx, TaskId head, Time now, std::span<const Placement* const> extras,
                   const std::vector<Preemption>& gone) {
    const TaskSpec& hs = tasks_[head.index()].spec;
    std::vector<std::pair<Time, const Placement*>> ends;
    for (const Placement* extra : extras) {
      const TaskSpec& xs = tasks_[extra->task.index()].spec;
      ends.emplace_back(xs.runtime_estimate < 0 ? kTimeNever : now + xs.runtime_estimate, extra);
    }
    for (TaskId t : running_) {
      bool released = std::any_of(gone.begin(), gone.end(), [t](const Preemption& g) { return g.victim == t; });
      if (!released) ends.emplace_back(expected_end(t, now), &tasks_[t.index()].placement);
    }
    std::stable_sort(ends.begin(), ends.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::set<Time> times;
    for (const auto& e : ends)
      if (e.first != kTimeNever) times.insert(e.first);
    for (const auto& p : policies_) {
      if (!(p.created < p.expire && p.applies(hs, p.created))) continue;  // never constrains the head
      if (p.created > now) times.insert(p.created);
      if (p.expire > now && p.expire != kTimeNever) times.insert(p.expire);
    }
    const Time th = stability_threshold(hs);
    struct OverrideGuard {
      bool& flag;
      ~OverrideGuard() { flag = false; }
    } guard{owner_override_};
    if (th > 0) {
      owner_at_.resize(cluster_.size());
      for (std::size_t n = 0; n < cluster_.size(); ++n) owner_at_[n] = cluster_.nodes()[n].last_owner_change;
      for (const Placement* extra : extras)
        if (extra->capacity != ResourceType::idle)
          for (const auto& a : extra->replicas) owner_at_[a.node.index()] = now;
      for (std::size_t n = 0; n < cluster_.size(); ++n)
        if (cluster_.nodes()[n].up && owner_at_[n] + th > now) times.insert(owner_at_[n] + th);
      owner_override_ = true;
    }
    std::size_t m = tx.mark();
    auto fits_at = [&](Time at) {
      std::size_t m1 = tx.mark();
      bool ok = try_start(tx, head, at).has_value();
      tx.rollback_to(m1);
      return ok;
    };
    Time result = fits_at(now) ? now : kTimeNever;
    std::size_t i = 0;
    while (result == kTimeNever && !times.empty()) {
      Time at = *times.begin();
      times.erase(times.begin());
      for (; i < ends.size() && ends[i].first <= at; ++i) {
        const Placement* p = ends[i].second;
        for (const auto& a : p->replicas) tx.release(a);
        if (p->capacity == ResourceType::idle) continue;
        tx.charge(p->quota_key, p->quota_held, -1);
        if (th > 0)
          for (const auto& a : p->replicas) {
            owner_at_[a.node.index()] = ends[i].first;
            times.insert(ends[i].first + th);
          }
      }
      if (fits_at(at)) result = at;
    }
    tx.rollback_to(m);
    return result;
  }

  /// Fragment age a task's idle placements need (0: any fragment, or it never runs on idle).
  Time stability_threshold(const TaskSpec& s) const {
    if (!ages(s)) return 0;
    return s.idle_stability == IdleStability::high ? options_.idle_stability_high : options_.idle_stability_medium;
  }

 public:
  /// The reservation of waiting task `head` (EASY backfilling's shadow time): the earliest
  /// time >= now at which its whole gang could start if running tasks end at their expected
  /// ends and nothing else starts, counting node policies that start or expire and idle
  /// fragments that age into its stability level by then. kTimeNever when no such time is
  /// known. Does not change any state. Throws UnknownTask; InvalidState when `head` does not
  /// wait; TimeWentBackwards.
  Time reservation(TaskId head, Time now) {
    check_task_id(head, "Scheduler::reservation");
    detail::check_time(now, last_now_, "Scheduler::reservation");
    if (tasks_[head.index()].state != State::waiting)
      throw InvalidState("Scheduler::reservation: task " + tasks_[head.index()].spec.name + " does not wait");
    Transaction tx(cluster_, quotas_);
    return reservation(tx, head, now, {}, {});
  }

  /// The next time after `now` at which some waiting task may become startable with no other
  /// event: a node policy is created or expires, or a node's idle fragment reaches the
  /// stability threshold (`high` / `medium`) of a waiting task that may run on idle capacity.
  /// kTimeNever when none. A caller that owns time (the simulator) runs schedule() then.
  /// O(policies + nodes).
  Time next_eligibility_change(Time now) const {
    Time next = kTimeNever;
    if (queue_.empty()) return next;
    for (const auto& p : policies_) {
      if (p.created > now) next = std::min(next, p.created);
      if (p.expire > now) next = std::min(next, p.expire);
    }
    Time ths[2] = {0, 0};
    for (TaskId t : aging_) {
      const Entry& e = tasks_[t.index()];
      if (e.state != State::waiting) continue;
      Time th = stability_threshold(e.spec);
      ths[e.spec.idle_stability == IdleStability::high ? 0 : 1] = th;
    }
    for (Time th : ths) {
      if (th <= 0) continue;
      for (const Node& n : cluster_.nodes())
        if (n.up && n.last_owner_change + th > now) next = std::min(next, n.last_owner_change + th);
    }
    return next;
  }

 private:
  // ------------------------------------------------------------------ diagnosis
  /// The queue hold a schedule() call at `now` would put on waiting task `t` (strict /
  /// backfill), found by replaying the pass over the tasks ahead of `t` inside a rolled-back
  /// transaction with the pass's own steps: a task that starts is kept (and counted as running
  /// until its estimated end), the first that cannot start is the head; under strict every
  /// task behind the head is held, under backfill a task that fits is held when it delays the
  /// head's reservation. nullopt when nothing holds `t`, and also when a task ahead would start
  /// by preemption (the pass would restart; no hold is claimed then).
  std::optional<WaitStatus> queue_hold(TaskId t, Time now) {
    Transaction tx(cluster_, quotas_);
    std::optional<TaskId> head;
    Time head_reservation = kTimeNever;
    std::deque<Placement> kept;          // stable addresses for `extras`
    std::vector<const Placement*> extras;  // tasks the replayed pass started, in tx
    auto held = [&]() -> std::optional<WaitStatus> {
      const std::string& hn = tasks_[head->index()].spec.name;
      if (options_.queueing == Queueing::strict)
        return WaitStatus{WaitCode::blocked_by_queue, fmt::format("waits behind {} (strict queueing)", hn), {WaitCode::blocked_by_queue}};
      return WaitStatus{WaitCode::blocked_by_queue, fmt::format("would delay the reserved start of {} (backfill)", hn),
                        {WaitCode::blocked_by_queue}};
    };
    for (const auto& k : queue_) {
      TaskId x = std::get<5>(k);
      if (head && options_.queueing == Queueing::strict) return held();
      std::size_t m = tx.mark();
      std::vector<Preemption> victims;
      std::optional<Placement> p = try_start(tx, x, now);
      if (!p && may_preempt(x)) {
        p = try_preempt(tx, x, now, victims);
        if (p && x != t) return std::nullopt;  // a preemption ahead: the pass restarts
      }
      if (p && head) {
        auto ex = extras;
        ex.push_back(&*p);
        Time r = reservation(tx, *head, now, ex, victims);
        if (r > head_reservation) {
          if (x == t) return held();
          tx.rollback_to(m);
          continue;
        }
      }
      if (x == t) return std::nullopt;
      if (!p) {
        if (!head) {
          head = x;
          head_reservation = reservation(tx, x, now, extras, {});
        }
        continue;
      }
      kept.push_back(std::move(*p));
      extras.push_back(&kept.back());
    }
    return std::nullopt;
  }

  /// Would a node policy start or end in (last pass, now]? Then schedule() bumps the capacity
  /// epoch first (note_time) and a remembered failure no longer holds.
  bool policies_change_by(Time now) const {
    for (const auto& p : policies_)
      if ((p.created > last_now_ && p.created <= now) || (p.expire > last_now_ && p.expire <= now)) return true;
    return false;
  }

  /// Does some (class, option) of spec `s` (the task's own or a relaxed copy) place its whole
  /// gang now, ignoring quota? The placement code itself (place_gang) on a rolled-back
  /// transaction. `filter_of`: the task whose node policies apply.
  bool gang_places(const TaskSpec& s, const TaskSpec& filter_of, Time now, bool ignore_filter) {
    NodeFilter f = NodeFilter::build(policies_, filter_of, now, cluster_.size());
    Transaction tx(cluster_, quotas_);
    for (ResourceType cls : classes(s))
      for (std::size_t i = 0; i < s.options.size(); ++i)
        if (place_gang(tx, s, i, cls, f, now, ignore_filter)) return true;  // tx rolls back
    return false;
  }

  /// Quota figures for the reason: the first dimension of `demand` above `room`, e.g.
  /// "8 GPU exceeds remaining quota 4 GPU".
  static std::string quota_excess(const Resources& demand, const Resources& room, std::string_view what) {
    if (demand.gpu_milli > room.gpu_milli)
      return fmt::format("{} GPU exceeds {} {} GPU", gpus_str(demand.gpu_milli), what, gpus_str(room.gpu_milli));
    if (demand.cpu_milli > room.cpu_milli)
      return fmt::format("{} vCPU exceeds {} {} vCPU", gpus_str(demand.cpu_milli), what, gpus_str(room.cpu_milli));
    return fmt::format("{} GiB exceeds {} {} GiB", gib_str(demand.mem_mib), what, gib_str(room.mem_mib));
  }

  /// Diagnosis in the documented order (docs/scheduler.md "Why a task waits"). Caller:
  /// explain().
  WaitStatus diagnose(TaskId t, Time now) {
    const Entry& entry = tasks_[t.index()];
    const TaskSpec& s = entry.spec;
    const ReplicaShape& w = s.options[0].worker;
    std::string model = w.num_gpu == 0 ? "CPU" : model_names(w.models);
    std::string need = fmt::format("needs {} x {} on {}", s.replicas(), shape_str(w), model);
    // A failure remembered by the last pass holds until the capacity epoch changes (exactly
    // what schedule() assumes when it skips the task).
    const bool known_to_fail = entry.failed_epoch == capacity_epoch_ && !ages(s) && !policies_change_by(now);
    // 1. Fits now: the placement schedule() would make.
    if (!known_to_fail) {
      Transaction tx(cluster_, quotas_);
      if (try_start(tx, t, now)) return {WaitCode::fits_now, fmt::format("{}; fits now: starts at the next scheduling pass", need), {}};
    }
    // 2. Never: per (class, option), could the empty cluster (every node up, no policy) host
    // every replica, and could the quota limit ever admit the whole demand?
    bool cap_ever = false, quota_ever = false, both_ever = false;
    for (ResourceType cls : classes(s)) {
      for (std::size_t i = 0; i < s.options.size(); ++i) {
        bool q_ok = !quotas_.never_admits(quota_key(s, cls), s.demand(i));
        bool c_ok = true;
        for (const ReplicaShape* r : {&s.options[i].head, &s.options[i].worker}) {
          bool found = false;
          for (std::size_t n = 0; n < cluster_.size() && !found; ++n) {
            const Node& node = cluster_.nodes()[n];
            found = capacity_fits(node, *r) && pool_ok(s, cls, node);
          }
          c_ok = c_ok && found;
        }
        cap_ever = cap_ever || c_ok;
        quota_ever = quota_ever || q_ok;
        both_ever = both_ever || (c_ok && q_ok);
      }
    }
    if (!both_ever) {
      WaitStatus ws{WaitCode::never_fits, need, {}};
      if (!quota_ever || cap_ever) {  // quota binds (alone, or per option where capacity does not)
        ws.blocking.push_back(WaitCode::waits_for_quota);
        QuotaKey k = quota_key(s, s.resource_type);
        const auto* q = quotas_.find(k);
        Resources limit = q ? q->limit : Resources{};
        ws.reason += fmt::format("; task demand {} of {} ({}{}) even with nothing running",
                                 quota_excess(s.demand(0), limit, "quota limit"), s.user, to_string(s.resource_type),
                                 q ? "" : ", no quota entry");
      }
      if (!cap_ever || quota_ever) {
        ws.blocking.push_back(WaitCode::waits_for_capacity);
        std::int32_t largest = 0;
        for (const auto& n : cluster_.nodes())
          if (w.num_gpu == 0 || w.models == 0 || (n.model >= 0 && ((w.models >> n.model) & 1u))) largest = std::max(largest, n.gpus);
        ws.reason += fmt::format("; largest node has {} GPU", largest);
      }
      return finish(std::move(ws));
    }
    // 3. Preemption under the scheduler's own rules: schedule() would start it now.
    const bool real_preempt = may_preempt(t) && !known_to_fail;
    if (real_preempt) {
      Transaction tx(cluster_, quotas_);
      std::vector<Preemption> v;
      if (try_preempt(tx, t, now, v))
        return {WaitCode::fits_after_preemption, fmt::format("{}; fits after preempting {} task(s)", need, v.size()),
                {WaitCode::fits_after_preemption}};
    }
    // 4. Quota now, and whether the gang would place ignoring quota.
    bool quota_now = false;
    std::optional<std::pair<QuotaKey, Resources>> refused;  // the first (class, option) quota refuses
    for (ResourceType cls : classes(s))
      for (std::size_t i = 0; i < s.options.size(); ++i) {
        bool ok = quotas_.admits(quota_key(s, cls), s.demand(i));
        quota_now = quota_now || ok;
        if (!ok && !refused) refused.emplace(quota_key(s, cls), s.demand(i));
      }
    const bool places = refused && gang_places(s, s, now, false);
    WaitStatus quota_ws;
    if (!quota_now || places) {
      const auto* q = quotas_.find(refused->first);
      Resources room = q ? q->limit - q->used : Resources{};
      quota_ws = {WaitCode::waits_for_quota,
                  fmt::format("{}; task demand {} of {} ({})", need, quota_excess(refused->second, room, "remaining quota"), s.user,
                              to_string(refused->first.resource_type)),
                  {WaitCode::waits_for_quota}};
      // Some option fits the free capacity and only its quota holds it back; otherwise the
      // capacity side binds too and is named after the quota.
      if (places) return finish(std::move(quota_ws));
    }
    WaitStatus res = capacity_diagnosis(t, now, need, quota_now);
    if (quota_now) return finish(std::move(res));
    quota_ws.reason += res.reason.substr(need.size());
    quota_ws.blocking.push_back(res.code);
    return finish(std::move(quota_ws));
  }

  /// Why the gang does not place on the free capacity (quota aside): node policies, idle
  /// stability, vCPU / memory, GPU fragmentation, or capacity. Every test relaxes one rule in
  /// a copy of the request and runs the placement code on it.
  WaitStatus capacity_diagnosis(TaskId t, Time now, const std::string& need, bool quota_now) {
    const TaskSpec& s = tasks_[t.index()].spec;
    const ReplicaShape& w = s.options[0].worker;
    NodeFilter f = NodeFilter::build(policies_, s, now, cluster_.size());
    const auto cls_list = classes(s);
    auto eligible = [&](std::size_t n, bool ignore_filter) {
      if (!cluster_.nodes()[n].up || cluster_.nodes()[n].drained) return false;
      for (ResourceType cls : cls_list)
        if (node_eligible(s, cls, NodeId(std::int32_t(n)), f, now, ignore_filter)) return true;
      return false;
    };
    auto replica_fits = [&](std::size_t n) {
      NodeId id{std::int32_t(n)};
      for (const auto& o : s.options)
        if (cluster_.fits(id, o.head) || cluster_.fits(id, o.worker)) return true;
      return false;
    };
    // a. Node policies: it would place without them.
    if (!f.empty() && gang_places(s, s, now, true)) {
      std::size_t allowed = 0, excluded_fit = 0;
      for (std::size_t n = 0; n < cluster_.size(); ++n) {
        if (eligible(n, false)) ++allowed;
        else if (eligible(n, true) && replica_fits(n)) ++excluded_fit;
      }
      std::string figures = fmt::format("{} eligible nodes allowed by its node policies; {} excluded nodes fit a replica",
                                        allowed, excluded_fit);
      if (f.blocked().empty())  // only NodeIn lists narrowed it: nothing is blacklisted
        return {WaitCode::blocked_by_node_policy, fmt::format("{}; no node allowed by its NodeIn node policies fits ({})", need, figures),
                {WaitCode::blocked_by_node_policy}};
      std::string nodes;
      for (NodeId n : f.blocked()) nodes += (nodes.empty() ? "" : ",") + cluster_.node(n).name;
      return {WaitCode::blocked_by_node_policy, fmt::format("quota check failed due to node blacklist: {} ({})", nodes, figures),
              {WaitCode::blocked_by_node_policy}};
    }
    // b. Preemption is off (or not allowed for this kind) but would let it start.
    const bool all_on = options_.preemption && options_.idle_reclaim && options_.spot_eviction;
    if (quota_now && !all_on && s.resource_type != ResourceType::idle && s.resource_type != ResourceType::spot) {
      Transaction tx(cluster_, quotas_);
      std::vector<Preemption> v;
      if (try_preempt(tx, t, now, v, /*hypothetical=*/true))
        return {WaitCode::fits_after_preemption,
                fmt::format("{}; fits after preempting {} task(s), which the scheduler's preemption settings do not allow", need, v.size()),
                {WaitCode::fits_after_preemption}};
    }
    // c. Idle stability: it would place on idle capacity offered at stability low.
    if (ages(s)) {
      TaskSpec low = s;
      low.idle_stability = IdleStability::low;
      if (gang_places(low, s, now, false)) {
        Time threshold = s.idle_stability == IdleStability::high ? options_.idle_stability_high : options_.idle_stability_medium;
        std::size_t offered = 0, young_fit = 0;
        for (std::size_t n = 0; n < cluster_.size(); ++n) {
          if (!cluster_.nodes()[n].up) continue;
          NodeId id{std::int32_t(n)};
          if (node_eligible(s, ResourceType::idle, id, f, now, false)) ++offered;
          else if (node_eligible(low, ResourceType::idle, id, f, now, false) && replica_fits(n)) ++young_fit;
        }
        return {WaitCode::waits_for_idle_stability,
                fmt::format("{}; {} nodes offer idle capacity at stability {}; {} fit but are younger than {} s", need, offered,
                            s.idle_stability == IdleStability::high ? "high" : "medium", young_fit, gpus_str(threshold)),
                {WaitCode::waits_for_idle_stability}};
      }
    }
    // Free capacity of the eligible nodes (model-matching for a GPU replica).
    std::int64_t free_gpu = 0;
    std::int32_t largest_frag = 0;
    for (std::size_t n = 0; n < cluster_.size(); ++n) {
      const Node& node = cluster_.nodes()[n];
      if (!eligible(n, false)) continue;
      if (w.num_gpu > 0 && (node.model < 0 || (w.models != 0 && !((w.models >> node.model) & 1u)))) continue;
      free_gpu += node.free.gpu_milli;
      largest_frag = std::max(largest_frag, cluster_.usable_gpus(node, w.gpu_milli));
    }
    // d. vCPU / memory: the same request without vCPU and memory would place.
    {
      TaskSpec gpu_only = s;
      for (auto& o : gpu_only.options)
        for (ReplicaShape* r : {&o.head, &o.worker}) r->cpu_milli = r->mem_mib = 0;
      if (gang_places(gpu_only, s, now, false)) {
        std::int64_t max_cpu = 0, max_mem = 0;
        std::size_t gpu_nodes = 0;
        for (std::size_t n = 0; n < cluster_.size(); ++n) {
          if (!eligible(n, false)) continue;
          NodeId id{std::int32_t(n)};
          ReplicaShape g = w;
          g.cpu_milli = g.mem_mib = 0;
          if (!cluster_.fits(id, g)) continue;
          ++gpu_nodes;
          max_cpu = std::max(max_cpu, cluster_.node(id).free.cpu_milli);
          max_mem = std::max(max_mem, cluster_.node(id).free.mem_mib);
        }
        return {WaitCode::waits_for_cpu_memory,
                fmt::format("{}; each replica needs {} vCPU and {} GiB; {} eligible nodes have room for its GPUs but at most {} vCPU and "
                            "{} GiB free",
                            need, gpus_str(w.cpu_milli), gib_str(w.mem_mib), gpu_nodes, gpus_str(max_cpu), gib_str(max_mem)),
                {WaitCode::waits_for_cpu_memory}};
      }
    }
    // e. GPU fragmentation vs capacity.
    if (w.num_gpu > 0 && free_gpu >= s.demand(0).gpu_milli)
      return {WaitCode::waits_for_fragmentation,
              fmt::format("{}; {} GPU free in total but largest free fragment {} GPU", need, gpus_str(free_gpu), largest_frag),
              {WaitCode::waits_for_fragmentation}};
    return {WaitCode::waits_for_capacity, fmt::format("{}; {} GPU free in eligible nodes", need, gpus_str(free_gpu)),
            {WaitCode::waits_for_capacity}};
  }

  /// Appends "[blocking: a, b]" (bucket names) when more than one constraint binds.
  static WaitStatus finish(WaitStatus ws) {
    if (ws.blocking.size() > 1) {
      std::string list;
      for (WaitCode c : ws.blocking) list += (list.empty() ? "" : ", ") + std::string(wait_bucket(c));
      ws.reason += " [blocking: " + list + "]";
    }
    return ws;
  }

  bool pool_ok(const TaskSpec& s, ResourceType cls, const Node& node) const {
    switch (cls) {
      case ResourceType::reserved: return node.pool == s.pool;
      case ResourceType::pay_as_you_go:
      case ResourceType::spot:
        return s.pool.valid() ? node.pool == s.pool : cluster_.pool(node.pool).kind == PoolKind::shared;
      case ResourceType::idle: return idle_pool_ok(s, node.pool);
    }
    return false;
  }
  /// Pools whose idle capacity task `s` may use. An idle task: its `pool` if set, else every
  /// pool. A reserved task falling back to idle capacity (accept_idle / prefer_idle): every
  /// pool except its own, because the nodes of its own pool are its reserved capacity; taking
  /// some of them as "idle" would combine reserved and idle capacity in one gang (and bypass
  /// its quota). [choice: whatever the pool's kind]
  static bool idle_pool_ok(const TaskSpec& s, PoolId pool) {
    if (s.resource_type == ResourceType::idle) return !s.pool.valid() || pool == s.pool;
    return pool != s.pool;
  }
  static bool capacity_fits(const Node& n, const ReplicaShape& r) {
    if (r.cpu_milli > n.capacity.cpu_milli || r.mem_mib > n.capacity.mem_mib) return false;
    if (r.num_gpu == 0) return true;
    if (n.model < 0 || (r.models != 0 && !((r.models >> n.model) & 1u))) return false;
    return n.gpus >= r.num_gpu;
  }
  std::string model_names(ModelMask m) const {
    if (m == 0) return "any GPU model";
    std::string s;
    for (std::size_t i = 0; i < cluster_.models().size(); ++i)
      if ((m >> i) & 1u) s += (s.empty() ? "" : "|") + cluster_.models()[i];
    return s;
  }
  static std::string gpus_str(std::int64_t milli) {
    return milli % 1000 == 0 ? fmt::format("{}", milli / 1000) : fmt::format("{:.3f}", double(milli) / 1000.0);
  }
  static std::string gib_str(std::int64_t mib) {
    return mib % 1024 == 0 ? fmt::format("{}", mib / 1024) : fmt::format("{:.3f}", double(mib) / 1024.0);
  }
  static std::string shape_str(const ReplicaShape& r) {
    if (r.num_gpu == 0) return fmt::format("{} vCPU", gpus_str(r.cpu_milli));
    if (r.gpu_milli < kMilliPerGpu) return fmt::format("{} milli-GPU", r.gpu_milli);
    return fmt::format("{} GPU", r.num_gpu);
  }

  Cluster cluster_;
  SchedulerOptions options_;
  std::unique_ptr<PlacementPolicy> policy_;
  QuotaBook quotas_;
  std::vector<NodePolicy> policies_;
  std::vector<Entry> tasks_;
  std::set<QueueKey> queue_;
  std::set<TaskId> running_;
  /// Running tasks, unordered (swap-remove), with what victim eligibility and order need.
  struct RunInfo {
    TaskId id;
    ResourceType capacity;
    std::int32_t priority;
    bool guarantee;
    Time start;
    Time checkpoint;
  };
  std::vector<RunInfo> run_info_;
  std::vector<std::size_t> run_pos_;
  std::vector<std::vector<TaskId>> node_tasks_;
};

}  // namespace libsched
