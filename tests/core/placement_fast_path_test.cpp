// The placement fast paths (placement/pick.hpp: the free-capacity index of best-fit and
// worst-fit, the node groups of the scoring policies) pick exactly the node the full scan
// picks (highest score, ties to the lowest id), and the node groups stay what a rebuild gives.
// Seeded random clusters, states, eligibility and replica shapes (Boost.Random mt19937), all
// nine built-in policies; a failing seed is printed (INFO).
#include <algorithm>
#include <bit>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "builders.hpp"
#include "libsched/placement/pick.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {

/// A random cluster: few distinct node specs (so groups have several members), 1-3 pools,
/// racks and switches that collide, a random fill, and some down, drained and removed nodes.
Cluster random_cluster(Gen& g) {
  Cluster c;
  auto pools = g.range(1, 3);
  for (std::int64_t p = 0; p < pools; ++p) c.add_pool(fmt::format("p{}", p), g.chance(70) ? PoolKind::shared : PoolKind::dedicated);
  c.intern_model("A100");
  c.intern_model("H100");
  const auto nodes = g.range(1, 120);
  const auto racks = g.range(1, 8);
  for (std::int64_t i = 0; i < nodes; ++i) {
    NodeDesc d;
    d.name = fmt::format("n{}", i);
    d.pool = PoolId(std::int32_t(g.range(0, pools - 1)));
    auto kind = g.range(0, 9);
    d.gpu_model = kind == 0 ? "" : kind < 6 ? "A100" : "H100";
    d.gpus = kind == 0 ? 0 : std::int32_t(g.pick(std::vector<std::int64_t>{2, 4, 8, 8}));
    d.cpu_milli = g.pick(std::vector<std::int64_t>{32, 64, 96}) * 1000;
    d.mem_mib = g.pick(std::vector<std::int64_t>{256, 512}) * kMibPerGib;
    d.rack = std::int32_t(g.range(0, racks - 1));
    d.switch_id = std::int32_t(g.range(0, 2));
    c.add_node(d);
  }
  return c;
}

/// Random allocations (whole GPUs, shares, CPU-only) on random nodes; returns them.
std::vector<ReplicaAllocation> random_fill(Gen& g, Cluster& c, int n) {
  std::vector<ReplicaAllocation> out;
  for (int i = 0; i < n; ++i) {
    NodeId id(std::int32_t(g.range(0, std::int64_t(c.size()) - 1)));
    ReplicaShape r = random_shape(g, c);
    if (c.fits(id, r)) out.push_back(c.allocate(id, r));
  }
  return out;
}

/// Random node-level changes: down/up, drain/undrain, remove (when empty), add.
void random_node_changes(Gen& g, Cluster& c, std::vector<Cluster*> also = {}) {
  auto apply = [&](auto&& f) {
    f(c);
    for (Cluster* o : also) f(*o);
  };
  for (int k = 0; k < 3; ++k) {
    NodeId id(std::int32_t(g.range(0, std::int64_t(c.size()) - 1)));
    const Node& n = c.node(id);
    if (n.removed) continue;
    const bool up = n.up, drained = n.drained, empty = n.free == n.capacity;
    switch (g.range(0, 4)) {
      case 0: apply([&](Cluster& x) { x.set_up(id, !up); }); break;
      case 1: apply([&](Cluster& x) { x.set_drained(id, !drained); }); break;
      case 2:
        if (empty) apply([&](Cluster& x) { x.remove_node(id); });
        break;
      case 3: {
        NodeDesc d;
        d.name = fmt::format("added{}", c.size());
        d.pool = PoolId(0);
        d.gpu_model = "A100";
        d.gpus = 8;
        d.cpu_milli = 96'000;
        d.mem_mib = 512 * kMibPerGib;
        d.rack = std::int32_t(g.range(0, 3));
        apply([&](Cluster& x) { x.add_node(d); });
        break;
      }
      default: break;
    }
  }
}

