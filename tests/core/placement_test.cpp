// The ten built-in placement policies on small hand-made clusters, each checked against its
// formula (placement/builtin.hpp, placement/topology.hpp), and the registry.
#include <limits>
#include <set>

#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <libsched/placement/topology.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {

/// Whole-GPU cluster (8-GPU nodes, 96 vCPU, 960 GiB):
///   n0: 3 GPUs free, 96 vCPU free      n1: 2 GPUs free, 96 vCPU free
///   n2: 8 GPUs free, 48 vCPU free      n3: 6 GPUs free, 96 vCPU free
/// The request is 2 GPU + 48 vCPU + 1 GiB.
Cluster whole_gpu_cluster() {
  Cluster c = make_cluster().nodes("n", 4).build();
  c.allocate(NodeId(0), gpus(5, 1000, 0, 0));
  c.allocate(NodeId(1), gpus(6, 1000, 0, 0));
  c.allocate(NodeId(2), cpu_only(48, 0));
  c.allocate(NodeId(3), gpus(2, 1000, 0, 0));
  return c;
}
const ReplicaShape kWholeRequest = gpus(2, 1000, 48, 1);

/// GPU-sharing cluster (4-GPU nodes unless said): m0 empty; m1 GPU0 wholly used; m2 GPU0 500
/// used; m3 GPU0 900 used; m4 (8 GPUs) GPU0 300 used. The request is a 300 milli-GPU share.
Cluster share_cluster() {
  Cluster c = make_cluster().nodes("m", 4, "A100", 4).node("m4", "A100", 8).build();
  c.allocate(NodeId(1), gpus(1, 1000, 0, 0));
  c.allocate(NodeId(2), gpus(1, 500, 0, 0));
  c.allocate(NodeId(3), gpus(1, 900, 0, 0));
  c.allocate(NodeId(4), gpus(1, 300, 0, 0));
  return c;
}
const ReplicaShape kShareRequest = gpus(1, 300, 1, 1);

/// The node a fresh scheduler with policy `name` picks for one replica of `r`.
std::string pick(Cluster c, const std::string& name, const ReplicaShape& r, SchedulerOptions o = {}) {
  o.placement = name;
  Scheduler s(std::move(c), o);
  TaskId t = submit(s, make_task("t").option("x", r));
  s.schedule(0);
  REQUIRE(s.is_running(t));
  return nodes_of(s, t).at(0);
}

}  // namespace

TEST_CASE("first-fit picks the lowest-id feasible node") {
  CHECK(pick(whole_gpu_cluster(), "first-fit", kWholeRequest) == "n0");
  CHECK(pick(share_cluster(), "first-fit", kShareRequest) == "m0");
  // n0 cannot take 4 GPUs: the first feasible node is n2.
  CHECK(pick(whole_gpu_cluster(), "first-fit", gpus(4, 1000, 1, 1)) == "n2");
}

TEST_CASE("best-fit picks the node left with the least free GPU") {
  CHECK(pick(whole_gpu_cluster(), "best-fit", kWholeRequest) == "n1");  // leftover 1,0,6,4
  CHECK(pick(share_cluster(), "best-fit", kShareRequest) == "m1");      // leftover 3700,2700,3200,2800,7400
}

TEST_CASE("fastest-model picks the model the task runs fastest on, then best-fit, then the lowest id") {
  // v0, v1: V100; a0, a1: A100; a0 has 5 GPUs used. The task asks 2 GPUs.
  auto build = [] {
    Cluster c = make_cluster().nodes("v", 2, "V100").nodes("a", 2, "A100").build();
    c.allocate(NodeId(2), gpus(5, 1000, 0, 0));
    return c;
  };
  auto pick_speed = [&](std::vector<GpuSpeed> speeds) {
    SchedulerOptions o;
    o.placement = "fastest-model";
    Scheduler s(build(), o);
    TaskSpec t = make_task("t").option("x", gpus(2, 1000, 1, 1));
    t.gpu_speed = std::move(speeds);
    TaskId id = submit(s, t);
    s.schedule(0);
    REQUIRE(s.is_running(id));
    return nodes_of(s, id).at(0);
  };
  // A100 at 2.0: a0 (3 GPUs left) beats a1 (6 left) by best-fit.
  CHECK(pick_speed({{"A100", 2.0}}) == "a0");
  // V100 at 1.5 (A100 not listed: 1.0): both V100 nodes leave 6 GPUs: the lower id, v0.
  CHECK(pick_speed({{"V100", 1.5}}) == "v0");
  // No speeds: every model 1.0, plain best-fit: a0.
  CHECK(pick_speed({}) == "a0");
  placement::FastestModel f;
  CHECK_FALSE(f.shape_only());
  TaskSpec t = make_task("t").option("x", gpus(2, 1000, 1, 1));
  t.gpu_speed = {{"A100", 2.5}};
  const Cluster c = build();
  CHECK(f.score(c, NodeId(3), ReplicaRequest{t.options[0].head, t, TaskId()}) == 2.5);
  CHECK(f.score(c, NodeId(0), ReplicaRequest{t.options[0].head, t, TaskId()}) == 1.0);
}

