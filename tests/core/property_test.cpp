// Property tests: seeded random scenarios (Boost.Random mt19937, fixed seeds), invariants
// checked after EVERY schedule() decision. Small clusters (2-12 nodes, 2 pools, 2 GPU models),
// 5-30 tasks of random shapes (milli-GPU shares, CPU-only, whole GPUs, RayJob heads),
// workers 0-3, every resource type, priorities, guarantee, quotas, node policies, random
// releases, node failures and resubmissions over time.
//
// A failing seed is printed (INFO) so it can be replayed with the same seed.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <bit>
#include <map>
#include <set>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {

/// Replicas of the scheduler property tests: always some vCPU and memory.
const ShapeBounds kPropertyShapes{1, 24, 1, 200, 30};

const std::vector<std::string> kUsers{"alice", "bob", "carol"};
const std::vector<std::string> kTenants{"t1", "t2"};
const std::vector<std::string> kPolicies{"first-fit", "best-fit", "worst-fit", "dot-product", "gpu-packing",
                                         "gpu-clustering", "random", "fgd", "topology"};

struct Scenario {
  Cluster cluster;
  SchedulerOptions options;
  std::vector<std::pair<QuotaKey, Resources>> quotas;
  std::vector<NodePolicy> policies;
  std::vector<TaskSpec> tasks;
};

Scenario random_scenario(std::uint32_t seed, bool backfill_family) {
  Gen g(seed);
  Scenario sc;
  ClusterBuilder b;
  b.pool("pa", PoolKind::shared).pool("pb", g.chance(50) ? PoolKind::dedicated : PoolKind::shared);
  Cluster& c = sc.cluster;
  c = b.build();
  auto nodes = g.range(2, 12);
  for (std::int64_t i = 0; i < nodes; ++i) {
    NodeDesc d;
    d.name = fmt::format("n{}", i);
    d.pool = PoolId(std::int32_t(g.range(0, 1)));
    d.gpu_model = g.chance(50) ? "A100" : "H100";
    d.gpus = std::int32_t(g.pick(std::vector<std::int64_t>{2, 4, 8, 8}));
    d.cpu_milli = g.pick(std::vector<std::int64_t>{32, 64, 96}) * 1000;
    d.mem_mib = g.pick(std::vector<std::int64_t>{256, 512, 1024}) * kMibPerGib;
    d.rack = std::int32_t(g.range(0, 2));
    d.switch_id = std::int32_t(g.range(0, 1));
    c.add_node(d);
  }
  c.intern_model("A100");
  c.intern_model("H100");
  SchedulerOptions& o = sc.options;
  o.placement = g.pick(kPolicies);
  o.preemption = g.chance(70);
  o.idle_reclaim = g.chance(80);
  o.spot_eviction = g.chance(80);
  o.queueing = backfill_family ? Queueing::backfill : static_cast<Queueing>(g.range(0, 2));
  o.idle_stability_high = backfill_family ? 0 : 120'000;
  o.idle_stability_medium = backfill_family ? 0 : 30'000;
  o.seed = seed;
  if (g.chance(50)) {
    std::vector<ReplicaShape> w;
    for (int i = 0; i < 4; ++i) w.push_back(random_shape(g, c, kPropertyShapes));
    o.workload = WorkloadDistribution::from_shapes(w);
  }
  for (const auto& u : kUsers)
    for (std::int32_t p = 0; p < 2; ++p) {
      if (g.chance(85))
        sc.quotas.push_back({QuotaKey{u, ResourceType::reserved, PoolId(p)},
                             Resources{g.range(0, 40) * 1000, g.range(0, 300) * 1000, g.range(0, 3000) * kMibPerGib}});
      if (g.chance(20))
        sc.quotas.push_back({QuotaKey{u, ResourceType::pay_as_you_go, g.chance(50) ? PoolId(p) : PoolId()},
                             Resources{g.range(0, 40) * 1000, g.range(0, 300) * 1000, g.range(0, 3000) * kMibPerGib}});
      if (g.chance(10))
        sc.quotas.push_back({QuotaKey{u, ResourceType::spot, g.chance(50) ? PoolId(p) : PoolId()},
                             Resources{g.range(0, 40) * 1000, g.range(0, 300) * 1000, g.range(0, 3000) * kMibPerGib}});
    }
  auto npol = g.range(0, 3);
  for (std::int64_t i = 0; i < npol; ++i) {
    NodePolicy p;
    p.name = fmt::format("pol{}", i);
    p.type = g.chance(60) ? NodePolicyType::node_not_in : NodePolicyType::node_in;
    p.scope = g.chance(50) ? PolicyScope::user : PolicyScope::tenant;
    p.user = g.pick(kUsers);
    p.tenant = g.pick(kTenants);
    p.effect = g.chance(60) ? PolicyEffect::default_effect : PolicyEffect::explicit_effect;
    if (g.chance(40)) p.workload_types.push_back(g.chance(50) ? TaskType::pytorch_job : TaskType::ray_job);
    auto k = g.range(1, 3);
    for (std::int64_t j = 0; j < k; ++j) p.nodes.push_back(NodeId(std::int32_t(g.range(0, nodes - 1))));
    p.created = backfill_family ? 0 : g.range(0, 200) * 1000;
    p.expire = g.chance(50) ? kTimeNever : p.created + g.range(60, 600) * 1000;
    sc.policies.push_back(p);
  }
  auto ntasks = g.range(5, 30);
  for (std::int64_t i = 0; i < ntasks; ++i) {
    TaskSpec t;
    t.name = fmt::format("task{:02}", i);
    t.user = g.pick(kUsers);
    t.tenant = g.pick(kTenants);
    t.type = g.chance(30) ? TaskType::ray_job : TaskType::pytorch_job;
    auto rt = g.range(0, 99);
    t.resource_type = rt < 35 ? ResourceType::reserved : rt < 65 ? ResourceType::pay_as_you_go : rt < 80 ? ResourceType::spot : ResourceType::idle;
    if (t.resource_type == ResourceType::reserved || g.chance(30)) t.pool = PoolId(std::int32_t(g.range(0, 1)));
    if (!t.is_idle()) {
      t.priority = std::int32_t(g.range(1, 9));
      t.guarantee = g.chance(15) && t.resource_type != ResourceType::spot;  // idle and spot cannot
    }
    if (t.resource_type == ResourceType::reserved) {
      t.accept_idle = g.chance(30);
      t.prefer_idle = g.chance(10);
    }
    t.idle_stability = static_cast<IdleStability>(g.range(0, 2));
    t.workers = std::int32_t(g.range(0, 3));
    auto nopt = g.range(1, 2);
    for (std::int64_t k = 0; k < nopt; ++k) {
      ReplicaShape w = random_shape(g, c, kPropertyShapes);
      ReplicaShape h = t.type == TaskType::ray_job && g.chance(50) ? random_shape(g, c, kPropertyShapes) : w;
      t.options.push_back(GangOption{fmt::format("spec{}", k), h, w});
    }
    t.submit = backfill_family ? 0 : g.range(0, 600) * 1000;
    t.runtime_estimate = backfill_family ? g.range(10, 500) * 1000 : (g.chance(70) ? g.range(10, 500) * 1000 : -1);
    t.checkpoint_interval = g.chance(40) ? g.range(5, 100) * 1000 : 0;
    for (const auto& p : sc.policies)
      if (p.effect == PolicyEffect::explicit_effect && g.chance(50)) t.selected_policies.push_back(p.name);
    sc.tasks.push_back(std::move(t));
  }
  return sc;
}

