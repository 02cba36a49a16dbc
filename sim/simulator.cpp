// sim::Simulator implementation. See simulator.hpp for the lifecycle and timing contract and
// docs/outputs.md for every output column.
#include "sim/simulator.hpp"

#include "sim/io/limits.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/publish.hpp"

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

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool is_deterministic_error(const std::string& e) {
  return e == "image_unavailable" || e == "bad_command" || e == "invalid_data_path" || e == "gpu_oom";
}

ResourceType parse_rt(const std::string& s) {
  if (s == "reserved") return ResourceType::reserved;
  if (s == "pay_as_you_go") return ResourceType::pay_as_you_go;
  if (s == "spot") return ResourceType::spot;
  if (s == "idle") return ResourceType::idle;
  throw std::invalid_argument("unknown resource_type " + s);
}

IdleStability parse_stab(const std::string& s) {
  if (s == "high") return IdleStability::high;
  if (s == "medium") return IdleStability::medium;
  return IdleStability::low;
}

Queueing parse_queueing(const std::string& s) {
  if (s == "strict") return Queueing::strict;
  if (s == "backfill") return Queueing::backfill;
  return Queueing::greedy;
}

std::int64_t milli(double v) { return std::llround(v * 1000.0); }
std::int64_t mib(double gib) { return std::llround(gib * 1024.0); }

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
  auto text = [&](const std::string& path, const std::string& v) {
    std::string why = text_problem(v);
    if (!why.empty()) throw SimulationLimitError(fmt::format("{}: {}: {}: {}", file, path, shown(v), why));
  };
  text("name", sc.name);
  text("cluster.name", sc.cluster.name);
  text("cluster.region", sc.cluster.region);
  for (std::size_t i = 0; i < sc.cluster.instance_specs.size(); ++i)
    text(fmt::format("cluster.instance_specs[{}].name", i), sc.cluster.instance_specs[i].name);
  for (std::size_t p = 0; p < sc.cluster.pools.size(); ++p) {
    const auto& pool = sc.cluster.pools[p];
    text(fmt::format("cluster.pools[{}].name", p), pool.name);
    for (std::size_t g = 0; g < pool.node_groups.size(); ++g)
      text(fmt::format("cluster.pools[{}].node_groups[{}].prefix", p, g), pool.node_groups[g].prefix);
    for (std::size_t n = 0; n < pool.nodes.size(); ++n) text(fmt::format("cluster.pools[{}].nodes[{}].name", p, n), pool.nodes[n].name);
  }
  for (std::size_t i = 0; i < sc.tasks.size(); ++i) {
    const auto& t = sc.tasks[i];
    text(fmt::format("tasks[{}].name", i), t.name);
    text(fmt::format("tasks[{}].user", i), t.user);
    text(fmt::format("tasks[{}].tenant", i), t.tenant);
    text(fmt::format("tasks[{}].type", i), t.type);
    text(fmt::format("tasks[{}].pool", i), t.pool);
  }
  const double interval = sc.timeseries_interval_s;
  auto until = opt.until_s ? opt.until_s : sc.until_s;
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

struct Simulator::Rng {
  boost::random::mt19937_64 nodes;    // stochastic node failures
  boost::random::mt19937_64 precheck; // per-node health draws
  boost::random::mt19937_64 pull;     // image pull failures
  boost::random::mt19937_64 transient;// per-attempt transient failure times
};

/// Run-time state of one task (scenario order).
struct Simulator::TaskRun {
  TaskId id;
  std::vector<AttemptRecord> attempts;
  Time duration = 0;
  Time remaining = 0;                 // work still needed
  bool done = false;                  // reached a final state
  bool active = false;                // the current attempt holds resources
  enum Phase { none, precheck, pull, running, debug } phase = none;
  std::vector<EventHandle> handles;   // pending events of the current attempt
  int pull_failures = 0;
  std::vector<std::string> pending_faults;
  int workers_now = 0;
  int desired = 0;
  EventHandle scale_in = 0;
  Time queued_since = 0;
};

Simulator::Simulator(const io::Scenario& sc, SimOptions opt) : sc_(sc), opt_(std::move(opt)), rng_(std::make_unique<Rng>()) {
  seed_ = opt_.seed ? *opt_.seed : sc_.seed;
  auto u = opt_.until_s ? opt_.until_s : sc_.until_s;
  if (u) until_ = from_seconds(*u);
  // (An interval so long that interval x rows passes kMaxSimTime never limits anything.)
  if (sc_.timeseries_interval_s > 0 && sc_.timeseries_interval_s * double(kMaxTimeseriesRows - 1) < to_seconds(kMaxSimTime))
    ts_limit_ = std::max<Time>(1, from_seconds(sc_.timeseries_interval_s)) * Time(kMaxTimeseriesRows - 1);
  rng_->nodes.seed(splitmix(seed_ ^ 0x1111));
  rng_->precheck.seed(splitmix(seed_ ^ 0x2222));
  rng_->pull.seed(splitmix(seed_ ^ 0x3333));
  rng_->transient.seed(splitmix(seed_ ^ 0x4444));
  build();
}

Simulator::~Simulator() = default;

