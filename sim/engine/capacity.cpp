// Capacity dynamics of sim::Simulator: nodes failing and coming back (injected or
// stochastic, FaultModel), spot capacity reclaimed, and RayJob autoscaling (scale-out one
// worker per second when conservative, all at once when aggressive; scale-in after
// idle_reclaim_s), and nodes cordoned for scheduler.precheck_cordon_s after a failed
// precheck. Idle capacity is reclaimed by the scheduler itself (preemption of kind
// idle_reclaim) when a higher-priority task needs it.
#include <algorithm>

#include <fmt/format.h>

#include "sim/engine/simulator.hpp"

namespace sim {

using namespace libsched;

void Simulator::on_node_down(Time now, const NodeDownEv& e) {
  const Cluster& cl = sched_->cluster();
  if (!e.stochastic) --fixed_pending_;
  NodeId n(e.node);
  if (cl.node(n).up) {
    metrics_->record_node(now, cl.node(n).name, false, e.stochastic);
    for (TaskId id : sched_->tasks_on_node(n))
      kill(task_of_id_[id.index()], now, fmt::format("node_failure: node {} went down", cl.node(n).name), "node_failure");
    sched_->set_node_up(n, false, now);
    released_since_schedule_ = true;
  }
  if (e.stochastic) {
    double dt = faults_->repair_after_s(std::size_t(e.node));
    if (dt < to_seconds(kMaxSimTime - now)) q_.schedule(now + std::max<Time>(1, from_seconds(dt)), NodeUpEv{e.node, true});
  }
}

void Simulator::on_node_up(Time now, const NodeUpEv& e) {
  const Cluster& cl = sched_->cluster();
  if (!e.stochastic) --fixed_pending_;
  NodeId n(e.node);
  if (!cl.node(n).up) {
    metrics_->record_node(now, cl.node(n).name, true, e.stochastic);
    sched_->set_node_up(n, true, now);
    released_since_schedule_ = true;
  }
  if (e.stochastic) {
    double dt = faults_->failure_after_s(std::size_t(e.node));
    if (dt < to_seconds(kMaxSimTime - now)) q_.schedule(now + std::max<Time>(1, from_seconds(dt)), NodeDownEv{e.node, true});
  }
}

Time Simulator::cordon_after_precheck(NodeId n, Time now) {
  const Time d = from_seconds(sc_.scheduler.precheck_cordon_s);
  if (d <= 0) return -1;
  const Time until = d < kMaxSimTime - now ? now + d : kMaxSimTime;
  if (cordon_until_.empty()) cordon_until_.assign(sched_->cluster().size(), -1);
  Time& u = cordon_until_[n.index()];
  if (u < 0) {
    ++cordoned_;
    sched_->drain_node(n);
  }
  u = std::max(u, until);
  metrics_->record_cordon(now, sched_->cluster().node(n).name, true, u);
  q_.schedule(until, UncordonEv{n.value});
  return u;
}

void Simulator::on_uncordon(Time now, const UncordonEv& e) {
  NodeId n(e.node);
  Time& u = cordon_until_[n.index()];
  if (u < 0 || now < u) return;  // extended by a later failure: its own event ends it
  u = -1;
  --cordoned_;
  sched_->undrain_node(n);
  metrics_->record_cordon(now, sched_->cluster().node(n).name, false, -1);
}

void Simulator::on_spot_reclaim(Time now, const SpotReclaimEv& e) {
  const Cluster& cl = sched_->cluster();
  --fixed_pending_;
  for (int node : reclaim_nodes_[std::size_t(e.nodes)]) {
    NodeId n(node);
    for (TaskId id : sched_->tasks_on_node(n)) {
      const Placement* p = sched_->placement_of(id);
      if (!p || p->capacity != ResourceType::spot) continue;
      ++preemptions_;
      ++metrics_->stats(std::size_t(task_of_id_[id.index()])).preemptions;
      kill(task_of_id_[id.index()], now,
           fmt::format("spot eviction: was preempted by another task (spot capacity reclaimed on {})", cl.node(n).name),
           "spot_eviction");
    }
  }
}

void Simulator::on_demand(Time now, const DemandEv& e) {
  auto& r = runs_[std::size_t(e.task)];
  const auto& as = cfg(std::size_t(e.task)).autoscaling;
  r.desired = e.workers;
  if (r.desired < r.workers_now) {
    if (!r.scale_in)
      r.scale_in = q_.schedule(later(now, from_seconds(as.idle_reclaim_s), e.task, "autoscaling.idle_reclaim_s", as.idle_reclaim_s),
                               ScaleInEv{e.task, e.attempt});
  } else if (r.scale_in) {
    q_.cancel(r.scale_in);
    r.scale_in = 0;
  }
}

void Simulator::on_scale_in(Time now, const ScaleInEv& e) {
  auto& r = runs_[std::size_t(e.task)];
  r.scale_in = 0;
  int floor_w = std::max(r.desired, cfg(std::size_t(e.task)).autoscaling.min_workers);
  bool removed = false;
  while (r.workers_now > floor_w && sched_->remove_worker(r.id, now)) {
    --r.workers_now;
    released_since_schedule_ = true;
    removed = true;
  }
  if (removed && cost_ && r.active) cost_rerate(e.task, now);
}

void Simulator::autoscale(Time now) {
  for (int ai : autoscaled_) {
    std::size_t i = std::size_t(ai);
    auto& r = runs_[i];
    const auto& t = cfg(i);
    if (!r.active || r.phase != TaskRun::running || !t.autoscaling.enabled || t.type != "RayJob") continue;
    int target = std::min(r.desired, std::max(t.autoscaling.min_workers, t.autoscaling.max_workers));
    bool added = false;
    while (r.workers_now < target) {
      if (!sched_->add_worker(r.id, now)) break;
      ++r.workers_now;
      added = true;
      if (t.autoscaling.scale_out != "aggressive") break;  // conservative: one worker per step
    }
    if (added && cost_) cost_rerate(ai, now);
    // Conservative scale-out takes its next step one second later (or at the next instant).
    if (added && r.workers_now < target)
      r.handles.push_back(q_.schedule(later(now, kMsPerSecond, int(i), "autoscaling", 1), DemandEv{int(i), r.attempts.back().attempt, r.desired}));
  }
}

}  // namespace sim
