// The queue order extension point (Volcano's job order plugins): where a waiting task stands
// in the queue that schedule() passes over (docs/architecture.md "Plugins").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "libsched/errors.hpp"

#include "libsched/plugins/rank.hpp"
#include "libsched/task.hpp"

namespace libsched {

/// Orders the waiting queue. The scheduler calls rank() once when a task is enqueued and keeps
/// the queue sorted by (rank, task name, TaskSpec::sequence, task id) from then on, so rank()
/// must depend on the task alone (its spec and id), never on time or on the cluster; a task's
/// spec does not change while it waits (Scheduler::mutable_task refuses).
class QueueOrder {
 public:
  virtual ~QueueOrder() = default;
  virtual std::string_view name() const = 0;
  /// Smaller goes first; ties by task name, then TaskSpec::sequence, then id.
  virtual Rank rank(const TaskSpec& task, TaskId id) const = 0;
  /// Does this order preempt by itself (srtf)? Then the scheduler asks preempts() for every
  /// running task of the preemptor's priority that the platform rules would not already let it
  /// preempt, and turns off the merging of equal requests (they may differ in what they can
  /// preempt). Default: false (the order only sorts the queue).
  virtual bool preemptive() const { return false; }
  /// Order-driven preemption (only asked when preemptive()): may waiting `preemptor` evict
  /// running `victim`, whose current attempt started at `victim_start` (ms) and holds
  /// `victim_gpu_milli` milli-GPU, at `now` (ms)? Must never let two tasks evict each other.
  /// Default: no.
  virtual bool preempts(const TaskSpec& /*preemptor*/, const TaskSpec& /*victim*/, Time /*victim_start*/,
                        std::int64_t /*victim_gpu_milli*/, Time /*now*/) const {
    return false;
  }
  /// May a running task become a victim by time alone (las: its attained service grows)? Then
  /// the scheduler drops its failure memos at every new instant and asks next_change() for
  /// wake-ups. Default: false (srtf: a running task's remaining time only shrinks).
  virtual bool victims_grow() const { return false; }
  /// The first time after `now` (ms) at which preempts() may turn true for running `victim`
  /// (started at `start`, holding `gpu_milli`), kTimeNever if none. Only asked when victims_grow().
  virtual Time next_change(const TaskSpec& /*victim*/, Time /*start*/, std::int64_t /*gpu_milli*/, Time /*now*/) const {
    return kTimeNever;
  }
  /// Does the rank depend on the task's tenant's attained service (fair)? Then the scheduler
  /// keeps every tenant's attained GPU x seconds, ranks with rank_for_tenant() instead of
  /// rank(), and ranks the whole queue anew at every new instant (a tenant's service grows
  /// while its tasks run). Default: false (rank() at enqueue only).
  virtual bool ranks_by_tenant_service() const { return false; }
  /// The rank of `task` when its tenant (TaskSpec::tenant) has attained `tenant_gpu_s` GPU x
  /// seconds by now: the GPUs x time of its ended attempts and of its running ones so far.
  /// Only asked when ranks_by_tenant_service(). Default: rank().
  virtual Rank rank_for_tenant(const TaskSpec& task, TaskId id, double /*tenant_gpu_s*/) const { return rank(task, id); }
  /// Starvation guard (las: Tiresias's STARVELIMIT): a waiting task for which promotable() holds
  /// and that has waited this long (ms) since its enqueue is promoted: the scheduler resets its
  /// attained service (TaskSpec::attained_gpu_s) to 0 and ranks it again, at the first
  /// scheduling instant at or after that time, and wakes up then (next_eligibility_change).
  /// 0 (default): never.
  virtual Time promote_after() const { return 0; }
  /// Would a promotion move waiting task `task` (las: it is not in the first queue)?
  virtual bool promotable(const TaskSpec& /*task*/) const { return false; }
  /// Task `task` succeeded after `run_time` ms of work in all (Scheduler::note_finished): an
  /// order that learns from history (qssf) records it; ranks given before stay. Default: nothing.
  virtual void task_finished(const TaskSpec& /*task*/, Time /*run_time*/) {}
};

namespace plugins {

/// "priority-fifo" (the default): tasks on idle capacity last, then priority descending, then
/// submit time ascending (then name, sequence, id). Rank = (idle ? 1 : 0, -priority, submit).
class PriorityFifo final : public QueueOrder {
 public:
  std::string_view name() const override { return "priority-fifo"; }
  Rank rank(const TaskSpec& s, TaskId) const override { return of(s); }
  /// The rank itself (the scheduler calls this directly when it runs the builtin order).
  static Rank of(const TaskSpec& s) { return {s.is_idle() ? 1 : 0, -std::int64_t(s.priority), s.submit}; }
};

/// "sjf", "srtf", "sjf-estimate", "srtf-estimate" (docs/scheduler.md "Research queue
/// orders"): shortest job / shortest remaining time first. The time is the task's true
/// remaining run time at enqueue (TaskSpec::true_remaining, the oracle) or the user's estimate
/// (TaskSpec::runtime_estimate); a task without one goes after every task with one, in submit
/// order. Priority still dominates and idle tasks stay last: Rank = (100 x idle - priority,
/// time or max, submit). The `srtf` variants preempt (preempts()).
class ShortestFirst final : public QueueOrder {
 public:
  enum class Source : std::uint8_t { oracle, estimate };
  ShortestFirst(Source source, bool preemptive) : source_(source), preemptive_(preemptive) {}
  std::string_view name() const override {
    if (source_ == Source::oracle) return preemptive_ ? "srtf" : "sjf";
    return preemptive_ ? "srtf-estimate" : "sjf-estimate";
  }
  /// The remaining time (ms) the order reads for `s`, -1 when it has none.
  Time time_of(const TaskSpec& s) const { return source_ == Source::oracle ? s.true_remaining : s.runtime_estimate; }
  Rank rank(const TaskSpec& s, TaskId) const override {
    const Time t = time_of(s);
    return {(s.is_idle() ? 100 : 0) - std::int64_t(s.priority), t >= 0 ? t : std::numeric_limits<std::int64_t>::max(), s.submit};
  }
  bool preemptive() const override { return preemptive_; }
  /// srtf: the victim's remaining time now (its time at enqueue less the time since its attempt
  /// started; none counts as longer than any) exceeds the preemptor's, which must have one.
  bool preempts(const TaskSpec& p, const TaskSpec& v, Time victim_start, std::int64_t, Time now) const override {
    if (!preemptive_) return false;
    const Time tp = time_of(p), tv = time_of(v);
    if (tp < 0) return false;
    return tv < 0 || tv - (now - victim_start) > tp;
  }