Scheduler make_scheduler(const Scenario& sc) {
  Scheduler s(sc.cluster, sc.options);
  for (const auto& [k, r] : sc.quotas) s.quotas().set_limit(k, r);
  for (const auto& p : sc.policies) s.add_node_policy(p);
  return s;
}

/// What we remember of a running task before a schedule() call.
struct Before {
  ResourceType capacity;
  std::int32_t priority;
  bool guarantee;
  Time start;
};

/// Checks every invariant after one schedule() call at `now`. Returns a description of the
/// first violation, or "" when all hold.
std::string check_invariants(const Scheduler& s, const ScheduleResult& r, const std::map<TaskId, Before>& before, Time now) {
  const Cluster& c = s.cluster();
  // ---- capacity: recompute used per node and per GPU from the placements
  std::vector<Resources> used(c.size());
  std::vector<std::vector<std::int64_t>> gpu_used(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) gpu_used[i].assign(std::size_t(c.nodes()[i].gpus), 0);
  for (TaskId t : s.running()) {
    const Placement* p = s.placement_of(t);
    if (!p) return fmt::format("running task {} has no placement", s.task(t).name);
    const TaskSpec& spec = s.task(t);
    // ---- whole gang
    if (std::int64_t(p->replicas.size()) != spec.replicas())
      return fmt::format("task {} has {} of {} replicas", spec.name, p->replicas.size(), spec.replicas());
    for (std::size_t k = 0; k < p->replicas.size(); ++k) {
      const ReplicaAllocation& a = p->replicas[k];
      const ReplicaShape& shape = k == 0 ? spec.options[p->option].head : spec.options[p->option].worker;
      const Node& n = c.node(a.node);
      if (std::popcount(a.gpu_mask) != shape.num_gpu || (shape.num_gpu > 0 && a.gpu_milli != shape.gpu_milli) ||
          a.cpu_milli != shape.cpu_milli || a.mem_mib != shape.mem_mib)
        return fmt::format("task {} replica {} does not match its option's shape", spec.name, k);
      if (shape.num_gpu > 0 && shape.models != 0 && !(shape.models & c.model_bit(n.model)))
        return fmt::format("task {} replica {} on a node of the wrong GPU model", spec.name, k);
      if (!n.up) return fmt::format("task {} runs on down node {}", spec.name, n.name);
      if (p->capacity == ResourceType::reserved && n.pool != spec.pool)
        return fmt::format("reserved task {} outside its pool", spec.name);
      used[a.node.index()] += a.resources();
      for (std::uint64_t m = a.gpu_mask; m; m &= m - 1) gpu_used[a.node.index()][std::size_t(std::countr_zero(m))] += a.gpu_milli;
    }
    if (spec.resource_type != ResourceType::reserved && p->capacity != spec.resource_type)
      return fmt::format("task {} runs on class {}", spec.name, to_string(p->capacity));
    if (spec.resource_type == ResourceType::reserved && p->capacity == ResourceType::idle && !spec.accept_idle && !spec.prefer_idle)
      return fmt::format("reserved task {} on idle capacity without accept_idle", spec.name);
    // ---- a gang never mixes idle and non-idle capacity: on idle capacity, none of a reserved
    // task's replicas is on its own pool (its reserved capacity)
    if (spec.resource_type == ResourceType::reserved && p->capacity == ResourceType::idle)
      for (const auto& a : p->replicas)
        if (c.node(a.node).pool == spec.pool)
          return fmt::format("task {} on idle capacity has a replica on its own reserved pool (node {})", spec.name,
                             c.node(a.node).name);
  }
  std::int64_t up_cpu_used = 0;  // (Cluster::up_allocated_cpu_milli, kept incrementally)
  for (const Node& n : c.nodes())
    if (n.up) up_cpu_used += n.capacity.cpu_milli - n.free.cpu_milli;
  if (up_cpu_used != c.up_allocated_cpu_milli())
    return fmt::format("up_allocated_cpu_milli {} but the up nodes hold {}", c.up_allocated_cpu_milli(), up_cpu_used);
  for (std::size_t i = 0; i < c.size(); ++i) {
    const Node& n = c.nodes()[i];
    if (n.free != n.capacity - used[i])
      return fmt::format("node {} free {}/{}/{} but placements leave {}/{}/{}", n.name, n.free.gpu_milli, n.free.cpu_milli,
                         n.free.mem_mib, (n.capacity - used[i]).gpu_milli, (n.capacity - used[i]).cpu_milli,
                         (n.capacity - used[i]).mem_mib);
    if (n.free.any_negative() || n.free.exceeds_any(n.capacity)) return fmt::format("node {} over-committed", n.name);
    std::int32_t full = 0;
    for (int gi = 0; gi < n.gpus; ++gi) {
      std::int64_t f = c.gpu_free(NodeId(std::int32_t(i)), gi);
      if (f < 0 || f > kMilliPerGpu) return fmt::format("node {} GPU {} free {}", n.name, gi, f);
      if (f != kMilliPerGpu - gpu_used[i][std::size_t(gi)])
        return fmt::format("node {} GPU {} free {} but shares sum to {}", n.name, gi, f, gpu_used[i][std::size_t(gi)]);
      full += f == kMilliPerGpu;
    }
    if (full != n.full_free_gpus) return fmt::format("node {} full_free_gpus {} != {}", n.name, n.full_free_gpus, full);
  }
  // ---- no partial gangs among waiting tasks
  for (TaskId t : s.queue())
    if (s.placement_of(t)) return fmt::format("waiting task {} holds a placement", s.task(t).name);
  // ---- quota: recompute per key
  std::map<QuotaKey, Resources> held;
  for (TaskId t : s.running()) {
    const Placement* p = s.placement_of(t);
    if (p->capacity == ResourceType::idle) {
      if (p->quota_held != Resources{}) return fmt::format("task {} on idle capacity holds quota", s.task(t).name);
      continue;
    }
    if (p->capacity == ResourceType::reserved && !s.quotas().find(p->quota_key))
      return fmt::format("reserved task {} runs without a quota entry", s.task(t).name);
    held[p->quota_key] += p->quota_held;
  }
  for (const auto& [k, e] : s.quotas().entries()) {
    if (e.used != held[k]) return fmt::format("quota of {} used {} GPU-milli, running tasks hold {}", k.user, e.used.gpu_milli, held[k].gpu_milli);
    if (e.used.exceeds_any(e.limit)) return fmt::format("quota of {} exceeded", k.user);
  }
  // ---- preemptions
  std::set<TaskId> started(r.started.begin(), r.started.end());
  for (const auto& pe : r.preemptions) {
    auto it = before.find(pe.victim);
    if (it == before.end())
      return fmt::format("victim {} ({}, priority {}, capacity {}) started and was preempted in the same call by {} ({}, priority {})",
                         s.task(pe.victim).name, to_string(s.task(pe.victim).resource_type), s.task(pe.victim).priority,
                         to_string(s.task(pe.victim).resource_type), s.task(pe.preemptor).name,
                         to_string(s.task(pe.preemptor).resource_type), s.task(pe.preemptor).priority);
    const TaskSpec& victim = s.task(pe.victim);
    const TaskSpec& preemptor = s.task(pe.preemptor);
    if (it->second.start >= now)
      return fmt::format("victim {} started at {} and was preempted at {} (zero-length attempt)", victim.name, it->second.start, now);
    if (victim.guarantee && it->second.capacity != ResourceType::idle)
      return fmt::format("guaranteed {} preempted on {} capacity", victim.name, to_string(it->second.capacity));
    if (s.is_running(pe.victim) && !started.count(pe.victim)) return fmt::format("victim {} still running", victim.name);
    if (!started.count(pe.preemptor)) return fmt::format("preemptor {} did not start in the same call", preemptor.name);
    if (preemptor.is_idle() || preemptor.resource_type == ResourceType::spot)
      return fmt::format("{} task {} preempted", to_string(preemptor.resource_type), preemptor.name);
    if (s.placement_of(pe.preemptor)->capacity == ResourceType::idle && it->second.capacity != ResourceType::idle)
      return fmt::format("{} runs on idle capacity but evicted {} from {} capacity", preemptor.name, victim.name,
                         to_string(it->second.capacity));
    // Every class but spot (evicted whenever its host is needed): strictly lower priority. On
    // idle capacity too (an idle task's priority is 0; a borrower keeps its own).
    bool exempt = it->second.capacity == ResourceType::spot;
    if (!exempt && !(it->second.priority < preemptor.priority))
      return fmt::format("victim {} (priority {}) not below preemptor {} ({})", victim.name, it->second.priority, preemptor.name,
                         preemptor.priority);
  }
  // ---- node policies at start time
  for (TaskId t : r.started) {
    NodeFilter f = NodeFilter::build(s.node_policies(), s.task(t), now, c.size());
    for (const auto& a : s.placement_of(t)->replicas)
      if (!f.allowed(a.node)) return fmt::format("task {} started on filtered node {}", s.task(t).name, c.node(a.node).name);
  }
  return {};
}

