// The FGD-compatible score formulas (libsched/placement/fgd_compat.hpp) against values computed
// by hand from their definitions (docs/fill.md "Policies").
#include <catch2/catch.hpp>

#include <vector>

#include "libsched/placement/fgd_compat.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;
using namespace libsched::fgd_compat;

namespace {
NodeState node(std::int64_t cpu_free, const std::vector<std::int32_t>& gpus, ModelMask model_bit = 1) {
  return NodeState{cpu_free, std::int32_t(gpus.size()), gpus.data(), model_bit};
}
Pod gpu_pod(std::int64_t cpu, std::int32_t k, std::int32_t milli, ModelMask models = 0) { return Pod{cpu, k, milli, models}; }
Pod cpu_pod(std::int64_t cpu) { return Pod{cpu, 0, 0, 0}; }
}  // namespace

TEST_CASE("dot-product: trunc(100 (1 - (c r_c / 128000^2 + L R / 8000^2) / 2)) over the free vector before placement") {
  std::vector<std::int32_t> four{1000, 1000, 1000, 1000};
  // (0.5 x 0.125 + 0.5 x 0.125) / 2 = 0.0625 -> 93.75 -> 93
  CHECK(dot_product_score(node(64000, four), gpu_pod(16000, 1, 1000)) == 93);
  // c = 32000, L = 1000: (0.25 x 0.125 + 0.125 x 0.125) / 2 = 0.0234375 -> 97.65625 -> 97 (less free scores higher)
  std::vector<std::int32_t> one{1000, 0};
  CHECK(dot_product_score(node(32000, one), gpu_pod(16000, 1, 1000)) == 97);
  // CPU-only pod: only the CPU term, 0.5 x 0.125 / 2 -> 96.875 -> 96
  CHECK(dot_product_score(node(64000, four), cpu_pod(16000)) == 96);
}

TEST_CASE("best-fit: trunc(100 (1 - 0.5 CPU leftover / 128000 - 0.5 GPU leftover / 8000)); CPU-only pods see idle GPUs") {
  std::vector<std::int32_t> two{1000, 1000};
  // 0.5 x 64000 / 128000 + 0.5 x 1000 / 8000 = 0.3125 -> 68.75 -> 68
  CHECK(best_fit_score(node(96000, two), gpu_pod(32000, 1, 1000)) == 68);
  // CPU-only: 0.25 + 0.5 x 2000 / 8000 = 0.375 -> 62; on a node whose GPUs are all used: 75
  CHECK(best_fit_score(node(96000, two), cpu_pod(32000)) == 62);
  std::vector<std::int32_t> used{0, 0};
  CHECK(best_fit_score(node(96000, used), cpu_pod(32000)) == 75);
}

TEST_CASE("gpu-packing: idle node max(33 - F, F), new GPUs max(50 - j, 33), share onto a used GPU 100 - free / 100, CPU-only 0") {
  std::vector<std::int32_t> idle8(8, 1000), idle2(2, 1000);
  CHECK(gpu_packing_score(node(64000, idle8), gpu_pod(1000, 1, 1000)) == 25);
  CHECK(gpu_packing_score(node(64000, idle2), gpu_pod(1000, 1, 500)) == 31);
  std::vector<std::int32_t> used{1000, 1000, 300, 0};
  CHECK(gpu_packing_score(node(64000, used), gpu_pod(1000, 1, 1000)) == 49);
  CHECK(gpu_packing_score(node(64000, used), gpu_pod(1000, 2, 1000)) == 48);
  std::vector<std::int32_t> shared{1000, 350, 200};
  CHECK(gpu_packing_score(node(64000, shared), gpu_pod(1000, 1, 250)) == 97);  // onto the 350: 100 - 3
  CHECK(gpu_packing_score(node(64000, shared), gpu_pod(1000, 1, 500)) == 49);  // only the whole GPU fits
  std::vector<std::int32_t> almost{999, 0};
  CHECK(gpu_packing_score(node(64000, almost), gpu_pod(1000, 1, 100)) == 91);
  CHECK(gpu_packing_score(node(64000, used), cpu_pod(1000)) == 0);
}

TEST_CASE("gpu-clustering: 75 / 50 / 25 / 0 by the node's affinity classes plus 25 (8000 - L) / 8000; CPU-only 0") {
  std::vector<std::int32_t> g{1000, 1000, 1000, 0, 0, 0, 0, 0};  // L = 3000: b = 25 x 5000 / 8000 = 15
  AffinitySet share_only, mixed, two_gpu, none;
  share_only.set(0);
  mixed.set(0);
  mixed.set(1);
  two_gpu.set(2);
  const Pod share = gpu_pod(1000, 1, 300);
  CHECK(gpu_clustering_score(node(64000, g), share_only, share) == 90);
  CHECK(gpu_clustering_score(node(64000, g), mixed, share) == 65);
  CHECK(gpu_clustering_score(node(64000, g), none, share) == 40);
  CHECK(gpu_clustering_score(node(64000, g), two_gpu, share) == 15);
  CHECK(gpu_clustering_score(node(64000, g), two_gpu, gpu_pod(1000, 2, 1000)) == 90);
  std::vector<std::int32_t> idle2(2, 1000);  // over 8000, not the node's capacity: b = 25 x 6000 / 8000 = 18
  CHECK(gpu_clustering_score(node(64000, idle2), none, share) == 43);
  CHECK(gpu_clustering_score(node(64000, g), share_only, cpu_pod(1000)) == 0);
  CHECK(affinity_class(share) == 0);
  CHECK(affinity_class(gpu_pod(1000, 4, 1000)) == 4);
  CHECK(affinity_class(cpu_pod(1000)) == -1);
}

