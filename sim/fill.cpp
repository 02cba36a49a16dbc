#include "sim/fill.hpp"

#include <stdexcept>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <fmt/format.h>

#include "libsched/fragmentation.hpp"
#include "libsched/scheduler.hpp"

namespace sim {

using namespace libsched;

namespace {

std::int64_t requested_milli(const TaskSpec& t) { return t.demand(0).gpu_milli; }

}  // namespace

FillResult run_fill(const Cluster& cluster, const std::vector<TaskSpec>& tasks, const FillOptions& opts) {
  if (tasks.empty()) throw std::invalid_argument("fill: the trace has no task");
  const double cluster_milli = double(cluster.total_capacity().gpu_milli);
  if (cluster_milli <= 0) throw std::invalid_argument("fill: the cluster has no GPU");

  // The workload distribution M: every replica shape of the trace, by popularity.
  std::vector<ReplicaShape> shapes;
  for (const auto& t : tasks) {
    shapes.push_back(t.options[0].head);
    for (int w = 0; w < t.workers; ++w) shapes.push_back(t.options[0].worker);
  }
  SchedulerOptions so;
  so.placement = opts.policy;
  so.seed = opts.seed;
  so.preemption = false;
  so.idle_reclaim = false;
  so.spot_eviction = false;
  so.workload = WorkloadDistribution::from_shapes(shapes);
  Scheduler s(cluster, so, opts.registry ? *opts.registry : Registry::builtin());
  FragmentationTracker frag(s.cluster(), so.workload);
  s.take_changed_nodes();

  // Portable shuffle: Fisher-Yates with Boost.Random (std::shuffle differs across libraries).
  boost::random::mt19937_64 rng(opts.seed);
  std::vector<std::size_t> order(tasks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i) {
    boost::random::uniform_int_distribution<std::size_t> d(0, i - 1);
    std::swap(order[i - 1], order[d(rng)]);
  }
  boost::random::uniform_int_distribution<std::size_t> pick(0, tasks.size() - 1);

  FillResult r;
  const int last_pct = int(opts.target_pct);
  const std::int64_t target_milli = std::int64_t(opts.target_pct / 100.0 * cluster_milli + 0.5);
  std::int64_t arrived = 0;
  std::int64_t allocated = 0;
  std::size_t failed = 0;
  int next_row = 0;
  auto emit_rows = [&]() {
    double pct = double(arrived) * 100.0 / cluster_milli;
    while (next_row <= last_pct && double(next_row) <= pct + 1e-9) {
      frag.update(s.cluster(), s.take_changed_nodes());
      r.rows.push_back(FillRow{next_row, double(allocated) * 100.0 / cluster_milli, frag.total() * 100.0 / cluster_milli, failed});
      ++next_row;
    }
  };
  emit_rows();
  std::size_t k = 0;
  while (arrived < target_milli && next_row <= last_pct) {
    const TaskSpec& src = k < order.size() ? tasks[order[k]] : tasks[pick(rng)];
    ++k;
    TaskSpec t = src;
    t.name = fmt::format("fill-{}", k);
    t.submit = 0;
    t.priority = 5;
    TaskId id = s.add_task(std::move(t));
    s.enqueue(id, 0);
    arrived += requested_milli(s.task(id));
    ++r.tasks_arrived;
    ScheduleResult res = s.schedule(0);
    if (res.started.empty()) {
      s.dequeue(id);
      ++failed;
    } else {
      ++r.tasks_placed;
      for (const auto& a : s.placement_of(id)->replicas) allocated += a.total_gpu_milli();
    }
    emit_rows();
  }
  // The last rows when the arrivals stopped exactly below a whole percent.
  while (next_row <= last_pct && double(arrived) * 100.0 / cluster_milli + 1e-9 >= double(next_row)) emit_rows();
  return r;
}

std::string fill_csv(const FillResult& r) {
  std::string out = "arrived_pct,allocated_gpu_pct,frag_gpu_pct,failed_tasks\n";
  for (const auto& row : r.rows)
    out += fmt::format("{},{:.4f},{:.4f},{}\n", row.arrived_pct, row.allocated_gpu_pct, row.frag_gpu_pct, row.failed_tasks);
  return out;
}

}  // namespace sim