std::map<TaskId, Before> snapshot(const Scheduler& s) {
  std::map<TaskId, Before> b;
  for (TaskId t : s.running()) b[t] = Before{s.placement_of(t)->capacity, s.task(t).priority, s.task(t).guarantee, s.placement_of(t)->start};
  return b;
}

}  // namespace

namespace {
/// Drives one general random scenario step by step, deterministically per seed, so that a
/// step can be replayed on a fresh scheduler (the minimality property needs the state just
/// before a decision).
struct Driver {
  std::uint32_t seed;
  Scenario sc;
  Scheduler s;
  Gen g;
  std::vector<TaskId> ids;
  std::vector<bool> submitted;
  std::vector<NodeId> down;
  Time now = 0;

  explicit Driver(std::uint32_t sd) : Driver(sd, random_scenario(sd, false)) {}
  Driver(std::uint32_t sd, Scenario scenario)
      : seed(sd), sc(std::move(scenario)), s(make_scheduler(sc)), g(sd * 2654435761u) {
    for (const auto& t : sc.tasks) ids.push_back(s.add_task(t));
    submitted.assign(ids.size(), false);
  }
  /// Arrivals due at `now` (before the decision).
  void arrivals() {
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (!submitted[i] && sc.tasks[i].submit <= now) {
        s.enqueue(ids[i], now);
        submitted[i] = true;
      }
  }
  /// Random releases, resubmissions of ended attempts, node failures and repairs (after the
  /// decision), then time moves on.
  void events() {
    changes();
    now += g.range(1, 60) * 1000;
  }
  /// Random releases, resubmissions, node failures and repairs at `now`.
  void changes() {
    std::vector<TaskId> running(s.running().begin(), s.running().end());
    for (TaskId t : running)
      if (g.chance(25)) s.release(t, now);
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (submitted[i] && !s.is_running(ids[i]) && !s.is_waiting(ids[i]) && g.chance(30)) s.enqueue(ids[i], now);
    if (g.chance(10)) {
      NodeId n(std::int32_t(g.range(0, std::int64_t(s.cluster().size()) - 1)));
      if (s.cluster().node(n).up) {
        for (TaskId t : s.tasks_on_node(n)) s.release(t, now);
        s.set_node_up(n, false, now);
        down.push_back(n);
      }
    }
    if (!down.empty() && g.chance(20)) {
      s.set_node_up(down.back(), true, now);
      down.pop_back();
    }
  }
  /// Replays `steps` whole steps (arrivals, decision, events).
  void replay(int steps) {
    for (int i = 0; i < steps; ++i) {
      arrivals();
      s.schedule(now);
      events();
    }
  }
};
constexpr int kSteps = 40;
}  // namespace

