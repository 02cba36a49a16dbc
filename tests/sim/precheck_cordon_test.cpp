// A node whose resource precheck failed is cordoned for scheduler.precheck_cordon_s (default
// 600 s; docs/outputs.md "Timing semantics"): no new replica goes there meanwhile, so the
// retry lands on a healthy node; the cordon shows in the attempt's reason and in events.jsonl.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "builders.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace simtest;
using Rows = std::vector<std::string>;
namespace fs = std::filesystem;

namespace {

/// Pool p: node bad-0 (every precheck on it fails) then node good-0; task a, 1 x 8 GPU, 100 s,
/// precheck_s 60, max_resubmissions 2. Best fit ties go to the first node: bad-0.
sim::io::Scenario bad_and_good() {
  auto sc = cluster(1);
  auto& groups = sc.cluster.pools[0].node_groups;
  groups[0].prefix = "bad-";
  groups[0].unhealthy_prob = 1;
  groups.push_back(groups[0]);
  groups[1].prefix = "good-";
  groups[1].unhealthy_prob = 0;
  auto t = task("a", 0, 100);
  t.precheck_s = 60;
  t.fault_tolerance.max_resubmissions = 2;
  sc.tasks = {t};
  return sc;
}

/// Every record of events.jsonl.
std::vector<nlohmann::json> event_records(const sim::Simulator& s) {
  fs::path d = testutil::fresh_dir("precheck-cordon");
  fs::create_directories(d);
  s.write_outputs(d.string());
  std::vector<nlohmann::json> out;
  std::istringstream in(testutil::slurp(d / "events.jsonl"));
  for (std::string l; std::getline(in, l);) out.push_back(nlohmann::json::parse(l));
  fs::remove_all(d);
  return out;
}

/// The node records of events.jsonl.
std::vector<nlohmann::json> node_records(const sim::Simulator& s) {
  std::vector<nlohmann::json> out;
  for (auto& j : event_records(s))
    if (j.contains("node")) out.push_back(j);
  return out;
}

}  // namespace

TEST_CASE("a node that failed its precheck is cordoned: the retry goes to the healthy node and succeeds") {
  auto sc = bad_and_good();
  REQUIRE(sc.scheduler.precheck_cordon_s == 600);  // the documented default
  sim::Simulator s(sc);
  s.run();
  REQUIRE(rows(s) == Rows{
                         "a,1,Failed,0,0,60,a100.8x,bad-0,precheck_failure: node bad-0 is unhealthy (cordoned until 660 s)",
                         "a,2,Succeeded,60,60,220,a100.8x,good-0,",
                     });
  // The run ends with the last attempt: the cordon's end at 660 s is not reached.
  auto nodes = node_records(s);
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0].dump() == R"({"event":"node_cordoned","node":"bad-0","source":"precheck_failure","time_s":60,"until_s":660})");
  // Right before the Failed record of the attempt whose precheck failed.
  auto all = event_records(s);
  auto at = std::find(all.begin(), all.end(), nodes[0]);
  REQUIRE(at != all.end());
  REQUIRE(at + 1 != all.end());
  CHECK((at + 1)->dump() ==
        R"j({"attempt":1,"from":"Prechecking","reason":"precheck_failure: node bad-0 is unhealthy (cordoned until 660 s)","task":"a","time_s":60,"to":"Failed"})j");
}

TEST_CASE("a cordon ends after precheck_cordon_s: the node takes replicas again, with no other event") {
  // One unhealthy node only: the retry waits for the cordon's end at 160 s, fails its precheck
  // again at 220 s and cordons the node until 320 s; the third attempt then waits for 320 s.
  auto sc = bad_and_good();
  sc.cluster.pools[0].node_groups.pop_back();
  sc.scheduler.precheck_cordon_s = 100;
  sim::Simulator s(sc);
  s.run();
  REQUIRE(rows(s) == Rows{
                         "a,1,Failed,0,0,60,a100.8x,bad-0,precheck_failure: node bad-0 is unhealthy (cordoned until 160 s)",
                         "a,2,Failed,60,160,220,a100.8x,bad-0,precheck_failure: node bad-0 is unhealthy (cordoned until 320 s)",
                         "a,3,Failed,220,320,380,a100.8x,bad-0,precheck_failure: node bad-0 is unhealthy (cordoned until 480 s)",
                     });
  auto nodes = node_records(s);
  REQUIRE(nodes.size() == 5);
  CHECK(nodes[0].dump() == R"({"event":"node_cordoned","node":"bad-0","source":"precheck_failure","time_s":60,"until_s":160})");
  CHECK(nodes[1].dump() == R"({"event":"node_uncordoned","node":"bad-0","source":"precheck_failure","time_s":160})");
  CHECK(nodes[2].dump() == R"({"event":"node_cordoned","node":"bad-0","source":"precheck_failure","time_s":220,"until_s":320})");
  CHECK(nodes[3].dump() == R"({"event":"node_uncordoned","node":"bad-0","source":"precheck_failure","time_s":320})");
  CHECK(nodes[4].dump() == R"({"event":"node_cordoned","node":"bad-0","source":"precheck_failure","time_s":380,"until_s":480})");
}

TEST_CASE("a cordon keeps new replicas off the node but lets what runs there continue") {
  // 1-GPU tasks: a (precheck) and b (none) both land on bad-0 at 0 s (best fit); a's precheck
  // fails at 60 s, b runs on. d (at 100 s) would go to bad-0 (a tie on free GPUs, the first
  // node) but bad-0 is cordoned until 660 s: good-0.
  auto sc = bad_and_good();
  sc.tasks[0].specs = {"a100.1x"};
  auto b = task("b", 0, 1000, 0, "a100.1x");
  auto d = task("d", 100, 50, 0, "a100.1x");
  sc.tasks.push_back(b);
  sc.tasks.push_back(d);
  sim::Simulator s(sc);
  s.run();
  REQUIRE(rows(s) == Rows{
                         "a,1,Failed,0,0,60,a100.1x,bad-0,precheck_failure: node bad-0 is unhealthy (cordoned until 660 s)",
                         "a,2,Succeeded,60,60,220,a100.1x,good-0,",
                         "b,1,Succeeded,0,0,1000,a100.1x,bad-0,",
                         "d,1,Succeeded,100,100,150,a100.1x,good-0,",
                     });
}

TEST_CASE("precheck_cordon_s 0 turns cordons off: the retry may land on the same node") {
  auto sc = bad_and_good();
  sc.scheduler.precheck_cordon_s = 0;
  sim::Simulator s(sc);
  s.run();
  REQUIRE(rows(s) == Rows{
                         "a,1,Failed,0,0,60,a100.8x,bad-0,precheck_failure: node bad-0 is unhealthy",
                         "a,2,Failed,60,60,120,a100.8x,bad-0,precheck_failure: node bad-0 is unhealthy",
                         "a,3,Failed,120,120,180,a100.8x,bad-0,precheck_failure: node bad-0 is unhealthy",
                     });
  CHECK(node_records(s).empty());
}

}  // namespace SCHEDSIM_UNITY_ID
