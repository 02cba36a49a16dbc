// Typed errors of libsched's public API. Every public function with a precondition checks it
// and throws one of these (never a raw standard-library error, never undefined behaviour);
// each function's docstring names the errors it throws. All derive from libsched::Error, itself
// a std::runtime_error, so `catch (const libsched::Error&)` catches every refused call and
// `what()` is one line naming the function, the argument and the rule.
//
// After a throw the object is unchanged (every check runs before any state changes), so an
// embedder may catch, report and go on.
#pragma once

#include <stdexcept>
#include <string>

namespace libsched {

/// Base of every error libsched throws for a refused call.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- API preconditions (scheduler, cluster, quota)

/// A value or shape that can never be valid: a 2-GPU replica with 500 milli-GPU, negative
/// vCPU or memory, a gang with no candidate spec, a node of more than 64 GPUs, a duplicate node
/// or pool name, an unknown pool, ...
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// A TaskId that this Scheduler never returned, or one of a task it has forgotten
/// (Scheduler::forget_task).
class UnknownTask : public Error {
 public:
  using Error::Error;
};

/// A PoolId that is not a pool of this cluster.
class UnknownPool : public Error {
 public:
  using Error::Error;
};

/// A NodeId that is not a node of this cluster (removed nodes keep their id and are known).
class UnknownNode : public Error {
 public:
  using Error::Error;
};

/// `now` is earlier than the latest time the Scheduler was given by schedule(): libsched's
/// time only moves forward (docs/scheduler.md "Library API").
class TimeWentBackwards : public Error {
 public:
  using Error::Error;
};

/// A valid argument at the wrong moment: enqueue a task that runs or waits, release a task
/// that does not run, take a node down while tasks run on it, adopt a replica that does not fit.
class InvalidState : public Error {
 public:
  using Error::Error;
};

}  // namespace libsched
