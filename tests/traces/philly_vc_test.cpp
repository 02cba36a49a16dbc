// Philly virtual clusters (docs/traces.md "Philly virtual clusters"): VC pools, quotas, job mapping.
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"
#include "trace_test_util.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace sim::io;
using trace_test::EnvGuard;
using trace_test::error_of;
using trace_test::TempDir;

namespace {

/// A scenario with a pool `philly` and one Philly trace with virtual clusters.
Scenario vc_scenario(const std::string& jobs, const std::string& machines, const std::string& vcs) {
  Scenario sc;
  PoolCfg p;
  p.name = "philly";
  sc.cluster.pools.push_back(p);
  TraceCfg t;
  t.format = "philly";
  t.path = jobs;
  t.nodes = machines;
  t.pool = "philly";
  t.virtual_clusters = vcs;
  sc.traces.push_back(t);
  return sc;
}

/// A data root with a machine list (two 8-GPU machines, a CPU-only one, two 4-GPU ones), a VC
/// file and `jobs` Philly jobs of the given shapes (one row per shape, repeated `copies` times).
struct VcData {
  TempDir dir;
  EnvGuard env{"SCHEDSIM_DATA", dir.path().string()};
  VcData(const std::string& vcs, const std::vector<std::string>& shapes, int copies = 1) {
    dir.write("philly/machines.csv", ",machineId,number of GPUs\n0,m0,8\n1,m1,0\n2,m2,8\n3,m3,4\n4,m4,4\n");
    dir.write("philly/vc.csv", vcs);
    std::string jobs = "#job id,arrival time (sec),topology,shape,size,duration (sec)\n";
    int id = 0;
    for (int c = 0; c < copies; ++c)
      for (const auto& s : shapes) {
        int size = 0;
        for (std::size_t p = 0, q; p <= s.size(); p = q + 1) {
          q = s.find('+', p);
          if (q == std::string::npos) q = s.size();
          size += std::stoi(s.substr(p, q - p));
        }
        jobs += std::to_string(id++) + ",0.0,CLOS," + s + "," + std::to_string(size) + ",10.0\n";
      }
    dir.write("philly/jobs.csv", jobs);
  }
  Scenario scenario() const { return vc_scenario("philly/jobs.csv", "philly/machines.csv", "philly/vc.csv"); }
};

const PoolCfg* pool_named(const Scenario& sc, const std::string& name) {
  for (const auto& p : sc.cluster.pools)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE("philly VCs: each VC is a dedicated pool of the next GPU machines with a reserved quota of them", "[traces][philly]") {
  VcData d("vc,node num\nalpha,2\nbeta,1\n", {"1", "4", "8"});
  Scenario sc = d.scenario();
  apply_traces(sc);
  const PoolCfg* a = pool_named(sc, "vc-alpha");
  const PoolCfg* b = pool_named(sc, "vc-beta");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->kind == "dedicated");
  REQUIRE(a->nodes.size() == 2);
  CHECK(a->nodes[0].name == "m0");  // list order, the CPU-only m1 skipped
  CHECK(a->nodes[1].name == "m2");
  REQUIRE(b->nodes.size() == 1);
  CHECK(b->nodes[0].name == "m3");
  // Left over: the CPU-only machine and m4 stay in the trace's pool.
  const PoolCfg* rest = pool_named(sc, "philly");
  REQUIRE(rest);
  REQUIRE(rest->nodes.size() == 2);
  CHECK(rest->nodes[0].name == "m1");
  CHECK(rest->nodes[1].name == "m4");
  REQUIRE(sc.quotas.size() == 2);
  CHECK(sc.quotas[0].user == "vc-alpha");
  CHECK(sc.quotas[0].resource_type == "reserved");
  CHECK(sc.quotas[0].pool == "vc-alpha");
  CHECK(sc.quotas[0].gpus == 16);
  CHECK(sc.quotas[0].vcpu == 96);         // 6 vCPU per GPU
  CHECK(sc.quotas[0].memory_gib == 1024);  // 64 GiB per GPU
  CHECK(sc.quotas[1].gpus == 4);
  for (const auto& t : sc.tasks) {
    INFO(t.name);
    CHECK(t.resource_type == "reserved");
    CHECK(t.user == t.pool);
    CHECK(t.tenant == t.pool);
    CHECK((t.pool == "vc-alpha" || t.pool == "vc-beta"));
  }
  // The 8-GPU job only fits alpha (beta's largest machine has 4 GPUs).
  CHECK(sc.tasks[2].pool == "vc-alpha");
}

TEST_CASE("philly VCs: the job-to-VC map is deterministic, weighted by node count, and only to VCs that can hold the job", "[traces][philly]") {
  VcData d("vc,node num\nbig,3\nsmall,1\n", {"1", "2", "4+4", "8+8+8+8+8"}, 500);
  // Machines: big = m0 (8), m2 (8), m3 (4); small = m4 (4).
  Scenario one = d.scenario(), two = d.scenario();
  apply_traces(one);
  apply_traces(two);
  REQUIRE(one.tasks.size() == 2000);
  std::map<std::string, int> ones;
  for (std::size_t i = 0; i < one.tasks.size(); ++i) {
    CHECK(one.tasks[i].pool == two.tasks[i].pool);
    const auto& t = one.tasks[i];
    if ((i % 4) == 0) ++ones[t.pool];                             // 1-GPU jobs: either VC
    if ((i % 4) == 2) CHECK(t.pool == "vc-big");                  // 2 x 4 GPUs: only big has 8 GPUs
    if ((i % 4) == 3) CHECK(t.pool == "vc-big");                  // 40 GPUs: no VC holds it; the largest VC
  }
  // 3:1 weights over 500 one-GPU jobs: about 375 to big.
  CHECK(ones["vc-big"] > 320);
  CHECK(ones["vc-big"] < 430);
  CHECK(ones["vc-big"] + ones["vc-small"] == 500);
}

TEST_CASE("philly VCs: bad files and impossible maps are errors naming the file", "[traces][philly][errors]") {
  SECTION("more machines asked for than the list has") {
    VcData d("vc,node num\na,3\nb,2\n", {"1"});
    Scenario sc = d.scenario();
    CHECK_THAT(error_of([&] { apply_traces(sc); }),
               Catch::Contains("vc.csv: the virtual clusters ask for 5 machines, the machine list has 4 GPU machines"));
  }
  SECTION("a duplicate VC id") {
    VcData d("vc,node num\na,1\na,1\n", {"1"});
    Scenario sc = d.scenario();
    CHECK_THAT(error_of([&] { apply_traces(sc); }), Catch::Contains("vc.csv:3:1: field 1 (vc): virtual cluster 'a' appears twice"));
  }
  SECTION("a node count that is not a positive integer") {
    VcData d("vc,node num\na,0\n", {"1"});
    Scenario sc = d.scenario();
    CHECK_THAT(error_of([&] { apply_traces(sc); }), Catch::Contains("vc.csv:2:3: field 2 (node num): must be in 1..100000, got 0"));
  }
  SECTION("a header without the columns") {
    VcData d("name,count\na,1\n", {"1"});
    Scenario sc = d.scenario();
    CHECK_THAT(error_of([&] { apply_traces(sc); }), Catch::Contains("header lacks column 'vc'"));
  }
  SECTION("a pool of that name exists already") {
    VcData d("vc,node num\na,1\n", {"1"});
    Scenario sc = d.scenario();
    PoolCfg p;
    p.name = "vc-a";
    sc.cluster.pools.push_back(p);
    CHECK_THAT(error_of([&] { apply_traces(sc); }), Catch::Contains("virtual cluster 'a': pool 'vc-a' already exists"));
  }
}

TEST_CASE("virtual_clusters: a philly trace key that needs the machine list", "[traces][philly][errors]") {
  auto errors_of = [](const std::string& trace) {
    const std::string text = R"({"schema": "schedsim/v1", "name": "x", "cluster": {"pools": [{"name": "p"}]}, "traces": [)" + trace + "]}";
    ParseResult r = parse_scenario_text(text, "s.json");
    std::string all;
    for (const auto& d : r.diagnostics) all += d.str() + "\n";
    return all;
  };
  CHECK_THAT(errors_of(R"({"format": "swf", "path": "a.swf", "virtual_clusters": "vc.csv"})"),
             Catch::Contains("s.json: traces[0].virtual_clusters: \"vc.csv\": only philly traces have virtual clusters"));
  CHECK_THAT(errors_of(R"({"format": "philly", "path": "j.csv", "virtual_clusters": "vc.csv"})"),
             Catch::Contains("traces[0].virtual_clusters: \"vc.csv\": needs the trace's machine list"));
  CHECK(errors_of(R"({"format": "philly", "path": "j.csv", "nodes": "m.csv", "virtual_clusters": "vc.csv"})").find("virtual_clusters") ==
        std::string::npos);
}

TEST_CASE("philly VCs on the real Helios VC file: 11 VC pools, every job reserved in one", "[traces][philly][data]") {
  const std::string root = data_root();
  if (!std::filesystem::exists(root + "/philly/philly_vc_node_num.HeliosArtifact.csv") ||
      !std::filesystem::exists(root + "/philly/philly_trace.RFold-derived.csv")) {
    WARN("Philly data not found under " << root << ": skipped (set SCHEDSIM_DATA)");
    return;
  }
  Scenario sc = vc_scenario("philly/philly_trace.RFold-derived.csv", "philly/revised_machine_list.csv",
                            "philly/philly_vc_node_num.HeliosArtifact.csv");
  apply_traces(sc);
  CHECK(sc.quotas.size() == 11);
  std::size_t vc_nodes = 0;
  for (const auto& pool : sc.cluster.pools)
    if (pool.name.rfind("vc-", 0) == 0) vc_nodes += pool.nodes.size();
  CHECK(vc_nodes == 352);
  CHECK(sc.tasks.size() == 111549);
  for (const auto& task : sc.tasks) {
    if (task.resource_type != "reserved" || task.pool.str().rfind("vc-", 0) != 0) FAIL(task.name << " not mapped");
  }
}

}  // namespace SCHEDSIM_UNITY_ID