/// The node groups of `c` equal a rebuild: every schedulable node is in exactly the group of
/// its key, in every order kept; no other node is in any group. "" when they do.
std::string check_groups(const Cluster& c) {
  const auto& opts = *c.node_group_options();
  std::size_t members = 0;
  for (std::size_t gi = 0; gi < c.node_groups().size(); ++gi) {
    const NodeGroup& g = c.node_groups()[gi];
    members += g.ids.size();
    if (opts.topology && (g.by_switch.size() != g.ids.size() || g.by_rack.size() != g.ids.size()))
      return fmt::format("group {}: topology orders out of step", gi);
    if (opts.ranked ? !std::equal(g.ranked.begin(), g.ranked.end(), g.ids.begin(), g.ids.end()) : !g.ranked.empty())
      return fmt::format("group {}: ranked members out of step", gi);
    for (std::int32_t id : g.ids) {
      if (!(c.group_key(NodeId(id)) == g.key)) return fmt::format("node {} in group {} of another key", id, gi);
      if (c.node_group(NodeId(id)) != std::int32_t(gi)) return fmt::format("node {} not mapped to group {}", id, gi);
    }
  }
  std::size_t schedulable = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const Node& n = c.nodes()[i];
    bool s = n.up && !n.drained && !n.removed;
    schedulable += s;
    if (s != (c.node_group(NodeId(std::int32_t(i))) >= 0)) return fmt::format("node {} schedulable {} but grouped {}", i, s, !s);
  }
  if (members != schedulable) return fmt::format("{} members for {} schedulable nodes", members, schedulable);
  return {};
}

/// Cluster::up_allocated_cpu_milli equals the sum over the up nodes; "" when it does.
std::string check_up_cpu(const Cluster& c) {
  std::int64_t used = 0;
  for (const Node& n : c.nodes())
    if (n.up) used += n.capacity.cpu_milli - n.free.cpu_milli;
  if (used == c.up_allocated_cpu_milli()) return {};
  return fmt::format("up_allocated_cpu_milli {} but the up nodes hold {}", c.up_allocated_cpu_milli(), used);
}

const std::vector<std::string> kPolicies{"best-fit", "dot-product", "fastest-model", "fgd", "first-fit", "gpu-clustering",
                                         "gpu-packing", "random", "topology", "worst-fit"};

}  // namespace

TEST_CASE("every policy's fast path picks the full scan's node and GPUs on random clusters and shapes") {
  int compared = 0, placed = 0, grouped_policies = 0;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    INFO("seed " << seed);
    Gen g(seed);
    Cluster base = random_cluster(g);
    random_fill(g, base, int(g.range(0, 3 * std::int64_t(base.size()))));
    random_node_changes(g, base);
    PolicyContext ctx;
    ctx.seed = seed;
    if (g.chance(50)) {
      std::vector<ReplicaShape> w;
      for (int i = 0; i < 3; ++i) w.push_back(random_shape(g, base));
      ctx.workload = WorkloadDistribution::from_shapes(w);
    }
    for (const auto& name : kPolicies) {
      INFO("policy " << name);
      auto fast = PlacementRegistry::builtin().create(name, ctx);
      auto ref = PlacementRegistry::builtin().create(name, ctx);
      grouped_policies += fast->node_groups().has_value();
      Cluster fc = base, rc = base;  // the fast path's cluster (groups on) and the reference's
      // Eligibility: a pool rule (group level) and a random per-node block list.
      const PoolId want = g.chance(30) ? PoolId(std::int32_t(g.range(0, std::int64_t(base.pools().size()) - 1))) : PoolId();
      std::vector<char> blocked(base.size() + 16, 0);
      if (g.chance(40))
        for (auto& b : blocked) b = char(g.chance(30));
      auto group_ok = [&](NodeId n) { return !want.valid() || fc.node(n).pool == want; };
      auto node_ok = [&](NodeId n) { return group_ok(n) && !blocked[n.index()]; };
      NodeCheck check(group_ok, node_ok);
      TaskSpec t;
      t.name = "t";
      // fastest-model reads the task's speeds: 1, 1.5 or 2 per model from the seed (ties included),
      // without drawing from `g` (the other policies see the same cases as before).
      if (name == "fastest-model")
        for (std::size_t k = 0; k < base.models().size(); ++k)
          if ((seed + k) % 4 != 3) t.gpu_speed.push_back({base.models()[k], 1.0 + double((seed + k) % 3) * 0.5});
      for (int gang = 0; gang < 3; ++gang) {
        fast->begin_gang(fc);
        ref->begin_gang(rc);
        const ReplicaShape shape = random_shape(g, base);
        const int replicas = int(g.range(1, 6));
        std::vector<ReplicaAllocation> fa, ra;
        for (int i = 0; i < replicas; ++i) {
          ReplicaRequest q{shape, t, TaskId(), i};
          NodeId want_node = placement::pick_full_scan(rc, *ref, q, check);
          NodeId got = placement::pick_node(fc, *fast, q, check);
          if (got != want_node) {
            auto show = [&](NodeId n, PlacementPolicy& pol, const Cluster& cc) {
              return n.valid() ? fmt::format("{} score {} group {}", n.value, pol.score(cc, n, q), fc.node_group(n)) : std::string("none");
            };
            UNSCOPED_INFO("fast " << show(got, *fast, fc) << " ref " << show(want_node, *ref, rc) << " shape " << shape.num_gpu << "x"
                                  << shape.gpu_milli << " cpu " << shape.cpu_milli << " replica " << i);
          }
          REQUIRE(got == want_node);
          ++compared;
          if (!got.valid()) break;
          fa.push_back(fc.allocate(got, shape));
          ra.push_back(rc.allocate(want_node, shape));
          REQUIRE(fa.back().gpu_mask == ra.back().gpu_mask);
          fast->replica_placed(fc, fa.back());
          ref->replica_placed(rc, ra.back());
          ++placed;
        }
        // Release part of what was placed (the groups follow), change some nodes.
        for (std::size_t k = 0; k < fa.size(); ++k)
          if (g.chance(40)) {
            fc.release(fa[k]);
            rc.release(ra[k]);
          }
        random_node_changes(g, fc, {&rc});
        if (fc.node_groups_enabled()) REQUIRE(check_groups(fc).empty());
      }
    }
  }
  CHECK(compared > 5000);
  CHECK(placed > 3000);
  CHECK(grouped_policies == 300 * 9);  // every policy but first-fit (a full scan with the fit tree) has node groups
}

