// FGD-compatible node scores: the six policies of the FGD paper's evaluation (Weng et al.,
// "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
// Descent", USENIX ATC'23) exactly as its authors' simulator computes them: integer scores
// 0..100 (higher wins), normalised by the largest node spec of the openb trace (128 vCPU, 8 GPUs),
// and the "typical pods" fragmentation measure. schedsim's `fill` uses them by default
// (docs/fill.md); the platform scheduler's policies of the same names (placement/builtin.hpp)
// keep their own, finer semantics.
//
// Units: milli-vCPU and milli-GPU (1000 = one whole GPU). Memory enters no score (only the fit).
// Integer truncation is toward zero, as a float-to-int conversion; `/` on integers truncates.
// Because the scores are small integers, ties are common: callers break them with a node order
// (`fill` uses a per-seed random node rank).
#pragma once

#include <algorithm>
#include <bitset>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

#include "libsched/cluster.hpp"

namespace libsched::fgd_compat {

/// The normalisation constants: the largest node of the openb trace (128 vCPU, 8 GPUs).
inline constexpr std::int64_t kMaxSpecCpuMilli = 128000;
inline constexpr std::int64_t kMaxSpecGpuMilli = 8000;

/// One pod (one replica) as the scores see it: `num_gpu` GPUs of `gpu_milli` each (a share:
/// num_gpu = 1, gpu_milli < 1000), `cpu_milli`, the allowed GPU models (0 = any).
/// A CPU-only pod has num_gpu = 0 (its gpu_milli is ignored).
struct Pod {
  std::int64_t cpu_milli = 0;
  std::int32_t num_gpu = 0;
  std::int32_t gpu_milli = 0;
  ModelMask models = 0;

  constexpr bool cpu_only() const { return num_gpu == 0 || gpu_milli == 0; }
  constexpr bool share() const { return num_gpu == 1 && gpu_milli > 0 && gpu_milli < kMilliPerGpu; }
  /// GPUs requested in milli-GPU (num_gpu x gpu_milli; 0 for a CPU-only pod).
  constexpr std::int64_t total_gpu_milli() const { return cpu_only() ? 0 : std::int64_t(num_gpu) * gpu_milli; }
  /// The ReplicaShape for Cluster / detail::choose_gpus (memory 0).
  constexpr ReplicaShape shape() const {
    return ReplicaShape{cpu_only() ? 0 : num_gpu, cpu_only() ? kMilliPerGpu : gpu_milli, cpu_milli, 0, models};
  }
};

/// A node's free state as the scores see it: free milli-vCPU, its GPUs' free milli-GPU
/// (`gpu_free[0..gpus)`), and its GPU model as a ModelMask bit (0 for a CPU-only node).
struct NodeState {
  std::int64_t cpu_free = 0;
  std::int32_t gpus = 0;
  const std::int32_t* gpu_free = nullptr;
  ModelMask model_bit = 0;

