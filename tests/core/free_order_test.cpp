// detail::FreeOrder (the blocked free-capacity order behind best-fit / worst-fit) against a
// std::set reference, and Cluster's upkeep of it (every node at its free capacity and GPU
// capability after random allocations and releases).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <random>
#include <set>
#include <vector>

#include <libsched/libsched.hpp>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using libsched::Cluster;
using libsched::NodeDesc;
using libsched::NodeId;
using libsched::ReplicaShape;
using libsched::detail::FreeOrder;

TEST_CASE("FreeOrder keeps the order, lower bounds and capability search of a sorted set") {
  for (unsigned seed = 1; seed <= 30; ++seed) {
    std::mt19937_64 rng(seed);
    FreeOrder o;
    std::map<FreeOrder::Key, std::int32_t> ref;  // key -> cap
    std::vector<FreeOrder::Key> live;
    const int ops = 3000 + int(rng() % 3000);
    for (int op = 0; op < ops; ++op) {
      if (live.empty() || rng() % 100 < 55) {
        FreeOrder::Entry e{std::int64_t(rng() % 40) * 100, std::int64_t(rng() % 8) * 1000, std::int32_t(op), std::int32_t(rng() % 9000)};
        o.insert(e);
        ref[e.key()] = e.cap;
        live.push_back(e.key());
      } else {
        const std::size_t i = rng() % live.size();
        REQUIRE(o.erase(live[i]));
        REQUIRE_FALSE(o.erase(live[i]));
        ref.erase(live[i]);
        live[i] = live.back();
        live.pop_back();
      }
      REQUIRE(o.size() == ref.size());
      if (op % 50 != 0) continue;
      // Same entries in the same order, forwards and backwards.
      std::vector<std::pair<FreeOrder::Key, std::int32_t>> got, want(ref.begin(), ref.end());
      for (auto it = o.begin(); !(it == o.end()); ++it) got.emplace_back(it->key(), it->cap);
      REQUIRE(got == want);
      std::size_t back = want.size();
      for (auto it = o.end(); !(it == o.begin());) {
        --it;
        REQUIRE(it->key() == want[--back].first);
      }
      REQUIRE(o.keys() == std::set<FreeOrder::Key>(live.begin(), live.end()));
      // lower_bound and find_from against a scan of the reference.
      for (int q = 0; q < 20; ++q) {
        const FreeOrder::Key lo{std::int64_t(rng() % 42) * 100, std::int64_t(rng() % 9) * 1000, -1};
        const std::int32_t need = std::int32_t(rng() % 9500);
        const std::int32_t parity = std::int32_t(rng() % 3);  // ok(): ids of one residue mod 3
        auto lb = o.lower_bound(lo);
        auto rl = ref.lower_bound(lo);
        if (rl == ref.end()) REQUIRE(lb == o.end());
        else REQUIRE(lb->key() == rl->first);
        auto found = o.find_from(lb, need, [&](std::int32_t id) { return id % 3 == parity; });
        auto expect = std::find_if(rl, ref.end(), [&](const auto& kv) { return kv.second >= need && std::get<2>(kv.first) % 3 == parity; });
        if (expect == ref.end()) REQUIRE(found == o.end());
        else REQUIRE(found->key() == expect->first);
      }
    }
  }
}

TEST_CASE("Cluster keeps each node in the free order at its free capacity and GPU capability") {
  Cluster c;
  auto pool = c.add_pool("p", libsched::PoolKind::shared);
  for (int i = 0; i < 300; ++i) {
    NodeDesc d;
    d.name = "n";
    d.name += std::to_string(i);
    d.pool = pool;
    d.gpu_model = i % 2 ? "A100" : "V100";
    d.gpus = 1 + i % 8;
    d.cpu_milli = 96000;
    d.mem_mib = 786432;
    c.add_node(d);
  }
  std::mt19937_64 rng(7);
  std::vector<libsched::ReplicaAllocation> held;
  const std::int32_t shares[] = {100, 250, 300, 500, 700, 1000};
  for (int op = 0; op < 20000; ++op) {
    if (held.empty() || rng() % 100 < 60) {
      ReplicaShape r;
      r.gpu_milli = shares[rng() % 6];
      r.num_gpu = r.gpu_milli == 1000 ? 1 + std::int32_t(rng() % 4) : 1;
      r.cpu_milli = 1000 * std::int64_t(rng() % 12);
      r.mem_mib = 1024;
      NodeId n(std::int32_t(rng() % 300));
      if (c.fits(n, r)) held.push_back(c.allocate(n, r));
    } else {
      const std::size_t i = rng() % held.size();
      c.release(held[i]);
      held[i] = held.back();
      held.pop_back();
    }
    if (op % 500 != 0) continue;
    const auto& o = c.free_order();
    REQUIRE(o.size() == c.size());
    for (auto it = o.begin(); !(it == o.end()); ++it) {
      const auto& node = c.node(NodeId(it->id));
      REQUIRE(it->gpu == node.free.gpu_milli);
      REQUIRE(it->cpu == node.free.cpu_milli);
      REQUIRE(it->cap == c.gpu_cap(node));
    }
    // The capability is necessary: no node below a replica's need fits it.
    for (std::int32_t m : shares) {
      ReplicaShape r;
      r.gpu_milli = m;
      r.num_gpu = 1;
      r.cpu_milli = 1000;
      r.mem_mib = 1024;
      for (std::size_t i = 0; i < c.size(); ++i)
        if (c.gpu_cap(c.nodes()[i]) < Cluster::gpu_cap_need(r)) REQUIRE_FALSE(c.fits(NodeId(std::int32_t(i)), r));
    }
  }
}