void Simulator::build() {
  Cluster c;
  // Intern every model named by a spec or inline replica first, in scenario order.
  for (const auto& s : sc_.cluster.instance_specs)
    if (!s.gpu_model.empty()) c.intern_model(s.gpu_model);
  for (const auto& t : sc_.tasks)
    if (t.replica)
      for (const auto& m : t.replica->gpu_models) c.intern_model(m);
  int rack_next = 0, switch_next = 0;
  std::map<std::string, int> rack_names;
  for (const auto& p : sc_.cluster.pools) {
    PoolId pid = c.add_pool(p.name, p.kind == "dedicated" ? PoolKind::dedicated : PoolKind::shared);
    int pool_switch = -1;
    for (const auto& g : p.node_groups) {
      int npr = g.nodes_per_rack > 0 ? g.nodes_per_rack : std::max(1, g.count);
      int racks = (g.count + npr - 1) / npr;
      int rack_base = rack_next;
      rack_next += std::max(1, racks);
      int switch_base = switch_next;
      if (g.racks_per_switch > 0) {
        switch_next += (std::max(1, racks) + g.racks_per_switch - 1) / g.racks_per_switch;
      } else {
        if (pool_switch < 0) pool_switch = switch_next++;
      }
      for (int i = 0; i < g.count; ++i) {
        NodeDesc d;
        d.name = g.prefix + std::to_string(i);
        d.pool = pid;
        d.gpu_model = g.gpu_model;
        d.gpus = g.gpus;
        d.cpu_milli = milli(g.vcpu);
        d.mem_mib = mib(g.memory_gib);
        int local_rack = i / npr;
        d.rack = rack_base + local_rack;
        d.switch_id = g.racks_per_switch > 0 ? switch_base + local_rack / g.racks_per_switch : pool_switch;
        d.labels = g.labels;
        c.add_node(d);
        node_unhealthy_.push_back(g.unhealthy_prob);
        node_mtbf_.emplace_back(g.mtbf_s, g.mttr_s);
      }
    }
    for (const auto& n : p.nodes) {
      NodeDesc d;
      d.name = n.name;
      d.pool = pid;
      d.gpu_model = n.gpu_model;
      d.gpus = n.gpus;
      d.cpu_milli = milli(n.vcpu);
      d.mem_mib = mib(n.memory_gib);
      if (!n.rack.empty()) {
        auto it = rack_names.find(n.rack);
        if (it == rack_names.end()) it = rack_names.emplace(n.rack, rack_next++).first;
        d.rack = it->second;
      } else {
        d.rack = rack_next++;
      }
      if (pool_switch < 0) pool_switch = switch_next++;
      d.switch_id = pool_switch;
      d.labels = n.labels;
      c.add_node(d);
      node_unhealthy_.push_back(0);
      node_mtbf_.emplace_back(0, 0);
    }
  }

  // Tasks -> TaskSpec (needs the interned models).
  auto find_spec = [&](const std::string& name) -> const io::InstanceSpecCfg& {
    for (const auto& s : sc_.cluster.instance_specs)
      if (s.name == name) return s;
    throw std::invalid_argument("unknown instance spec " + name);
  };
  auto shape_of = [&](const io::InstanceSpecCfg& s, int cpn) {
    ReplicaShape r;
    r.num_gpu = s.gpus * cpn;
    r.gpu_milli = s.gpus > 0 ? s.gpu_milli : kMilliPerGpu;
    r.cpu_milli = milli(s.vcpu) * cpn;
    r.mem_mib = mib(s.memory_gib) * cpn;
    r.models = s.gpu_model.empty() ? 0 : c.model_bit(c.find_model(s.gpu_model));
    return r;
  };
  std::vector<TaskSpec> specs;
  std::vector<ReplicaShape> shapes;
  for (std::size_t i = 0; i < sc_.tasks.size(); ++i) {
    const auto& t = sc_.tasks[i];
    if (task_index_.count(t.name)) throw std::invalid_argument("duplicate task name " + t.name);
    task_index_[t.name] = int(i);
    TaskSpec s;
    s.name = t.name;
    s.user = t.user;
    s.tenant = t.tenant;
    s.type = t.type == "RayJob" ? TaskType::ray_job : TaskType::pytorch_job;
    s.resource_type = parse_rt(t.resource_type);
    if (!t.pool.empty()) {
      s.pool = c.find_pool(t.pool);
      if (!s.pool.valid()) throw std::invalid_argument("task " + t.name + ": unknown pool " + t.pool);
    }
    s.priority = t.priority;
    s.guarantee = t.guarantee;
    s.accept_idle = t.accept_idle;
    s.prefer_idle = t.prefer_idle;
    s.idle_stability = parse_stab(t.idle_stability);
    bool autoscale = s.type == TaskType::ray_job && t.autoscaling.enabled;
    s.workers = autoscale ? t.autoscaling.min_workers : t.workers;
    s.submit = from_seconds(t.submit_s);
    s.runtime_estimate = t.runtime_estimate_s ? from_seconds(*t.runtime_estimate_s) : -1;
    s.checkpoint_interval = t.checkpoint_interval_s ? from_seconds(*t.checkpoint_interval_s) : 0;
    s.selected_policies = t.node_policies;
    if (t.replica) {
      ReplicaShape r;
      r.num_gpu = t.replica->gpus;
      r.gpu_milli = t.replica->gpus > 0 ? t.replica->gpu_milli : kMilliPerGpu;
      r.cpu_milli = milli(t.replica->vcpu);
      r.mem_mib = mib(t.replica->memory_gib);
      for (const auto& m : t.replica->gpu_models) r.models |= c.model_bit(c.find_model(m));
      s.options.push_back(GangOption{"", r, r});
    }
    for (const auto& name : t.specs) {
      ReplicaShape w = shape_of(find_spec(name), t.count_per_node);
      ReplicaShape h = (s.type == TaskType::ray_job && !t.head_spec.empty()) ? shape_of(find_spec(t.head_spec), t.count_per_node) : w;
      s.options.push_back(GangOption{name, h, w});
    }
    if (!s.options.empty()) {
      shapes.push_back(s.options[0].head);
      for (int k = 0; k < s.workers; ++k) shapes.push_back(s.options[0].worker);
    }
    specs.push_back(std::move(s));
  }
  workload_ = WorkloadDistribution::from_shapes(shapes);

  // Node policies.
  std::vector<NodePolicy> policies;
  for (const auto& pc : sc_.node_policies) {
    NodePolicy p;
    p.name = pc.name;
    p.type = pc.type == "NodeIn" ? NodePolicyType::node_in : NodePolicyType::node_not_in;
    p.scope = pc.scope == "user" ? PolicyScope::user : PolicyScope::tenant;
    p.effect = pc.effect == "explicit" ? PolicyEffect::explicit_effect : PolicyEffect::default_effect;
    p.user = pc.user;
    p.tenant = pc.tenant;
    for (const auto& w : pc.workload_types) p.workload_types.push_back(w == "RayJob" ? TaskType::ray_job : TaskType::pytorch_job);
    for (const auto& n : pc.nodes) {
      NodeId id = c.find_node(n);
      if (!id.valid()) throw std::invalid_argument("node policy " + pc.name + ": unknown node " + n);
      p.nodes.push_back(id);
    }
    p.created = from_seconds(pc.created_s);
    p.expire = pc.expire_s ? from_seconds(*pc.expire_s) : kTimeNever;
    policies.push_back(std::move(p));
  }

  // Quotas.
  std::vector<std::pair<QuotaKey, Resources>> quotas;
  for (const auto& qc : sc_.quotas) {
    PoolId pid = c.find_pool(qc.pool);
    if (!qc.pool.empty() && !pid.valid()) throw std::invalid_argument("quota of " + qc.user + ": unknown pool " + qc.pool);
    quotas.push_back({QuotaKey{qc.user, parse_rt(qc.resource_type), pid}, Resources{milli(qc.gpus), milli(qc.vcpu), mib(qc.memory_gib)}});
  }

  SchedulerOptions so;
  so.placement = sc_.scheduler.placement;
  so.preemption = sc_.scheduler.preemption;
  so.idle_reclaim = sc_.scheduler.idle_reclaim;
  so.spot_eviction = sc_.scheduler.spot_eviction;
  so.queueing = parse_queueing(sc_.scheduler.queueing);
  so.idle_stability_high = from_seconds(sc_.scheduler.idle_stability_high_s);
  so.idle_stability_medium = from_seconds(sc_.scheduler.idle_stability_medium_s);
  so.seed = seed_;
  so.workload = workload_;
  sched_ = std::make_unique<Scheduler>(std::move(c), so, opt_.registry ? *opt_.registry : PlacementRegistry::builtin());
  for (auto& p : policies) sched_->add_node_policy(std::move(p));
  for (auto& [k, r] : quotas) sched_->quotas().set_limit(k, r);

  runs_.resize(specs.size());
  stats_.resize(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    TaskId id = sched_->add_task(std::move(specs[i]));
    runs_[i].id = id;
    runs_[i].duration = from_seconds(sc_.tasks[i].duration_s);
    runs_[i].remaining = runs_[i].duration;
    task_of_id_.push_back(int(i));
    q_.schedule(from_seconds(sc_.tasks[i].submit_s), SubmitEv{int(i)});
    ++fixed_pending_;
  }
  live_tasks_ = int(runs_.size());

  // Injected events.
  const Cluster& cl = sched_->cluster();
  auto node_idx = [&](const std::string& n) {
    NodeId id = cl.find_node(n);
    if (!id.valid()) throw std::invalid_argument("event: unknown node " + n);
    return int(id.value);
  };
  for (const auto& e : sc_.events) {
    Time at = from_seconds(e.at_s);
    if (e.kind == "node_down") {
      q_.schedule(at, NodeDownEv{node_idx(e.node), false});
    } else if (e.kind == "node_up") {
      q_.schedule(at, NodeUpEv{node_idx(e.node), false});
    } else if (e.kind == "task_fault") {
      auto it = task_index_.find(e.task);
      if (it == task_index_.end()) throw std::invalid_argument("event: unknown task " + e.task);
      q_.schedule(at, TaskFaultEv{it->second, e.error});
    } else if (e.kind == "spot_reclaim") {
      SpotReclaimEv ev;
      if (!e.node.empty()) ev.nodes.push_back(node_idx(e.node));
      for (const auto& n : e.nodes) ev.nodes.push_back(node_idx(n));
      q_.schedule(at, std::move(ev));
    } else {
      throw std::invalid_argument("unknown event kind " + e.kind);
    }
    ++fixed_pending_;
  }
  for (const auto& p : sched_->node_policies()) {
    if (p.created > 0) {
      q_.schedule(p.created, PolicyTickEv{p.name});
      policy_ticks_.push_back(p.created);
      ++fixed_pending_;
    }
    if (p.expire != kTimeNever) {
      q_.schedule(p.expire, PolicyTickEv{p.name});
      policy_ticks_.push_back(p.expire);
      ++fixed_pending_;
    }
  }
  std::sort(policy_ticks_.begin(), policy_ticks_.end());
  // Stochastic node failures, node order.
  for (std::size_t n = 0; n < node_mtbf_.size(); ++n) {
    if (node_mtbf_[n].first <= 0) continue;
    boost::random::exponential_distribution<double> d(1.0 / node_mtbf_[n].first);
    double at = d(rng_->nodes);
    if (at < to_seconds(kMaxSimTime)) q_.schedule(from_seconds(at), NodeDownEv{int(n), true});
  }
  snaps_.push_back(Snapshot{});
  snaps_.back().gpu_up = cl.up_capacity().gpu_milli;
  snaps_.back().cpu_up = cl.up_capacity().cpu_milli;
  node_cpu_used_.assign(cl.nodes().size(), 0);
  frag_ = std::make_unique<FragmentationTracker>(cl, workload_);
  sched_->take_changed_nodes();
  snaps_.back().frag_milli = frag_->running_total();
  wait_code_.assign(runs_.size(), -1);
  wait_since_.assign(runs_.size(), 0);
  for (std::size_t i = 0; i < sc_.tasks.size(); ++i)
    if (sc_.tasks[i].autoscaling.enabled && sc_.tasks[i].type == "RayJob") autoscaled_.push_back(int(i));
}

