// Node schedule policies: NodeIn ("schedule only on") and NodeNotIn ("block"), with scope,
// effect mode, workload types and expiry (docs/platform.md "Node schedule policies").
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "libsched/ids.hpp"
#include "libsched/resources.hpp"
#include "libsched/task.hpp"

namespace libsched {

enum class NodePolicyType : std::uint8_t { node_in, node_not_in };
enum class PolicyScope : std::uint8_t { user, tenant };
enum class PolicyEffect : std::uint8_t { default_effect, explicit_effect };

struct NodePolicy {
  std::string name;
  NodePolicyType type = NodePolicyType::node_not_in;
  PolicyScope scope = PolicyScope::tenant;
  PolicyEffect effect = PolicyEffect::default_effect;
  std::string user;                       ///< scope user: the user it applies to
  std::string tenant = "default";         ///< scope tenant: the tenant it applies to
  std::vector<TaskType> workload_types;   ///< empty = every type
  std::vector<NodeId> nodes;
  Time created = 0;
  Time expire = kTimeNever;               ///< the policy applies while created <= now < expire

  /// Does this policy constrain `t` at time `now`? In scope, type matches, not expired, and
  /// `default` or explicitly selected by the task.
  bool applies(const TaskSpec& t, Time now) const {
    if (now < created || now >= expire) return false;
    if (scope == PolicyScope::user ? t.user != user : t.tenant != tenant) return false;
    if (!workload_types.empty() &&
        std::find(workload_types.begin(), workload_types.end(), t.type) == workload_types.end())
      return false;
    if (effect == PolicyEffect::explicit_effect &&
        std::find(t.selected_policies.begin(), t.selected_policies.end(), name) == t.selected_policies.end())
      return false;
    return true;
  }
};

/// The node filter that a task's applicable policies produce at one instant.
/// allowed(n) = (no NodeIn applies or n is in every applicable NodeIn list) and n is in no
/// applicable NodeNotIn list.
class NodeFilter {
 public:
  bool empty() const { return !any_; }
  bool allowed(NodeId n) const {
    if (!any_) return true;
    return n.index() < mask_.size() && mask_[n.index()] != 0;
  }
  /// Nodes removed by NodeNotIn policies (for the blacklist reason), sorted by id.
  const std::vector<NodeId>& blocked() const { return blocked_; }

  /// Builds the filter of `t` at `now` over `num_nodes` nodes. Cost O(nodes) when some policy
  /// applies, O(policies) otherwise.
  static NodeFilter build(const std::vector<NodePolicy>& policies, const TaskSpec& t, Time now,
                          std::size_t num_nodes) {
    NodeFilter f;
    for (const auto& p : policies) {
      if (!p.applies(t, now)) continue;
      if (!f.any_) {
        f.any_ = true;
        f.mask_.assign(num_nodes, 1);
      }
      if (p.type == NodePolicyType::node_in) {
        std::vector<char> in(num_nodes, 0);
        for (NodeId n : p.nodes)
          if (n.valid() && n.index() < num_nodes) in[n.index()] = 1;  // unknown nodes name nothing
        for (std::size_t i = 0; i < num_nodes; ++i) f.mask_[i] = char(f.mask_[i] && in[i]);
      }
    }
    if (!f.any_) return f;
    for (const auto& p : policies) {
      if (p.type != NodePolicyType::node_not_in || !p.applies(t, now)) continue;
      for (NodeId n : p.nodes) {
        if (!n.valid() || n.index() >= num_nodes) continue;  // unknown nodes name nothing
        if (f.mask_[n.index()]) f.blocked_.push_back(n);
        f.mask_[n.index()] = 0;
      }
    }
    std::sort(f.blocked_.begin(), f.blocked_.end());
    f.blocked_.erase(std::unique(f.blocked_.begin(), f.blocked_.end()), f.blocked_.end());
    return f;
  }

 private:
  bool any_ = false;
  std::vector<char> mask_;
  std::vector<NodeId> blocked_;
};

}  // namespace libsched
