// The Python exception classes of the `schedsim` package (docs/python.md "Errors"): one class per
// libsched error type (libsched/errors.hpp), all under `schedsim.Error`, each also the Python
// builtin its C++ standard base corresponds to (ValueError, IndexError, RuntimeError), so code
// that catches the builtins keeps working. The translator maps the C++ exceptions libsched throws
// (and the module's own argument checks, which throw the same libsched types) to them.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "libsched/errors.hpp"
#include "libsched/options.hpp"
#include "libsched/registry.hpp"

namespace schedsim_py {

namespace py = pybind11;

/// The classes (owned by the module; never freed, as pybind11's own exception objects).
struct PyErrors {
  py::handle error, invalid_argument, unknown_name, unknown_task, unknown_node, unknown_pool,
      time_went_backwards, invalid_state;
};

inline PyErrors& py_errors() {
  static PyErrors e;
  return e;
}

/// A new exception class `schedsim.NAME` with `bases`, set as attribute NAME of `m`.
inline py::handle new_error(py::module_& m, const char* name, const py::tuple& bases, const char* doc) {
  const std::string full = std::string("schedsim.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(full.c_str(), doc, bases.ptr(), nullptr);
  if (!cls) throw py::error_already_set();
  m.attr(name) = py::handle(cls);
  return cls;
}

/// Raises schedsim.UnknownName with `message` and its attribute `names` (the registered names).
[[noreturn]] inline void raise_unknown_name(const std::string& message, const std::vector<std::string>& names) {
  py::object e = py_errors().unknown_name(message);
  e.attr("names") = names;
  PyErr_SetObject(py_errors().unknown_name.ptr(), e.ptr());
  throw py::error_already_set();
}

/// `name` is held by `registry`, else schedsim.UnknownName "unknown KIND 'NAME'; registered: a, b".
template <class Registry>
void check_registered(const Registry& registry, const char* kind, const std::string& name) {
  if (registry.contains(name)) return;
  const std::vector<std::string> names = registry.names();
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  raise_unknown_name(std::string("unknown ") + kind + " '" + name + "'; registered: " + list, names);
}

/// Every plugin name of `o` is in `r` (what the Scheduler is built from: the builtin plugins and
/// the Python ones, schedsim_plugins.hpp).
inline void check_plugin_names(const libsched::SchedulerOptions& o, const libsched::Registry& r) {
  check_registered(r.placement, "placement policy", o.placement);
  check_registered(r.queue_order, "queue order", o.queue_order);
  check_registered(r.victim_order, "victim order", o.victim_order);
  check_registered(r.admission, "admission", o.admission);
}

/// Creates the classes in `m` and registers the translator of libsched's exceptions.
inline void register_errors(py::module_& m) {
  PyErrors& e = py_errors();
  const py::handle exc(PyExc_Exception), value(PyExc_ValueError), index(PyExc_IndexError), runtime(PyExc_RuntimeError);
  e.error = new_error(m, "Error", py::make_tuple(exc),
                      "Base of every error the schedsim package raises on purpose (docs/python.md \"Errors\").");
  e.invalid_argument = new_error(m, "InvalidArgument", py::make_tuple(e.error, value),
                                 "An argument breaks a documented rule (a shape, a limit, a duplicate node or pool "
                                 "name, an option index, ...). libsched::InvalidArgument; also a ValueError.");
  e.unknown_name = new_error(m, "UnknownName", py::make_tuple(e.error, value),
                             "SchedulerOptions names a plugin (placement policy, queue order, victim order, "
                             "admission) that no registry holds; `names` lists the registered ones. "
                             "libsched::UnknownName; also a ValueError.");
  e.unknown_task = new_error(m, "UnknownTask", py::make_tuple(e.error, index),
                             "A task id this Scheduler never returned or has forgotten. libsched::UnknownTask; also "
                             "an IndexError.");
  e.unknown_node = new_error(m, "UnknownNode", py::make_tuple(e.error, index),
                             "A node id that is not a node of the cluster. libsched::UnknownNode; also an IndexError.");
  e.unknown_pool = new_error(m, "UnknownPool", py::make_tuple(e.error, value),
                             "A pool id or name that is not a pool of the cluster. libsched::UnknownPool; also a "
                             "ValueError.");
  e.time_went_backwards = new_error(m, "TimeWentBackwards", py::make_tuple(e.error, value),
                                    "`now` is earlier than the latest schedule() time. libsched::TimeWentBackwards; "
                                    "also a ValueError.");
  e.invalid_state = new_error(m, "InvalidState", py::make_tuple(e.error, runtime),
                              "A valid call at the wrong moment (enqueue a waiting task, release one that does not "
                              "run, take a node down under running tasks). libsched::InvalidState; also a "
                              "RuntimeError.");
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    const PyErrors& c = py_errors();
    try {
      std::rethrow_exception(p);
    } catch (const libsched::InvalidArgument& x) {  // DuplicateName too (no registry API in Python)
      PyErr_SetString(c.invalid_argument.ptr(), x.what());
    } catch (const libsched::UnknownName& x) {
      PyErr_SetString(c.unknown_name.ptr(), x.what());
    } catch (const libsched::UnknownTask& x) {
      PyErr_SetString(c.unknown_task.ptr(), x.what());
    } catch (const libsched::UnknownNode& x) {
      PyErr_SetString(c.unknown_node.ptr(), x.what());
    } catch (const libsched::UnknownPool& x) {
      PyErr_SetString(c.unknown_pool.ptr(), x.what());
    } catch (const libsched::TimeWentBackwards& x) {
      PyErr_SetString(c.time_went_backwards.ptr(), x.what());
    } catch (const libsched::InvalidState& x) {
      PyErr_SetString(c.invalid_state.ptr(), x.what());
    }
  });
}

}  // namespace schedsim_py
