// explain(): why a waiting task waits, as a read-only query over the SAME predicates the
// actions use (Session's eligibility, placement, admission and victim rule; actions::preempt;
// actions::reservation / may_jump). Nothing here decides anything or re-derives a rule: each
// step of the diagnosis runs the placement code itself, on the real state or on a relaxed copy
// of the request, inside a transaction that is rolled back.
//
// Contract. Changes no observable state (the cluster's free capacity, the quota book, tasks,
// queue, memo and later decisions are as before; probed nodes may be reported again by
// Cluster::take_changed). Reports fits_now / fits_after_preemption exactly when a schedule()
// call at `now` would start the task. Diagnosis order: docs/scheduler.md "Why a task waits".
#pragma once

#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "libsched/actions/backfill.hpp"
#include "libsched/actions/preempt.hpp"
#include "libsched/session.hpp"

namespace libsched {

/// The diagnosis of one explain() call (see the file's contract).
class Explain {
 public:
  /// `reasons`: build the one-line reason with its figures. Without, only the codes are
  /// computed (the same codes: Scheduler::wait_code, the simulator's wait attribution), every
  /// reason is empty and a status with one binding constraint lists none (only()).
  explicit Explain(Session& s, bool reasons = true) : S(s), st(s.st), R(reasons) {}

  /// Why task `t` waits at S.now: for a task that is not waiting, the status of its last pass.
  WaitStatus operator()(TaskId t) {
    const Time now = S.now;
    const auto& e = st.tasks_.at(t.index());
    if (e.state != Session::State::waiting) return hold_status(e, e.hold_head);
    // Nothing changed since the pass that held it (the simulator asks right after schedule()):
    // a new pass would hold it the same way.
    if (auto head = st.last_pass_hold(t, now)) return hold_status(e, *head);
    // As the next schedule() call at `now` would see it: tasks started at `now` are no victims.
    if (st.options_.queueing != Queueing::greedy && !failed_in_settled_pass(e))
      if (auto hold = queue_hold(t, now)) return std::move(*hold);
    return diagnose(t, now);
  }

 private:
  Session& S;
  Session::Core& st;
  const bool R;  ///< build reasons (see the constructor)

  /// The blocking list of a status whose one binding constraint is its code `c`: {c} with
  /// reasons, empty without (primary() is `c` either way: wait_code reads nothing else, and no
  /// list is allocated per diagnosis).
  std::vector<WaitCode> only(WaitCode c) const { return R ? std::vector<WaitCode>{c} : std::vector<WaitCode>{}; }

  /// The reason text, or "" without reasons (the arguments are still evaluated: keep them cheap).
  template <class... A>
  std::string txt(fmt::format_string<A...> f, A&&... a) const {
    return R ? fmt::format(f, std::forward<A>(a)...) : std::string();
  }

  /// The status of the queue hold `e`'s last pass put on it, behind `head` (WaitStatus{} when
  /// none).
  WaitStatus hold_status(const Session::Entry& e, TaskId head) const {
    if (e.hold == Session::Entry::Hold::none) return WaitStatus{};
    const std::string& hn = st.tasks_[head.index()].spec.name;
    return WaitStatus{WaitCode::blocked_by_queue,
                      e.hold == Session::Entry::Hold::strict ? txt("waits behind {} (strict queueing)", hn)
                                                             : txt("would delay the reserved start of {} (backfill)", hn),
                      only(WaitCode::blocked_by_queue)};
  }

  /// Fast paths: did the last pass try `e` and fail, with nothing changed since that
  /// schedule() call ended (no start, release, enqueue, dequeue, time step; Core::settled_)?
  /// Then a new pass at `now` sees the same queue ahead of it: tasks that started are gone,
  /// the ones that failed are known to fail (the failure memo), so the same head holds the
  /// same reservation, and `e` itself is known to fail: nothing would hold it
  /// (queue_hold's answer is nullopt without replaying the pass).
  bool failed_in_settled_pass(const Session::Entry& e) const {
    return st.options_.fast_paths && st.failed_pass_of(e) == st.pass_ &&
           st.settled_ == std::make_tuple(st.pass_, st.state_epoch_, st.capacity_epoch_, st.queue_epoch_, S.now);
  }