 private:
  Source source_;
  bool preemptive_;
};

/// "las" (2D-LAS, Tiresias, NSDI'19; docs/scheduler.md "Research queue orders"): queues by
/// attained service (GPUs x seconds, TaskSpec::attained_gpu_s), split at `thresholds_gpu_s`
/// (k increasing values: k + 1 queues), FIFO by submit time within a queue. Priority still
/// dominates. Rank = (100 x idle - priority, queue, submit). A waiting task evicts a running
/// task whose attained service now puts it in a later queue than the waiting task's.
class Las final : public QueueOrder {
 public:
  /// `starvation` (ms, 0 = off): the starvation guard's limit (promote_after()). Throws
  /// InvalidArgument unless the thresholds are finite, > 0 and strictly increasing, or when
  /// `starvation` is negative.
  explicit Las(std::vector<double> thresholds_gpu_s, Time starvation = 0) : th_(std::move(thresholds_gpu_s)), starve_(starvation) {
    if (starve_ < 0) throw InvalidArgument("Las: las_starvation must be >= 0");
    for (std::size_t i = 0; i < th_.size(); ++i)
      if (!(th_[i] > 0) || !std::isfinite(th_[i]) || (i > 0 && !(th_[i] > th_[i - 1])))
        throw InvalidArgument("Las: las_thresholds_gpu_s must be finite, > 0 and strictly increasing");
  }
  std::string_view name() const override { return "las"; }
  /// The queue of attained service `gpu_s`: how many thresholds it has reached (0 = first).
  std::int64_t queue_of(double gpu_s) const { return std::upper_bound(th_.begin(), th_.end(), gpu_s) - th_.begin(); }
  /// Attained service of a running task at `now`: its ended attempts plus this one.
  static double attained_at(const TaskSpec& v, Time start, std::int64_t gpu_milli, Time now) {
    return v.attained_gpu_s + double(gpu_milli) * double(now - start) / 1e6;
  }
  Rank rank(const TaskSpec& s, TaskId) const override {
    return {(s.is_idle() ? 100 : 0) - std::int64_t(s.priority), queue_of(s.attained_gpu_s), s.submit};
  }
  bool preemptive() const override { return true; }
  bool victims_grow() const override { return true; }
  bool preempts(const TaskSpec& p, const TaskSpec& v, Time start, std::int64_t gpu_milli, Time now) const override {
    return queue_of(attained_at(v, start, gpu_milli, now)) > queue_of(p.attained_gpu_s);
  }
  Time promote_after() const override { return starve_; }
  bool promotable(const TaskSpec& s) const override { return queue_of(s.attained_gpu_s) > 0; }
  /// The attained service (GPU-s) at which a task with `gpu_s` leaves its queue (infinity in the last).
  double next_threshold(double gpu_s) const {
    const auto q = std::size_t(queue_of(gpu_s));
    return q < th_.size() ? th_[q] : std::numeric_limits<double>::infinity();
  }
  /// When the running task reaches its next threshold (ms, rounded up).
  Time next_change(const TaskSpec& v, Time start, std::int64_t gpu_milli, Time now) const override {
    if (gpu_milli <= 0) return kTimeNever;
    const std::int64_t q = queue_of(attained_at(v, start, gpu_milli, now));
    if (q >= std::int64_t(th_.size())) return kTimeNever;
    Time t = start + Time(std::ceil((th_[std::size_t(q)] - v.attained_gpu_s) * 1e6 / double(gpu_milli)));
    while (queue_of(attained_at(v, start, gpu_milli, t)) <= q) ++t;  // (rounding)
    return std::max(t, now + 1);
  }

