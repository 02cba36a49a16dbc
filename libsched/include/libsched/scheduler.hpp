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
// queue pass), actions/preempt.hpp, actions/backfill.hpp (reservations), and explain.hpp.
//
// Typical use (the simulator does exactly this, see sim/simulator.cpp):
//   Scheduler s(cluster, options);             // cluster built with Cluster::add_pool/add_node
//   TaskId t = s.add_task(spec); s.enqueue(t, now);
//   ScheduleResult r = s.schedule(now);        // placements and preemptions, already applied
//   ... later: s.release(t, now) when the attempt ends; s.enqueue(t, now) to resubmit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "libsched/actions/allocate.hpp"
#include "libsched/actions/backfill.hpp"
#include "libsched/actions/preempt.hpp"
#include "libsched/cluster.hpp"
#include "libsched/decisions.hpp"
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

  const Cluster& cluster() const { return cluster_; }
  /// Mutable quota book (e.g. to set limits); counts as a capacity change.
  QuotaBook& quotas() {
    ++capacity_epoch_;
    return quotas_;
  }
  const QuotaBook& quotas() const { return quotas_; }
  const SchedulerOptions& options() const { return options_; }
  void add_node_policy(NodePolicy p) {
    policies_.push_back(std::move(p));
    ++capacity_epoch_;
  }
  const std::vector<NodePolicy>& node_policies() const { return policies_; }

  /// Registers a task (not queued yet). Throws std::invalid_argument when it has no option.
  TaskId add_task(TaskSpec spec) {
    if (spec.options.empty()) throw std::invalid_argument("task " + spec.name + " has no candidate spec");
    if (spec.is_idle()) spec.priority = 0;
    TaskId id(std::int32_t(tasks_.size()));
    Entry e;
    e.spec = std::move(spec);
    tasks_.push_back(std::move(e));
    return id;
  }
  const TaskSpec& task(TaskId t) const { return tasks_.at(t.index()).spec; }
  /// For the caller to update what a real scheduler would learn (e.g. the remaining runtime
  /// estimate of a resubmitted attempt). Not while waiting (the queue key would change).
  TaskSpec& mutable_task(TaskId t) {
    if (tasks_.at(t.index()).state == State::waiting) throw std::logic_error("mutable_task on a waiting task");
    return tasks_.at(t.index()).spec;
  }
  std::size_t task_count() const { return tasks_.size(); }

  /// Puts a registered (or ended) task in the queue. O(log queue).
  void enqueue(TaskId t, Time /*now*/) {
    Entry& e = tasks_.at(t.index());
    if (e.state != State::idle_state) throw std::logic_error("enqueue: task " + e.spec.name + " is not idle");
    e.state = State::waiting;
    e.wait = WaitStatus{};
    e.failed_epoch = ~std::uint64_t{0};
    e.rank = queue_rank(e.spec, t);
    queue_.insert(key(t));
    fresh_.push_back(t);
    if (ages(e.spec) && std::find(aging_.begin(), aging_.end(), t) == aging_.end()) aging_.push_back(t);
  }
  /// Removes a waiting task from the queue (e.g. the user stops it).
  void dequeue(TaskId t) {
    Entry& e = tasks_.at(t.index());
    if (e.state != State::waiting) return;
    queue_.erase(key(t));
    e.state = State::idle_state;
    if (!aging_.empty()) aging_.erase(std::remove(aging_.begin(), aging_.end(), t), aging_.end());
  }
  bool is_waiting(TaskId t) const { return tasks_.at(t.index()).state == State::waiting; }
  bool is_running(TaskId t) const { return tasks_.at(t.index()).state == State::running; }
  std::size_t waiting_count() const { return queue_.size(); }
  std::size_t running_count() const { return running_.size(); }
  /// Waiting tasks in queue order.
  std::vector<TaskId> queue() const {
    std::vector<TaskId> v;
    v.reserve(queue_.size());
    for (const auto& k : queue_) v.push_back(k.id);
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
  /// status. 0 means "not comparable" (a node policy applies).
  std::uint64_t request_signature(TaskId t, Time now) const { return signature(t, now); }

  /// The placement of a running task (nullptr otherwise).
  const Placement* placement_of(TaskId t) const {
    const Entry& e = tasks_.at(t.index());
    return e.state == State::running ? &e.placement : nullptr;
  }

  /// Ends a running task's attempt: frees its replicas and quota at once. O(replicas).
  void release(TaskId t, Time now) {
    Entry& e = tasks_.at(t.index());
    if (e.state != State::running) throw std::logic_error("release: task " + e.spec.name + " is not running");
    Transaction tx(cluster_, quotas_);
    release_into(tx, t);
    tx.commit();
    finish_release(t, now);
  }

  /// Running tasks with a replica on node `n`, in id order.
  std::vector<TaskId> tasks_on_node(NodeId n) const {
    std::vector<TaskId> v = node_tasks_.at(n.index());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }
  /// Marks a node up or down. Precondition for down: no task runs on it (release them first).
  void set_node_up(NodeId n, bool up, Time now) {
    if (!up && !node_tasks_.at(n.index()).empty()) throw std::logic_error("set_node_up: tasks still run on " + cluster_.node(n).name);
    cluster_.set_up(n, up);
    cluster_.touch_owner(n, now);
    if (up) ++capacity_epoch_;
  }

  /// One scheduling decision at `now`: passes over the queue in order (the configured queue
  /// order; by default priority desc, submit asc, name, id; idle tasks last; actions/allocate.hpp). Places every gang that may start under the queueing mode,
  /// preempting victims where that lets a whole gang start. A preemption frees capacity that
  /// tasks earlier in the queue may now use, so the pass restarts from the queue's front after
  /// each preemption (this terminates: a task started at this instant, in this call or an
  /// earlier call at the same `now`, is never a victim at this instant, so every restart
  /// consumes a task that was running before the instant).
  /// Cost per pass: O(queue x nodes x replicas) in the worst case; identical requests that
  /// failed in a pass are not retried in it.
  ScheduleResult schedule(Time now) {
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
  WaitStatus explain(TaskId t, Time now) const {
    Session session(const_cast<Scheduler&>(*this), now);
    return Explain(session)(t);
  }

  /// RayJob autoscaling: places one more worker of the running task's chosen option, on its
  /// capacity class, charging quota per replica. Returns nullopt when it does not fit now.
  std::optional<ReplicaAllocation> add_worker(TaskId t, Time now) {
    Entry& e = tasks_.at(t.index());
    if (e.state != State::running) return std::nullopt;
    const ReplicaShape& w = e.spec.options[e.placement.option].worker;
    Session session(*this, now);
    if (!session.admits(e.placement.quota_key, e.spec, t, w.resources())) return std::nullopt;
    NodeFilter f = NodeFilter::build(policies_, e.spec, now, cluster_.size());
    policy_->begin_gang(cluster_);
    for (const auto& a : e.placement.replicas) policy_->replica_placed(cluster_, a);
    NodeId best = session.pick_node(ReplicaRequest{w, e.spec, t, std::int32_t(e.placement.replicas.size()), e.placement.option,
                                                   e.placement.capacity},
                                    f, now, false);
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
  /// Returns false when only the master/head is left.
  bool remove_worker(TaskId t, Time now) {
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
  /// strictly lower priority.
  std::optional<PreemptionKind> preemption_kind(TaskId preemptor, TaskId victim) const {
    return Session(const_cast<Scheduler&>(*this), 0).preemption_kind(preemptor, victim, false);
  }

  /// The reservation of waiting task `head` (EASY backfilling's shadow time): the earliest
  /// time >= now at which its whole gang could start if running tasks end at their expected
  /// ends and nothing else starts, counting node policies that start or expire and idle
  /// fragments that age into its stability level by then. kTimeNever when no such time is
  /// known. Does not change any state.
  /// Const like explain().
  Time reservation(TaskId head, Time now) const {
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
    return next;
  }

 private:
  // Thin forwarders to the Session, so the public functions above read as before.
  void release_into(Transaction& tx, TaskId t) { Session(*this, 0).release_into(tx, t); }
  void finish_release(TaskId t, Time now) { Session(*this, now).finish_release(t, now); }
  std::uint64_t signature(TaskId t, Time now) const { return Session(const_cast<Scheduler&>(*this), now).signature(t, now); }
};

}  // namespace libsched
