// The task lifecycle of sim::Simulator (see simulator.hpp for the contract): an attempt is
// queued, placed, goes through its start-up phases (precheck, image pull), runs its
// entrypoint, and ends (Succeeded / Failed / Stopped); a retriable failure resubmits the task
// from its last checkpoint. Every state change is recorded in the Metrics event log.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/io/limits.hpp"
#include "sim/engine/simulator.hpp"

namespace sim {

using namespace libsched;

namespace lifecycle_detail {
// GPU heterogeneity (docs/heterogeneity.md): work is counted in reference ms (speed 1.0).
/// Wall ms that `work` reference ms take at `speed`: rounded up, so the work is done by then.
Time wall_of_work(Time work, double speed) {
  return speed == 1.0 ? work : Time(std::ceil(double(work) / speed));
}
/// Reference ms of work done in `wall` ms at `speed` (rounded down).
Time work_of_wall(Time wall, double speed) {
  return speed == 1.0 ? wall : Time(std::floor(double(wall) * speed));
}
}  // namespace lifecycle_detail

using lifecycle_detail::wall_of_work;
using lifecycle_detail::work_of_wall;

double Simulator::attempt_speed(const AttemptRecord& a) const {
  const TaskSpec& s = sched_->task(runs_[std::size_t(a.task)].id);
  if (s.gpu_speed.empty()) return 1.0;
  const Cluster& cl = sched_->cluster();
  double speed = 0;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    if (i < a.replica_gpu_milli.size() && a.replica_gpu_milli[i] <= 0) continue;  // CPU-only replica: no GPU work
    const std::int32_t m = cl.node(NodeId(a.nodes[i])).model;
    const double v = m < 0 ? 1.0 : s.speed_on(cl.models()[std::size_t(m)]);
    speed = speed == 0 ? v : std::min(speed, v);
  }
  return speed == 0 ? 1.0 : speed;
}

bool Simulator::current(int ti, int attempt) const {
  const auto& r = runs_[std::size_t(ti)];
  return r.active && !r.attempts.empty() && r.attempts.back().attempt == attempt;
}

void Simulator::kill(int ti, Time now, const std::string& reason, const std::string& kind) {
  auto& r = runs_[std::size_t(ti)];
  if (r.phase == TaskRun::debug) release_debug(ti, now);  // debug hold cut short; entrypoint already succeeded
  else end_attempt(ti, now, AttemptState::failed, reason, kind, false);
}

void Simulator::on_startup_step(Time now, const StartupEv& e) {
  const Cluster& cl = sched_->cluster();
  auto& r = runs_[std::size_t(e.task)];
  const auto& t = cfg(std::size_t(e.task));
  if (e.phase == 0) {
    for (const std::int32_t node : r.attempts.back().nodes) {
      const NodeId n(node);
      const std::string& name = cl.node(n).name;
      if (faults_->precheck_fails(n.index())) {
        // The node is cordoned first (its record comes before the Failed attempt's), so the
        // retry, enqueued by end_attempt, is placed elsewhere.
        const Time until = cordon_after_precheck(n, now);
        end_attempt(e.task, now, AttemptState::failed,
                    until < 0 ? fmt::format("precheck_failure: node {} is unhealthy", name)
                              : fmt::format("precheck_failure: node {} is unhealthy (cordoned until {} s)", name, format_seconds(until)),
                    "precheck_failure", false);
        return;
      }
    }
    begin_phase(e.task, now);
    return;
  }
  if (!faults_->pull_fails(t.image_pull_failure_prob)) {
    r.pull_failures = 0;
    start_entrypoint(e.task, now);
    return;
  }
  ++r.pull_failures;
  int n = t.image_pull_retries;
  if (n == 0 || (n > 0 && r.pull_failures > n)) {
    end_attempt(e.task, now, AttemptState::failed,
                fmt::format("image_pull_failure: {} consecutive failed pulls (image_pull_retries {})", r.pull_failures, n),
                "image_pull_failure", false);
    return;
  }
  const int pull_cap = opt_.max_pull_failures > 0 ? opt_.max_pull_failures : io::limits::max_pull_failures_without_breaker;
  if (n < 0 && until_ == kTimeNever && r.pull_failures >= pull_cap)
    throw SimulationLimitError(fmt::format(
        "{}: tasks[{}].image_pull_retries: {}: task {} failed {} consecutive image pulls by t = {} s "
        "(image_pull_failure_prob {}); without a circuit breaker a run stops there (the simulator's bound); "
        "set image_pull_retries >= 0 or a lower image_pull_failure_prob",
        file_label(), e.task, n, task_name(std::size_t(e.task)), r.pull_failures, format_seconds(now), t.image_pull_failure_prob));
  // The retry replaces the pull event just delivered: forget delivered handles so that the
  // list stays as short as the attempt's pending events.
  std::erase_if(r.handles, [this](EventHandle h) { return !q_.pending(h); });
  r.handles.push_back(
      q_.schedule(later(now, from_seconds(t.image_pull_s), e.task, "image_pull_s", t.image_pull_s), StartupEv{e.task, e.attempt, 1}));
}

