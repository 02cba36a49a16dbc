// `prefer-highest-node-id`: an example placement policy defined outside libsched, registered
// under a name and used by the full schedsim command line (sim::cli_main).
//
// Rule: among the nodes that pass the filters and fit the replica, take the one with the
// highest node id (node ids follow the scenario's node order). A platform might want this to
// keep the first nodes of a pool free, e.g. for interactive work. Ties cannot happen (ids are
// unique).
#include <memory>
#include <string_view>

#include <libsched/libsched.hpp>
#include <sim/cli/cli.hpp>

namespace {

class PreferHighestNodeId final : public libsched::PlacementPolicy {
 public:
  std::string_view name() const override { return "prefer-highest-node-id"; }
  /// Higher is better: the node id itself. O(1).
  double score(const libsched::Cluster&, libsched::NodeId node, const libsched::ReplicaShape&) override {
    return double(node.value);
  }
};

}  // namespace

int main(int argc, char** argv) {
  // The builtin plugins plus our placement policy; scenarios name it in `scheduler.placement`.
  libsched::Registry registry = libsched::Registry::builtin();
  registry.placement.add("prefer-highest-node-id",
               [](const libsched::PolicyContext&) { return std::make_unique<PreferHighestNodeId>(); });
  return sim::cli_main(argc, argv, registry);
}
