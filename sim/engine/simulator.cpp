// sim::Simulator implementation. See simulator.hpp for the lifecycle and timing contract and
// docs/outputs.md for every output column.
#include "sim/engine/simulator.hpp"

#include "sim/io/limits.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/engine/external.hpp"
#include "sim/engine/interrupt.hpp"

namespace sim {

using namespace libsched;

std::string_view to_string(AttemptState s) {
  switch (s) {
    case AttemptState::queued: return "Queued";
    case AttemptState::prechecking: return "Prechecking";
    case AttemptState::running: return "Running";
    case AttemptState::debug_holding: return "DebugHolding";
    case AttemptState::succeeded: return "Succeeded";
    case AttemptState::failed: return "Failed";
    case AttemptState::stopped: return "Stopped";
  }
  return "?";
}

namespace {

/// The problem with `s` as text in an output (io::text_problem), or "".
std::string text_problem(const std::string& s) {
  auto p = io::text_problem(s);
  return p ? p->rule : std::string();
}

}  // namespace

std::uint64_t events_per_instant_cap(const io::Scenario& sc) {
  std::uint64_t items = sc.tasks.size() + sc.events.size() + 2 * sc.node_policies.size();
  for (const auto& p : sc.cluster.pools) {
    items += p.nodes.size();
    for (const auto& g : p.node_groups) items += std::uint64_t(std::max(0, g.count));
  }
  return 1'000'000 + 100 * items;
}

void check_runtime_bounds(const io::Scenario& sc, const SimOptions& opt) {
  const std::string file = !sc.file.empty() ? sc.file : !sc.name.empty() ? sc.name : "<scenario>";
  auto shown = [](const std::string& v) { return nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
  // `path` is a string or a callable that makes it: indexed paths (tasks, nodes, ...) are
  // formatted only for a value with a problem, not for every value on every run.
  auto text = [&](const auto& path, const std::string& v) {
    std::string why = text_problem(v);
    if (why.empty()) return;
    std::string where;
    if constexpr (std::is_invocable_v<decltype(path)>) where = path();
    else where = path;
    throw SimulationLimitError(fmt::format("{}: {}: {}: {}", file, where, shown(v), why));
  };
  text("name", sc.name);
  text("cluster.name", sc.cluster.name);
  text("cluster.region", sc.cluster.region);
  for (std::size_t i = 0; i < sc.cluster.instance_specs.size(); ++i)
    text([i] { return fmt::format("cluster.instance_specs[{}].name", i); }, sc.cluster.instance_specs[i].name);
  for (std::size_t p = 0; p < sc.cluster.pools.size(); ++p) {
    const auto& pool = sc.cluster.pools[p];
    text([p] { return fmt::format("cluster.pools[{}].name", p); }, pool.name);
    for (std::size_t g = 0; g < pool.node_groups.size(); ++g)
      text([p, g] { return fmt::format("cluster.pools[{}].node_groups[{}].prefix", p, g); }, pool.node_groups[g].prefix);
    for (std::size_t n = 0; n < pool.nodes.size(); ++n)
      text([p, n] { return fmt::format("cluster.pools[{}].nodes[{}].name", p, n); }, pool.nodes[n].name);
  }
  // The interned keys (user, tenant, type, pool) are shared by many tasks: a text found fine
  // once is fine again, so a small cache of the interned texts checked (one slot per address
  // hash; a miss just checks again) skips most of them. The first task with a problem is still
  // the one reported: a text with a problem throws the first time it is checked.
  std::array<const std::string*, 256> checked{};
  auto interned = [&](const auto& path, const io::Interned& v) {
    const std::string* p = &v.str();
    const std::size_t slot = (reinterpret_cast<std::uintptr_t>(p) >> 4) % checked.size();
    if (checked[slot] == p) return;
    text(path, v);
    checked[slot] = p;
  };
  const double interval = sc.timeseries_interval_s;
  auto until = opt.until_s ? opt.until_s : sc.until_s;
  // A run that cannot end: an image pull that always fails, with no circuit breaker, retried
  // until the end of time (docs/outputs.md "Runtime bounds"). With until_s the run is bounded.
  // Its first such task is found in the same pass as the texts (one pass over the tasks, a
  // large trace's 65 MB) and reported only when no text has a problem (the texts come first).
  std::size_t endless_pull = sc.tasks.size();
  for (std::size_t i = 0; i < sc.tasks.size(); ++i) {
    const auto& t = sc.tasks[i];
    text([i] { return fmt::format("tasks[{}].name", i); }, t.name);
    interned([i] { return fmt::format("tasks[{}].user", i); }, t.user);
    interned([i] { return fmt::format("tasks[{}].tenant", i); }, t.tenant);
    interned([i] { return fmt::format("tasks[{}].type", i); }, t.type);
    interned([i] { return fmt::format("tasks[{}].pool", i); }, t.pool);
    if (!until && endless_pull == sc.tasks.size() && t.image_pull_s > 0 && t.image_pull_failure_prob >= 1 && t.image_pull_retries < 0)
      endless_pull = i;
  }
  if (endless_pull < sc.tasks.size()) {
    const auto& t = sc.tasks[endless_pull];
    throw SimulationLimitError(fmt::format(
        "{}: tasks[{}].image_pull_retries: {}: task {} pulls an image that always fails (image_pull_failure_prob 1) "
        "without a circuit breaker, so the run would never end; set image_pull_retries >= 0, "
        "image_pull_failure_prob < 1 or until_s",
        file, endless_pull, t.image_pull_retries, shown(t.name)));
  }
  if (interval > 0 && until && *until < to_seconds(kMaxSimTime) && interval < to_seconds(kMaxSimTime)) {
    const Time iv = std::max<Time>(1, from_seconds(interval));
    const Time u = from_seconds(*until);
    const std::uint64_t rows = std::uint64_t((u + iv - 1) / iv) + 1;
    if (rows > kMaxTimeseriesRows)
      throw SimulationLimitError(fmt::format(
          "{}: timeseries_interval_s: {}: with until_s {} the time series could need {} rows, more than the {} timeseries.csv may "
          "hold; use timeseries_interval_s >= {}, 0 (automatic) or a smaller until_s",
          file, interval, *until, rows, kMaxTimeseriesRows, std::ceil(*until / double(kMaxTimeseriesRows - 1))));
  }
}

Simulator::Simulator(io::Scenario sc, SimOptions opt)
    : sc_(std::move(sc)), opt_(std::move(opt)), faults_(std::make_unique<FaultModel>(opt_.seed ? *opt_.seed : sc_.seed)) {
  seed_ = opt_.seed ? *opt_.seed : sc_.seed;
  auto u = opt_.until_s ? opt_.until_s : sc_.until_s;
  if (u) until_ = from_seconds(*u);
  if (sc_.measure) {
    window_lo_ = from_seconds(sc_.measure->start_s);
    window_hi_ = from_seconds(sc_.measure->end_s);
  }
  // (An interval so long that interval x rows passes kMaxSimTime never limits anything.)
  if (sc_.timeseries_interval_s > 0 && sc_.timeseries_interval_s * double(kMaxTimeseriesRows - 1) < to_seconds(kMaxSimTime))
    ts_limit_ = std::max<Time>(1, from_seconds(sc_.timeseries_interval_s)) * Time(kMaxTimeseriesRows - 1);
  // What needs the scenario's tasks is computed before build() makes them compact; run()
  // reports a broken bound (as it always did: a bound is a run-time error).
  instant_cap_ = events_per_instant_cap(sc_);
  if (!opt_.runtime_bounds_checked) {
    try {
      check_runtime_bounds(sc_, opt_);
    } catch (const SimulationLimitError& e) {
      bounds_error_ = e.what();
    }
  }
  build();
}

Simulator::~Simulator() = default;

const TaskSpec& Simulator::task_spec(std::size_t ti) const { return sched_->task(runs_[ti].id); }

io::TaskCfg Simulator::task_cfg(std::size_t ti) const {
  io::TaskCfg t = cfg(ti);
  const TaskIdentity& id = ident_[ti];
  t.name = task_name(ti);
  t.submit_s = id.submit_s;
  t.duration_s = id.duration_s;
  t.runtime_estimate_s = id.runtime_estimate_s();
  return t;
}

std::vector<const AttemptRecord*> Simulator::attempts() const {
  std::vector<const AttemptRecord*> v;
  for (const auto& r : runs_)
    for (const auto& a : r.attempts) v.push_back(&a);
  return v;
}

void Simulator::handle(Time now, Event& ev) {
  std::visit(
      [&](auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, SubmitEv>) {
          --fixed_pending_;
          enqueue_attempt(e.task, now);
        } else if constexpr (std::is_same_v<T, NodeDownEv>) {
          on_node_down(now, e);
        } else if constexpr (std::is_same_v<T, NodeUpEv>) {
          on_node_up(now, e);
        } else if constexpr (std::is_same_v<T, TaskFaultEv>) {
          --fixed_pending_;
          auto& r = runs_[std::size_t(e.task)];
          if (r.done || r.phase == TaskRun::debug) return;  // nothing left to hit
          const std::string& error = sc_.events[std::size_t(e.event)].error;
          if (r.active) end_attempt(e.task, now, AttemptState::failed, error + ": injected task fault", error, false);
          else pending_faults_[e.task].push_back(error);
        } else if constexpr (std::is_same_v<T, SpotReclaimEv>) {
          on_spot_reclaim(now, e);
        } else if constexpr (std::is_same_v<T, PolicyTickEv>) {
          --fixed_pending_;
        } else if constexpr (std::is_same_v<T, WakeEv>) {
          wake_handle_ = 0;
          wake_at_ = -1;
        } else if constexpr (std::is_same_v<T, StartupEv>) {
          if (current(e.task, e.attempt)) on_startup_step(now, e);
        } else if constexpr (std::is_same_v<T, FinishEv>) {
          if (current(e.task, e.attempt)) finish_entrypoint(e.task, now);
        } else if constexpr (std::is_same_v<T, TransientEv>) {
          if (current(e.task, e.attempt))
            end_attempt(e.task, now, AttemptState::failed, "transient: stochastic failure", "transient", false);
        } else if constexpr (std::is_same_v<T, DebugReleaseEv>) {
          if (current(e.task, e.attempt)) release_debug(e.task, now);
        } else if constexpr (std::is_same_v<T, DemandEv>) {
          if (current(e.task, e.attempt)) on_demand(now, e);
        } else if constexpr (std::is_same_v<T, ScaleInEv>) {
          if (current(e.task, e.attempt)) on_scale_in(now, e);
        } else if constexpr (std::is_same_v<T, UncordonEv>) {
          on_uncordon(now, e);
        } else if constexpr (std::is_same_v<T, SpotNoticeEv>) {
          on_spot_notice(now, e);
        } else if constexpr (std::is_same_v<T, SpotEvictEv>) {
          if (current(e.task, e.attempt)) on_spot_evict(now, e);
        }
      },
      ev);
}

void Simulator::instant_end(Time now) {
  for (int round = 0; round < 100; ++round) {
    released_since_schedule_ = false;
    ScheduleResult res = opt_.external ? external_round(now) : sched_->schedule(now);
    for (const auto& p : res.preemptions) {
      ++preemptions_;
      int ti = task_of_id_[p.victim.index()];
      ++metrics_->stats(std::size_t(ti)).preemptions;
      auto& r = runs_[std::size_t(ti)];
      if (r.phase == TaskRun::debug) {
        r.phase = TaskRun::none;
        end_attempt(ti, now, AttemptState::succeeded, "", "", true);
        continue;
      }
      std::string reason = fmt::format("was preempted by another task: {} ({})", sched_->task(p.preemptor).name,
                                       libsched::to_string(p.kind));
      // (a compact run forgets the preemptor's libsched entry when it ends: the view is into names_)
      r.attempts.back().preemptor = task_name(std::size_t(task_of_id_[p.preemptor.index()]));
      r.attempts.back().end_reason = p.kind == PreemptionKind::priority       ? EndReason::preempted
                                     : p.kind == PreemptionKind::idle_reclaim ? EndReason::idle_reclaim
                                                                              : EndReason::spot_eviction;
      end_attempt(ti, now, AttemptState::failed, reason, p.kind == PreemptionKind::spot_eviction ? "spot_eviction" : "preemption", true);
    }
    for (TaskId id : res.started) on_started(id, now);
    if (res.preemptions.empty() && !released_since_schedule_) break;
  }
  autoscale(now);
  // Wait accounting: only tasks the scheduler re-examined can have a new status. Identical
  // requests get identical diagnoses at one instant (memoised by request signature); a task
  // held behind the queue's head is blocked_by_queue whatever an identical request's
  // diagnosis (its own status, as explain() gives it: never shared).
  // The wait is attributed to the status's primary (first binding) constraint.
  auto& memo = wait_memo_;  // signature -> code; scratch kept between instants
  memo.clear();
  auto code_of_sig = [&](TaskId id, std::uint64_t sig) {
    if (sig)
      if (const WaitCode* c = memo.find(sig)) return *c;
    WaitCode code = sched_->wait_code(id, now);
    if (sig && code != WaitCode::blocked_by_queue) memo.insert(sig, code);
    return code;
  };
  auto code_of = [&](TaskId id) { return code_of_sig(id, sched_->request_signature(id, now)); };
  if (sched_->request_classes_generation() != class_code_gen_) {
    class_code_gen_ = sched_->request_classes_generation();
    class_code_.assign(class_code_.size(), -2);
  }
  if (class_code_.size() < sched_->request_class_count()) class_code_.resize(sched_->request_class_count(), -2);
  // An external scheduler's rounds visit no task: every waiting task gets its status anew.
  const bool by_class = !opt_.external && sched_->take_visited_by_class(visited_);
  if (opt_.external) visited_ = sched_->queue();
  if (by_class) {
    // Every waiting task was visited (request classes: greedy, or backfill without a known
    // reservation; the pass held none): as in the loop
    // below, every member of a class gets the code of its member with the lowest id, so each
    // class is diagnosed once and its members' codes are set only when the class's code changed.
    // (The class's own diagnosis, not through the signature memo: in such a pass a signature is
    // its class's, so no other class's entry could answer it, and an entry made here would
    // never be read: a member diagnosed below shares a code only when this one is not
    // blocked_by_queue. About 5 % of a congested backfill replay.)
    sched_->for_each_request_class([&](std::uint32_t c, TaskId lowest) {
      const int code = int(sched_->wait_code(lowest, now));
      if (code == int(WaitCode::blocked_by_queue)) {
        // (backfill: a replay of the pass holds it; such a code is each member's own, as in the
        // loop below: every member diagnosed in id order, the first other code shared)
        sched_->for_each_class_member_by_id(c, [&](TaskId id) {
          metrics_->set_wait(std::size_t(task_of_id_[id.index()]), id == lowest ? code : int(code_of(id)), now);
        });
        class_code_[c] = -2;
        return;
      }
      if (class_code_[c] == code) return;
      sched_->for_each_class_member(c, [&](TaskId id) { metrics_->set_wait(std::size_t(task_of_id_[id.index()]), code, now); });
      class_code_[c] = std::int8_t(code);
    });
  } else {
    if (opt_.external) {
      for (TaskId id : visited_) {
        const int code = sched_->held_by_queue(id, now) ? int(WaitCode::blocked_by_queue) : int(code_of(id));
        metrics_->set_wait(std::size_t(task_of_id_[id.index()]), code, now);
        note_wait(id, code);
      }
    } else {
      // The listing's answers (held_by_queue, request_signature, request_class at `now`, after
      // schedule(now)), computed as it was taken.
      const auto& listed = sched_->listed();
      for (std::size_t i = 0; i < visited_.size(); ++i) {
        const TaskId id = visited_[i];
        const auto& l = listed[i];
        const int code = l.held ? int(WaitCode::blocked_by_queue) : int(code_of_sig(id, l.signature));
        metrics_->set_wait(std::size_t(task_of_id_[id.index()]), code, now);
        if (l.request_class < class_code_.size() && class_code_[l.request_class] != code) class_code_[l.request_class] = -2;  // (note_wait)
      }
    }
  }
  metrics_->snapshot(now, *sched_, makespan_);
}

void Simulator::note_wait(TaskId id, int code) {
  const std::uint32_t c = sched_->request_class(id);
  if (c < class_code_.size() && class_code_[c] != code) class_code_[c] = -2;
}

std::string Simulator::file_label() const { return !sc_.file.empty() ? sc_.file : !sc_.name.empty() ? sc_.name : "<scenario>"; }

Time Simulator::later(Time now, Time dt, int ti, const char* key, double value) const {
  if (dt <= kMaxSimTime - now) return now + dt;
  throw SimulationLimitError(fmt::format(
      "{}: tasks[{}].{}: {}: simulated time would pass {} s (the simulator's bound) at t = {} s for task {}; "
      "likely a cycle without end (e.g. an image pull retried without limit, image_pull_retries -1)",
      file_label(), ti, key, value, format_seconds(kMaxSimTime), format_seconds(now), task_name(std::size_t(ti))));
}

void Simulator::stuck_error(Time now, std::uint64_t n, const Event& last) const {
  // Name the likely cause from the event that broke the bound.
  std::string path = "<root>", value = "-", cause = "a cycle of zero-duration steps";
  auto task = [&](int ti, const char* key, double v, const std::string& why) {
    path = fmt::format("tasks[{}].{}", ti, key);
    value = fmt::format("{}", v);
    cause = fmt::format("task {}: {}", task_name(std::size_t(ti)), why);
  };
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        const io::TaskCfg* t = nullptr;
        if constexpr (!std::is_same_v<T, NodeDownEv> && !std::is_same_v<T, NodeUpEv> && !std::is_same_v<T, SpotReclaimEv> &&
                      !std::is_same_v<T, PolicyTickEv> && !std::is_same_v<T, WakeEv> && !std::is_same_v<T, UncordonEv> &&
                      !std::is_same_v<T, SpotNoticeEv>)
          t = &cfg(std::size_t(e.task));
        if constexpr (std::is_same_v<T, StartupEv>) {
          if (e.phase == 1)
            task(e.task, "image_pull_s", t->image_pull_s,
                 fmt::format("image pulls shorter than 1 ms fail (image_pull_failure_prob {}) and are retried at the same "
                             "instant (image_pull_retries {}, max_resubmissions {})",
                             t->image_pull_failure_prob, t->image_pull_retries, t->fault_tolerance.max_resubmissions));
          else
            task(e.task, "precheck_s", t->precheck_s,
                 fmt::format("prechecks shorter than 1 ms fail and are resubmitted at the same instant (max_resubmissions {})",
                             t->fault_tolerance.max_resubmissions));
        } else if constexpr (std::is_same_v<T, TransientEv>) {
          task(e.task, "transient_failure_rate_per_h", t->transient_failure_rate_per_h,
               fmt::format("the failure rate makes every attempt fail in less than 1 ms and it is resubmitted at the same "
                           "instant (max_resubmissions {})",
                           t->fault_tolerance.max_resubmissions));
        } else if constexpr (std::is_same_v<T, FinishEv>) {
          task(e.task, "duration_s", ident_[std::size_t(e.task)].duration_s, "attempts shorter than 1 ms");
        } else if constexpr (std::is_same_v<T, TaskFaultEv>) {
          task(e.task, "fault_tolerance.max_resubmissions", t->fault_tolerance.max_resubmissions, "injected faults at one instant");
        } else if constexpr (std::is_same_v<T, DebugReleaseEv>) {
          task(e.task, "debug_retention_s", t->debug_retention_s, "debug holds shorter than 1 ms");
        } else if constexpr (std::is_same_v<T, DemandEv> || std::is_same_v<T, ScaleInEv>) {
          task(e.task, "autoscaling", 0, "autoscaling steps at one instant");
        } else if constexpr (std::is_same_v<T, NodeDownEv> || std::is_same_v<T, NodeUpEv>) {
          path = "cluster";
          value = sched_->cluster().node(NodeId(e.node)).name;
          cause = "node failures and repairs (mtbf_s/mttr_s) shorter than 1 ms";
        }
      },
      last);
  throw SimulationLimitError(fmt::format(
      "{}: {}: {}: simulated time stopped advancing at t = {} s (more than {} events at that instant, the simulator's bound); "
      "likely cause: {}",
      file_label(), path, value, format_seconds(now), n, cause));
}