void Simulator::change(int ti, Time now, AttemptState from, AttemptState to, const std::string& reason) {
  auto& r = runs_[std::size_t(ti)];
  metrics_->record(now, ti, r.attempts.back().attempt, from, to, from == to && to == AttemptState::queued, reason);
  r.attempts.back().state = to;
}

void Simulator::cancel_attempt_events(int ti) {
  auto& r = runs_[std::size_t(ti)];
  for (EventHandle h : r.handles) q_.cancel(h);
  r.handles.clear();
  if (r.scale_in) q_.cancel(r.scale_in);
  r.scale_in = 0;
}

void Simulator::enqueue_attempt(int ti, Time now) {
  auto& r = runs_[std::size_t(ti)];
  if (!r.id.valid()) register_task(ti);  // compact run: its first submission
  AttemptRecord a;
  a.task = ti;
  a.attempt = int(r.attempts.size()) + 1;
  a.submit = now;
  a.work_needed = r.remaining;
  r.attempts.push_back(a);
  r.phase = TaskRun::none;
  r.queued_since = now;
  // What a real scheduler would know: the user's estimate minus the work already saved.
  TaskSpec& s = sched_->mutable_task(r.id);
  const TaskIdentity& id = ident_[std::size_t(ti)];
  s.runtime_estimate = id.runtime_estimate_s() ? std::max<Time>(0, from_seconds(*id.runtime_estimate_s()) - (r.duration - r.remaining)) : -1;
  s.true_remaining = r.remaining;  // (read only by the oracle queue orders sjf / srtf)
  sched_->enqueue(r.id, now);
  metrics_->set_wait(std::size_t(ti), int(WaitCode::waits_for_capacity), now);
  note_wait(r.id, int(WaitCode::waits_for_capacity));
  change(ti, now, AttemptState::queued, AttemptState::queued, "");
}

void Simulator::on_started(TaskId id, Time now) {
  int ti = task_of_id_[id.index()];
  auto& r = runs_[std::size_t(ti)];
  auto& a = r.attempts.back();
  const Placement* p = sched_->placement_of(id);
  metrics_->set_wait(std::size_t(ti), -1, now);
  ++placements_;
  a.start = now;
  a.spec = sched_->task(id).options[p->option].label;
  a.capacity = libsched::to_string(p->capacity);
  a.gpu_milli = 0;
  if (!p->replicas.empty()) a.master_node = std::int32_t(p->replicas.front().node.index());
  a.nodes.reserve(p->replicas.size());
  a.replica_gpu_milli.reserve(p->replicas.size());
  for (const auto& rep : p->replicas) {
    a.nodes.push_back(rep.node.value);
    a.replica_gpu_milli.push_back(rep.total_gpu_milli());
    a.gpu_milli += rep.total_gpu_milli();
    a.cpu_milli += rep.cpu_milli;
  }
  r.active = true;
  ++active_;
  if (cost_) cost_start(ti, now);
  r.pull_failures = 0;
  r.workers_now = sched_->task(id).workers;
  r.desired = r.workers_now;
  if (auto pf = pending_faults_.find(ti); pf != pending_faults_.end()) {
    std::string err = pf->second.front();
    pf->second.erase(pf->second.begin());
    if (pf->second.empty()) pending_faults_.erase(pf);
    change(ti, now, AttemptState::queued, AttemptState::running, "");
    end_attempt(ti, now, AttemptState::failed, err + ": injected task fault", err, false);
    return;
  }
  begin_phase(ti, now);
}

