// The compact task record (sim/io/scenario.hpp TaskCfg): shared keys interned (sim::io::Interned)
// and the autoscaling section held only when set (sim::io::Sparse).
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/io/scenario.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using sim::io::AutoscalingCfg;
using sim::io::Interned;
using sim::io::Sparse;
using sim::io::TaskCfg;

TEST_CASE("Interned: equal texts are one copy, compare as strings", "[io][interned]") {
  const std::string built = std::string("swf-u") + "17";
  const Interned a(built), b("swf-u17"), c(std::string_view("swf-u18"));
  CHECK(&a.str() == &b.str());  // one copy per distinct text
  CHECK(&a.str() != &c.str());
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a == "swf-u17");
  CHECK(a == std::string("swf-u17"));
  CHECK(a == std::string_view("swf-u17"));
  CHECK(a < c);  // by text: "swf-u17" < "swf-u18"
  CHECK(Interned("b") > Interned("a"));
  CHECK(Interned().empty());
  CHECK(Interned("") == Interned());
  CHECK(a.size() == 7);
  CHECK(a + "/x" == "swf-u17/x");
  CHECK(fmt::format("[{}]", a) == "[swf-u17]");
  const std::string& as_string = a;  // the interned text itself, no copy
  CHECK(&as_string == &b.str());
  nlohmann::json j = a;
  CHECK(j == "swf-u17");
  CHECK(j.get<Interned>() == a);
}

TEST_CASE("Interned: threads interning the same texts get the same copies", "[io][interned]") {
  std::vector<const std::string*> seen(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&seen, i] {
      const std::string* last = nullptr;
      for (int k = 0; k < 2000; ++k) last = &Interned(fmt::format("thread-text-{}", k)).str();
      seen[i] = last;
    });
  for (auto& t : threads) t.join();
  for (const std::string* s : seen) CHECK(s == seen[0]);
  CHECK(*seen[0] == "thread-text-1999");
}

TEST_CASE("TaskCfg defaults are the contract's, with the shared keys interned", "[io][interned]") {
  const TaskCfg t;
  CHECK(t.tenant == "default");
  CHECK(t.type == "PyTorchJob");
  CHECK(t.resource_type == "reserved");
  CHECK(t.idle_stability == "low");
  CHECK(t.user.empty());
  CHECK(t.pool.empty());
  CHECK(t.head_spec.empty());
  CHECK(t.autoscaling->scale_out == "conservative");
  CHECK_FALSE(t.autoscaling->enabled);
  // The record this layout keeps per loaded task (docs/benchmarks.md "Eighteenth round").
  CHECK(sizeof(TaskCfg) <= 320);
}

TEST_CASE("Sparse: unset reads the default, edit() sets, copies are deep, equality by value", "[io][interned]") {
  Sparse<AutoscalingCfg> a;
  CHECK(*a == AutoscalingCfg{});
  CHECK(a->max_workers == 0);
  Sparse<AutoscalingCfg> b = a;
  b.edit().max_workers = 4;
  CHECK(b->max_workers == 4);
  CHECK(a->max_workers == 0);  // the copy did not share
  CHECK_FALSE(a == b);
  Sparse<AutoscalingCfg> c = b;
  CHECK(c == b);
  c.edit().demand.push_back({10, 2});
  CHECK(b->demand.empty());
  CHECK_FALSE(c == b);
  // A value equal to the default compares equal to an unset one (TaskCfg profiles are shared by value).
  AutoscalingCfg def;
  Sparse<AutoscalingCfg> d = def;
  CHECK(d == a);
  TaskCfg x, y;
  y.autoscaling.edit();  // allocated, still the default value
  CHECK(x == y);
}

}  // namespace SCHEDSIM_UNITY_ID
