// A program that embeds libsched through the installed CMake package: builds a cluster,
// submits a gang and checks the decision. Exit 0 on the expected outcome.
#include <libsched/libsched.hpp>

#include <cstdio>

int main() {
  using namespace libsched;
  Cluster c;
  PoolId pool = c.add_pool("shared-a100", PoolKind::shared);
  for (int i = 0; i < 2; ++i)
    c.add_node(NodeDesc{"a100-" + std::to_string(i), pool, "A100", 8, 96000, 960 * 1024, 0, 0, {}});
  Scheduler s(std::move(c));
  TaskSpec t;
  t.name = "pretrain";
  t.user = "alice";
  t.resource_type = ResourceType::pay_as_you_go;
  t.workers = 1;
  ReplicaShape r{8, 1000, 8000, 64 * 1024, 0};
  t.options.push_back(GangOption{"a100.8x", r, r});
  TaskId id = s.add_task(t);
  s.enqueue(id, 0);
  ScheduleResult res = s.schedule(0);
  std::printf("libsched %s: started %zu task(s)\n", LIBSCHED_VERSION_STRING, res.started.size());
  return res.started.size() == 1 && s.placement_of(id)->replicas.size() == 2 ? 0 : 1;
}