void Simulator::begin_phase(int ti, Time now) {
  auto& r = runs_[std::size_t(ti)];
  const auto& t = cfg(std::size_t(ti));
  AttemptState from = r.attempts.back().state;
  if (r.phase == TaskRun::none && t.precheck_s > 0) {
    r.phase = TaskRun::precheck;
    change(ti, now, from, AttemptState::prechecking, "");
    r.handles.push_back(q_.schedule(later(now, from_seconds(t.precheck_s), ti, "precheck_s", t.precheck_s), StartupEv{ti, r.attempts.back().attempt, 0}));
    return;
  }
  if ((r.phase == TaskRun::none || r.phase == TaskRun::precheck) && t.image_pull_s > 0) {
    r.phase = TaskRun::pull;
    if (from != AttemptState::running) change(ti, now, from, AttemptState::running, "");
    r.handles.push_back(
        q_.schedule(later(now, from_seconds(t.image_pull_s), ti, "image_pull_s", t.image_pull_s), StartupEv{ti, r.attempts.back().attempt, 1}));
    return;
  }
  if (from != AttemptState::running) change(ti, now, from, AttemptState::running, "");
  start_entrypoint(ti, now);
}

void Simulator::start_entrypoint(int ti, Time now) {
  auto& r = runs_[std::size_t(ti)];
  const auto& t = cfg(std::size_t(ti));
  auto& a = r.attempts.back();
  r.phase = TaskRun::running;
  a.run_start = now;
  // The remaining reference work at the gang's speed (1.0 without a throughput section).
  const Time wall = wall_of_work(r.remaining, attempt_speed(a));
  r.handles.push_back(q_.schedule(later(now, wall, ti, "duration_s", ident_[std::size_t(ti)].duration_s), FinishEv{ti, a.attempt}));
  if (t.transient_failure_rate_per_h > 0) {
    double ttf_s = faults_->transient_failure_after_s(t.transient_failure_rate_per_h);  // compared in seconds first: a tiny rate draws huge times
    if (ttf_s < to_seconds(wall) + 1) {
      Time ttf = from_seconds(ttf_s);
      if (ttf < wall) r.handles.push_back(q_.schedule(now + ttf, TransientEv{ti, a.attempt}));
    }
  }
  if (t.type == "RayJob" && t.autoscaling->enabled) {
    for (const auto& st : t.autoscaling->demand) {
      int w = std::clamp(st.workers, t.autoscaling->min_workers, std::max(t.autoscaling->min_workers, t.autoscaling->max_workers));
      r.handles.push_back(q_.schedule(later(now, from_seconds(st.at_s), ti, "autoscaling.demand[].at_s", st.at_s), DemandEv{ti, a.attempt, w}));
    }
  }
}

