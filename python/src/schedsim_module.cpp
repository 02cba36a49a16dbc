// The `schedsim._schedsim` extension module: libsched's public types (Cluster, TaskSpec,
// Scheduler, ...) and the simulator's `run` entry point, for python/schedsim/__init__.py.
// Python users see ids as ints, times in milliseconds (libsched's Time), CPU in milli-vCPU and
// memory in MiB, exactly as the C++ API. docs/python.md.
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "libsched/libsched.hpp"
#include "libsched/version.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/io/limits.hpp"
#include "sim/io/overrides.hpp"
#include "sim/cli/validate_cli.hpp"
#include "sim/cli/run_cli.hpp"
#include "schedsim_errors.hpp"
#include "schedsim_plugins.hpp"

namespace py = pybind11;
using namespace libsched;

namespace {

using schedsim_py::NodeInfo;
using schedsim_py::node_info;

NodeId checked_node(const Cluster& c, int id) {
  if (id < 0 || std::size_t(id) >= c.size()) throw UnknownNode("no node with id " + std::to_string(id));
  return NodeId(id);
}

TaskId checked_task(const Scheduler& s, int id) {
  if (id < 0 || std::size_t(id) >= s.task_count()) throw UnknownTask("no task with id " + std::to_string(id));
  return TaskId(id);
}

PoolId pool_arg(const Cluster& c, const py::object& pool) {
  if (pool.is_none()) return PoolId();
  if (py::isinstance<py::str>(pool)) {
    const auto name = pool.cast<std::string>();
    PoolId p = c.find_pool(name);
    if (!p.valid()) throw UnknownPool("unknown pool '" + name + "'");
    return p;
  }
  const int id = pool.cast<int>();
  if (id < 0) return PoolId();
  if (std::size_t(id) >= c.pools().size()) throw UnknownPool("no pool with id " + std::to_string(id));
  return PoolId(id);
}

// Bounds of the library types: the scenario format's limits (sim/io/limits.hpp,
// docs/scenario-format.md "Limits") in the library's units, so that no sum or count wraps.
namespace lim = sim::io::limits;
constexpr std::int64_t kMaxCpuMilli = std::int64_t(lim::max_amount) * 1000;  ///< 1e9 vCPU
constexpr std::int64_t kMaxMemMib = std::int64_t(lim::max_amount) * 1024;    ///< 1e9 GiB
constexpr std::int64_t kMaxGpuMilliAmount = std::int64_t(lim::max_amount) * kMilliPerGpu;  ///< 1e9 GPUs (quotas)
constexpr Time kMaxTimeMs = Time(lim::max_time_s) * 1000;                      ///< 1e9 s

/// `v` in [lo, hi], else ValueError "WHAT: FIELD V: must be between LO and HI".
void check_range(const std::string& what, const char* field, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi)
    throw InvalidArgument(what + ": " + field + " " + std::to_string(v) + ": must be between " + std::to_string(lo) + " and " +
                          std::to_string(hi));
}

/// The preconditions libsched assumes of a replica shape (docs/python.md).
void check_shape(const ReplicaShape& r, const std::string& what) {
  if (r.num_gpu < 0 || r.num_gpu > kMaxGpusPerNode) throw InvalidArgument(what + ": num_gpu must be 0..64");
  if (r.gpu_milli < 1 || r.gpu_milli > kMilliPerGpu) throw InvalidArgument(what + ": gpu_milli must be 1..1000");
  if (r.gpu_milli < kMilliPerGpu && r.num_gpu > 1)
    throw InvalidArgument(what + ": a GPU share (gpu_milli < 1000) needs num_gpu == 1");
  if (r.cpu_milli < 0 || r.mem_mib < 0) throw InvalidArgument(what + ": cpu_milli and mem_mib must be >= 0");
  check_range(what, "cpu_milli", r.cpu_milli, 0, kMaxCpuMilli);
  check_range(what, "mem_mib", r.mem_mib, 0, kMaxMemMib);
}

/// The numbers of a task: workers (0 .. limits::max_workers, so replicas = 1 + workers cannot
/// wrap) and times in ms within the scenario's 1e9 s.
void check_task_numbers(const TaskSpec& t) {
  const std::string what = "task '" + t.name + "'";
  check_range(what, "workers", t.workers, 0, lim::max_workers);
  check_range(what, "submit", t.submit, 0, kMaxTimeMs);
  check_range(what, "runtime_estimate", t.runtime_estimate, -1, kMaxTimeMs);
  check_range(what, "checkpoint_interval", t.checkpoint_interval, 0, kMaxTimeMs);
}

void check_spec(const TaskSpec& t) {
  if (t.options.empty()) throw InvalidArgument("task '" + t.name + "' has no option (add a GangOption)");
  check_task_numbers(t);
  for (const auto& o : t.options) {
    check_shape(o.head, "task '" + t.name + "' option '" + o.label + "' head");
    check_shape(o.worker, "task '" + t.name + "' option '" + o.label + "' worker");
  }
}

