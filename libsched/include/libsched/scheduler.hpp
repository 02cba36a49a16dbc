// The gang scheduler: given the cluster, the running tasks, the waiting queue and `now`,
// decides which gangs start where, which tasks are preempted, and why the others wait.
//
// libsched never reads a clock and never sees a task's actual runtime: `now` is an argument
// and runtimes are the user's estimates. Rules: docs/platform.md; keys and queueing modes:
// docs/scenario-format.md; design notes: docs/scheduler.md; the parts (session, actions,
// plugins, explain) and how to extend them: docs/architecture.md.
//
// This class owns the state (detail::SchedulerCore, session.hpp) and the plugins, and is the
// public API. The algorithms live in the actions over a Session: actions/allocate.hpp (the
// queue pass), actions/preempt.hpp, actions/backfill.hpp (reservations), actions/outside.hpp
// (starts decided outside: start_at, adopt_task), and explain.hpp.
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
// concurrently with each other while no non-const member function runs, except explain() and
// reservation(): they are const but probe placements on the (mutable) cluster and quota book in
// a transaction that is rolled back, so they count as writers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "libsched/actions/allocate.hpp"
#include "libsched/actions/backfill.hpp"
#include "libsched/actions/outside.hpp"
#include "libsched/actions/preempt.hpp"
#include "libsched/cluster.hpp"
#include "libsched/decisions.hpp"
#include "libsched/detail/validate.hpp"
#include "libsched/errors.hpp"
#include "libsched/explain.hpp"
#include "libsched/fragmentation.hpp"
#include "libsched/node_policy.hpp"
#include "libsched/options.hpp"
#include "libsched/placement/builtin.hpp"
#include "libsched/placement/policy.hpp"
#include "libsched/quota.hpp"
#include "libsched/registry.hpp"
#include "libsched/session.hpp"
#include "libsched/status.hpp"
#include "libsched/task.hpp"
#include "libsched/transaction.hpp"

namespace libsched {

class Scheduler : private detail::SchedulerCore {
 public:
  /// Creates the plugins named in `options` (placement, queue_order, victim_order, admission)
  /// from `registry`. Throws UnknownName (a std::out_of_range, errors.hpp) for a name the
  /// registry does not hold.
  explicit Scheduler(Cluster cluster, SchedulerOptions options = {}, const Registry& registry = Registry::builtin())
      : detail::SchedulerCore(std::move(cluster), std::move(options), registry) {}
  /// The same with `placements` as the registry's placement part (the other parts builtin).
  Scheduler(Cluster cluster, SchedulerOptions options, const PlacementRegistry& placements)
      : Scheduler(std::move(cluster), std::move(options), Registry::with_placement(placements)) {}

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
    ++state_epoch_;
    note_code_change();
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
    ++state_epoch_;
    note_code_change();
  }

  /// Drains (cordons) node `n`: no new replica goes there (placements, preemption, backfill
  /// reservations, explain all see it as unable to take replicas); tasks already running on it
  /// continue until released. Idempotent. Throws UnknownNode; InvalidState for a removed node.
  void drain_node(NodeId n) {
    cluster_.set_drained(n, true);
    ++state_epoch_;
    note_code_change();
  }
  /// Ends a drain: the node takes replicas again from the next schedule(). Idempotent. Throws
  /// UnknownNode; InvalidState for a removed node.
  void undrain_node(NodeId n) {
    cluster_.set_drained(n, false);
    ++capacity_epoch_;
    ++state_epoch_;
    note_code_change();
  }

