// Transaction with a lent log (Transaction::Log, the scheduler's spare): the same undo as a
// transaction with its own log, nested transactions included, and the spare handed back empty.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include <libsched/libsched.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using libsched::Cluster;
using libsched::NodeId;
using libsched::ReplicaShape;
using libsched::Transaction;

namespace {

/// Every node's free vCPU, memory, GPU milli and per-GPU free state: what an undo must restore.
std::vector<std::int64_t> free_state(const Cluster& c) {
  std::vector<std::int64_t> v;
  for (const auto& n : c.nodes()) {
    v.push_back(n.free.cpu_milli);
    v.push_back(n.free.mem_mib);
    v.push_back(n.free.gpu_milli);
    v.push_back(n.full_free_gpus);
    v.push_back(std::int64_t(n.gpu_state));
  }
  return v;
}

Cluster cluster_of(int nodes) { return libsched::testing::make_cluster().pool("p").nodes("n", nodes).build(); }

}  // namespace

TEST_CASE("a transaction with a lent log undoes exactly what one with its own log undoes, nested or not", "[transaction]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Cluster lent = cluster_of(6), own = cluster_of(6);
    libsched::QuotaBook q1, q2;
    Transaction::Log spare;
    std::mt19937_64 rng(seed);
    for (int round = 0; round < 30; ++round) {
      // The same random steps on both clusters: allocations, a nested trial rolled back or
      // committed, then the outer transaction committed or rolled back.
      const std::uint64_t step_seed = rng();
      auto play = [&](Cluster& c, libsched::QuotaBook& q, Transaction::Log* log) {
        std::mt19937_64 r(step_seed);
        auto some_shape = [&] {
          ReplicaShape s;
          s.num_gpu = 1 + std::int32_t(r() % 2);
          s.gpu_milli = 1000;
          s.cpu_milli = 1000 * std::int64_t(1 + r() % 8);
          s.mem_mib = 1024;
          return s;
        };
        auto try_alloc = [&](Transaction& tx) {
          const NodeId n(std::int32_t(r() % 6));
          const ReplicaShape s = some_shape();
          if (c.fits(n, s)) tx.allocate(n, s);
        };
        Transaction outer(c, q, log);
        const int k = 1 + int(r() % 12);  // past any inline capacity a log might have
        for (int i = 0; i < k; ++i) try_alloc(outer);
        {
          Transaction inner(c, q, log);  // the spare is lent out: its own storage
          for (int i = 0; i < 1 + int(r() % 5); ++i) try_alloc(inner);
          if (r() % 2) inner.commit();
        }
        const std::size_t m = outer.mark();
        for (int i = 0; i < 3; ++i) try_alloc(outer);
        if (r() % 2) outer.rollback_to(m);
        if (r() % 3 == 0) outer.commit();
      };
      play(lent, q1, &spare);
      play(own, q2, nullptr);
      REQUIRE(free_state(lent) == free_state(own));
      REQUIRE(spare.empty());  // handed back emptied
    }
    CHECK(spare.capacity() > 0);  // and kept: the next transaction allocates nothing
  }
}

TEST_CASE("a rolled-back transaction with a lent log leaves the cluster as it was", "[transaction]") {
  Cluster c = cluster_of(2);
  libsched::QuotaBook q;
  Transaction::Log spare;
  const auto before = free_state(c);
  ReplicaShape s;
  s.num_gpu = 1;
  s.gpu_milli = 1000;
  s.cpu_milli = 4000;
  s.mem_mib = 1024;
  {
    Transaction tx(c, q, &spare);
    for (int i = 0; i < 8; ++i) tx.allocate(NodeId(i % 2), s);
    CHECK(free_state(c) != before);
  }
  CHECK(free_state(c) == before);
  CHECK(spare.empty());
  CHECK(spare.capacity() >= 8);
  {
    Transaction tx(c, q, &spare);
    tx.allocate(NodeId(0), s);
    tx.commit();
  }
  CHECK(free_state(c) != before);  // committed: kept
  CHECK(spare.empty());
}

}  // namespace SCHEDSIM_UNITY_ID
