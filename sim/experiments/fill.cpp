#include "sim/experiments/fill.hpp"

#include <cfenv>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <fmt/format.h>

#include "libsched/fragmentation.hpp"
#include "libsched/placement/fgd_compat.hpp"
#include "libsched/scheduler.hpp"

namespace sim {

using namespace libsched;

namespace {

std::int64_t requested_milli(const TaskSpec& t) { return t.demand(0).gpu_milli; }

/// Fisher-Yates with Boost.Random (std::shuffle differs across standard libraries).
template <class T>
void portable_shuffle(std::vector<T>& v, boost::random::mt19937_64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) {
    boost::random::uniform_int_distribution<std::size_t> d(0, i - 1);
    std::swap(v[i - 1], v[d(rng)]);
  }
}

/// Round half to even, as Python's round() which the FGD paper's tables use.
int round_half_even(double x) { return int(std::nearbyint(x)); }

/// Fills rows[k].{allocated,frag}_gpu_pct_mean from the points (FillRow docs).
void window_means(FillResult& r, double cluster_milli) {
  const int n = int(r.rows.size());
  std::vector<double> alloc(std::size_t(n), 0), frag(std::size_t(n), 0);
  std::vector<std::size_t> count(std::size_t(n), 0);
  std::vector<int> bucket(r.points.size());
  const int saved = std::fegetround();
  std::fesetround(FE_TONEAREST);
  for (std::size_t i = 0; i < r.points.size(); ++i) bucket[i] = round_half_even(double(r.points[i].arrived_milli) * 100.0 / cluster_milli);
  std::fesetround(saved);
  auto add = [&](int k, int lo, int hi) {
    for (std::size_t i = 0; i < r.points.size(); ++i) {
      if (bucket[i] < lo || bucket[i] > hi) continue;
      alloc[std::size_t(k)] += double(r.points[i].allocated_milli) * 100.0 / cluster_milli;
      frag[std::size_t(k)] += r.points[i].frag_milli * 100.0 / cluster_milli;
      ++count[std::size_t(k)];
    }
  };
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    if (bucket[i] < 0 || bucket[i] >= n) continue;
    const auto k = std::size_t(bucket[i]);
    alloc[k] += double(r.points[i].allocated_milli) * 100.0 / cluster_milli;
    frag[k] += r.points[i].frag_milli * 100.0 / cluster_milli;
    ++count[k];
  }
  for (int k = 0; k < n; ++k) {
    if (count[std::size_t(k)] == 0) add(k, k - 1, k + 1);
    FillRow& row = r.rows[std::size_t(k)];
    row.window_states = count[std::size_t(k)];
    if (row.window_states == 0) {
      row.allocated_gpu_pct_mean = row.allocated_gpu_pct;
      row.frag_gpu_pct_mean = row.frag_gpu_pct;
    } else {
      row.allocated_gpu_pct_mean = alloc[std::size_t(k)] / double(row.window_states);
      row.frag_gpu_pct_mean = frag[std::size_t(k)] / double(row.window_states);
    }
  }
}

/// The whole-percent rows from the points: row k is the state right after the first task that
/// makes arrived >= k %, or the last state when the arrivals stopped below k %.
void rows_from_points(FillResult& r, const std::vector<std::size_t>& failed_after, double cluster_milli, int last_pct) {
  std::size_t i = 0;
  for (int k = 0; k <= last_pct; ++k) {
    while (i + 1 < r.points.size() && double(r.points[i].arrived_milli) * 100.0 / cluster_milli + 1e-9 < double(k)) ++i;
    const FillPoint& p = r.points[i];
    r.rows.push_back(FillRow{k, double(p.allocated_milli) * 100.0 / cluster_milli, p.frag_milli * 100.0 / cluster_milli, failed_after[i]});
  }
}

enum class RefPolicy { random, dot_product, gpu_clustering, gpu_packing, best_fit, fgd };

RefPolicy reference_policy(const std::string& name) {
  static const std::vector<std::pair<std::string, RefPolicy>> k{
      {"random", RefPolicy::random},          {"dot-product", RefPolicy::dot_product}, {"gpu-clustering", RefPolicy::gpu_clustering},
      {"gpu-packing", RefPolicy::gpu_packing}, {"best-fit", RefPolicy::best_fit},       {"fgd", RefPolicy::fgd}};
  for (const auto& [n, p] : k)
    if (n == name) return p;
  throw std::out_of_range("fill: " + name + ": not a reference fill policy (random, dot-product, gpu-clustering, gpu-packing, best-fit, fgd)");
}

/// One pod of the reference engine: its score shape, memory and score-cache type.
struct RefPod {
  fgd_compat::Pod pod;
  std::int64_t mem_mib = 0;
  std::size_t type = 0;
};