  /// Sets when the owners' (non-idle) allocation on node `n` last changed, e.g. restored from a
  /// snapshot: idle stability ages the node's idle fragment from `t` (docs/scheduler.md "Idle
  /// stability levels"). Throws UnknownNode.
  void set_owner_change(NodeId n, Time t) {
    cluster_.touch_owner(n, t);
    ++capacity_epoch_;
    ++state_epoch_;
    note_code_change();
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
    const auto cls = Session::classes(spec);
    if (std::find(cls.begin(), cls.end(), a.capacity) == cls.end())
      throw InvalidArgument(fmt::format("{}: may not run on {} capacity", who, to_string(a.capacity)));
    const bool ray = spec.type == TaskType::ray_job;
    if (ray ? a.replicas.empty() : a.replicas.size() != std::size_t(spec.replicas()))
      throw InvalidArgument(fmt::format("{}: {} replicas given for a gang of {}", who, a.replicas.size(), spec.replicas()));
    for (const auto& r : a.replicas) cluster_.node(r.node);  // throws UnknownNode
    std::vector<ReplicaAllocation> got = actions::take_exact(cluster_, spec, a);
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
    p.quota_key = Session::quota_key(tasks_[id.index()].spec, a.capacity);
    p.quota_held = a.capacity == ResourceType::idle ? Resources{} : held;
    if (a.capacity != ResourceType::idle) quotas_.charge(p.quota_key, p.quota_held, +1);
    Session(*this, a.start).commit_start(id, std::move(p), a.start);
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

  /// Starts waiting task `t` at `a.start` (ms, the decision instant) exactly where an outside
  /// decision says (an external scheduler, schedsim run --scheduler-cmd): option `a.option`,
  /// class `a.capacity`, each replica on its node (GPU mask 0: the node picks the GPUs as a
  /// placement would). Checked as a built-in start is: every replica on a node up, not drained,
  /// of a pool open to the task on that class, allowed by the node policies and idle stability,
  /// fitting what is free there; the admission plugin must admit the whole gang's demand. The
  /// start is committed as schedule() commits one (quota charged, never a victim at this
  /// instant). Throws UnknownTask; InvalidState when `t` does not wait, a replica's node is not
  /// eligible or the replica does not fit, or admission refuses; InvalidArgument (option, class,
  /// replica count: a gang starts whole, GPU mask); UnknownNode; TimeWentBackwards. On a throw
  /// nothing changes.
  void start_at(TaskId t, const Adoption& a) {
    const char* fn = "Scheduler::start_at";
    check_task_id(t, fn);
    detail::check_time(a.start, last_now_, fn);
    actions::start_decided(*this, t, a);  // actions/outside.hpp
  }

  /// Preempts running task `victim` at `now` for waiting task `preemptor` (an outside decision,
  /// as start_at): allowed only as schedule() would (preemption_kind(): the options' switches,
  /// priorities, guarantee, capacity classes), never for a victim started at `now`. Frees the
  /// victim's replicas and quota and returns the kind. Throws UnknownTask; InvalidState when the
  /// victim does not run, the preemptor does not wait, the victim started at `now`, or the rules
  /// do not let it yield; TimeWentBackwards. On a throw nothing changes.
  PreemptionKind preempt_for(TaskId victim, TaskId preemptor, Time now) {
    const char* fn = "Scheduler::preempt_for";
    check_task_id(victim, fn);
    check_task_id(preemptor, fn);
    detail::check_time(now, last_now_, fn);
    const Entry& v = tasks_[victim.index()];
    if (v.state != State::running) throw InvalidState(fmt::format("victim {} does not run", v.spec.name));
    if (tasks_[preemptor.index()].state != State::waiting)
      throw InvalidState(fmt::format("preemptor {} does not wait", tasks_[preemptor.index()].spec.name));
    if (now == started_now_at_ && std::find(started_now_.begin(), started_now_.end(), victim) != started_now_.end())
      throw InvalidState(fmt::format("victim {} started at this instant (never a victim then)", v.spec.name));
    Session session(*this, now);
    const std::optional<PreemptionKind> kind = session.preemption_kind(preemptor, victim, false);
    if (!kind)
      throw InvalidState(fmt::format("victim {} may not be preempted by {} (priority, guarantee, capacity class or the "
                                     "scheduler's preemption switches)",
                                     v.spec.name, tasks_[preemptor.index()].spec.name));
    session.note_time(now);
    release(victim, now);
    return *kind;
  }
  // =================================================================== end of embedding API

  const Cluster& cluster() const { return cluster_; }
  /// Mutable quota book (e.g. to set limits); counts as a capacity change.
  QuotaBook& quotas() {
    ++capacity_epoch_;
    ++state_epoch_;
    note_code_change();
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
    ++state_epoch_;
    note_code_change();
  }
  const std::vector<NodePolicy>& node_policies() const { return policies_; }

  /// Room for `n` tasks in the task table: add_task then moves no earlier task while fewer
  /// than `n` were added (a caller that knows its task count saves the table's regrowth).
  void reserve_tasks(std::size_t n) { tasks_.reserve(n); }

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
      const bool dormant_kept = dormant_valid();  // (no dormant task's diagnosis reads a new task)
      ++state_epoch_;  // memos keyed by task id
      note_code_change();
      if (dormant_kept) dormant_state_ = state_epoch_;
      return reused;
    }
    TaskId id(std::int32_t(tasks_.size()));
    Entry e;
    e.spec = std::move(spec);
    tasks_.push_back(std::move(e));
    return id;
  }
  /// A hint, no effect on any result: starts loading what a release or start of task `t`
  /// reads first (its entry and per-task positions) into the cache, for an embedder that knows
  /// which task its next call concerns (a simulator's next event). Ignores an unknown id. O(1).
  void prefetch(TaskId t) const noexcept {
    if (!t.valid() || t.index() >= tasks_.size()) return;
    const char* e = reinterpret_cast<const char*>(&tasks_[t.index()]);
    for (std::size_t off = 0; off < sizeof(Entry); off += 64) __builtin_prefetch(e + off);
    if (t.index() < run_pos_.size()) __builtin_prefetch(&run_pos_[t.index()]);
    if (t.index() < bucket_pos_.size()) __builtin_prefetch(&bucket_pos_[t.index()]);
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
    if (tasks_[t.index()].state == State::waiting)
      throw InvalidState("Scheduler::mutable_task: task " + tasks_[t.index()].spec.name + " is waiting");
    // A running task's estimate moves reservations; a task that neither waits nor runs is in
    // no memo (its signature is recomputed when it is enqueued).
    if (tasks_[t.index()].state == State::running) {
      ++state_epoch_;
      note_code_change();  // (a running task's spec: conservative)
    }
    return tasks_[t.index()].spec;
  }
  /// Number of task ids handed out, forgotten ones included (knows_task tells them apart).
  std::size_t task_count() const { return tasks_.size(); }

  /// Puts a registered (or ended) task in the queue. O(log queue). Throws UnknownTask;
  /// InvalidState when it already waits or runs.
  void enqueue(TaskId t, Time now) {
    check_task_id(t, "Scheduler::enqueue");
    Entry& e = tasks_[t.index()];
    if (e.state != State::idle_state)
      throw InvalidState("Scheduler::enqueue: task " + e.spec.name + (e.state == State::waiting ? " already waits" : " runs"));
    e.state = State::waiting;
    e.hold = Entry::Hold::none;
    e.reported_held = false;
    e.reported_stable = false;
    e.failed_epoch = ~std::uint64_t{0};
    e.rank = queue_rank(e.spec, t, now);
    e.enqueued_at = now;
    e.failed_pass = 0;
    e.spec_hash = 0;
    queue_insert(t);
    class_join(t);
    ++queue_epoch_;
    fresh_.push_back(t);
    if (ages(e.spec) && std::find(aging_.begin(), aging_.end(), t) == aging_.end()) aging_.push_back(t);
  }
  /// Task `t` succeeded after `run_time` ms of work in all: queue orders that learn from history
  /// (qssf's per-user mean) record it; the ranks of waiting tasks stay. Throws UnknownTask.
  void note_finished(TaskId t, Time run_time) {
    check_task_id(t, "Scheduler::note_finished");
    if (!builtin_queue_order_) queue_order_->task_finished(tasks_[t.index()].spec, run_time);
  }
  /// Removes a waiting task from the queue (e.g. the user stops it); no-op for a task that does
  /// not wait. Throws UnknownTask.
  void dequeue(TaskId t) {
    check_task_id(t, "Scheduler::dequeue");
    Entry& e = tasks_[t.index()];
    if (e.state != State::waiting) return;
    class_leave(t);
    queue_erase(t);
    ++queue_epoch_;
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
  /// Does the queue order preempt by itself (QueueOrder::preemptive(): srtf, srtf-estimate,
  /// las, gittins; never the builtin priority-fifo)? Then running tasks of the preemptor's
  /// priority may be victims too.
  bool queue_order_preempts() const { return order_preempts_; }
  std::size_t running_count() const { return running_.size(); }
  /// Waiting tasks in queue order.
  std::vector<TaskId> queue() const {
    std::vector<TaskId> v;
    v.reserve(queue_.size());
    for (const auto& k : queue_) v.push_back(k.id);
    return v;
  }
  /// Running tasks in id order (a range of TaskId: begin(), end(), size(), contains()).
  const IdSet<TaskId>& running() const { return running_; }

  /// Milli-GPU held by running tasks on capacity class `c` (idle = accept_idle fallbacks too).
  std::int64_t allocated_gpu_milli(ResourceType c) const { return allocated_[std::size_t(c)]; }
  /// Nodes whose free capacity or state changed since the last call (Cluster::take_changed).
  std::vector<NodeId> take_changed_nodes() { return cluster_.take_changed(); }
  /// The same into `out` (its content replaced; no allocation once its buffer has grown).
  void take_changed_nodes(std::vector<NodeId>& out) { cluster_.take_changed(out); }
  /// Waiting tasks that schedule() visited and did not start since the last call (tried and
  /// failed, or held by strict / backfill), each once, in (TaskSpec::sequence, id) order (id
  /// order when every sequence is 0); clears the list. Their wait status may
  /// have changed; other waiting tasks' have not been re-examined. With fast paths, a task this
  /// list last reported held behind a head (held_by_queue was true when it was taken) and held
  /// again since is not listed again: its code stays blocked_by_queue (explain()'s reason may
  /// name a newer head). Under strict queueing such tasks are not even visited. Likewise a
  /// task that fails as dormant (backfill, fast paths) is not listed again while nothing its
  /// code reads changed since a listing that reported it (SchedulerCore::stable_code).
  std::vector<TaskId> take_visited_waiting() {
    std::vector<TaskId> v;
    take_visited_waiting(v);
    return v;
  }
  /// The same into `out` (its content replaced), swapping buffers with the list: no allocation
  /// once both have grown (the simulator calls it at every instant).
  void take_visited_waiting(std::vector<TaskId>& out) {
    if (visited_all_) {  // (request classes: every waiting task, listed now)
      visited_all_ = false;
      for (const auto& k : queue_) visited_.push_back(k.id);
    }
    take_visited_listed(out);
  }
  /// The same, by request class (the simulator's wait attribution): returns true when every
  /// waiting task counts as visited, each class's members alike (for_each_request_class); then
  /// `out` may miss some of them. Else `out` is exactly what take_visited_waiting gives.
  bool take_visited_by_class(std::vector<TaskId>& out) {
    const bool all = visited_all_;
    visited_all_ = false;
    take_visited_listed(out);
    if (all) {
      all_listed_at_ = listings_;  // (every waiting task reported not held: no holds in a class pass)
      note_code_change();          // (codes set by class: no listing vouches for a task's own)
    }
    return all;
  }
  /// What a listing computed for one listed task, T being the latest time given to the
  /// scheduler (after a schedule() call at T, what the queries below answer at T until the
  /// scheduler changes): held_by_queue(task, T); request_signature(task, T) (0 when held: not
  /// computed); request_class(task).
  struct Listed {
    std::uint64_t signature;
    std::uint32_t request_class;
    bool held;
  };
  /// Per task of the list the last take_visited_waiting / take_visited_by_class gave, in its
  /// order (the simulator's wait attribution reads them instead of one query per task, each
  /// with its id check and entry lookup). Valid until the next listing.
  const std::vector<Listed>& listed() const { return listed_; }
  /// Generation of the request class ids: changes when the ids are handed out anew (a quota
  /// entry was added), so that a caller's per-class memo is dropped.
  std::uint64_t request_classes_generation() const { return classes_.generation; }
  /// Number of request class ids handed out (ids 0 .. n-1; some may have no member).
  std::size_t request_class_count() const { return classes_.classes.size(); }
  /// The request class of waiting task `t` (SchedulerOptions::request_classes), or
  /// ~0u when it has none (not waiting, classes off). Throws UnknownTask.
  std::uint32_t request_class(TaskId t) const {
    check_task_id(t, "Scheduler::request_class");
    return tasks_[t.index()].req_class;
  }
  /// Calls fn(class id, its first member by (TaskSpec::sequence, id)) for each request class
  /// with members. The members share the diagnosis only as far as their failure memos agree
  /// (explain tries a preemption only for a task not known to fail): that member is the one a
  /// visited list in that order (take_visited_waiting) with a per-signature memo diagnoses.
  template <class Fn>
  void for_each_request_class(Fn&& fn) const {
    for (std::uint32_t c : classes_.live) fn(c, classes_.classes[c].ids.begin()->second);
  }
  /// Calls fn(task) for each member of request class `c`, in queue order.
  template <class Fn>
  void for_each_class_member(std::uint32_t c, Fn&& fn) const {
    for (const auto& k : classes_.classes.at(c).members) fn(k.id);
  }
  /// Calls fn(task) for each member of request class `c`, in (TaskSpec::sequence, id) order
  /// (id order when every sequence is 0).
  template <class Fn>
  void for_each_class_member_by_id(std::uint32_t c, Fn&& fn) const {
    for (const auto& k : classes_.classes.at(c).ids) fn(k.second);
  }

 private:
  void take_visited_listed(std::vector<TaskId>& out) {
    out.clear();
    out.swap(visited_);
    sort_by_order_key(out, order_scratch_);
    std::erase_if(out, [this](TaskId t) { return tasks_[t.index()].state != State::waiting; });
    ++listings_;
    listed_.clear();
    // Right after the schedule() call (nothing changed since): a dormant task's code is the
    // diagnosis of a task that failed in that call (Entry::reported_stable).
    const bool settled = settled_ == std::make_tuple(pass_, state_epoch_, capacity_epoch_, queue_epoch_, last_now_) &&
                         policies_.empty();
    for (TaskId t : out) {
      const bool held = last_pass_hold(t, last_now_).has_value();
      Entry& e = tasks_[t.index()];
      listed_.push_back({held ? 0 : signature(t, last_now_), e.req_class, held});
      if (options_.fast_paths) {  // (read by actions::allocate under fast paths only)
        e.reported_held = held;
        e.reported_at = listings_;
        e.reported_stable = settled && !held && dormant(e) && failed_pass_of(e) == pass_ && !ages(e.spec);
      }
    }
  }
  std::vector<Listed> listed_;  ///< listed(): per task of the last listing

 public:
  /// Equal for two waiting tasks whose requests are identical for the scheduler (same shapes,
  /// class, pool, priority, quota owner; no node policy): they get the same decisions and wait
  /// status. 0 means "not comparable" (a node policy applies). Throws UnknownTask.
  std::uint64_t request_signature(TaskId t, Time now) const {
    check_task_id(t, "Scheduler::request_signature");
    return signature(t, now);
  }

  /// The placement of a running task (nullptr otherwise), valid while the task runs (the
  /// scheduler keeps placements for running tasks only and reuses a slot once its task ends).
  /// Throws UnknownTask.
  const Placement* placement_of(TaskId t) const {
    check_task_id(t, "Scheduler::placement_of");
    const Entry& e = tasks_[t.index()];
    return e.state == State::running ? &placement(e) : nullptr;
  }

  /// Ends a running task's attempt: frees its replicas and quota at once. O(replicas).
  /// Throws UnknownTask; InvalidState when it does not run; TimeWentBackwards.
  void release(TaskId t, Time now) {
    check_task_id(t, "Scheduler::release");
    detail::check_time(now, last_now_, "Scheduler::release");
    Entry& e = tasks_[t.index()];
    if (e.state != State::running) throw InvalidState("Scheduler::release: task " + e.spec.name + " does not run");
    // Straight into the cluster and the quota book (Session::release_into's effect, without a
    // transaction log to allocate: giving back what a running task holds cannot fail midway).
    const Placement& p = placement(e);
    for (const auto& a : p.replicas) cluster_.release(a);
    if (p.capacity != ResourceType::idle) quotas_.charge(p.quota_key, p.quota_held, -1);
    finish_release(t, now);
  }

  /// Running tasks with a replica on node `n`, in (TaskSpec::sequence, id) order (id order
  /// when every sequence is 0). Throws UnknownNode.
  std::vector<TaskId> tasks_on_node(NodeId n) const {
    cluster_.node(n);  // throws UnknownNode
    std::vector<TaskId> v = node_tasks_[n.index()];
    std::vector<std::pair<std::uint64_t, TaskId>> scratch;
    sort_by_order_key(v, scratch);
    return v;
  }
  /// Marks a node up or down. Throws UnknownNode; InvalidState when taking it down while tasks
  /// run on it (release them first) or when it was removed; TimeWentBackwards.
  void set_node_up(NodeId n, bool up, Time now) {
    const Node& node = cluster_.node(n);  // throws UnknownNode
    detail::check_time(now, last_now_, "Scheduler::set_node_up");
    if (node.removed) throw InvalidState("Scheduler::set_node_up: node " + node.name + " was removed");
    if (!up && !node_tasks_[n.index()].empty())
      throw InvalidState("Scheduler::set_node_up: tasks still run on " + node.name);
    cluster_.set_up(n, up);
    cluster_.touch_owner(n, now);
    if (up) ++capacity_epoch_;
    ++state_epoch_;
    note_code_change();
  }

  /// One scheduling decision at `now`: passes over the queue in order (the configured queue
  /// order; by default priority desc, submit asc, name, id; idle tasks last; actions/allocate.hpp). Places every gang that may start under the queueing mode,
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
    Session session(*this, now);
    session.note_time(now);
    for (bool first = true; actions::allocate(session, out, first); first = false) {
    }
    settled_ = {pass_, state_epoch_, capacity_epoch_, queue_epoch_, now};
    return out;
  }

  /// Why task `t` waits now (status code, the binding constraints and one line with numbers),
  /// answered for a schedule() call at `now` on the current state: explain never reports a
  /// waiting code for a task that such a call would start (it reports fits_now or
  /// fits_after_preemption), and it uses the same eligibility, fit, quota and preemption
  /// predicates as the placement code. Diagnosis order: docs/scheduler.md "Why a task waits".
  /// For a task that is not waiting, the status of its last pass. Does not change any state
  /// (every probe runs in a transaction that is rolled back).
  /// Const: the probes touch only the members declared mutable in detail::SchedulerCore (cluster,
  /// quota book, scratch) and restore them; not safe to call concurrently with any other call.
  /// Throws UnknownTask; TimeWentBackwards (`now` earlier than the last schedule() call).
  WaitStatus explain(TaskId t, Time now) const {
    check_task_id(t, "Scheduler::explain");
    detail::check_time(now, last_now_, "Scheduler::explain");
    Session session(const_cast<Scheduler&>(*this), now);
    return Explain(session)(t);
  }
  /// Did the last schedule() call at `now` hold waiting task `t` behind the queue's head
  /// (strict or backfill queueing), with nothing released since? Then wait_code(t, now) and
  /// explain(t, now).primary() are blocked_by_queue. O(1). Throws UnknownTask.
  bool held_by_queue(TaskId t, Time now) const {
    check_task_id(t, "Scheduler::held_by_queue");
    return last_pass_hold(t, now).has_value();
  }
  /// explain(t, now).primary() without building the reason (the same code, computed by the
  /// same diagnosis; the simulator's wait attribution). Same errors as explain().
  WaitCode wait_code(TaskId t, Time now) const {
    check_task_id(t, "Scheduler::wait_code");
    detail::check_time(now, last_now_, "Scheduler::wait_code");
    // Explain's first answer without building a status.
    if (last_pass_hold(t, now)) return WaitCode::blocked_by_queue;
    Session session(const_cast<Scheduler&>(*this), now);
    return Explain(session, /*reasons=*/false)(t).primary();
  }

  /// RayJob autoscaling: places one more worker of the running task's chosen option, on its
  /// capacity class, charging quota per replica. Returns nullopt when it does not fit now or the
  /// task does not run. Throws UnknownTask; TimeWentBackwards.
  std::optional<ReplicaAllocation> add_worker(TaskId t, Time now) {
    check_task_id(t, "Scheduler::add_worker");
    detail::check_time(now, last_now_, "Scheduler::add_worker");
    Entry& e = tasks_[t.index()];
    if (e.state != State::running) return std::nullopt;
    Placement& pl = placement(e);
    const ReplicaShape& w = e.spec.options[pl.option].worker;
    Session session(*this, now);
    if (!session.admits(pl.quota_key, e.spec, t, w.resources())) return std::nullopt;
    NodeFilter f = NodeFilter::build(policies_, e.spec, now, cluster_.size());
    policy_->begin_gang(cluster_);
    for (const auto& a : pl.replicas) policy_->replica_placed(cluster_, a);
    NodeId best = session.pick_node(ReplicaRequest{w, e.spec, t, std::int32_t(pl.replicas.size()), pl.option,
                                                   pl.capacity},
                                    f, now, false);
    if (!best.valid()) return std::nullopt;
    ReplicaAllocation a = cluster_.allocate(best, w);
    quotas_.charge(pl.quota_key, w.resources(), +1);
    pl.quota_held += w.resources();
    pl.replicas.push_back(a);
    placement_changed(e);
    allocated_[std::size_t(pl.capacity)] += a.total_gpu_milli();
    node_tasks_[best.index()].push_back(t);
    if (pl.capacity != ResourceType::idle) cluster_.touch_owner(best, now);
    ++state_epoch_;
    note_code_change();
    return a;
  }
  /// Releases the most recently added worker of a running task (never the master/head).
  /// Returns false when only the master/head is left or the task does not run. Throws
  /// UnknownTask; TimeWentBackwards.
  bool remove_worker(TaskId t, Time now) {
    check_task_id(t, "Scheduler::remove_worker");
    detail::check_time(now, last_now_, "Scheduler::remove_worker");
    Entry& e = tasks_[t.index()];
    if (e.state != State::running) return false;
    Placement& pl = placement(e);
    if (pl.replicas.size() <= 1) return false;
    ReplicaAllocation a = pl.replicas.back();
    pl.replicas.pop_back();
    placement_changed(e);
    allocated_[std::size_t(pl.capacity)] -= a.total_gpu_milli();
    cluster_.release(a);
    Resources r = a.resources();
    quotas_.charge(pl.quota_key, r, -1);
    pl.quota_held -= r;
    auto& v = node_tasks_[a.node.index()];
    v.erase(std::find(v.begin(), v.end(), t));
    if (pl.capacity != ResourceType::idle) cluster_.touch_owner(a.node, now);
    ++capacity_epoch_;
    ++state_epoch_;
    note_code_change();
    return true;
  }

  /// May running task `victim` be preempted for waiting task `preemptor`? (docs/scheduler.md
  /// "Preemption"): the preemptor must be non-idle and non-spot; a victim on idle
  /// capacity yields to such a preemptor of strictly higher priority (idle_reclaim; an idle
  /// task has priority 0, a reserved task that fell back to idle capacity its own), guaranteed
  /// or not; a spot victim to any such preemptor (spot_eviction); any other victim only when
  /// not guaranteed, with `preemption` on and a strictly lower priority. Throws UnknownTask
  /// (either id).
  std::optional<PreemptionKind> preemption_kind(TaskId preemptor, TaskId victim) const {
    check_task_id(preemptor, "Scheduler::preemption_kind");
    check_task_id(victim, "Scheduler::preemption_kind");
    return Session(const_cast<Scheduler&>(*this), 0).preemption_kind(preemptor, victim, false);
  }

  /// The reservation of waiting task `head` (EASY backfilling's shadow time): the earliest
  /// time >= now at which its whole gang could start if running tasks end at their expected
  /// ends and nothing else starts, counting node policies that start or expire and idle
  /// fragments that age into its stability level by then. kTimeNever when no such time is
  /// known. Does not change any state. Throws UnknownTask; InvalidState when `head` does not
  /// wait; TimeWentBackwards.
  /// Const like explain().
  Time reservation(TaskId head, Time now) const {
    check_task_id(head, "Scheduler::reservation");
    detail::check_time(now, last_now_, "Scheduler::reservation");
    if (tasks_[head.index()].state != State::waiting)
      throw InvalidState("Scheduler::reservation: task " + tasks_[head.index()].spec.name + " does not wait");
    Session session(const_cast<Scheduler&>(*this), now);
    return actions::reservation(session, head, now);
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
    // The order's starvation guard (las): when a waiting task is promoted.
    if (promote_after_ > 0)
      for (const auto& k : queue_) {
        const Entry& e = tasks_[k.id.index()];
        if (queue_order_->promotable(e.spec) && e.enqueued_at + promote_after_ > now)
          next = std::min(next, e.enqueued_at + promote_after_);
      }
    // A queue order whose victims grow with time (las): when a running task may become one.
    if (order_victims_grow_) {
      const Session s(const_cast<Scheduler&>(*this), now);
      for (const RunInfo& ri : run_info_) {
        const Time t = queue_order_->next_change(tasks_[ri.id.index()].spec, ri.start, s.gpu_milli_of(ri.id), now);
        if (t > now) next = std::min(next, t);
      }
    }
    return next;
  }

 private:
  [[gnu::always_inline]] void check_task_id(TaskId t, std::string_view fn) const {
    if (!knows_task(t)) [[unlikely]]
      unknown_task(t, fn);
  }
  // (Out of line: check_task_id is a few compares, inlined into every accessor: GCC otherwise
  // calls it, 1-1.5 % of a congested replay's time.)
  [[noreturn, gnu::cold, gnu::noinline]] static void unknown_task(TaskId t, std::string_view fn) {
    throw UnknownTask(fmt::format("{}: unknown task id {}", fn, t.value));
  }
  /// The lowest id of a forgotten task, now known again (its Entry is empty), or an invalid id.
  TaskId reuse_forgotten_id() {
    if (free_ids_.empty()) return TaskId();
    std::pop_heap(free_ids_.begin(), free_ids_.end(), std::greater<>());
    TaskId id(free_ids_.back());
    free_ids_.pop_back();
    forgotten_[id.index()] = 0;
    // (a hint: the entry the next new task will take, whose lines are cold since its forget)
    if (!free_ids_.empty()) prefetch(TaskId(free_ids_.front()));
    return id;
  }

  // Thin forwarders to the Session, so the public functions above read as before.
  void finish_release(TaskId t, Time now) { Session(*this, now).finish_release(t, now); }
  std::uint64_t signature(TaskId t, Time now) const { return Session(const_cast<Scheduler&>(*this), now).signature(t, now); }
};

}  // namespace libsched
