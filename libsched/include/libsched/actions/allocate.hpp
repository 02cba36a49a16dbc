// Action `allocate`: one pass over the waiting queue, in queue order, starting every gang that
// may start now, whole or not at all.
//
// Contract. A pass may change: the cluster and quota book (committed placements and released
// victims), the queue and running set (started tasks leave the queue; victims stop running
// and are NOT re-queued: the caller owns resubmission), each visited task's wait status and
// failure memo, and `out` (appends started tasks and preemptions, in the order they happened).
// After a pass:
//   * every started gang holds all its replicas (one Transaction per trial, committed only
//     when every replica is placed) and its whole-gang quota;
//   * under `strict` no task behind the first task that could not start has started;
//   * under `backfill` no started task moved the head's reservation later
//     (actions/backfill.hpp may_jump);
//   * a preemption (actions/preempt.hpp) ends the pass right after the preemptor starts, and
//     allocate() returns true: what was freed may now fit tasks earlier in the queue, so the
//     caller (Scheduler::schedule) runs another pass from the queue's front.
// Termination: a task started at this instant is never a victim at this instant, so every
// restart consumes a task that was running before the instant.
//
// Memo: a task that failed while the capacity epoch did not change since cannot start (no
// release, node up, policy change or quota change happened), and tasks with equal request
// signatures (Session::signature) fail together within a pass; both are skipped (a greedy
// pass, and a backfill pass whose head has no known reservation, visit request classes
// instead of tasks: allocate_by_class). Under
// backfill, a task whose signature was held without a trial (held_without_trial) since the
// last start of the pass is held the same way, unless it ends by the head's reservation. Under
// strict queueing, tasks held behind a head since an earlier pass are not visited again while
// a head blocks ahead of them (Core::strict_tail_); they are still held.
#pragma once

#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

#include "libsched/actions/backfill.hpp"
#include "libsched/actions/preempt.hpp"
#include "libsched/session.hpp"

