// Fixture builders for the libsched core tests, so that a test reads like a sentence:
//
//   Cluster c = make_cluster().pool("p").nodes("a100-", 2, "A100", 8).build();
//   Scheduler s(std::move(c));
//   TaskId t = submit(s, make_task("pretrain").workers(1).option("a100.8x", gpus(8)));
//
// Units in the builders are the scenario's: vCPU and GiB (converted to milli-vCPU and MiB).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include <catch2/catch.hpp>

#include <libsched/libsched.hpp>

namespace libsched::testing {

inline constexpr std::int64_t kMibPerGib = 1024;

/// A replica shape of `n` GPUs of `milli` each (1000 = whole GPUs), `vcpu` vCPU, `mem_gib` GiB,
/// any model unless `models` is set.
inline ReplicaShape gpus(std::int32_t n, std::int32_t milli = kMilliPerGpu, std::int64_t vcpu = 1,
                         std::int64_t mem_gib = 1, ModelMask models = 0) {
  return ReplicaShape{n, milli, vcpu * 1000, mem_gib * kMibPerGib, models};
}
/// A share of one GPU (`milli` < 1000).
inline ReplicaShape gpu_share(std::int32_t milli, std::int64_t vcpu = 1, std::int64_t mem_gib = 1) {
  return gpus(1, milli, vcpu, mem_gib);
}
inline ReplicaShape cpu_only(std::int64_t vcpu, std::int64_t mem_gib = 1) { return ReplicaShape{0, kMilliPerGpu, vcpu * 1000, mem_gib * kMibPerGib, 0}; }
inline ReplicaShape with_model(ReplicaShape r, const Cluster& c, std::string_view model) {
  r.models |= c.model_bit(c.find_model(model));
  return r;
}

/// Builds a Cluster: pools first, then nodes into the current pool and rack.
class ClusterBuilder {
 public:
  /// Adds a pool and makes it current (nodes added next go into it).
  ClusterBuilder& pool(std::string name, PoolKind kind = PoolKind::shared) {
    current_ = c_.add_pool(std::move(name), kind);
    return *this;
  }
  /// Nodes added next go into rack `rack` under switch `sw`.
  ClusterBuilder& rack(std::int32_t rack, std::int32_t sw = 0) {
    rack_ = rack;
    switch_ = sw;
    return *this;
  }
  ClusterBuilder& node(std::string name, std::string model = "A100", std::int32_t n_gpus = 8, std::int64_t vcpu = 96,
                       std::int64_t mem_gib = 960) {
    if (!current_.valid()) pool("default");
    NodeDesc d;
    d.name = std::move(name);
    d.pool = current_;
    d.gpu_model = std::move(model);
    d.gpus = n_gpus;
    d.cpu_milli = vcpu * 1000;
    d.mem_mib = mem_gib * kMibPerGib;
    d.rack = rack_;
    d.switch_id = switch_;
    c_.add_node(d);
    return *this;
  }
  /// `count` nodes named prefix0, prefix1, ...
  ClusterBuilder& nodes(const std::string& prefix, std::int32_t count, std::string model = "A100", std::int32_t n_gpus = 8,
                        std::int64_t vcpu = 96, std::int64_t mem_gib = 960) {
    for (std::int32_t i = 0; i < count; ++i) node(prefix + std::to_string(next_index(prefix)), model, n_gpus, vcpu, mem_gib);
    return *this;
  }
  Cluster build() const { return c_; }
  const Cluster& peek() const { return c_; }