TEST_CASE("random scenarios never over-commit, split a gang, exceed quota or preempt wrongly") {
#ifdef SCHEDSIM_SANITIZED
  constexpr std::uint32_t kScenarios = 250;  // ASan + UBSan run about 20x slower
#else
  constexpr std::uint32_t kScenarios = 1000;
#endif
  std::size_t decisions = 0, preemptions = 0, starts = 0, same_instant = 0;
  for (std::uint32_t seed = 1; seed <= kScenarios; ++seed) {
    Driver d(seed);
    Scheduler& s = d.s;
    for (int step = 0; step < kSteps; ++step) {
      d.arrivals();
      Time now = d.now;
      if (seed % 4 == 0) {  // looking never changes anything: explain() and reservations roll back
        ClusterState st = state_of(s.cluster());
        auto quotas = s.quotas().entries();
        auto queue = s.queue();
        for (TaskId t : queue) s.explain(t, now);
        if (!queue.empty()) s.reservation(queue.front(), now);
        INFO("seed " << seed << " step " << step);
        REQUIRE(state_of(s.cluster()) == st);
        REQUIRE(s.queue() == queue);
        for (const auto& [k, e] : s.quotas().entries()) REQUIRE(e.used == quotas.at(k).used);
      }
      auto before = snapshot(s);
      ScheduleResult r = s.schedule(now);
      ++decisions;
      preemptions += r.preemptions.size();
      starts += r.started.size();
      std::string err = check_invariants(s, r, before, now);
      INFO("seed " << seed << " step " << step << " now " << now << " policy " << d.sc.options.placement);
      REQUIRE(err == "");
      if (step % 2 == 1) {  // more changes and another decision at the same instant (as the simulator does)
        d.changes();
        before = snapshot(s);
        r = s.schedule(now);
        ++same_instant;
        preemptions += r.preemptions.size();
        REQUIRE(check_invariants(s, r, before, now) == "");
      }
      d.events();
    }
  }
  // The generator must exercise what it claims to.
  CHECK(decisions == kScenarios * kSteps);
  CHECK(same_instant == kScenarios * kSteps / 2);
  CHECK(starts > 10 * kScenarios);
  CHECK(preemptions > kScenarios / 10);
}