  /// L: free milli-GPU summed over the node's GPUs.
  std::int64_t gpu_free_total() const { return std::accumulate(gpu_free, gpu_free + gpus, std::int64_t{0}); }
};

/// GPU-affinity classes present on a node (gpu-clustering): bit 0 = GPU-sharing pods, bit k =
/// pods of k whole GPUs (k = 1..64). CPU-only pods add nothing.
using AffinitySet = std::bitset<kMaxGpusPerNode + 1>;

/// The affinity class bit of a pod: 0 for a share, k for k whole GPUs, -1 for a CPU-only pod.
constexpr int affinity_class(const Pod& p) { return p.cpu_only() ? -1 : p.share() ? 0 : std::min(p.num_gpu, kMaxGpusPerNode); }

/// trunc(x) toward zero as an int (the reference's float-to-int conversion).
inline int trunc_int(double x) { return static_cast<int>(std::trunc(x)); }

/// dot-product: trunc(100 (1 - ((c / 128000)(r_c / 128000) + (L / 8000)(R / 8000)) / 2)) with c, L
/// the node's free CPU and GPU BEFORE placement and r_c, R the pod's request. A smaller product
/// of free by request scores higher (it packs). Example: c = 64000, L = 4000, r_c = 16000,
/// R = 1000: 100 (1 - (0.0625 + 0.0625) / 2) = 93.75 -> 93.
inline int dot_product_score(const NodeState& n, const Pod& p) {
  const double c = double(n.cpu_free) / double(kMaxSpecCpuMilli);
  const double rc = double(p.cpu_milli) / double(kMaxSpecCpuMilli);
  const double l = double(n.gpu_free_total()) / double(kMaxSpecGpuMilli);
  const double r = double(p.total_gpu_milli()) / double(kMaxSpecGpuMilli);
  return trunc_int(100.0 * (1.0 - (c * rc + l * r) / 2.0));
}

/// best-fit: trunc(100 (1 - [0.5 (c - r_c) / 128000 + 0.5 (L - R) / 8000])): the leftover
/// CPU and GPU after placement, weighed equally over the largest node spec. CPU-only pods
/// (R = 0) also see L, so they go where GPUs are used. Example: c = 96000, r_c = 32000,
/// L = 2000, R = 1000: 100 (1 - (0.25 + 0.0625)) = 68.75 -> 68.
inline int best_fit_score(const NodeState& n, const Pod& p) {
  const double cpu_left = double(n.cpu_free - p.cpu_milli) / double(kMaxSpecCpuMilli);
  const double gpu_left = double(n.gpu_free_total() - p.total_gpu_milli()) / double(kMaxSpecGpuMilli);
  return trunc_int(100.0 * (1.0 - (0.5 * cpu_left + 0.5 * gpu_left)));
}

/// gpu-packing: CPU-only pod 0. With F fully free GPUs out of G: an idle node (F = G) scores
/// max(33 - F, F); otherwise the GPUs with free >= gpu_milli are taken by ascending free (first
/// index on ties) until num_gpu are taken: if j >= 1 of them are fully free, max(50 - j, 33);
/// else (a share onto a used GPU) max(100 - (sum of free x 100 / 1000) / 10, 50), i.e.
/// 100 - free / 100 for one share. Returns 0 when the pod does not fit the GPUs.
/// Examples: idle 8-GPU node: 25; 1 GPU onto a used node: 49; share onto a GPU with 350 free: 97.
inline int gpu_packing_score(const NodeState& n, const Pod& p) {
  if (p.cpu_only()) return 0;
  int fully_free = 0;
  for (int i = 0; i < n.gpus; ++i) fully_free += n.gpu_free[i] >= kMilliPerGpu;
  if (fully_free == n.gpus) return std::max(33 - fully_free, fully_free);
  std::vector<int> idx(std::size_t(n.gpus));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return n.gpu_free[a] < n.gpu_free[b]; });
  int taken = 0, whole = 0;
  std::int64_t pct_sum = 0;
  for (int i : idx) {
    if (taken == p.num_gpu) break;
    if (n.gpu_free[i] < p.gpu_milli) continue;
    ++taken;
    whole += n.gpu_free[i] >= kMilliPerGpu;
    pct_sum += std::int64_t(n.gpu_free[i]) * 100 / kMilliPerGpu;
  }
  if (taken < p.num_gpu) return 0;
  if (whole > 0) return std::max(50 - whole, 33);
  return int(std::max<std::int64_t>(100 - pct_sum / 10, 50));
}

/// gpu-clustering: CPU-only pod 0. b = 25 (8000 - L) / 8000 (integer, 0..25: the more GPU in
/// use the higher). A GPU pod scores 75 + b when the node's affinity set is exactly the pod's
/// class, 50 + b when it holds the pod's class among others, 25 + b when it is empty, b
/// otherwise. Example: L = 3000, set {share}, share pod: 75 + 15 = 90.
inline int gpu_clustering_score(const NodeState& n, const AffinitySet& on_node, const Pod& p) {
  if (p.cpu_only()) return 0;
  const int b = int(25 * (kMaxSpecGpuMilli - n.gpu_free_total()) / kMaxSpecGpuMilli);
  const int a = affinity_class(p);
  if (on_node.none()) return 25 + b;
  if (on_node.test(std::size_t(a))) return on_node.count() == 1 ? 75 + b : 50 + b;
  return b;
}

/// The typical pods: pod types (CPU, milli-GPU per GPU, GPU count, allowed models; memory is
/// not part of the type) with their popularity weights (summing to 1 over the kept types).
struct TypicalPods {
  std::vector<Pod> types;
  std::vector<double> weights;

