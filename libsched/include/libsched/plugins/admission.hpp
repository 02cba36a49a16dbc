// The admission extension point (Volcano's overcommit / proportion plugins, quota checks):
// may a gang's whole demand start now, on a capacity class, for its user (docs/platform.md
// "Quota"; docs/architecture.md "Plugins").
#pragma once

#include <string_view>

#include "libsched/quota.hpp"
#include "libsched/task.hpp"

namespace libsched {

/// Admits or refuses a gang's whole demand (never one replica). Called before every placement
/// trial of a (capacity class, option), and for each RayJob worker added by autoscaling with
/// that worker's resources. Quota usage is charged to the QuotaBook by the scheduler whatever
/// the admission decides (so `quotas.find(key)->used` is what runs now).
class Admission {
 public:
  virtual ~Admission() = default;
  virtual std::string_view name() const = 0;
  /// May `demand` (of task `task`, id `id`) start now under quota key `key`?
  virtual bool admits(const QuotaBook& quotas, const QuotaKey& key, const TaskSpec& task, TaskId id,
                      const Resources& demand) const = 0;
  /// Can it never be admitted, even with nothing running? (explain()'s never_fits). Default:
  /// false (no claim).
  virtual bool never_admits(const QuotaBook&, const QuotaKey&, const TaskSpec&, TaskId, const Resources&) const {
    return false;
  }
};

namespace plugins {

/// "quota" (the default): the quota book's rule (QuotaBook::admits / never_admits): reserved
/// tasks need an entry, other classes are limited where one exists, idle is never limited.
class QuotaAdmission final : public Admission {
 public:
  std::string_view name() const override { return "quota"; }
  bool admits(const QuotaBook& q, const QuotaKey& k, const TaskSpec&, TaskId, const Resources& d) const override {
    return q.admits(k, d);
  }
  bool never_admits(const QuotaBook& q, const QuotaKey& k, const TaskSpec&, TaskId, const Resources& d) const override {
    return q.never_admits(k, d);
  }
};

}  // namespace plugins
}  // namespace libsched