 private:
  std::int32_t next_index(const std::string& prefix) {
    for (auto& [p, i] : counters_)
      if (p == prefix) return i++;
    counters_.emplace_back(prefix, 1);
    return 0;
  }
  Cluster c_;
  PoolId current_;
  std::int32_t rack_ = 0;
  std::int32_t switch_ = 0;
  std::vector<std::pair<std::string, std::int32_t>> counters_;
};
inline ClusterBuilder make_cluster() { return ClusterBuilder{}; }

/// Builds a TaskSpec. Default: a pay-as-you-go PyTorchJob of user "alice", priority 5,
/// no workers, submitted at 0, unknown runtime estimate.
class TaskBuilder {
 public:
  explicit TaskBuilder(std::string name) {
    s_.name = std::move(name);
    s_.user = "alice";
    s_.resource_type = ResourceType::pay_as_you_go;
  }
  TaskBuilder& user(std::string u) { s_.user = std::move(u); return *this; }
  TaskBuilder& tenant(std::string t) { s_.tenant = std::move(t); return *this; }
  TaskBuilder& workers(std::int32_t w) { s_.workers = w; return *this; }
  TaskBuilder& ray() { s_.type = TaskType::ray_job; return *this; }
  /// Candidate spec: master and workers use `shape`.
  TaskBuilder& option(std::string label, ReplicaShape shape) {
    s_.options.push_back(GangOption{std::move(label), shape, shape});
    return *this;
  }
  /// Candidate spec with its own head (RayJob head) shape.
  TaskBuilder& option(std::string label, ReplicaShape head, ReplicaShape worker) {
    s_.options.push_back(GangOption{std::move(label), head, worker});
    return *this;
  }
  TaskBuilder& reserved(PoolId pool) { s_.resource_type = ResourceType::reserved; s_.pool = pool; return *this; }
  TaskBuilder& pay_as_you_go() { s_.resource_type = ResourceType::pay_as_you_go; return *this; }
  TaskBuilder& spot() { s_.resource_type = ResourceType::spot; return *this; }
  TaskBuilder& idle(IdleStability st = IdleStability::low) {
    s_.resource_type = ResourceType::idle;
    s_.idle_stability = st;
    return *this;
  }
  TaskBuilder& in_pool(PoolId p) { s_.pool = p; return *this; }
  TaskBuilder& priority(std::int32_t p) { s_.priority = p; return *this; }
  TaskBuilder& guaranteed() { s_.guarantee = true; return *this; }
  TaskBuilder& accept_idle(IdleStability st = IdleStability::low) { s_.accept_idle = true; s_.idle_stability = st; return *this; }
  TaskBuilder& prefer_idle(IdleStability st = IdleStability::low) { s_.prefer_idle = true; s_.idle_stability = st; return *this; }
  TaskBuilder& submitted(Time t) { s_.submit = t; return *this; }
  TaskBuilder& sequence(std::uint64_t q) { s_.sequence = q; return *this; }
  TaskBuilder& estimate(Time t) { s_.runtime_estimate = t; return *this; }
  TaskBuilder& checkpoint_every(Time t) { s_.checkpoint_interval = t; return *this; }
  TaskBuilder& selects(std::string policy) { s_.selected_policies.push_back(std::move(policy)); return *this; }
  TaskSpec build() const { return s_; }
  operator TaskSpec() const { return s_; }  // NOLINT: builders convert implicitly

 private:
  TaskSpec s_;
};
inline TaskBuilder make_task(std::string name = "t") { return TaskBuilder(std::move(name)); }

/// Builds a NodePolicy. Default: a tenant-scoped, default-effect NodeNotIn for tenant
/// "default", every workload type, never expiring.
class PolicyBuilder {
 public:
  explicit PolicyBuilder(std::string name) { p_.name = std::move(name); }
  PolicyBuilder& node_in() { p_.type = NodePolicyType::node_in; return *this; }
  PolicyBuilder& node_not_in() { p_.type = NodePolicyType::node_not_in; return *this; }
  PolicyBuilder& for_user(std::string u) { p_.scope = PolicyScope::user; p_.user = std::move(u); return *this; }
  PolicyBuilder& for_tenant(std::string t) { p_.scope = PolicyScope::tenant; p_.tenant = std::move(t); return *this; }
  PolicyBuilder& explicit_only() { p_.effect = PolicyEffect::explicit_effect; return *this; }
  PolicyBuilder& workload(TaskType t) { p_.workload_types.push_back(t); return *this; }
  PolicyBuilder& nodes(const Cluster& c, std::initializer_list<const char*> names) {
    for (const char* n : names) p_.nodes.push_back(c.find_node(n));
    return *this;
  }
  PolicyBuilder& active(Time created, Time expire) { p_.created = created; p_.expire = expire; return *this; }
  NodePolicy build() const { return p_; }
  operator NodePolicy() const { return p_; }  // NOLINT

