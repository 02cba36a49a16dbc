// Action `preempt`: start a waiting gang by preempting a minimal whole-gang set of victims.
//
// Contract. preempt(S, tx, t, now, victims) may change only what `tx` records: it releases
// victims (replicas and quota) and takes the gang's replicas and quota inside tx. On success
// it returns t's placement and appends the victims to `victims`; tx then holds exactly "those
// victims released, t placed", ready to commit (the caller then calls finish_release for each
// victim and commit_start for t). On failure it returns nullopt, `victims` is unchanged in
// content and tx is as it was: never preempt in vain.
// After success:
//   * every victim may yield to t (Session::victim_kind, docs/scheduler.md "Preemption") and
//     started before `now` (no zero-length attempts);
//   * the set is minimal: without any one victim the whole gang would not start (every kept
//     victim is needed against the final set);
//   * the gang is placed on one capacity class; a placement on idle capacity preempts only
//     tasks that run on idle capacity.
// Which victims are chosen follows the configured VictimOrder (plugins/victim_order.hpp): the
// shortest prefix of that order that starts the gang, then minimised.
#pragma once

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "libsched/actions/backfill.hpp"  // add_released
#include "libsched/session.hpp"

namespace libsched::actions {

namespace preempt_detail {

struct Cand {
  Rank rank;
  std::uint64_t sequence;  ///< TaskSpec::sequence: the tie-break before the id
  TaskId id;
  PreemptionKind kind;
  /// The candidate's placement (RunInfo::placement: it stays put while the search runs), read
  /// by the releases and the slot bound without a lookup through the task's entry.
  const Placement* placement = nullptr;
};

/// Necessary condition for preemption to start `t`, without touching the cluster: with what
/// the candidate victims hold given back (per GPU, vCPU and memory), the nodes must offer at
/// least 1 + workers replica slots (Cluster::replica_slots) of a shape no larger than any
/// replica of the gang in any dimension (per option: the head's when there is no worker, else
/// the smaller of head and worker in each of GPUs, milli-GPU, vCPU and memory, and either's
/// models). An upper bound on what preemption can achieve: it ignores pools, node policies,
/// quota and the order replicas are placed in. Slots only grow as capacity is given back, so
/// the sum is kept as candidates are added (free capacity first, then each touched node's
/// change) and the answer is known as soon as it reaches the gang.
///
/// bound_prefix: the smallest k in [0, n] such that the first k candidates (candidate(i), i < k,
/// the victims' ids in the order to test) meet the condition, n + 1 when all n do not (0 when
/// free capacity alone does, or when a replica needs no GPU: no bound then). Since the sum only
/// grows, every prefix shorter than k fails the condition, so no such prefix starts the gang.
/// O(victim replicas visited x GPUs per node + nodes with enough free GPU).
/// bound_prefix_along: the same over a source whose length is not known in advance: has(i)
/// tells whether candidate i exists (called for i = 0, 1, 2, ... before candidate(i), which
/// gives the candidate's placement); no prefix meets the condition: kNoPrefix.
inline constexpr std::size_t kNoPrefix = std::numeric_limits<std::size_t>::max();
template <class Has, class Candidate>
std::size_t bound_prefix_along(Session& S, TaskId t, Has&& has, Candidate&& candidate) {
  auto& st = S.st;
  const Cluster& cluster = st.cluster_;
  const TaskSpec& s = S.spec(t);
  const std::int64_t need = s.replicas();
  using Rel = Session::Core::ScratchRel;
  struct Option {
    ReplicaShape r;          // no larger than any replica of the option
    std::int64_t slots = 0;  // slots the nodes offer so far
  };
  std::vector<Option> opts;
  opts.reserve(s.options.size());
  for (const GangOption& o : s.options) {
    ReplicaShape r = o.head;
    if (s.workers > 0) {
      const ReplicaShape& w = o.worker;
      r.num_gpu = std::min(r.num_gpu, w.num_gpu);
      r.gpu_milli = std::min(r.gpu_milli, w.gpu_milli);
      r.cpu_milli = std::min(r.cpu_milli, w.cpu_milli);
      r.mem_mib = std::min(r.mem_mib, w.mem_mib);
      r.models = r.models == 0 || w.models == 0 ? 0 : (r.models | w.models);
    }
    if (r.num_gpu == 0 || r.gpu_milli <= 0) return 0;  // a replica needs no GPU: no bound here
    opts.push_back({r, 0});
  }
  // Free capacity alone. A node with less free milli-GPU than one replica offers no slot, so
  // only the free index's nodes from that amount up are visited.
  for (Option& o : opts) {
    if (cluster.keeps_free_index()) {
      // Nodes below the replica's GPU capability have no slot (Cluster::gpu_cap_need).
      const auto& order = cluster.free_order();
      order.find_from(order.lower_bound({o.r.total_gpu_milli(), 0, -1}), Cluster::gpu_cap_need(o.r), [&](std::int32_t id) {
        o.slots += cluster.replica_slots(NodeId(id), o.r);
        return o.slots >= need;
      });
    } else {
      for (std::size_t i = 0; i < cluster.size() && o.slots < need; ++i)
        if (!cluster.nodes()[i].removed && cluster.nodes()[i].free.gpu_milli >= o.r.total_gpu_milli())
          o.slots += cluster.replica_slots(NodeId(std::int32_t(i)), o.r);
    }
    if (o.slots >= need) return 0;
  }
  // Then each candidate's replicas: the node's slots with what it gives back, minus without.
  if (st.scratch_slot_.size() < cluster.size()) st.scratch_slot_.assign(cluster.size(), -1);
  std::vector<NodeId> touched;
  auto node_slots = [&](NodeId node, const Rel& rel, const ReplicaShape& r) {
    return cluster.replica_slots(node, r, Resources{0, rel.cpu, rel.mem}, rel.gpu);
  };
  std::size_t k = kNoPrefix;
  for (std::size_t ci = 0; k == kNoPrefix && has(ci); ++ci) {
    for (const auto& a : candidate(ci).replicas) {
      std::int32_t& slot = st.scratch_slot_[a.node.index()];
      if (slot < 0) {
        // scratch_rel_[i] belongs to touched[i]; entries are reused across calls (only the
        // node's own GPUs are zeroed, not all kMaxGpusPerNode of a fresh entry).
        slot = std::int32_t(touched.size());
        if (touched.size() == st.scratch_rel_.size()) st.scratch_rel_.emplace_back();
        Rel& r = st.scratch_rel_[touched.size()];
        r.cpu = r.mem = 0;
        std::fill(r.gpu, r.gpu + cluster.node(a.node).gpus, 0);
        touched.push_back(a.node);
      }
      Rel& rel = st.scratch_rel_[std::size_t(slot)];
      for (Option& o : opts) o.slots -= node_slots(a.node, rel, o.r);
      rel.cpu += a.cpu_milli;
      rel.mem += a.mem_mib;
      for (std::uint64_t m = a.gpu_mask; m; m &= m - 1) rel.gpu[std::countr_zero(m)] += a.gpu_milli;
      for (Option& o : opts) o.slots += node_slots(a.node, rel, o.r);
    }
    for (const Option& o : opts)
      if (o.slots >= need) k = ci + 1;
  }
  for (NodeId node : touched) st.scratch_slot_[node.index()] = -1;
  return k;
}
template <class Candidate>
std::size_t bound_prefix(Session& S, TaskId t, std::size_t n, Candidate&& candidate) {
  auto placement = [&](std::size_t i) -> const Placement& { return *candidate(i).placement; };
  return std::min(bound_prefix_along(S, t, [n](std::size_t i) { return i < n; }, placement), n + 1);
}

/// Whether preemption may start `t` with every candidate given back (bound_prefix over
/// `cands`, in any order).
inline bool may_help(Session& S, TaskId t, const std::vector<Cand>& cands) {
  return bound_prefix(S, t, cands.size(), [&](std::size_t i) -> const Cand& { return cands[i]; }) <= cands.size();
}

/// The candidates for `t` on class `cls`, in running-set order (preempt_class sorts them into
/// victim order as far as it needs): running tasks that started before `now` and may yield to
/// t (on idle capacity: only tasks running on idle capacity).
/// Whether some running task on a capacity class victim_kind accepts for `t` may yield to it
/// on class `cls` (on idle capacity: only tasks on idle capacity). O(classes x priority slots):
/// Core::exposed_by_priority_, no scan of the running set. False: `t` has no candidate (say,
/// only idle reclaim is on and nothing runs on idle, or every running task has t's priority or
/// more).
inline bool any_may_yield(const Session& S, TaskId t, bool hypothetical, ResourceType cls) {
  const TaskSpec& ps = S.spec(t);
  auto may_yield = [&](ResourceType c) {
    return (cls != ResourceType::idle || c == ResourceType::idle) && S.may_yield_on(ps, c, hypothetical);
  };
  return may_yield(ResourceType::reserved) || may_yield(ResourceType::pay_as_you_go) || may_yield(ResourceType::spot) ||
         may_yield(ResourceType::idle);
}

inline std::vector<Cand> candidates(Session& S, TaskId t, Time now, bool hypothetical, ResourceType cls) {
  auto& st = S.st;
  std::vector<Cand> cands;
  const TaskSpec& ps = S.spec(t);
  if (!any_may_yield(S, t, hypothetical, cls)) return cands;  // (saves the scan over the running set)
  // Compact scan over the running tasks (RunInfo keeps what eligibility needs together).
  for (const Session::RunInfo& ri : st.run_info_) {
    if (ri.start >= now) continue;  // started at this instant: no zero-length attempts
    if (cls == ResourceType::idle && ri.capacity != ResourceType::idle) continue;
    auto k = S.victim_kind(ps, ri.capacity, ri.priority, ri.guarantee, hypothetical);
    if (!k && st.order_preempts_) k = S.order_kind(ps, ri.id, ri.capacity, ri.start, now, hypothetical);
    if (!k) continue;
    Time e = now - ri.start;
    Time lost = ri.checkpoint > 0 ? e - (e / ri.checkpoint) * ri.checkpoint : e;
    Rank rank = st.builtin_victim_order_
                    ? plugins::IdleSpotFirst::of(ri.capacity, ri.priority, lost)
                    : st.victim_order_->rank(VictimCandidate{ri.id, S.spec(ri.id), ri.capacity, ri.start, lost, *k});
    cands.push_back({rank, ri.sequence, ri.id, *k, ri.placement});
  }
  return cands;
}

/// Victim order (VictimOrder rank, then TaskSpec::sequence, then id: a total order) over the
/// candidates of one search, established only as far as the search reads it: has(i) makes
/// (*this)[i], the candidate at position i of the order, available, or answers false when
/// there are only i candidates.
///  * From every candidate (candidates()): a sort of all of them (the reference, no fast paths)
///    or a min-heap popped one by one (O(n + k log n) for a search reading k).
///  * From the victim buckets (Core::bucket_victims_: fast paths, the builtin order, a queue
///    order that does not preempt, some preemption on): the buckets are read in the order's first two keys (idle,
///    spot, then reserved and pay-as-you-go together; priority slot ascending), each one's
///    candidates built and ordered (a heap) only when the search reaches it, so a search
///    reading k candidates costs the buckets it reaches, not every running task. Buckets no
///    task of which may yield (victim_kind at the slot's lowest priority) are skipped without
///    reading them. The same candidates as candidates() (exposed tasks, started before `now`,
///    victim_kind, the idle rule) in the same total order.
class VictimStream {
 public:
  VictimStream(std::vector<Cand> all, bool sort) : heap_(std::move(all)) {
    if (sort) {
      std::sort(heap_.begin(), heap_.end(), [](const Cand& a, const Cand& b) { return before(a, b); });
      order_ = std::move(heap_);
      heap_.clear();
    } else {
      order_.reserve(std::min(heap_.size(), std::size_t(64)));
      std::make_heap(heap_.begin(), heap_.end(), after);
    }
  }
  VictimStream(Session& S, TaskId t, Time now, bool hypothetical, ResourceType cls)
      : S_(&S), ps_(&S.spec(t)), now_(now), hypothetical_(hypothetical) {
    using Core = Session::Core;
    static constexpr ResourceType kByKey[3][2] = {{ResourceType::idle, ResourceType::idle},
                                                  {ResourceType::spot, ResourceType::spot},
                                                  {ResourceType::reserved, ResourceType::pay_as_you_go}};
    for (std::uint32_t key = 0; key < 3; ++key)
      for (std::uint32_t slot = 0; slot < Core::kPrioritySlots; ++slot)
        for (std::size_t j = 0; j < (key == 2 ? 2 : 1); ++j) {
          const ResourceType c = kByKey[key][j];
          if (cls == ResourceType::idle && c != ResourceType::idle) continue;
          const std::size_t b = Core::victim_bucket(c, std::int32_t(slot));
          if (S.st.victim_buckets_[b].empty()) continue;
          // Slot s > 0 holds priorities >= s (slot 0: <= 0); victim_kind only rejects more as
          // the priority grows, so a slot whose lowest priority does not yield has no candidate.
          if (slot > 0 && !S.victim_kind(*ps_, c, std::int32_t(slot), false, hypothetical)) continue;
          buckets_.push_back({std::uint32_t(b), key * std::uint32_t(Core::kPrioritySlots) + slot});
        }
  }
  bool has(std::size_t i) {
    while (order_.size() <= i) {
      if (heap_.empty() && !next_group()) return false;
      std::pop_heap(heap_.begin(), heap_.end(), after);
      order_.push_back(heap_.back());
      heap_.pop_back();
    }
    return true;
  }
  const Cand& operator[](std::size_t i) const { return order_[i]; }
  /// The candidates available so far: all n of them once has() answered false.
  std::size_t size() const { return order_.size(); }

