// Exceptions libsched throws on purpose. Every one of them is a libsched::Error (catch
// `const libsched::Error&` for all of them) and also the standard exception that names its
// kind (std::invalid_argument, std::out_of_range, std::logic_error), so code that catches the
// standard types keeps working.
//
// libsched::Error is a mixin, not a std::exception: each concrete type has exactly one
// std::exception base (the standard type it refines, through detail::StdError), so
// `catch (const std::exception&)` stays unambiguous.
//
// Every public function with a precondition checks it first and throws one of these (never a
// raw standard-library error, never undefined behaviour); each function's docstring names the
// errors it throws. After a throw the object is unchanged (every check runs before any state
// changes), so an embedder may catch, report and go on.
#pragma once

#include <stdexcept>
#include <string>

namespace libsched {

/// Base of every exception libsched throws on purpose. what(): one line naming the function
/// or value and the rule it breaks.
class Error {
 public:
  virtual ~Error() = default;
  virtual const char* what() const noexcept = 0;
};

namespace detail {

/// A libsched::Error that is also the standard exception `Std` (its only std::exception base).
template <class Std>
class StdError : public Std, public Error {
 public:
  explicit StdError(const std::string& m) : Std(m) {}
  const char* what() const noexcept override { return Std::what(); }
};

}  // namespace detail

/// An argument breaks a documented rule: a 2-GPU replica with 500 milli-GPU, negative vCPU or
/// memory, a gang with no candidate spec, a node of more than 64 GPUs, a duplicate node or pool
/// name, ... A std::invalid_argument.
class InvalidArgument : public detail::StdError<std::invalid_argument> {
 public:
  using StdError::StdError;
};

/// A registry already holds a factory under this name (Registry, PlacementRegistry add()).
class DuplicateName : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

/// A registry holds no factory under this name (Registry, PlacementRegistry create(); the
/// Scheduler constructor for an unknown SchedulerOptions name). A std::out_of_range.
class UnknownName : public detail::StdError<std::out_of_range> {
 public:
  using StdError::StdError;
};

/// A TaskId that this Scheduler never returned, or one of a task it has forgotten
/// (Scheduler::forget_task). A std::out_of_range.
class UnknownTask : public detail::StdError<std::out_of_range> {
 public:
  using StdError::StdError;
};

/// A PoolId that is not a pool of this cluster. A std::out_of_range.
class UnknownPool : public detail::StdError<std::out_of_range> {
 public:
  using StdError::StdError;
};

/// A NodeId that is not a node of this cluster (removed nodes keep their id and are known).
/// A std::out_of_range.
class UnknownNode : public detail::StdError<std::out_of_range> {
 public:
  using StdError::StdError;
};

/// `now` is earlier than the latest time the Scheduler was given by schedule(): libsched's
/// time only moves forward (docs/scheduler.md "Library API"). A std::invalid_argument.
class TimeWentBackwards : public detail::StdError<std::invalid_argument> {
 public:
  using StdError::StdError;
};

/// A valid argument at the wrong moment: enqueue a task that runs or waits, release a task
/// that does not run, take a node down while tasks run on it, adopt a replica that does not
/// fit. A std::logic_error.
class InvalidState : public detail::StdError<std::logic_error> {
 public:
  using StdError::StdError;
};

}  // namespace libsched