 private:
  NodePolicy p_;
};
inline PolicyBuilder make_policy(std::string name = "p") { return PolicyBuilder(std::move(name)); }

/// Registers and enqueues a task.
inline TaskId submit(Scheduler& s, const TaskSpec& t, Time now = 0) {
  TaskId id = s.add_task(t);
  s.enqueue(id, now);
  return id;
}

inline Resources gpu_quota(std::int64_t gpus_, std::int64_t vcpu = 100000, std::int64_t mem_gib = 100000) {
  return Resources{gpus_ * 1000, vcpu * 1000, mem_gib * kMibPerGib};
}

/// Node names of a running task's replicas, master/head first.
inline std::vector<std::string> nodes_of(const Scheduler& s, TaskId t) {
  std::vector<std::string> v;
  if (const Placement* p = s.placement_of(t))
    for (const auto& a : p->replicas) v.push_back(s.cluster().node(a.node).name);
  return v;
}

/// Full dynamic state of a cluster (free per node, full-free GPU count, every GPU's free milli),
/// for exact before/after comparisons.
struct ClusterState {
  std::vector<Resources> free;
  std::vector<std::int32_t> full_free;
  std::vector<std::int32_t> gpu_free;
  friend bool operator==(const ClusterState&, const ClusterState&) = default;
};
inline ClusterState state_of(const Cluster& c) {
  ClusterState st;
  for (std::size_t i = 0; i < c.size(); ++i) {
    NodeId id{static_cast<std::int32_t>(i)};
    st.free.push_back(c.node(id).free);
    st.full_free.push_back(c.node(id).full_free_gpus);
    for (int g = 0; g < c.node(id).gpus; ++g) st.gpu_free.push_back(c.gpu_free(id, g));
  }
  return st;
}

inline bool started(const ScheduleResult& r, TaskId t) {
  for (TaskId x : r.started)
    if (x == t) return true;
  return false;
}
inline std::vector<TaskId> victims(const ScheduleResult& r) {
  std::vector<TaskId> v;
  for (const auto& p : r.preemptions) v.push_back(p.victim);
  return v;
}

/// One schedule() call at `now` written as lines ("NOW start NAME on NODES", "NOW preempt
/// VICTIM by PREEMPTOR (KIND)") appended to `out`, for comparing two schedulers' decisions;
/// returns the number of preemptions.
inline std::size_t record_schedule(Scheduler& s, Time now, std::vector<std::string>& out) {
  ScheduleResult r = s.schedule(now);
  for (TaskId t : r.started) {
    std::string line = std::to_string(now) + " start " + s.task(t).name + " on ";
    const std::vector<std::string> nodes = nodes_of(s, t);
    for (std::size_t i = 0; i < nodes.size(); ++i) line += (i ? "," : "") + nodes[i];
    out.push_back(std::move(line));
  }
  for (const auto& v : r.preemptions)
    out.push_back(std::to_string(now) + " preempt " + s.task(v.victim).name + " by " + s.task(v.preemptor).name + " (" +
                  std::to_string(int(v.kind)) + ")");
  return r.preemptions.size();
}

/// A scheduler and the wait code its observer holds for each waiting task, as the simulator
/// keeps it: the code of the task's last listing (take_visited_waiting), blocked_by_queue when
/// listed held. `listed` counts the listed tasks.
struct ObservedScheduler {
  Scheduler s;
  std::map<std::int32_t, WaitCode> code;
  std::size_t listed = 0;
  void listing(Time now) {
    const std::vector<TaskId> v = s.take_visited_waiting();
    const auto& l = s.listed();
    for (std::size_t i = 0; i < v.size(); ++i) code[v[i].value] = l[i].held ? WaitCode::blocked_by_queue : s.wait_code(v[i], now);
    listed += v.size();
  }
};

/// schedule(now) on two observed schedulers that must decide alike: the same starts and the
/// same victims, in order (REQUIRE). Then `running` (tasks started and not released) and both
/// observers' codes are updated (a task that started, or a victim, has none: victims are not
/// re-queued) and both take their listing.
inline void schedule_alike(ObservedScheduler& a, ObservedScheduler& b, Time now, std::vector<TaskId>& running) {
  const ScheduleResult ra = a.s.schedule(now), rb = b.s.schedule(now);
  REQUIRE(ra.started == rb.started);
  REQUIRE(ra.preemptions.size() == rb.preemptions.size());
  for (std::size_t i = 0; i < ra.preemptions.size(); ++i) REQUIRE(ra.preemptions[i].victim == rb.preemptions[i].victim);
  for (const Preemption& v : ra.preemptions) {
    running.erase(std::remove(running.begin(), running.end(), v.victim), running.end());
    a.code.erase(v.victim.value), b.code.erase(v.victim.value);
  }
  running.insert(running.end(), ra.started.begin(), ra.started.end());
  for (TaskId t : ra.started) a.code.erase(t.value), b.code.erase(t.value);
  a.listing(now);
  b.listing(now);
}

/// The property tests' seeded generator (Boost.Random: the same draws on every platform).
class Gen {
 public:
  explicit Gen(std::uint32_t seed) : rng_(seed) {}
  std::int64_t range(std::int64_t lo, std::int64_t hi) {  // inclusive
    return boost::random::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  bool chance(int percent) { return range(0, 99) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[std::size_t(range(0, std::int64_t(v.size()) - 1))]; }

 private:
  boost::random::mt19937 rng_;
};

/// Bounds of random_shape: whole vCPU and GiB ranges (inclusive), and the percentage of GPU
/// replicas pinned to one GPU model of the cluster.
struct ShapeBounds {
  int vcpu_lo = 0, vcpu_hi = 16;
  int gib_lo = 0, gib_hi = 64;
  int model_pct = 25;
};

/// A random replica: 10 % CPU-only, 30 % a GPU share (100-900 milli), else 1-8 whole GPUs.
inline ReplicaShape random_shape(Gen& g, const Cluster& c, const ShapeBounds& b = {}) {
  ReplicaShape r;
  auto kind = g.range(0, 9);
  if (kind == 0) {
    r.num_gpu = 0;
  } else if (kind <= 3) {
    r.num_gpu = 1;
    r.gpu_milli = std::int32_t(g.pick(std::vector<std::int64_t>{100, 200, 250, 300, 500, 700, 900}));
  } else {
    r.num_gpu = std::int32_t(g.pick(std::vector<std::int64_t>{1, 1, 2, 4, 8}));
  }
  r.cpu_milli = g.range(b.vcpu_lo, b.vcpu_hi) * 1000;
  r.mem_mib = g.range(b.gib_lo, b.gib_hi) * kMibPerGib;
  if (r.num_gpu > 0 && g.chance(b.model_pct)) r.models = c.model_bit(std::int32_t(g.range(0, std::int64_t(c.models().size()) - 1)));
  return r;
}

}  // namespace libsched::testing
