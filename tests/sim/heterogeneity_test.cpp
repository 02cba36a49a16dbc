// GPU heterogeneity (docs/heterogeneity.md): the `throughput` section's relative speeds per task
// class and GPU model. A task's duration_s is reference work (speed 1.0); on a model of speed s it
// runs duration / s; a gang runs at its slowest GPU replica's speed; checkpoints and the work a
// preempted attempt saved are counted in reference seconds. Every expected time is hand-derived.
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace simtest;
using Rows = std::vector<std::string>;

namespace {

/// Pool "p": node v0 (8 V100, node id 0) then node b0 (8 A100, node id 1); specs v100.8x and
/// a100.8x (8 GPUs each).
sim::io::Scenario two_models() {
  auto sc = cluster(0);
  sc.cluster.instance_specs = {{"v100.8x", "V100", 8, 1000, 96, 960}, {"a100.8x", "A100", 8, 1000, 96, 960}};
  sim::io::NodeGroupCfg v;
  v.prefix = "v";
  v.count = 1;
  v.gpu_model = "V100";
  v.gpus = 8;
  v.vcpu = 96;
  v.memory_gib = 960;
  sim::io::NodeGroupCfg b = v;
  b.prefix = "b";
  b.gpu_model = "A100";
  sc.cluster.pools.front().node_groups = {v, b};
  return sc;
}

sim::io::ThroughputCfg row(const std::string& glob, std::map<std::string, double> speed) {
  sim::io::ThroughputCfg r;
  r.name_glob = glob;
  r.speed = std::move(speed);
  return r;
}

/// One 8-GPU replica that may run on either model (inline shape).
sim::io::ReplicaCfg either_model() {
  sim::io::ReplicaCfg r;
  r.gpus = 8;
  r.vcpu = 96;
  r.memory_gib = 960;
  r.gpu_models = {"V100", "A100"};
  return r;
}

/// tasks.csv as rows of fields (no quoted fields in these scenarios), header first.
std::vector<std::vector<std::string>> table(const sim::Simulator& s) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(s.tasks_csv());
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::istringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    if (!line.empty() && line.back() == ',') f.emplace_back();
    out.push_back(f);
  }
  return out;
}

/// Column `name` of every attempt row.
Rows column(const sim::Simulator& s, const std::string& name) {
  auto t = table(s);
  std::size_t k = 0;
  while (k < t[0].size() && t[0][k] != name) ++k;
  REQUIRE(k < t[0].size());
  Rows out;
  for (std::size_t i = 1; i < t.size(); ++i) out.push_back(k < t[i].size() ? t[i][k] : "<none>");
  return out;
}

}  // namespace

TEST_CASE("throughput: a task twice as fast on A100 ends at duration / 2 there", "[heterogeneity]") {
  auto sc = two_models();
  sc.throughput = {row("train*", {{"A100", 2.0}})};
  sc.tasks = {task("train-1", 0, 3600, 0, "a100.8x"), task("other", 0, 3600, 0, "v100.8x")};
  sim::Simulator s(sc);
  s.run();
  // train-1 on b0 at speed 2: 3600 s of reference work in 1800 s; `other` matches no row: 1.0.
  CHECK(rows(s) == Rows{"train-1,1,Succeeded,0,0,1800,a100.8x,b0,", "other,1,Succeeded,0,0,3600,v100.8x,v0,"});
  CHECK(column(s, "work_s") == Rows{"3600", "3600"});  // work stays in reference seconds
  CHECK(column(s, "speed") == Rows{"2", "1"});
}

TEST_CASE("throughput: models a row does not list run at speed 1.0, and the first matching row wins", "[heterogeneity]") {
  auto sc = two_models();
  sc.throughput = {row("train-*", {{"A100", 4.0}}), row("*", {{"V100", 0.5}, {"A100", 3.0}})};
  sc.tasks = {task("train-1", 0, 1000, 0, "v100.8x"), task("eval", 0, 1000, 0, "a100.8x")};
  // train-1: first row, V100 not listed: 1.0 -> 1000 s. eval: second row, A100 3.0 -> 333.333 s
  // rounded up to the millisecond (the work is done by then).
  CHECK(run_rows(sc) == Rows{"train-1,1,Succeeded,0,0,1000,v100.8x,v0,", "eval,1,Succeeded,0,0,333.334,a100.8x,b0,"});
}

TEST_CASE("throughput: preempted on V100 after 1000 s and resumed on A100, a task ends at the hand-computed time",
          "[heterogeneity]") {
  // blocker holds b0 until 1000 s; train (v100.8x first, then a100.8x) starts on v0 at 0. At
  // 1000 s urgent (priority 9, V100 only) preempts it; b0 is free then, so train's retry runs there.
  // Work on v0: 1000 s at speed 1 = 1000 reference s; checkpoints every 600: 600 saved, 400 lost.
  // Remaining 3600 - 600 = 3000 reference s at speed 2 = 1500 s: ends at 1000 + 1500 = 2500.
  auto sc = two_models();
  sc.throughput = {row("train", {{"V100", 1.0}, {"A100", 2.0}})};
  auto blocker = task("blocker", 0, 1000, 0, "a100.8x");
  auto train = task("train", 0, 3600, 0, "v100.8x");
  train.specs = {"v100.8x", "a100.8x"};
  train.checkpoint_interval_s = 600;
  train.fault_tolerance.max_resubmissions = 1;
  auto urgent = task("urgent", 1000, 500, 0, "v100.8x");
  urgent.priority = 9;
  sc.tasks = {blocker, train, urgent};
  sim::Simulator s(sc);
  s.run();
  CHECK(rows(s) == Rows{"blocker,1,Succeeded,0,0,1000,a100.8x,b0,",
                        "train,1,Failed,0,0,1000,v100.8x,v0,was preempted by another task: urgent (priority)",
                        "train,2,Succeeded,1000,1000,2500,a100.8x,b0,", "urgent,1,Succeeded,1000,1000,1500,v100.8x,v0,"});
  CHECK(column(s, "work_s") == Rows{"1000", "1000", "3000", "500"});
  CHECK(column(s, "lost_work_s") == Rows{"0", "400", "0", "0"});
  CHECK(column(s, "speed") == Rows{"1", "1", "2", "1"});
}

