// Readers for public cluster traces (docs/traces.md): Alibaba "openb" (FGD, ATC'23), Microsoft
// Philly (ATC'19, per-job derived trace) and the Standard Workload Format (Parallel Workloads
// Archive). Each reader turns a trace into the typed scenario model of scenario.hpp: explicit
// nodes (NodeCfg) and tasks (TaskCfg with an inline ReplicaCfg), in the units of the scenario
// file (seconds, vCPU, GiB, whole GPUs + milli-GPU).
//
// Data files are never committed: they are found under the data root (data_root()), which is
// $SCHEDSIM_DATA when set, else `<project source dir>/../shared/data`.
//
// Errors: every problem is a TraceError. A missing file names the file and says where to get it;
// a malformed row is reported as `FILE:LINE:COLUMN: message` (LINE 1-based; COLUMN the 1-based
// character column where the offending field starts; the message also names the field index and
// name). Rows are never skipped silently: with TraceOptions::skip_bad_rows they are skipped and
// counted in TraceLoad::skipped_rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/io/limits.hpp"
#include "sim/io/scenario.hpp"

namespace sim::io {

/// Any trace problem: missing file, unknown format, malformed row, bad TraceCfg value.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The data root: the value of the environment variable SCHEDSIM_DATA when it is set and
/// non-empty, else "../shared/data" relative to the project source directory (compile
/// definition SCHEDSIM_SOURCE_DIR), lexically normalised. No existence check.
std::string data_root();

/// Path of a data file: `rel` itself when it is absolute, else data_root()/rel.
/// Throws TraceError when the file does not exist, or exists but is not a regular file (a
/// directory, a FIFO, a device: "is not a regular file"); for a missing file the message names
/// the file and the data root and says "set SCHEDSIM_DATA or download it from <source>", where
/// the source is chosen by `format` ("openb", "philly", "swf"); with an empty `format` it is
/// guessed from the path, or all three sources are listed.
std::string resolve_data_path(const std::string& rel, std::string_view format = {});

/// Public download location (and reference) of a trace format, for messages and docs.
/// Unknown formats give the list of all sources.
std::string trace_source(std::string_view format);

struct TraceOptions {
  /// false (default): the first malformed row throws TraceError. true: malformed rows are skipped
  /// and counted in TraceLoad::skipped_rows (a bad header, a missing file or an unreadable gzip
  /// stream still throws).
  bool skip_bad_rows = false;
  /// Most bytes read from one trace file, before and after gzip decompression (a gzip bomb is
  /// refused once it inflates past this, naming the file). Default: limits::max_trace_bytes.
  std::uint64_t max_bytes = limits::max_trace_bytes;
};

/// What one trace contributes to a scenario.
struct TraceLoad {
  std::vector<NodeCfg> nodes;      ///< empty when the TraceCfg names no node list (openb, philly) or nodes == "none" (swf)
  std::vector<TaskCfg> tasks;      ///< in file order; at most TraceCfg::limit
  std::size_t skipped_rows = 0;    ///< malformed rows skipped (only with skip_bad_rows)
  /// True when the reader knows the tasks' names to be pairwise distinct (swf: job ids in
  /// increasing numeric order, digits only); apply_traces then skips its search for repeats.
  /// False says nothing.
  bool names_distinct = false;
  /// The least submit_s of `tasks` when the reader kept it while reading (swf), so that
  /// rebase_time needs no pass of its own to find it; nullopt: not kept (or no task).
  std::optional<double> earliest_submit_s;
};

/// Reads one trace entry. Paths in `cfg.path` / `cfg.nodes` go through resolve_data_path.
/// Honours cfg.limit (first N tasks in file order; reading stops there), cfg.time_scale (> 0;
/// multiplies submit_s, duration_s and runtime_estimate_s), cfg.arrival_scale (in (0, 1000]; then
/// submit_s' = first + (submit_s - first) x arrival_scale over the loaded tasks, `first` their
/// earliest submit_s; durations kept), cfg.resource_type (see
/// docs/traces.md: for openb, "pay_as_you_go" sends qos=BE pods to "spot") and cfg.pool (set on
/// the tasks when resource_type is "reserved"). Throws TraceError; a data file that cannot be
/// resolved reads `WHERE.KEY: "VALUE": RULE` (`where`: the entry's JSON path, e.g. `traces[0]`;
/// empty: `trace`), as a scenario's other diagnostics do.
TraceLoad load_trace(const TraceCfg& cfg, const TraceOptions& opts = {}, std::string_view where = {});

/// resolve_data_path, whose errors name the key that gave the path: `WHERE.KEY: "REL": RULE`.
std::string resolve_data_path_of(std::string_view where, std::string_view key, const std::string& rel,
                                 std::string_view format = {});

/// Loads every entry of `scenario.traces` (in order) and appends to the scenario:
///  - the nodes to the pool named cfg.pool (default: the first pool of the cluster, or a new
///    shared pool "trace" when there is none); a missing named pool is created (kind "shared");
///  - the tasks to scenario.tasks; reserved tasks without a pool get that pool. A task name that
///    is already taken gets the suffix "-t<I>" (I = index of the trace entry), then "-<N>".
/// A node name already present in the cluster (groups expanded as prefix+index, explicit nodes)
/// throws TraceError. Returns the total number of skipped rows.
std::size_t apply_traces(Scenario& scenario, const TraceOptions& opts = {});

// ------------------------------------------------------------------ per-format readers
// These take resolved file paths (no data root lookup) and the same TraceCfg knobs; load_trace
// dispatches to them. Exposed for tests and tools.

/// openb node list `sn,cpu_milli,memory_mib,gpu,model` (columns found by header name).
std::vector<NodeCfg> read_openb_nodes(const std::string& path, const TraceOptions& opts,
                                      std::size_t* skipped = nullptr);
/// openb pod list `name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase,
/// creation_time,deletion_time,scheduled_time]` (columns found by header name).
std::vector<TaskCfg> read_openb_pods(const std::string& path, const TraceCfg& cfg,
                                     const TraceOptions& opts, std::size_t* skipped = nullptr);
/// Philly machine list: `revised_machine_list.csv` (`,machineId,number of GPUs`) or the official
/// `cluster_machine_list` (`machineId, number of GPUs, single GPU mem`).
std::vector<NodeCfg> read_philly_machines(const std::string& path, const TraceOptions& opts,
                                          std::size_t* skipped = nullptr);
/// Philly per-job trace `#job id,arrival time (sec),topology,shape,size,duration (sec)`.
std::vector<TaskCfg> read_philly_jobs(const std::string& path, const TraceCfg& cfg,
                                      const TraceOptions& opts, std::size_t* skipped = nullptr);

/// One row of a Philly virtual-cluster file (`vc,node num`, e.g. the Helios artifact's
/// philly_vc_node_num.csv): the VC's id and its number of machines.
struct VirtualClusterCfg {
  std::string name;
  int nodes = 0;
};

/// Reads a virtual-cluster file: header with columns `vc` and `node num`, one VC per row, ids
/// unique and non-empty, node counts in 1..100000. Throws TraceError naming file, line, column.
std::vector<VirtualClusterCfg> read_philly_virtual_clusters(const std::string& path, const TraceOptions& opts);

/// Maps a Philly replay onto its virtual clusters (docs/traces.md "Philly virtual clusters"), as
/// the Philly (ATC'19) and Helios (SC'21) studies schedule each VC on its own machines within its
/// quota: VC k (file order) gets a pool `vc-<id>` (kind dedicated) holding the next `node num`
/// GPU machines of `load.nodes` in list order, and a reserved quota of exactly those machines'
/// GPUs, vCPU and memory (user `vc-<id>`). Every job becomes `reserved` in one VC (user and
/// tenant `vc-<id>`): a deterministic hash of its name picks among the VCs that can hold it
/// (enough GPUs in all, a machine as large as its replica), weighted by node count; a job no VC
/// can hold goes to the VC with the most GPUs (it never starts). Machines left over stay in
/// load.nodes. Throws TraceError when the list has fewer GPU machines than the VCs ask for, or
/// when a `vc-<id>` pool or quota user already exists.
void map_virtual_clusters(Scenario& scenario, const std::string& vc_file, const std::vector<VirtualClusterCfg>& vcs,
                          TraceLoad& load);
/// SWF file (plain or gzip, detected by magic bytes): the jobs, plus (unless cfg.nodes == "none")
/// the cluster from the MaxProcs / MaxNodes header.
TraceLoad read_swf(const std::string& path, const TraceCfg& cfg, const TraceOptions& opts);

/// Lowercase letters, digits and '-' only, starting and ending with a letter or digit (the
/// platform's name-prefix rule): uppercase is lowered, every other character becomes '-', runs of
/// '-' collapse, leading/trailing '-' are dropped; an empty result becomes `fallback`.
std::string sanitize_name(std::string_view raw, std::string_view fallback = "task");

}  // namespace sim::io