TEST_CASE("node groups and the up nodes' allocated vCPU stay equal to a rebuild through allocate, release, rollback and node changes") {
  // Seeds past 200 keep no node groups (vCPU-only allocations then take apply_no_gpu's path).
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    INFO("seed " << seed);
    Gen g(seed);
    Cluster c = random_cluster(g);
    NodeGroupOptions o;
    o.topology = g.chance(50);
    o.ranked = seed % 2 == 0;  // the `random` placement's sorted members (no draw: same scenarios)
    const bool groups = seed <= 200;
    if (groups) c.enable_node_groups(o);
    auto groups_check = [groups](const Cluster& x) { return groups ? check_groups(x) : std::string(); };
    REQUIRE(groups_check(c).empty());
    REQUIRE(check_up_cpu(c).empty());
    QuotaBook quotas;
    for (int step = 0; step < 10; ++step) {
      auto held = random_fill(g, c, int(g.range(0, 20)));
      REQUIRE(groups_check(c).empty());
      REQUIRE(check_up_cpu(c).empty());
      {
        Transaction tx(c, quotas);
        for (int k = 0; k < 5; ++k) {
          NodeId id(std::int32_t(g.range(0, std::int64_t(c.size()) - 1)));
          ReplicaShape r = random_shape(g, c);
          if (c.fits(id, r)) tx.allocate(id, r);
        }
        if (!held.empty() && g.chance(50)) {
          tx.release(held.back());
          held.pop_back();
        }
      }  // rolled back
      REQUIRE(groups_check(c).empty());
      REQUIRE(check_up_cpu(c).empty());
      for (const auto& a : held)
        if (g.chance(50)) c.release(a);
      random_node_changes(g, c);
      REQUIRE(groups_check(c).empty());
      REQUIRE(check_up_cpu(c).empty());
    }
    // A copy keeps its own, equal groups.
    Cluster copy = c;
    REQUIRE(groups_check(copy).empty());
    REQUIRE(check_up_cpu(copy).empty());
  }
}