TEST_CASE("add_task refuses a gpu_speed that is not > 0 and finite") {
  Scheduler s(make_cluster().nodes("a", 1).build(), SchedulerOptions{});
  TaskSpec t = make_task("t").option("x", gpus(1));
  t.gpu_speed = {{"A100", 0.0}};
  CHECK_THROWS_AS(s.add_task(t), InvalidArgument);
  t.gpu_speed = {{"A100", std::numeric_limits<double>::infinity()}};
  CHECK_THROWS_AS(s.add_task(t), InvalidArgument);
  t.gpu_speed = {{"A100", 2.0}};
  CHECK(s.add_task(t).valid());
}

TEST_CASE("worst-fit picks the node left with the most free GPU") {
  CHECK(pick(whole_gpu_cluster(), "worst-fit", kWholeRequest) == "n2");
  CHECK(pick(share_cluster(), "worst-fit", kShareRequest) == "m4");
}

TEST_CASE("dot-product picks the node whose free capacity best aligns with the request") {
  // score = (2/8)(f_gpu/8) + (48/96)(f_cpu/96) + mem term (equal everywhere):
  // n0 0.59375, n1 0.5625, n2 0.5, n3 0.6875.
  Cluster c = whole_gpu_cluster();
  placement::DotProduct d;
  CHECK(d.score(c, NodeId(3), kWholeRequest) - d.score(c, NodeId(0), kWholeRequest) == Approx(0.6875 - 0.59375));
  CHECK(d.score(c, NodeId(0), kWholeRequest) - d.score(c, NodeId(2), kWholeRequest) == Approx(0.59375 - 0.5));
  CHECK(pick(whole_gpu_cluster(), "dot-product", kWholeRequest) == "n3");
}

TEST_CASE("gpu-packing prefers a partly used GPU, then a used node, then an idle node") {
  // Tier 2: m2 (500 free on GPU0) and m4 (700 free); best-fit among them: m2.
  CHECK(pick(share_cluster(), "gpu-packing", kShareRequest) == "m2");
  Cluster c = share_cluster();
  placement::GpuPacking p;
  CHECK(p.score(c, NodeId(0), kShareRequest) < 0);     // tier 0
  CHECK(p.score(c, NodeId(1), kShareRequest) > 0.5e15); // tier 1 (GPU0 used, no partial GPU)
  CHECK(p.score(c, NodeId(1), kShareRequest) < 1.5e15);
  CHECK(p.score(c, NodeId(3), kShareRequest) < 1.5e15); // 100 free on GPU0 cannot take 300: tier 1
  CHECK(p.score(c, NodeId(2), kShareRequest) > 1.5e15); // tier 2
  // Whole GPUs: a used node (tier 1) beats an idle one even when the idle one is tighter.
  Cluster w = make_cluster().node("big", "A100", 8).node("small", "A100", 2).build();
  w.allocate(NodeId(0), gpus(1, 1000, 0, 0));
  CHECK(pick(w, "gpu-packing", gpus(2)) == "big");
  CHECK(pick(w, "best-fit", gpus(2)) == "small");
}

TEST_CASE("gpu-clustering keeps shares of the same size together and whole GPUs off shared nodes") {
  // Only m4's partly used GPU holds a multiple of 300 (300 used, 700 free).
  CHECK(pick(share_cluster(), "gpu-clustering", kShareRequest) == "m4");
  // Whole GPU: nodes with no shared GPU are m0 and m1; best-fit among them: m1.
  CHECK(pick(share_cluster(), "gpu-clustering", gpus(1)) == "m1");
}