/// The reference engine (docs/fill.md "Reference semantics").
FillResult run_reference(const Cluster& cluster, const std::vector<TaskSpec>& tasks, const FillOptions& opts) {
  namespace fc = fgd_compat;
  const RefPolicy policy = reference_policy(opts.policy);
  const std::int64_t cluster_milli = cluster.total_capacity().gpu_milli;

  // Pods and their score types (CPU, GPU count, milli per GPU: what the scores depend on).
  std::vector<RefPod> pods;
  pods.reserve(tasks.size());
  std::map<std::tuple<std::int64_t, std::int32_t, std::int32_t>, std::size_t> type_ids;
  bool any_gpu = false;
  for (const auto& t : tasks) {
    if (t.workers != 0)
      throw std::invalid_argument("fill: task " + t.name + " is a gang of " + std::to_string(t.replicas()) +
                                  " replicas: the reference semantics place single pods (use --semantics platform)");
    const ReplicaShape& s = t.options[0].head;
    RefPod p;
    p.pod = fc::Pod{s.cpu_milli, s.num_gpu, s.num_gpu == 0 ? 0 : s.gpu_milli, s.num_gpu == 0 ? 0 : s.models};
    p.mem_mib = s.mem_mib;
    auto key = std::tuple{p.pod.cpu_milli, p.pod.num_gpu, p.pod.gpu_milli};
    p.type = type_ids.emplace(key, type_ids.size()).first->second;
    any_gpu = any_gpu || p.pod.total_gpu_milli() > 0;
    pods.push_back(p);
  }
  if (!any_gpu) throw std::invalid_argument("fill: no task of the trace asks for a GPU");
  std::vector<fc::Pod> originals;
  originals.reserve(pods.size());
  for (const auto& p : pods) originals.push_back(p.pod);
  const fc::TypicalPods typical = fc::TypicalPods::from_pods(originals, 95.0);

  // Arrival order: the originals shuffled, then clones drawn uniformly (with replacement) until
  // the next clone's milli-GPU per GPU would pass the target.
  boost::random::mt19937_64 rng(opts.seed);
  std::vector<std::size_t> order(pods.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  portable_shuffle(order, rng);
  {
    const double target = opts.target_pct / 100.0 * double(cluster_milli);
    std::int64_t total = 0;
    for (const auto& p : pods) total += p.pod.total_gpu_milli();
    boost::random::uniform_int_distribution<std::size_t> pick(0, pods.size() - 1);
    for (;;) {
      const std::size_t i = pick(rng);
      if (double(total + pods[i].pod.gpu_milli * (pods[i].pod.cpu_only() ? 0 : 1)) > target) break;
      order.push_back(i);
      total += pods[i].pod.total_gpu_milli();
    }
  }

  // Node state and the per-seed random node rank (the tie-break for equal scores).
  struct NodeRt {
    std::int64_t cpu_free = 0, mem_free = 0;
    std::int32_t gpus = 0;
    std::uint32_t gpu_offset = 0;
    ModelMask model_bit = 0;
    fc::AffinitySet affinity;
    std::uint32_t version = 1;
    double frag = 0;
  };
  std::vector<NodeRt> nodes;
  std::vector<std::int32_t> gpu_free;
  for (const Node& n : cluster.nodes()) {
    if (n.removed || !n.up || n.drained) continue;
    NodeRt r;
    r.cpu_free = n.free.cpu_milli;
    r.mem_free = n.free.mem_mib;
    r.gpus = n.gpus;
    r.gpu_offset = std::uint32_t(gpu_free.size());
    r.model_bit = cluster.model_bit(n.model);
    const std::int32_t* g = cluster.gpu_free_begin(NodeId(std::int32_t(&n - cluster.nodes().data())));
    gpu_free.insert(gpu_free.end(), g, g + n.gpus);
    nodes.push_back(r);
  }
  auto view = [&](const NodeRt& n) { return fc::NodeState{n.cpu_free, n.gpus, gpu_free.data() + n.gpu_offset, n.model_bit}; };
  std::vector<std::size_t> rank_order(nodes.size());
  for (std::size_t i = 0; i < rank_order.size(); ++i) rank_order[i] = i;
  portable_shuffle(rank_order, rng);

  FillResult r;
  double frag_total = 0;
  std::int64_t used = 0;
  for (const Node& n : cluster.nodes())
    if (!n.removed) used += n.capacity.gpu_milli - n.free.gpu_milli;
  for (auto& n : nodes) frag_total += n.frag = fc::node_frag_milli(view(n), typical);
  std::vector<std::size_t> failed_after;
  std::size_t failed = 0;
  std::int64_t arrived = 0;
  r.points.push_back(FillPoint{0, used, frag_total});
  failed_after.push_back(0);

  // Score cache: per node and score type, valid while the node's version is unchanged.
  struct Cached {
    std::uint32_t version = 0;
    int score = -1;  // -1: the GPUs do not fit
    std::uint64_t mask = 0;
  };
  const bool use_cache = policy != RefPolicy::random && nodes.size() * type_ids.size() <= 50'000'000;
  std::vector<Cached> cache(use_cache ? nodes.size() * type_ids.size() : 0);
  auto score = [&](std::size_t ni, const RefPod& p) -> Cached {
    const NodeRt& n = nodes[ni];
    Cached* slot = use_cache ? &cache[ni * type_ids.size() + p.type] : nullptr;
    if (slot && slot->version == n.version) return *slot;
    Cached c{n.version, -1, 0};
    const fc::NodeState v = view(n);
    if (policy == RefPolicy::fgd) {
      if (auto f = fc::fgd_score(v, p.pod, typical)) c = Cached{n.version, f->score, f->gpu_mask};
    } else {
      std::optional<std::uint64_t> mask = std::uint64_t{0};
      if (!p.pod.cpu_only()) mask = libsched::detail::choose_gpus(v.gpu_free, v.gpus, p.pod.shape());
      if (mask) {
        c.mask = *mask;
        switch (policy) {
          case RefPolicy::dot_product: c.score = fc::dot_product_score(v, p.pod); break;
          case RefPolicy::gpu_clustering: c.score = fc::gpu_clustering_score(v, n.affinity, p.pod); break;
          case RefPolicy::gpu_packing: c.score = fc::gpu_packing_score(v, p.pod); break;
          case RefPolicy::best_fit: c.score = fc::best_fit_score(v, p.pod); break;
          default: c.score = 0; break;
        }
      }
    }
    if (slot) *slot = c;
    return c;
  };

  std::vector<std::size_t> feasible;
  feasible.reserve(nodes.size());
  for (std::size_t pi : order) {
    const RefPod& p = pods[pi];
    arrived += p.pod.total_gpu_milli();
    ++r.tasks_arrived;
    // Filters: CPU, memory, GPU model, then the GPUs (inside score); scan in rank order and keep
    // the first node with the best score.
    std::size_t best = nodes.size();
    Cached best_c;
    feasible.clear();
    for (std::size_t ni : rank_order) {
      const NodeRt& n = nodes[ni];
      if (p.pod.cpu_milli > n.cpu_free || p.mem_mib > n.mem_free) continue;
      if (!p.pod.cpu_only() && (n.gpus == 0 || (p.pod.models != 0 && (p.pod.models & n.model_bit) == 0))) continue;
      Cached c;
      if (policy == RefPolicy::random) {
        if (!p.pod.cpu_only() && !libsched::detail::choose_gpus(gpu_free.data() + n.gpu_offset, n.gpus, p.pod.shape())) continue;
        feasible.push_back(ni);
        continue;
      }
      c = score(ni, p);
      if (c.score < 0) continue;
      if (best == nodes.size() || c.score > best_c.score) {
        best = ni;
        best_c = c;
      }
    }
    if (policy == RefPolicy::random && !feasible.empty()) {
      boost::random::uniform_int_distribution<std::size_t> d(0, feasible.size() - 1);
      best = feasible[d(rng)];
      const NodeRt& n = nodes[best];
      const std::int32_t* g = gpu_free.data() + n.gpu_offset;
      best_c.mask = 0;
      if (p.pod.share()) {  // a uniform GPU among those with enough free milli
        std::vector<int> fit;
        for (int i = 0; i < n.gpus; ++i)
          if (g[i] >= p.pod.gpu_milli) fit.push_back(i);
        boost::random::uniform_int_distribution<std::size_t> dg(0, fit.size() - 1);
        best_c.mask = std::uint64_t{1} << fit[dg(rng)];
      } else if (!p.pod.cpu_only()) {
        best_c.mask = *libsched::detail::choose_gpus(g, n.gpus, p.pod.shape());
      }
    }
    if (best == nodes.size()) {
      ++failed;
    } else {
      NodeRt& n = nodes[best];
      n.cpu_free -= p.pod.cpu_milli;
      n.mem_free -= p.mem_mib;
      for (std::uint64_t b = best_c.mask; b; b &= b - 1) gpu_free[n.gpu_offset + std::size_t(std::countr_zero(b))] -= p.pod.gpu_milli;
      used += p.pod.total_gpu_milli();
      if (int a = fc::affinity_class(p.pod); a >= 0) n.affinity.set(std::size_t(a));
      ++n.version;
      frag_total -= n.frag;
      frag_total += n.frag = fc::node_frag_milli(view(n), typical);
      ++r.tasks_placed;
    }
    r.points.push_back(FillPoint{arrived, used, frag_total});
    failed_after.push_back(failed);
  }
  rows_from_points(r, failed_after, double(cluster_milli), int(opts.target_pct));
  window_means(r, double(cluster_milli));
  return r;
}

}  // namespace