TEST_CASE("random scenarios choose minimal victim sets: without any one victim the preemptor does not fit") {
  // For the first decision of each seed whose first start preempted: replay to just before
  // it, release every victim but one, leave only the preemptor queued, and decide again:
  // the preemptor must not start on the same capacity class without preempting.
  constexpr std::uint32_t kScenarios = 1000;
  std::size_t checked = 0;
  for (std::uint32_t seed = 1; seed <= kScenarios; ++seed) {
    Driver d(seed);
    for (int step = 0; step < kSteps; ++step) {
      d.arrivals();
      ScheduleResult r = d.s.schedule(d.now);
      if (!r.preemptions.empty() && r.started.front() == r.preemptions.front().preemptor) {
        TaskId p = r.preemptions.front().preemptor;
        std::vector<TaskId> vs;
        for (const auto& pe : r.preemptions)
          if (pe.preemptor == p) vs.push_back(pe.victim);
        for (TaskId keep : vs) {
          Driver e(seed);
          e.replay(step);
          e.arrivals();
          for (TaskId v : vs)
            if (v != keep) e.s.release(v, e.now);
          for (TaskId t : e.s.queue())
            if (t != p) e.s.dequeue(t);
          ScheduleResult again = e.s.schedule(e.now);
          INFO("seed " << seed << " step " << step << " preemptor " << e.s.task(p).name << " kept victim "
                       << e.s.task(keep).name << " policy " << e.sc.options.placement);
          // Same capacity class: an accept_idle task that needs a victim for reserved capacity
          // is not expected to fall back to idle capacity freed by priority victims (a
          // placement on idle capacity only reclaims idle tasks).
          bool fits_without = e.s.is_running(p) && again.preemptions.empty() &&
                              e.s.placement_of(p)->capacity == d.s.placement_of(p)->capacity;
          CHECK_FALSE(fits_without);
          ++checked;
        }
        break;
      }
      d.events();
    }
  }
  CHECK(checked > 50);
}

TEST_CASE("with backfill and exact runtime estimates, a head task never starts after its reservation") {
  constexpr std::uint32_t kScenarios = 1000;
  std::size_t heads_checked = 0, backfilled = 0;
  std::uint32_t first = 100'001, last = 100'001 + kScenarios;
  bool verbose = false;
  if (const char* one = std::getenv("LIBSCHED_BACKFILL_SEED")) {  // replay one seed with a trace
    first = std::uint32_t(std::stoul(one));
    last = first + 1;
    verbose = true;
  }
  for (std::uint32_t seed = first; seed < last; ++seed) {
    Scenario sc = random_scenario(seed, true);
    Scheduler s = make_scheduler(sc);
    std::vector<TaskId> ids;
    for (const auto& t : sc.tasks) ids.push_back(submit(s, t, 0));
    std::map<TaskId, Time> reservation;  // recorded when the task first heads the blocked queue
    std::map<TaskId, Time> started_at;
    Time now = 0;
    for (int step = 0; step < 200; ++step) {
      auto before = snapshot(s);
      if (verbose)
        for (TaskId t : s.queue())
          fmt::print("{:>8}   before: {} {} res {}\n", now, s.task(t).name, s.explain(t, now).reason, s.reservation(t, now));
      if (verbose)
        for (TaskId t : s.running())
          fmt::print("{:>8}   running: {} {} cap {} ends {}\n", now, s.task(t).name, to_string(s.task(t).resource_type),
                     to_string(s.placement_of(t)->capacity), s.placement_of(t)->start + s.task(t).runtime_estimate);
      ScheduleResult r = s.schedule(now);
      if (verbose) {
        for (const auto& pe : r.preemptions) fmt::print("{:>8} preempt {} for {}\n", now, s.task(pe.victim).name, s.task(pe.preemptor).name);
        for (TaskId t : r.started) {
          const TaskSpec& ts = s.task(t);
          std::string where;
          for (const auto& n : nodes_of(s, t)) where += n + " ";
          fmt::print("{:>8} start {} prio {} est {} -> {}\n", now, ts.name, ts.priority, ts.runtime_estimate, where);
        }
        for (TaskId t : s.queue()) fmt::print("{:>8}   waiting {} prio {} res {} : {}\n", now, s.task(t).name, s.task(t).priority,
                                              s.reservation(t, now), s.explain(t, now).reason);
      }
      std::string err = check_invariants(s, r, before, now);
      INFO("seed " << seed << " now " << now << " policy " << sc.options.placement);
      REQUIRE(err == "");
      for (TaskId t : r.started) {
        started_at[t] = now;
        auto it = reservation.find(t);
        if (it != reservation.end()) {
          INFO("head " << s.task(t).name << " reserved at " << it->second);
          CHECK(now <= it->second);
          ++heads_checked;
        }
      }
      auto q = s.queue();
      if (!q.empty()) {
        TaskId head = q.front();
        if (!reservation.count(head)) {
          Time res = s.reservation(head, now);
          if (res != kTimeNever) reservation[head] = res;
          for (TaskId t : r.started)
            if (s.task(t).priority < s.task(head).priority || (s.task(t).priority == s.task(head).priority && t > head)) ++backfilled;
        }
      }
      // Next event: the earliest estimated (= actual) end.
      Time next = s.next_eligibility_change(now);  // node policies starting or expiring
      for (TaskId t : s.running()) next = std::min(next, s.placement_of(t)->start + s.task(t).runtime_estimate);
      if (next == kTimeNever) break;
      now = next;
      std::vector<TaskId> running(s.running().begin(), s.running().end());
      for (TaskId t : running)
        if (s.placement_of(t)->start + s.task(t).runtime_estimate == now) s.release(t, now);
    }
  }
  CHECK(heads_checked > kScenarios / 3);
  CHECK(backfilled > 0);
}

