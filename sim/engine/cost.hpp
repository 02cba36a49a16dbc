// What capacity costs (docs/outputs.md "Costs"): the scenario's `prices` resolved against the
// cluster. Prices are currency per hour: per GPU-hour of a GPU model, per instance-hour of an
// instance spec (which overrides the model's price for replicas placed with that spec), per
// vCPU-hour of a CPU-only replica. An unpriced class costs 0.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <libsched/libsched.hpp>

#include "sim/io/scenario.hpp"

namespace sim {

/// Milliseconds per hour: a rate in currency per hour times held ms / this = currency.
inline constexpr double kMsPerHour = 3.6e6;

/// The price tables of one run, by capacity class (libsched::ResourceType order: reserved,
/// pay_as_you_go, spot, idle).
class CostModel {
 public:
  /// `prices`: the scenario's; `specs`: cluster.instance_specs; `cluster`: the built cluster (its
  /// interned GPU models and pools). Throws std::invalid_argument when a reserved quota's pool
  /// has GPU models with different reserved prices (validation refuses that first).
  CostModel(const io::PricesCfg& prices, const libsched::Cluster& cluster);

  /// Currency per hour of one placed replica on class `cls`: `count_per_node` instances of spec
  /// `spec` when the spec has a price for the class (not for reserved), else its GPUs
  /// (`gpu_milli` / 1000) x the price of `node`'s GPU model, or for a CPU-only replica its vCPU
  /// (`cpu_milli` / 1000) x the vCPU price (0 for reserved: a commitment is per GPU).
  double replica_rate(libsched::ResourceType cls, const libsched::Node& node, std::string_view spec, int count_per_node,
                      std::int64_t gpu_milli, std::int64_t cpu_milli) const;
  /// Reserved price per GPU-hour of the GPUs of `pool` (0 when not priced or without GPU nodes).
  double pool_reserved_price(libsched::PoolId pool) const;
  const std::string& currency() const { return currency_; }

 private:
  using Row = std::array<std::optional<double>, 4>;
  std::string currency_;
  std::vector<Row> model_;                        // by interned GPU model id
  std::unordered_map<std::string, Row> spec_;     // instance-hour prices by spec name
  Row cpu_;                                       // vCPU-hour prices
  std::vector<double> pool_reserved_;             // by pool id
};

/// The costs of a finished run (Simulator::cost_summary), currency.
struct CostSummary {
  std::string_view currency;                      ///< "" without prices
  double total = 0;                               ///< commitments + pay_as_you_go + spot + idle
  std::array<double, 4> by_class{};               ///< reserved (the commitments), pay_as_you_go, spot, idle
  double reserved_unused = 0;                     ///< part of the commitments no reserved task used
  double lost_work = 0;                           ///< paid (or committed) for work later lost
  /// One reserved quota's commitment, attributed to its user and pool in `groups`.
  struct Commitment {
    std::string_view user, tenant, pool, gpu_model;
    double cost = 0;                              ///< gpus x span hours x reserved price
    double used = 0;                              ///< the reserved attempts' GPU-hours inside it, priced
  };
  std::vector<Commitment> commitments;            ///< quotas order, one per (user, pool)
};

}  // namespace sim