TEST_CASE("scheduler decisions are the same with and without the placement fast paths") {
  // Whole schedule() runs (gangs, classes, pools, quotas, node policies, idle capacity,
  // preemption): the same seed with full_scan_placement on and off starts the same tasks on
  // the same nodes and GPUs at every step.
  std::size_t decisions = 0;
  for (std::uint32_t seed = 1; seed <= 120; ++seed) {
    INFO("seed " << seed);
    const std::string policy = kPolicies[seed % kPolicies.size()];
    INFO("policy " << policy);
    auto run = [&](bool full_scan) {
      Gen g(seed);
      Cluster c = random_cluster(g);
      SchedulerOptions o;
      o.placement = policy;
      o.seed = seed;
      o.full_scan_placement = full_scan;
      o.idle_stability_medium = 30'000;
      Scheduler s(c, o);
      if (g.chance(40)) {
        NodePolicy p;
        p.name = "block";
        p.type = g.chance(50) ? NodePolicyType::node_not_in : NodePolicyType::node_in;
        p.scope = PolicyScope::tenant;
        p.tenant = "default";
        for (int k = 0; k < 20; ++k) p.nodes.push_back(NodeId(std::int32_t(g.range(0, std::int64_t(c.size()) - 1))));
        s.add_node_policy(p);
      }
      std::vector<TaskId> ids;
      for (int i = 0; i < 40; ++i) {
        TaskSpec t;
        t.name = fmt::format("t{:02}", i);
        t.user = "u";
        auto rt = g.range(0, 9);
        t.resource_type = rt < 5 ? ResourceType::pay_as_you_go : rt < 7 ? ResourceType::spot : ResourceType::idle;
        if (t.resource_type == ResourceType::idle) t.idle_stability = g.chance(50) ? IdleStability::medium : IdleStability::low;
        if (!t.is_idle()) t.priority = std::int32_t(g.range(1, 9));
        t.workers = std::int32_t(g.range(0, 4));
        t.options.push_back(GangOption{"x", random_shape(g, c), random_shape(g, c)});
        ids.push_back(s.add_task(t));
      }
      std::vector<std::string> log;
      Time now = 0;
      for (int step = 0; step < 15; ++step) {
        for (std::size_t i = 0; i < ids.size(); ++i)
          if (!s.is_running(ids[i]) && !s.is_waiting(ids[i]) && g.chance(30)) s.enqueue(ids[i], now);
        ScheduleResult r = s.schedule(now);
        for (TaskId t : r.started)
          for (const auto& a : s.placement_of(t)->replicas) log.push_back(fmt::format("{} {} {} {}", now, t.value, a.node.value, a.gpu_mask));
        for (const auto& p : r.preemptions) log.push_back(fmt::format("{} preempt {}", now, p.victim.value));
        std::vector<TaskId> running(s.running().begin(), s.running().end());
        for (TaskId t : running)
          if (g.chance(25)) s.release(t, now);
        now += g.range(1, 60) * 1000;
      }
      return log;
    };
    auto fast = run(false);
    auto full = run(true);
    decisions += full.size();
    REQUIRE(fast == full);
  }
  CHECK(decisions > 5000);
}

TEST_CASE("random picks every feasible node about equally often across seeds") {
  // 40 identical nodes, one replica: the winner over 4,000 seeds is spread over all of them.
  Cluster c = make_cluster().nodes("n", 40).build();
  std::map<std::int32_t, int> wins;
  TaskSpec t;
  ReplicaShape r = gpus(1);
  for (std::uint64_t seed = 1; seed <= 4000; ++seed) {
    PolicyContext ctx;
    ctx.seed = seed;
    auto p = PlacementRegistry::builtin().create("random", ctx);
    Cluster x = c;
    auto all = [](NodeId) { return true; };
    NodeCheck check(all, all);
    p->begin_gang(x);
    ++wins[placement::pick_node(x, *p, ReplicaRequest{r, t, TaskId(), 0}, check).value];
  }
  REQUIRE(wins.size() == 40);
  for (const auto& [node, n] : wins) {
    INFO("node " << node);
    CHECK(n > 50);   // expected 100
    CHECK(n < 160);
  }
}

TEST_CASE("random draws a node group with probability proportional to its size, then any member alike") {
  // Three node states: 10 nodes with one GPU used (a), 10 with two (b), 20 idle (c). A one-GPU
  // replica fits all 40, so over many seeds a wins 1/4, b 1/4, c 1/2 (the exponential race
  // weights each group by its size; a race without the weights would give 1/3 each), and
  // within c every member is drawn.
  Cluster c = make_cluster().nodes("n", 40).build();
  for (std::int32_t i = 0; i < 20; ++i) c.allocate(NodeId(i), gpus(i < 10 ? 1 : 2));
  TaskSpec t;
  const ReplicaShape r = gpus(1);
  auto all = [](NodeId) { return true; };
  NodeCheck check(all, all);
  constexpr int kSeeds = 20000;
  int a = 0, b = 0;
  std::set<std::int32_t> idle_drawn;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    PolicyContext ctx;
    ctx.seed = seed;
    auto p = PlacementRegistry::builtin().create("random", ctx);
    p->begin_gang(c);
    const NodeId n = placement::pick_node(c, *p, ReplicaRequest{r, t, TaskId(), 0}, check);
    REQUIRE(n.valid());
    if (n.value < 10) ++a;
    else if (n.value < 20) ++b;
    else idle_drawn.insert(n.value);
  }
  CHECK(a > kSeeds / 4 - 400);  // expected 5,000, standard deviation about 61
  CHECK(a < kSeeds / 4 + 400);
  CHECK(b > kSeeds / 4 - 400);
  CHECK(b < kSeeds / 4 + 400);
  CHECK(idle_drawn.size() == 20);
}

