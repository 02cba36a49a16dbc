// Gang placement as a transaction (docs/architecture: Volcano Statement, KAI checkpoints).
//
// Every allocation, release and quota charge made through a Transaction is recorded; unless
// commit() is called, the destructor undoes them in reverse order. mark()/rollback_to() give
// nested trials (try spec A, roll back, try spec B). This is what makes a partial gang
// impossible by construction: a gang's replicas are taken inside one Transaction and it is
// committed only when every replica is placed.
#pragma once

#include <cstddef>
#include <variant>

#include <boost/container/small_vector.hpp>

#include "libsched/cluster.hpp"
#include "libsched/quota.hpp"

namespace libsched {

class Transaction {
 public:
  Transaction(Cluster& c, QuotaBook& q) : cluster_(c), quotas_(q) {}
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (!committed_) rollback_to(0);
  }

  ReplicaAllocation allocate(NodeId n, const ReplicaShape& r) {
    ReplicaAllocation a = cluster_.allocate(n, r);
    ops_.push_back(Alloc{a});
    return a;
  }
  void release(const ReplicaAllocation& a) {
    cluster_.release(a);
    ops_.push_back(Release{a});
  }
  /// sign +1 charges, -1 refunds.
  /// A charge that changes no entry (idle, or a key without a quota entry) is not logged:
  /// there is nothing to undo (entries are only added outside transactions).
  void charge(const QuotaKey& k, const Resources& amount, int sign) {
    if (quotas_.charge(k, amount, sign)) ops_.push_back(Charge{k, amount, sign});
  }

  std::size_t mark() const { return ops_.size(); }
  /// Undoes every operation after `m`, newest first.
  void rollback_to(std::size_t m) {
    while (ops_.size() > m) {
      std::visit([this](const auto& op) { undo(op); }, ops_.back());
      ops_.pop_back();
    }
  }
  void commit() { committed_ = true; ops_.clear(); }
  Cluster& cluster() { return cluster_; }
  QuotaBook& quotas() { return quotas_; }

 private:
  struct Alloc { ReplicaAllocation a; };
  struct Release { ReplicaAllocation a; };
  struct Charge { QuotaKey k; Resources amount; int sign; };
  void undo(const Alloc& op) { cluster_.release(op.a); }
  void undo(const Release& op) { cluster_.reacquire(op.a); }
  void undo(const Charge& op) { quotas_.charge(op.k, op.amount, -op.sign); }

  Cluster& cluster_;
  QuotaBook& quotas_;
  /// The undo log. A trial's first few operations (a small gang's allocations and its quota
  /// charge) stay in the transaction itself: no heap allocation per trial (allocate makes one
  /// per task it tries).
  boost::container::small_vector<std::variant<Alloc, Release, Charge>, 6> ops_;
  bool committed_ = false;
};

}  // namespace libsched