  /// Whether preemption may start `t` with every candidate given back (may_help): the
  /// buckets' candidates walked in bucket order, none built or ordered (a failure must read
  /// them all; a success stops where the slot bound is met).
  bool may_help_all(TaskId t) {
    std::size_t b = 0, pos = 0;
    auto has = [&](std::size_t) {
      for (; b < buckets_.size(); ++b, pos = 0) {
        const auto& bucket = S_->st.victim_buckets_[buckets_[b].bucket];
        for (; pos < bucket.size(); ++pos)
          if (kind(bucket[pos])) return true;
      }
      return false;
    };
    auto placement = [&](std::size_t) -> const Placement& { return *S_->st.victim_buckets_[buckets_[b].bucket][pos++].placement; };
    return bound_prefix_along(*S_, t, has, placement) != kNoPrefix;
  }

 private:
  /// The victim order: rank (element by element), then sequence, then id.
  static bool before(const Cand& a, const Cand& b) {
    for (std::size_t i = 0; i < a.rank.size(); ++i)
      if (a.rank[i] != b.rank[i]) return a.rank[i] < b.rank[i];
    if (a.sequence != b.sequence) return a.sequence < b.sequence;
    return a.id < b.id;
  }
  /// The heap's comparison (a min-heap of the order), as a type: inlined in the heap's loops,
  /// where a function pointer was called per comparison.
  struct After {
    bool operator()(const Cand& a, const Cand& b) const { return before(b, a); }
  };
  static constexpr After after{};
  std::optional<PreemptionKind> kind(const Session::RunInfo& ri) const {
    if (ri.start >= now_) return std::nullopt;  // started at this instant: no zero-length attempts
    return S_->victim_kind(*ps_, ri.capacity, ri.priority, ri.guarantee, hypothetical_);
  }
  /// Builds the next group of buckets (one (key, slot)) with a candidate into the heap.
  bool next_group() {
    if (!S_) return false;
    while (heap_.empty() && next_ < buckets_.size()) {
      const std::uint32_t group = buckets_[next_].group;
      for (; next_ < buckets_.size() && buckets_[next_].group == group; ++next_)
        for (const Session::RunInfo& ri : S_->st.victim_buckets_[buckets_[next_].bucket]) {
          const auto k = kind(ri);
          if (!k) continue;
          Time e = now_ - ri.start;
          Time lost = ri.checkpoint > 0 ? e - (e / ri.checkpoint) * ri.checkpoint : e;
          heap_.push_back({plugins::IdleSpotFirst::of(ri.capacity, ri.priority, lost), ri.sequence, ri.id, *k, ri.placement});
        }
      std::make_heap(heap_.begin(), heap_.end(), after);
    }
    return !heap_.empty();
  }
  struct Bucket {
    std::uint32_t bucket;  ///< index in Core::victim_buckets_
    std::uint32_t group;   ///< (key, slot): buckets of one group share the order's first two keys
  };
  Session* S_ = nullptr;  ///< bucket source only
  const TaskSpec* ps_ = nullptr;
  Time now_ = 0;
  bool hypothetical_ = false;
  std::vector<Bucket> buckets_;  ///< the buckets that may hold candidates, in victim order
  std::size_t next_ = 0;         ///< the first bucket not yet built
  std::vector<Cand> heap_;       ///< min-heap of the candidates built and not yet ordered
  std::vector<Cand> order_;      ///< the first candidates in victim order
};

/// The victim search's probes by slots (fast paths, Session::slots_decide for the preemptor):
/// whether try_start(t, only cls) would place the gang with a set of candidates released,
/// answered by Session::fits_by_slots over what they hold, counted per node (ReleasedCapacity)
/// and per (pool, model) (`delta`, add_released's layout: actions/backfill.hpp), with only
/// their quota refunds charged inside tx. The reservation walk's rule (actions::reservation):
/// every placement policy places a gang of such a shape exactly when the eligible nodes'
/// slots reach its replica count, so the answer is try_start's, without releasing into the
/// cluster and rolling back (no free-order moves, no undo). The counts are sums: a set changes
/// one candidate at a time, in any order. Holds Core::preempt_released_ / preempt_delta_ while
/// it lives (empty between uses).
class SlotProbe {
 public:
  SlotProbe(Session& S, Transaction& tx, TaskId t, Time now, ResourceType cls)
      : S_(S), tx_(tx), t_(t), now_(now), cls_(cls), rel_(std::move(S.st.preempt_released_)), delta_(std::move(S.st.preempt_delta_)) {
    delta_.assign(S.st.cluster_.pools().size() * Cluster::kSlotsPerPool, Cluster::FreeSum{});
  }
  SlotProbe(const SlotProbe&) = delete;
  SlotProbe& operator=(const SlotProbe&) = delete;
  ~SlotProbe() {
    rel_.clear(S_.st.cluster_);
    S_.st.preempt_released_ = std::move(rel_);
    S_.st.preempt_delta_ = std::move(delta_);
  }
  /// Counts what placement `p` holds as released (sign +1) or no longer (-1). The quota is
  /// not touched (refund()).
  void count(const Placement& p, int sign) {
    const Cluster& c = S_.st.cluster_;
    for (const auto& a : p.replicas) {
      if (sign > 0) rel_.add(c, a);
      else rel_.remove(c, a);
    }
    if (sign > 0) add_released<1>(c, p, delta_);
    else add_released<-1>(c, p, delta_);
  }
  /// Refunds (sign +1) p's quota inside tx as Session::release_into does, or charges it back (-1).
  void refund(const Placement& p, int sign = 1) {
    if (p.capacity != ResourceType::idle) tx_.charge(p.quota_key, p.quota_held, -sign);
  }
  /// Nothing counted (the quota charges are the caller's to roll back).
  void reset() {
    rel_.clear(S_.st.cluster_);
    std::fill(delta_.begin(), delta_.end(), Cluster::FreeSum{});
  }
  /// Would try_start(tx, t, now, false, cls) place the gang with what is counted released?
  bool fits() const { return S_.fits_by_slots(t_, now_, rel_, &delta_, cls_); }
  /// Does node `id` (touched by what is counted), with what is counted released on it, fit a
  /// replica of some option of the gang (Cluster::replica_slots; slots_decide: the head's
  /// shape is every replica's)?
  bool offers_slot(NodeId id) const {
    const Cluster& c = S_.st.cluster_;
    const std::int32_t* gpu = rel_.gpu.data() + c.nodes()[id.index()].gpu_offset;
    for (const GangOption& o : S_.spec(t_).options)
      if (c.replica_slots(id, o.head, rel_.node[id.index()], gpu) > 0) return true;
    return false;
  }