std::string_view to_string(FillSemantics s) { return s == FillSemantics::reference ? "reference" : "platform"; }

const std::vector<std::string>& reference_fill_policies() {
  static const std::vector<std::string> k{"random", "dot-product", "gpu-clustering", "gpu-packing", "best-fit", "fgd"};
  return k;
}

FillResult run_fill(const Cluster& cluster, const std::vector<TaskSpec>& tasks, const FillOptions& opts) {
  if (tasks.empty()) throw std::invalid_argument("fill: the trace has no task");
  const double cluster_milli = double(cluster.total_capacity().gpu_milli);
  if (cluster_milli <= 0) throw std::invalid_argument("fill: the cluster has no GPU");
  if (opts.semantics == FillSemantics::reference) return run_reference(cluster, tasks, opts);

  // The workload distribution M: every replica shape of the trace, by popularity.
  std::vector<ReplicaShape> shapes;
  for (const auto& t : tasks) {
    shapes.push_back(t.options[0].head);
    for (int w = 0; w < t.workers; ++w) shapes.push_back(t.options[0].worker);
  }
  SchedulerOptions so;
  so.placement = opts.policy;
  so.seed = opts.seed;
  so.preemption = false;
  so.idle_reclaim = false;
  so.spot_eviction = false;
  so.workload = WorkloadDistribution::from_shapes(shapes);
  Scheduler s(cluster, so, opts.registry ? *opts.registry : Registry::builtin());
  FragmentationTracker frag(s.cluster(), so.workload);
  s.take_changed_nodes();

  // Portable shuffle: Fisher-Yates with Boost.Random (std::shuffle differs across libraries).
  boost::random::mt19937_64 rng(opts.seed);
  std::vector<std::size_t> order(tasks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i) {
    boost::random::uniform_int_distribution<std::size_t> d(0, i - 1);
    std::swap(order[i - 1], order[d(rng)]);
  }
  boost::random::uniform_int_distribution<std::size_t> pick(0, tasks.size() - 1);

  FillResult r;
  const int last_pct = int(opts.target_pct);
  const std::int64_t target_milli = std::int64_t(opts.target_pct / 100.0 * cluster_milli + 0.5);
  std::int64_t arrived = 0;
  std::int64_t allocated = 0;
  std::size_t failed = 0;
  int next_row = 0;
  auto emit_rows = [&]() {
    double pct = double(arrived) * 100.0 / cluster_milli;
    while (next_row <= last_pct && double(next_row) <= pct + 1e-9) {
      frag.update(s.cluster(), s.take_changed_nodes());
      r.rows.push_back(FillRow{next_row, double(allocated) * 100.0 / cluster_milli, frag.total() * 100.0 / cluster_milli, failed});
      ++next_row;
    }
  };
  emit_rows();
  r.points.push_back(FillPoint{arrived, allocated, frag.total()});
  std::size_t k = 0;
  while (arrived < target_milli && next_row <= last_pct) {
    const TaskSpec& src = k < order.size() ? tasks[order[k]] : tasks[pick(rng)];
    ++k;
    TaskSpec t = src;
    t.name = fmt::format("fill-{}", k);
    t.submit = 0;
    t.priority = 5;
    TaskId id = s.add_task(std::move(t));
    s.enqueue(id, 0);
    arrived += requested_milli(s.task(id));
    ++r.tasks_arrived;
    ScheduleResult res = s.schedule(0);
    if (res.started.empty()) {
      s.dequeue(id);
      ++failed;
    } else {
      ++r.tasks_placed;
      for (const auto& a : s.placement_of(id)->replicas) allocated += a.total_gpu_milli();
    }
    emit_rows();
    frag.update(s.cluster(), s.take_changed_nodes());
    r.points.push_back(FillPoint{arrived, allocated, frag.total()});
  }
  // The last rows when the arrivals stopped exactly below a whole percent.
  while (next_row <= last_pct && double(arrived) * 100.0 / cluster_milli + 1e-9 >= double(next_row)) emit_rows();
  window_means(r, cluster_milli);
  return r;
}

std::string fill_csv(const FillResult& r) {
  std::string out = "arrived_pct,allocated_gpu_pct,frag_gpu_pct,failed_tasks,allocated_gpu_pct_mean,frag_gpu_pct_mean,window_states\n";
  for (const auto& row : r.rows)
    out += fmt::format("{},{:.4f},{:.4f},{},{:.4f},{:.4f},{}\n", row.arrived_pct, row.allocated_gpu_pct, row.frag_gpu_pct, row.failed_tasks,
                       row.allocated_gpu_pct_mean, row.frag_gpu_pct_mean, row.window_states);
  return out;
}

}  // namespace sim
