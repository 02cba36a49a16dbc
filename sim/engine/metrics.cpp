// sim::Metrics implementation (see metrics.hpp): wait accounting, the time series, the state log.
#include "sim/engine/metrics.hpp"

#include <algorithm>


namespace sim {

using namespace libsched;

Metrics::Metrics(const Cluster& cl, const WorkloadDistribution& workload, std::size_t tasks, bool keep_snapshots, Time window_lo,
                 Time window_hi)
    : stats_(tasks),
      keep_snapshots_(keep_snapshots),
      util_(window_lo, window_hi),
      wait_code_(tasks, -1),
      wait_since_(tasks, 0) {
  Snapshot s;
  s.gpu_up = cl.up_capacity().gpu_milli;
  s.cpu_up = cl.up_capacity().cpu_milli;
  util_.push(s, 0);
  if (!keep_snapshots_) return;
  frag_ = std::make_unique<FragmentationTracker>(cl, workload);
  s.frag_milli = frag_->running_total();
  snaps_.push(s);
}

Metrics::~Metrics() = default;

std::uint32_t Metrics::intern(const std::string& reason) {
  if (reason.empty()) return 0;
  auto it = reason_ids_.find(std::string_view(reason));
  if (it != reason_ids_.end()) return it->second;
  const auto id = std::uint32_t(reasons_.size());
  reasons_.push_back(reason);
  reason_ids_.emplace(std::string_view(reasons_.back()), id);
  return id;
}

void Metrics::set_wait(std::size_t ti, int code, Time now) {
  // The same code again: the interval goes on (its bucket gets now - since at the next change
  // either way, an exact integer sum), so nothing is touched (most calls at a long queue).
  if (wait_code_[ti] == std::int8_t(code)) return;
  auto& st = stats_[ti];
  Time dt = now - wait_since_[ti];
  if (dt > 0) {
    switch (wait_code_[ti]) {
      case -1: break;
      case int(WaitCode::waits_for_quota): st.wait_quota += dt; break;
      case int(WaitCode::waits_for_fragmentation): st.wait_fragmentation += dt; break;
      case int(WaitCode::waits_for_cpu_memory): st.wait_cpu_memory += dt; break;
      case int(WaitCode::blocked_by_node_policy): st.wait_node_policy += dt; break;
      case int(WaitCode::waits_for_idle_stability): st.wait_idle_stability += dt; break;
      case int(WaitCode::fits_after_preemption): st.wait_preemption += dt; break;
      default: st.wait_capacity += dt; break;  // capacity, queue, fits_now, never_fits by capacity
    }
  }
  wait_code_[ti] = std::int8_t(code);
  wait_since_[ti] = now;
}

void Metrics::close_waits(Time end) {
  for (std::size_t i = 0; i < wait_code_.size(); ++i)
    if (waiting(i)) set_wait(i, -1, end);
  std::vector<std::int8_t>().swap(wait_code_);
  std::vector<Time>().swap(wait_since_);
}

void Metrics::snapshot(Time now, Scheduler& sched, Time makespan_bound) {
  // O(1) from the counters the scheduler and the cluster keep; the fragmentation O(changed
  // nodes), incremental.
  const Cluster& cl = sched.cluster();
  Snapshot s;
  s.time = now;
  for (int c = 0; c < 4; ++c) s.gpu_by_class[c] = sched.allocated_gpu_milli(ResourceType(c));
  s.gpu_up = cl.up_capacity().gpu_milli;
  s.queue = sched.waiting_count();
  s.running = sched.running_count();
  s.cpu_alloc = cl.up_allocated_cpu_milli();
  s.cpu_up = cl.up_capacity().cpu_milli;
  util_.push(s, makespan_bound);
  if (!keep_snapshots_) return;  // (the cluster's changed-node list is left untaken: no one reads it)
  sched.take_changed_nodes(changed_);
  frag_->update(cl, changed_);
  s.frag_milli = frag_->running_total();
  snaps_.push(s);  // replaces a snapshot of the same instant
}

}  // namespace sim