  // ------------------------------------------------------------------ diagnosis
  /// The queue hold a schedule() call at `now` would put on waiting task `t` (strict /
  /// backfill), found by replaying the pass over the tasks ahead of `t` inside a rolled-back
  /// transaction with the pass's own steps: a task that starts is kept (and counted as running
  /// until its estimated end), the first that cannot start is the head; under strict every
  /// task behind the head is held, under backfill a task that fits is held when it delays the
  /// head's reservation. nullopt when nothing holds `t`, and also when a task ahead would start
  /// by preemption (the pass would restart; no hold is claimed then).
  std::optional<WaitStatus> queue_hold(TaskId t, Time now) {
    Transaction tx(st.cluster_, st.quotas_);
    std::optional<TaskId> head;
    Time head_reservation = kTimeNever;
    std::deque<Placement> kept;          // stable addresses for `extras`
    std::vector<const Placement*> extras;  // tasks the replayed pass started, in tx
    auto held = [&]() -> std::optional<WaitStatus> {
      const std::string& hn = st.tasks_[head->index()].spec.name;
      if (st.options_.queueing == Queueing::strict)
        return WaitStatus{WaitCode::blocked_by_queue, txt("waits behind {} (strict queueing)", hn), only(WaitCode::blocked_by_queue)};
      return WaitStatus{WaitCode::blocked_by_queue, txt("would delay the reserved start of {} (backfill)", hn),
                        only(WaitCode::blocked_by_queue)};
    };
    for (const auto& k : st.queue_) {
      TaskId x = k.id;
      if (head && st.options_.queueing == Queueing::strict) return held();
      std::size_t m = tx.mark();
      std::vector<Preemption> victims;
      std::optional<Placement> p = S.try_start(tx, x, now);
      if (!p && S.may_preempt(x)) {
        p = actions::preempt(S, tx, x, now, victims);
        if (p && x != t) return std::nullopt;  // a preemption ahead: the pass restarts
      }
      if (p && head && !actions::may_jump(S, tx, *head, head_reservation, extras, *p, victims)) {
        if (x == t) return held();
        tx.rollback_to(m);
        continue;
      }
      if (x == t) return std::nullopt;
      if (!p) {
        if (!head) {
          head = x;
          head_reservation = actions::reservation(S, tx, x, now, extras, {});
        }
        continue;
      }
      kept.push_back(std::move(*p));
      extras.push_back(&kept.back());
    }
    return std::nullopt;
  }