/// A node's amounts as in a scenario (vCPU and GiB <= 1e9) and at most limits::max_total_nodes
/// nodes in the cluster, so the cluster's totals cannot overflow. ValueError.
void check_node(const Cluster& c, const std::string& name, std::int64_t cpu_milli, std::int64_t mem_mib) {
  const std::string what = "node " + name;
  if (cpu_milli < 0 || mem_mib < 0) throw InvalidArgument(what + ": cpu_milli and mem_mib must be >= 0");
  check_range(what, "cpu_milli", cpu_milli, 0, kMaxCpuMilli);
  check_range(what, "mem_mib", mem_mib, 0, kMaxMemMib);
  if (std::int64_t(c.size()) >= lim::max_total_nodes)
    throw InvalidArgument(what + ": the cluster has " + std::to_string(c.size()) + " nodes, the limit (" +
                          std::to_string(lim::max_total_nodes) + ")");
}

py::list ids(const std::vector<TaskId>& v) {
  py::list l;
  for (TaskId t : v) l.append(t.value);
  return l;
}

std::string shape_repr(const ReplicaShape& r) {
  return "ReplicaShape(num_gpu=" + std::to_string(r.num_gpu) + ", gpu_milli=" + std::to_string(r.gpu_milli) +
         ", cpu_milli=" + std::to_string(r.cpu_milli) + ", mem_mib=" + std::to_string(r.mem_mib) + ")";
}

/// Runs a scenario like `schedsim run` into `out_dir`; returns (exit status, stdout, stderr).
/// `sets`: (PATH, VALUE, is_json): VALUE is JSON text (a Python value json.dumps wrote) or,
/// when is_json is false, the string itself (a Python str: used as is, never re-encoded).
std::tuple<int, std::string, std::string> run_scenario(const std::string& path, const std::string& text,
                                                       const std::vector<std::tuple<std::string, std::string, bool>>& sets,
                                                       std::optional<std::uint64_t> seed, std::optional<double> until,
                                                       const std::string& out_dir, bool skip_bad_rows) {
  std::ostringstream out, err;
  int code = 0;
  {
    py::gil_scoped_release nogil;
    // A NUL byte would cut the path: another file, another directory. Input error (exit 2).
    for (const auto& [what, p] : {std::pair<const char*, const std::string*>{"scenario", &path}, {"out", &out_dir}})
      if (const auto nul = p->find('\0'); nul != std::string::npos) {
        err << sim::io::escape_for_diagnostic(*p) << ": " << what << " path must not contain a NUL byte (byte " << nul + 1 << ")\n";
        code = sim::io::exit_invalid_input;
      }
    if (code != 0) return {code, out.str(), err.str()};
    sim::ScenarioSource src;
    src.path = path;
    src.text = text;
    src.text_label = "<scenario>";
    for (const auto& [p, v, is_json] : sets) {
      auto o = sim::io::make_override("set", p, v);
      if (!is_json) {
        o.value = v;  // a str is the string itself, never JSON-decoded
      } else if (auto parsed = nlohmann::json::parse(v, nullptr, /*allow_exceptions=*/false); !parsed.is_discarded()) {
        o.value = std::move(parsed);
      } else {  // never taken as a string
        err << sim::io::Diagnostic{sim::io::Diagnostic::Severity::error, "set", p, v, "VALUE is not JSON"}.str() << "\n";
        code = sim::io::exit_invalid_input;
      }
      src.overrides.push_back(std::move(o));
    }
    if (code != 0) return {code, out.str(), err.str()};
    src.seed = seed;
    src.until_s = until;
    src.skip_bad_rows = skip_bad_rows;
    src.registry = &schedsim_py::py_registry();  // with the Python plugins (docs/python.md)
    auto r = sim::resolve_scenario(src, err);
    if (!r) {
      code = sim::io::exit_invalid_input;
    } else {
      sim::RunOptions opts;
      opts.out_dir = out_dir;
      opts.seed = seed;
      opts.until_s = until;
      opts.progress = false;
      opts.registry = &schedsim_py::py_registry();
      code = sim::run_command(r->scenario, opts, out, err, r->resolved_json);
    }
  }
  // A Python plugin raised: the run stopped (nothing published); raise that exception itself.
  if (auto& e = schedsim_py::pending_plugin_error(); e) {
    py::error_already_set x = std::move(*e);
    e.reset();
    throw x;
  }
  return {code, out.str(), err.str()};
}

}  // namespace

