// FGD fragmentation (fragmentation.hpp) on hand-computed examples.
#include <catch2/catch.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::testing;

namespace {
/// An 8-GPU A100 node with per-GPU free milli (0, 0, 0, 0, 0, 500, 1000, 1000), and an empty H100 node.
Cluster example_node() {
  Cluster c = make_cluster().node("n0", "A100", 8, 96, 960).node("h0", "H100", 8).build();
  c.allocate(NodeId(0), gpus(5, 1000, 0, 0));  // GPUs 0..4 used
  // then a 500 share takes half of GPU 5 (best fit per GPU, lowest index).
  c.allocate(NodeId(0), gpus(1, 500, 0, 0));
  return c;
}
WorkloadDistribution only(ReplicaShape s) { return WorkloadDistribution::from_shapes({s}); }
}  // namespace

TEST_CASE("a node's fragmentation for one task type follows the FGD formula") {
  Cluster c = example_node();
  NodeId n(0);
  REQUIRE(c.gpu_free(n, 5) == 500);
  REQUIRE(c.node(n).free.gpu_milli == 2500);
  // 1 whole GPU runs; the 500 half GPU is a fragment.
  CHECK(node_fragmentation(c, n, only(gpus(1, 1000, 0, 0))) == 500);
  // 4 whole GPUs cannot run: every free milli-GPU is a fragment.
  CHECK(node_fragmentation(c, n, only(gpus(4, 1000, 0, 0))) == 2500);
  // A 600 share runs on GPU 6 or 7; the 500 GPU is a fragment.
  CHECK(node_fragmentation(c, n, only(gpus(1, 600, 0, 0))) == 500);
  // A 400 share fits every partly free GPU: no fragment.
  CHECK(node_fragmentation(c, n, only(gpus(1, 400, 0, 0))) == 0);
  // A CPU-only task that fits fragments nothing; one that does not fit makes all GPUs fragments.
  CHECK(node_fragmentation(c, n, only(cpu_only(8, 0))) == 0);
  CHECK(node_fragmentation(c, n, only(cpu_only(200, 0))) == 2500);
  // A task that needs another GPU model cannot run here.
  CHECK(node_fragmentation(c, n, only(with_model(gpus(1, 1000, 0, 0), c, "H100"))) == 2500);
}

TEST_CASE("fragmentation against a workload is the popularity-weighted sum") {
  Cluster c = example_node();
  // 3 x (1 GPU) and 1 x (4 GPU): 0.75 * 500 + 0.25 * 2500 = 1000.
  auto w = WorkloadDistribution::from_shapes({gpus(1, 1000, 0, 0), gpus(1, 1000, 0, 0), gpus(1, 1000, 0, 0), gpus(4, 1000, 0, 0)});
  REQUIRE(w.shapes.size() == 2);
  CHECK(node_fragmentation(c, NodeId(0), w) == Approx(1000));
  // The empty H100 node: 1 GPU runs with no fragment, 4 GPUs run with no fragment: 0.
  CHECK(node_fragmentation(c, NodeId(1), w) == 0);
  CHECK(cluster_fragmentation(c, w) == Approx(1000));
}

TEST_CASE("fragmentation after a placement uses the same GPU choice as the allocator") {
  Cluster c = example_node();
  auto w = only(gpus(1, 600, 0, 0));
  // A 300 share goes on the 500 GPU (best fit per GPU): it is left with 200, still a fragment.
  CHECK(node_fragmentation_after(c, NodeId(0), gpus(1, 300, 0, 0), w) == 200);
  // A whole GPU takes GPU 6: GPU 7 still takes a 600 share; the 500 GPU stays a fragment.
  CHECK(node_fragmentation_after(c, NodeId(0), gpus(1, 1000, 0, 0), w) == 500);
  // Two whole GPUs: no GPU can take a 600 share any more; the 500 left are all fragments.
  CHECK(node_fragmentation_after(c, NodeId(0), gpus(2, 1000, 0, 0), w) == 500);
  // Check against a real allocation.
  Cluster d = c;
  d.allocate(NodeId(0), gpus(1, 300, 0, 0));
  CHECK(node_fragmentation(d, NodeId(0), w) == 200);
}

TEST_CASE("a full node has no fragmentation") {
  Cluster c = make_cluster().node("n0", "A100", 2).build();
  c.allocate(NodeId(0), gpus(2, 1000, 0, 0));
  CHECK(node_fragmentation(c, NodeId(0), only(gpus(1, 1000, 0, 0))) == 0);
}

}  // namespace SCHEDSIM_UNITY_ID
