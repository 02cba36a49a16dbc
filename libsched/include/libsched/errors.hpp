// Exceptions libsched throws on purpose. Every one of them is a libsched::Error (catch
// `const libsched::Error&` for all of them) and also the standard exception that names its
// kind (std::invalid_argument, std::out_of_range, ...), so code that catches the standard
// types keeps working.
//
// libsched::Error is a mixin, not a std::exception: each concrete type has exactly one
// std::exception base (the standard type it refines), so `catch (const std::exception&)`
// stays unambiguous.
#pragma once

#include <stdexcept>
#include <string>

namespace libsched {

/// Base of every exception libsched throws on purpose. what(): one line naming the value and
/// the rule it breaks.
class Error {
 public:
  virtual ~Error() = default;
  virtual const char* what() const noexcept = 0;
};

/// An argument breaks a documented rule (std::invalid_argument).
class InvalidArgument : public std::invalid_argument, public Error {
 public:
  explicit InvalidArgument(const std::string& m) : std::invalid_argument(m) {}
  const char* what() const noexcept override { return std::invalid_argument::what(); }
};

/// A registry already holds a factory under this name (Registry, PlacementRegistry add()).
class DuplicateName : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

/// A registry holds no factory under this name (Registry, PlacementRegistry create(); the
/// Scheduler constructor for an unknown SchedulerOptions name). A std::out_of_range.
class UnknownName : public std::out_of_range, public Error {
 public:
  explicit UnknownName(const std::string& m) : std::out_of_range(m) {}
  const char* what() const noexcept override { return std::out_of_range::what(); }
};

}  // namespace libsched