TEST_CASE("the first-fit tree never skips a node that fits, through allocate, release and node changes") {
  // Cluster::first_fit_candidate(from, r) must return a node at or below the first node >= from
  // that fits r, and the candidate loop of pick_full_scan must find exactly that node.
#ifdef SCHEDSIM_SANITIZED
  constexpr std::uint32_t kSeeds = 40;  // ASan + UBSan run about 20x slower
#else
  constexpr std::uint32_t kSeeds = 200;
#endif
  std::size_t found = 0, none = 0;
  for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) {
    Gen g(seed);
    Cluster c = random_cluster(g);
    c.keep_fit_tree(true);
    REQUIRE(c.keeps_fit_tree());
    std::vector<ReplicaAllocation> held = random_fill(g, c, int(g.range(0, 300)));
    for (int round = 0; round < 6; ++round) {
      for (int k = 0; k < 40; ++k) {
        ReplicaShape r = random_shape(g, c);
        std::size_t from = std::size_t(g.range(0, std::int64_t(c.size())));
        std::size_t first = c.size();
        for (std::size_t i = from; i < c.size() && first == c.size(); ++i)
          if (c.fits(NodeId(std::int32_t(i)), r)) first = i;
        INFO("seed " << seed << " round " << round << " from " << from);
        std::size_t cand = c.first_fit_candidate(from, r);
        CHECK(cand <= first);
        CHECK(cand >= std::min(from, c.size()));
        std::size_t i = cand;
        while (i < c.size() && !c.fits(NodeId(std::int32_t(i)), r)) i = c.first_fit_candidate(i + 1, r);
        REQUIRE(i == first);
        (first < c.size() ? found : none) += 1;
      }
      // Changes the tree must follow: releases, new allocations, node up/down/drain/remove/add.
      for (std::size_t j = 0; j < held.size(); j += 2) c.release(held[j]);
      std::vector<ReplicaAllocation> kept;
      for (std::size_t j = 1; j < held.size(); j += 2) kept.push_back(held[j]);
      held = std::move(kept);
      auto more = random_fill(g, c, int(g.range(0, 100)));
      held.insert(held.end(), more.begin(), more.end());
      random_node_changes(g, c);
    }
  }
  CHECK(found > 10000 * kSeeds / 200);  // not vacuous: both outcomes are common
  CHECK(none > 1000 * kSeeds / 200);
}

