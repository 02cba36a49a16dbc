// PlacementRegistry::builtin(): the ten built-in placement policies under the names used by
// `scheduler.placement`. Defined here, in the compiled part of libsched, so that the public
// headers never need Boost.Graph (only placement/topology.hpp includes it; docs/packaging.md).
#include <memory>

#include "libsched/placement/builtin.hpp"
#include "libsched/placement/policy.hpp"
#include "libsched/placement/topology.hpp"

namespace libsched {

const PlacementRegistry& PlacementRegistry::builtin() {
  static const PlacementRegistry r = [] {
    PlacementRegistry reg;
    using namespace placement;
    reg.add("first-fit", [](const PolicyContext&) { return std::make_unique<FirstFit>(); });
    reg.add("best-fit", [](const PolicyContext&) { return std::make_unique<BestFit>(); });
    reg.add("worst-fit", [](const PolicyContext&) { return std::make_unique<WorstFit>(); });
    reg.add("dot-product", [](const PolicyContext&) { return std::make_unique<DotProduct>(); });
    reg.add("gpu-packing", [](const PolicyContext&) { return std::make_unique<GpuPacking>(); });
    reg.add("gpu-clustering", [](const PolicyContext&) { return std::make_unique<GpuClustering>(); });
    reg.add("random", [](const PolicyContext& ctx) { return std::make_unique<Random>(ctx.seed); });
    reg.add("fgd", [](const PolicyContext& ctx) { return std::make_unique<Fgd>(ctx.workload); });
    reg.add("topology", [](const PolicyContext&) { return std::make_unique<Topology>(); });
    reg.add("fastest-model", [](const PolicyContext&) { return std::make_unique<FastestModel>(); });
    return reg;
  }();
  return r;
}

}  // namespace libsched
