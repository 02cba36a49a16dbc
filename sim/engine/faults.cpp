// sim::FaultModel implementation: see faults.hpp.
#include "sim/engine/faults.hpp"

#include <algorithm>

#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/exponential_distribution.hpp>

namespace sim {

namespace {

/// Seeds for the independent streams: splitmix64 of the run seed and a per-stream constant.
std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

bool is_deterministic_error(std::string_view kind) {
  return kind == "image_unavailable" || kind == "bad_command" || kind == "invalid_data_path" || kind == "gpu_oom";
}

bool is_retriable(std::string_view kind, const std::vector<std::string>& retry_on) {
  if (is_deterministic_error(kind)) return false;
  return std::find(retry_on.begin(), retry_on.end(), kind) != retry_on.end();
}

FaultModel::FaultModel(std::uint64_t seed) {
  node_rng_.seed(splitmix(seed ^ 0x1111));
  precheck_rng_.seed(splitmix(seed ^ 0x2222));
  pull_rng_.seed(splitmix(seed ^ 0x3333));
  transient_rng_.seed(splitmix(seed ^ 0x4444));
  reclaim_rng_.seed(reclaim_stream_seed(seed));
}

std::uint64_t FaultModel::reclaim_stream_seed(std::uint64_t run_seed) { return splitmix(run_seed ^ 0x5555); }

double FaultModel::reclaim_after_s(double rate_per_node_h) {
  boost::random::exponential_distribution<double> d(rate_per_node_h / 3600.0);
  return d(reclaim_rng_);
}

std::optional<double> FaultModel::first_failure_s(std::size_t n) {
  if (nodes_[n].mtbf_s <= 0) return std::nullopt;
  return failure_after_s(n);
}

double FaultModel::repair_after_s(std::size_t n) {
  boost::random::exponential_distribution<double> d(1.0 / std::max(1e-9, nodes_[n].mttr_s));
  return d(node_rng_);
}

double FaultModel::failure_after_s(std::size_t n) {
  boost::random::exponential_distribution<double> d(1.0 / nodes_[n].mtbf_s);
  return d(node_rng_);
}

bool FaultModel::precheck_fails(std::size_t n) {
  const double p = nodes_[n].unhealthy_prob;
  return p > 0 && boost::random::bernoulli_distribution<double>(p)(precheck_rng_);
}

bool FaultModel::pull_fails(double prob) {
  return prob > 0 && boost::random::bernoulli_distribution<double>(prob)(pull_rng_);
}

double FaultModel::transient_failure_after_s(double rate_per_h) {
  boost::random::exponential_distribution<double> d(rate_per_h / 3600.0);
  return d(transient_rng_);
}

}  // namespace sim