void Simulator::end_attempt(int ti, Time now, AttemptState st, const std::string& reason, const std::string& retry_kind,
                            bool already_released) {
  auto& r = runs_[std::size_t(ti)];
  auto& a = r.attempts.back();
  const auto& t = cfg(std::size_t(ti));
  cancel_attempt_events(ti);
  Time kept_until = st == AttemptState::failed ? a.start : now;  // what a failure loses (costs)
  // A spot reclaim notice this attempt got (docs/outputs.md "Timing semantics"): with
  // checkpoint_on_notice the work up to the notice is saved.
  Time notice_at = -1;
  if (!notice_at_.empty()) {
    if (auto it = notice_at_.find(ti); it != notice_at_.end()) {
      if (t.checkpoint_on_notice) notice_at = it->second;
      notice_at_.erase(it);
    }
  }
  if (r.phase == TaskRun::running) {
    // Work in reference ms (speed 1.0: the wall time run); checkpoints every c ms of work.
    const double speed = attempt_speed(a);
    const Time wall = now - a.run_start;
    const Time e = speed == 1.0 ? wall : st == AttemptState::succeeded ? r.remaining : std::min(r.remaining, work_of_wall(wall, speed));
    Time c = sched_->task(r.id).checkpoint_interval;
    Time saved = st == AttemptState::succeeded ? e : (c > 0 ? (e / c) * c : 0);
    if (notice_at >= a.run_start) saved = std::max(saved, std::min(e, work_of_wall(notice_at - a.run_start, speed)));
    a.work_done = e;
    a.lost_work = e - saved;
    r.remaining -= saved;
    metrics_->stats(std::size_t(ti)).lost_work += a.lost_work;
    if (st == AttemptState::failed && saved > 0) kept_until = std::min(now, a.run_start + wall_of_work(saved, speed));
  }
  if (cost_ && r.active) cost_end(ti, now, kept_until);
  if (!already_released && r.active) sched_->release(r.id, now);
  if (r.active) --active_;
  r.active = false;
  r.phase = TaskRun::none;
  released_since_schedule_ = true;
  a.end = now;
  a.reason = metrics_->interned(reason);
  if (st == AttemptState::succeeded) a.end_reason = EndReason::succeeded;
  else if (st == AttemptState::stopped) a.end_reason = EndReason::run_end;
  else if (a.end_reason == EndReason::never_started) a.end_reason = end_reason_of_failure(retry_kind);
  change(ti, now, a.state, st, reason);
  makespan_ = std::max(makespan_, now);
  auto& s = metrics_->stats(std::size_t(ti));
  if (st == AttemptState::failed && is_retriable(retry_kind, sc_.scheduler.retry_on) && s.resubmissions < t.fault_tolerance.max_resubmissions) {
    ++s.resubmissions;
    enqueue_attempt(ti, now);
    return;
  }
  r.done = true;
  if (st == AttemptState::succeeded) sched_->note_finished(r.id, r.duration);  // (qssf's user history)
  std::vector<EventHandle>().swap(r.handles);  // cancelled above; a million finished tasks keep no buffers
  s.finished = st == AttemptState::succeeded || st == AttemptState::failed;
  s.succeeded = st == AttemptState::succeeded;
  s.end = now;
  --live_tasks_;
  if (compact_) fold_ended(ti);
}

void Simulator::fold_ended(int ti) {
  auto& r = runs_[std::size_t(ti)];
  // An attempt never started waits until the censoring time, known at the end only; such a task
  // (rare) keeps its records and its entry.
  if (std::any_of(r.attempts.begin(), r.attempts.end(), [](const AttemptRecord& a) { return a.start < 0; })) return;
  fold_totals(std::size_t(ti), totals_of(r.attempts, 0));
  std::vector<AttemptRecord>().swap(r.attempts);
  sched_->forget_task(r.id);  // its id may be handed to a task submitted later
  r.id = TaskId();
}

void Simulator::finish_entrypoint(int ti, Time now) {
  auto& r = runs_[std::size_t(ti)];
  const auto& t = cfg(std::size_t(ti));
  if (t.type == "RayJob" && t.debug) {
    auto& a = r.attempts.back();
    const double speed = attempt_speed(a);
    a.work_done = speed == 1.0 ? now - a.run_start : r.remaining;  // reference work (docs/heterogeneity.md)
    r.remaining = 0;
    cancel_attempt_events(ti);
    r.phase = TaskRun::debug;
    change(ti, now, a.state, AttemptState::debug_holding, "");
    r.handles.push_back(q_.schedule(later(now, from_seconds(t.debug_retention_s), ti, "debug_retention_s", t.debug_retention_s),
                                    DebugReleaseEv{ti, a.attempt}));
    return;
  }
  end_attempt(ti, now, AttemptState::succeeded, "", "", false);
  r.remaining = 0;
}

void Simulator::release_debug(int ti, Time now) {
  auto& r = runs_[std::size_t(ti)];
  r.phase = TaskRun::none;  // work already accounted in finish_entrypoint
  end_attempt(ti, now, AttemptState::succeeded, "", "", false);
}

}  // namespace sim