TEST_CASE("random is deterministic per seed and differs across seeds") {
  auto run = [](std::uint64_t seed) {
    SchedulerOptions o;
    o.placement = "random";
    o.seed = seed;
    Scheduler s(make_cluster().nodes("n", 16).build(), o);
    std::vector<std::string> picks;
    for (int i = 0; i < 5; ++i) {
      TaskId t = submit(s, make_task("t" + std::to_string(i)).option("x", gpus(1)));
      s.schedule(0);
      picks.push_back(nodes_of(s, t).at(0));
    }
    return picks;
  };
  CHECK(run(7) == run(7));
  std::set<std::vector<std::string>> distinct;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) distinct.insert(run(seed));
  CHECK(distinct.size() >= 6);
  std::set<std::string> firsts;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) firsts.insert(run(seed).at(0));
  CHECK(firsts.size() >= 3);
}

TEST_CASE("fgd picks the node with the least fragmentation increase") {
  // Workload M = {600 milli-GPU share: 1}. Request 300. F before -> after per node:
  // m0 0 -> 0; m1 0 -> 0; m2 500 -> 200 (-300); m3 100 -> 100 (GPU1 used); m4 0 -> 400 (+400).
  SchedulerOptions o;
  o.workload = WorkloadDistribution::from_shapes({gpus(1, 600, 0, 0)});
  Cluster c = share_cluster();
  CHECK(node_fragmentation(c, NodeId(2), o.workload) == 500);
  CHECK(node_fragmentation_after(c, NodeId(2), kShareRequest, o.workload) == 200);
  CHECK(node_fragmentation_after(c, NodeId(4), kShareRequest, o.workload) == 400);
  CHECK(node_fragmentation_after(c, NodeId(3), kShareRequest, o.workload) == 100);
  CHECK(pick(share_cluster(), "fgd", kShareRequest, o) == "m2");
  // Without a workload, the replica's own shape is M: every node but m2 (+200) stays at +0,
  // and the lowest id wins the tie.
  CHECK(pick(share_cluster(), "fgd", kShareRequest) == "m0");
}

TEST_CASE("topology keeps a gang in one rack where best-fit would spread it") {
  auto cluster = [] {
    Cluster c = make_cluster().rack(0).node("a0", "A100", 8).node("a1", "A100", 8)
                    .rack(1).node("b0", "A100", 8).node("b1", "A100", 8).node("b2", "A100", 8).build();
    // a0, b0, b1, b2: 4 free; a1: 8 free.
    for (int i : {0, 2, 3, 4}) c.allocate(NodeId(i), gpus(4, 1000, 0, 0));
    return c;
  };
  auto gang = [&](const std::string& policy) {
    SchedulerOptions o;
    o.placement = policy;
    Scheduler s(cluster(), o);
    TaskId t = submit(s, make_task("t").workers(2).option("x", gpus(4)));
    s.schedule(0);
    REQUIRE(s.is_running(t));
    std::set<std::int32_t> racks;
    for (const auto& a : s.placement_of(t)->replicas) racks.insert(s.cluster().node(a.node).rack);
    return std::make_pair(nodes_of(s, t), racks.size());
  };
  auto [topo_nodes, topo_racks] = gang("topology");
  CHECK(topo_nodes == std::vector<std::string>{"a0", "a1", "a1"});
  CHECK(topo_racks == 1);
  auto [bf_nodes, bf_racks] = gang("best-fit");
  CHECK(bf_nodes == std::vector<std::string>{"a0", "b0", "b1"});
  CHECK(bf_racks == 2);
}

TEST_CASE("topology distances: same node 0, same rack 2, racks under one switch 4, across switches 6") {
  Cluster c = make_cluster().rack(0, 0).nodes("a", 2).rack(1, 0).nodes("b", 1).rack(2, 1).nodes("c", 1).build();
  placement::Topology t;
  t.begin_gang(c);
  CHECK(t.distance(c, NodeId(0), NodeId(0)) == 0);
  CHECK(t.distance(c, NodeId(0), NodeId(1)) == 2);
  CHECK(t.distance(c, NodeId(0), NodeId(2)) == 4);
  CHECK(t.distance(c, NodeId(0), NodeId(3)) == 6);
}