PYBIND11_MODULE(_schedsim, m) {
  m.doc() = "libsched and the schedsim simulator (C++ core of the `schedsim` package; see docs/python.md)";
  schedsim_py::register_errors(m);
  schedsim_py::register_plugin_functions(m);
  m.def("version", [] { return std::string(LIBSCHED_VERSION_STRING); }, "libsched's version string.");

  // ------------------------------------------------------------------ enums
  py::enum_<PoolKind>(m, "PoolKind", "Pool kind: `shared` or `dedicated` (docs/platform.md).")
      .value("shared", PoolKind::shared)
      .value("dedicated", PoolKind::dedicated);
  py::enum_<ResourceType>(m, "ResourceType", "Capacity class of a task (docs/platform.md \"Resource types\").")
      .value("reserved", ResourceType::reserved)
      .value("pay_as_you_go", ResourceType::pay_as_you_go)
      .value("spot", ResourceType::spot)
      .value("idle", ResourceType::idle);
  py::enum_<TaskType>(m, "TaskType", "PyTorchJob (master + workers) or RayJob (head + workers).")
      .value("pytorch_job", TaskType::pytorch_job)
      .value("ray_job", TaskType::ray_job);
  py::enum_<IdleStability>(m, "IdleStability", "Which idle fragments a task accepts (docs/platform.md).")
      .value("high", IdleStability::high)
      .value("medium", IdleStability::medium)
      .value("low", IdleStability::low);
  py::enum_<Queueing>(m, "Queueing", "Queueing mode (docs/scenario-format.md \"scheduler\").")
      .value("greedy", Queueing::greedy)
      .value("strict", Queueing::strict)
      .value("backfill", Queueing::backfill);
  py::enum_<PreemptionKind>(m, "PreemptionKind", "Why a victim was preempted.")
      .value("priority", PreemptionKind::priority)
      .value("idle_reclaim", PreemptionKind::idle_reclaim)
      .value("spot_eviction", PreemptionKind::spot_eviction);
  auto wait_code = py::enum_<WaitCode>(m, "WaitCode", "Why a task waits (docs/outputs.md \"Wait codes\").");
  for (auto c : {WaitCode::fits_after_preemption, WaitCode::waits_for_capacity, WaitCode::waits_for_fragmentation,
                 WaitCode::waits_for_quota, WaitCode::blocked_by_node_policy, WaitCode::blocked_by_queue,
                 WaitCode::never_fits, WaitCode::fits_now, WaitCode::waits_for_cpu_memory,
                 WaitCode::waits_for_idle_stability})
    wait_code.value(std::string(to_string(c)).c_str(), c);

  // ------------------------------------------------------------------ value types
  py::class_<Resources>(m, "Resources", "An amount of milli-GPU, milli-vCPU and MiB of memory.")
      .def(py::init([](std::int64_t g, std::int64_t c, std::int64_t mem) { return Resources{g, c, mem}; }),
           py::arg("gpu_milli") = 0, py::arg("cpu_milli") = 0, py::arg("mem_mib") = 0)
      .def_readwrite("gpu_milli", &Resources::gpu_milli)
      .def_readwrite("cpu_milli", &Resources::cpu_milli)
      .def_readwrite("mem_mib", &Resources::mem_mib)
      .def(py::self == py::self)
      .def("__repr__", [](const Resources& r) {
        return "Resources(gpu_milli=" + std::to_string(r.gpu_milli) + ", cpu_milli=" + std::to_string(r.cpu_milli) +
               ", mem_mib=" + std::to_string(r.mem_mib) + ")";
      });

  py::class_<ReplicaShape>(m, "ReplicaShape",
                           "What one replica (pod) asks for on one node: num_gpu GPUs of gpu_milli each (1000 = whole "
                           "GPUs; < 1000 only with num_gpu == 1), cpu_milli milli-vCPU and mem_mib MiB.")
      .def(py::init([](int num_gpu, int gpu_milli, std::int64_t cpu_milli, std::int64_t mem_mib) {
             ReplicaShape r{num_gpu, gpu_milli, cpu_milli, mem_mib, 0};
             check_shape(r, "ReplicaShape");
             return r;
           }),
           py::arg("num_gpu") = 0, py::arg("gpu_milli") = 1000, py::arg("cpu_milli") = 0, py::arg("mem_mib") = 0,
           "Raises InvalidArgument (a ValueError) when num_gpu is outside 0..64, gpu_milli outside 1..1000, a share has num_gpu > 1, "
           "or cpu_milli/mem_mib is negative.")
      .def_readwrite("num_gpu", &ReplicaShape::num_gpu)
      .def_readwrite("gpu_milli", &ReplicaShape::gpu_milli)
      .def_readwrite("cpu_milli", &ReplicaShape::cpu_milli)
      .def_readwrite("mem_mib", &ReplicaShape::mem_mib)
      .def(py::self == py::self)
      .def("__repr__", &shape_repr);

  py::class_<GangOption>(m, "GangOption",
                         "One way to run a gang: the master/head replica shape and the shape of each worker. A "
                         "PyTorchJob uses the same shape for both.")
      .def(py::init([](std::string label, ReplicaShape head, std::optional<ReplicaShape> worker) {
             return GangOption{std::move(label), head, worker.value_or(head)};
           }),
           py::arg("label"), py::arg("head"), py::arg("worker") = py::none(),
           "label: the spec name shown in outputs; worker defaults to head.")
      .def_readwrite("label", &GangOption::label)
      .def_readwrite("head", &GangOption::head)
      .def_readwrite("worker", &GangOption::worker)
      .def("__repr__", [](const GangOption& o) {
        return "GangOption('" + o.label + "', " + shape_repr(o.head) + ", " + shape_repr(o.worker) + ")";
      });

  py::class_<TaskSpec>(m, "TaskSpec",
                       "The scheduler's view of a task: 1 master/head + `workers` replicas, candidate `options` in "
                       "resource-priority order, capacity class, priority 1..9 (higher first), quota owner `user`. "
                       "Times in milliseconds.")
      .def(py::init([](std::string name, std::string user, std::int64_t workers, std::vector<GangOption> options,
                       ResourceType resource_type, std::int32_t priority, bool guarantee, TaskType type,
                       std::string tenant, int pool, bool accept_idle, bool prefer_idle, IdleStability idle_stability,
                       Time submit, Time runtime_estimate, Time checkpoint_interval) {
             TaskSpec t;
             t.name = std::move(name);
             t.user = std::move(user);
             check_range("task '" + t.name + "'", "workers", workers, 0, lim::max_workers);
             t.workers = std::int32_t(workers);
             t.options = std::move(options);
             t.resource_type = resource_type;
             t.priority = priority;
             t.guarantee = guarantee;
             t.type = type;
             t.tenant = std::move(tenant);
             t.pool = PoolId(pool < 0 ? -1 : pool);
             t.accept_idle = accept_idle;
             t.prefer_idle = prefer_idle;
             t.idle_stability = idle_stability;
             t.submit = submit;
             t.runtime_estimate = runtime_estimate;
             t.checkpoint_interval = checkpoint_interval;
             check_task_numbers(t);
             return t;
           }),
           py::arg("name"), py::arg("user"), py::arg("workers") = 0, py::arg("options") = std::vector<GangOption>{},
           py::arg("resource_type") = ResourceType::reserved, py::arg("priority") = 5, py::arg("guarantee") = false,
           py::arg("type") = TaskType::pytorch_job, py::arg("tenant") = "default", py::arg("pool") = -1,
           py::arg("accept_idle") = false, py::arg("prefer_idle") = false,
           py::arg("idle_stability") = IdleStability::low, py::arg("submit") = 0, py::arg("runtime_estimate") = -1,
           py::arg("checkpoint_interval") = 0,
           "pool: pool id (-1: any eligible pool; required for reserved tasks); submit, runtime_estimate, "
           "checkpoint_interval: milliseconds (-1: estimate unknown). Raises InvalidArgument (a ValueError) when workers is outside "
           "0..1000000 or a time outside 0..1e12 ms (the scenario limits).")
      .def_readwrite("name", &TaskSpec::name)
      .def_readwrite("user", &TaskSpec::user)
      .def_readwrite("tenant", &TaskSpec::tenant)
      .def_readwrite("type", &TaskSpec::type)
      .def_readwrite("resource_type", &TaskSpec::resource_type)
      .def_property(
          "pool", [](const TaskSpec& t) { return t.pool.value; },
          [](TaskSpec& t, int p) { t.pool = PoolId(p < 0 ? -1 : p); }, "Pool id, -1 for any eligible pool.")
      .def_readwrite("priority", &TaskSpec::priority)
      .def_readwrite("guarantee", &TaskSpec::guarantee)
      .def_readwrite("accept_idle", &TaskSpec::accept_idle)
      .def_readwrite("prefer_idle", &TaskSpec::prefer_idle)
      .def_readwrite("idle_stability", &TaskSpec::idle_stability)
      .def_property(
          "workers", [](const TaskSpec& t) { return t.workers; },
          [](TaskSpec& t, std::int64_t w) {
            check_range("task '" + t.name + "'", "workers", w, 0, lim::max_workers);
            t.workers = std::int32_t(w);
          },
          "Workers besides the master/head, 0 .. 1000000.")
      .def_readwrite("options", &TaskSpec::options)
      .def_property(
          "submit", [](const TaskSpec& t) { return t.submit; },
          [](TaskSpec& t, Time v) {
            check_range("task '" + t.name + "'", "submit", v, 0, kMaxTimeMs);
            t.submit = v;
          })
      .def_property(
          "runtime_estimate", [](const TaskSpec& t) { return t.runtime_estimate; },
          [](TaskSpec& t, Time v) {
            check_range("task '" + t.name + "'", "runtime_estimate", v, -1, kMaxTimeMs);
            t.runtime_estimate = v;
          })
      .def_property(
          "checkpoint_interval", [](const TaskSpec& t) { return t.checkpoint_interval; },
          [](TaskSpec& t, Time v) {
            check_range("task '" + t.name + "'", "checkpoint_interval", v, 0, kMaxTimeMs);
            t.checkpoint_interval = v;
          })
      .def_readwrite("selected_policies", &TaskSpec::selected_policies)
      .def_property_readonly("replicas", &TaskSpec::replicas, "1 + workers.")
      .def_property_readonly(
          "true_remaining", [](const TaskSpec& t) { return t.true_remaining; },
          "The true remaining run time at enqueue, ms (the oracle that sjf/srtf read; the simulator fills it, -1 "
          "when unknown).")
      .def_property_readonly(
          "attained_gpu_s", [](const TaskSpec& t) { return t.attained_gpu_s; },
          "GPUs x seconds of the task's ended attempts (what las reads).")
      .def("__repr__", [](const TaskSpec& t) {
        return "TaskSpec('" + t.name + "', user='" + t.user + "', workers=" + std::to_string(t.workers) + ", " +
               std::string(to_string(t.resource_type)) + ", priority=" + std::to_string(t.priority) + ")";
      });

  py::class_<NodeInfo>(m, "NodeInfo", "A snapshot of one node: capacity and free amounts, state.")
      .def_readonly("id", &NodeInfo::id)
      .def_readonly("name", &NodeInfo::name)
      .def_readonly("pool", &NodeInfo::pool)
      .def_readonly("gpu_model", &NodeInfo::gpu_model)
      .def_readonly("gpus", &NodeInfo::gpus)
      .def_readonly("capacity", &NodeInfo::capacity)
      .def_readonly("free", &NodeInfo::free)
      .def_readonly("free_gpus", &NodeInfo::free_gpus, "GPUs with all 1000 milli-GPU free.")
      .def_readonly("up", &NodeInfo::up)
      .def_readonly("drained", &NodeInfo::drained, "Cordoned: takes no new replica (Scheduler.drain_node).")
      .def_readonly("removed", &NodeInfo::removed, "A removed node's tombstone (Scheduler.remove_node).")
      .def("__repr__", [](const NodeInfo& n) {
        return "NodeInfo('" + n.name + "', " + n.gpu_model + " x" + std::to_string(n.gpus) +
               ", free_gpus=" + std::to_string(n.free_gpus) + (n.removed ? ", removed" : n.up ? "" : ", down") +
               (n.drained ? ", drained" : "") + ")";
      });

  py::class_<Cluster>(m, "Cluster",
                      "Pools and nodes with their free capacity. Build it, then give it to Scheduler (which "
                      "takes a copy). Node and pool ids are dense ints in insertion order.")
      .def(py::init<>())
      .def(
          "add_pool", [](Cluster& c, std::string name, PoolKind kind) { return c.add_pool(std::move(name), kind).value; },
          py::arg("name"), py::arg("kind") = PoolKind::shared,
          "Adds a pool; returns its id. Raises InvalidArgument (a ValueError) on a duplicate name.")
      .def(
          "add_node",
          [](Cluster& c, std::string name, const py::object& pool, std::string gpu_model, int gpus,
             std::int64_t cpu_milli, std::int64_t mem_mib, int rack, int switch_id,
             std::map<std::string, std::string> labels) {
            check_node(c, name, cpu_milli, mem_mib);
            NodeDesc d{std::move(name), pool_arg(c, pool), std::move(gpu_model), gpus, cpu_milli, mem_mib,
                       rack,            switch_id,         std::move(labels)};
            if (!d.pool.valid()) throw InvalidArgument("node " + d.name + ": a pool is required");
            return c.add_node(d).value;
          },
          py::arg("name"), py::arg("pool"), py::arg("gpu_model"), py::arg("gpus"), py::arg("cpu_milli"),
          py::arg("mem_mib"), py::arg("rack") = 0, py::arg("switch_id") = 0,
          py::arg("labels") = std::map<std::string, std::string>{},
          "Adds a node, all free and up; returns its id. pool: id or name; gpu_model '' for a CPU-only node; "
          "cpu_milli: milli-vCPU (96 vCPU = 96000); mem_mib: MiB. Raises InvalidArgument (a ValueError) on a duplicate name, an "
          "unknown pool, more than 64 GPUs, a negative amount, more than 1e9 vCPU or GiB, a 65th GPU model or a "
          "1000001st node (the scenario limits).")
      .def(
          "find_pool", [](const Cluster& c, const std::string& n) { return c.find_pool(n).value; }, py::arg("name"),
          "Pool id of `name`, or -1.")
      .def(
          "find_node", [](const Cluster& c, const std::string& n) { return c.find_node(n).value; }, py::arg("name"),
          "Node id of `name`, or -1.")
      .def(
          "node", [](const Cluster& c, int id) { return node_info(c, checked_node(c, id)); }, py::arg("id"),
          "A snapshot of node `id`. Raises UnknownNode (an IndexError) for an unknown id.")
      .def_property_readonly(
          "nodes",
          [](const Cluster& c) {
            std::vector<NodeInfo> v;
            for (std::size_t i = 0; i < c.size(); ++i) v.push_back(node_info(c, NodeId(std::int32_t(i))));
            return v;
          },
          "Snapshots of every node, in id order.")
      .def_property_readonly(
          "pools",
          [](const Cluster& c) {
            std::vector<std::string> v;
            for (const auto& p : c.pools()) v.push_back(p.name);
            return v;
          },
          "Pool names, in id order.")
      .def_property_readonly("total_capacity", &Cluster::total_capacity, "Sum of every node's capacity.")
      .def("__len__", &Cluster::size);

  py::class_<SchedulerOptions>(m, "SchedulerOptions",
                               "Scheduler settings (docs/scenario-format.md \"scheduler\"); idle stability ages in ms.")
      .def(py::init([](std::string placement, bool preemption, bool idle_reclaim, bool spot_eviction, Queueing queueing,
                       std::uint64_t seed, std::string queue_order) {
             SchedulerOptions o;
             o.placement = std::move(placement);
             o.queue_order = std::move(queue_order);
             o.preemption = preemption;
             o.idle_reclaim = idle_reclaim;
             o.spot_eviction = spot_eviction;
             o.queueing = queueing;
             o.seed = seed;
             return o;
           }),
           py::arg("placement") = "best-fit", py::arg("preemption") = true, py::arg("idle_reclaim") = true,
           py::arg("spot_eviction") = true, py::arg("queueing") = Queueing::greedy, py::arg("seed") = 1,
           py::arg("queue_order") = "priority-fifo")
      .def_readwrite("placement", &SchedulerOptions::placement)
      .def_readwrite("queue_order", &SchedulerOptions::queue_order,
                     "A registered queue order: builtin (docs/scheduler.md) or register_queue_order's.")
      .def_readwrite("preemption", &SchedulerOptions::preemption)
      .def_readwrite("idle_reclaim", &SchedulerOptions::idle_reclaim)
      .def_readwrite("spot_eviction", &SchedulerOptions::spot_eviction)
      .def_readwrite("queueing", &SchedulerOptions::queueing)
      .def_readwrite("idle_stability_high", &SchedulerOptions::idle_stability_high)
      .def_readwrite("idle_stability_medium", &SchedulerOptions::idle_stability_medium)
      .def_readwrite("seed", &SchedulerOptions::seed);

  py::class_<ReplicaAllocation>(m, "ReplicaAllocation", "What one replica holds on its node.")
      .def_property_readonly("node", [](const ReplicaAllocation& a) { return a.node.value; }, "Node id.")
      .def_readonly("gpu_mask", &ReplicaAllocation::gpu_mask, "Bit i = GPU i of the node.")
      .def_readonly("gpu_milli", &ReplicaAllocation::gpu_milli, "Milli-GPU held on each GPU of gpu_mask.")
      .def_readonly("cpu_milli", &ReplicaAllocation::cpu_milli)
      .def_readonly("mem_mib", &ReplicaAllocation::mem_mib);

  py::class_<Placement>(m, "Placement", "A started gang: replicas[0] is the master/head, then the workers.")
      .def_property_readonly("task", [](const Placement& p) { return p.task.value; })
      .def_readonly("option", &Placement::option, "Index into TaskSpec.options.")
      .def_readonly("capacity", &Placement::capacity, "Capacity class it runs on (idle for an accept_idle fallback).")
      .def_readonly("replicas", &Placement::replicas)
      .def_readonly("start", &Placement::start, "Start time, ms.");

  py::class_<Preemption>(m, "Preemption", "A victim preempted so that `preemptor` could start.")
      .def_property_readonly("victim", [](const Preemption& p) { return p.victim.value; })
      .def_property_readonly("preemptor", [](const Preemption& p) { return p.preemptor.value; })
      .def_readonly("kind", &Preemption::kind)
      .def("__repr__", [](const Preemption& p) {
        return "Preemption(victim=" + std::to_string(p.victim.value) + ", preemptor=" + std::to_string(p.preemptor.value) +
               ", kind=" + std::string(to_string(p.kind)) + ")";
      });

  py::class_<ScheduleResult>(m, "ScheduleResult", "What one schedule() call did, in order; already applied.")
      .def_property_readonly("started", [](const ScheduleResult& r) { return ids(r.started); }, "Started task ids.")
      .def_readonly("preemptions", &ScheduleResult::preemptions, "Victims released, with their preemptor.")
      .def("__bool__", [](const ScheduleResult& r) { return !r.empty(); })
      .def("__repr__", [](const ScheduleResult& r) {
        return "ScheduleResult(started=" + std::string(py::str(ids(r.started))) +
               ", preemptions=" + std::to_string(r.preemptions.size()) + ")";
      });

  py::class_<WaitStatus>(m, "WaitStatus",
                         "Why a task waits: `code`, every binding constraint `blocking` (primary first) and a "
                         "human `reason`. Unpacks as (code, blocking, reason).")
      .def_readonly("code", &WaitStatus::code)
      .def_readonly("blocking", &WaitStatus::blocking)
      .def_readonly("reason", &WaitStatus::reason)
      .def("primary", &WaitStatus::primary, "The code the wait is counted under: blocking[0], else code.")
      .def("__iter__",
           [](const WaitStatus& w) { return py::iter(py::make_tuple(w.code, w.blocking, w.reason)); })
      .def("__repr__", [](const WaitStatus& w) {
        return "WaitStatus(" + std::string(to_string(w.code)) + ", '" + w.reason + "')";
      });

  py::class_<Scheduler>(m, "Scheduler",
                        "The gang scheduler over a copy of `cluster`. Time `now` is in milliseconds and must not go "
                        "backwards. Typical use: add_task, enqueue, schedule(now) -> started/preemptions, "
                        "placement_of, explain(task, now), release(task, now). Not thread-safe.")
      .def(py::init([](const Cluster& c, std::optional<SchedulerOptions> o) {
             SchedulerOptions opts = o.value_or(SchedulerOptions{});
             schedsim_py::check_plugin_names(opts, schedsim_py::py_registry());  // before the move: the names are read here
             return std::make_unique<Scheduler>(c, std::move(opts), schedsim_py::py_registry());
           }),
           py::arg("cluster"), py::arg("options") = py::none(),
           "Raises UnknownName (a ValueError) naming the value and the registered names when options.placement "
           "(or another plugin name) is not registered.")
      .def_property_readonly("cluster", &Scheduler::cluster, py::return_value_policy::reference_internal,
                             "The scheduler's cluster (read it; change it only through the scheduler).")
      .def_property_readonly("options", &Scheduler::options)
      .def(
          "set_quota",
          [](Scheduler& s, const std::string& user, ResourceType rt, const py::object& pool, std::int64_t gpu_milli,
             std::int64_t cpu_milli, std::int64_t mem_mib) {
            const std::string what = "quota of " + user;
            check_range(what, "gpu_milli", gpu_milli, 0, kMaxGpuMilliAmount);
            check_range(what, "cpu_milli", cpu_milli, 0, kMaxCpuMilli);
            check_range(what, "mem_mib", mem_mib, 0, kMaxMemMib);
            s.quotas().set_limit(QuotaKey{user, rt, pool_arg(s.cluster(), pool)}, Resources{gpu_milli, cpu_milli, mem_mib});
          },
          py::arg("user"), py::arg("resource_type"), py::arg("pool"), py::arg("gpu_milli"), py::arg("cpu_milli"),
          py::arg("mem_mib"),
          "Sets the quota of (user, resource type, pool id or name or None). A reserved task needs a quota entry "
          "(none = zero quota); other classes are limited only where an entry exists.")
      .def(
          "add_task",
          [](Scheduler& s, const TaskSpec& t) {
            check_spec(t);
            return s.add_task(t).value;
          },
          py::arg("spec"), "Registers a task (not queued yet); returns its id. Raises InvalidArgument (a ValueError) on an invalid spec, UnknownPool for a pool that is not one of the cluster.")
      .def(
          "task", [](const Scheduler& s, int t) { return s.task(checked_task(s, t)); }, py::arg("task"),
          "A copy of the task's spec.")
      .def_property_readonly("task_count", &Scheduler::task_count)
      .def(
          "enqueue", [](Scheduler& s, int t, Time now) { s.enqueue(checked_task(s, t), now); }, py::arg("task"),
          py::arg("now"), "Puts a registered (or ended) task in the queue. Raises UnknownTask; InvalidState (a RuntimeError) when it is waiting or running.")
      .def(
          "dequeue", [](Scheduler& s, int t) { s.dequeue(checked_task(s, t)); }, py::arg("task"),
          "Removes a waiting task from the queue.")
      .def("schedule", &Scheduler::schedule, py::arg("now"),
           "One scheduling decision at `now` (ms): starts every gang that may start and preempts victims where "
           "that lets a whole gang start. Returns a ScheduleResult (already applied). Raises TimeWentBackwards (a "
           "ValueError) when `now` is earlier than the previous call's.")
      .def(
          "explain", [](Scheduler& s, int t, Time now) { return s.explain(checked_task(s, t), now); }, py::arg("task"),
          py::arg("now"),
          "Why `task` waits at `now` (ms), without changing any state: a WaitStatus (code, blocking, reason). "
          "Rules: docs/scheduler.md \"Why a task waits\". Raises UnknownTask; TimeWentBackwards (a ValueError) when "
          "`now` is earlier than the last schedule().")
      .def(
          "placement_of",
          [](const Scheduler& s, int t) -> std::optional<Placement> {
            const Placement* p = s.placement_of(checked_task(s, t));
            if (!p) return std::nullopt;
            return *p;
          },
          py::arg("task"), "The placement of a running task, else None.")
      .def(
          "release", [](Scheduler& s, int t, Time now) { s.release(checked_task(s, t), now); }, py::arg("task"),
          py::arg("now"), "Ends a running task's attempt (frees replicas and quota). Raises UnknownTask; InvalidState (a RuntimeError) if not running; TimeWentBackwards (a ValueError) when `now` is earlier than the last schedule().")
      .def(
          "is_waiting", [](const Scheduler& s, int t) { return s.is_waiting(checked_task(s, t)); }, py::arg("task"))
      .def(
          "is_running", [](const Scheduler& s, int t) { return s.is_running(checked_task(s, t)); }, py::arg("task"))
      .def_property_readonly("queue", [](const Scheduler& s) { return ids(s.queue()); }, "Waiting task ids in queue order.")
      .def_property_readonly(
          "running",
          [](const Scheduler& s) {
            return ids(std::vector<TaskId>(s.running().begin(), s.running().end()));
          },
          "Running task ids in id order.")
      .def(
          "set_node_up",
          [](Scheduler& s, int n, bool up, Time now) { s.set_node_up(checked_node(s.cluster(), n), up, now); },
          py::arg("node"), py::arg("up"), py::arg("now"),
          "Marks a node up or down. Raises UnknownNode; InvalidState (a RuntimeError) when taking down a node tasks still run on; TimeWentBackwards.")
      .def(
          "tasks_on_node", [](const Scheduler& s, int n) { return ids(s.tasks_on_node(checked_node(s.cluster(), n))); },
          py::arg("node"), "Running task ids with a replica on the node.")
      // ---- embedding API (docs/scheduler.md "Library API")
      .def(
          "add_node",
          [](Scheduler& s, std::string name, const py::object& pool, std::string gpu_model, int gpus,
             std::int64_t cpu_milli, std::int64_t mem_mib, int rack, int switch_id,
             std::map<std::string, std::string> labels) {
            check_node(s.cluster(), name, cpu_milli, mem_mib);
            NodeDesc d{std::move(name), pool_arg(s.cluster(), pool), std::move(gpu_model), gpus, cpu_milli, mem_mib,
                       rack,            switch_id,                   std::move(labels)};
            if (!d.pool.valid()) throw InvalidArgument("node " + d.name + ": a pool is required");
            return s.add_node(d).value;
          },
          py::arg("name"), py::arg("pool"), py::arg("gpu_model"), py::arg("gpus"), py::arg("cpu_milli"),
          py::arg("mem_mib"), py::arg("rack") = 0, py::arg("switch_id") = 0,
          py::arg("labels") = std::map<std::string, std::string>{},
          "Adds a node to the running scheduler (arguments as Cluster.add_node); waiting tasks may use it at the "
          "next schedule(). Returns its id. Raises as Cluster.add_node.")
      .def(
          "drain_node", [](Scheduler& s, int n) { s.drain_node(checked_node(s.cluster(), n)); }, py::arg("node"),
          "Cordons the node: no new replica goes there; what runs there continues. Raises UnknownNode; InvalidState (a RuntimeError) for a removed "
          "node.")
      .def(
          "undrain_node", [](Scheduler& s, int n) { s.undrain_node(checked_node(s.cluster(), n)); }, py::arg("node"),
          "Ends a drain.")
      .def(
          "remove_node", [](Scheduler& s, int n) { s.remove_node(checked_node(s.cluster(), n)); }, py::arg("node"),
          "Removes the node for good (its id stays, as a tombstone). Raises UnknownNode; InvalidState (a RuntimeError) while a task runs on it.")
      .def(
          "adopt_task",
          [](Scheduler& s, const TaskSpec& t, std::size_t option, ResourceType capacity,
             const std::vector<std::pair<int, std::uint64_t>>& replicas, Time start) {
            check_spec(t);
            Adoption a;
            a.option = option;
            a.capacity = capacity;
            a.start = start;
            for (const auto& [n, mask] : replicas) a.replicas.push_back({checked_node(s.cluster(), n), mask});
            return s.adopt_task(t, a).value;
          },
          py::arg("spec"), py::arg("option"), py::arg("capacity"), py::arg("replicas"), py::arg("start"),
          "Registers a task that already runs (restored from a snapshot): `replicas` is a list of (node id, "
          "gpu_mask) pairs, head first (gpu_mask 0 lets the node choose the GPUs); `start` in ms. Returns its id. "
          "Raises InvalidArgument (a ValueError) for a mismatch with the spec, UnknownNode, InvalidState (a RuntimeError) when a replica does not fit its node.")
      .def(
          "forget_task", [](Scheduler& s, int t) { s.forget_task(checked_task(s, t)); }, py::arg("task"),
          "Forgets a task that neither waits nor runs; its id becomes unknown and is reused by a later add_task. "
          "Raises UnknownTask; InvalidState (a RuntimeError) when it waits or runs.")
      .def(
          "knows_task", [](const Scheduler& s, int t) { return t >= 0 && s.knows_task(TaskId(t)); }, py::arg("task"),
          "True when `task` is a task of this scheduler (registered and not forgotten).");

  // ------------------------------------------------------------------ simulator
  m.def("_run", &run_scenario, py::arg("path"), py::arg("text"), py::arg("sets"), py::arg("seed"), py::arg("until"),
        py::arg("out_dir"), py::arg("skip_bad_rows"),
        "Internal: runs a scenario like `schedsim run`; returns (exit status, stdout, stderr). Use schedsim.run().");
  m.def(
      "default_scenario_json", [](std::uint64_t seed) { return sim::resolved_scenario_json(sim::default_scenario(seed)); },
      py::arg("seed") = 1, "The embedded default scenario as scenario-file JSON text (schedsim show-default).");
}