 private:
  std::vector<double> th_;
  Time starve_ = 0;
};

/// "gittins" (discretized 2D-Gittins index, Tiresias, NSDI'19; docs/scheduler.md "Research
/// queue orders"): las's queues, preemption and starvation guard; within a queue the task with
/// the highest Gittins index goes first. For attained service a and quantum D = the queue's
/// next threshold - a (infinite in the last queue), over the service distribution S (GPU-s
/// samples): G(a) = P(S - a <= D | S > a) / E[min(S - a, D) | S > a]. The rank keeps 1 / G
/// (GPU-s, the expected service per completion; none completing: last):
/// Rank = ((100 x idle - priority) x 64 + queue, round(1000 / G), submit).
class Gittins final : public QueueOrder {
 public:
  /// `service_gpu_s`: the samples of the service distribution (any order; each finite and
  /// >= 0); empty: every index equal (then FIFO within a queue, as las). Throws as Las, and
  /// InvalidArgument for a sample that is negative or not finite.
  Gittins(std::vector<double> thresholds_gpu_s, std::vector<double> service_gpu_s, Time starvation = 0)
      : las_(std::move(thresholds_gpu_s), starvation), s_(std::move(service_gpu_s)) {
    for (double x : s_)
      if (!(x >= 0) || !std::isfinite(x)) throw InvalidArgument("Gittins: service samples must be finite and >= 0");
    std::sort(s_.begin(), s_.end());
    sum_.resize(s_.size() + 1, 0.0);
    for (std::size_t i = 0; i < s_.size(); ++i) sum_[i + 1] = sum_[i] + s_[i];
  }
  std::string_view name() const override { return "gittins"; }
  /// 1 / G(a) in GPU-s (infinity when no sample above `a` ends within the quantum; 0 with no samples).
  double inverse_index(double a) const {
    if (s_.empty()) return 0;
    const double d = las_.next_threshold(a);
    const std::size_t lo = std::size_t(std::upper_bound(s_.begin(), s_.end(), a) - s_.begin());
    const std::size_t hi = std::isfinite(d) ? std::size_t(std::upper_bound(s_.begin(), s_.end(), d) - s_.begin()) : s_.size();
    if (hi <= lo) return std::numeric_limits<double>::infinity();
    // E[min(S - a, D) | S > a] / P(S - a <= D | S > a): the count of samples above a cancels.
    const double ends = double(hi - lo);
    const double within = sum_[hi] - sum_[lo] - a * ends;
    const double beyond = std::isfinite(d) ? (d - a) * double(s_.size() - hi) : 0.0;
    return (within + beyond) / ends;
  }
  Rank rank(const TaskSpec& s, TaskId) const override {
    const double inv = inverse_index(s.attained_gpu_s);
    const std::int64_t key = std::llround(std::min(inv * 1000.0, 9e18));
    return {((s.is_idle() ? 100 : 0) - std::int64_t(s.priority)) * 64 + las_.queue_of(s.attained_gpu_s), key, s.submit};
  }
  bool preemptive() const override { return true; }
  bool victims_grow() const override { return true; }
  bool preempts(const TaskSpec& p, const TaskSpec& v, Time start, std::int64_t gpu_milli, Time now) const override {
    return las_.preempts(p, v, start, gpu_milli, now);
  }
  Time next_change(const TaskSpec& v, Time start, std::int64_t gpu_milli, Time now) const override {
    return las_.next_change(v, start, gpu_milli, now);
  }
  Time promote_after() const override { return las_.promote_after(); }
  bool promotable(const TaskSpec& s) const override { return las_.promotable(s); }