  /// Counts the pods per type, sorts the types by count descending (equal counts: by type
  /// descending) and keeps types until their pods reach >= `popularity_pct` % of all pods;
  /// weights = count / pods of the kept types. Empty input gives no type.
  static TypicalPods from_pods(const std::vector<Pod>& pods, double popularity_pct = 95.0) {
    using Key = std::tuple<std::int64_t, std::int32_t, std::int32_t, ModelMask>;  // cpu, milli, count, models
    std::map<Key, std::size_t> count;
    for (const auto& p : pods)
      ++count[Key{p.cpu_milli, p.cpu_only() ? 0 : p.gpu_milli, p.cpu_only() ? 0 : p.num_gpu, p.cpu_only() ? 0 : p.models}];
    std::vector<std::pair<Key, std::size_t>> v(count.begin(), count.end());
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first > b.first;
    });
    TypicalPods t;
    std::size_t kept = 0;
    const double need = popularity_pct / 100.0 * double(pods.size());
    std::size_t n = 0;
    while (n < v.size() && double(kept) < need) kept += v[n++].second;
    for (std::size_t i = 0; i < n; ++i) {
      auto [cpu, milli, gpus, models] = v[i].first;
      t.types.push_back(Pod{cpu, gpus, milli, models});
      t.weights.push_back(double(v[i].second) / double(kept));
    }
    return t;
  }
};

/// f_n(t), the fragmented milli-GPU of one node for one typical type t: 0 when the node has no
/// free GPU (L = 0); L when t is CPU-only (always, fitting or not), when t needs a model the
/// node lacks, when fewer than t's GPU count have >= t's milli free, or when the node's free
/// CPU is below t's; otherwise the free milli of the GPUs with less than t's milli free.
inline double type_frag_milli(const NodeState& n, const Pod& t) {
  const std::int64_t l = n.gpu_free_total();
  if (l == 0) return 0;
  if (t.cpu_only()) return double(l);
  if (t.models != 0 && (t.models & n.model_bit) == 0) return double(l);
  int usable = 0;
  std::int64_t small = 0;
  for (int i = 0; i < n.gpus; ++i) {
    if (n.gpu_free[i] >= t.gpu_milli) ++usable;
    else small += n.gpu_free[i];
  }
  if (usable < t.num_gpu || n.cpu_free < t.cpu_milli) return double(l);
  return double(small);
}

/// F_n: the node's fragmentation in milli-GPU, sum over typical types of weight x f_n(t).
inline double node_frag_milli(const NodeState& n, const TypicalPods& typical) {
  double f = 0;
  for (std::size_t i = 0; i < typical.types.size(); ++i) f += typical.weights[i] * type_frag_milli(n, typical.types[i]);
  return f;
}

/// An FGD score and the GPUs it implies (bit i = GPU i of the node; 0 for a CPU-only pod).
struct FgdChoice {
  int score = 0;
  std::uint64_t gpu_mask = 0;
};

/// fgd: trunc(100 sigmoid((F - F') / 1000)) with F the node's fragmentation now and F' after
/// placing the pod (CPU reduced by r_c; GPUs: a share is tried on every GPU with enough free
/// milli and the best score wins, first index on ties, and that GPU is the one allocated;
/// whole-GPU pods take the lowest-index fully free GPUs; a CPU-only pod takes no GPU).
/// 50 means no change in fragmentation. nullopt when the pod does not fit the node's GPUs
/// (CPU and memory are the caller's filters). Example: F = F' gives 50.
inline std::optional<FgdChoice> fgd_score(const NodeState& n, const Pod& p, const TypicalPods& typical) {
  const double before = node_frag_milli(n, typical);
  std::int32_t after[kMaxGpusPerNode];
  std::copy(n.gpu_free, n.gpu_free + n.gpus, after);
  NodeState m{n.cpu_free - p.cpu_milli, n.gpus, after, n.model_bit};
  auto score_of = [&]() { return trunc_int(100.0 / (1.0 + std::exp(-(before - node_frag_milli(m, typical)) / 1000.0))); };
  if (p.cpu_only()) return FgdChoice{score_of(), 0};
  if (p.share()) {
    std::optional<FgdChoice> best;
    for (int g = 0; g < n.gpus; ++g) {
      if (n.gpu_free[g] < p.gpu_milli) continue;
      after[g] -= p.gpu_milli;
      const int s = score_of();
      after[g] += p.gpu_milli;
      if (!best || s > best->score) best = FgdChoice{s, std::uint64_t{1} << g};
    }
    return best;
  }
  auto mask = detail::choose_gpus(n.gpu_free, n.gpus, p.shape());
  if (!mask) return std::nullopt;
  for (std::uint64_t b = *mask; b; b &= b - 1) after[std::countr_zero(b)] -= p.gpu_milli;
  return FgdChoice{score_of(), *mask};
}

}  // namespace libsched::fgd_compat