const TaskSpec& Simulator::task_spec(std::size_t ti) const { return sched_->task(runs_[ti].id); }

std::vector<TaskMetrics> Simulator::task_metrics() const {
  const Time tc = censor_time();
  const Cluster& cl = sched_->cluster();
  std::vector<TaskMetrics> out(sc_.tasks.size());
  for (std::size_t i = 0; i < sc_.tasks.size(); ++i) {
    const auto& t = sc_.tasks[i];
    const auto& r = runs_[i];
    const auto& st = stats_[i];
    auto& m = out[i];
    const Time submit = from_seconds(t.submit_s);
    m.submitted = !r.attempts.empty();
    m.run = std::max<Time>(1, r.duration);
    const AttemptRecord* last = nullptr;
    for (const auto& a : r.attempts) {
      if (a.start >= 0) {
        m.wait += a.start - a.submit;
        m.started = true;
        last = &a;
        Time held = (a.end >= 0 ? a.end : tc) - a.start;
        m.gpu_ms += (long double)a.gpu_milli * (long double)held;
        m.cpu_ms += (long double)a.cpu_milli * (long double)held;
      } else {
        m.wait += std::max<Time>(0, tc - a.submit);
      }
    }
    m.finished = st.finished;
    m.jct = m.submitted ? std::max<Time>(0, (st.finished ? st.end : tc) - submit) : 0;
    m.slowdown = double(m.jct) / double(m.run);
    m.bounded_slowdown = std::max(1.0, double(m.jct) / double(std::max<Time>(m.run, 10 * kMsPerSecond)));
    NodeId master = last && !last->nodes.empty() ? cl.find_node(last->nodes.front()) : NodeId();
    m.pool = !t.pool.empty() ? t.pool : master.valid() ? cl.pool(cl.node(master).pool).name : std::string();
    if (last) {
      m.capacity = last->capacity;
      std::int32_t model = master.valid() ? cl.node(master).model : -1;
      m.gpu_model = last->gpu_milli > 0 && model >= 0 ? cl.models()[std::size_t(model)] : "cpu";
    } else {
      m.capacity = t.resource_type;
      m.gpu_model = "cpu";
      if (t.replica) {
        if (t.replica->gpus > 0) {
          m.gpu_model.clear();
          for (const auto& g : t.replica->gpu_models) m.gpu_model += (m.gpu_model.empty() ? "" : "|") + g;
          if (m.gpu_model.empty()) m.gpu_model = "any";
        }
      } else if (!t.specs.empty()) {
        for (const auto& s : sc_.cluster.instance_specs)
          if (s.name == t.specs.front() && s.gpus > 0 && !s.gpu_model.empty()) m.gpu_model = s.gpu_model;
      }
    }
  }
  return out;
}

