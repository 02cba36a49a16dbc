// Capacity dynamics of sim::Simulator: nodes failing and coming back (injected or
// stochastic, FaultModel), spot capacity reclaimed, and RayJob autoscaling (scale-out one
// worker per second when conservative, all at once when aggressive; scale-in after
// idle_reclaim_s), and nodes cordoned for scheduler.precheck_cordon_s after a failed
// precheck. Spot capacity is reclaimed by `spot_reclaim` events and, with the scenario's
// `spot_reclaim` section, at random (a Poisson process per node), with a notice before the eviction.
// Idle capacity is reclaimed by the scheduler itself (preemption of kind
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
  --fixed_pending_;
  const Time notice = reclaim_notice_[std::size_t(e.nodes)];
  for (int node : reclaim_nodes_[std::size_t(e.nodes)]) spot_notice(now, NodeId(node), notice);
}

void Simulator::spot_notice(Time now, NodeId n, Time notice) {
  const Cluster& cl = sched_->cluster();
  for (TaskId id : sched_->tasks_on_node(n)) {
    const Placement* p = sched_->placement_of(id);
    if (!p || p->capacity != ResourceType::spot) continue;
    const int ti = task_of_id_[id.index()];
    if (notice <= 0) {  // no notice: evicted now, as a spot_reclaim event always did
      ++preemptions_;
      ++metrics_->stats(std::size_t(ti)).preemptions;
      kill(ti, now, fmt::format("spot eviction: was preempted by another task (spot capacity reclaimed on {})", cl.node(n).name),
           "spot_eviction");
      continue;
    }
    if (!notice_at_.try_emplace(ti, now).second) continue;  // already noticed: the first notice stands
    auto& r = runs_[std::size_t(ti)];
    const Time at = notice < kMaxSimTime - now ? now + notice : kMaxSimTime;
    r.handles.push_back(q_.schedule(at, SpotEvictEv{ti, r.attempts.back().attempt, int(n.value)}));
  }
}

void Simulator::on_spot_notice(Time now, const SpotNoticeEv& e) {
  const io::SpotReclaimRateCfg& m = reclaim_models_[std::size_t(reclaim_model_of_node_[std::size_t(e.node)])];
  spot_notice(now, NodeId(e.node), from_seconds(m.notice_s));
  const double dt = faults_->reclaim_after_s(m.rate_per_node_h);
  if (dt < to_seconds(kMaxSimTime - now)) q_.schedule(now + std::max<Time>(1, from_seconds(dt)), SpotNoticeEv{e.node});
}

void Simulator::on_spot_evict(Time now, const SpotEvictEv& e) {
  const auto it = notice_at_.find(e.task);
  const Time at = it == notice_at_.end() ? now : it->second;
  ++preemptions_;
  ++metrics_->stats(std::size_t(e.task)).preemptions;  // (the group metric `preemptions`, as victim)
  kill(e.task, now,
       fmt::format("spot eviction: spot capacity reclaimed on {} (notice at {} s, {} s before the eviction{})",
                   sched_->cluster().node(NodeId(e.node)).name, format_seconds(at), format_seconds(now - at),
                   cfg(std::size_t(e.task)).checkpoint_on_notice ? "; work saved at the notice" : ""),
       "spot_eviction");
}

void Simulator::build_spot_reclaims() {
  if (!sc_.spot_reclaim) return;
  const Cluster& cl = sched_->cluster();
  // The entry of each pool and GPU model (index into reclaim_models_, -1 none); a pool's wins.
  std::vector<std::int32_t> by_pool(cl.pools().size(), -1), by_model(cl.models().size(), -1);
  auto add = [&](const io::SpotReclaimRateCfg& m) {
    reclaim_models_.push_back(m);
    return std::int32_t(reclaim_models_.size() - 1);
  };
  for (std::size_t p = 0; p < cl.pools().size(); ++p)
    if (auto it = sc_.spot_reclaim->pools.find(cl.pools()[p].name); it != sc_.spot_reclaim->pools.end()) by_pool[p] = add(it->second);
  for (std::size_t m = 0; m < cl.models().size(); ++m)
    if (auto it = sc_.spot_reclaim->gpu_models.find(cl.models()[m]); it != sc_.spot_reclaim->gpu_models.end())
      by_model[m] = add(it->second);
  reclaim_model_of_node_.assign(cl.size(), -1);
  // First reclaims in node order (the reclaim stream), as the node failures are drawn.
  for (std::size_t n = 0; n < cl.size(); ++n) {
    const Node& node = cl.node(NodeId(std::int32_t(n)));
    std::int32_t k = by_pool[node.pool.index()];
    if (k < 0 && node.model >= 0) k = by_model[std::size_t(node.model)];
    if (k < 0 || reclaim_models_[std::size_t(k)].rate_per_node_h <= 0) continue;
    reclaim_model_of_node_[n] = k;
    const double at = faults_->reclaim_after_s(reclaim_models_[std::size_t(k)].rate_per_node_h);
    if (at < to_seconds(kMaxSimTime)) q_.schedule(from_seconds(at), SpotNoticeEv{int(n)});
  }
}

void Simulator::on_demand(Time now, const DemandEv& e) {
  auto& r = runs_[std::size_t(e.task)];
  const auto& as = *cfg(std::size_t(e.task)).autoscaling;
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
  int floor_w = std::max(r.desired, cfg(std::size_t(e.task)).autoscaling->min_workers);
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
    if (!r.active || r.phase != TaskRun::running || !t.autoscaling->enabled || t.type != "RayJob") continue;
    int target = std::min(r.desired, std::max(t.autoscaling->min_workers, t.autoscaling->max_workers));
    bool added = false;
    while (r.workers_now < target) {
      if (!sched_->add_worker(r.id, now)) break;
      ++r.workers_now;
      added = true;
      if (t.autoscaling->scale_out != "aggressive") break;  // conservative: one worker per step
    }
    if (added && cost_) cost_rerate(ai, now);
    // Conservative scale-out takes its next step one second later (or at the next instant).
    if (added && r.workers_now < target)
      r.handles.push_back(q_.schedule(later(now, kMsPerSecond, int(i), "autoscaling", 1), DemandEv{int(i), r.attempts.back().attempt, r.desired}));
  }
}

}  // namespace sim
