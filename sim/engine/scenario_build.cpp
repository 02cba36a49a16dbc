// Simulator::build: converts a scenario (seconds, vCPU, GiB, names) into libsched objects
// (ms, milli-vCPU, MiB, ids): the cluster with its racks and switches, the task specs and
// their candidate options, node policies, quotas and scheduler options; then schedules the
// submissions, injected events, policy ticks and first stochastic node failures.
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include <boost/container_hash/hash.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/io/key_sort.hpp"
#include "sim/io/throughput.hpp"

namespace sim {

using namespace libsched;

namespace {

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

}  // namespace

TaskSpec Simulator::make_spec(std::size_t i, std::string name) const {
  const TaskIdentity& ti = ident_[i];
  TaskSpec s = templates_[profile_of_[i]];
  s.name = std::move(name);
  s.submit = from_seconds(ti.submit_s);
  s.sequence = i;  // ties between equal ranks: scenario order, whatever id libsched hands out
  s.runtime_estimate = ti.runtime_estimate_s() ? from_seconds(*ti.runtime_estimate_s()) : -1;
  s.true_remaining = from_seconds(ti.duration_s);
  if (!sc_.throughput.empty())  // the first matching row (docs/heterogeneity.md)
    if (const io::ThroughputCfg* row = io::throughput_row(sc_.throughput, s.name))
      for (const auto& [model, speed] : row->speed) s.gpu_speed.push_back({model, speed});
  return s;
}

void Simulator::register_task(int ti) {
  auto& r = runs_[std::size_t(ti)];
  const TaskId id = sched_->add_task(make_spec(std::size_t(ti), names_[std::size_t(ti)]));  // checked by build()
  r.id = id;
  if (task_of_id_.size() <= id.index()) task_of_id_.resize(id.index() + 1, -1);
  task_of_id_[id.index()] = ti;
}

void Simulator::build() {
  // A compact run (SimOptions::keep_ended_tasks false) keeps everything where what it drops
  // would be read: costs (per attempt), a measurement window, an external scheduler, an
  // observer. Its task ids differ from a full run's (handed out at first submission, reused
  // after forget_task), which libsched's builtin plugins never read: every tie between equal
  // ranks goes by TaskSpec::sequence, the scenario index in both runs (make_spec). A plugin of
  // a custom registry (C++, Python) is given the task id and may read it or keep state by it:
  // such a run keeps every task.
  compact_ = !opt_.keep_ended_tasks && !sc_.prices && !sc_.measure && !opt_.external && !opt_.observer &&
             !(opt_.registry && opt_.registry != &Registry::builtin());
  Cluster c;
  // Intern every model named by a spec or inline replica first, in scenario order: the specs'
  // here, the tasks' in the pass below that makes the tasks compact.
  for (const auto& s : sc_.cluster.instance_specs)
    if (!s.gpu_model.empty()) c.intern_model(s.gpu_model);
  const std::size_t n_tasks = sc_.tasks.size();
  // The tasks made compact (Simulator::profiles_): each task's identity (name, submit_s,
  // duration_s, runtime_estimate_s) moved out, the rest shared with the tasks equal to it.
  // The scenario's task vector (about 600 bytes per task) is freed before libsched's task
  // table is built, so the two are never held together.
  std::vector<std::string> names(n_tasks);
  std::vector<std::size_t> first_task;  // profile -> its first task (scenario order), for errors
  ident_.resize(n_tasks);
  profile_of_.resize(n_tasks);
  {
    // Profile hash -> profiles with that hash; looked up, never iterated.
    std::unordered_map<std::size_t, std::vector<std::uint32_t>> by_hash;
    for (std::size_t i = 0; i < n_tasks; ++i) {
      io::TaskCfg& t = sc_.tasks[i];
      names[i] = std::move(t.name);
      ident_[i] = {t.submit_s, t.duration_s, t.runtime_estimate_s};
      t.name.clear();
      t.submit_s = 0;
      t.duration_s = 0;
      t.runtime_estimate_s.reset();
      // Hash of the fields that most often differ; equal hashes are told apart by operator==.
      // The interned keys hash by address (equal texts are one string: Interned), not by text.
      std::size_t h = 0;
      boost::hash_combine(h, &t.user.str());
      boost::hash_combine(h, &t.tenant.str());
      boost::hash_combine(h, &t.pool.str());
      boost::hash_combine(h, t.workers);
      boost::hash_combine(h, t.priority);
      boost::hash_range(h, t.specs.begin(), t.specs.end());
      if (t.replica) {
        boost::hash_combine(h, t.replica->gpus);
        boost::hash_combine(h, t.replica->gpu_milli);
        boost::hash_combine(h, t.replica->vcpu);
        boost::hash_combine(h, t.replica->memory_gib);
      }
      auto& bucket = by_hash[h];
      std::uint32_t p = std::uint32_t(profiles_.size());
      for (std::uint32_t q : bucket)
        if (profiles_[q] == t) {
          p = q;
          break;
        }
      if (p == profiles_.size()) {
        // (a task equal to an earlier one names the same models: interning the new profiles'
        // models, in task order, interns every task's in scenario order)
        if (t.replica)
          for (const auto& m : t.replica->gpu_models) c.intern_model(m);
        bucket.push_back(p);
        profiles_.push_back(std::move(t));
        first_task.push_back(i);
      }
      profile_of_[i] = p;
    }
  }
  std::vector<io::TaskCfg>().swap(sc_.tasks);
  profiles_.shrink_to_fit();

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
        faults_->add_node({g.unhealthy_prob, g.mtbf_s, g.mttr_s});
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
      faults_->add_node({});
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
  // Task names, for duplicates and injected task faults: (64-bit hash of the name, index)
  // sorted, equal hashes then told apart by the names. No node per task (as a hash map would
  // allocate), and only the sorted vector is searched, never iterated into an output. Made
  // once the scenario's task vector is freed, in its pages: not held beside it at the load's
  // peak. (Nothing above throws: a duplicate is still the first error of the tasks.)
  std::vector<std::pair<std::size_t, int>> task_index(n_tasks);
  for (std::size_t i = 0; i < n_tasks; ++i) task_index[i] = {std::hash<std::string_view>{}(names[i]), int(i)};
  detail::sort_by_key_stable(task_index);  // (the indices ascend: the pairs' order)
  {
    // The first duplicate in scenario order: the smallest index whose name came before it.
    int first_duplicate = -1;
    for (std::size_t a = 0; a < task_index.size();) {
      std::size_t b = a + 1;
      while (b < task_index.size() && task_index[b].first == task_index[a].first) ++b;
      // Within a run (ascending index) the first entry that repeats an earlier name is the
      // run's first duplicate; a run of distinct names needs 64-bit hash collisions.
      bool found = false;
      for (std::size_t j = a + 1; j < b && !found; ++j)
        for (std::size_t k = a; k < j && !found; ++k)
          if (names[std::size_t(task_index[k].second)] == names[std::size_t(task_index[j].second)]) {
            found = true;
            if (first_duplicate < 0 || task_index[j].second < first_duplicate) first_duplicate = task_index[j].second;
          }
      a = b;
    }
    if (first_duplicate >= 0) throw std::invalid_argument("duplicate task name " + names[std::size_t(first_duplicate)]);
  }
  model_label_.reserve(profiles_.size());
  for (const auto& p : profiles_) model_label_.push_back(requested_model_label(p));

  // Profiles -> TaskSpec templates, in profile order (the order of their first tasks, so the
  // first error found is the one of the first task with a problem).
  std::vector<TaskSpec>& templates = templates_;  // kept by a compact run (register_task)
  templates.reserve(profiles_.size());
  for (std::size_t p = 0; p < profiles_.size(); ++p) {
    const auto& t = profiles_[p];
    TaskSpec s;
    s.user = t.user;
    s.tenant = t.tenant;
    s.type = t.type == "RayJob" ? TaskType::ray_job : TaskType::pytorch_job;
    s.resource_type = parse_rt(t.resource_type);
    if (!t.pool.empty()) {
      s.pool = c.find_pool(t.pool);
      if (!s.pool.valid()) throw std::invalid_argument("task " + names[first_task[p]] + ": unknown pool " + t.pool);
    }
    s.priority = t.priority;
    s.guarantee = t.guarantee;
    s.accept_idle = t.accept_idle;
    s.prefer_idle = t.prefer_idle;
    s.idle_stability = parse_stab(t.idle_stability);
    bool autoscale = s.type == TaskType::ray_job && t.autoscaling->enabled;
    s.workers = autoscale ? t.autoscaling->min_workers : t.workers;
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
    templates.push_back(std::move(s));
  }
  // Replicas per shape, counted per profile (tasks share their profile's template).
  std::vector<std::size_t> tasks_of_profile(templates.size(), 0);
  for (std::size_t i = 0; i < n_tasks; ++i) ++tasks_of_profile[profile_of_[i]];
  std::vector<std::pair<ReplicaShape, std::size_t>> shapes;  // (shape, replicas)
  for (std::size_t p = 0; p < templates.size(); ++p) {
    const TaskSpec& s = templates[p];
    if (s.options.empty() || tasks_of_profile[p] == 0) continue;
    shapes.emplace_back(s.options[0].head, tasks_of_profile[p]);
    if (s.workers > 0) shapes.emplace_back(s.options[0].worker, tasks_of_profile[p] * std::size_t(s.workers));
  }
  workload_ = WorkloadDistribution::from_counts(shapes);

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
  so.queue_order = sc_.scheduler.queue_order;
  so.las_thresholds_gpu_s = sc_.scheduler.las_thresholds_gpu_s;
  so.fair_shares = sc_.scheduler.fair_shares;
  so.las_starvation = from_seconds(sc_.scheduler.las_starvation_s);
  so.qssf_default = from_seconds(sc_.scheduler.qssf_default_s);
  // gittins: the service distribution is every task's GPU-s (GPUs of its first option x duration).
  if (so.queue_order == "gittins") {
    so.service_gpu_s.reserve(n_tasks);
    for (std::size_t i = 0; i < n_tasks; ++i) {
      const TaskSpec& t = templates[profile_of_[i]];
      so.service_gpu_s.push_back(t.options.empty() ? 0.0 : double(t.demand(0).gpu_milli) / 1000.0 * ident_[i].duration_s);
    }
  }
  so.victim_order = sc_.scheduler.victim_order;
  so.admission = sc_.scheduler.admission;
  so.preemption = sc_.scheduler.preemption;
  so.idle_reclaim = sc_.scheduler.idle_reclaim;
  so.spot_eviction = sc_.scheduler.spot_eviction;
  so.queueing = parse_queueing(sc_.scheduler.queueing);
  so.idle_stability_high = from_seconds(sc_.scheduler.idle_stability_high_s);
  so.idle_stability_medium = from_seconds(sc_.scheduler.idle_stability_medium_s);
  so.seed = seed_;
  so.workload = workload_;
  so.request_classes = opt_.request_classes;
  sched_ = std::make_unique<Scheduler>(std::move(c), so, opt_.registry ? *opt_.registry : Registry::builtin());
  for (auto& p : policies) sched_->add_node_policy(std::move(p));
  for (auto& [k, r] : quotas) sched_->quotas().set_limit(k, r);

  runs_.resize(n_tasks);
  if (!compact_) {
    sched_->reserve_tasks(n_tasks);
    task_of_id_.reserve(n_tasks);
  }
  submit_order_.reserve(n_tasks);
  // A compact run checks a profile's template once, with its first task: what check_task
  // reads of a later task of the profile is the template's, except the runtime estimate and
  // the GPU speeds (by name, from the throughput rows). A later task whose estimate is a time
  // (not one check_task refuses) and that has no throughput rows would pass as the first did;
  // any other is checked whole, so the error reported is the same.
  std::vector<bool> profile_checked(compact_ ? templates.size() : 0, false);
  for (std::size_t i = 0; i < n_tasks; ++i) {
    const TaskIdentity& ti = ident_[i];
    if (compact_) {
      // Registered at its first submission (register_task), checked now as add_task would:
      // whatever such a run refuses, it refuses before simulating.
      const std::uint32_t p = profile_of_[i];
      const bool estimate_ok = !ti.runtime_estimate_s() || from_seconds(*ti.runtime_estimate_s()) >= -1;
      if (!profile_checked[p] || !estimate_ok || !sc_.throughput.empty()) {
        libsched::detail::check_task(make_spec(i, names[i]), sched_->cluster(), "Scheduler::add_task");
        profile_checked[p] = true;
      }
    } else {
      TaskId id = sched_->add_task(make_spec(i, std::move(names[i])));
      // A full run's ids are the scenario indices, the sequences too: (sequence, id) orders as
      // the id alone did (the outputs of runs before TaskSpec::sequence stay byte-identical).
      if (id.index() != i) throw std::logic_error("Simulator::build: task id " + std::to_string(id.value) + " for task " + std::to_string(i));
      runs_[i].id = id;
      task_of_id_.push_back(int(i));
    }
    runs_[i].duration = from_seconds(ti.duration_s);
    runs_[i].remaining = runs_[i].duration;
    const Time submit = from_seconds(ti.submit_s);
    if (submit < 0) throw std::invalid_argument("EventQueue::schedule: time in the past");  // as a queued submission did
    submit_order_.emplace_back(submit, int(i));
    ++fixed_pending_;
  }
  // Submissions in delivery order (time, then scenario order); see Simulator::run(). A
  // generated workload comes in that order already (no sort then).
  if (!std::is_sorted(submit_order_.begin(), submit_order_.end())) std::sort(submit_order_.begin(), submit_order_.end());
  live_tasks_ = int(runs_.size());
  if (compact_) {
    names_ = std::move(names);
    totals_.resize(n_tasks);
  } else {
    std::vector<std::string>().swap(names);  // moved into the scheduler
    std::vector<TaskSpec>().swap(templates_);
  }
  decltype(shapes)().swap(shapes);
  build_costs();  // the price tables and the reserved commitments (cost.cpp)
  auto find_task = [&](const std::string& name) -> int {
    const std::size_t h = std::hash<std::string_view>{}(name);
    for (auto it = std::lower_bound(task_index.begin(), task_index.end(), std::pair<std::size_t, int>{h, -1});
         it != task_index.end() && it->first == h; ++it)
      if (task_name(std::size_t(it->second)) == name) return it->second;
    return -1;
  };

  // Injected events.
  const Cluster& cl = sched_->cluster();
  auto node_idx = [&](const std::string& n) {
    NodeId id = cl.find_node(n);
    if (!id.valid()) throw std::invalid_argument("event: unknown node " + n);
    return int(id.value);
  };
  for (std::size_t ei = 0; ei < sc_.events.size(); ++ei) {
    const auto& e = sc_.events[ei];
    Time at = from_seconds(e.at_s);
    if (e.kind == "node_down") {
      q_.schedule(at, NodeDownEv{node_idx(e.node), false});
    } else if (e.kind == "node_up") {
      q_.schedule(at, NodeUpEv{node_idx(e.node), false});
    } else if (e.kind == "task_fault") {
      const int ti = find_task(e.task);
      if (ti < 0) throw std::invalid_argument("event: unknown task " + e.task);
      q_.schedule(at, TaskFaultEv{ti, int(ei)});
    } else if (e.kind == "spot_reclaim") {
      std::vector<int> nodes;
      if (!e.node.empty()) nodes.push_back(node_idx(e.node));
      for (const auto& n : e.nodes) nodes.push_back(node_idx(n));
      q_.schedule(at, SpotReclaimEv{int(reclaim_nodes_.size())});
      reclaim_nodes_.push_back(std::move(nodes));
      reclaim_notice_.push_back(e.notice_s ? from_seconds(*e.notice_s) : 0);
    } else {
      throw std::invalid_argument("unknown event kind " + e.kind);
    }
    ++fixed_pending_;
  }
  for (std::size_t pi = 0; pi < sched_->node_policies().size(); ++pi) {
    const auto& p = sched_->node_policies()[pi];
    if (p.created > 0) {
      q_.schedule(p.created, PolicyTickEv{int(pi)});
      policy_ticks_.push_back(p.created);
      ++fixed_pending_;
    }
    if (p.expire != kTimeNever) {
      q_.schedule(p.expire, PolicyTickEv{int(pi)});
      policy_ticks_.push_back(p.expire);
      ++fixed_pending_;
    }
  }
  std::sort(policy_ticks_.begin(), policy_ticks_.end());
  // Stochastic node failures, node order.
  for (std::size_t n = 0; n < faults_->node_count(); ++n) {
    auto at = faults_->first_failure_s(n);
    if (at && *at < to_seconds(kMaxSimTime)) q_.schedule(from_seconds(*at), NodeDownEv{int(n), true});
  }
  build_spot_reclaims();
  sched_->take_changed_nodes();
  metrics_ = std::make_unique<Metrics>(cl, workload_, runs_.size(), opt_.keep_snapshots, window_lo_, window_hi_);
  for (std::size_t i = 0; i < n_tasks; ++i)
    if (cfg(i).autoscaling->enabled && cfg(i).type == "RayJob") autoscaled_.push_back(int(i));
}

}  // namespace sim
