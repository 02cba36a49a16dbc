// Action `backfill` (EASY backfilling): the queue head's reservation, and who may jump it.
//
// Under `queueing: backfill` the first waiting task of a pass that cannot start is the head.
// Its reservation (EASY's shadow time) is the earliest time >= now at which its whole gang
// could start if running tasks end at their expected ends (start + runtime estimate) and
// nothing else starts. A later task that can start now may jump the head only if starting it
// does not move that reservation later (may_jump).
//
// Contract. reservation() changes nothing: every probe runs inside the caller's transaction
// and is rolled back before it returns (tx is left as it was found). may_jump() likewise.
// Neither decides a start: allocate (actions/allocate.hpp) does, and explain's replay of a
// pass (explain.hpp) asks the same two functions.
#pragma once

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <set>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "libsched/session.hpp"

namespace libsched::actions {

/// Expected end of running task `ri`: start + its runtime estimate (never if unknown; an
/// overdue task is expected to end now).
inline Time expected_end(const Session& S, const Session::Core::RunInfo& ri, Time now) {
  const Time estimate = S.st.tasks_[ri.id.index()].spec.runtime_estimate;
  if (estimate < 0) return kTimeNever;
  return std::max(now, ri.start + estimate);
}

/// Adds what placement `p` holds on up, undrained nodes to `delta` (per pool x
/// Cluster::kSlotsPerPool + model + 1, the layout of Cluster::free_sum and Session::may_fit):
/// the capacity its release would add to the free sums. `on_replica(node, replica)` is called
/// for each replica so added. `Sign` -1 takes it back out (actions::preempt_detail::SlotProbe).
template <int Sign = 1, class OnReplica>
inline void add_released(const Cluster& c, const Placement& p, std::vector<Cluster::FreeSum>& delta, OnReplica&& on_replica) {
  static_assert(Sign == 1 || Sign == -1);
  for (const auto& a : p.replicas) {
    const Node& n = c.nodes()[a.node.index()];
    if (!n.up || n.drained) continue;
    auto& f = delta[Cluster::slot_of(n)];
    f.cpu_milli += Sign * a.cpu_milli;
    f.mem_mib += Sign * a.mem_mib;
    f.gpu_milli += Sign * a.total_gpu_milli();
    f.full_free_gpus += Sign * std::int64_t(gpu_count(a.gpu_mask));
    on_replica(n, a);
  }
}
template <int Sign = 1>
inline void add_released(const Cluster& c, const Placement& p, std::vector<Cluster::FreeSum>& delta) {
  add_released<Sign>(c, p, delta, [](const Node&, const ReplicaAllocation&) {});
}

/// The ReleaseSum (Core::ReleaseSum) of `p` when it is the placement a running task holds and
/// its replicas are summed in one slot; null otherwise (add_released then goes replica by
/// replica). Computed when stale: O(replicas), then O(1) while valid.
inline const Session::Core::ReleaseSum* release_sum(Session::Core& st, const Placement& p) {
  if (!p.task.valid() || p.task.index() >= st.tasks_.size()) return nullptr;
  const Session::Entry& e = st.tasks_[p.task.index()];
  // (RunInfo::placement: a vector read, where Core::placement indexes a deque)
  if (e.state != Session::State::running || e.placement_slot >= st.release_sums_.size() ||
      st.run_info_[st.run_pos_[p.task.index()]].placement != &p)
    return nullptr;
  auto& rs = st.release_sums_[e.placement_slot];
  const Cluster& c = st.cluster_;
  if (rs.version != c.schedulable_version()) {
    rs = Session::Core::ReleaseSum{};
    rs.version = c.schedulable_version();
    rs.one_slot = true;
    for (const auto& a : p.replicas) {
      const Node& n = c.nodes()[a.node.index()];
      if (!n.up || n.drained) continue;
      const std::size_t slot = Cluster::slot_of(n);
      if (rs.count == 0) {
        rs.slot = slot;
        rs.pool = n.pool;
        rs.cpu_milli = a.cpu_milli;
        rs.mem_mib = a.mem_mib;
      } else if (slot != rs.slot || a.cpu_milli != rs.cpu_milli || a.mem_mib != rs.mem_mib) {
        rs.one_slot = false;
      }
      if (a.gpu_mask != 0 || a.gpu_milli != 0) rs.one_slot = false;
      rs.sum.cpu_milli += a.cpu_milli;
      rs.sum.mem_mib += a.mem_mib;
      ++rs.count;
    }
  }
  return rs.one_slot ? &rs : nullptr;
}

/// add_released(c, p, delta) for a placement `p` on the committed state, by its ReleaseSum when
/// it has one (the same sums: integer additions in another order), and with the slot bound of
/// the reservation walk when `bound_shape` is set: `bound` gains Session::slots_of_release for
/// each released replica on a node whose pool admits `hs` on class `cls`.
inline void add_released_held(Session::Core& st, const Placement& p, std::vector<Cluster::FreeSum>& delta,
                              const ReplicaShape* bound_shape = nullptr, const TaskSpec* hs = nullptr,
                              ResourceType cls = ResourceType::reserved, std::int64_t* bound = nullptr) {
  if (const auto* rs = st.options_.fast_paths ? release_sum(st, p) : nullptr) {
    if (rs->count == 0) return;
    delta[rs->slot] += rs->sum;
    if (bound_shape && Session::pool_ok(st, *hs, cls, rs->pool)) {
      ReplicaAllocation a;
      a.cpu_milli = rs->cpu_milli;
      a.mem_mib = rs->mem_mib;
      *bound += rs->count * Session::slots_of_release(*bound_shape, a);
    }
    return;
  }
  if (!bound_shape) return add_released(st.cluster_, p, delta);
  add_released(st.cluster_, p, delta, [&](const Node& n, const ReplicaAllocation& a) {
    if (Session::pool_ok(st, *hs, cls, n)) *bound += Session::slots_of_release(*bound_shape, a);
  });
}

/// The head's shape for the slot bound counted along a reservation walk: a task of one
/// capacity class (not idle) and one option whose replica takes vCPU and no GPU, with no node
/// policy in force (so a node is eligible for it exactly when Session::pool_ok admits its
/// pool). Null otherwise.
inline const ReplicaShape* slot_bound_shape(const Session& S, const TaskSpec& s) {
  if (!S.st.policies_.empty() || s.options.size() != 1) return nullptr;
  const Session::ClassList cls = Session::classes(s);
  const ReplicaShape& r = s.options[0].head;
  if (cls.size() != 1 || *cls.begin() == ResourceType::idle || r.num_gpu != 0 || r.cpu_milli <= 0) return nullptr;
  return &r;
}

/// Session::fits_by_slots_at_least for a head with slot_bound_shape `r` (its one class
/// `cls`), whose `bound` (the sum of Session::slots_of_release over the released replicas on up,
/// undrained nodes that pool_ok admits, counted as the walk sums them) was kept along the walk:
/// true only when Session::fits_by_slots would be true. O(nodes with vCPU free).
inline bool slot_bound_fits(const Session& S, TaskId head, ResourceType cls, const ReplicaShape& r, std::int64_t bound,
                            const std::vector<Cluster::FreeSum>& delta) {
  const TaskSpec& s = S.spec(head);
  if (!S.admits(Session::quota_key(s, cls), s, head, s.demand(0)) || !S.may_fit(s, 0, cls, &delta)) return false;
  const std::int64_t need = s.replicas();
  const Cluster& c = S.st.cluster_;
  return S.add_free_slots(r, bound, need, [&](NodeId id) { return Session::pool_ok(S.st, s, cls, c.nodes()[id.index()]); }) >= need;
}

/// Session::may_fit for some (class, option) of `s`, counting `delta` as free on top.
inline bool may_fit_any(const Session& S, const TaskSpec& s, const std::vector<Cluster::FreeSum>& delta) {
  for (ResourceType cls : Session::classes(s))
    for (std::size_t i = 0; i < s.options.size(); ++i)
      if (S.may_fit(s, i, cls, &delta)) return true;
  return false;
}

/// Would task `t`, started now, be expected to end by `by` (a known runtime estimate)?
inline bool ends_by(const Session& S, TaskId t, Time by) {
  const TaskSpec& s = S.spec(t);
  return s.runtime_estimate >= 0 && S.now + s.runtime_estimate <= by;
}

/// What the running tasks expected to end by `by` release, summed per (pool, model)
/// (add_released's layout), on the committed state. Memoised per (state and capacity
/// epochs, now, by): every candidate of a pass asks with the head's reservation.
inline const std::vector<Cluster::FreeSum>& released_by(Session& S, Time by) {
  auto& st = S.st;
  const Cluster& c = st.cluster_;
  auto stamp = std::make_tuple(st.state_epoch_, st.capacity_epoch_, S.now, by);
  const std::size_t size = c.pools().size() * Cluster::kSlotsPerPool;
  if (st.released_by_stamp_ != stamp || st.released_by_.size() != size) {
    st.released_by_.assign(size, Cluster::FreeSum{});
    if (st.keep_ends_) {  // the prefix of the running tasks in expected-end order (none when by < now)
      if (by >= S.now)
        for (auto it = st.expected_ends_.begin(); it != st.expected_ends_.end() && std::get<0>(*it) <= by; ++it)
          add_released_held(st, st.placement(st.tasks_[std::get<2>(*it).index()]), st.released_by_);
    } else {
      for (const auto& ri : st.run_info_)
        if (expected_end(S, ri, S.now) <= by) add_released(c, st.placement(st.tasks_[ri.id.index()]), st.released_by_);
    }
    st.released_by_stamp_ = stamp;
  }
  return st.released_by_;
}

/// Would starting candidate `t` now, whatever nodes it took, leave the head's gang no room at
/// its reservation, where `released` (released_by) is what the running tasks expected to end
/// by then release? True when, for every (class, option) of the head, every slot (pool,
/// model) `t` may use is one the head sums (Session::for_each_slot; the head's gang checked
/// against one slot set) and the head's gang exceeds, in some dimension, what those slots hold
/// then (free now + `released`) less the least `t` takes (the componentwise minimum of its
/// options' gang demands). Then Session::may_fit fails for the head at its reservation with
/// `t` running, and at every earlier time of its walk (free capacity only grows), so its
/// reservation with `t` would be later: `t` may not jump. For a `t` not expected to end by the
/// reservation (its holdings stay). False when unsure.
inline bool starves_head(const Session& S, TaskId t, TaskId head, const std::vector<Cluster::FreeSum>& released) {
  const TaskSpec& ts = S.spec(t);
  const TaskSpec& hs = S.spec(head);
  const Cluster& c = S.st.cluster_;
  // The slots t may take from (any class, option, replica), sorted, and the least it takes.
  std::vector<std::size_t>& mine = S.st.slots_a_;
  std::vector<std::size_t>& theirs = S.st.slots_b_;
  mine.clear();
  auto add_mine = [&mine](std::size_t i) { mine.push_back(i); };
  Resources least = ts.demand(0);
  std::int64_t least_whole = Session::whole_gpus(ts, 0);
  for (std::size_t i = 0; i < ts.options.size(); ++i) {
    const Resources d = ts.demand(i);
    least.cpu_milli = std::min(least.cpu_milli, d.cpu_milli);
    least.mem_mib = std::min(least.mem_mib, d.mem_mib);
    least.gpu_milli = std::min(least.gpu_milli, d.gpu_milli);
    least_whole = std::min(least_whole, Session::whole_gpus(ts, i));
    for (ResourceType cls : Session::classes(ts)) {
      S.for_each_slot(ts, cls, ts.options[i].head, add_mine);
      if (ts.workers > 0) S.for_each_slot(ts, cls, ts.options[i].worker, add_mine);
    }
  }
  std::sort(mine.begin(), mine.end());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  for (ResourceType cls : Session::classes(hs))
    for (std::size_t i = 0; i < hs.options.size(); ++i) {
      if (!S.one_slot_set(hs.options[i])) return false;
      theirs.clear();
      Cluster::FreeSum sum;
      S.for_each_slot(hs, cls, hs.options[i].head, [&](std::size_t k) {  // ascending
        theirs.push_back(k);
        sum += c.free_sum(k);
        if (k < released.size()) sum += released[k];
      });
      if (!std::includes(theirs.begin(), theirs.end(), mine.begin(), mine.end())) return false;
      const Resources need = hs.demand(i);
      const bool room = need.cpu_milli <= sum.cpu_milli - least.cpu_milli && need.mem_mib <= sum.mem_mib - least.mem_mib &&
                        need.gpu_milli <= sum.gpu_milli - least.gpu_milli &&
                        Session::whole_gpus(hs, i) <= sum.full_free_gpus - least_whole;
      if (room) return false;
    }
  return true;
}

/// Fast paths, before any trial placement of backfill candidate `t`: true when starting `t`
/// now could not keep head's reservation (starves_head: may_jump would say no whatever nodes
/// `t` took) and `t` would place (Session::fits_by_slots, exact for slots_decide tasks), so the
/// candidate can be held without placing it. False when unsure (the caller then tries as
/// usual). Only for a task that preempts nothing when it places (always: preemption is tried
/// only when the plain trial fails) and does not end by the reservation.
inline bool held_without_trial(Session& S, TaskId t, TaskId head, Time head_reservation) {
  if (!S.st.options_.fast_paths || head_reservation == kTimeNever || ends_by(S, t, head_reservation)) return false;
  if (!S.slots_decide(S.spec(t))) return false;
  if (!starves_head(S, t, head, released_by(S, head_reservation))) return false;
  return S.fits_by_slots(t, S.now, S.st.released_, nullptr);
}

/// The reservation of waiting task `head` with the tasks `extras` tentatively placed inside
/// `tx` (a backfill candidate; explain's replay of a pass), each expected to run until now +
/// its estimate.
/// `gone`: tasks already released inside tx (preemption victims of an extra); they are not
/// running any more and must not be released a second time at their expected end.
/// Walks the future in time order: the expected ends of running tasks (releasing them), the
/// creation and expiry of node policies that may apply to the head, and the times at which
/// a node's idle fragment reaches the head's stability threshold (a node whose owners' task
/// is expected to end then starts ageing from that end); the first time the whole gang fits
/// is the answer (kTimeNever when none is known). Leaves tx as it found it.
inline Time reservation(Session& S, Transaction& tx, TaskId head, Time now, std::span<const Placement* const> extras,
                        const std::vector<Preemption>& gone) {
  auto& st = S.st;
  // Memo (fast paths): with no victim and at most one tentative start, the walk depends only
  // on the committed state (stamped by the epochs and now), the head and that task.
  std::pair<std::int32_t, std::int32_t> memo_key{-1, -1};
  if (st.options_.fast_paths && gone.empty() && extras.size() <= 1) {
    auto stamp = std::make_tuple(st.capacity_epoch_, st.state_epoch_, now);
    if (st.reservation_stamp_ != stamp) {
      st.reservation_memo_.clear();
      st.reservation_stamp_ = stamp;
    }
    memo_key = {head.value, extras.empty() ? -1 : extras[0]->task.value};
    if (auto it = st.reservation_memo_.find(memo_key); it != st.reservation_memo_.end()) return it->second;
    // The head alone, computed at an earlier instant t0 (Core::head_reservation_): still the
    // answer R at now < R when nothing changed since (epochs), no node-policy time fell in
    // between and the head does not age into idle fragments. The walk now tries, at each time
    // T < R, the tasks expected to end by T; that same set was tried at t0 (at its latest
    // expected end, or at t0 for tasks overdue then) and the head did not fit, the fit being
    // independent of the time otherwise; at R it is the set that fitted at t0.
    const auto& hr = st.head_reservation_;
    if (extras.empty() && hr.head == head && hr.capacity_epoch == st.capacity_epoch_ && hr.state_epoch == st.state_epoch_ &&
        hr.at <= now && now < hr.valid_until && hr.value > now) {
      st.reservation_memo_.emplace(memo_key, hr.value);
      return hr.value;
    }
  }
  const TaskSpec& hs = S.spec(head);
  // The ends to walk, in time order (ties by task id: releases at one time commute, any order
  // gives the same state to try, so this only fixes the order for reproducibility): the
  // running tasks' expected ends (Core::expected_ends_, kept in that order under backfill
  // queueing; sorted here otherwise), less the victims in `gone`, merged with the tentative
  // starts' (now + estimate). Read one at a time: the walk usually stops long before the last.
  using End = std::pair<Time, const Placement*>;
  std::vector<End> extra_ends;
  for (const Placement* extra : extras) {
    const TaskSpec& xs = S.spec(extra->task);
    extra_ends.emplace_back(xs.runtime_estimate < 0 ? kTimeNever : now + xs.runtime_estimate, extra);
  }
  // (ties by TaskSpec::sequence, then id, as Core::expected_ends_)
  auto end_key = [&S](const End& e) { return std::make_tuple(e.first, S.spec(e.second->task).sequence, e.second->task); };
  std::sort(extra_ends.begin(), extra_ends.end(), [&](const End& a, const End& b) { return end_key(a) < end_key(b); });
  std::set<Session::Core::EndKey> sorted_here;
  if (!st.keep_ends_)
    for (const auto& ri : st.run_info_) sorted_here.emplace(Session::Core::raw_end(S.spec(ri.id), ri.start), ri.sequence, ri.id);
  const auto& running = st.keep_ends_ ? st.expected_ends_ : sorted_here;
  auto run_it = running.begin();
  std::size_t next_extra = 0;
  // The next end (kTimeNever with no placement once no known end is left), consumed.
  auto next_end = [&]() -> End {
    while (run_it != running.end() &&
           std::any_of(gone.begin(), gone.end(), [&](const Preemption& g) { return g.victim == std::get<2>(*run_it); }))
      ++run_it;
    // An overdue task is expected to end now (expected_end); kTimeNever stays kTimeNever.
    const Time run_at = run_it == running.end() ? kTimeNever : std::max(now, std::get<0>(*run_it));
    const bool extra_first = next_extra < extra_ends.size() &&
                             (run_at == kTimeNever ||
                              end_key(extra_ends[next_extra]) < std::make_tuple(run_at, std::get<1>(*run_it), std::get<2>(*run_it)));
    if (extra_first) {
      if (extra_ends[next_extra].first == kTimeNever) return {kTimeNever, nullptr};
      return extra_ends[next_extra++];
    }
    if (run_at == kTimeNever) return {kTimeNever, nullptr};
    const TaskId t = std::get<2>(*run_it++);
    return {run_at, &st.placement(st.tasks_[t.index()])};
  };
  // The other times to try (node policies, idle ageing), earliest first (a min-heap; a time
  // pushed twice is tried once).
  std::vector<Time> times;
  auto push_time = [&times](Time x) {
    times.push_back(x);
    std::push_heap(times.begin(), times.end(), std::greater<>{});
  };
  for (const auto& p : st.policies_) {
    if (!(p.created < p.expire && p.applies(hs, p.created))) continue;  // never constrains the head
    if (p.created > now) push_time(p.created);
    if (p.expire > now && p.expire != kTimeNever) push_time(p.expire);
  }
  const Time th = st.stability_threshold(hs);
  struct OverrideGuard {
    bool& flag;
    ~OverrideGuard() { flag = false; }
  } guard{st.owner_override_};
  if (th > 0) {
    st.owner_at_.resize(st.cluster_.size());
    for (std::size_t n = 0; n < st.cluster_.size(); ++n) st.owner_at_[n] = st.cluster_.nodes()[n].last_owner_change;
    for (const Placement* extra : extras)
      if (extra->capacity != ResourceType::idle)
        for (const auto& a : extra->replicas) st.owner_at_[a.node.index()] = now;
    for (std::size_t n = 0; n < st.cluster_.size(); ++n)
      if (st.cluster_.nodes()[n].up && st.owner_at_[n] + th > now) push_time(st.owner_at_[n] + th);
    st.owner_override_ = true;
  }
  std::size_t m = tx.mark();
  // Fast paths, when the head does not age into idle fragments: the releases are summed per
  // (pool, model) first and applied to tx only once Session::may_fit passes with them
  // (free capacity only grows along the walk, so no time before can fit).
  const bool defer = st.options_.fast_paths && th == 0;
  // And when the head's gang is replicas of one shape whose node slots are exact
  // (Session::slots_decide), the releases are not applied to the cluster at all: they are
  // counted per node (ReleasedCapacity) and Session::fits_by_slots answers whether the head
  // would place, without placing it. Only the quota they give back is charged inside tx.
  const bool by_slots = defer && S.slots_decide(hs);
  // By slots, for a head of one CPU-only shape (slot_bound_shape): the lower bound of the slots
  // the summed releases add (Session::slots_of_release), counted as they are summed.
  const ReplicaShape* bound_shape = by_slots ? slot_bound_shape(S, hs) : nullptr;
  const ResourceType bound_cls = *Session::classes(hs).begin();
  std::int64_t bound = 0;
  detail::ReleasedCapacity released = std::move(st.released_);
  std::vector<const Placement*> pending = std::move(st.reservation_pending_);  // summed in delta, not yet applied
  pending.clear();
  std::vector<Cluster::FreeSum> delta = std::move(st.reservation_delta_);
  delta.clear();
  if (defer) delta.resize(st.cluster_.pools().size() * Cluster::kSlotsPerPool);
  struct HandBack {  // the scratch goes back to the state however the walk ends
    detail::ReleasedCapacity& from;
    std::vector<const Placement*>& pending;
    std::vector<Cluster::FreeSum>& delta;
    detail::SchedulerCore& st;
    ~HandBack() {
      from.clear(st.cluster_);
      st.released_ = std::move(from);
      st.reservation_pending_ = std::move(pending);
      st.reservation_delta_ = std::move(delta);
    }
  } hand_back{released, pending, delta, st};
  auto fits_at = [&](Time at) {
    if (by_slots) return S.fits_by_slots(head, at, released, &delta);
    std::size_t m1 = tx.mark();
    bool ok = S.try_start(tx, head, at).has_value();
    tx.rollback_to(m1);
    return ok;
  };
  // Fast paths: the head is known not to fit now when the last pass's failure memo says so
  // (Entry::failed_epoch: nothing released since, exactly what actions::allocate assumes to
  // skip it) and nothing is released inside tx (no victim; the tentative starts in tx only
  // take capacity and quota away).
  const Session::Entry& he = st.tasks_[head.index()];
  const bool fails_now = st.options_.fast_paths && gone.empty() && he.failed_epoch == st.capacity_epoch_ && !st.ages(hs) &&
                         !S.policies_change_by(now);
  Time result = !fails_now && fits_at(now) ? now : kTimeNever;
  End next = next_end();
  while (result == kTimeNever) {
    Time at = next.first;
    if (!times.empty()) at = std::min(at, times.front());
    if (at == kTimeNever) break;
    while (!times.empty() && times.front() == at) {
      std::pop_heap(times.begin(), times.end(), std::greater<>{});
      times.pop_back();
    }
    for (; next.first <= at; next = next_end()) {
      const Placement* p = next.second;
      if (defer) {
        add_released_held(st, *p, delta, bound_shape, &hs, bound_cls, &bound);
        pending.push_back(p);
        continue;
      }
      for (const auto& a : p->replicas) tx.release(a);
      if (p->capacity == ResourceType::idle) continue;
      tx.charge(p->quota_key, p->quota_held, -1);
      if (th > 0)
        for (const auto& a : p->replicas) {
          st.owner_at_[a.node.index()] = next.first;
          push_time(next.first + th);
        }
    }
    if (defer) {
      if (!may_fit_any(S, hs, delta)) continue;
      for (const Placement* p : pending) {
        if (!by_slots)
          for (const auto& a : p->replicas) tx.release(a);
        if (p->capacity != ResourceType::idle) tx.charge(p->quota_key, p->quota_held, -1);
      }
      if (by_slots) {
        // The lower bound of the head's slots (kept along the walk, slot_bound_fits; else
        // Session::fits_by_slots_at_least over the pending releases), nothing counted per
        // node, decides most walks; when it is unsure, the releases are counted per node for
        // the exact count.
        if (bound_shape ? slot_bound_fits(S, head, bound_cls, *bound_shape, bound, delta)
                        : S.fits_by_slots_at_least(head, at, pending, &delta)) {
          pending.clear();
          result = at;
          continue;
        }
        for (const Placement* p : pending)
          for (const auto& a : p->replicas) released.add(st.cluster_, a);
      }
      pending.clear();
      // Applied releases are now in the cluster's own sums (by_slots: they stay in delta).
      if (!by_slots) std::fill(delta.begin(), delta.end(), Cluster::FreeSum{});
    }
    if (fits_at(at)) result = at;
  }
  tx.rollback_to(m);
  if (memo_key.first >= 0) st.reservation_memo_.emplace(memo_key, result);
  if (memo_key.first >= 0 && extras.empty() && th == 0) {
    // Valid until the first node-policy time after now (see the look-up).
    Time until = kTimeNever;
    for (const auto& p : st.policies_) {
      if (p.created > now) until = std::min(until, p.created);
      if (p.expire > now) until = std::min(until, p.expire);
    }
    st.head_reservation_ = {head, result, st.capacity_epoch_, st.state_epoch_, now, until};
  }
  return result;
}

/// After a backfilled start without victims that may_jump let jump `head`: the head's
/// reservation is still `reservation` (not later: may_jump; not earlier: the start only takes
/// capacity and quota, and its own release comes back by its expected end), so the walk memo
/// (Core::head_reservation_) of the state before the start, `state_before`, carries over to
/// the state after it.
inline void keep_head_reservation(Session& S, TaskId head, Time reservation, std::uint64_t state_before) {
  auto& hr = S.st.head_reservation_;
  if (hr.head == head && hr.value == reservation && hr.state_epoch == state_before && hr.capacity_epoch == S.st.capacity_epoch_)
    hr.state_epoch = S.st.state_epoch_;
}

/// The reservation of waiting task `head` on the current state (nothing tentatively placed).
inline Time reservation(Session& S, TaskId head, Time now) {
  Transaction tx(S.st.cluster_, S.st.quotas_, &S.st.tx_log_spare_);
  return reservation(S, tx, head, now, {}, {});
}

/// May a task whose tentative placement `candidate` (with its preemption victims `gone`) is
/// inside `tx`, next to the earlier tentative starts `extras`, jump the head? Yes when the
/// head's reservation with it is no later than `head_reservation` (the reservation without it).
inline bool may_jump(Session& S, Transaction& tx, TaskId head, Time head_reservation, std::span<const Placement* const> extras,
                     const Placement& candidate, const std::vector<Preemption>& gone) {
  if (S.st.options_.fast_paths) {
    // No known reservation cannot be delayed. A candidate that preempts nothing and is expected
    // to end by the reservation leaves the head's walk with the same state at that time (its
    // release is one of the ends walked by then), so the head still fits there: no walk needed.
    // Not when the head ages into idle fragments (the candidate's nodes would restart ageing).
    if (head_reservation == kTimeNever) return true;
    const TaskSpec& cs = S.spec(candidate.task);
    if (gone.empty() && cs.runtime_estimate >= 0 && S.now + cs.runtime_estimate <= head_reservation &&
        S.st.stability_threshold(S.spec(head)) == 0)
      return true;
    // A candidate that cannot jump: even counting as free everything expected to end by the
    // reservation (running tasks, the earlier tentative starts, the candidate itself if it
    // ends by then), the head's gang exceeds the free capacity of its eligible nodes
    // (Session::may_fit). Free capacity only grows along the walk, so no walked time up to the
    // reservation fits the head: its reservation with the candidate is later.
    if (gone.empty()) {
      // The running tasks' releases (memoised), copied only when a tentative start adds to them.
      const std::vector<Cluster::FreeSum>& base = released_by(S, head_reservation);
      std::vector<Cluster::FreeSum> with_tentative;
      auto add_if_ends = [&](const Placement& p) {
        if (!ends_by(S, p.task, head_reservation)) return;
        if (with_tentative.empty()) with_tentative = base;
        add_released(S.st.cluster_, p, with_tentative);
      };
      for (const Placement* x : extras) add_if_ends(*x);
      add_if_ends(candidate);
      if (!may_fit_any(S, S.spec(head), with_tentative.empty() ? base : with_tentative)) return false;
    }
  }
  std::vector<const Placement*> with(extras.begin(), extras.end());
  with.push_back(&candidate);
  return reservation(S, tx, head, S.now, with, gone) <= head_reservation;
}

/// Fast paths: may the first backfill pass of a schedule() call visit only the tasks enqueued
/// since the last complete pass (`order`, filled with them in queue order when true), behind
/// that pass's head (Core::bf_head_)? A full pass would then treat every other waiting task as
/// the last pass did, and see the state that pass left: true when, since that pass,
///   * nothing but enqueues happened (capacity, state and queue epochs; no dequeue) and that
///     pass held no task after a preemption trial (victims are chosen by time-dependent keys);
///   * every enqueued task queues behind every other waiting task, and no waiting task ages
///     into idle fragments (its feasibility grows with time alone);
///   * no running task's expected end (start + estimate) fell in (anchor, now], where anchor is
///     the time of the last pass that visited the whole queue. Then every expected end is
///     either still ahead (the same time in the reservation walk) or was already overdue then
///     (expected now, then and now): the head's reservation R is the same or moved by exactly
///     the elapsed time, a held task still does not end by R, and with it started its
///     reservation is still later than R (its own end only moved later). Failed tasks fail
///     again (the failure memo: the capacity epoch did not change).
inline bool backfill_from_fresh(Session& S, std::vector<TaskId>& order) {
  auto& st = S.st;
  if (!st.options_.fast_paths || !st.bf_chainable_ || st.capacity_epoch_ != st.last_pass_epoch_ ||
      st.state_epoch_ != st.bf_state_epoch_ || st.queue_epoch_ != st.bf_queue_epoch_ + st.fresh_.size())
    return false;
  for (TaskId t : st.aging_)
    if (st.tasks_[t.index()].state == Session::State::waiting) return false;
  order.clear();
  for (TaskId t : st.fresh_)
    if (st.tasks_[t.index()].state == Session::State::waiting) order.push_back(t);
  std::sort(order.begin(), order.end(), [&st](TaskId a, TaskId b) { return st.tied_key(a) < st.tied_key(b); });
  order.erase(std::unique(order.begin(), order.end()), order.end());
  // The fresh tasks are the last order.size() keys of the queue.
  auto q = st.queue_.rbegin();
  for (auto it = order.rbegin(); it != order.rend(); ++it, ++q)
    if (q == st.queue_.rend() || q->id != *it) return false;
  if (S.now > st.bf_anchor_) {
    auto stamp = std::make_tuple(st.state_epoch_, st.capacity_epoch_, st.bf_anchor_);
    if (st.bf_next_end_stamp_ != stamp) {
      // The first expected end after the anchor (Core::expected_ends_ is kept under backfill
      // queueing, the only one that gets here; an unknown estimate sorts last as kTimeNever).
      auto it = st.expected_ends_.upper_bound(
          {st.bf_anchor_, std::numeric_limits<std::uint64_t>::max(), TaskId(std::numeric_limits<std::int32_t>::max())});
      st.bf_next_end_ = it == st.expected_ends_.end() ? kTimeNever : std::get<0>(*it);
      st.bf_next_end_stamp_ = stamp;
    }
    if (st.bf_next_end_ <= S.now) return false;
  }
  return true;
}

}  // namespace libsched::actions
