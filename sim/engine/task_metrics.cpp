// Simulator::task_metrics: the per-task metrics derived from the attempts at the end of a run
// (docs/outputs.md "Per-task metrics").
#include <algorithm>

#include "sim/engine/simulator.hpp"

namespace sim {

using namespace libsched;

std::vector<TaskMetrics> Simulator::task_metrics() const {
  std::vector<TaskMetrics> out(runs_.size());
  for (std::size_t i = 0; i < runs_.size(); ++i) out[i] = task_metrics(i);
  return out;
}

Simulator::TaskTotals Simulator::totals_of(const std::vector<AttemptRecord>& attempts, Time tc) {
  TaskTotals t;
  t.attempts = std::int32_t(attempts.size());
  const AttemptRecord* last = nullptr;
  for (const auto& a : attempts) {
    if (a.start >= 0) {
      t.wait += a.start - a.submit;
      t.started = true;
      last = &a;
      Time held = (a.end >= 0 ? a.end : tc) - a.start;
      t.gpu_ms += (long double)a.gpu_milli * (long double)held;
      t.cpu_ms += (long double)a.cpu_milli * (long double)held;
      t.cost += billed_cost(a);
    } else {
      t.wait += std::max<Time>(0, tc - a.submit);
    }
  }
  if (last) {
    t.last_gpu_milli = last->gpu_milli;
    t.master_node = last->master_node;
    t.capacity = std::uint8_t(class_index(last->capacity));
  }
  return t;
}

namespace {
/// The fields TaskTotals and FoldedTotals share, copied from `from` to `to` (both ways).
template <class From, class To>
void copy_shared_totals(const From& from, To& to) {
  to.cost = from.cost;
  to.wait = from.wait;
  to.last_gpu_milli = from.last_gpu_milli;
  to.master_node = from.master_node;
  to.attempts = from.attempts;
  to.capacity = from.capacity;
  to.started = from.started;
}
}  // namespace

void Simulator::fold_totals(std::size_t ti, const TaskTotals& t) {
  FoldedTotals& f = totals_[ti];
  const auto gpu = detail::exact_int64(t.gpu_ms), cpu = detail::exact_int64(t.cpu_ms);
  if (gpu && cpu) {
    f.gpu_ms = *gpu;
    f.cpu_ms = *cpu;
  } else {
    f.gpu_ms = FoldedTotals::kWide;
    f.cpu_ms = 0;
    folded_wide_[ti] = {t.gpu_ms, t.cpu_ms};
  }
  copy_shared_totals(t, f);
}

Simulator::TaskTotals Simulator::folded_totals(std::size_t ti) const {
  const FoldedTotals& f = totals_[ti];
  TaskTotals t;
  if (f.gpu_ms == FoldedTotals::kWide) {
    const auto& [gpu, cpu] = folded_wide_.at(ti);
    t.gpu_ms = gpu;
    t.cpu_ms = cpu;
  } else {
    t.gpu_ms = static_cast<long double>(f.gpu_ms);
    t.cpu_ms = static_cast<long double>(f.cpu_ms);
  }
  copy_shared_totals(f, t);
  return t;
}

int Simulator::attempt_count(std::size_t ti) const {
  return compact_ && totals_[ti].attempts > 0 ? totals_[ti].attempts : int(runs_[ti].attempts.size());
}

bool Simulator::task_started(std::size_t ti) const {
  if (compact_ && totals_[ti].attempts > 0) return totals_[ti].started;  // folded (fold_ended)
  const auto& atts = runs_[ti].attempts;
  return std::any_of(atts.begin(), atts.end(), [](const AttemptRecord& a) { return a.start >= 0; });  // as totals_of
}

TaskMetrics Simulator::task_metrics(std::size_t i) const {
  const Time tc = censor_time();
  const Cluster& cl = sched_->cluster();
  const auto& t = cfg(i);
  const auto& r = runs_[i];
  const auto& st = metrics_->task_stats()[i];
  // A compact run's ended task: its attempts folded when it ended (fold_ended), the same sums.
  const TaskTotals a = compact_ && totals_[i].attempts > 0 ? folded_totals(i) : totals_of(r.attempts, tc);
  TaskMetrics m;
  const Time submit = from_seconds(ident_[i].submit_s);
  m.submitted = a.attempts > 0;
  m.run = std::max<Time>(1, r.duration);
  m.wait = a.wait;
  m.started = a.started;
  m.gpu_ms = a.gpu_ms;
  m.cpu_ms = a.cpu_ms;
  m.cost = a.cost;
  m.finished = st.finished;
  m.jct = m.submitted ? std::max<Time>(0, (st.finished ? st.end : tc) - submit) : 0;
  m.slowdown = double(m.jct) / double(m.run);
  m.bounded_slowdown = std::max(1.0, double(m.jct) / double(std::max<Time>(m.run, 10 * kMsPerSecond)));
  NodeId master = a.started && a.master_node >= 0 ? NodeId(a.master_node) : NodeId();
  m.pool = !t.pool.empty() ? std::string_view(t.pool) : master.valid() ? std::string_view(cl.pool(cl.node(master).pool).name) : std::string_view();
  if (a.started) {
    m.capacity = libsched::to_string(ResourceType(a.capacity));
    std::int32_t model = master.valid() ? cl.node(master).model : -1;
    m.gpu_model = a.last_gpu_milli > 0 && model >= 0 ? std::string_view(cl.models()[std::size_t(model)]) : std::string_view("cpu");
  } else {
    m.capacity = t.resource_type;
    m.gpu_model = model_label_[profile_of_[i]];
  }
  return m;
}

TaskMetrics Simulator::measured_task_metrics(std::size_t i) const {
  TaskMetrics m = task_metrics(i);
  if (!has_window()) return m;
  const Time submit = from_seconds(ident_[i].submit_s);
  m.submitted = m.submitted && submit >= window_lo_ && submit < window_hi_;
  m.gpu_ms = m.cpu_ms = 0;
  m.cost = 0;
  const Time tc = censor_time();
  for (const auto& a : runs_[i].attempts) {
    if (a.start < 0) continue;
    const Time held = window_overlap(a.start, a.end >= 0 ? a.end : tc);
    m.gpu_ms += (long double)a.gpu_milli * (long double)held;
    m.cpu_ms += (long double)a.cpu_milli * (long double)held;
    m.cost += a.capacity == "reserved" ? 0.0 : a.window_cost;
  }
  return m;
}

std::string Simulator::requested_model_label(const io::TaskCfg& t) const {
  std::string label = "cpu";
  if (t.replica) {
    if (t.replica->gpus > 0) {
      label.clear();
      for (const auto& g : t.replica->gpu_models) label += (label.empty() ? "" : "|") + g;
      if (label.empty()) label = "any";
    }
  } else if (!t.specs.empty()) {
    for (const auto& s : sc_.cluster.instance_specs)
      if (s.name == t.specs.front() && s.gpus > 0 && !s.gpu_model.empty()) label = s.gpu_model;
  }
  return label;
}

}  // namespace sim