std::vector<const AttemptRecord*> Simulator::attempts() const {
  std::vector<const AttemptRecord*> v;
  for (const auto& r : runs_)
    for (const auto& a : r.attempts) v.push_back(&a);
  return v;
}

void Simulator::change(int ti, Time now, AttemptState from, AttemptState to, const std::string& reason) {
  auto& r = runs_[std::size_t(ti)];
  changes_.push_back(StateChange{now, ti, r.attempts.back().attempt,
                                 from == to && to == AttemptState::queued ? "" : std::string(to_string(from)),
                                 std::string(to_string(to)), reason});
  r.attempts.back().state = to;
}

bool Simulator::retriable(const std::string& kind) const {
  if (is_deterministic_error(kind)) return false;
  const auto& ro = sc_.scheduler.retry_on;
  return std::find(ro.begin(), ro.end(), kind) != ro.end();
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
  const auto& t = sc_.tasks[std::size_t(ti)];
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
  s.runtime_estimate = t.runtime_estimate_s ? std::max<Time>(0, from_seconds(*t.runtime_estimate_s) - (r.duration - r.remaining)) : -1;
  sched_->enqueue(r.id, now);
  set_wait(ti, int(WaitCode::waits_for_capacity), now);
  change(ti, now, AttemptState::queued, AttemptState::queued, "");
}

