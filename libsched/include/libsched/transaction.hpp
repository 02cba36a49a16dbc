// Gang placement as a transaction (docs/architecture: Volcano Statement, KAI checkpoints).
//
// Every allocation, release and quota charge made through a Transaction is recorded; unless
// commit() is called, the destructor undoes them in reverse order. mark()/rollback_to() give
// nested trials (try spec A, roll back, try spec B). This is what makes a partial gang
// impossible by construction: a gang's replicas are taken inside one Transaction and it is
// committed only when every replica is placed.
#pragma once

#include <cstddef>
#include <utility>
#include <variant>
#include <vector>

#include "libsched/cluster.hpp"
#include "libsched/quota.hpp"

namespace libsched {

class Transaction {
  struct Alloc;
  struct Release;
  struct Charge;

 public:
  /// The undo log's storage type (opaque): a caller that makes many short transactions keeps
  /// one and lends it (the constructor's `spare`).
  using Log = std::vector<std::variant<Alloc, Release, Charge>>;

  /// `spare` (optional): a log whose storage this transaction uses and gives back, emptied, when
  /// it ends, so that a transaction per trial allocates nothing (actions::allocate makes one per
  /// task it tries). A nested transaction finds the spare lent out and uses its own storage.
  /// `spare` must outlive the transaction.
  Transaction(Cluster& c, QuotaBook& q, Log* spare = nullptr) : cluster_(c), quotas_(q), spare_(spare) {
    if (spare_) ops_.swap(*spare_);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (!committed_) rollback_to(0);
    if (spare_ && ops_.capacity() > spare_->capacity()) {
      ops_.clear();
      ops_.swap(*spare_);
    }
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
  Log ops_;
  Log* spare_ = nullptr;
  bool committed_ = false;
};

}  // namespace libsched