TEST_CASE("the registry holds the ten built-in policies") {
  auto names = PlacementRegistry::builtin().names();
  CHECK(names == std::vector<std::string>{"best-fit", "dot-product", "fastest-model", "fgd", "first-fit", "gpu-clustering",
                                          "gpu-packing", "random", "topology", "worst-fit"});
  for (const auto& n : names) CHECK(PlacementRegistry::builtin().create(n, {})->name() == n);
}

TEST_CASE("the registry rejects duplicates and unknown names") {
  PlacementRegistry r = PlacementRegistry::builtin();
  CHECK_THROWS_AS(r.add("best-fit", [](const PolicyContext&) { return std::make_unique<placement::BestFit>(); }),
                  std::invalid_argument);
  CHECK_THROWS_AS(r.create("no-such-policy", {}), std::out_of_range);
  SchedulerOptions o;
  o.placement = "no-such-policy";
  CHECK_THROWS_AS(Scheduler(make_cluster().nodes("n", 1).build(), o), std::out_of_range);
}

namespace {
/// A custom policy: the highest node id wins.
class LastFit final : public PlacementPolicy {
 public:
  std::string_view name() const override { return "last-fit"; }
  double score(const Cluster&, NodeId n, const ReplicaShape&) override { return n.value; }
};
}  // namespace

TEST_CASE("the registry can be extended with a custom policy") {
  PlacementRegistry r = PlacementRegistry::builtin();
  r.add("last-fit", [](const PolicyContext&) { return std::make_unique<LastFit>(); });
  CHECK(r.contains("last-fit"));
  CHECK_FALSE(PlacementRegistry::builtin().contains("last-fit"));
  SchedulerOptions o;
  o.placement = "last-fit";
  Scheduler s(make_cluster().nodes("n", 4).build(), o, r);
  TaskId t = submit(s, make_task("t").option("x", gpus(1)));
  s.schedule(0);
  CHECK(nodes_of(s, t) == std::vector<std::string>{"n3"});
}

TEST_CASE("looking (explain, reservations) never changes later random placements") {
  auto run = [](bool look) {
    SchedulerOptions o;
    o.placement = "random";
    o.seed = 11;
    o.queueing = Queueing::backfill;
    Scheduler s(make_cluster().nodes("n", 16, "A100", 2).build(), o);
    std::vector<TaskId> ids;
    for (int i = 0; i < 12; ++i) ids.push_back(submit(s, make_task("t" + std::to_string(i)).workers(1).option("x", gpus(1)).estimate(1000)));
    ids.push_back(submit(s, make_task("big").priority(1).workers(20).option("x", gpus(2)).estimate(1000)));
    std::vector<std::vector<std::string>> out;
    for (Time now = 0; now < 3; ++now) {
      if (look)
        for (TaskId t : ids) {
          s.explain(t, now);
          if (s.is_waiting(t)) s.reservation(t, now);
        }
      s.schedule(now);
      for (TaskId t : ids) out.push_back(nodes_of(s, t));
    }
    return out;
  };
  CHECK(run(true) == run(false));
}

TEST_CASE("topology copes with every node in its own rack") {
  // 20,000 racks: a racks x racks distance matrix would need 3.2 GB.
  ClusterBuilder b;
  b.pool("p");
  for (int i = 0; i < 20'000; ++i) {
    std::string name = fmt::format("n{}", i);  // (not "n" + to_string: GCC 12 -O2 false -Wrestrict)
    b.rack(i, i / 100).node(name, "A100", 1);
  }
  SchedulerOptions o;
  o.placement = "topology";
  Scheduler s(b.build(), o);
  TaskId t = submit(s, make_task("t").workers(2).option("x", gpus(1)));
  s.schedule(0);
  REQUIRE(s.is_running(t));
  // Best-fit puts the master on n0; the workers go to the same switch (n1, n2), 4 hops away.
  CHECK(nodes_of(s, t) == std::vector<std::string>{"n0", "n1", "n2"});
}

}  // namespace SCHEDSIM_UNITY_ID