void Simulator::schedule_wake(Time now) {
  Time w = sched_->next_eligibility_change(now);
  if (w == kTimeNever || std::binary_search(policy_ticks_.begin(), policy_ticks_.end(), w)) w = -1;
  if (w == wake_at_) return;  // already pending (or none needed and none pending)
  if (wake_handle_) q_.cancel(wake_handle_);
  wake_handle_ = w >= 0 ? q_.schedule(w, WakeEv{}) : 0;
  wake_at_ = w;
}

void Simulator::prefetch_first(const EventQueue::Item* next) {
  prefetch_ti_ = -1;
  if (!next) return;
  std::visit(
      [&](const auto& e) {
        if constexpr (requires { e.attempt; }) prefetch_ti_ = e.task;
      },
      next->event);
  if (prefetch_ti_ < 0 || std::size_t(prefetch_ti_) >= runs_.size()) {
    prefetch_ti_ = -1;
    return;
  }
  const std::size_t ti = std::size_t(prefetch_ti_);
  const char* r = reinterpret_cast<const char*>(&runs_[ti]);
  __builtin_prefetch(r);
  __builtin_prefetch(r + sizeof(TaskRun) - 1);
  if (ti < ident_.size()) __builtin_prefetch(&ident_[ti]);
  if (ti < totals_.size()) __builtin_prefetch(&totals_[ti]);
  if (ti < metrics_->task_stats().size()) __builtin_prefetch(&metrics_->task_stats()[ti]);
}