namespace {
using Entries = std::vector<std::tuple<std::int64_t, std::int64_t, std::int32_t, std::int32_t>>;
/// The free order as read, in order.
Entries read_order(const Cluster& c) {
  Entries v;
  const auto& o = c.free_order();
  for (auto it = o.begin(); !(it == o.end()); ++it) v.emplace_back(it->gpu, it->cpu, it->id, it->cap);
  return v;
}
/// What it must hold: every node that is not removed at its current entry, in key order.
Entries expected_order(const Cluster& c) {
  Entries v;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const auto& n = c.nodes()[i];
    if (!n.removed) v.emplace_back(n.free.gpu_milli, n.free.cpu_milli, std::int32_t(i), c.gpu_cap(n));
  }
  std::sort(v.begin(), v.end());
  return v;
}

/// Adds node "n<i>" to pool `pool`: 8 A100 GPUs, 96 vCPU, 768 GiB.
NodeId add_a100_node(Cluster& c, libsched::PoolId pool, int i) {
  NodeDesc d;
  d.name = "n" + std::to_string(i);
  d.pool = pool;
  d.gpu_model = "A100";
  d.gpus = 8;
  d.cpu_milli = 96000;
  d.mem_mib = 786432;
  return c.add_node(d);
}
}  // namespace

TEST_CASE("the free order's deferred moves: every read sees every change, rolled-back releases leave it as it was") {
  Cluster c;
  auto pool = c.add_pool("p", libsched::PoolKind::shared);
  auto add = [&](int i) { return add_a100_node(c, pool, i); };
  for (int i = 0; i < 40; ++i) add(i);
  std::mt19937_64 rng(11);
  std::vector<libsched::ReplicaAllocation> held;
  for (int k = 0; k < 200; ++k) {
    ReplicaShape r;
    r.gpu_milli = k % 3 == 0 ? 1000 : 300 + std::int32_t(rng() % 6) * 100;
    r.num_gpu = r.gpu_milli == 1000 ? 1 + std::int32_t(rng() % 2) : 1;
    r.cpu_milli = 1000 * std::int64_t(1 + rng() % 4);
    r.mem_mib = 1024;
    NodeId n(std::int32_t(1 + rng() % 39));  // node 0 stays empty (removed below)
    if (c.fits(n, r)) held.push_back(c.allocate(n, r));
  }
  REQUIRE(read_order(c) == expected_order(c));
  const Entries before = read_order(c);
  libsched::QuotaBook q;
  {
    libsched::Transaction tx(c, q);
    for (std::size_t i = 0; i < held.size(); i += 3) tx.release(held[i]);
    const std::size_t m = tx.mark();
    REQUIRE(read_order(c) == expected_order(c));  // a read between releases sees them
    for (std::size_t i = 1; i < held.size(); i += 3) tx.release(held[i]);
    tx.rollback_to(m);  // released and rolled back with no read between: no move needed
    REQUIRE(read_order(c) == expected_order(c));
  }  // the transaction rolls the rest back
  REQUIRE(read_order(c) == before);
  // Node changes with moves still pending: removing, adding, turning the index off and on.
  c.release(held[0]);
  c.remove_node(NodeId(0));
  c.release(held[1]);
  add(40);
  REQUIRE(read_order(c) == expected_order(c));
  c.release(held[2]);
  c.keep_free_index(false);
  c.release(held[3]);
  c.keep_free_index(true);
  c.release(held[4]);
  REQUIRE(read_order(c) == expected_order(c));
}