  /// Does some (class, option) of spec `s` (the task's own or a relaxed copy) place its whole
  /// gang now, ignoring quota? The placement code itself (place_gang) on a rolled-back
  /// transaction. `t`: the task whose node policies apply (and whom the placement policy sees).
  bool gang_places(const TaskSpec& s, TaskId t, Time now, bool ignore_filter) {
    NodeFilter f = NodeFilter::build(st.policies_, S.spec(t), now, st.cluster_.size());
    Transaction tx(st.cluster_, st.quotas_);
    for (ResourceType cls : Session::classes(s))
      for (std::size_t i = 0; i < s.options.size(); ++i)
        if (S.place_gang(tx, s, t, i, cls, f, now, ignore_filter)) return true;  // tx rolls back
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
    const Session::Entry& entry = st.tasks_[t.index()];
    const TaskSpec& s = entry.spec;
    const ReplicaShape& w = s.options[0].worker;
    const std::string need = R ? fmt::format("needs {} x {} on {}", s.replicas(), shape_str(w), w.num_gpu == 0 ? "CPU" : model_names(w.models))
                               : std::string();
    // A failure remembered by the last pass holds until the capacity epoch changes (exactly
    // what schedule() assumes when it skips the task).
    const bool known_to_fail = st.failed_epoch_of(entry) == st.capacity_epoch_ && !st.ages(s) && !S.policies_change_by(now);
    // 1. Fits now: the placement schedule() would make.
    if (!known_to_fail) {
      Transaction tx(st.cluster_, st.quotas_);
      if (S.try_start(tx, t, now)) return {WaitCode::fits_now, txt("{}; fits now: starts at the next scheduling pass", need), {}};
    }
    // 2. Never: per (class, option), could the empty cluster (every node up, no policy) host
    // every replica, and could the quota limit ever admit the whole demand?
    bool cap_ever = false, quota_ever = false, both_ever = false;
    for (ResourceType cls : Session::classes(s)) {
      for (std::size_t i = 0; i < s.options.size(); ++i) {
        bool q_ok = !S.never_admits(Session::quota_key(s, cls), s, t, s.demand(i));
        bool c_ok = true;
        for (const ReplicaShape* r : {&s.options[i].head, &s.options[i].worker}) c_ok = c_ok && ever_hosts(s, cls, *r);
        cap_ever = cap_ever || c_ok;
        quota_ever = quota_ever || q_ok;
        both_ever = both_ever || (c_ok && q_ok);
      }
    }
    if (!both_ever) {
      WaitStatus ws{WaitCode::never_fits, need, {}};
      if (!quota_ever || cap_ever) {  // quota binds (alone, or per option where capacity does not)
        ws.blocking.push_back(WaitCode::waits_for_quota);
        QuotaKey k = Session::quota_key(s, s.resource_type);
        const auto* q = st.quotas_.find(k);
        Resources limit = q ? q->limit : Resources{};
        if (R)
          ws.reason += fmt::format("; task demand {} of {} ({}{}) even with nothing running",
                                   quota_excess(s.demand(0), limit, "quota limit"), s.user, to_string(s.resource_type),
                                   q ? "" : ", no quota entry");
      }
      if (!cap_ever || quota_ever) {
        ws.blocking.push_back(WaitCode::waits_for_capacity);
        std::int32_t largest = 0;
        if (R)
          for (const auto& n : st.cluster_.nodes())
            if (w.num_gpu == 0 || w.models == 0 || (n.model >= 0 && ((w.models >> n.model) & 1u))) largest = std::max(largest, n.gpus);
        if (R) ws.reason += fmt::format("; largest node has {} GPU", largest);
      }
      return finish(std::move(ws));
    }
    // 3. Preemption under the scheduler's own rules: schedule() would start it now.
    const bool real_preempt = S.may_preempt(t) && !known_to_fail;
    if (real_preempt) {
      Transaction tx(st.cluster_, st.quotas_);
      std::vector<Preemption> v;
      if (actions::preempt(S, tx, t, now, v))
        return {WaitCode::fits_after_preemption, txt("{}; fits after preempting {} task(s)", need, v.size()),
                only(WaitCode::fits_after_preemption)};
    }
    // 4. Quota now, and whether the gang would place ignoring quota.
    bool quota_now = false;
    std::optional<std::pair<QuotaKey, Resources>> refused;  // the first (class, option) quota refuses
    for (ResourceType cls : Session::classes(s))
      for (std::size_t i = 0; i < s.options.size(); ++i) {
        bool ok = S.admits(Session::quota_key(s, cls), s, t, s.demand(i));
        quota_now = quota_now || ok;
        if (!ok && !refused) refused.emplace(Session::quota_key(s, cls), s.demand(i));
      }
    const bool places = refused && gang_places(s, t, now, false);
    WaitStatus quota_ws;
    if (!quota_now || places) {
      const auto* q = st.quotas_.find(refused->first);
      Resources room = q ? q->limit - q->used : Resources{};
      quota_ws = {WaitCode::waits_for_quota,
                  R ? fmt::format("{}; task demand {} of {} ({})", need, quota_excess(refused->second, room, "remaining quota"), s.user,
                                  to_string(refused->first.resource_type))
                    : std::string(),
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
    const TaskSpec& s = st.tasks_[t.index()].spec;
    const ReplicaShape& w = s.options[0].worker;
    NodeFilter f = NodeFilter::build(st.policies_, s, now, st.cluster_.size());
    const auto cls_list = Session::classes(s);
    auto eligible = [&](std::size_t n, bool ignore_filter) {
      if (!st.cluster_.nodes()[n].up || st.cluster_.nodes()[n].drained) return false;
      for (ResourceType cls : cls_list)
        if (S.node_eligible(s, cls, NodeId(std::int32_t(n)), f, now, ignore_filter)) return true;
      return false;
    };
    auto replica_fits = [&](std::size_t n) {
      NodeId id{std::int32_t(n)};
      for (const auto& o : s.options)
        if (st.cluster_.fits(id, o.head) || st.cluster_.fits(id, o.worker)) return true;
      return false;
    };
    // a. Node policies: it would place without them.
    if (!f.empty() && gang_places(s, t, now, true)) {
      if (!R) return {WaitCode::blocked_by_node_policy, "", only(WaitCode::blocked_by_node_policy)};
      std::size_t allowed = 0, excluded_fit = 0;
      for (std::size_t n = 0; n < st.cluster_.size(); ++n) {
        if (eligible(n, false)) ++allowed;
        else if (eligible(n, true) && replica_fits(n)) ++excluded_fit;
      }
      std::string figures = fmt::format("{} eligible nodes allowed by its node policies; {} excluded nodes fit a replica",
                                        allowed, excluded_fit);
      if (f.blocked().empty())  // only NodeIn lists narrowed it: nothing is blacklisted
        return {WaitCode::blocked_by_node_policy, fmt::format("{}; no node allowed by its NodeIn node policies fits ({})", need, figures),
                only(WaitCode::blocked_by_node_policy)};
      std::string nodes;
      for (NodeId n : f.blocked()) nodes += (nodes.empty() ? "" : ",") + st.cluster_.node(n).name;
      return {WaitCode::blocked_by_node_policy, fmt::format("quota check failed due to node blacklist: {} ({})", nodes, figures),
              only(WaitCode::blocked_by_node_policy)};
    }
    // b. Preemption is off (or not allowed for this kind) but would let it start.
    const bool all_on = st.options_.preemption && st.options_.idle_reclaim && st.options_.spot_eviction;
    if (quota_now && !all_on && s.resource_type != ResourceType::idle && s.resource_type != ResourceType::spot) {
      Transaction tx(st.cluster_, st.quotas_);
      std::vector<Preemption> v;
      if (actions::preempt(S, tx, t, now, v, /*hypothetical=*/true))
        return {WaitCode::fits_after_preemption,
                txt("{}; fits after preempting {} task(s), which the scheduler's preemption settings do not allow", need, v.size()),
                only(WaitCode::fits_after_preemption)};
    }
    // c. Idle stability: it would place on idle capacity offered at stability low.
    if (st.ages(s)) {
      TaskSpec low = s;
      low.idle_stability = IdleStability::low;
      if (gang_places(low, t, now, false)) {
        if (!R) return {WaitCode::waits_for_idle_stability, "", only(WaitCode::waits_for_idle_stability)};
        Time threshold = s.idle_stability == IdleStability::high ? st.options_.idle_stability_high : st.options_.idle_stability_medium;
        std::size_t offered = 0, young_fit = 0;
        for (std::size_t n = 0; n < st.cluster_.size(); ++n) {
          if (!st.cluster_.nodes()[n].up) continue;
          NodeId id{std::int32_t(n)};
          if (S.node_eligible(s, ResourceType::idle, id, f, now, false)) ++offered;
          else if (S.node_eligible(low, ResourceType::idle, id, f, now, false) && replica_fits(n)) ++young_fit;
        }
        return {WaitCode::waits_for_idle_stability,
                fmt::format("{}; {} nodes offer idle capacity at stability {}; {} fit but are younger than {} s", need, offered,
                            s.idle_stability == IdleStability::high ? "high" : "medium", young_fit, gpus_str(threshold)),
                only(WaitCode::waits_for_idle_stability)};
      }
    }
    // Free capacity of the eligible nodes (model-matching for a GPU replica), once needed.
    std::int64_t free_gpu = 0;
    std::int32_t largest_frag = 0;
    auto sum_free = [&] {
      if (!R && f.empty() && !st.ages(s)) {
        // Only the total is needed: without node policies or ageing, the eligible nodes are
        // the up, undrained nodes of the pools some class may use, whose free capacity the
        // cluster keeps summed per (pool, model).
        const Cluster& c = st.cluster_;
        for (std::size_t p = 0; p < c.pools().size(); ++p) {
          PoolId pool(static_cast<std::int32_t>(p));
          if (std::none_of(cls_list.begin(), cls_list.end(), [&](ResourceType cls) { return Session::pool_ok(st, s, cls, pool); }))
            continue;
          for (std::int32_t m = w.num_gpu > 0 ? 0 : -1; m < std::int32_t(c.models().size()); ++m)
            if (w.num_gpu == 0 || w.models == 0 || ((w.models >> m) & 1u)) free_gpu += c.free_sum(pool, m).gpu_milli;
        }
        return;
      }
      for (std::size_t n = 0; n < st.cluster_.size(); ++n) {
        const Node& node = st.cluster_.nodes()[n];
        if (!eligible(n, false)) continue;
        if (w.num_gpu > 0 && (node.model < 0 || (w.models != 0 && !((w.models >> node.model) & 1u)))) continue;
        free_gpu += node.free.gpu_milli;
        largest_frag = std::max(largest_frag, st.cluster_.usable_gpus(node, w.gpu_milli));
      }
    };
    // d. vCPU / memory: the same request without vCPU and memory would place.
    {
      // A CPU-only request without vCPU and memory asks nothing of a node: (fast paths) it
      // places exactly when some node is eligible, without running the placement.
      const bool cpu_only = std::all_of(s.options.begin(), s.options.end(),
                                        [](const GangOption& o) { return o.head.num_gpu == 0 && o.worker.num_gpu == 0; });
      bool gpu_side_places = false;
      if (cpu_only && st.options_.fast_paths) {
        for (std::size_t n = 0; n < st.cluster_.size() && !gpu_side_places; ++n) gpu_side_places = eligible(n, false);
      } else if (!st.options_.fast_paths || gpu_may_fit_any(s)) {  // (else place_gang refuses each (class, option) at once)
        TaskSpec& gpu_only = st.relaxed_spec_;  // (s itself is a task's spec: never this scratch)
        gpu_only = s;
        for (auto& o : gpu_only.options)
          for (ReplicaShape* r : {&o.head, &o.worker}) r->cpu_milli = r->mem_mib = 0;
        gpu_side_places = gang_places(gpu_only, t, now, false);
      }
      if (gpu_side_places) {
        if (!R) return {WaitCode::waits_for_cpu_memory, "", only(WaitCode::waits_for_cpu_memory)};
        std::int64_t max_cpu = 0, max_mem = 0;
        std::size_t gpu_nodes = 0;
        for (std::size_t n = 0; n < st.cluster_.size(); ++n) {
          if (!eligible(n, false)) continue;
          NodeId id{std::int32_t(n)};
          ReplicaShape g = w;
          g.cpu_milli = g.mem_mib = 0;
          if (!st.cluster_.fits(id, g)) continue;
          ++gpu_nodes;
          max_cpu = std::max(max_cpu, st.cluster_.node(id).free.cpu_milli);
          max_mem = std::max(max_mem, st.cluster_.node(id).free.mem_mib);
        }
        return {WaitCode::waits_for_cpu_memory,
                fmt::format("{}; each replica needs {} vCPU and {} GiB; {} eligible nodes have room for its GPUs but at most {} vCPU and "
                            "{} GiB free",
                            need, gpus_str(w.cpu_milli), gib_str(w.mem_mib), gpu_nodes, gpus_str(max_cpu), gib_str(max_mem)),
                only(WaitCode::waits_for_cpu_memory)};
      }
    }
    // e. GPU fragmentation vs capacity.
    if (R || w.num_gpu > 0) sum_free();
    if (w.num_gpu > 0 && free_gpu >= s.demand(0).gpu_milli)
      return {WaitCode::waits_for_fragmentation,
              txt("{}; {} GPU free in total but largest free fragment {} GPU", need, R ? gpus_str(free_gpu) : std::string(), largest_frag),
              only(WaitCode::waits_for_fragmentation)};
    return {WaitCode::waits_for_capacity, txt("{}; {} GPU free in eligible nodes", need, R ? gpus_str(free_gpu) : std::string()),
            only(WaitCode::waits_for_capacity)};
  }

  /// Session::may_fit for some (class, option) of `s` with its replicas' vCPU and memory set to
  /// 0 (capacity_diagnosis's GPU-only request, whose gang place_gang refuses at once, under
  /// fast paths, when no (class, option) passes it): may_fit's GPU-side-only form.
  bool gpu_may_fit_any(const TaskSpec& s) const {
    for (ResourceType cls : Session::classes(s))
      for (std::size_t i = 0; i < s.options.size(); ++i)
        if (S.may_fit<true>(s, i, cls)) return true;
    return false;
  }

  /// Appends "[blocking: a, b]" (bucket names) when more than one constraint binds.
  WaitStatus finish(WaitStatus ws) const {
    if (R && ws.blocking.size() > 1) {
      std::string list;
      for (WaitCode c : ws.blocking) list += (list.empty() ? "" : ", ") + std::string(wait_bucket(c));
      ws.reason += " [blocking: " + list + "]";
    }
    return ws;
  }

  /// Whether a node of GPU model `model` (-1: none) with `gpus` GPUs and `cpu_milli` vCPU and
  /// `mem_mib` memory in all could host replica `r` with nothing running on it.
  static bool capacity_fits(std::int32_t model, std::int32_t gpus, std::int64_t cpu_milli, std::int64_t mem_mib, const ReplicaShape& r) {
    if (r.cpu_milli > cpu_milli || r.mem_mib > mem_mib) return false;
    if (r.num_gpu == 0) return true;
    if (model < 0 || (r.models != 0 && !((r.models >> model) & 1u))) return false;
    return gpus >= r.num_gpu;
  }
  /// Whether some node of the cluster (every node up, no policy; removed ones as their
  /// tombstones are) could host replica `r` of `s` on class `cls` with nothing running on it:
  /// capacity_fits and Session::pool_ok over the nodes' distinct capacity kinds
  /// (Core::capacity_kinds_), which give the same answer as every node. O(kinds); the kinds are
  /// listed again, in O(nodes log nodes), after nodes are added or removed.
  bool ever_hosts(const TaskSpec& s, ResourceType cls, const ReplicaShape& r) const {
    const Cluster& c = st.cluster_;
    if (st.capacity_kinds_version_ != c.schedulable_version()) {
      st.capacity_kinds_.clear();
      for (const Node& n : c.nodes()) st.capacity_kinds_.emplace_back(n.pool.value, n.model, n.gpus, n.capacity.cpu_milli, n.capacity.mem_mib);
      std::sort(st.capacity_kinds_.begin(), st.capacity_kinds_.end());
      st.capacity_kinds_.erase(std::unique(st.capacity_kinds_.begin(), st.capacity_kinds_.end()), st.capacity_kinds_.end());
      st.capacity_kinds_version_ = c.schedulable_version();
    }
    for (const auto& [pool, model, gpus, cpu, mem] : st.capacity_kinds_)
      if (capacity_fits(model, gpus, cpu, mem, r) && Session::pool_ok(st, s, cls, PoolId(pool))) return true;
    return false;
  }
  std::string model_names(ModelMask m) const {
    if (m == 0) return "any GPU model";
    std::string s;
    for (std::size_t i = 0; i < st.cluster_.models().size(); ++i)
      if ((m >> i) & 1u) s += (s.empty() ? "" : "|") + st.cluster_.models()[i];
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

};

}  // namespace libsched