namespace libsched::actions {

/// May task `t` start now (or by preemption)? False only when no trial can succeed: it may
/// not preempt and no (class, option) passes Session::may_fit. Always true without fast paths.
inline bool might_start(const Session& S, TaskId t) {
  if (!S.st.options_.fast_paths || S.may_preempt(t)) return true;
  const TaskSpec& s = S.spec(t);
  for (ResourceType cls : Session::classes(s))
    for (std::size_t i = 0; i < s.options.size(); ++i)
      if (S.may_fit(s, i, cls)) return true;
  return false;
}

/// Would the failure of `t` (now) be remembered? Not when a task started at this instant (in
/// this call or an earlier one) is a victim t could take but may not (no zero-length
/// attempts): at the next instant it may (Core::retry_all_next_). Depends on t's spec only
/// through its signature's fields (capacity class, priority).
inline bool fails_with_fresh_victims(const Session& S, TaskId t) {
  const auto& st = S.st;
  // (no scan when no running task may yield to t at all: Session::may_yield_any)
  return !st.started_now_.empty() && S.may_yield_any(S.spec(t), false) &&
         std::any_of(st.started_now_.begin(), st.started_now_.end(), [&](TaskId v) { return S.preemption_kind(t, v, false).has_value(); });
}

/// Dormant failures (Core::dormant_gen_): may tasks that fail in a backfill walk go dormant?
/// Fast paths, the builtin admission and signature memo, a queue order without preemption of
/// its own, and no node policy (node filters, policy times). The preemption switches may be
/// on: a dormant task has no running task it could preempt, even hypothetically
/// (dormant_eligible), and a start it could take ends every dormancy (dormant_victim), so its
/// failure stays remembered (no fresh victim) and its diagnosis tries no preemption that
/// could succeed.
inline bool dormant_on(const Session& S) {
  const auto& st = S.st;
  const SchedulerOptions& o = st.options_;
  return o.fast_paths && o.queueing == Queueing::backfill && !st.order_preempts_ && st.builtin_admission_ &&
         st.memo_by_signature_ && st.policies_.empty();
}

/// May task `s`, which just failed in a walk under dormant_on, go dormant? Its wait code
/// (Explain::diagnose of a task known to fail) must be the same on every state that starts
/// alone lead to, whatever the free capacity: a CPU-only request (the vCPU / memory test then
/// only asks whether some node is eligible: node state), on pay-as-you-go or spot capacity
/// (no idle fallback, no ageing) without a quota entry (the quota always admits, whatever
/// runs), with no running task it could preempt even hypothetically (Session::may_yield_any;
/// a later start is checked by dormant_victim). O(options), plus O(classes x log quota
/// entries) when the quota book has entries; may_yield_any once per priority and state
/// (Core::dormant_yield_: a pay-as-you-go task's answer depends on nothing else; a spot task
/// preempts nothing).
inline bool dormant_eligible(Session& S, const TaskSpec& s) {
  if (s.resource_type != ResourceType::pay_as_you_go && s.resource_type != ResourceType::spot) return false;
  for (const auto& o : s.options)
    if (o.head.num_gpu != 0 || o.worker.num_gpu != 0) return false;
  auto& st = S.st;
  if (!st.quotas_.entries().empty())
    for (ResourceType cls : Session::classes(s))
      if (st.quotas_.find(Session::quota_key(s, cls))) return false;
  if (s.resource_type == ResourceType::spot) return true;
  if (st.dormant_yield_state_ != st.state_epoch_) {
    st.dormant_yield_.fill(-1);
    st.dormant_yield_state_ = st.state_epoch_;
  }
  std::int8_t& m = st.dormant_yield_[Session::Core::priority_slot(s.priority)];
  if (m < 0) m = S.may_yield_any(s, true) ? 1 : 0;
  return m == 0;
}

/// Could a task started on capacity `c` with spec `s` be a hypothetical victim of a dormant
/// task (Session::victim_kind, every switch on)? Spot capacity always; idle capacity, or
/// pay-as-you-go / reserved without guarantee, below the highest dormant priority.
inline bool dormant_victim(const Session& S, ResourceType c, const TaskSpec& s) {
  if (c == ResourceType::spot) return true;
  if (c != ResourceType::idle && s.guarantee) return false;
  return s.priority < S.st.dormant_max_priority_;
}

/// A full pass by request class (SchedulerOptions::request_classes, Core::class_passes):
/// the same trials, in the same order, as allocate's walk of the whole queue, without visiting
/// the tasks it would skip. That walk tries each task in queue order unless it is known to fail
/// (its failure memo, or an equal signature failed earlier in the pass), so within one class it
/// tries members in queue order until the first failure and skips every member behind it. Here
/// each class with members puts its first member in a heap ordered by queue key; the smallest
/// is tried; a start puts the class's next member in, a failure (or a first member known to
/// fail) retires the class for the pass. O((classes + starts) log classes) per pass instead of
/// O(waiting tasks). Every waiting task counts as visited (Core::visited_all_), as in the walk.
/// The failure memo of the members behind a failure is the class's (RequestClassIndex::failed),
/// set when the pass ends, except behind a task started later in the pass that they could
/// preempt (then as the walk would set it, member by member). A pass that ends by a preemption
/// sets none: the victims' release moves the capacity epoch on.
///
/// Backfill (the first pass of a schedule() call): the first task that fails is the head, as in
/// the walk. When the walk would compute the head's reservation (the first later task that
/// might start) and it is unknown (kTimeNever: no running task has a known expected end),
/// nothing behind the head is held (may_jump lets every start jump a head without a
/// reservation), so the rest of the pass is the greedy one; the head's reservation is kept
/// across starts as the walk keeps it. With a known reservation, returns nullopt before
/// anything is held or started behind the head: the caller then walks the queue from its front
/// (the tasks that started are gone, the ones that failed fail again: the same pass).
inline std::optional<bool> allocate_by_class(Session& S, ScheduleResult& out) {
  auto& st = S.st;
  const Time now = S.now;
  const bool backfill = st.options_.queueing == Queueing::backfill;
  st.dormant_cap_ = ~std::uint64_t{0};  // (every waiting task is visited: no dormant task)
  if (st.quotas_.entries().size() != st.classes_.quota_entries) st.rebuild_classes();
  const bool visited_all_before = st.visited_all_;
  st.fresh_.clear();
  st.strict_tail_.reset();
  st.bf_chainable_ = false;
  st.visited_all_ = true;
  auto& heap = st.class_heap_;
  heap.clear();
  // Classes retired by a failure: (class, the failed member, starts of the call before it).
  auto& retired = st.class_retired_;
  retired.clear();
  // Backfill: the head (the first task that failed) and its reservation once computed.
  std::optional<TaskId> head;
  Time head_reservation = kTimeNever;
  bool head_reservation_known = false;
  bool chainable = true;  // no start behind the head (Core::bf_chainable_)
  auto later = [](const auto& a, const auto& b) { return *b.first < *a.first; };  // min-heap by queue key
  for (std::uint32_t c : st.classes_.live) heap.emplace_back(&*st.classes_.classes[c].members.begin(), c);
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const TaskId t = heap.back().first->id;
    const std::uint32_t c = heap.back().second;
    heap.pop_back();
    auto& e = st.tasks_[t.index()];
    e.hold = Session::Entry::Hold::none;
    e.failed_pass = 0;
    std::optional<Placement> p;
    std::vector<Preemption> victims;
    std::optional<Transaction> tx;
    if (st.failed_epoch_of(e) != st.capacity_epoch_) {  // (no ageing task waits: Core::class_passes)
      if (head && !head_reservation_known && might_start(S, t)) {  // (as the walk: backfill only has a head)
        head_reservation = reservation(S, *head, now);
        head_reservation_known = true;
        if (head_reservation != kTimeNever) {  // holds may follow: the walk's pass
          st.visited_all_ = visited_all_before;
          return std::nullopt;
        }
      }
      tx.emplace(st.cluster_, st.quotas_, &st.tx_log_spare_);
      p = S.try_start(*tx, t, now);
      if (!p && S.may_preempt(t)) p = preempt(S, *tx, t, now, victims);
    }
    // (backfill: a start behind the head jumps it, may_jump's answer without a reservation)
    if (!p) {
      if (backfill && !head) head = t;
      // The class is done for this pass; what allocate does for each member it skips.
      if (fails_with_fresh_victims(S, t)) {
        st.retry_all_next_ = true;
      } else {
        e.failed_epoch = st.capacity_epoch_;
        e.failed_pass = st.pass_;
        retired.push_back({c, t, out.started.size()});
      }
      continue;
    }
    tx->commit();
    for (const auto& v : victims) {
      S.finish_release(v.victim, now);
      out.preemptions.push_back(v);
    }
    const std::uint64_t state_before = st.state_epoch_;
    S.commit_start(t, std::move(*p), now);  // (leaves its class)
    if (head && head_reservation_known && victims.empty()) keep_head_reservation(S, *head, head_reservation, state_before);
    out.started.push_back(t);
    if (head) chainable = false;
    if (!victims.empty()) return true;  // restart: earlier tasks may use what was freed
    const auto& members = st.classes_.classes[c].members;
    if (!members.empty()) {
      heap.emplace_back(&*members.begin(), c);
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  // The memo of the members the walk would have skipped behind each failure. The walk reaches
  // a member after the tasks that started ahead of it in queue order: once one of them is a
  // victim the member could take (fails_with_fresh_victims, the same for every member), that
  // member and the ones behind it are not memoised and the next pass retries everything.
  for (const auto& [c, failed, k] : retired) {
    const TaskId f = failed;  // (a structured binding is not captured by clang 14's lambdas)
    auto v = std::find_if(out.started.begin() + std::ptrdiff_t(k), out.started.end(),
                          [&](TaskId x) { return S.may_yield_any(S.spec(f), false) && S.preemption_kind(f, x, false).has_value(); });
    if (v == out.started.end()) {
      st.classes_.failed(c, st.capacity_epoch_, st.pass_);
      continue;
    }
    const Session::Core::QueueKey from = st.key(*v);
    for (const auto& m : st.classes_.classes[c].members) {
      if (from < m) {
        st.retry_all_next_ = true;
        break;
      }
      st.tasks_[m.id.index()].failed_epoch = st.capacity_epoch_;
      st.tasks_[m.id.index()].failed_pass = st.pass_;
    }
  }
  // Every waiting task was visited and none held: earlier holds are stale (Core::drop_stale_hold).
  st.class_pass_no_ = st.pass_;
  st.class_pass_joins_ = st.classes_.joins;
  if (backfill) {  // what the walk leaves for a fresh-only pass (backfill_from_fresh)
    st.bf_chainable_ = chainable && st.started_now_.empty();
    st.bf_head_ = head;
    st.bf_state_epoch_ = st.state_epoch_;
    st.bf_queue_epoch_ = st.queue_epoch_;
    st.bf_anchor_ = now;
  }
  st.last_pass_epoch_ = st.retry_all_next_ ? ~std::uint64_t{0} : st.capacity_epoch_;
  st.retry_all_next_ = false;
  return false;
}

/// One pass at S.now (see the file's contract). `first`: the first pass of this schedule()
/// call (only then may a greedy pass visit just the tasks enqueued since the last pass).
/// Returns true when it preempted (and stopped right after that start).
inline bool allocate(Session& S, ScheduleResult& out, bool first) {
  using State = Session::State;
  auto& st = S.st;
  const Time now = S.now;
  const Queueing queueing = st.options_.queueing;
  // The pass's order and failed signatures live in scratch vectors of the state (no
  // allocation per pass once they have grown); handed back however the pass ends.
  std::vector<TaskId> order = std::move(st.pass_order_);
  detail::SignatureMap<char> failed_signatures = std::move(st.pass_failed_signatures_);  // signature -> dormant_eligible answer (1 / 0)
  std::vector<TaskId> fresh = std::move(st.pass_fresh_);
  // Signatures held without a trial (held_without_trial) since the last start of this pass:
  // the test depends on the request (its signature), the head, its reservation and the state,
  // and on the task itself only through whether it ends by the reservation (checked per task).
  detail::SignatureMap<char> held_signatures = std::move(st.pass_held_signatures_);  // a set
  order.clear();
  failed_signatures.clear();
  fresh.clear();
  held_signatures.clear();
  struct HandBack {
    Session::Core& st;
    std::vector<TaskId>& order;
    detail::SignatureMap<char>& sigs;
    std::vector<TaskId>& fresh;
    detail::SignatureMap<char>& held;
    ~HandBack() {
      st.pass_order_ = std::move(order);
      st.pass_failed_signatures_ = std::move(sigs);
      st.pass_fresh_ = std::move(fresh);
      st.pass_held_signatures_ = std::move(held);
    }
  } hand_back{st, order, failed_signatures, fresh, held_signatures};
  // Fresh-only passes visit just the tasks enqueued since the last pass: greedy when nothing
  // was released since (below), backfill when a full pass would treat every other waiting task
  // as the last pass did (backfill_from_fresh), behind that pass's head. A start changes what
  // the skipped tasks would be diagnosed with (quota, free capacity), so a backfill one turns
  // into a full pass before its first start (full_pass below).
  bool bf_fresh = first && queueing == Queueing::backfill && backfill_from_fresh(S, order);
  bool from_fresh = bf_fresh || (first && queueing == Queueing::greedy && st.capacity_epoch_ == st.last_pass_epoch_);
  if (queueing == Queueing::greedy && !from_fresh && st.class_passes()) return *allocate_by_class(S, out);
  // Backfill by class while no running task has a known expected end (the head's reservation
  // is then unknown unless a task started in the pass brings one: allocate_by_class falls back).
  if (queueing == Queueing::backfill && first && !bf_fresh && st.class_passes() && !st.known_running_end())
    if (auto r = allocate_by_class(S, out)) return *r;
  if (queueing == Queueing::backfill && st.visited_all_) {
    // An earlier call at this instant passed by class (every waiting task visited): list them
    // now, so that this pass's holds are seen (Scheduler::take_visited_by_class).
    st.visited_all_ = false;
    for (const auto& k : st.queue_) st.visited_.push_back(k.id);
  }
  const std::size_t visited_before = st.visited_.size();
  // Dormant failures (Core::dormant_gen_): a walk of the queue skips the dormant tasks, and the
  // tasks that fail in any backfill pass may go dormant.
  bool dormant = queueing == Queueing::backfill && dormant_on(S);
  if (dormant && !st.dormant_valid()) st.dormant_restart();
  if (dormant && !from_fresh) st.dormant_walk_pass_ = st.pass_;
  st.bf_chainable_ = false;  // set again when this pass ends normally
  // A fresh-only pass may follow this one only if every task it held or failed saw the state
  // the pass ends with (no start after the head's failure) and no hold followed a preemption trial.
  bool chainable = true;
  bool relisted = false;  // a greedy fresh-only pass listed the skipped tasks as visited
  if (from_fresh && !bf_fresh) {
    // Nothing was released since the last pass: only tasks enqueued since then, and tasks
    // whose idle fragments age with time, can start now (everything else failed on at
    // least this much capacity).
    order.assign(st.fresh_.begin(), st.fresh_.end());
    for (TaskId t : st.aging_)
      if (st.tasks_[t.index()].state == State::waiting) order.push_back(t);
    std::sort(order.begin(), order.end(), [&st](TaskId a, TaskId b) { return st.tied_key(a) < st.tied_key(b); });
    order.erase(std::unique(order.begin(), order.end()), order.end());
  }
  // Strict queueing with fast paths: every waiting task queued after st.strict_tail_ (the
  // head an earlier pass stopped at) has been held by that pass and not visited since, except
  // those enqueued since the last pass (`fresh`). Once this pass is blocked past that key, only
  // those are visited: the others stay held (their wait code stays blocked_by_queue).
  const bool strict_tail = st.options_.fast_paths && queueing == Queueing::strict;
  if (!strict_tail) st.strict_tail_.reset();
  if (strict_tail) fresh.assign(st.fresh_.begin(), st.fresh_.end());
  st.fresh_.clear();
  // The queue is walked in place, through its contiguous copy (Core::queue_array_), unless the
  // pass visits only `order`: a task that starts leaves a hole behind the cursor, and nothing
  // enters the queue during a pass (no slot moves). The copy is brought in step (QueueArray::
  // refresh) when a walk from the front begins, not for a fresh-only pass that never reads it.
  std::size_t cursor = 0;  // the next slot of queue_array_
  std::size_t next_in_order = 0;
  auto next = [&](TaskId& t) {
    if (from_fresh) {
      if (next_in_order == order.size()) return false;
      t = order[next_in_order++];
      return true;
    }
    if (cursor == 0) st.queue_array_.refresh(st.queue_);
    const std::vector<TaskId>& slots = st.queue_array_.slots();
    while (cursor < slots.size()) {
      const TaskId id = slots[cursor++];
      if (id.valid()) {
        t = id;
        return true;
      }
    }
    return false;
  };
  bool blocked = false;
  std::optional<TaskId> head;     // strict: the blocking task; backfill: first blocked task
  if (bf_fresh) head = st.bf_head_;
  Time head_reservation = kTimeNever;
  bool head_reservation_known = false;
  // Turns a backfill fresh-only pass into a full pass from the queue's front (nothing was
  // committed: the fresh tasks visited so far are visited again; those that failed fail again).
  std::uint64_t last_dormant_sig = 0;  // the signature the last dormant task skipped inserted (0: none)
  // The last signature found in failed_signatures and its value (0: none): a run of waiting
  // tasks with one signature looks it up once (a value, once inserted, stays while the map is
  // not cleared).
  std::uint64_t last_failed_sig = 0;
  char last_failed_value = 0;
  auto full_pass = [&]() {
    bf_fresh = from_fresh = false;
    last_dormant_sig = 0;
    last_failed_sig = 0;
    chainable = true;
    cursor = 0;
    head.reset();
    head_reservation = kTimeNever;
    head_reservation_known = false;
    failed_signatures.clear();
    held_signatures.clear();
    st.visited_.resize(visited_before);
    if (dormant) {
      // A new generation: the tasks that went dormant in the fresh-only part were unlisted
      // above and must be visited again (and a class pass may have started tasks).
      st.dormant_restart();
      st.dormant_walk_pass_ = st.pass_;
    }
  };
  // A queue hold of kind `k` behind the head on waiting task `x` (visited, not tried further).
  auto hold = [&](TaskId x, Session::Entry::Hold k) {
    auto& ex = st.tasks_[x.index()];
    ex.hold = k;
    ex.hold_head = *head;
    ex.hold_stamp = {st.pass_, st.capacity_epoch_, now};
    ex.failed_pass = 0;
    // Listed for its observer unless the last listing reported it held already (Entry::reported_held).
    if (!(st.options_.fast_paths && st.reported_held_now(ex))) st.visited_.push_back(x);
  };
  // Task `t` (entry `e`) cannot start now: tried and failed, or known to fail. `sig`: its
  // signature, to remember as failed in this pass (0: not comparable, or remembered already).
  // `eligible`: dormant_eligible's answer for its signature when the pass knows it (the value
  // failed_signatures keeps: every field that answer reads is part of the signature, and a
  // start that changes it for the signature ends the dormancy), -1 otherwise.
  // (inlined at each call: the walk's most frequent step after a release is a failure by
  // signature, sig 0 and eligible known there)
  auto failed = [&](TaskId t, Session::Entry& e, std::uint64_t sig, int eligible) __attribute__((always_inline)) {
    bool listed = true;
    // The failure memo (failed_epoch, and the fresh-only greedy pass) assumes that with no
    // release nothing more can start. Not so when a task started at this instant (in this
    // call or an earlier one) is a victim t could take but may not (no zero-length
    // attempts): at the next instant it may.
    // (no scan when no running task may yield to t at all: Session::may_yield_any; none
    // may when its signature went dormant in this walk and no start since may be a victim of
    // a dormant task: `eligible` is 1 and dormancy still on)
    bool fresh_victims = !st.started_now_.empty() && !(dormant && eligible == 1) && S.may_yield_any(e.spec, false) &&
                         std::any_of(st.started_now_.begin(), st.started_now_.end(),
                                     [&](TaskId v) { return S.preemption_kind(t, v, false).has_value(); });
    if (fresh_victims) {
      st.retry_all_next_ = true;
    } else {
      e.failed_epoch = st.capacity_epoch_;
      e.failed_pass = st.pass_;
      const bool asked = dormant && eligible < 0;
      if (asked) eligible = dormant_eligible(S, e.spec) ? 1 : 0;
      if (dormant && eligible == 1) {
        e.dormant_gen = st.dormant_gen_;
        // (an answer known from failed_signatures came with its priority counted: the task
        // that inserted it went dormant in this generation, or was dormant in it already, and
        // the priority is part of the signature)
        if (asked) st.dormant_max_priority_ = std::max(st.dormant_max_priority_, e.spec.priority);
        // Its observer's code is what a diagnosis gives now (Core::stable_code): not listed.
        // A later start it could preempt lists it with the walk's dormant tasks (below).
        listed = !st.stable_code(e);
      }
    }
    if (listed) st.visited_.push_back(t);
    if (sig != 0) failed_signatures.insert(sig, char(eligible == 1));
    if (queueing == Queueing::strict) {
      blocked = true;
      head = t;
    } else if (queueing == Queueing::backfill && !head) {
      head = t;
      if (!st.options_.fast_paths) {
        head_reservation = reservation(S, *head, now);
        head_reservation_known = true;
      }
    }
  };
  // Session::signature without its scan of node policies when there are none (the same value:
  // Core::request_hash of the task's entry).
  const bool plain_signature = st.memo_by_signature_ && st.policies_.empty();
  auto signature_of = [&](TaskId t, Session::Entry& e) __attribute__((always_inline)) -> std::uint64_t {
    return plain_signature ? st.request_hash(e) : S.signature(t, now);
  };
  for (TaskId t; next(t);) {
    auto& e = st.tasks_[t.index()];
    if (from_fresh && e.state != State::waiting) continue;  // (every task in the queue waits)
    if (blocked) {
      const auto from = st.tied_key(t);  // (strict walks the queue: t's queue key)
      if (strict_tail && st.strict_tail_ && st.strict_tail_->tied() < from) {
        for (TaskId f : fresh)
          if (st.tasks_[f.index()].state == State::waiting && !(st.tied_key(f) < from)) hold(f, Session::Entry::Hold::strict);
        break;
      }
      hold(t, Session::Entry::Hold::strict);
      continue;
    }
    if (dormant && !from_fresh && st.dormant(e)) {
      // Dormant: what the visit would do (failed() of a task known to fail), without the
      // listing; failed_pass_of counts this walk. (A run of dormant tasks with one signature,
      // e.g. a user's identical jobs, inserts it once: a second insert changes nothing.)
      if (!head) head = t;
      if (const std::uint64_t sig = signature_of(t, e); sig != 0 && sig != last_dormant_sig) {
        failed_signatures.insert(sig, 1);
        last_dormant_sig = sig;
      }
      continue;
    }
    e.hold = Session::Entry::Hold::none;  // this pass decides afresh (no stale queue hold)
    e.failed_pass = 0;
    std::uint64_t sig = signature_of(t, e);
    // (the signature first: most failures of a walk after a release are by signature, and it
    // spares the failure memo's look-up, its request class included)
    if (sig != 0 && sig == last_failed_sig) {
      failed(t, e, 0, last_failed_value);  // (a signature already failed is not inserted again)
      continue;
    }
    if (const char* sig_entry = sig != 0 ? failed_signatures.find(sig) : nullptr) {
      last_failed_sig = sig;
      last_failed_value = *sig_entry;
      failed(t, e, 0, *sig_entry);
      continue;
    }
    if (st.failed_epoch_of(e) == st.capacity_epoch_ && !st.ages(e.spec)) {  // known to fail
      failed(t, e, sig, -1);
      continue;
    }
    std::optional<Placement> p;
    std::vector<Preemption> victims;
    std::optional<Transaction> tx;
    {
      // The head's reservation, computed (fast paths) only once a later task might start: no
      // task starts between the head's failure and then, so the state is the same as eager.
      if (head && !head_reservation_known && queueing == Queueing::backfill && might_start(S, t)) {
        head_reservation = reservation(S, *head, now);
        head_reservation_known = true;
      }
      if (head && head_reservation_known && queueing == Queueing::backfill) {
        // It would place and may not jump the head whatever nodes it took: the same hold as
        // a trial followed by may_jump, without the trial.
        bool held = sig != 0 && held_signatures.contains(sig) && !ends_by(S, t, head_reservation);
        if (!held && held_without_trial(S, t, *head, head_reservation)) {
          held = true;
          if (sig != 0) held_signatures.insert(sig, 1);
        }
        if (held) {
          hold(t, Session::Entry::Hold::backfill);
          continue;
        }
      }
      tx.emplace(st.cluster_, st.quotas_, &st.tx_log_spare_);
      p = S.try_start(*tx, t, now);
      if (!p && S.may_preempt(t)) p = preempt(S, *tx, t, now, victims);
    }
    if (p && head && queueing == Queueing::backfill && !may_jump(S, *tx, *head, head_reservation, {}, *p, victims)) {
      // Starting t would delay the head's reserved start.
      if (!victims.empty()) chainable = false;
      hold(t, Session::Entry::Hold::backfill);
      continue;  // tx rolls back
    }
    if (!p) {
      failed(t, e, sig, -1);
      continue;
    }
    if (bf_fresh && st.bf_head_) {
      if (st.class_passes() && !st.known_running_end()) {
        // The full pass by class (nothing was held: the head has no reservation; nothing was
        // committed). On its fallback, the walk from the front below.
        tx.reset();  // (rolls back)
        st.visited_.resize(visited_before);
        if (auto r = allocate_by_class(S, out)) return *r;
      }
      full_pass();
      continue;  // tx rolls back
    }
    if (from_fresh && !bf_fresh && !relisted) {
      // A greedy fresh-only pass skipped the tasks that failed before. They still cannot start
      // (nothing was released since), but a start changes what they are diagnosed with (quota,
      // free capacity): list them as visited, as a full pass would, so that their wait status
      // is computed anew (Scheduler::take_visited_waiting).
      relisted = true;
      if (st.classes_on_) st.visited_all_ = true;  // (listed when taken: Scheduler::take_visited_waiting)
      else
        for (const auto& k : st.queue_) st.visited_.push_back(k.id);
    }
    tx->commit();
    for (const auto& v : victims) {
      S.finish_release(v.victim, now);
      out.preemptions.push_back(v);
    }
    const std::uint64_t state_before = st.state_epoch_;
    S.commit_start(t, std::move(*p), now);
    if (dormant) {
      // The dormant tasks stay so unless the start may be a victim of theirs (then the ones
      // skipped so far are listed as the walk would have, and none is dormant any more).
      const Session::Entry& se = st.tasks_[t.index()];
      if (st.dormant_cap_ == st.capacity_epoch_ && st.dormant_state_ == state_before &&
          !dormant_victim(S, st.placement(se).capacity, se.spec)) {
        st.dormant_state_ = st.state_epoch_;
      } else {
        // (the walk's tasks so far that are dormant: skipped, or gone dormant in this walk and
        // listed already; the listing drops repeats. A fresh-only pass skipped none.)
        const std::vector<TaskId>& slots = st.queue_array_.slots();
        for (std::size_t i = 0; !from_fresh && i < cursor; ++i) {
          const TaskId id = slots[i];
          if (!id.valid()) continue;  // (a task started in this walk)
          auto& d = st.tasks_[id.index()];
          if (d.dormant_gen != st.dormant_gen_ || d.failed_epoch != st.dormant_cap_) continue;
          st.visited_.push_back(id);
          d.failed_pass = st.pass_;
        }
        st.dormant_cap_ = ~std::uint64_t{0};
        dormant = false;
      }
    }
    if (head && head_reservation_known && queueing == Queueing::backfill && victims.empty())
      keep_head_reservation(S, *head, head_reservation, state_before);
    out.started.push_back(t);
    if (head) chainable = false;
    held_signatures.clear();
    if (!victims.empty()) {
      // Restart: earlier tasks may use what was freed. The next pass has not seen the tasks
      // enqueued before this one (strict_tail_ still describes the earlier pass).
      if (strict_tail) st.fresh_.insert(st.fresh_.end(), fresh.begin(), fresh.end());
      return true;
    }
  }
  if (strict_tail) {
    if (blocked) {
      st.strict_tail_ = st.key(*head);
      st.strict_tail_head_ = *head;
      st.strict_tail_stamp_ = {st.pass_, st.capacity_epoch_, now};
    } else {
      st.strict_tail_.reset();
    }
  }
  if (queueing == Queueing::backfill && st.options_.fast_paths) {
    st.bf_chainable_ = chainable && st.started_now_.empty();
    st.bf_head_ = head;
    st.bf_state_epoch_ = st.state_epoch_;
    st.bf_queue_epoch_ = st.queue_epoch_;
    if (!bf_fresh) st.bf_anchor_ = now;
  }
  st.last_pass_epoch_ = st.retry_all_next_ ? ~std::uint64_t{0} : st.capacity_epoch_;
  st.retry_all_next_ = false;
  return false;
}

}  // namespace libsched::actions