 private:
  Session& S_;
  Transaction& tx_;
  TaskId t_;
  Time now_;
  ResourceType cls_;
  detail::ReleasedCapacity rel_;
  std::vector<Cluster::FreeSum> delta_;
};

/// Preemption on one capacity class (see the file's contract).
inline std::optional<Placement> preempt_class(Session& S, Transaction& tx, TaskId t, Time now, std::vector<Preemption>& victims,
                                              bool hypothetical, ResourceType cls) {
  auto& st = S.st;
  std::optional<VictimStream> src;
  if (st.bucket_victims_) {
    if (!any_may_yield(S, t, hypothetical, cls)) return std::nullopt;  // (as candidates(): no bucket walk)
    src.emplace(S, t, now, hypothetical, cls);
    if (!src->has(0)) return std::nullopt;
    // A search that fails reads every candidate: in bucket order (may_help_all) that costs no
    // ordering. A search that succeeds would read them twice (there, then along the order), so
    // the check is made only while searches fail (Core::preempt_bound_failed_): the answer is
    // the same either way, only its cost follows the workload.
    if (st.preempt_bound_failed_ && !src->may_help_all(t)) return std::nullopt;
  } else {
    std::vector<Cand> cands = candidates(S, t, now, hypothetical, cls);
    if (cands.empty()) return std::nullopt;
    if (st.options_.fast_paths && !may_help(S, t, cands)) return std::nullopt;
    src.emplace(std::move(cands), !st.options_.fast_paths);
  }
  VictimStream& order = *src;
  // Prefixes shorter than `k0` cannot start the gang (bound_prefix in victim order): the search
  // below counts them as failed without releasing or trying them, which is what their trials
  // would answer, so the victims are the same. Without fast paths every prefix is tried.
  const std::size_t k0 =
      st.options_.fast_paths
          ? bound_prefix_along(S, t, [&](std::size_t i) { return order.has(i); },
                               [&](std::size_t i) -> const Placement& { return *order[i].placement; })
          : 0;
  // No prefix meets the slot bound: not even every candidate starts the gang (what may_help
  // answers over the candidates; the bucketed source learns it here, along the order).
  if (st.bucket_victims_) st.preempt_bound_failed_ = k0 == kNoPrefix;
  if (k0 == kNoPrefix) return std::nullopt;
  std::size_t m0 = tx.mark();
  // Fast paths, a gang of one exact-slot shape: every probe below goes by slots (SlotProbe);
  // only the placement at the prefix found and the final start are placed on released state.
  std::optional<SlotProbe> probe;
  if (S.slots_decide(S.spec(t))) probe.emplace(S, tx, t, now, cls);
  const bool by_slots = probe.has_value();
  // The shortest prefix of the candidate order that lets the whole gang start. Galloping
  // search (prefixes of 1, 2, 4, ... victims), then binary search inside the last doubling;
  // if even every candidate is not enough, nothing is preempted (never in vain). The prefix
  // is moved with transaction marks (release more, or roll back to a shorter prefix), so
  // finding a k-victim answer costs O(k) releases and O(log k) gang trials.
  std::vector<std::size_t> marks{m0};   // marks[i]: state with the first i candidates released
  auto set_prefix = [&](std::size_t k) {
    order.has(k - 1);
    if (k + 1 < marks.size()) {
      tx.rollback_to(marks[k]);
      if (by_slots)
        for (std::size_t i = k; i + 1 < marks.size(); ++i) probe->count(*order[i].placement, -1);
      marks.resize(k + 1);
    }
    while (marks.size() <= k) {
      const Placement& p = *order[marks.size() - 1].placement;
      if (by_slots) {
        probe->count(p, +1);
        probe->refund(p);
      } else {
        S.release_into(tx, p);
      }
      marks.push_back(tx.mark());
    }
  };
  // The placement of the last probe that started the gang: its prefix is `hi` below (hi moves
  // only on a success), so the check of which victims the gang's nodes need reads it instead
  // of releasing the same prefix again and placing the gang on the same state.
  std::optional<Placement> at_hi;
  auto starts_with_prefix = [&](std::size_t k) {
    if (k < k0) return false;
    set_prefix(k);
    if (by_slots) return probe->fits();  // (at_hi is placed once the prefix is known)
    std::size_t m1 = tx.mark();
    auto p = S.try_start(tx, t, now, false, cls);
    tx.rollback_to(m1);
    if (!p) return false;
    at_hi = std::move(p);
    return true;
  };
  // (min(next, n) for n candidates: order.has(i) holds exactly for i < n.)
  std::size_t hi = 0;
  // By slots the answer only grows with what is released (more slots, more quota refunded:
  // fits_by_slots is monotone in the prefix), so the shortest prefix is the smallest k >= k0
  // that fits, whatever the probe sequence: the gallop starts at the bound (usually the answer
  // itself: one probe instead of a doubling past it and a binary search back) and steps 1, 2,
  // 4, ... above it. By placement it doubles from one, as it always has.
  std::size_t failed = by_slots && k0 > 0 ? k0 - 1 : 0;  // the longest prefix known not to start the gang
  for (std::size_t size = failed + 1, step = 1;; step *= 2) {
    if (starts_with_prefix(size)) {
      hi = size;
      break;
    }
    failed = size;
    if (!order.has(size)) break;  // size == n
    const std::size_t next = by_slots ? size + step : size * 2;
    size = order.has(next - 1) ? next : order.size();
  }
  if (hi == 0) {
    tx.rollback_to(m0);
    return std::nullopt;
  }
  // (Trying each prefix by placement, the binary search keeps the doubling's lower half, as
  // it always has: with a greedy placement, shorter prefixes are not known to fail.)
  std::size_t lo = by_slots ? failed + 1 : hi / 2 + 1;
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (starts_with_prefix(mid)) hi = mid;
    else lo = mid + 1;
  }
  tx.rollback_to(m0);
  lo = hi;
  if (by_slots) {
    // The placement on the prefix found, as the probe at `hi` would have placed it. With a
    // policy that picks among the nodes that fit a replica by their own state
    // (Core::feasible_only_placement_), only the releases on nodes that then fit one matter:
    // a node that fits none is never picked, with or without its releases, and every other
    // node is as with all of them (Session::may_fit, a necessary condition, holds whenever the
    // gang places). So those replicas alone are released, every victim's quota refunded: the
    // same placement, without moving the prefix's other nodes in the free order and back.
    probe->reset();
    if (st.feasible_only_placement_) {
      for (std::size_t i = 0; i < lo; ++i) probe->count(*order[i].placement, +1);
      std::vector<const ReplicaAllocation*> fitting;  // (chosen before any is released: offers_slot reads the cluster)
      for (std::size_t i = 0; i < lo; ++i)
        for (const auto& a : order[i].placement->replicas)
          if (probe->offers_slot(a.node)) fitting.push_back(&a);
      probe->reset();
      for (const ReplicaAllocation* a : fitting) tx.release(*a);
      for (std::size_t i = 0; i < lo; ++i) probe->refund(*order[i].placement);
    } else {
      for (std::size_t i = 0; i < lo; ++i) S.release_into(tx, *order[i].placement);
    }
    at_hi = S.try_start(tx, t, now, false, cls);
    tx.rollback_to(m0);
    if (!at_hi) return std::nullopt;  // cannot happen (the probe by slots is try_start's answer); stay safe
  }
  std::vector<std::size_t> chosen(lo);
  for (std::size_t i = 0; i < lo; ++i) chosen[i] = i;
  // Victims holding nothing on the nodes the gang would use are usually not needed: keep
  // only the ones on those nodes when that still starts the gang (then the quadratic
  // minimisation below runs on a handful).
  {
    std::optional<Placement> p;
    if (st.options_.fast_paths) {
      p = std::move(at_hi);  // the same state: order[0, lo) released in this order from m0
    } else {
      for (std::size_t i = 0; i < lo; ++i) S.release_into(tx, *order[i].placement);
      p = S.try_start(tx, t, now, false, cls);
      tx.rollback_to(m0);
    }
    std::vector<NodeId> used;
    if (p)
      for (const auto& a : p->replicas) used.push_back(a.node);
    std::sort(used.begin(), used.end());
    std::vector<std::size_t> relevant;
    for (std::size_t i = 0; i < lo; ++i) {
      bool on_used = false;
      for (const auto& a : order[i].placement->replicas)
        on_used = on_used || std::binary_search(used.begin(), used.end(), a.node);
      if (on_used) relevant.push_back(i);
    }
    if (relevant.size() < lo) {
      bool ok;
      if (by_slots) {
        for (std::size_t i : relevant) {
          probe->count(*order[i].placement, +1);
          probe->refund(*order[i].placement);
        }
        ok = probe->fits();
        probe->reset();
      } else {
        for (std::size_t i : relevant) S.release_into(tx, *order[i].placement);
        ok = S.try_start(tx, t, now, false, cls).has_value();
      }
      tx.rollback_to(m0);
      if (ok) chosen = relevant;
    }
  }
  // Minimise: drop each victim (newest first) if the gang still starts without it, and
  // repeat until a whole round drops nothing. One round is not enough: placement is greedy,
  // so freeing less can succeed where freeing more failed (a policy may pick a different,
  // worse node when more is free); only a round with no drop proves that every kept victim
  // is needed against the final set.
  std::vector<bool> keep(chosen.size(), true);
  if (by_slots) {
    // The same rounds by slots: every kept victim counted, the one tested taken out (its
    // quota charged back) and put back unless dropped: O(victims) per round, not squared.
    for (std::size_t i : chosen) {
      probe->count(*order[i].placement, +1);
      probe->refund(*order[i].placement);
    }
    std::size_t m2 = tx.mark();
    for (bool dropped = true; dropped;) {
      dropped = false;
      for (std::size_t j = chosen.size(); j-- > 0;) {
        if (!keep[j]) continue;
        const Placement& p = *order[chosen[j]].placement;
        probe->count(p, -1);
        probe->refund(p, -1);
        const bool ok = probe->fits();
        if (ok) {
          keep[j] = false;
          dropped = true;
          m2 = tx.mark();
        } else {
          tx.rollback_to(m2);
          probe->count(p, +1);
        }
      }
    }
    probe->reset();
  }
  for (bool dropped = !by_slots; dropped;) {
    dropped = false;
    for (std::size_t j = chosen.size(); j-- > 0;) {
      if (!keep[j]) continue;
      tx.rollback_to(m0);
      for (std::size_t q = 0; q < chosen.size(); ++q)
        if (keep[q] && q != j) S.release_into(tx, *order[chosen[q]].placement);
      if (S.try_start(tx, t, now, false, cls)) {
        keep[j] = false;
        dropped = true;
      }
    }
  }
  tx.rollback_to(m0);
  for (std::size_t q = 0; q < chosen.size(); ++q) {
    if (!keep[q]) continue;
    S.release_into(tx, *order[chosen[q]].placement);
    victims.push_back(Preemption{order[chosen[q]].id, t, order[chosen[q]].kind});
  }
  auto p = S.try_start(tx, t, now, false, cls);
  if (!p) {  // cannot happen: the kept set was tested; stay safe
    tx.rollback_to(m0);
    victims.clear();
  }
  return p;
}

}  // namespace preempt_detail

/// Gang-aware preemption (see the file's contract). `hypothetical`: as if preemption, idle
/// reclaim and spot eviction were all enabled (explain() only).
inline std::optional<Placement> preempt(Session& S, Transaction& tx, TaskId t, Time now, std::vector<Preemption>& victims,
                                        bool hypothetical = false) {
  // One capacity class at a time, in the task's order. A placement on idle capacity may
  // only reclaim tasks that run on idle capacity themselves: evicting an owner's task to
  // run on "idle" capacity would let the victim reclaim it right back (ping-pong).
  for (ResourceType cls : Session::classes(S.spec(t))) {
    auto p = preempt_detail::preempt_class(S, tx, t, now, victims, hypothetical, cls);
    if (p) return p;
  }
  return std::nullopt;
}

}  // namespace libsched::actions