TEST_CASE("replica slots count exactly the replicas a node takes one after another, with and without released capacity") {
  // Cluster::replica_slots(id, r) must equal the number of successive Cluster::allocate(id, r)
  // calls that succeed (the rule behind Session::fits_by_slots), and counting released
  // allocations on top (detail::ReleasedCapacity) must equal releasing them.
#ifdef SCHEDSIM_SANITIZED
  constexpr std::uint32_t kSeeds = 30;
#else
  constexpr std::uint32_t kSeeds = 150;
#endif
  constexpr std::int64_t kCap = 200;  // an unbounded shape (no vCPU, memory or GPU) stops here
  std::size_t zero = 0, several = 0, overlay_checks = 0;
  for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) {
    Gen g(seed);
    Cluster c = random_cluster(g);
    std::vector<ReplicaAllocation> held = random_fill(g, c, int(g.range(0, 400)));
    random_node_changes(g, c);
    for (int round = 0; round < 4; ++round) {
      for (int k = 0; k < 10; ++k) {
        ReplicaShape r = random_shape(g, c, ShapeBounds{0, 24, 0, 96, 25});
        REQUIRE(Cluster::replica_slots_exact(r));
        for (std::size_t i = 0; i < c.size(); ++i) {
          const NodeId id{std::int32_t(i)};
          std::int64_t expect = c.replica_slots(id, r);
          std::vector<ReplicaAllocation> taken;
          while (std::int64_t(taken.size()) < kCap && c.fits(id, r)) taken.push_back(c.allocate(id, r));
          INFO("seed " << seed << " round " << round << " node " << i);
          CHECK(std::min(expect, kCap) == std::int64_t(taken.size()));
          for (auto it = taken.rbegin(); it != taken.rend(); ++it) c.release(*it);
          if (expect == 0) ++zero;
          if (expect > 1) ++several;
        }
      }
      // Count a random half of what is held as released, then release it for real.
      detail::ReleasedCapacity rel;
      std::vector<ReplicaAllocation> kept, gone;
      for (const auto& a : held) (g.chance(50) ? gone : kept).push_back(a);
      for (const auto& a : gone) rel.add(c, a);
      std::vector<ReplicaShape> shapes;
      for (int k = 0; k < 10; ++k) shapes.push_back(random_shape(g, c));
      std::vector<std::int64_t> counted;
      for (const auto& r : shapes)
        for (std::size_t i = 0; i < c.size(); ++i) {
          const NodeId id{std::int32_t(i)};
          counted.push_back(rel.touches(id) ? c.replica_slots(id, r, rel.node[i], rel.gpu.data() + c.nodes()[i].gpu_offset)
                                            : c.replica_slots(id, r));
        }
      rel.clear(c);
      for (std::size_t i = 0; i < c.size(); ++i) REQUIRE_FALSE(rel.touches(NodeId(std::int32_t(i))));
      for (const auto& a : gone) c.release(a);
      std::size_t j = 0;
      for (const auto& r : shapes)
        for (std::size_t i = 0; i < c.size(); ++i, ++j) {
          INFO("seed " << seed << " round " << round << " node " << i);
          CHECK(counted[j] == c.replica_slots(NodeId(std::int32_t(i)), r));
          ++overlay_checks;
        }
      held = std::move(kept);
      auto more = random_fill(g, c, int(g.range(0, 200)));
      held.insert(held.end(), more.begin(), more.end());
      random_node_changes(g, c);
    }
  }
  CHECK(zero > 1000 * kSeeds / 150);  // not vacuous: full nodes and roomy nodes are both common
  CHECK(several > 1000 * kSeeds / 150);
  CHECK(overlay_checks > 0);
}

TEST_CASE("cpu_free_nodes holds exactly the nodes that take replicas with vCPU free, through allocate, release and node changes") {
  // The bits Session::fits_by_slots visits (for shapes that take vCPU): node i's bit is set
  // when it is up, not drained, not removed and has vCPU free; a node without it has no slot
  // for any shape that takes vCPU.
  int with = 0, without = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    Gen g(seed);
    Cluster c = random_cluster(g);
    std::vector<ReplicaAllocation> held;
    for (int round = 0; round < 12; ++round) {
      auto more = random_fill(g, c, int(g.range(0, 4 * std::int64_t(c.size()))));
      held.insert(held.end(), more.begin(), more.end());
      // Fill whole nodes now and then (a full node loses its bit).
      for (std::size_t i = 0; i < c.size(); ++i) {
        const NodeId id{std::int32_t(i)};
        const Node& n = c.node(id);
        if (g.chance(30) && n.up && !n.drained && !n.removed && n.free.cpu_milli > 0) {
          ReplicaShape all_cpu;
          all_cpu.num_gpu = 0;
          all_cpu.cpu_milli = n.free.cpu_milli;
          held.push_back(c.allocate(id, all_cpu));
        }
      }
      const auto& bits = c.cpu_free_nodes();
      for (std::size_t i = 0; i < c.size(); ++i) {
        INFO("seed " << seed << " round " << round << " node " << i);
        const Node& n = c.nodes()[i];
        const bool expected = n.up && !n.drained && !n.removed && n.free.cpu_milli > 0;
        const bool bit = i / 64 < bits.size() && ((bits[i / 64] >> (i % 64)) & 1);
        REQUIRE(bit == expected);
        (bit ? with : without) += 1;
        if (!bit)
          for (int k = 0; k < 4; ++k) {
            ReplicaShape r = random_shape(g, c);
            if (r.cpu_milli > 0) CHECK(c.replica_slots(NodeId(std::int32_t(i)), r) == 0);
          }
      }
      for (std::size_t j = 0; j < held.size(); j += 2)
        if (!c.node(held[j].node).removed) c.release(held[j]);
      std::vector<ReplicaAllocation> kept;
      for (std::size_t j = 1; j < held.size(); j += 2) kept.push_back(held[j]);
      held = std::move(kept);
      random_node_changes(g, c);
    }
  }
  CHECK(with > 1000);  // not vacuous: both kinds are common
  CHECK(without > 1000);
}

