// The pieces of sharded sweeps (sim/shard.hpp; docs/sharding.md): --shard parsing, the point
// assignment, the fingerprint, the memory request and the arguments the emitted jobs repeat.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "sim/experiments/shard.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

TEST_CASE("parse_shard accepts I/N with 0 <= I < N <= 10000", "[shard]") {
  std::string e;
  auto s = sim::parse_shard("0/1", e);
  REQUIRE(s);
  CHECK(s->index == 0);
  CHECK(s->count == 1);
  s = sim::parse_shard("7/8", e);
  REQUIRE(s);
  CHECK(s->index == 7);
  CHECK(s->count == 8);
  CHECK(sim::parse_shard("9999/10000", e));
}

TEST_CASE("parse_shard refuses every malformed or out-of-range value with one --shard line", "[shard]") {
  for (const char* bad : {"0/0", "3/2", "2/2", "-1/2", "a/b", "3", "1/", "/2", "", "1/2/3", "+1/2", " 1/2", "1/10001", "1.5/4",
                          "99999999999/1"}) {
    INFO(bad);
    std::string e;
    CHECK_FALSE(sim::parse_shard(bad, e));
    CHECK(e.rfind(std::string("--shard: ") + bad + ": ", 0) == 0);
    CHECK(e.find('\n') == std::string::npos);
  }
  std::string e;
  sim::parse_shard("3/2", e);
  CHECK(e == "--shard: 3/2: I must be less than N (shards are numbered 0 to 1)");
  sim::parse_shard("0/0", e);
  CHECK(e == "--shard: 0/0: N must be from 1 to 10000");
}

TEST_CASE("shard_points: every point in exactly one shard, p mod N = I, also when N > points", "[shard]") {
  for (std::size_t points : {1, 5, 6, 17}) {
    for (std::uint32_t n : {1u, 2u, 3u, 7u, 20u}) {
      std::multiset<std::size_t> all;
      for (std::uint32_t i = 0; i < n; ++i) {
        const sim::ShardSpec s{i, n};
        for (std::size_t p : sim::shard_points(points, s)) {
          CHECK(p % n == i);
          CHECK(sim::in_shard(p, s));
          all.insert(p);
        }
      }
      INFO(points << " points, " << n << " shards");
      REQUIRE(all.size() == points);
      for (std::size_t p = 0; p < points; ++p) CHECK(all.count(p) == 1);
    }
  }
  CHECK(sim::shard_points(3, sim::ShardSpec{5, 8}).empty());
  CHECK(sim::shard_points(10, sim::ShardSpec{1, 4}) == std::vector<std::size_t>{1, 5, 9});
}

TEST_CASE("default_shard_count is min(points, 64), at least 1", "[shard]") {
  CHECK(sim::default_shard_count(0) == 1);
  CHECK(sim::default_shard_count(6) == 6);
  CHECK(sim::default_shard_count(64) == 64);
  CHECK(sim::default_shard_count(1000) == 64);
}

TEST_CASE("fingerprint_hex: 16 hex digits of FNV-1a 64, different for different text", "[shard]") {
  CHECK(sim::fingerprint_hex("") == "cbf29ce484222325");  // the FNV-1a 64 offset basis
  CHECK(sim::fingerprint_hex("a") == "af63dc4c8601ec8c");  // published FNV-1a 64 test vector
  CHECK(sim::fingerprint_hex("grid 1") != sim::fingerprint_hex("grid 2"));
}

TEST_CASE("shard_memory_mib: 1.5 x peak + 64 MiB, rounded up to 64 MiB, at least 256", "[shard]") {
  CHECK(sim::shard_memory_mib(0) == 256);
  CHECK(sim::shard_memory_mib(100) == 256);   // 214 -> 256 (the floor)
  CHECK(sim::shard_memory_mib(200) == 384);   // 364 -> 384
  CHECK(sim::shard_memory_mib(1000) == 1600); // 1564 -> 1600
  CHECK(sim::shard_memory_mib(1024) % 64 == 0);
  CHECK(sim::peak_rss_mib() > 0);
}

TEST_CASE("shard_command_args: the command's arguments without --out, --emit, --shards, --jobs, --image", "[shard]") {
  const std::vector<std::string> argv{"/bin/schedsim", "sweep", "s.json", "--vary", "a=1,2", "--out", "d", "--jobs", "4",
                                      "--emit", "slurm", "--shards=3", "--seeds", "2", "--image=x", "--out=e", "--set", "b=--outside"};
  CHECK(sim::shard_command_args(argv, "sweep") ==
        std::vector<std::string>{"s.json", "--vary", "a=1,2", "--seeds", "2", "--set", "b=--outside"});
  CHECK(sim::shard_command_args({"schedsim", "fill", "s.json", "--emit", "k8s"}, "fill") == std::vector<std::string>{"s.json"});
}

}  // namespace SCHEDSIM_UNITY_ID
