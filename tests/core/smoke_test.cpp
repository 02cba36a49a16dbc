#include <catch2/catch.hpp>
#include <libsched/libsched.hpp>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)
TEST_CASE("the umbrella header compiles and a one-node cluster places a one-GPU replica") {
  using namespace libsched;
  Cluster c;
  auto p = c.add_pool("p", PoolKind::shared);
  c.add_node(NodeDesc{"n0", p, "A100", 8, 96000, 1024, 0, 0, {}});
  Scheduler s(std::move(c));
  TaskSpec t;
  t.name = "t";
  t.user = "u";
  t.resource_type = ResourceType::pay_as_you_go;
  t.options.push_back(GangOption{"x", ReplicaShape{1, 1000, 1000, 10, 0}, ReplicaShape{1, 1000, 1000, 10, 0}});
  auto id = s.add_task(t);
  s.enqueue(id, 0);
  REQUIRE(s.schedule(0).started.size() == 1);
}

}  // namespace SCHEDSIM_UNITY_ID
