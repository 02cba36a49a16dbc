// Policy plugins written in Python (docs/python.md "Policy plugins"): a queue order (a rank
// function) and a placement score (a score function) registered by name in the package's own
// plugin registry, which schedsim.run and schedsim.Scheduler use (libsched/registry.hpp). Also the
// NodeInfo snapshot that Cluster.node and the score function hand to Python.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "libsched/libsched.hpp"

namespace schedsim_py {

namespace py = pybind11;

/// A snapshot of one node for Python (Cluster::node).
struct NodeInfo {
  int id = -1;
  std::string name;
  int pool = -1;
  std::string gpu_model;
  int gpus = 0;
  libsched::Resources capacity;
  libsched::Resources free;
  int free_gpus = 0;  ///< GPUs with all 1000 milli-GPU free
  bool up = true;
  bool drained = false;
  bool removed = false;
};

inline NodeInfo node_info(const libsched::Cluster& c, libsched::NodeId id) {
  const libsched::Node& n = c.node(id);
  NodeInfo i;
  i.id = id.value;
  i.name = n.name;
  i.pool = n.pool.value;
  i.gpu_model = n.model < 0 ? std::string() : c.models()[std::size_t(n.model)];
  i.gpus = n.gpus;
  i.capacity = n.capacity;
  i.free = n.free;
  i.free_gpus = n.full_free_gpus;
  i.up = n.up;
  i.drained = n.drained;
  i.removed = n.removed;
  return i;
}

/// The registry schedsim.run and schedsim.Scheduler create plugins from: libsched's builtin
/// one plus what register_queue_order / register_placement added. Never destroyed (its
/// factories hold Python objects, which must not be released after the interpreter is gone).
inline libsched::Registry& py_registry() {
  static libsched::Registry* r = new libsched::Registry(libsched::Registry::builtin());
  return *r;
}

/// The Python exception a plugin raised inside a simulation that ran without the GIL
/// (schedsim.run): kept here while the C++ error unwinds the simulation, raised again by run.
inline std::optional<py::error_already_set>& pending_plugin_error() {
  static std::optional<py::error_already_set>* e = new std::optional<py::error_already_set>();
  return *e;
}

/// A rank component: any real number (int, float, bool) compared as a float; NaN refused. The
/// double maps to an int64 that sorts the same way (sign-magnitude to two's complement), so that
/// ranks stay libsched's three int64 (libsched/plugins/rank.hpp).
inline std::int64_t rank_component(double d) {
  if (d == 0) d = 0;  // -0.0 and 0.0 are one value
  auto b = std::bit_cast<std::int64_t>(d);
  return b < 0 ? b ^ std::numeric_limits<std::int64_t>::max() : b;
}

/// Calls `fn(args...)` with the GIL held; a Python exception is remembered (pending_plugin_error)
/// and thrown on as the C++ error_already_set, which pybind11 turns back into the Python one.
template <class... Args>
py::object call_plugin(const py::object& fn, Args&&... args) {
  try {
    return fn(std::forward<Args>(args)...);
  } catch (py::error_already_set& e) {
    pending_plugin_error() = e;
    throw;
  }
}

/// Raises `error` (a Python exception class) with `message` the way call_plugin reports a
/// plugin's own exception, so schedsim.run raises it too.
[[noreturn]] inline void plugin_fail(PyObject* error, const std::string& message) {
  PyErr_SetString(error, message.c_str());
  py::error_already_set e;
  pending_plugin_error() = e;
  throw e;
}

/// A queue order whose rank is `fn(task: TaskSpec, task_id: int)`: a real number or a tuple of
/// 1..3 of them, compared lexicographically (missing components are 0); smaller goes first,
/// ties by task name, then id (libsched::QueueOrder). Errors: the function's own exception; a
/// TypeError for another return type, a ValueError for NaN or a longer tuple.
class PyQueueOrder final : public libsched::QueueOrder {
 public:
  PyQueueOrder(std::string name, py::object fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  ~PyQueueOrder() override {
    py::gil_scoped_acquire gil;
    fn_ = py::object();
  }
  PyQueueOrder(const PyQueueOrder&) = delete;
  PyQueueOrder& operator=(const PyQueueOrder&) = delete;
  std::string_view name() const override { return name_; }
  libsched::Rank rank(const libsched::TaskSpec& s, libsched::TaskId id) const override {
    py::gil_scoped_acquire gil;
    const py::object r = call_plugin(fn_, s, id.value);
    libsched::Rank out{0, 0, 0};
    if (py::isinstance<py::tuple>(r)) {
      const auto t = r.cast<py::tuple>();
      if (t.size() < 1 || t.size() > 3)
        plugin_fail(PyExc_ValueError, "queue order '" + name_ + "': rank of task '" + s.name + "' is a tuple of " +
                                          std::to_string(t.size()) + " items; give 1 to 3 numbers");
      for (std::size_t i = 0; i < t.size(); ++i) out[i] = component(t[i], s);
    } else {
      out[0] = component(r, s);
    }
    return out;
  }

 private:
  std::int64_t component(const py::handle& v, const libsched::TaskSpec& s) const {
    if (!py::isinstance<py::int_>(v) && !py::isinstance<py::float_>(v))
      plugin_fail(PyExc_TypeError, "queue order '" + name_ + "': rank of task '" + s.name +
                                       "' must be a number or a tuple of numbers, not " +
                                       std::string(py::str(py::type::of(v).attr("__name__"))));
    const double d = v.cast<double>();
    if (std::isnan(d)) plugin_fail(PyExc_ValueError, "queue order '" + name_ + "': rank of task '" + s.name + "' is NaN");
    return rank_component(d);
  }
  std::string name_;
  py::object fn_;
};

/// A placement policy whose score is `fn(node: NodeInfo, shape: ReplicaShape) -> float`, higher
/// better, called for every feasible node of a replica (ties: the lowest node id;
/// libsched::PlacementPolicy). It must be a pure function of its arguments (the scheduler may
/// reuse a score for an equal shape). Errors: the function's own exception; a TypeError for a
/// result that is not a number, a ValueError for NaN.
class PyPlacement final : public libsched::PlacementPolicy {
 public:
  PyPlacement(std::string name, py::object fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  ~PyPlacement() override {
    py::gil_scoped_acquire gil;
    fn_ = py::object();
  }
  PyPlacement(const PyPlacement&) = delete;
  PyPlacement& operator=(const PyPlacement&) = delete;
  std::string_view name() const override { return name_; }
  bool shape_only() const override { return true; }
  using libsched::PlacementPolicy::score;
  double score(const libsched::Cluster& c, libsched::NodeId node, const libsched::ReplicaShape& shape) override {
    py::gil_scoped_acquire gil;
    const py::object r = call_plugin(fn_, node_info(c, node), shape);
    if (!py::isinstance<py::int_>(r) && !py::isinstance<py::float_>(r))
      plugin_fail(PyExc_TypeError, "placement '" + name_ + "': score must be a number, not " +
                                       std::string(py::str(py::type::of(r).attr("__name__"))));
    const double d = r.cast<double>();
    if (std::isnan(d)) plugin_fail(PyExc_ValueError, "placement '" + name_ + "': score is NaN");
    return d;
  }

 private:
  std::string name_;
  py::object fn_;
};

/// `name` is a plugin name the registry may take: non-empty printable ASCII without spaces,
/// at most 64 characters (it goes into scenario files and messages); InvalidArgument otherwise.
inline void check_plugin_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 64;
  for (char ch : name) ok = ok && ch > ' ' && ch < 127;
  if (!ok) throw libsched::InvalidArgument("plugin name '" + name + "': must be 1..64 printable ASCII characters without spaces");
}

/// register_queue_order / register_placement / registered_plugins in `m`.
inline void register_plugin_functions(py::module_& m) {
  m.def(
      "_register_queue_order",
      [](const std::string& name, py::object fn) {
        check_plugin_name(name);
        if (!PyCallable_Check(fn.ptr())) throw libsched::InvalidArgument("queue order '" + name + "': rank must be callable");
        py_registry().queue_order.add(name, [name, fn](const libsched::PolicyContext&) {
          py::gil_scoped_acquire gil;  // the simulation may run without it; copying fn needs it
          return std::make_unique<PyQueueOrder>(name, fn);
        });
      },
      py::arg("name"), py::arg("rank"));
  m.def(
      "_register_placement",
      [](const std::string& name, py::object fn) {
        check_plugin_name(name);
        if (!PyCallable_Check(fn.ptr())) throw libsched::InvalidArgument("placement '" + name + "': score must be callable");
        py_registry().placement.add(name, [name, fn](const libsched::PolicyContext&) {
          py::gil_scoped_acquire gil;
          return std::make_unique<PyPlacement>(name, fn);
        });
      },
      py::arg("name"), py::arg("score"));
  m.def("_registered_plugins", [] {
    const libsched::Registry& r = py_registry();
    py::dict d;
    d["placement"] = r.placement.names();
    d["queue_order"] = r.queue_order.names();
    d["victim_order"] = r.victim_order.names();
    d["admission"] = r.admission.names();
    return d;
  });
}

}  // namespace schedsim_py