TEST_CASE("FreeOrder::move_all gives the order of erase and insert one by one") {
  // Batches of 1 to 400 moves (some several to one block, some that empty a block or push one
  // above 2 x kBlock), compared entry by entry, with lower_bound and find_from, with an order
  // that makes the same moves one by one.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    FreeOrder bulk, single;
    std::vector<FreeOrder::Entry> cur;  // by node id
    const std::int32_t n = 200 + std::int32_t(rng() % 800);
    for (std::int32_t id = 0; id < n; ++id) {
      FreeOrder::Entry e{std::int64_t(rng() % 9) * 1000, std::int64_t(rng() % 97) * 1000, id, std::int32_t(rng() % 9000)};
      bulk.insert(e);
      single.insert(e);
      cur.push_back(e);
    }
    for (int round = 0; round < 60; ++round) {
      const std::size_t c = round % 5 == 0 ? 1 + rng() % 400 : 1 + rng() % 40;
      // Distinct nodes; a narrow key range in some rounds piles the moves onto few blocks.
      const bool narrow = rng() % 3 == 0;
      std::vector<FreeOrder::Key> gone;
      std::vector<FreeOrder::Entry> added;
      std::set<std::int32_t> ids;
      while (ids.size() < std::min<std::size_t>(c, std::size_t(n))) ids.insert(std::int32_t(rng() % std::uint64_t(n)));
      for (std::int32_t id : ids) {
        FreeOrder::Entry e{narrow ? 4000 : std::int64_t(rng() % 9) * 1000, std::int64_t(rng() % 97) * 1000 + (narrow ? 1 : 0), id,
                           std::int32_t(rng() % 9000)};
        gone.push_back(cur[std::size_t(id)].key());
        added.push_back(e);
        REQUIRE(single.erase(cur[std::size_t(id)].key()));
        cur[std::size_t(id)] = e;
      }
      for (const auto& e : added) single.insert(e);
      bulk.move_all(gone, added);
      REQUIRE(bulk.size() == single.size());
      std::vector<std::pair<FreeOrder::Key, std::int32_t>> got, want;
      for (auto it = bulk.begin(); !(it == bulk.end()); ++it) got.emplace_back(it->key(), it->cap);
      for (auto it = single.begin(); !(it == single.end()); ++it) want.emplace_back(it->key(), it->cap);
      REQUIRE(got == want);
      for (int q = 0; q < 20; ++q) {
        const FreeOrder::Key lo{std::int64_t(rng() % 10) * 1000, std::int64_t(rng() % 98) * 1000, -1};
        const std::int32_t need = std::int32_t(rng() % 9500);
        auto fb = bulk.find_from(bulk.lower_bound(lo), need, [](std::int32_t id) { return id % 2 == 0; });
        auto fs = single.find_from(single.lower_bound(lo), need, [](std::int32_t id) { return id % 2 == 0; });
        REQUIRE((fb == bulk.end()) == (fs == single.end()));
        if (!(fb == bulk.end())) REQUIRE(fb->key() == fs->key());
      }
    }
  }
}

TEST_CASE("the free order after many deferred moves at one read is the same made in one pass or one by one") {
  // Two clusters, the same allocations, releases and rollbacks; one makes a read's moves in
  // one pass (the default), the other one by one. Reads come after 1 to 300 changes.
  auto make = [](Cluster& c) {
    auto pool = c.add_pool("p", libsched::PoolKind::shared);
    for (int i = 0; i < 500; ++i) add_a100_node(c, pool, i);
  };
  Cluster a, b;
  make(a);
  make(b);
  b.set_bulk_order_moves(false);
  std::mt19937_64 rng(5);
  std::vector<libsched::ReplicaAllocation> ha, hb;
  libsched::QuotaBook qa, qb;
  auto shape = [&] {
    ReplicaShape r;
    r.gpu_milli = rng() % 2 ? 1000 : 100 * std::int32_t(1 + rng() % 9);
    r.num_gpu = r.gpu_milli == 1000 ? 1 + std::int32_t(rng() % 4) : 1;
    r.cpu_milli = 1000 * std::int64_t(rng() % 12);
    r.mem_mib = 1024;
    return r;
  };
  for (int round = 0; round < 200; ++round) {
    const int steps = round % 4 == 0 ? 1 + int(rng() % 300) : 1 + int(rng() % 12);
    for (int s = 0; s < steps; ++s) {
      if (ha.empty() || rng() % 100 < 55) {
        const ReplicaShape r = shape();
        NodeId n(std::int32_t(rng() % 500));
        if (!a.fits(n, r)) continue;
        ha.push_back(a.allocate(n, r));
        hb.push_back(b.allocate(n, r));
      } else {
        const std::size_t i = rng() % ha.size();
        a.release(ha[i]);
        b.release(hb[i]);
        ha[i] = ha.back();
        ha.pop_back();
        hb[i] = hb.back();
        hb.pop_back();
      }
    }
    REQUIRE(read_order(a) == read_order(b));
    REQUIRE(read_order(a) == expected_order(a));
  }
  // Many releases in a transaction and a few allocations, read, more, read, rolled back,
  // read: what a victim search's probes do.
  for (int k = 0; k < 30; ++k) {
    {
      libsched::Transaction ta(a, qa), tb(b, qb);
      for (int part = 0; part < 2; ++part) {
        for (std::size_t i = std::size_t(part); i < ha.size(); i += 2)
          if (rng() % 3 == 0) {
            ta.release(ha[i]);
            tb.release(hb[i]);
          }
        for (int s = 0; s < 5; ++s) {
          const ReplicaShape r = shape();
          NodeId n(std::int32_t(rng() % 500));
          if (!a.fits(n, r)) continue;
          ta.allocate(n, r);
          tb.allocate(n, r);
        }
        REQUIRE(read_order(a) == read_order(b));
        REQUIRE(read_order(a) == expected_order(a));
      }
    }  // rolled back
    REQUIRE(read_order(a) == read_order(b));
    REQUIRE(read_order(a) == expected_order(a));
  }
}

}  // namespace SCHEDSIM_UNITY_ID