TEST_CASE("explain agrees with the next schedule(): no waiting code for a task it starts, and no side effects") {
  // At every step of random scenarios: explain every waiting task, check that nothing
  // changed, then decide on the same state. Every task started before the call's first
  // preemption (its preemptor included) saw the state explain saw, less what earlier starts
  // of the call took; explain must have said fits_now or fits_after_preemption for it.
#ifdef SCHEDSIM_SANITIZED
  constexpr std::uint32_t kScenarios = 100;  // ASan + UBSan run about 20x slower
#else
  constexpr std::uint32_t kScenarios = 400;
#endif
  std::size_t checked = 0, fits_now = 0, waiting_codes = 0, backfill_holds_started = 0;
  for (std::uint32_t seed = 1; seed <= kScenarios; ++seed) {
    Driver d(seed);
    Scheduler& s = d.s;
    for (int step = 0; step < kSteps; ++step) {
      d.arrivals();
      Time now = d.now;
      ClusterState st = state_of(s.cluster());
      auto quotas = s.quotas().entries();
      auto queue = s.queue();
      std::map<TaskId, WaitStatus> said;
      for (TaskId t : queue) said[t] = s.explain(t, now);
      INFO("seed " << seed << " step " << step << " now " << now << " policy " << d.sc.options.placement << " queueing "
                   << int(d.sc.options.queueing));
      REQUIRE(state_of(s.cluster()) == st);
      REQUIRE(s.queue() == queue);
      for (const auto& [k, e] : s.quotas().entries()) REQUIRE(e.used == quotas.at(k).used);
      for (TaskId t : queue) REQUIRE(s.explain(t, now).code == said[t].code);  // repeatable
      ScheduleResult r = s.schedule(now);
      std::size_t upto = r.started.size();
      if (!r.preemptions.empty()) {
        auto it = std::find(r.started.begin(), r.started.end(), r.preemptions.front().preemptor);
        upto = it == r.started.end() ? 0 : std::size_t(it - r.started.begin()) + 1;
      }
      for (std::size_t i = 0; i < upto; ++i) {
        TaskId t = r.started[i];
        if (!said.count(t)) continue;
        const WaitStatus& w = said[t];
        INFO("task " << s.task(t).name << " explain said " << to_string(w.code) << ": " << w.reason);
        ++checked;
        // Known gap (see the count below): a backfill hold found by replaying the pass can
        // disagree in rare states.
        if (w.code == WaitCode::blocked_by_queue && d.sc.options.queueing == Queueing::backfill) {
          ++backfill_holds_started;
          continue;
        }
        CHECK((w.code == WaitCode::fits_now || w.code == WaitCode::fits_after_preemption));
      }
      for (const auto& [t, w] : said) {
        if (w.code == WaitCode::fits_now) ++fits_now;
        else if (w.code != WaitCode::fits_after_preemption) ++waiting_codes;
        // Every waiting code names its binding constraints, the primary first.
        if (w.code != WaitCode::fits_now) CHECK_FALSE(w.blocking.empty());
      }
      d.events();
    }
  }
  CHECK(checked > 1000 * kScenarios / 400);
  CHECK(fits_now > 100 * kScenarios / 400);
  CHECK(waiting_codes > 1000 * kScenarios / 400);
  CHECK(backfill_holds_started <= 2);  // 1 of the ~checked starts over 400 seeds today
}

