// sim::FaultModel: the simulator's failure models, one seeded random stream per model
// (docs/scenario-format.md "Failures"):
//   * stochastic node failures: exponential times to failure (mean mtbf_s) and to repair
//     (mean mttr_s) per node, drawn in node order at the start and then at each change;
//   * precheck: each node of an attempt is unhealthy with its group's unhealthy_prob;
//   * image pull: each pull fails with the task's image_pull_failure_prob;
//   * transient failures: exponential time to failure at the task's rate per hour;
//   * spot reclaims: exponential times between reclaims of a node's spot capacity at its
//     `spot_reclaim` rate per node-hour, drawn in node order at the start and then at each reclaim.
// Streams are independent (Boost.Random mt19937_64 seeded from the run seed), so adding draws
// to one model never shifts another's: same scenario and seed, same failures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/random/mersenne_twister.hpp>

#include <libsched/libsched.hpp>

namespace sim {

/// Errors that fail the same way on every attempt (docs/platform.md "Resubmission"): never
/// retried, whatever `retry_on` says.
bool is_deterministic_error(std::string_view kind);

/// May a failure of kind `kind` be resubmitted under the scheduler's `retry_on` list?
bool is_retriable(std::string_view kind, const std::vector<std::string>& retry_on);

class FaultModel {
 public:
  /// Per-node parameters, node-id order: unhealthy_prob in [0, 1], mtbf_s / mttr_s in seconds
  /// (mtbf_s <= 0: the node never fails on its own).
  struct NodeParams {
    double unhealthy_prob = 0;
    double mtbf_s = 0;
    double mttr_s = 0;
  };

  explicit FaultModel(std::uint64_t seed);

  /// Adds the next node's parameters (call in node-id order).
  void add_node(NodeParams p) { nodes_.push_back(p); }
  std::size_t node_count() const { return nodes_.size(); }
  /// Does node `n` fail and get repaired on its own (mtbf_s > 0)? A node past node_count()
  /// (a pool's listed nodes) does not.
  bool fails_on_its_own(std::size_t n) const { return n < nodes_.size() && nodes_[n].mtbf_s > 0; }

  /// First failure time (s) of node `n`, or nullopt when it never fails on its own.
  /// Draws from the node stream: call once per node, in node order, at the start.
  std::optional<double> first_failure_s(std::size_t n);
  /// Time (s) from a failure of node `n` to its repair (node stream).
  double repair_after_s(std::size_t n);
  /// Time (s) from a repair of node `n` to its next failure (node stream).
  double failure_after_s(std::size_t n);
  /// Does the precheck find node `n` unhealthy? (precheck stream; no draw when its
  /// unhealthy_prob is 0)
  bool precheck_fails(std::size_t n);
  /// Does an image pull with failure probability `prob` fail? (pull stream; no draw when 0)
  bool pull_fails(double prob);
  /// Time (s) to a transient failure at `rate_per_h` failures per hour (transient stream).
  double transient_failure_after_s(double rate_per_h);
  /// Time (s) to the next spot reclaim of a node at `rate_per_node_h` reclaims per node-hour
  /// (> 0; reclaim stream).
  double reclaim_after_s(double rate_per_node_h);
  /// The seed of the reclaim stream of a run with seed `run_seed` (the stream is a
  /// boost::random::mt19937_64 seeded with it; tests derive the expected reclaim times from it).
  static std::uint64_t reclaim_stream_seed(std::uint64_t run_seed);

 private:
  std::vector<NodeParams> nodes_;
  boost::random::mt19937_64 node_rng_;       // stochastic node failures and repairs
  boost::random::mt19937_64 precheck_rng_;   // per-node health draws
  boost::random::mt19937_64 pull_rng_;       // image pull failures
  boost::random::mt19937_64 transient_rng_;  // per-attempt transient failure times
  boost::random::mt19937_64 reclaim_rng_;    // spot reclaim times per node
};

}  // namespace sim
