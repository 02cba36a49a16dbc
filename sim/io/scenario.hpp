// Typed model of a scenario file (contract v1, docs/scenario-format.md).
//
// This is the I/O edge's view of a scenario: plain values with the units of the file
// (seconds, vCPU, GiB), already checked by sim::io::validate_scenario. The simulator
// converts it into libsched objects (integer milliseconds, milli-CPU, MiB). No JSON here:
// parsing lives in scenario_json.cpp and scenario_read_*.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/io/interned.hpp"

namespace sim::io {

/// `cluster.instance_specs[i]`: what one replica asks for when it names this spec (x count_per_node).
struct InstanceSpecCfg {
  std::string name;
  std::string gpu_model;     ///< empty for CPU-only specs
  int gpus = 0;              ///< whole GPUs
  int gpu_milli = 1000;      ///< milli-GPU per GPU (extension; < 1000 only with gpus == 1: a GPU share)
  double vcpu = 0;           ///< vCPU
  double memory_gib = 0;     ///< GiB
};

/// `cluster.pools[i].node_groups[j]`: `count` identical nodes named prefix + index.
struct NodeGroupCfg {
  std::string prefix;
  int count = 0;
  std::string gpu_model;     ///< empty for CPU-only nodes
  int gpus = 0;
  double vcpu = 0;
  double memory_gib = 0;
  int nodes_per_rack = 0;    ///< extension: topology; 0 = the whole group is one rack
  int racks_per_switch = 0;  ///< extension: topology; 0 = one switch per pool
  std::map<std::string, std::string> labels;
  double mtbf_s = 0;         ///< extension: mean time between failures per node (exponential); 0 = none
  double mttr_s = 0;         ///< extension: mean time to repair per node (exponential)
  double unhealthy_prob = 0; ///< extension: probability that a precheck on one of these nodes fails
};

/// An explicit node (extension, used by trace readers): one node with its own shape.
struct NodeCfg {
  std::string name;
  std::string gpu_model;
  int gpus = 0;
  double vcpu = 0;
  double memory_gib = 0;
  std::string rack;          ///< empty = derived
  std::map<std::string, std::string> labels;
};

struct PoolCfg {
  std::string name;
  std::string kind = "shared";       ///< "shared" | "dedicated"
  std::vector<NodeGroupCfg> node_groups;
  std::vector<NodeCfg> nodes;        ///< extension: explicit nodes, after the groups
};

struct ClusterCfg {
  std::string name = "cluster";
  std::string region = "region";
  std::vector<InstanceSpecCfg> instance_specs;
  std::vector<PoolCfg> pools;
};

/// `quotas[i]`: remaining quota of a user for one resource type in one pool.
struct QuotaCfg {
  std::string user;
  std::string resource_type;         ///< "reserved" | "pay_as_you_go" | "spot"
  std::string pool;
  double gpus = 0;
  double vcpu = 0;
  double memory_gib = 0;
};

/// `node_policies[i]`: NodeIn / NodeNotIn (docs/platform.md "Node schedule policies").
struct NodePolicyCfg {
  std::string name;
  std::string type;                  ///< "NodeIn" | "NodeNotIn"
  std::string scope;                 ///< "user" | "tenant"
  std::string effect = "default";    ///< "default" | "explicit"
  std::string user;                  ///< extension: the user a scope=user policy applies to
  std::string tenant = "default";    ///< extension: the tenant a scope=tenant policy applies to
  std::vector<std::string> workload_types;  ///< "PyTorchJob" | "RayJob"; empty = all
  std::vector<std::string> nodes;
  double created_s = 0;
  std::optional<double> expire_s;    ///< absent: never expires (NodeIn only; a NodeNotIn must expire)
};

struct SchedulerCfg {
  std::string placement = "best-fit";
  std::string queue_order = "priority-fifo";     ///< extension: QueueOrder plugin (docs/architecture.md "Plugins")
  std::string victim_order = "idle-spot-first";  ///< extension: VictimOrder plugin
  std::string admission = "quota";               ///< extension: Admission plugin
  bool preemption = true;            ///< priority preemption
  bool idle_reclaim = true;          ///< extension: non-idle tasks may reclaim idle capacity
  bool spot_eviction = true;         ///< extension: non-spot tasks may evict spot tasks
  std::string queueing = "greedy";   ///< "greedy" | "strict" | "backfill"
  double idle_stability_high_s = 3600;    ///< extension: fragment age needed for `high`
  double idle_stability_medium_s = 600;   ///< extension: fragment age needed for `medium`
  /// extension: a node whose resource precheck failed takes no new replica for this long
  /// (cordoned, as a node problem detector's taint would); 0 = never cordoned
  double precheck_cordon_s = 600;
  /// extension: the `las` queue order's thresholds (GPU-seconds of attained service, increasing)
  std::vector<double> las_thresholds_gpu_s{3600};
  /// extension: the `las` order's starvation guard (s waiting since the last enqueue; 0 = off)
  double las_starvation_s = 0;
  /// extension: the `qssf` order's predicted duration (s) without estimate or user history
  double qssf_default_s = 3600;
  /// extension: the `fair` queue order's tenant shares (each > 0; a tenant not listed has 1)
  std::map<std::string, double, std::less<>> fair_shares;
  std::vector<std::string> retry_on = {"transient", "node_failure", "preemption", "spot_eviction",
                                       "precheck_failure", "image_pull_failure"};  ///< extension
};

struct FaultToleranceCfg {
  int max_resubmissions = 0;
  bool operator==(const FaultToleranceCfg&) const = default;
};

/// A value of T held on the heap only when set: 8 bytes in the many objects that leave it at
/// T's default (TaskCfg::autoscaling: a 56-byte section that few tasks use). Reading an unset
/// value sees T{}; `edit()` gives the mutable value (allocated on first use). Copies are deep.
template <class T>
class Sparse {
 public:
  Sparse() = default;
  Sparse(const T& v) : p_(v == T{} ? nullptr : std::make_unique<T>(v)) {}  // NOLINT: a value
  Sparse(const Sparse& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Sparse(Sparse&&) noexcept = default;
  Sparse& operator=(const Sparse& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Sparse& operator=(Sparse&&) noexcept = default;
  ~Sparse() = default;
  const T& operator*() const { return p_ ? *p_ : unset(); }
  const T* operator->() const { return &**this; }
  T& edit() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }
  bool operator==(const Sparse& o) const { return **this == *o; }

 private:
  static const T& unset() {
    static const T value{};
    return value;
  }
  std::unique_ptr<T> p_;
};

/// The default values of TaskCfg's shared keys, interned once.
namespace task_defaults {
inline const Interned tenant{"default"};
inline const Interned type{"PyTorchJob"};
inline const Interned resource_type{"reserved"};
inline const Interned idle_stability{"low"};
inline const Interned scale_out{"conservative"};
}  // namespace task_defaults

/// RayJob autoscaling (extension keys under `autoscaling`, docs/scenario-format.md).
struct AutoscalingCfg {
  bool enabled = false;
  int min_workers = 0;
  int max_workers = 0;
  double idle_reclaim_s = 600;
  Interned scale_out = task_defaults::scale_out;   ///< "conservative" | "aggressive"
  /// Demand profile: at `at_s` seconds after the attempt starts, the job wants `workers` workers.
  struct Step {
    double at_s = 0;
    int workers = 0;
    bool operator==(const Step&) const = default;
  };
  std::vector<Step> demand;
  bool operator==(const AutoscalingCfg&) const = default;
};

/// Inline replica shape instead of `specs` (extension, used by trace readers: openb pods
/// ask for a fraction of one GPU and may allow several GPU models).
struct ReplicaCfg {
  int gpus = 0;
  int gpu_milli = 1000;
  double vcpu = 0;
  double memory_gib = 0;
  std::vector<std::string> gpu_models;   ///< empty: any model (or CPU-only when gpus == 0)
  bool operator==(const ReplicaCfg&) const = default;
};

/// `tasks[i]`. The keys many tasks share (user, tenant, pool, ...) are Interned: 8 bytes each.
struct TaskCfg {
  std::string name;
  Interned user;
  Interned tenant = task_defaults::tenant;
  double submit_s = 0;
  double duration_s = 0;
  Interned type = task_defaults::type;        ///< "PyTorchJob" | "RayJob"
  int workers = 0;
  int count_per_node = 1;
  std::vector<std::string> specs;
  std::optional<ReplicaCfg> replica; ///< extension: inline shape (then `specs` is empty)
  Interned head_spec;                ///< RayJob only; empty = the chosen worker spec
  Interned resource_type = task_defaults::resource_type;
  Interned pool;                     ///< required for reserved
  int priority = 5;
  FaultToleranceCfg fault_tolerance;
  int image_pull_retries = 0;
  // (the flags together: no padding between them)
  bool priority_set = false;
  bool guarantee = false;
  bool guarantee_set = false;
  bool accept_idle = false;
  bool prefer_idle = false;
  bool debug = false;                ///< RayJob debug mode
  /// extension: at a spot reclaim notice (`spot_reclaim` section, or a `spot_reclaim` event with
  /// `notice_s` > 0) the attempt saves its work: an eviction loses only what runs after the notice
  bool checkpoint_on_notice = false;
  Interned idle_stability = task_defaults::idle_stability;
  std::optional<double> checkpoint_interval_s;
  std::vector<std::string> node_policies;
  std::optional<double> runtime_estimate_s;
  // Start-up costs and stochastic failures (extensions; all default to "none").
  double precheck_s = 0;             ///< 0 = no precheck
  double image_pull_s = 0;
  double image_pull_failure_prob = 0;
  double transient_failure_rate_per_h = 0;
  double debug_retention_s = 600;
  Sparse<AutoscalingCfg> autoscaling;  ///< read: `autoscaling->enabled`; write: `autoscaling.edit()`
  /// Field by field (the simulator shares one copy among tasks that differ only in name,
  /// submit_s, duration_s and runtime_estimate_s).
  bool operator==(const TaskCfg&) const = default;
};

struct EventCfg {
  double at_s = 0;
  std::string kind;                  ///< node_down | node_up | task_fault | spot_reclaim
  std::string node;
  std::vector<std::string> nodes;    ///< spot_reclaim
  std::string task;
  std::string error;                 ///< task_fault: transient | image_unavailable | bad_command | invalid_data_path | gpu_oom
  /// extension, spot_reclaim only: seconds between the notice and the eviction (absent: evicted at once)
  std::optional<double> notice_s;
};

/// `traces[i]`: a workload (and optionally the cluster) read from a public trace.
struct TraceCfg {
  std::string format;                ///< "openb" | "philly" | "swf"
  std::string path;                  ///< pod/job file, relative to the data root ($SCHEDSIM_DATA)
  std::string nodes;                 ///< node/machine list (openb, philly), relative to the data root
  std::optional<std::size_t> limit;  ///< read at most this many jobs
  int procs_per_node = 1;            ///< swf: processors per replica node
  /// philly: 0 = one replica per server part of the shape; g >= 1 = every job split into
  /// ceil(size / g) replicas of min(size, g) GPUs each (g = 1: one 1-GPU replica per GPU)
  int gpus_per_replica = 0;
  std::string pool;                  ///< pool the trace's nodes/tasks go to (default: first pool or "trace")
  std::string resource_type = "pay_as_you_go";
  double time_scale = 1.0;           ///< multiply all trace times
  /// The runtime estimate each task gives the scheduler (docs/traces.md "Runtime estimates"):
  /// "" = the format's default (swf: "requested"; openb, philly: none), "requested" (swf's
  /// requested time), "actual" (the task's duration) or "affine" (estimate_factor x duration +
  /// estimate_add_s, scenario form {"factor": F, "add_s": A}).
  std::string runtime_estimate;
  double estimate_factor = 1.0;
  double estimate_add_s = 0.0;       ///< seconds
  bool rebase_time = false;          ///< shift the trace's submit times so that the first is 0
  /// Multiply the gaps between arrivals (after time_scale): submit_s' = first + (submit_s - first) x
  /// arrival_scale, `first` the earliest submit_s of the loaded tasks; durations are kept.
  double arrival_scale = 1.0;
  /// philly: virtual-cluster file (`vc,node num`), relative to the data root; "" = none. Each
  /// VC becomes a pool with a reserved quota and every job is mapped to one VC
  /// (docs/traces.md "Philly virtual clusters").
  std::string virtual_clusters;
  /// Every task of the trace is resubmitted up to this many times after a failure the
  /// scheduler retries (scheduler.retry_on: a preemption by default), as a task's
  /// fault_tolerance.max_resubmissions; 0 = the format's tasks are never resubmitted.
  int max_resubmissions = 0;
  /// Every task of the trace saves its work every this many seconds (a task's
  /// checkpoint_interval_s); absent = no checkpoints.
  std::optional<double> checkpoint_interval_s;
};

// ------------------------------------------------------------------ workload generator (extension)

/// A discrete distribution over `values` with relative weights `shares` (same length, each > 0);
/// a fixed value is one value with share 1.
template <class T>
struct ChoiceCfg {
  std::vector<T> values;
  std::vector<double> shares;
  bool fixed() const { return values.size() == 1; }
};

/// `workload.duration` / `workload.classes[i].duration`: how long a generated task runs (s).
struct DurationCfg {
  std::string distribution;           ///< "lognormal" | "exponential" | "empirical"
  std::optional<double> median_s;     ///< lognormal: median
  std::optional<double> sigma;        ///< lognormal: sigma of the underlying normal (or give mean_s)
  std::optional<double> mean_s;       ///< lognormal (with median_s) or exponential: mean
  std::vector<double> values;         ///< empirical: values drawn uniformly
  std::optional<TraceCfg> trace;      ///< empirical: also the duration_s of this trace's tasks
  double min_s = 1;                   ///< draws are clamped to [min_s, max_s]
  double max_s = 1e9;
};

/// `workload.users[i]` / `workload.tenants[i]`.
struct NamedShareCfg {
  std::string name;
  double share = 1;
};

/// `workload.classes[i]`: a partial task (every task key but name, user, tenant, submit_s,
/// duration_s, workers) chosen with probability share / sum of shares.
struct WorkloadClassCfg {
  std::string name;                   ///< label (documentation only)
  double share = 1;
  TaskCfg task;                       ///< the task keys of the class (`workers` is the largest choice)
  ChoiceCfg<int> workers{{0}, {1}};
  std::optional<ChoiceCfg<int>> priority;   ///< a distribution; absent: task.priority
  std::optional<DurationCfg> duration;      ///< absent: the section's
  /// runtime_estimate_s = duration_s x a factor drawn uniformly from [min, max] (absent: none).
  std::optional<std::pair<double, double>> runtime_estimate_factor;
  /// The users / tenants this class is drawn for (a team's kind of job), each task's drawn by
  /// share among them; empty: the section's `users` / `tenants`.
  std::vector<NamedShareCfg> users;
  std::vector<NamedShareCfg> tenants;
};

/// `workload`: tasks drawn from distributions, appended after the inline and trace tasks when the
/// scenario is resolved (sim/io/workload.hpp), from the scenario's `seed`.
struct WorkloadCfg {
  std::optional<std::int64_t> tasks;       ///< stop after this many tasks
  std::optional<double> until_s;           ///< stop at this arrival time (s)
  std::string name_prefix = "gen-";
  std::string process = "poisson";
  double rate_per_hour = 0;                ///< arrivals per hour (before the profiles)
  double start_s = 0;                      ///< first possible arrival time
  std::vector<double> daily_profile;       ///< 24 hour-of-day multipliers; empty = all 1
  std::vector<double> weekly_profile;      ///< 7 day-of-week multipliers; empty = all 1
  std::optional<DurationCfg> duration;     ///< default of the classes
  std::vector<NamedShareCfg> users;        ///< empty: one user "workload"
  std::vector<NamedShareCfg> tenants;      ///< empty: tenant "default"
  std::vector<WorkloadClassCfg> classes;
};

/// Prices of one capacity class set, each in currency per hour of the unit of the table that holds
/// it (GPU-hour, instance-hour or vCPU-hour); absent = not priced (costs 0, validate warns).
struct ClassPricesCfg {
  std::optional<double> reserved;       ///< gpu_models only: the commitment of a reserved quota, per GPU-hour
  std::optional<double> pay_as_you_go;
  std::optional<double> spot;
  std::optional<double> idle;
  bool operator==(const ClassPricesCfg&) const = default;
};

/// `prices` (extension, docs/scenario-format.md "Prices"): what capacity costs per hour.
struct PricesCfg {
  std::string currency;                               ///< e.g. "USD": a label, no conversion
  std::map<std::string, ClassPricesCfg> gpu_models;   ///< per GPU-hour of the model
  std::map<std::string, ClassPricesCfg> instance_specs;  ///< per instance-hour of the spec (overrides the GPU model's)
  ClassPricesCfg cpu_vcpu;                            ///< per vCPU-hour of a CPU-only replica
};

/// One entry of `spot_reclaim` (extension, docs/scenario-format.md "Spot reclaims"): the spot
/// capacity of each matching node is reclaimed at random (a Poisson process per node).
struct SpotReclaimRateCfg {
  double rate_per_node_h = 0;        ///< reclaims per node-hour (0 = none)
  double notice_s = 120;             ///< seconds from the notice to the eviction
  bool operator==(const SpotReclaimRateCfg&) const = default;
};

/// `spot_reclaim` (extension): reclaim models by GPU model and by pool; a node's pool entry
/// replaces its GPU model's.
struct SpotReclaimCfg {
  std::map<std::string, SpotReclaimRateCfg> gpu_models;
  std::map<std::string, SpotReclaimRateCfg> pools;
};

/// `measure` (extension, docs/outputs.md "Measurement window"): the window [start_s, end_s) the
/// summary's wait, JCT, allocation and cost metrics count (the simulation still runs from 0).
struct MeasureCfg {
  double start_s = 0;                ///< seconds, >= 0
  double end_s = 0;                  ///< seconds, > start_s
};

/// One row of `throughput` (extension, docs/heterogeneity.md): the tasks it matches run `speed`
/// times as fast on each listed GPU model as their duration_s says (models not listed: 1.0).
struct ThroughputCfg {
  std::string name_glob;               ///< `match.name_glob`: shell-style pattern over the task name
  std::map<std::string, double> speed; ///< GPU model -> relative speed, in [0.001, 1000]
  bool operator==(const ThroughputCfg&) const = default;
};

/// Fill mode (FGD workload inflation), scenario key `fill`.
struct FillCfg {
  double target_pct = 130;
};

struct Scenario {
  std::string file;                  ///< path it was read from (for messages)
  std::string schema = "schedsim/v1";
  std::string name;
  std::uint64_t seed = 1;
  std::optional<double> until_s;     ///< extension: stop the run at this time
  double timeseries_interval_s = 0;  ///< extension: 0 = automatic
  ClusterCfg cluster;
  std::vector<QuotaCfg> quotas;
  std::vector<NodePolicyCfg> node_policies;
  SchedulerCfg scheduler;
  std::vector<TaskCfg> tasks;
  std::vector<EventCfg> events;
  std::vector<TraceCfg> traces;
  std::optional<WorkloadCfg> workload;  ///< extension: generated tasks (sim/io/workload.hpp)
  FillCfg fill;
  std::optional<PricesCfg> prices;   ///< extension: absent = nothing is priced (every cost 0)
  std::optional<SpotReclaimCfg> spot_reclaim;  ///< extension: absent = spot is reclaimed only by events and host demand
  /// extension: the gaps between all arrivals (inline, trace and generated tasks) x this, from the
  /// earliest submit_s (sim/io/workload.hpp apply_arrival_scale); durations kept. In (0, 1000].
  double arrival_scale = 1.0;
  std::optional<MeasureCfg> measure; ///< extension: absent = the whole run is measured
  /// extension: relative speeds per task class and GPU model, first matching row wins; empty =
  /// every task runs at speed 1.0 everywhere (docs/heterogeneity.md)
  std::vector<ThroughputCfg> throughput;
};

}  // namespace sim::io