TEST_CASE("throughput: checkpoints count reference work, so preempted on A100 and resumed on V100 the task ends at the "
          "hand-computed time",
          "[heterogeneity]") {
  // train starts on b0 (a100.8x first) at 0, blocker on v0 until 500 s. At 500 s urgent (A100 only)
  // preempts train: 500 s at speed 2 = 1000 reference s, checkpoints every 600 reference s (every
  // 300 s of wall time here): 600 saved, 400 lost. Remaining 3000 reference s on v0 at speed 1:
  // ends at 500 + 3000 = 3500.
  auto sc = two_models();
  sc.throughput = {row("train", {{"A100", 2.0}})};
  auto blocker = task("blocker", 0, 500, 0, "v100.8x");
  auto train = task("train", 0, 3600, 0, "a100.8x");
  train.specs = {"a100.8x", "v100.8x"};
  train.checkpoint_interval_s = 600;
  train.fault_tolerance.max_resubmissions = 1;
  auto urgent = task("urgent", 500, 100, 0, "a100.8x");
  urgent.priority = 9;
  sc.tasks = {blocker, train, urgent};
  sim::Simulator s(sc);
  s.run();
  CHECK(rows(s) == Rows{"blocker,1,Succeeded,0,0,500,v100.8x,v0,",
                        "train,1,Failed,0,0,500,a100.8x,b0,was preempted by another task: urgent (priority)",
                        "train,2,Succeeded,500,500,3500,v100.8x,v0,", "urgent,1,Succeeded,500,500,600,a100.8x,b0,"});
  CHECK(column(s, "work_s") == Rows{"500", "1000", "3000", "100"});
  CHECK(column(s, "lost_work_s") == Rows{"0", "400", "0", "0"});
}

TEST_CASE("throughput: a gang spanning two models runs at the speed of its slowest replica", "[heterogeneity]") {
  // Two replicas, one per node (each takes a whole node): V100 at 1.5, A100 at 3. The gang runs at
  // min(1.5, 3) = 1.5: 3000 reference s in 2000 s.
  auto sc = two_models();
  sc.throughput = {row("gang", {{"V100", 1.5}, {"A100", 3.0}})};
  auto t = task("gang", 0, 3000, 1);
  t.specs.clear();
  t.replica = either_model();
  sc.tasks = {t};
  sim::Simulator s(sc);
  s.run();
  CHECK(rows(s) == Rows{"gang,1,Succeeded,0,0,2000,,v0;b0,"});
  CHECK(column(s, "speed") == Rows{"1.5"});
}

TEST_CASE("throughput: placement fastest-model puts the replica on the model the task runs fastest on", "[heterogeneity]") {
  // Both nodes fit and leave the same free capacity: best-fit takes the lowest id (v0) and runs
  // 3600 s; fastest-model takes b0 (A100, speed 2) and ends at 1800 s.
  auto sc = two_models();
  sc.throughput = {row("t", {{"A100", 2.0}})};
  auto t = task("t", 0, 3600);
  t.specs.clear();
  t.replica = either_model();
  sc.tasks = {t};
  CHECK(run_rows(sc) == Rows{"t,1,Succeeded,0,0,3600,,v0,"});
  sc.scheduler.placement = "fastest-model";
  CHECK(run_rows(sc) == Rows{"t,1,Succeeded,0,0,1800,,b0,"});
  // A task slower on A100 (0.5) is placed on V100 (1.0 as not listed).
  sc.throughput = {row("t", {{"A100", 0.5}})};
  CHECK(run_rows(sc) == Rows{"t,1,Succeeded,0,0,3600,,v0,"});
}

TEST_CASE("throughput: without the section tasks.csv has no speed column; with it, speed is the last column",
          "[heterogeneity]") {
  auto sc = two_models();
  sc.tasks = {task("t", 0, 100, 0, "a100.8x")};
  sim::Simulator plain(sc);
  plain.run();
  const std::string header_plain = plain.tasks_csv().substr(0, plain.tasks_csv().find('\n'));
  CHECK(header_plain.substr(header_plain.size() - 18) == ",wait_preemption_s");
  sc.throughput = {row("nothing-matches", {{"A100", 2.0}})};
  sim::Simulator with(sc);
  with.run();
  const std::string header_with = with.tasks_csv().substr(0, with.tasks_csv().find('\n'));
  CHECK(header_with == header_plain + ",speed");
  CHECK(rows(with) == rows(plain));  // no row matches: the same times
  CHECK(column(with, "speed") == Rows{"1"});
}

}  // namespace SCHEDSIM_UNITY_ID