void Simulator::on_started(TaskId id, Time now) {
  int ti = task_of_id_[id.index()];
  auto& r = runs_[std::size_t(ti)];
  auto& a = r.attempts.back();
  const Placement* p = sched_->placement_of(id);
  const Cluster& cl = sched_->cluster();
  set_wait(ti, -1, now);
  a.start = now;
  a.spec = sched_->task(id).options[p->option].label;
  a.capacity = std::string(libsched::to_string(p->capacity));
  a.gpu_milli = 0;
  for (const auto& rep : p->replicas) {
    a.nodes.push_back(cl.node(rep.node).name);
    a.gpu_milli += rep.total_gpu_milli();
    a.cpu_milli += rep.cpu_milli;
  }
  r.active = true;
  ++active_;
  r.pull_failures = 0;
  r.workers_now = sched_->task(id).workers;
  r.desired = r.workers_now;
  if (!r.pending_faults.empty()) {
    std::string err = r.pending_faults.front();
    r.pending_faults.erase(r.pending_faults.begin());
    change(ti, now, AttemptState::queued, AttemptState::running, "");
    end_attempt(ti, now, AttemptState::failed, err + ": injected task fault", err, false);
    return;
  }
  begin_phase(ti, now);
}

void Simulator::begin_phase(int ti, Time now) {
  auto& r = runs_[std::size_t(ti)];
  const auto& t = sc_.tasks[std::size_t(ti)];
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
  const auto& t = sc_.tasks[std::size_t(ti)];
  auto& a = r.attempts.back();
  r.phase = TaskRun::running;
  a.run_start = now;
  r.handles.push_back(q_.schedule(later(now, r.remaining, ti, "duration_s", t.duration_s), FinishEv{ti, a.attempt}));
  if (t.transient_failure_rate_per_h > 0) {
    boost::random::exponential_distribution<double> d(t.transient_failure_rate_per_h / 3600.0);
    double ttf_s = d(rng_->transient);  // compared in seconds first: a tiny rate draws huge times
    if (ttf_s < to_seconds(r.remaining) + 1) {
      Time ttf = from_seconds(ttf_s);
      if (ttf < r.remaining) r.handles.push_back(q_.schedule(now + ttf, TransientEv{ti, a.attempt}));
    }
  }
  if (t.type == "RayJob" && t.autoscaling.enabled) {
    for (const auto& st : t.autoscaling.demand) {
      int w = std::clamp(st.workers, t.autoscaling.min_workers, std::max(t.autoscaling.min_workers, t.autoscaling.max_workers));
      r.handles.push_back(q_.schedule(later(now, from_seconds(st.at_s), ti, "autoscaling.demand[].at_s", st.at_s), DemandEv{ti, a.attempt, w}));
    }
  }
}

void Simulator::end_attempt(int ti, Time now, AttemptState st, const std::string& reason, const std::string& retry_kind,
                            bool already_released) {
  auto& r = runs_[std::size_t(ti)];
  auto& a = r.attempts.back();
  const auto& t = sc_.tasks[std::size_t(ti)];
  cancel_attempt_events(ti);
  if (r.phase == TaskRun::running) {
    Time e = now - a.run_start;
    Time c = sched_->task(r.id).checkpoint_interval;
    Time saved = st == AttemptState::succeeded ? e : (c > 0 ? (e / c) * c : 0);
    a.work_done = e;
    a.lost_work = e - saved;
    r.remaining -= saved;
    stats_[std::size_t(ti)].lost_work += a.lost_work;
  }
  if (!already_released && r.active) sched_->release(r.id, now);
  if (r.active) --active_;
  r.active = false;
  r.phase = TaskRun::none;
  released_since_schedule_ = true;
  a.end = now;
  a.reason = reason;
  if (st == AttemptState::succeeded) a.end_reason = EndReason::succeeded;
  else if (st == AttemptState::stopped) a.end_reason = EndReason::run_end;
  else if (a.end_reason == EndReason::never_started) a.end_reason = end_reason_of_failure(retry_kind);
  change(ti, now, a.state, st, reason);
  makespan_ = std::max(makespan_, now);
  auto& s = stats_[std::size_t(ti)];
  if (st == AttemptState::failed && retriable(retry_kind) && s.resubmissions < t.fault_tolerance.max_resubmissions) {
    ++s.resubmissions;
    enqueue_attempt(ti, now);
    return;
  }
  r.done = true;
  s.finished = st == AttemptState::succeeded || st == AttemptState::failed;
  s.succeeded = st == AttemptState::succeeded;
  s.end = now;
  --live_tasks_;
}