namespace {
/// Everything a simulation would write about its tasks (tasks.csv / wait attribution): each
/// start (time, option, class, nodes and GPUs), each preemption, and each change of a task's
/// wait code as the simulator attributes it (explain() of the tasks schedule() visited; with
/// fast paths also Scheduler::wait_code, which must agree).
/// `quiet`: every other step only moves time on (no release, resubmission or node change), so
/// that arrivals alone reach the scheduler (the fresh-only passes of greedy and backfill).
std::vector<std::string> simulate_records(std::uint32_t seed, Scenario sc, bool fast, bool quiet = false, bool classes = true) {
  sc.options.fast_paths = fast;
  sc.options.request_classes = classes;
  Driver d(seed, std::move(sc));
  Scheduler& s = d.s;
  std::vector<std::string> out;
  std::map<TaskId, int> code;
  for (int step = 0; step < kSteps; ++step) {
    d.arrivals();
    const Time now = d.now;
    for (int call = 0; call < 2; ++call) {  // a second call at the same instant (what the simulator does after releases)
      ScheduleResult r = s.schedule(now);
      for (TaskId t : r.started) {
        const Placement* p = s.placement_of(t);
        std::string nodes;
        for (const auto& a : p->replicas) nodes += fmt::format("{}:{:x};", a.node.value, a.gpu_mask);
        out.push_back(fmt::format("{} start {} opt {} class {} {}", now, s.task(t).name, p->option, int(p->capacity), nodes));
      }
      for (const auto& v : r.preemptions)
        out.push_back(fmt::format("{} preempt {} by {} ({})", now, s.task(v.victim).name, s.task(v.preemptor).name, int(v.kind)));
      for (TaskId t : s.take_visited_waiting()) {
        // Fast: the code-only diagnosis the simulator uses (wait_code), which must equal the
        // full explain()'s; slow: explain() replaying every queue hold.
        int c = int(s.explain(t, now).primary());
        if (fast) {
          int code_only = int(s.wait_code(t, now));
          if (code_only != c) out.push_back(fmt::format("{} wait_code {} {} != explain {}", now, s.task(t).name, code_only, c));
        }
        auto [it, fresh] = code.emplace(t, c);
        if (fresh || it->second != c) out.push_back(fmt::format("{} wait {} {}", now, s.task(t).name, c));
        it->second = c;
      }
    }
    for (TaskId t : s.queue()) out.push_back(fmt::format("{} queued {}", now, s.task(t).name));
    if (quiet && step % 2 == 1) d.now += 7000;
    else d.events();
  }
  return out;
}
}  // namespace

TEST_CASE("fast paths decide exactly as the straightforward scan (strict, greedy, backfill; with and without preemption and quota)") {
  // SchedulerOptions::fast_paths = false tries every waiting task's placement in full and
  // walks every reservation; the fast paths must give the same starts, nodes, times,
  // preemptions and wait codes.
#ifdef SCHEDSIM_SANITIZED
  constexpr std::uint32_t kScenarios = 20;  // ASan + UBSan run about 20x slower; Release runs 300
#else
  constexpr std::uint32_t kScenarios = 300;
#endif
  std::size_t compared = 0, starts = 0, preempted = 0, waits = 0;
  for (std::uint32_t seed = 1; seed <= kScenarios; ++seed)
    for (Queueing q : {Queueing::strict, Queueing::greedy, Queueing::backfill})
      for (int variant = 0; variant < 3; ++variant) {
        // variant 0: the random scenario's preemption settings and quotas; 1: no preemption,
        // no quota (reserved tasks become pay-as-you-go, which is unlimited without an entry);
        // 2: variant 0 with every other step quiet (arrivals only: fresh-only passes).
        Scenario sc = random_scenario(seed, q == Queueing::backfill && seed % 2 == 0);
        sc.options.queueing = q;
        if (variant == 1) {
          sc.options.preemption = sc.options.idle_reclaim = sc.options.spot_eviction = false;
          sc.quotas.clear();
          for (auto& t : sc.tasks)
            if (t.resource_type == ResourceType::reserved) {
              t.resource_type = ResourceType::pay_as_you_go;
              t.accept_idle = t.prefer_idle = false;
            }
        }
        auto slow = simulate_records(seed, sc, false, variant == 2);
        auto fast = simulate_records(seed, sc, true, variant == 2);
        INFO("seed " << seed << " queueing " << int(q) << " variant " << variant << " policy " << sc.options.placement);
        REQUIRE(fast.size() == slow.size());
        for (std::size_t i = 0; i < slow.size(); ++i) REQUIRE(fast[i] == slow[i]);
        ++compared;
        for (const auto& line : slow) {
          starts += line.find(" start ") != std::string::npos;
          preempted += line.find(" preempt ") != std::string::npos;
          waits += line.find(" wait ") != std::string::npos;
        }
      }
  CHECK(compared == kScenarios * 9);
  // The comparison is not vacuous: many starts, preemptions and wait codes were compared.
  CHECK(starts > 10000 * kScenarios / 300);
  CHECK(preempted > 100 * kScenarios / 300);
  CHECK(waits > 5000 * kScenarios / 300);
}