TEST_CASE("several GPU shares per replica are not counted by slots") {
  ReplicaShape two_shares;
  two_shares.num_gpu = 2;
  two_shares.gpu_milli = 500;
  CHECK_FALSE(Cluster::replica_slots_exact(two_shares));
  ReplicaShape whole = two_shares;
  whole.gpu_milli = kMilliPerGpu;
  CHECK(Cluster::replica_slots_exact(whole));
  ReplicaShape cpu;
  cpu.num_gpu = 0;
  cpu.cpu_milli = 1000;
  CHECK(Cluster::replica_slots_exact(cpu));
}

TEST_CASE("free sums and cpu_free_nodes stay equal to a recount through CPU-only and GPU allocations, releases and node changes") {
  // Cluster::apply_no_gpu (an allocation or release without GPUs, node groups and fit tree
  // off) moves a node's (pool, model) sum by the allocation alone; the general path takes the
  // node's whole free capacity out and back in. Node groups on (the general path for every
  // allocation) on a copy fed the same operations must give the same sums, and both must equal
  // a recount over the up, undrained nodes.
  std::size_t cpu_only_ops = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    Gen g(seed);
    Cluster c = random_cluster(g);
    Cluster ref = c;
    ref.enable_node_groups(NodeGroupOptions{});
    std::vector<ReplicaAllocation> held;
    for (int round = 0; round < 12; ++round) {
      for (auto k = g.range(0, 4 * std::int64_t(c.size())); k > 0; --k) {
        const NodeId id(std::int32_t(g.range(0, std::int64_t(c.size()) - 1)));
        ReplicaShape r = random_shape(g, c);
        if (g.chance(50)) r.num_gpu = 0;  // (CPU-only: the one-pass path)
        if (!c.fits(id, r)) continue;
        held.push_back(c.allocate(id, r));
        REQUIRE(ref.allocate(id, r).gpu_mask == held.back().gpu_mask);
        cpu_only_ops += held.back().gpu_mask == 0;
      }
      for (std::size_t j = 0; j < held.size(); j += 2)
        if (!c.node(held[j].node).removed) {
          c.release(held[j]);
          ref.release(held[j]);
        }
      std::vector<ReplicaAllocation> kept;
      for (std::size_t j = 1; j < held.size(); j += 2) kept.push_back(held[j]);
      held = std::move(kept);
      random_node_changes(g, c, {&ref});
      std::vector<Cluster::FreeSum> recount(c.pools().size() * Cluster::kSlotsPerPool);
      for (const Node& n : c.nodes()) {
        if (!n.up || n.drained || n.removed) continue;
        auto& f = recount[std::size_t(n.pool.index()) * Cluster::kSlotsPerPool + std::size_t(n.model + 1)];
        f += Cluster::FreeSum{n.free.cpu_milli, n.free.mem_mib, n.free.gpu_milli, n.full_free_gpus};
      }
      for (std::size_t i = 0; i < recount.size(); ++i) {
        INFO("seed " << seed << " round " << round << " slot " << i);
        for (const Cluster* x : {&c, &ref}) {
          const Cluster::FreeSum f = x->free_sum(i);
          REQUIRE(f.cpu_milli == recount[i].cpu_milli);
          REQUIRE(f.mem_mib == recount[i].mem_mib);
          REQUIRE(f.gpu_milli == recount[i].gpu_milli);
          REQUIRE(f.full_free_gpus == recount[i].full_free_gpus);
        }
      }
      const auto& bits = c.cpu_free_nodes();
      const auto& ref_bits = ref.cpu_free_nodes();
      for (std::size_t i = 0; i < c.size(); ++i) {
        const bool a = i / 64 < bits.size() && ((bits[i / 64] >> (i % 64)) & 1);
        const bool b = i / 64 < ref_bits.size() && ((ref_bits[i / 64] >> (i % 64)) & 1);
        REQUIRE(a == b);
      }
    }
  }
  CHECK(cpu_only_ops > 5000);  // not vacuous
}

}  // namespace SCHEDSIM_UNITY_ID