void Simulator::finish_entrypoint(int ti, Time now) {
  auto& r = runs_[std::size_t(ti)];
  const auto& t = sc_.tasks[std::size_t(ti)];
  if (t.type == "RayJob" && t.debug) {
    auto& a = r.attempts.back();
    a.work_done = now - a.run_start;
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

void Simulator::handle(Time now, Event& ev) {
  const Cluster& cl = sched_->cluster();
  auto current = [&](int ti, int attempt) {
    const auto& r = runs_[std::size_t(ti)];
    return r.active && !r.attempts.empty() && r.attempts.back().attempt == attempt;
  };
  // Ends whatever attempt of task `ti` holds resources because of an outside cause.
  auto kill = [&](int ti, const std::string& reason, const std::string& kind) {
    auto& r = runs_[std::size_t(ti)];
    if (r.phase == TaskRun::debug) release_debug(ti, now);  // debug hold cut short; entrypoint already succeeded
    else end_attempt(ti, now, AttemptState::failed, reason, kind, false);
  };
  std::visit(
      [&](auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, SubmitEv>) {
          --fixed_pending_;
          enqueue_attempt(e.task, now);
        } else if constexpr (std::is_same_v<T, NodeDownEv>) {
          if (!e.stochastic) --fixed_pending_;
          NodeId n(e.node);
          if (cl.node(n).up) {
            node_changes_.push_back(NodeChange{now, changes_.size(), cl.node(n).name, false, e.stochastic});
            for (TaskId id : sched_->tasks_on_node(n))
              kill(task_of_id_[id.index()], fmt::format("node_failure: node {} went down", cl.node(n).name), "node_failure");
            sched_->set_node_up(n, false, now);
            released_since_schedule_ = true;
          }
          if (e.stochastic) {
            boost::random::exponential_distribution<double> d(1.0 / std::max(1e-9, node_mtbf_[std::size_t(e.node)].second));
            double dt = d(rng_->nodes);
            if (dt < to_seconds(kMaxSimTime - now)) q_.schedule(now + std::max<Time>(1, from_seconds(dt)), NodeUpEv{e.node, true});
          }
        } else if constexpr (std::is_same_v<T, NodeUpEv>) {
          if (!e.stochastic) --fixed_pending_;
          NodeId n(e.node);
          if (!cl.node(n).up) {
            node_changes_.push_back(NodeChange{now, changes_.size(), cl.node(n).name, true, e.stochastic});
            sched_->set_node_up(n, true, now);
            released_since_schedule_ = true;
          }
          if (e.stochastic) {
            boost::random::exponential_distribution<double> d(1.0 / node_mtbf_[std::size_t(e.node)].first);
            double dt = d(rng_->nodes);
            if (dt < to_seconds(kMaxSimTime - now)) q_.schedule(now + std::max<Time>(1, from_seconds(dt)), NodeDownEv{e.node, true});
          }
        } else if constexpr (std::is_same_v<T, TaskFaultEv>) {
          --fixed_pending_;
          auto& r = runs_[std::size_t(e.task)];
          if (r.done || r.phase == TaskRun::debug) return;  // nothing left to hit
          if (r.active) end_attempt(e.task, now, AttemptState::failed, e.error + ": injected task fault", e.error, false);
          else r.pending_faults.push_back(e.error);
        } else if constexpr (std::is_same_v<T, SpotReclaimEv>) {
          --fixed_pending_;
          for (int node : e.nodes) {
            NodeId n(node);
            for (TaskId id : sched_->tasks_on_node(n)) {
              const Placement* p = sched_->placement_of(id);
              if (!p || p->capacity != ResourceType::spot) continue;
              ++preemptions_;
              kill(task_of_id_[id.index()],
                   fmt::format("spot eviction: was preempted by another task (spot capacity reclaimed on {})", cl.node(n).name),
                   "spot_eviction");
            }
          }
        } else if constexpr (std::is_same_v<T, PolicyTickEv>) {
          --fixed_pending_;
        } else if constexpr (std::is_same_v<T, WakeEv>) {
          wake_handle_ = 0;
          wake_at_ = -1;
        } else if constexpr (std::is_same_v<T, StartupEv>) {
          if (!current(e.task, e.attempt)) return;
          auto& r = runs_[std::size_t(e.task)];
          const auto& t = sc_.tasks[std::size_t(e.task)];
          if (e.phase == 0) {
            for (const auto& name : r.attempts.back().nodes) {
              NodeId n = cl.find_node(name);
              double p = node_unhealthy_[n.index()];
              if (p > 0 && boost::random::bernoulli_distribution<double>(p)(rng_->precheck)) {
                end_attempt(e.task, now, AttemptState::failed, fmt::format("precheck_failure: node {} is unhealthy", name),
                            "precheck_failure", false);
                return;
              }
            }
            begin_phase(e.task, now);
          } else {
            bool fail = t.image_pull_failure_prob > 0 &&
                        boost::random::bernoulli_distribution<double>(t.image_pull_failure_prob)(rng_->pull);
            if (!fail) {
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
            r.handles.push_back(
                q_.schedule(later(now, from_seconds(t.image_pull_s), e.task, "image_pull_s", t.image_pull_s), StartupEv{e.task, e.attempt, 1}));
          }
        } else if constexpr (std::is_same_v<T, FinishEv>) {
          if (current(e.task, e.attempt)) finish_entrypoint(e.task, now);
        } else if constexpr (std::is_same_v<T, TransientEv>) {
          if (current(e.task, e.attempt))
            end_attempt(e.task, now, AttemptState::failed, "transient: stochastic failure", "transient", false);
        } else if constexpr (std::is_same_v<T, DebugReleaseEv>) {
          if (current(e.task, e.attempt)) release_debug(e.task, now);
        } else if constexpr (std::is_same_v<T, DemandEv>) {
          if (!current(e.task, e.attempt)) return;
          auto& r = runs_[std::size_t(e.task)];
          r.desired = e.workers;
          if (r.desired < r.workers_now) {
            if (!r.scale_in)
              r.scale_in = q_.schedule(later(now, from_seconds(sc_.tasks[std::size_t(e.task)].autoscaling.idle_reclaim_s), e.task,
                                             "autoscaling.idle_reclaim_s", sc_.tasks[std::size_t(e.task)].autoscaling.idle_reclaim_s),
                                       ScaleInEv{e.task, e.attempt});
          } else if (r.scale_in) {
            q_.cancel(r.scale_in);
            r.scale_in = 0;
          }
        } else if constexpr (std::is_same_v<T, ScaleInEv>) {
          if (!current(e.task, e.attempt)) return;
          auto& r = runs_[std::size_t(e.task)];
          r.scale_in = 0;
          int floor_w = std::max(r.desired, sc_.tasks[std::size_t(e.task)].autoscaling.min_workers);
          while (r.workers_now > floor_w && sched_->remove_worker(r.id, now)) {
            --r.workers_now;
            released_since_schedule_ = true;
          }
        }
      },
      ev);
}

void Simulator::autoscale(Time now) {
  for (int ai : autoscaled_) {
    std::size_t i = std::size_t(ai);
    auto& r = runs_[i];
    const auto& t = sc_.tasks[i];
    if (!r.active || r.phase != TaskRun::running || !t.autoscaling.enabled || t.type != "RayJob") continue;
    int target = std::min(r.desired, std::max(t.autoscaling.min_workers, t.autoscaling.max_workers));
    bool added = false;
    while (r.workers_now < target) {
      if (!sched_->add_worker(r.id, now)) break;
      ++r.workers_now;
      added = true;
      if (t.autoscaling.scale_out != "aggressive") break;  // conservative: one worker per step
    }
    // Conservative scale-out takes its next step one second later (or at the next instant).
    if (added && r.workers_now < target)
      r.handles.push_back(q_.schedule(later(now, kMsPerSecond, int(i), "autoscaling", 1), DemandEv{int(i), r.attempts.back().attempt, r.desired}));
  }
}

void Simulator::set_wait(int ti, int code, Time now) {
  auto& st = stats_[std::size_t(ti)];
  Time dt = now - wait_since_[std::size_t(ti)];
  if (dt > 0) {
    switch (wait_code_[std::size_t(ti)]) {
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
  wait_code_[std::size_t(ti)] = std::int8_t(code);
  wait_since_[std::size_t(ti)] = now;
}

void Simulator::take_snapshot(Time now) {
  // O(changed nodes): counters kept by the scheduler and cluster, fragmentation incremental.
  const Cluster& cl = sched_->cluster();
  Snapshot s;
  s.time = now;
  for (int c = 0; c < 4; ++c) s.gpu_by_class[c] = sched_->allocated_gpu_milli(ResourceType(c));
  s.gpu_up = cl.up_capacity().gpu_milli;
  s.queue = sched_->waiting_count();
  s.running = sched_->running_count();
  std::vector<NodeId> changed = sched_->take_changed_nodes();
  for (NodeId id : changed) {
    const Node& n = cl.node(id);
    std::int64_t used = n.up ? n.capacity.cpu_milli - n.free.cpu_milli : 0;
    cpu_alloc_ += used - node_cpu_used_[id.index()];
    node_cpu_used_[id.index()] = used;
  }
  s.cpu_alloc = cpu_alloc_;
  s.cpu_up = cl.up_capacity().cpu_milli;
  frag_->update(cl, changed);
  s.frag_milli = frag_->running_total();
  if (!snaps_.empty() && snaps_.back().time == now) snaps_.back() = s;
  else snaps_.push_back(s);
}

void Simulator::instant_end(Time now) {
  for (int round = 0; round < 100; ++round) {
    released_since_schedule_ = false;
    ScheduleResult res = sched_->schedule(now);
    for (const auto& p : res.preemptions) {
      ++preemptions_;
      int ti = task_of_id_[p.victim.index()];
      auto& r = runs_[std::size_t(ti)];
      if (r.phase == TaskRun::debug) {
        r.phase = TaskRun::none;
        end_attempt(ti, now, AttemptState::succeeded, "", "", true);
        continue;
      }
      std::string reason = fmt::format("was preempted by another task: {} ({})", sched_->task(p.preemptor).name,
                                       libsched::to_string(p.kind));
      r.attempts.back().preemptor = sched_->task(p.preemptor).name;
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
  // requests get identical diagnoses at one instant (memoised by request signature; a
  // per-task blocked_by_queue status is never shared).
  // The wait is attributed to the status's primary (first binding) constraint.
  std::map<std::uint64_t, WaitCode> memo;
  for (TaskId id : sched_->take_visited_waiting()) {
    std::uint64_t sig = sched_->request_signature(id, now);
    auto it = sig ? memo.find(sig) : memo.end();
    WaitCode code;
    if (it != memo.end()) {
      code = it->second;
    } else {
      WaitStatus ws = sched_->explain(id, now);
      code = ws.primary();
      if (sig && ws.code != WaitCode::blocked_by_queue) memo.emplace(sig, code);
    }
    set_wait(task_of_id_[id.index()], int(code), now);
  }
  take_snapshot(now);
}

std::string Simulator::file_label() const { return !sc_.file.empty() ? sc_.file : !sc_.name.empty() ? sc_.name : "<scenario>"; }

Time Simulator::later(Time now, Time dt, int ti, const char* key, double value) const {
  if (dt <= kMaxSimTime - now) return now + dt;
  throw SimulationLimitError(fmt::format(
      "{}: tasks[{}].{}: {}: simulated time would pass {} s (the simulator's bound) at t = {} s for task {}; "
      "likely a cycle without end (e.g. an image pull retried without limit, image_pull_retries -1)",
      file_label(), ti, key, value, format_seconds(kMaxSimTime), format_seconds(now), sc_.tasks[std::size_t(ti)].name));
}

void Simulator::stuck_error(Time now, std::uint64_t n, const Event& last) const {
  // Name the likely cause from the event that broke the bound.
  std::string path = "<root>", value = "-", cause = "a cycle of zero-duration steps";
  auto task = [&](int ti, const char* key, double v, const std::string& why) {
    const auto& t = sc_.tasks[std::size_t(ti)];
    path = fmt::format("tasks[{}].{}", ti, key);
    value = fmt::format("{}", v);
    cause = fmt::format("task {}: {}", t.name, why);
  };
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        const io::TaskCfg* t = nullptr;
        if constexpr (!std::is_same_v<T, NodeDownEv> && !std::is_same_v<T, NodeUpEv> && !std::is_same_v<T, SpotReclaimEv> &&
                      !std::is_same_v<T, PolicyTickEv> && !std::is_same_v<T, WakeEv>)
          t = &sc_.tasks[std::size_t(e.task)];
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
          task(e.task, "duration_s", t->duration_s, "attempts shorter than 1 ms");
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

void Simulator::run() {
  check_runtime_bounds(sc_, opt_);
  const Cluster& cl = sched_->cluster();
  const std::uint64_t cap = opt_.max_events_per_instant ? opt_.max_events_per_instant : events_per_instant_cap(sc_);
  Time last = 0;
  bool cut = false;
  while (live_tasks_ > 0) {
    auto nt = q_.next_time();
    if (!nt) break;
    if (*nt > until_) {
      cut = true;
      break;
    }
    Time now = *nt;
    if (now > ts_limit_)
      throw SimulationLimitError(fmt::format(
          "{}: timeseries_interval_s: {}: simulated time reached {} s, past the {} rows timeseries.csv may hold "
          "(interval x {}); use a larger timeseries_interval_s, 0 (automatic) or a smaller until_s",
          file_label(), sc_.timeseries_interval_s, format_seconds(now), kMaxTimeseriesRows, kMaxTimeseriesRows - 1));
    std::uint64_t at_now = 0;  // events at this instant: time must advance (runtime bound)
    do {
      while (q_.next_time() == now) {
        auto it = q_.step();
        ++events_;
        if (++at_now > cap) stuck_error(now, at_now - 1, it->event);
        handle(now, it->event);
        if ((events_ & 1023u) == 0) throw_if_interrupted();
        if (opt_.progress && (events_ & 4095u) == 0) opt_.progress(now, events_);
      }
      instant_end(now);
    } while (q_.next_time() == now);
    last = now;
    schedule_wake(now);
    if (active_ == 0 && fixed_pending_ == 0 && wake_handle_ == 0) {
      bool all_up = std::all_of(cl.nodes().begin(), cl.nodes().end(), [](const Node& n) { return n.up; });
      if (all_up) break;  // nothing left that can change the queue
    }
  }
  // Attempts still queued get the scheduler's own explanation, computed on the cluster as it
  // is at the end (at a cut: before the running attempts are stopped).
  auto explain_queued = [&](Time at) {
    for (auto& r : runs_) {
      if (r.attempts.empty() || r.attempts.back().state != AttemptState::queued) continue;
      r.attempts.back().reason = sched_->explain(r.id, at).reason;
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
  for (std::size_t i = 0; i < runs_.size(); ++i)
    if (wait_code_[i] >= 0) set_wait(int(i), -1, std::max(last, makespan_));
  Time end = std::max(last, makespan_);
  run_end_ = end;
  if (!cut) explain_queued(end);
  if (opt_.progress) opt_.progress(end, events_);
}

}  // namespace sim
