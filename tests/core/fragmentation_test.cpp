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

/// One random change to `c`: when `may_release` and a draw of 0 from [0, hi], a random held
/// replica is released; else a random ask is allocated on a random node where it fits.
template <std::size_t N>
void random_change(Cluster& c, std::vector<ReplicaAllocation>& held, const ReplicaShape (&asks)[N], boost::random::mt19937& rng,
                   bool may_release, int hi) {
  if (may_release && boost::random::uniform_int_distribution<int>(0, hi)(rng) == 0) {
    const std::size_t k = boost::random::uniform_int_distribution<std::size_t>(0, held.size() - 1)(rng);
    c.release(held[k]);
    held[k] = held.back();
    held.pop_back();
    return;
  }
  const NodeId n(boost::random::uniform_int_distribution<std::int32_t>(0, std::int32_t(c.size()) - 1)(rng));
  const ReplicaShape& r = asks[boost::random::uniform_int_distribution<std::size_t>(0, N - 1)(rng)];
  if (c.fits(n, r)) held.push_back(c.allocate(n, r));
}
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

TEST_CASE("the tracker equals node_fragmentation bit for bit through random changes, nodes reported unchanged included") {
  // Shapes with shared and distinct gpu_milli thresholds, a model restriction, CPU-only ones and
  // shapes that need more vCPU than a node has, so every branch of F_n(m) is taken.
  Cluster c = make_cluster().node("a0", "A100", 8, 96, 768).node("a1", "A100", 8, 96, 768).node("v0", "V100", 4, 32, 256)
                  .node("c0", "", 0, 64, 256).build();
  auto w = WorkloadDistribution::from_counts({{gpus(1, 1000), 7}, {gpus(1, 500), 5}, {gpus(2, 500, 4), 3},
                                              {gpus(1, 300, 2), 2}, {gpus(4, 1000, 8), 1}, {cpu_only(4, 8), 2},
                                              {cpu_only(200, 1), 1}, {with_model(gpus(1, 800), c, "V100"), 3}});
  FragmentationTracker tracker(c, w);
  // The reference: every reported node recomputed by node_fragmentation, the running total kept
  // with the same arithmetic (a node reported but unchanged adds f - f = +0.0).
  std::vector<double> ref_node(c.size());
  double ref_total = 0;
  for (std::size_t i = 0; i < c.size(); ++i) ref_total += ref_node[i] = node_fragmentation(c, NodeId(std::int32_t(i)), w);
  const ReplicaShape asks[] = {gpus(1, 1000), gpu_share(500), gpu_share(300), gpu_share(200), gpus(2, 1000, 8, 64), cpu_only(16, 32)};
  boost::random::mt19937 rng(7);
  std::vector<ReplicaAllocation> held;
  for (int step = 0; step < 3000; ++step) {
    random_change(c, held, asks, rng, !held.empty(), 2);
    if (step % 3 != 2) continue;  // several changes between updates: some undo others
    const std::vector<NodeId> changed = c.take_changed();
    tracker.update(c, changed);
    for (NodeId n : changed) {
      const double f = node_fragmentation(c, n, w);
      ref_total += f - ref_node[n.index()];
      ref_node[n.index()] = f;
    }
    // Bit for bit: the per-node values summed in node order, as cluster_fragmentation sums,
    // and the running total against the reference's.
    REQUIRE(tracker.total() == cluster_fragmentation(c, w));
    REQUIRE(tracker.running_total() == ref_total);
  }
}

TEST_CASE("the tracker's memo by node inputs gives the values it computes without it") {
  // Many nodes of two kinds and of other GPU counts (16: beyond the memo, computed each time),
  // shares and whole GPUs, vCPU-only and memory-heavy asks (equal GPU frees with other vCPU or
  // memory free: a memo keyed on the GPUs alone fails), enough distinct states that the memo
  // fills up and starts again several times; a tracker without the memo and node_fragmentation
  // as references.
  auto b = make_cluster();
  for (int i = 0; i < 12; ++i) b.node("a" + std::to_string(i), "A100", 8, 96, 768);
  for (int i = 0; i < 6; ++i) b.node("v" + std::to_string(i), "V100", 8, 96, 768);
  b.node("w0", "V100", 4, 48, 384).node("x0", "A100", 16, 192, 1536);
  Cluster c = b.build();
  auto w = WorkloadDistribution::from_counts({{gpus(1, 1000), 7}, {gpus(1, 500), 5}, {gpus(2, 500, 4), 3}, {gpus(1, 300, 2), 2},
                                              {gpus(4, 1000, 8), 1}, {gpus(1, 100, 60), 1}, {gpus(1, 200, 1, 700), 1},
                                              {cpu_only(4, 8), 2}, {with_model(gpus(1, 800), c, "V100"), 3}});
  FragmentationTracker memo(c, w), plain(c, w);
  plain.set_memo(false);
  const ReplicaShape asks[] = {gpus(1, 1000),        gpu_share(500), gpu_share(300), gpu_share(200), gpu_share(100),
                               gpu_share(700),       gpu_share(900), gpus(2, 1000, 8, 64), cpu_only(3, 5),
                               cpu_only(16, 32),     gpus(1, 100, 7, 90)};
  boost::random::mt19937 rng(11);
  std::vector<ReplicaAllocation> held;
  for (int step = 0; step < 120000; ++step) {
    random_change(c, held, asks, rng, held.size() > 40, 1);
    if (step % 2 != 1) continue;
    const std::vector<NodeId> changed = c.take_changed();
    memo.update(c, changed);
    plain.update(c, changed);
    REQUIRE(memo.running_total() == plain.running_total());
    if (step % 1000 == 1) REQUIRE(memo.total() == cluster_fragmentation(c, w));
  }
  REQUIRE(memo.total() == plain.total());
  REQUIRE(memo.memo_restarts() >= 1);
}

TEST_CASE("the tracker drops a removed GPU node's fragmentation and skips nodes without GPUs") {
  // An empty A100 node is all fragment for a shape that needs more vCPU than it has (F > 0);
  // removed, it has no GPU left and F = 0: the tracker must recompute it, not skip it as a
  // node without GPUs. The CPU node changes but never adds anything.
  Cluster c = make_cluster().node("a0", "A100", 8, 96, 768).node("a1", "A100", 8, 96, 768).node("c0", "", 0, 64, 256).build();
  auto w = WorkloadDistribution::from_counts({{gpus(1, 1000), 3}, {cpu_only(200, 1), 1}});
  FragmentationTracker tracker(c, w);
  REQUIRE(node_fragmentation(c, NodeId(1), w) > 0);
  const ReplicaAllocation a = c.allocate(NodeId(2), cpu_only(16, 32));
  tracker.update(c, c.take_changed());
  REQUIRE(tracker.running_total() == cluster_fragmentation(c, w));
  c.remove_node(NodeId(1));
  tracker.update(c, c.take_changed());
  CHECK(node_fragmentation(c, NodeId(1), w) == 0);
  CHECK(tracker.total() == cluster_fragmentation(c, w));
  CHECK(tracker.running_total() == cluster_fragmentation(c, w));
  c.release(a);
  tracker.update(c, c.take_changed());
  CHECK(tracker.running_total() == cluster_fragmentation(c, w));
}

}  // namespace SCHEDSIM_UNITY_ID