 private:
  Las las_;
  std::vector<double> s_;    ///< samples, ascending
  std::vector<double> sum_;  ///< prefix sums of s_
};

/// "qssf" (quasi-shortest-service-first, Helios, Hu et al., SC'21; docs/scheduler.md "Research
/// queue orders"): the smallest predicted service (predicted duration x the gang's GPUs of its
/// first option) first. The prediction is the task's runtime estimate if it has one, else the
/// mean run time of its user's tasks that succeeded before its enqueue (task_finished), else
/// `default_duration`. Priority still dominates and idle tasks stay last: Rank =
/// (100 x idle - priority, predicted ms x GPUs (GPU-ms), submit). Never preempts.
class Qssf final : public QueueOrder {
 public:
  /// `default_duration` (ms, >= 0): the prediction without estimate or history. Throws
  /// InvalidArgument when negative.
  explicit Qssf(Time default_duration) : default_(default_duration) {
    if (default_ < 0) throw InvalidArgument("Qssf: qssf_default must be >= 0");
  }
  std::string_view name() const override { return "qssf"; }
  /// The predicted duration (ms) of `s` now.
  Time predicted(const TaskSpec& s) const {
    if (s.runtime_estimate >= 0) return s.runtime_estimate;
    const auto it = history_.find(s.user);
    if (it == history_.end()) return default_;
    return Time(std::llround(double(it->second.first) / double(it->second.second)));
  }
  Rank rank(const TaskSpec& s, TaskId) const override {
    const double gpus = s.options.empty() ? 0.0 : double(s.demand(0).gpu_milli) / 1000.0;
    return {(s.is_idle() ? 100 : 0) - std::int64_t(s.priority), std::llround(std::min(double(predicted(s)) * gpus, 9e18)), s.submit};
  }
  void task_finished(const TaskSpec& s, Time run_time) override {
    auto& h = history_[s.user];
    h.first += run_time;
    ++h.second;
  }

 private:
  Time default_;
  std::map<std::string, std::pair<Time, std::int64_t>, std::less<>> history_;  ///< user -> (sum of run times, count)
};

/// "fair" (a fairness baseline after DRF, Ghodsi et al., NSDI'11, and Themis, Mahajan et al.,
/// NSDI'20; docs/scheduler.md "Research queue orders"): the task of the tenant with the least
/// attained service per unit of share goes first. A tenant's share is `shares[tenant]` (> 0),
/// 1 for a tenant not listed. Priority still dominates and idle tasks stay last: Rank =
/// (100 x idle - priority, round(1000 x attained GPU-s / share), submit). Never preempts.
class Fair final : public QueueOrder {
 public:
  /// Throws InvalidArgument unless every share is finite and > 0.
  explicit Fair(std::map<std::string, double, std::less<>> shares) : shares_(std::move(shares)) {
    for (const auto& [tenant, share] : shares_)
      if (!(share > 0) || !std::isfinite(share)) throw InvalidArgument("Fair: the share of tenant " + tenant + " must be finite and > 0");
  }
  std::string_view name() const override { return "fair"; }
  /// The share of `tenant` (1 when not listed).
  double share_of(std::string_view tenant) const {
    const auto it = shares_.find(tenant);
    return it == shares_.end() ? 1.0 : it->second;
  }
  /// Attained service per unit of share in milli-GPU-seconds, rounded to the nearest.
  std::int64_t deficit_key(std::string_view tenant, double tenant_gpu_s) const {
    return std::llround(std::min(tenant_gpu_s / share_of(tenant) * 1000.0, 9e18));
  }
  Rank rank(const TaskSpec& s, TaskId id) const override { return rank_for_tenant(s, id, 0); }
  bool ranks_by_tenant_service() const override { return true; }
  Rank rank_for_tenant(const TaskSpec& s, TaskId, double tenant_gpu_s) const override {
    return {(s.is_idle() ? 100 : 0) - std::int64_t(s.priority), deficit_key(s.tenant, tenant_gpu_s), s.submit};
  }

 private:
  std::map<std::string, double, std::less<>> shares_;
};

}  // namespace plugins
}  // namespace libsched
