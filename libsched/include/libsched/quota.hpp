// Quota: remaining quota of a user per resource type and pool, checked against the whole
// task's demand, never one replica (docs/platform.md "Entities", "Quota"). Only running
// attempts hold quota; a RayJob's submitter pod holds none (it is not modelled as a replica).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "libsched/errors.hpp"
#include "libsched/ids.hpp"
#include "libsched/resources.hpp"
#include "libsched/task.hpp"

namespace libsched {

struct QuotaKey {
  std::string user;
  ResourceType resource_type = ResourceType::reserved;
  PoolId pool;
  friend auto operator<=>(const QuotaKey&, const QuotaKey&) = default;
};

/// Limits and usage per (user, resource type, pool).
/// Rules: a `reserved` task always needs a quota entry (none = zero quota); other resource
/// types are limited only where an entry exists; idle tasks never hold quota.
class QuotaBook {
 public:
  /// Sets (or replaces) the limit of key `k`. Throws InvalidArgument for a negative limit.
  void set_limit(const QuotaKey& k, const Resources& limit) {
    if (limit.any_negative()) throw InvalidArgument("QuotaBook::set_limit: negative limit for " + k.user);
    entries_[k].limit = limit;
  }

  /// The entry that limits a task running as `rt` (its effective class), or nullptr when
  /// unlimited.
  struct Entry { Resources limit; Resources used; };
  const Entry* find(const QuotaKey& k) const {
    auto it = entries_.find(k);
    return it == entries_.end() ? nullptr : &it->second;
  }
  /// True when `demand` fits the remaining quota of key `k` (see class rules).
  bool admits(const QuotaKey& k, const Resources& demand) const {
    if (k.resource_type == ResourceType::idle) return true;
    auto it = entries_.find(k);
    if (it == entries_.end()) return k.resource_type != ResourceType::reserved;
    return Resources::fits(it->second.used + demand, it->second.limit);
  }
  /// True when `demand` could never fit key `k`, even with nothing running.
  bool never_admits(const QuotaKey& k, const Resources& demand) const {
    if (k.resource_type == ResourceType::idle) return false;
    auto it = entries_.find(k);
    if (it == entries_.end()) return k.resource_type == ResourceType::reserved;
    return demand.exceeds_any(it->second.limit);
  }
  /// Charges (sign +1) or refunds (sign -1) `amount`; no-op for unlimited keys. Returns
  /// whether an entry's usage changed (false: idle, or no entry for `k`).
  bool charge(const QuotaKey& k, const Resources& amount, int sign) {
    if (k.resource_type == ResourceType::idle || entries_.empty()) return false;
    auto it = entries_.find(k);
    if (it == entries_.end()) return false;
    if (sign > 0) it->second.used += amount; else it->second.used -= amount;
    return true;
  }
  const std::map<QuotaKey, Entry>& entries() const { return entries_; }

 private:
  std::map<QuotaKey, Entry> entries_;
};

}  // namespace libsched
