// Name -> factory map, the one shape of every plugin registry (libsched/registry.hpp).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libsched/errors.hpp"
#include "libsched/fragmentation.hpp"

namespace libsched {

/// What a plugin may know when it is created (every plugin kind gets the same context).
struct PolicyContext {
  std::uint64_t seed = 1;             ///< SchedulerOptions::seed (e.g. for the `random` placement)
  WorkloadDistribution workload;      ///< for `fgd` (empty: each gang's own shapes are used)
  std::vector<double> las_thresholds_gpu_s{3600};  ///< SchedulerOptions::las_thresholds_gpu_s (`las`)
  Time las_starvation = 0;  ///< SchedulerOptions::las_starvation (`las`; ms, 0 = off)
  std::vector<double> service_gpu_s;  ///< SchedulerOptions::service_gpu_s (`gittins`)
  Time qssf_default = 3600 * 1000;    ///< SchedulerOptions::qssf_default (`qssf`, ms)
  std::map<std::string, double, std::less<>> fair_shares;  ///< SchedulerOptions::fair_shares (`fair`)
};

/// Factories of plugin kind `T` by name. `kind` names the kind in error messages.
/// add() throws DuplicateName (a std::invalid_argument) for a name already held; create()
/// throws UnknownName (a std::out_of_range) for a name not held. names() is sorted.
template <class T>
class NamedRegistry {
 public:
  using Factory = std::function<std::unique_ptr<T>(const PolicyContext&)>;

  explicit NamedRegistry(std::string kind) : kind_(std::move(kind)) {}

  void add(std::string name, Factory f) {
    if (factories_.count(name)) throw DuplicateName(kind_ + " already registered: " + name);
    factories_.emplace(std::move(name), std::move(f));
  }
  bool contains(std::string_view name) const { return factories_.count(std::string(name)) > 0; }
  std::unique_ptr<T> create(std::string_view name, const PolicyContext& ctx) const {
    auto it = factories_.find(std::string(name));
    if (it == factories_.end()) throw UnknownName("unknown " + kind_ + ": " + std::string(name));
    return it->second(ctx);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (const auto& [k, f] : factories_) v.push_back(k);
    return v;
  }

 private:
  std::string kind_;
  std::map<std::string, Factory, std::less<>> factories_;
};

}  // namespace libsched