namespace {

/// Random scenario `seed` for the request-class comparisons: node policies dropped in 3 seeds of
/// 4 and idle stability low in 4 of 5 (either turns the class passes off), then `adjust`, then
/// every task four times over (same request; arrivals 0-3 s apart in even seeds: classes of
/// several members behind one another).
Scenario class_scenario(std::uint32_t seed, Queueing queueing, const std::function<void(Scenario&)>& adjust) {
  Scenario sc = random_scenario(seed, false);
  sc.options.queueing = queueing;
  if (seed % 4 != 0) {
    sc.policies.clear();
    for (auto& t : sc.tasks) t.selected_policies.clear();
  }
  if (seed % 5 != 0)
    for (auto& t : sc.tasks) t.idle_stability = IdleStability::low;
  adjust(sc);
  const std::size_t n = sc.tasks.size();
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 1; k <= 3; ++k) {
      TaskSpec t = sc.tasks[i];
      t.name += fmt::format("c{}", k);
      t.submit += (seed % 2 == 0 ? k : 0) * 1000;
      sc.tasks.push_back(std::move(t));
    }
  return sc;
}

/// Simulates `sc` with request classes off and on (every other step quiet in variant 1),
/// requires the same records, and counts the starts and wait records compared.
void require_same_with_classes(std::uint32_t seed, const Scenario& sc, int variant, std::size_t& starts, std::size_t& waits) {
  auto off = simulate_records(seed, sc, true, variant == 1, false);
  auto on = simulate_records(seed, sc, true, variant == 1, true);
  INFO("seed " << seed << " variant " << variant << " policy " << sc.options.placement);
  REQUIRE(on.size() == off.size());
  for (std::size_t i = 0; i < off.size(); ++i) REQUIRE(on[i] == off[i]);
  for (const auto& line : off) {
    starts += line.find(" start ") != std::string::npos;
    waits += line.find(" wait ") != std::string::npos;
  }
}

}  // namespace

TEST_CASE("request classes decide exactly as the task-by-task pass (greedy, congested queues)") {
  // SchedulerOptions::request_classes: a greedy full pass visits classes of equal requests
  // instead of every waiting task. Each random scenario's tasks come four times over (same
  // request, arrivals 0-3 s apart: classes of several members behind one another); node
  // policies are dropped and idle stability is low in most seeds, so that the class passes run
  // (either one turns them off); every other step is quiet in variant 1 (fresh-only passes).
#ifdef SCHEDSIM_SANITIZED
  constexpr std::uint32_t kScenarios = 30;
#else
  constexpr std::uint32_t kScenarios = 200;
#endif
  std::size_t compared = 0, by_class = 0, starts = 0, waits = 0;
  for (std::uint32_t seed = 1; seed <= kScenarios; ++seed)
    for (int variant = 0; variant < 2; ++variant) {
      const Scenario sc = class_scenario(seed, Queueing::greedy, [](Scenario&) {});
      by_class += sc.policies.empty() && seed % 5 != 0;
      require_same_with_classes(seed, sc, variant, starts, waits);
      ++compared;
    }
  CHECK(compared == kScenarios * 2);
  CHECK(by_class * 10 >= kScenarios * 2 * 5);  // most scenarios ran the class passes
  CHECK(starts > 10000 * kScenarios / 200);
  CHECK(waits > 10000 * kScenarios / 200);
}

TEST_CASE("request classes decide exactly as the task-by-task pass (backfill, congested queues)") {
  // A backfill pass visits classes while no running task has a known expected end (no head
  // has a reservation: nothing is held), and falls back to the walk when a task it starts
  // brings a reservation. The random scenarios four times over, as above; the runtime
  // estimates are dropped in 2 seeds of 3 (the class passes run), and in the third only the
  // tasks submitted in the second half of the run keep theirs (passes by class early, then
  // fallbacks and walks). Every other step quiet in variant 1.
  // Fewer scenarios than the greedy case: a backfill comparison costs about four times as much
  // (the walk's reservations), and CI's budget is shared (docs/packaging.md "CI budget").
#ifdef SCHEDSIM_SANITIZED
  constexpr std::uint32_t kScenarios = 10;
#else
  constexpr std::uint32_t kScenarios = 60;
#endif
  std::size_t compared = 0, starts = 0, waits = 0;
  for (std::uint32_t seed = 1; seed <= kScenarios; ++seed)
    for (int variant = 0; variant < 2; ++variant) {
      const Scenario sc = class_scenario(seed, Queueing::backfill, [seed](Scenario& s) {
        Time last_submit = 0;
        for (const auto& t : s.tasks) last_submit = std::max(last_submit, t.submit);
        for (auto& t : s.tasks)
          if (seed % 3 != 0 || t.submit < last_submit / 2) t.runtime_estimate = -1;
      });
      require_same_with_classes(seed, sc, variant, starts, waits);
      ++compared;
    }
  CHECK(compared == kScenarios * 2);
  CHECK(starts > 10000 * kScenarios / 200);
  CHECK(waits > 10000 * kScenarios / 200);
}
}  // namespace SCHEDSIM_UNITY_ID