void Simulator::prefetch_second() {
  if (prefetch_ti_ < 0) return;
  const TaskRun& r = runs_[std::size_t(prefetch_ti_)];
  if (!r.attempts.empty()) __builtin_prefetch(&r.attempts.back());
  sched_->prefetch(r.id);
}

void Simulator::run() {
  if (!bounds_error_.empty()) throw SimulationLimitError(bounds_error_);
  if (ran_) return;  // the run's per-task clocks are freed at its end
  ran_ = true;
  const Cluster& cl = sched_->cluster();
  const std::uint64_t cap = opt_.max_events_per_instant ? opt_.max_events_per_instant : instant_cap_;
  Time last = 0;
  bool cut = false;
  // Submissions are not in the event queue: they come from submit_order_ (submit time, then
  // scenario order), delivered before the queue's events of the same instant, which is where
  // the queue put them when they were scheduled first, in task order (handles 1..N).
  auto submit_at = [&]() { return next_submit_ < submit_order_.size() ? submit_order_[next_submit_].first : kTimeNever; };
  auto next_time = [&]() -> std::optional<Time> {
    auto q = q_.next_time();
    Time ts = submit_at();
    if (ts != kTimeNever && (!q || ts <= *q)) return ts;
    return q;
  };
  Time next_observe = opt_.observe_every > 0 && opt_.observer ? opt_.observe_every : kTimeNever;
  while (live_tasks_ > 0) {
    auto nt = next_time();
    if (!nt) break;
    if (*nt > until_) {
      cut = true;
      break;
    }
    Time now = *nt;
    while (next_observe != kTimeNever && next_observe < now) {  // SimOptions::observer: the state at k * observe_every
      opt_.observer(*this, next_observe);
      next_observe += opt_.observe_every;
    }
    if (now > ts_limit_)
      throw SimulationLimitError(fmt::format(
          "{}: timeseries_interval_s: {}: simulated time reached {} s, past the {} rows timeseries.csv may hold "
          "(interval x {}); use a larger timeseries_interval_s, 0 (automatic) or a smaller until_s",
          file_label(), sc_.timeseries_interval_s, format_seconds(now), kMaxTimeseriesRows, kMaxTimeseriesRows - 1));
    std::uint64_t at_now = 0;  // events at this instant: time must advance (runtime bound)
    do {
      while (true) {
        if (submit_at() == now) {
          Event ev = SubmitEv{submit_order_[next_submit_++].second};
          ++events_;
          if (++at_now > cap) stuck_error(now, at_now - 1, ev);
          handle(now, ev);
        } else if (q_.next_time() == now) {
          auto it = q_.step();
          ++events_;
          if (++at_now > cap) stuck_error(now, at_now - 1, it->event);
          prefetch_first(q_.peek());
          handle(now, it->event);
          prefetch_second();
        } else {
          break;
        }
        if ((events_ & 1023u) == 0) throw_if_interrupted();
        if (opt_.progress && (events_ & 4095u) == 0) opt_.progress(now, events_);
      }
      instant_end(now);
    } while (next_time() == now);
    last = now;
    schedule_wake(now);
    if (active_ == 0 && fixed_pending_ == 0 && wake_handle_ == 0 && cordoned_ == 0) {
      // Nothing left that can change the queue: every node is up, or down for good (no
      // injected node_up pending and no random failures that repair it). Without the second
      // case an injected node_down never followed by a node_up, next to a node group with
      // mtbf_s, kept a run whose waiting tasks never fit going until the maximum time.
      bool settled = true;
      for (std::size_t n = 0; n < cl.size() && settled; ++n)
        settled = cl.nodes()[n].up || !faults_->fails_on_its_own(n);
      if (settled) break;
    }
  }
  // Attempts still queued get the scheduler's own explanation, computed on the cluster as it
  // is at the end (at a cut: before the running attempts are stopped).
  auto explain_queued = [&](Time at) {
    for (auto& r : runs_) {
      if (r.attempts.empty() || r.attempts.back().state != AttemptState::queued) continue;
      r.attempts.back().reason = metrics_->interned(sched_->explain(r.id, at).reason);
    }
  };
  if (cut) {
    explain_queued(until_);
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      auto& r = runs_[i];
      if (!r.active) continue;
      if (r.phase == TaskRun::debug) release_debug(int(i), until_);
      else end_attempt(int(i), until_, AttemptState::stopped, "stopped: the simulation ended (until_s)", "", false);
    }
    last = until_;
    makespan_ = until_;
  }
  metrics_->close_waits(std::max(last, makespan_));
  std::vector<std::pair<Time, int>>().swap(submit_order_);  // every task is submitted or past until_s
  Time end = std::max(last, makespan_);
  run_end_ = end;
  if (!cut) explain_queued(end);
  if (opt_.progress) opt_.progress(end, events_);
}

}  // namespace sim
