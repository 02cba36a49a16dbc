// One registry of named plugin factories for every extension point: placement score, queue
// order, victim order, admission (docs/architecture.md "Plugins"). SchedulerOptions names one
// plugin of each kind; the Scheduler constructor creates them from the Registry it is given.
#pragma once

#include <memory>

#include "libsched/named_registry.hpp"
#include "libsched/placement/builtin.hpp"
#include "libsched/placement/policy.hpp"
#include "libsched/plugins/admission.hpp"
#include "libsched/plugins/queue_order.hpp"
#include "libsched/plugins/victim_order.hpp"

namespace libsched {

/// Named factories of the four plugin kinds. Copy builtin() and add() to a part to extend:
///   Registry r = Registry::builtin();
///   r.queue_order.add("shortest-first", [](const PolicyContext&) { return std::make_unique<MyOrder>(); });
///   SchedulerOptions o; o.queue_order = "shortest-first";
///   Scheduler s(cluster, o, r);
/// Each part's add() throws DuplicateName for a name it holds, create() UnknownName for a name
/// it does not (errors.hpp).
struct Registry {
  PlacementRegistry placement;                                 ///< SchedulerOptions::placement
  NamedRegistry<QueueOrder> queue_order{"queue order"};        ///< SchedulerOptions::queue_order
  NamedRegistry<VictimOrder> victim_order{"victim order"};     ///< SchedulerOptions::victim_order
  NamedRegistry<Admission> admission{"admission"};             ///< SchedulerOptions::admission

  /// The builtin registry with `placements` as its placement part.
  static Registry with_placement(const PlacementRegistry& placements) {
    Registry r = builtin();
    r.placement = placements;
    return r;
  }
  /// The nine placement policies of placement/builtin.hpp, the queue orders "priority-fifo",
  /// "sjf", "srtf", "sjf-estimate", "srtf-estimate", "las", "gittins", "qssf" and "fair", "idle-spot-first" and "quota".
  static const Registry& builtin() {
    static const Registry r = [] {
      Registry reg;
      reg.placement = PlacementRegistry::builtin();
      reg.queue_order.add("priority-fifo", [](const PolicyContext&) { return std::make_unique<plugins::PriorityFifo>(); });
      using SF = plugins::ShortestFirst;
      reg.queue_order.add("sjf", [](const PolicyContext&) { return std::make_unique<SF>(SF::Source::oracle, false); });
      reg.queue_order.add("srtf", [](const PolicyContext&) { return std::make_unique<SF>(SF::Source::oracle, true); });
      reg.queue_order.add("sjf-estimate", [](const PolicyContext&) { return std::make_unique<SF>(SF::Source::estimate, false); });
      reg.queue_order.add("srtf-estimate", [](const PolicyContext&) { return std::make_unique<SF>(SF::Source::estimate, true); });
      reg.queue_order.add("las", [](const PolicyContext& c) { return std::make_unique<plugins::Las>(c.las_thresholds_gpu_s, c.las_starvation); });
      reg.queue_order.add("gittins", [](const PolicyContext& c) {
        return std::make_unique<plugins::Gittins>(c.las_thresholds_gpu_s, c.service_gpu_s, c.las_starvation);
      });
      reg.queue_order.add("qssf", [](const PolicyContext& c) { return std::make_unique<plugins::Qssf>(c.qssf_default); });
      reg.queue_order.add("fair", [](const PolicyContext& c) { return std::make_unique<plugins::Fair>(c.fair_shares); });
      reg.victim_order.add("idle-spot-first", [](const PolicyContext&) { return std::make_unique<plugins::IdleSpotFirst>(); });
      reg.admission.add("quota", [](const PolicyContext&) { return std::make_unique<plugins::QuotaAdmission>(); });
      return reg;
    }();
    return r;
  }
};

}  // namespace libsched