TEST_CASE("typical pods: key without memory, sorted by count, kept until 95 % of pods, weights over the kept pods") {
  std::vector<Pod> pods;
  for (int i = 0; i < 12; ++i) pods.push_back(gpu_pod(4000, 1, 1000));
  for (int i = 0; i < 7; ++i) pods.push_back(gpu_pod(8000, 1, 500));
  pods.push_back(cpu_pod(2000));
  TypicalPods t = TypicalPods::from_pods(pods, 95.0);  // 12 + 7 = 19 >= 19: the CPU-only type is cut
  REQUIRE(t.types.size() == 2);
  CHECK(t.types[0].cpu_milli == 4000);
  CHECK(t.weights[0] == Approx(12.0 / 19.0));
  CHECK(t.types[1].gpu_milli == 500);
  CHECK(t.weights[1] == Approx(7.0 / 19.0));
  TypicalPods all = TypicalPods::from_pods(pods, 100.0);
  CHECK(all.types.size() == 3);
  CHECK(all.weights[2] == Approx(1.0 / 20.0));
}

TEST_CASE("fragmentation of one type: 0 without free GPU, L for CPU-only types, missing models, too few GPUs or CPU, else the small GPUs") {
  std::vector<std::int32_t> g{1000, 1000, 500, 0};  // L = 2500
  const NodeState n = node(8000, g, 1);
  CHECK(type_frag_milli(n, gpu_pod(4000, 1, 1000)) == 500);
  CHECK(type_frag_milli(n, gpu_pod(16000, 1, 1000)) == 2500);
  CHECK(type_frag_milli(n, gpu_pod(1000, 4, 1000)) == 2500);
  CHECK(type_frag_milli(n, gpu_pod(1000, 1, 500)) == 0);
  CHECK(type_frag_milli(n, cpu_pod(1000)) == 2500);  // always, though it fits
  CHECK(type_frag_milli(n, gpu_pod(1000, 1, 500, 2)) == 2500);
  std::vector<std::int32_t> full{0, 0};
  CHECK(type_frag_milli(node(8000, full), cpu_pod(1000)) == 0);
  TypicalPods t{{gpu_pod(4000, 1, 1000), cpu_pod(1000), gpu_pod(1000, 1, 500)}, {0.5, 0.25, 0.25}};
  CHECK(node_frag_milli(n, t) == Approx(0.5 * 500 + 0.25 * 2500));
}

TEST_CASE("fgd: trunc(100 sigmoid((F - F') / 1000)); a share tries every GPU, whole GPUs take the lowest free ones") {
  std::vector<std::int32_t> g{1000, 1000, 500, 0};
  const NodeState n = node(8000, g, 1);
  TypicalPods t{{gpu_pod(4000, 1, 1000), gpu_pod(1000, 1, 500)}, {0.5, 0.5}};  // F = 0.5 x 500 = 250
  // Share of 500 on GPU 2: F' = 0 -> sigmoid(0.25) = 0.5622 -> 56; on GPU 0: F' = 500 -> 43.
  auto s = fgd_score(n, gpu_pod(1000, 1, 500), t);
  REQUIRE(s);
  CHECK(s->score == 56);
  CHECK(s->gpu_mask == 0b100);
  // 1 whole GPU on GPU 0: F' = 0.5 x 500 = 250 -> 50.
  auto w = fgd_score(n, gpu_pod(1000, 1, 1000), t);
  REQUIRE(w);
  CHECK(w->score == 50);
  CHECK(w->gpu_mask == 0b1);
  // 2 whole GPUs: GPUs 0 and 1; F' = 0.5 x 500 (no whole GPU left) = 250 -> 50.
  auto two = fgd_score(n, gpu_pod(1000, 2, 1000), t);
  REQUIRE(two);
  CHECK(two->gpu_mask == 0b11);
  CHECK(!fgd_score(n, gpu_pod(1000, 3, 1000), t));
  // A CPU-only pod that leaves less CPU than a typical type needs: F' = 0.5 x 2500 + 0 = 1250,
  // F - F' = -1000 -> sigmoid(-1) = 0.2689 -> 26.
  auto c = fgd_score(n, cpu_pod(5000), t);
  REQUIRE(c);
  CHECK(c->score == 26);
  CHECK(c->gpu_mask == 0);
}

}  // namespace SCHEDSIM_UNITY_ID
