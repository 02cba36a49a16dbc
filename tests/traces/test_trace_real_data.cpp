// Integration: the real public traces, when present under data_root() (skipped with a WARN
// otherwise). Set SCHEDSIM_DATA to point elsewhere.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>

#include "sim/io/traces.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace sim::io;

namespace {

bool have(const std::string& rel) {
  const auto p = std::filesystem::path(data_root()) / rel;
  if (std::filesystem::is_regular_file(p)) return true;
  WARN("real trace " << p.string() << " not found: test skipped (set SCHEDSIM_DATA)");
  return false;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("real openb default trace: 8,152 pods on 1,213 GPU nodes / 6,212 GPUs", "[traces][real]") {
  if (!have("openb/openb_pod_list_default.csv") || !have("openb/openb_node_list_gpu_node.csv")) return;
  TraceCfg cfg;
  cfg.format = "openb";
  cfg.path = "openb/openb_pod_list_default.csv";
  cfg.nodes = "openb/openb_node_list_gpu_node.csv";
  const auto t0 = std::chrono::steady_clock::now();
  const auto load = load_trace(cfg, {});
  INFO("openb default load: " << seconds_since(t0) << " s");
  CHECK(load.skipped_rows == 0);
  CHECK(load.tasks.size() == 8152);
  CHECK(load.nodes.size() == 1213);
  long gpus = 0;
  for (const auto& n : load.nodes) gpus += n.gpus;
  CHECK(gpus == 6212);
  std::size_t sharing = 0, multi = 0, cpu_only = 0, constrained = 0;
  for (const auto& t : load.tasks) {
    REQUIRE(t.replica.has_value());
    REQUIRE(t.duration_s > 0);
    if (t.replica->gpus == 1 && t.replica->gpu_milli < 1000) ++sharing;
    if (t.replica->gpus > 1) ++multi;
    if (t.replica->gpus == 0) ++cpu_only;
    if (!t.replica->gpu_models.empty()) ++constrained;
  }
  CHECK(sharing > 0);
  CHECK(multi > 0);
  CHECK(cpu_only > 0);
  CHECK(constrained == 0);  // the default list has no gpu_spec; see gpuspec33 below
}

TEST_CASE("real openb variants load (multigpu: 5 columns, gpuspec: constraints)", "[traces][real]") {
  for (const char* rel : {"openb/openb_pod_list_multigpu50.csv", "openb/openb_pod_list_gpuspec33.csv",
                          "openb/openb_pod_list_cpu250.csv", "openb/openb_node_list_all_node.csv"}) {
    if (!have(rel)) return;
  }
  TraceCfg cfg;
  cfg.format = "openb";
  cfg.path = "openb/openb_pod_list_multigpu50.csv";
  CHECK(load_trace(cfg, {}).tasks.size() > 8000);
  cfg.path = "openb/openb_pod_list_gpuspec33.csv";
  cfg.nodes = "openb/openb_node_list_all_node.csv";
  auto load = load_trace(cfg, {});
  CHECK(load.tasks.size() == 8152);
  CHECK(load.nodes.size() == 1523);
  std::size_t constrained = 0;
  for (const auto& t : load.tasks)
    if (!t.replica->gpu_models.empty()) ++constrained;
  CHECK(constrained > 0);
}

TEST_CASE("real Philly trace: 111,549 jobs", "[traces][real]") {
  if (!have("philly/philly_trace.RFold-derived.csv") || !have("philly/revised_machine_list.csv")) return;
  TraceCfg cfg;
  cfg.format = "philly";
  cfg.path = "philly/philly_trace.RFold-derived.csv";
  cfg.nodes = "philly/revised_machine_list.csv";
  const auto t0 = std::chrono::steady_clock::now();
  const auto load = load_trace(cfg, {});
  INFO("philly load: " << seconds_since(t0) << " s");
  CHECK(load.skipped_rows == 0);
  CHECK(load.tasks.size() == 111549);
  CHECK(load.nodes.size() == 552);
  long gpus = 0;
  for (const auto& n : load.nodes) gpus += n.gpus;
  CHECK(gpus == 3205);
  std::size_t gangs = 0;
  for (const auto& t : load.tasks)
    if (t.workers > 0) ++gangs;
  CHECK(gangs == 111549 - 96662 - 4363 - 4353 - 2475);  // all but single-server shapes 1, 4, 8, 2

  cfg.nodes = "philly/cluster_machine_list";
  if (have(cfg.nodes)) {
    auto official = load_trace(cfg, {});
    long g2 = 0;
    for (const auto& n : official.nodes) g2 += n.gpus;
    CHECK(g2 == 2490);
  }
}

TEST_CASE("real SWF logs (gzip): KTH-SP2 loads; NASA-iPSC's jobs of run time 0 are kept as 1 ms jobs", "[traces][real]") {
  if (!have("swf/KTH-SP2-1996-2.1-cln.swf.gz") || !have("swf/NASA-iPSC-1993-3.1-cln.swf.gz")) return;
  TraceCfg cfg;
  cfg.format = "swf";
  cfg.path = "swf/KTH-SP2-1996-2.1-cln.swf.gz";
  auto load = load_trace(cfg, {});
  CHECK(load.tasks.size() == 27992);
  CHECK(load.nodes.size() == 100);  // MaxProcs 100, 1 proc per node
  cfg.path = "swf/NASA-iPSC-1993-3.1-cln.swf.gz";
  load = load_trace(cfg, {});
  CHECK(load.skipped_rows == 0);
  CHECK(load.tasks.size() == 18239);
  std::size_t instant = 0;
  for (const auto& t : load.tasks) instant += t.duration_s == 0.001;
  CHECK(instant == 173);
}

}  // namespace SCHEDSIM_UNITY_ID
