// Trace readers on small files written by the tests (docs/traces.md).
#include <catch2/catch.hpp>

#include <functional>

#include "sim/io/traces.hpp"
#include "trace_test_util.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace sim::io;
using trace_test::EnvGuard;
using trace_test::error_of;
using trace_test::TempDir;

namespace {

const char* kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
    "scheduled_time\n";

/// "PATH:LINE:COL:" for a field that starts at `needle` inside `line_text`.
std::string loc(const std::string& path, int line, const std::string& line_text, const std::string& needle) {
  return path + ":" + std::to_string(line) + ":" + std::to_string(line_text.find(needle) + 1) + ":";
}

TraceCfg cfg_of(const std::string& format, const std::string& path, const std::string& nodes = "") {
  TraceCfg c;
  c.format = format;
  c.path = path;
  c.nodes = nodes;
  return c;
}

}  // namespace

// ------------------------------------------------------------------------------------ openb

TEST_CASE("openb nodes: GPU and CPU-only nodes, units", "[traces][openb]") {
  TempDir dir;
  auto path = dir.write("nodes.csv",
                        "sn,cpu_milli,memory_mib,gpu,model\n"
                        "openb-node-0000,64000,262144,2,P100\n"
                        "openb-node-0001,32000,131072,0,\n"
                        "OpenB_Node 2,96000,786432,8,V100M32\r\n"
                        "openb-node-0003,1500,512,0,T4\n");
  auto nodes = read_openb_nodes(path, {});
  REQUIRE(nodes.size() == 4);
  CHECK(nodes[0].name == "openb-node-0000");
  CHECK(nodes[0].gpus == 2);
  CHECK(nodes[0].gpu_model == "P100");
  CHECK(nodes[0].vcpu == 64.0);
  CHECK(nodes[0].memory_gib == 256.0);
  CHECK(nodes[1].gpus == 0);
  CHECK(nodes[1].gpu_model.empty());
  CHECK(nodes[1].memory_gib == 128.0);
  CHECK(nodes[2].name == "openb-node-2");  // sanitised; CRLF accepted
  CHECK(nodes[2].gpu_model == "V100M32");
  CHECK(nodes[3].gpus == 0);  // gpu == 0: CPU-only even with a model
  CHECK(nodes[3].gpu_model.empty());
  CHECK(nodes[3].vcpu == 1.5);
  CHECK(nodes[3].memory_gib == 0.5);
}

TEST_CASE("openb pods: sharing, multi-GPU, CPU-only, gpu_spec, qos and times", "[traces][openb]") {
  TempDir dir;
  auto path = dir.write("pods.csv", std::string(kPodHeader) +
                                        "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,1000,0\n"
                                        "openb-pod-0001,6000,12288,1,460,,BE,Running,100,400,100\n"
                                        "openb-pod-0002,32000,65536,4,1000,V100M16|V100M32|V100M32,Burstable,Running,200,1200,200\n"
                                        "openb-pod-0003,8000,30517,0,0,,LS,Running,300,360,301\n"
                                        "openb-pod-0004,8000,30517,1,230,G2,BE,Pending,500,500,\n"
                                        "openb-pod-0005,4000,8192,1,500,nan,Guaranteed,Failed,600,,\n");
  auto tasks = read_openb_pods(path, cfg_of("openb", path), {});
  REQUIRE(tasks.size() == 6);
  for (const auto& t : tasks) {
    CHECK(t.user == "openb");
    CHECK(t.type == "PyTorchJob");
    CHECK(t.workers == 0);
    CHECK(t.specs.empty());
    REQUIRE(t.replica.has_value());
  }
  const auto& full = tasks[0];
  CHECK(full.name == "openb-pod-0000");
  CHECK(full.replica->gpus == 1);
  CHECK(full.replica->gpu_milli == 1000);
  CHECK(full.replica->vcpu == 12.0);
  CHECK(full.replica->memory_gib == 16.0);
  CHECK(full.replica->gpu_models.empty());
  CHECK(full.submit_s == 0.0);
  CHECK(full.duration_s == 1000.0);
  CHECK(full.resource_type == "pay_as_you_go");

  const auto& share = tasks[1];
  CHECK(share.replica->gpus == 1);
  CHECK(share.replica->gpu_milli == 460);
  CHECK(share.resource_type == "spot");  // qos BE
  CHECK(share.submit_s == 100.0);
  CHECK(share.duration_s == 300.0);

  const auto& multi = tasks[2];
  CHECK(multi.replica->gpus == 4);
  CHECK(multi.replica->gpu_milli == 1000);
  CHECK(multi.replica->gpu_models == std::vector<std::string>{"V100M16", "V100M32"});  // deduplicated
  CHECK(multi.resource_type == "pay_as_you_go");

  const auto& cpu = tasks[3];
  CHECK(cpu.replica->gpus == 0);
  CHECK(cpu.replica->gpu_milli == 1000);
  CHECK(cpu.replica->vcpu == 8.0);
  CHECK(cpu.replica->memory_gib == Approx(30517.0 / 1024.0));
  CHECK(cpu.duration_s == 60.0);

  CHECK(tasks[4].replica->gpu_models == std::vector<std::string>{"G2"});
  CHECK(tasks[4].duration_s == 1.0);  // deletion == creation: documented 1 s
  CHECK(tasks[5].replica->gpu_models.empty());  // "nan" = no constraint
  CHECK(tasks[5].submit_s == 600.0);
  CHECK(tasks[5].duration_s == 1.0);  // no deletion time
}

TEST_CASE("openb multigpu files have only five columns", "[traces][openb]") {
  TempDir dir;
  auto path = dir.write("multigpu.csv",
                        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                        "openb-pod-0000,12000,16384,1,1000\n"
                        "openb-pod-0001,48000,200000,8,1000\n");
  auto tasks = read_openb_pods(path, cfg_of("openb", path), {});
  REQUIRE(tasks.size() == 2);
  CHECK(tasks[1].replica->gpus == 8);
  CHECK(tasks[1].submit_s == 0.0);
  CHECK(tasks[1].duration_s == 1.0);
  CHECK(tasks[1].resource_type == "pay_as_you_go");
}

TEST_CASE("openb: limit, time_scale, resource_type override", "[traces][openb]") {
  TempDir dir;
  auto path = dir.write("pods.csv", std::string(kPodHeader) +
                                        "a,1000,1024,1,500,,BE,Running,10,20,10\n"
                                        "b,1000,1024,1,500,,LS,Running,30,50,30\n"
                                        "c,1000,1024,1,500,,LS,Running,40,90,40\n");
  auto cfg = cfg_of("openb", path);
  cfg.limit = 2;
  cfg.time_scale = 0.5;
  cfg.resource_type = "reserved";
  cfg.pool = "p1";
  auto tasks = read_openb_pods(path, cfg, {});
  REQUIRE(tasks.size() == 2);
  CHECK(tasks[0].resource_type == "reserved");  // not pay_as_you_go: BE is not mapped to spot
  CHECK(tasks[0].pool == "p1");
  CHECK(tasks[0].submit_s == 5.0);
  CHECK(tasks[0].duration_s == 5.0);
  CHECK(tasks[1].submit_s == 15.0);
  CHECK(tasks[1].duration_s == 10.0);

  cfg.time_scale = 0;
  CHECK_THROWS_AS(load_trace(cfg, {}), TraceError);
}

TEST_CASE("openb: a GPU share above 1000 milli is clipped to one whole GPU, as the FGD reference does", "[traces][openb]") {
  TempDir dir;
  auto path = dir.write("pods.csv", std::string(kPodHeader) +
                                        "openb-pod-0000,12000,16384,1,1460,,LS,Running,0,10,0\n"
                                        "openb-pod-0001,12000,16384,1,1000,,LS,Running,0,10,0\n"
                                        "openb-pod-0002,12000,16384,1,999,,LS,Running,0,10,0\n");
  auto tasks = read_openb_pods(path, cfg_of("openb", path), {});
  REQUIRE(tasks.size() == 3);
  CHECK(tasks[0].replica->gpu_milli == 1000);
  CHECK(tasks[1].replica->gpu_milli == 1000);
  CHECK(tasks[2].replica->gpu_milli == 999);
}

TEST_CASE("openb malformed rows name file, line and column", "[traces][openb][errors]") {
  TempDir dir;
  const std::string bad_gpu = "openb-pod-0001,6000,12288,x,460,,LS,Running,0,10,0";
  const std::string short_row = "openb-pod-0002,6000,12288,1,460";
  const std::string bad_milli = "openb-pod-0003,6000,12288,1,-5,,LS,Running,0,10,0";
  auto path = dir.write("pods.csv", std::string(kPodHeader) +
                                        "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,10,0\n" +
                                        bad_gpu + "\n" + short_row + "\n" + bad_milli + "\n" +
                                        "openb-pod-0004,12000,16384,1,1000,,LS,Running,0,10,0\n");
  const auto cfg = cfg_of("openb", path);
  auto msg = error_of([&] { read_openb_pods(path, cfg, {}); });
  CHECK(msg == loc(path, 3, bad_gpu, "x,460") + " field 4 (num_gpu): expected an integer, got 'x'");

  std::size_t skipped = 0;
  auto tasks = read_openb_pods(path, cfg, TraceOptions{true}, &skipped);
  CHECK(skipped == 3);
  REQUIRE(tasks.size() == 2);
  CHECK(tasks[1].name == "openb-pod-0004");

  // each bad row on its own
  auto p2 = dir.write("short.csv", std::string(kPodHeader) + short_row + "\n");
  CHECK_THAT(error_of([&] { read_openb_pods(p2, cfg_of("openb", p2), {}); }),
             Catch::StartsWith(p2 + ":2:" + std::to_string(short_row.size() + 1) +
                               ": expected 11 fields, got 5"));
  auto p3 = dir.write("milli.csv", std::string(kPodHeader) + bad_milli + "\n");
  CHECK_THAT(error_of([&] { read_openb_pods(p3, cfg_of("openb", p3), {}); }),
             Catch::StartsWith(loc(p3, 2, bad_milli, "-5")) && Catch::Contains("(gpu_milli): must be >= 0, got -5"));

  // a bad header is fatal even with skip_bad_rows
  auto p4 = dir.write("hdr.csv", "nom,cpu\nx,1\n");
  CHECK_THAT(error_of([&] { read_openb_pods(p4, cfg_of("openb", p4), TraceOptions{true}); }),
             Catch::StartsWith(p4 + ":1:1: header lacks column 'name'"));

  // a GPU node without a model
  auto p5 = dir.write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,2,\n");
  CHECK_THAT(error_of([&] { read_openb_nodes(p5, {}); }),
             Catch::StartsWith(p5 + ":2:") && Catch::Contains("field 5 (model)"));
}

// ----------------------------------------------------------------------------------- philly

TEST_CASE("philly jobs: gangs from the shape", "[traces][philly]") {
  TempDir dir;
  auto path = dir.write("jobs.csv",
                        "#job id,arrival time (sec),topology,shape,size,duration (sec)\n"
                        "0,0.0,CLOS,1,1,3613033.0\n"
                        "1,266563.0,CLOS,8+8,16,120.5\n"
                        "2,266564.0,CLOS,2+2+2+2,8,60\n"
                        "3,266570.0,CLOS,4,4,10\n"
                        "4,266571.0,CLOS,1,1,0.0\n");
  auto tasks = read_philly_jobs(path, cfg_of("philly", path), {});
  REQUIRE(tasks.size() == 5);
  CHECK(tasks[4].duration_s == 1.0);  // 0.0 s (below the trace's resolution): 1 s
  CHECK(tasks[0].name == "philly-0");
  CHECK(tasks[0].user == "philly");
  CHECK(tasks[0].workers == 0);
  CHECK(tasks[0].replica->gpus == 1);
  CHECK(tasks[0].replica->vcpu == 6.0);
  CHECK(tasks[0].replica->memory_gib == 64.0);
  CHECK(tasks[0].duration_s == 3613033.0);

  const auto& gang = tasks[1];
  CHECK(gang.type == "PyTorchJob");
  CHECK(gang.workers == 1);  // 1 master + 1 worker = 2 replicas
  CHECK(gang.replica->gpus == 8);
  CHECK(gang.replica->gpu_milli == 1000);
  CHECK(gang.replica->vcpu == 48.0);
  CHECK(gang.replica->memory_gib == 512.0);
  CHECK(gang.submit_s == 266563.0);
  CHECK(gang.duration_s == 120.5);
  CHECK(gang.resource_type == "pay_as_you_go");

  CHECK(tasks[2].workers == 3);
  CHECK(tasks[2].replica->gpus == 2);
  CHECK(tasks[3].workers == 0);
  CHECK(tasks[3].replica->gpus == 4);

  auto cfg = cfg_of("philly", path);
  cfg.limit = 2;
  cfg.time_scale = 2;
  tasks = read_philly_jobs(path, cfg, {});
  REQUIRE(tasks.size() == 2);
  CHECK(tasks[1].submit_s == 533126.0);
  CHECK(tasks[1].duration_s == 241.0);
}

TEST_CASE("philly gpus_per_replica splits every job into replicas of that many GPUs", "[traces][philly]") {
  TempDir dir;
  auto path = dir.write("jobs.csv",
                        "1,0,CLOS,8+8,16,100\n"
                        "2,1,CLOS,1,1,100\n"
                        "3,2,CLOS,4+2,6,100\n");
  auto cfg = cfg_of("philly", path);
  cfg.gpus_per_replica = 1;
  auto tasks = read_philly_jobs(path, cfg, {});
  REQUIRE(tasks.size() == 3);
  CHECK(tasks[0].workers == 15);  // 16 one-GPU replicas
  CHECK(tasks[0].replica->gpus == 1);
  CHECK(tasks[0].replica->vcpu == 6.0);
  CHECK(tasks[0].replica->memory_gib == 64.0);
  CHECK(tasks[1].workers == 0);
  CHECK(tasks[2].workers == 5);  // 6 GPUs, whatever the unequal split
  cfg.gpus_per_replica = 4;
  tasks = read_philly_jobs(path, cfg, {});
  CHECK(tasks[0].workers == 3);  // 16 GPUs: 4 replicas of 4
  CHECK(tasks[0].replica->gpus == 4);
  CHECK(tasks[1].replica->gpus == 1);  // min(size, 4)
  CHECK(tasks[2].workers == 1);        // ceil(6 / 4) = 2 replicas of 4 (the last rounded up)
  CHECK(tasks[2].replica->gpus == 4);
}

TEST_CASE("philly unequal parts: each replica asks for the largest part", "[traces][philly]") {
  TempDir dir;
  auto path = dir.write("jobs.csv", "7,5,CLOS,4+2,6,100\n");
  auto tasks = read_philly_jobs(path, cfg_of("philly", path), {});
  REQUIRE(tasks.size() == 1);
  CHECK(tasks[0].workers == 1);
  CHECK(tasks[0].replica->gpus == 4);
}

TEST_CASE("philly malformed rows", "[traces][philly][errors]") {
  TempDir dir;
  const std::string mismatch = "1,10.0,CLOS,8+8,12,100";
  const std::string zero = "2,10.0,CLOS,1,1,-5";
  const std::string bad_shape = "3,10.0,CLOS,8+a,16,5";
  auto path = dir.write("jobs.csv", "#job id,arrival time (sec),topology,shape,size,duration (sec)\n"
                                    "0,0.0,CLOS,1,1,5\n" +
                                        mismatch + "\n" + zero + "\n" + bad_shape + "\n" +
                                        "4,11.0,CLOS,2,2,5\n");
  CHECK_THAT(error_of([&] { read_philly_jobs(path, cfg_of("philly", path), {}); }),
             Catch::StartsWith(loc(path, 3, mismatch, "12,") + " field 5 (size): 12 GPUs but the shape"));
  auto p2 = dir.write("zero.csv", zero + "\n");
  CHECK_THAT(error_of([&] { read_philly_jobs(p2, cfg_of("philly", p2), {}); }),
             Catch::StartsWith(loc(p2, 1, zero, "-5") + " field 6 (duration (sec)): must be >= 0"));
  auto p3 = dir.write("shape.csv", bad_shape + "\n");
  CHECK_THAT(error_of([&] { read_philly_jobs(p3, cfg_of("philly", p3), {}); }),
             Catch::StartsWith(loc(p3, 1, bad_shape, "a,16")) && Catch::Contains("field 4 (shape)"));

  auto p4 = dir.write("inf.csv", "5,nan,CLOS,1,1,inf\n");
  CHECK_THAT(error_of([&] { read_philly_jobs(p4, cfg_of("philly", p4), {}); }),
             Catch::StartsWith(p4 + ":1:3: field 2 (arrival time (sec)): expected a number, got 'nan'"));

  std::size_t skipped = 0;
  auto tasks = read_philly_jobs(path, cfg_of("philly", path), TraceOptions{true}, &skipped);
  CHECK(skipped == 3);
  CHECK(tasks.size() == 2);
}

TEST_CASE("philly machine lists: revised and official", "[traces][philly]") {
  TempDir dir;
  auto revised = dir.write("revised_machine_list.csv", ",machineId,number of GPUs\n0,m0,8\n1,m1,4\n2,m7,0\n");
  auto nodes = read_philly_machines(revised, {});
  REQUIRE(nodes.size() == 3);
  CHECK(nodes[0].name == "m0");
  CHECK(nodes[0].gpus == 8);
  CHECK(nodes[0].gpu_model == "PhillyGPU");
  CHECK(nodes[0].vcpu == 48.0);
  CHECK(nodes[0].memory_gib == 512.0);
  CHECK(nodes[1].vcpu == 24.0);
  CHECK(nodes[2].gpus == 0);
  CHECK(nodes[2].gpu_model.empty());
  CHECK(nodes[2].vcpu == 48.0);

  auto official = dir.write("cluster_machine_list", "machineId, number of GPUs, single GPU mem\nm0,2, 12GB\nm9,8, 24GB\n");
  nodes = read_philly_machines(official, {});
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].gpu_model == "PhillyGPU-12GB");
  CHECK(nodes[1].gpus == 8);
  CHECK(nodes[1].gpu_model == "PhillyGPU-24GB");

  auto bad = dir.write("bad.csv", ",machineId,number of GPUs\n0,m0,eight\n");
  CHECK_THAT(error_of([&] { read_philly_machines(bad, {}); }),
             Catch::StartsWith(bad + ":2:6: field 3 (number of GPUs)"));
}

// -------------------------------------------------------------------------------------- swf

namespace {
const std::string kSwf =
    "; Version: 2.2\n"
    "; MaxNodes: 4\n"
    "; MaxProcs: 8\n"
    ";\n"
    "    1        0   10   3600    6     -1    -1    6   7200    -1  1  12  1  -1 -1 -1 -1 -1\n"
    "    2       50   -1    100    1     -1    -1   -1     -1    -1  1  -1  1  -1 -1 -1 -1 -1\n"
    "\n"
    "    3       60    5   42.5    3     -1    -1    2    600    -1  1  13  1  -1 -1 -1 -1 -1\n";
}

TEST_CASE("swf plain and gzip: processors to replicas, estimates, header cluster", "[traces][swf]") {
  TempDir dir;
  auto plain = dir.write("log.swf", kSwf);
  auto gz = dir.write_gz("log.swf.gz", kSwf);
  for (const auto& path : {plain, gz}) {
    INFO(path);
    auto cfg = cfg_of("swf", path);
    cfg.procs_per_node = 4;
    auto load = read_swf(path, cfg, {});
    CHECK(load.skipped_rows == 0);
    REQUIRE(load.nodes.size() == 2);  // MaxProcs 8 / 4 per node
    CHECK(load.nodes[0].name == "swf-node-0");
    CHECK(load.nodes[1].vcpu == 4.0);
    CHECK(load.nodes[1].gpus == 0);
    CHECK(load.nodes[1].memory_gib == 16.0);
    REQUIRE(load.tasks.size() == 3);
    const auto& a = load.tasks[0];
    CHECK(a.name == "swf-1");
    CHECK(a.user == "swf-u12");
    CHECK(a.workers == 1);  // 6 procs / 4 per node -> 2 replicas
    CHECK(a.replica->gpus == 0);
    CHECK(a.replica->vcpu == 4.0);
    CHECK(a.replica->memory_gib == 16.0);
    CHECK(a.submit_s == 0.0);
    CHECK(a.duration_s == 3600.0);
    REQUIRE(a.runtime_estimate_s.has_value());
    CHECK(*a.runtime_estimate_s == 7200.0);
    const auto& b = load.tasks[1];
    CHECK(b.user == "swf");
    CHECK(b.workers == 0);  // requested unknown: allocated 1
    CHECK(b.replica->vcpu == 1.0);
    CHECK_FALSE(b.runtime_estimate_s.has_value());
    const auto& c = load.tasks[2];
    CHECK(c.replica->vcpu == 2.0);  // requested (2) wins over allocated (3)
    CHECK(c.duration_s == 42.5);
    CHECK(*c.runtime_estimate_s == 600.0);
  }
  auto cfg = cfg_of("swf", plain);
  cfg.nodes = "none";
  cfg.limit = 1;
  cfg.time_scale = 0.5;
  auto load = read_swf(plain, cfg, {});
  CHECK(load.nodes.empty());
  REQUIRE(load.tasks.size() == 1);
  CHECK(load.tasks[0].workers == 5);  // default procs_per_node 1
  CHECK(load.tasks[0].duration_s == 1800.0);
  CHECK(*load.tasks[0].runtime_estimate_s == 3600.0);
}

TEST_CASE("swf malformed rows and skip_bad_rows", "[traces][swf][errors]") {
  TempDir dir;
  const std::string bad_run = "    4       70   -1     -5    2     -1    -1    2    600    -1  0  13  1  -1 -1 -1 -1 -1";
  const std::string short_row = "    5       80   -1     10    2";
  const std::string no_procs = "    6       90   -1     10   -1     -1    -1   -1    600    -1  0  13  1  -1 -1 -1 -1 -1";
  auto path = dir.write_gz("bad.swf.gz", kSwf + bad_run + "\n" + short_row + "\n" + no_procs + "\n");
  auto cfg = cfg_of("swf", path);
  CHECK_THAT(error_of([&] { read_swf(path, cfg, {}); }),
             Catch::StartsWith(path + ":9:" + std::to_string(bad_run.find("-5") + 1) +
                               ": field 4 (run time): must be >= 0"));
  auto load = read_swf(path, cfg, TraceOptions{true});
  CHECK(load.skipped_rows == 3);
  CHECK(load.tasks.size() == 3);

  auto p2 = dir.write("short.swf", short_row + "\n");
  CHECK_THAT(error_of([&] { read_swf(p2, cfg_of("swf", p2), {}); }),
             Catch::StartsWith(p2 + ":1:" + std::to_string(short_row.size() + 1) +
                               ": expected 18 whitespace-separated fields, got 5"));
  auto p3 = dir.write("noprocs.swf", no_procs + "\n");
  CHECK_THAT(error_of([&] { read_swf(p3, cfg_of("swf", p3), {}); }),
             Catch::StartsWith(p3 + ":1:") && Catch::Contains("field 8 (requested processors)"));

  auto p4 = dir.write("notgz.swf.gz", std::string("\x1f\x8b", 2) + "garbage");
  CHECK_THAT(error_of([&] { read_swf(p4, cfg_of("swf", p4), TraceOptions{true}); }),
             Catch::Contains("notgz.swf.gz") && Catch::Contains("gzip"));
}

// ------------------------------------------------------------------------- data root, load_trace

TEST_CASE("data root: SCHEDSIM_DATA or ../shared/data", "[traces][data]") {
  {
    EnvGuard env("SCHEDSIM_DATA", std::nullopt);
    CHECK_THAT(data_root(), Catch::EndsWith("shared/data"));
  }
  TempDir dir;
  EnvGuard env("SCHEDSIM_DATA", dir.path().string());
  CHECK(data_root() == dir.path().string());
  dir.write("openb/pods.csv", std::string(kPodHeader) + "p,1000,1024,1,500,,LS,Running,1,2,1\n");
  dir.write("openb/nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,16384,1,T4\n");
  auto load = load_trace(cfg_of("openb", "openb/pods.csv", "openb/nodes.csv"), {});
  CHECK(load.tasks.size() == 1);
  CHECK(load.nodes.size() == 1);

  auto msg = error_of([&] { load_trace(cfg_of("openb", "openb/openb_pod_list_default.csv"), {}); });
  CHECK_THAT(msg, Catch::Contains("openb_pod_list_default.csv") && Catch::Contains("SCHEDSIM_DATA") &&
                      Catch::Contains("github.com/alibaba/clusterdata"));
  msg = error_of([&] { load_trace(cfg_of("philly", "philly/philly_trace.RFold-derived.csv"), {}); });
  CHECK_THAT(msg, Catch::Contains("SCHEDSIM_DATA") && Catch::Contains("github.com/msr-fiddle/philly-traces"));
  msg = error_of([&] { load_trace(cfg_of("swf", "swf/KTH.swf.gz"), {}); });
  CHECK_THAT(msg, Catch::Contains("SCHEDSIM_DATA") && Catch::Contains("www.cs.huji.ac.il/labs/parallel/workload"));
  msg = error_of([&] { resolve_data_path("somewhere/else.csv"); });
  CHECK_THAT(msg, Catch::Contains("else.csv") && Catch::Contains("SCHEDSIM_DATA"));

  CHECK_THAT(error_of([&] { load_trace(cfg_of("borg", "x"), {}); }), Catch::Contains("unknown format 'borg'"));
}

TEST_CASE("sanitize_name follows the platform's prefix rule", "[traces]") {
  CHECK(sanitize_name("openb-pod-0001") == "openb-pod-0001");
  CHECK(sanitize_name("Job_42.A") == "job-42-a");
  CHECK(sanitize_name("--x__y--") == "x-y");
  CHECK(sanitize_name("###") == "task");
  CHECK(sanitize_name("", "pod") == "pod");
}

// ---------------------------------------------------------------------------------- apply_traces

TEST_CASE("apply_traces appends nodes to the pool and tasks to the scenario", "[traces][apply]") {
  TempDir dir;
  EnvGuard env("SCHEDSIM_DATA", dir.path().string());
  dir.write("pods.csv", std::string(kPodHeader) + "openb-pod-0000,1000,1024,1,500,,LS,Running,1,2,1\n" +
                            "openb-pod-0001,1000,1024,0,0,,BE,Running,1,2,1\n");
  dir.write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,16384,1,T4\n");
  dir.write("jobs.csv", "1,0,CLOS,8+8,16,10\n");
  dir.write("machines.csv", ",machineId,number of GPUs\n0,m0,8\n");

  Scenario s;
  PoolCfg p0;
  p0.name = "p0";
  NodeGroupCfg g;
  g.prefix = "a-";
  g.count = 2;
  p0.node_groups.push_back(g);
  s.cluster.pools.push_back(p0);
  TaskCfg existing;
  existing.name = "openb-pod-0000";
  s.tasks.push_back(existing);
  s.traces.push_back(cfg_of("openb", "pods.csv", "nodes.csv"));
  auto philly = cfg_of("philly", "jobs.csv", "machines.csv");
  philly.pool = "philly";
  philly.resource_type = "reserved";
  s.traces.push_back(philly);

  CHECK(apply_traces(s, {}) == 0);
  REQUIRE(s.cluster.pools.size() == 2);
  REQUIRE(s.cluster.pools[0].nodes.size() == 1);
  CHECK(s.cluster.pools[0].nodes[0].name == "n0");
  CHECK(s.cluster.pools[1].name == "philly");
  CHECK(s.cluster.pools[1].kind == "shared");
  REQUIRE(s.cluster.pools[1].nodes.size() == 1);
  REQUIRE(s.tasks.size() == 4);
  CHECK(s.tasks[1].name == "openb-pod-0000-t0");  // name taken by an inline task
  CHECK(s.tasks[2].name == "openb-pod-0001");
  CHECK(s.tasks[2].resource_type == "spot");
  CHECK(s.tasks[3].name == "philly-1");
  CHECK(s.tasks[3].resource_type == "reserved");
  CHECK(s.tasks[3].pool == "philly");

  // node name clash with an expanded group
  Scenario s2;
  s2.cluster.pools.push_back(p0);
  dir.write("clash.csv", "sn,cpu_milli,memory_mib,gpu,model\na-1,8000,16384,0,\n");
  s2.traces.push_back(cfg_of("openb", "", "clash.csv"));
  CHECK_THAT(error_of([&] { apply_traces(s2, {}); }), Catch::Contains("'a-1' is already used"));

  // skipped rows are reported
  Scenario s3;
  dir.write("badjobs.csv", "1,0,CLOS,8+8,16,10\n2,0,CLOS,8+8,15,10\n");
  s3.traces.push_back(cfg_of("philly", "badjobs.csv"));
  CHECK(apply_traces(s3, TraceOptions{true}) == 1);
  CHECK(s3.tasks.size() == 1);
  CHECK(s3.cluster.pools.empty());  // no nodes: no pool created
}

TEST_CASE("swf: a run time of 0 is a valid job of one clock tick (1 ms)", "[traces][swf]") {
  TempDir dir;
  auto path = dir.write("zero.swf", "    4       70   -1      0    2     -1    -1    2    600    -1  0  13  1  -1 -1 -1 -1 -1\n");
  auto load = read_swf(path, cfg_of("swf", path), {});
  REQUIRE(load.tasks.size() == 1);
  CHECK(load.tasks[0].duration_s == 0.001);
}

TEST_CASE("trace runtime_estimate: requested (swf default), actual, factor x actual + add_s", "[traces][swf]") {
  TempDir dir;
  auto path = dir.write("log.swf", kSwf);
  auto cfg = cfg_of("swf", path);
  CHECK(*load_trace(cfg).tasks[0].runtime_estimate_s == 7200.0);
  cfg.runtime_estimate = "requested";
  CHECK(*load_trace(cfg).tasks[0].runtime_estimate_s == 7200.0);
  cfg.runtime_estimate = "actual";
  auto actual = load_trace(cfg);
  CHECK(*actual.tasks[0].runtime_estimate_s == 3600.0);
  CHECK(*actual.tasks[1].runtime_estimate_s == 100.0);  // no requested time in the row
  cfg.runtime_estimate = "affine";
  cfg.estimate_factor = 2;
  cfg.estimate_add_s = 1;
  auto affine = load_trace(cfg);
  CHECK(*affine.tasks[0].runtime_estimate_s == 7201.0);
  CHECK(*affine.tasks[2].runtime_estimate_s == 86.0);  // 2 x 42.5 + 1
}

TEST_CASE("trace rebase_time shifts submit times so that the first is 0", "[traces][swf]") {
  TempDir dir;
  auto path = dir.write("late.swf",
                        "    1      500   10   3600    1     -1    -1    1   7200    -1  1  12  1  -1 -1 -1 -1 -1\n"
                        "    2      450   10   3600    1     -1    -1    1   7200    -1  1  12  1  -1 -1 -1 -1 -1\n");
  auto cfg = cfg_of("swf", path);
  CHECK(load_trace(cfg).tasks[1].submit_s == 450.0);
  cfg.rebase_time = true;
  auto load = load_trace(cfg);
  CHECK(load.tasks[0].submit_s == 50.0);
  CHECK(load.tasks[1].submit_s == 0.0);
}

TEST_CASE("trace rebase_time with estimates and resubmissions: each applies as it does alone (one pass)", "[traces][swf]") {
  TempDir dir;
  auto path = dir.write("late.swf",
                        "    1      500   10   3600    1     -1    -1    1   7200    -1  1  12  1  -1 -1 -1 -1 -1\n"
                        "    2      450   10    100    1     -1    -1    1     -1    -1  1  12  1  -1 -1 -1 -1 -1\n"
                        "    3      475   10     10    1     -1    -1    1     60    -1  1  12  1  -1 -1 -1 -1 -1\n");
  auto cfg = cfg_of("swf", path);
  cfg.rebase_time = true;
  cfg.runtime_estimate = "affine";
  cfg.estimate_factor = 2;
  cfg.estimate_add_s = 1;
  cfg.max_resubmissions = 3;
  auto load = load_trace(cfg);
  REQUIRE(load.tasks.size() == 3);
  CHECK(load.tasks[0].submit_s == 50.0);
  CHECK(load.tasks[1].submit_s == 0.0);  // the earliest is not the first row
  CHECK(load.tasks[2].submit_s == 25.0);
  CHECK(*load.tasks[0].runtime_estimate_s == 7201.0);
  CHECK(*load.tasks[1].runtime_estimate_s == 201.0);
  CHECK(*load.tasks[2].runtime_estimate_s == 21.0);
  for (const auto& t : load.tasks) CHECK(t.fault_tolerance.max_resubmissions == 3);
  cfg.runtime_estimate = "requested";
  cfg.max_resubmissions = 0;
  auto requested = load_trace(cfg);
  CHECK(requested.tasks[1].submit_s == 0.0);
  CHECK(*requested.tasks[2].runtime_estimate_s == 60.0);
  CHECK_FALSE(requested.tasks[1].runtime_estimate_s.has_value());
  CHECK(requested.tasks[0].fault_tolerance.max_resubmissions == 0);
}

TEST_CASE("trace rebase_time of a reader that does not keep the earliest submit time (openb): found by a pass", "[traces][openb]") {
  TempDir dir;
  auto path = dir.write("pods.csv", std::string(kPodHeader) +
                                        "openb-pod-0000,12000,16384,1,1000,,LS,Running,500,1000,500\n"
                                        "openb-pod-0001,6000,12288,1,460,,BE,Running,100,400,100\n"
                                        "openb-pod-0002,6000,12288,1,460,,BE,Running,300,400,300\n");
  auto cfg = cfg_of("openb", path);
  auto plain = load_trace(cfg);
  CHECK_FALSE(plain.earliest_submit_s.has_value());
  CHECK(plain.tasks[1].submit_s == 100.0);
  cfg.rebase_time = true;
  auto load = load_trace(cfg);
  REQUIRE(load.tasks.size() == 3);
  CHECK(load.tasks[0].submit_s == 400.0);
  CHECK(load.tasks[1].submit_s == 0.0);
  CHECK(load.tasks[2].submit_s == 200.0);
}

TEST_CASE("swf keeps the earliest submit time of the rows it keeps", "[traces][swf]") {
  TempDir dir;
  auto path = dir.write("late.swf",
                        "    1      500   10   3600    1     -1    -1    1   7200    -1  1  12  1  -1 -1 -1 -1 -1\n"
                        "    2      450   10    100    1     -1    -1    1     -1    -1  1  12  1  -1 -1 -1 -1 -1\n"
                        "    3       20   10   -100    1     -1    -1    1     -1    -1  1  12  1  -1 -1 -1 -1 -1\n"
                        "    4      475   10     10    1     -1    -1    1     60    -1  1  12  1  -1 -1 -1 -1 -1\n");
  auto cfg = cfg_of("swf", path);
  cfg.time_scale = 2;
  auto load = load_trace(cfg, TraceOptions{true});  // row 3 (run time -1) skipped: its 20 s is not the earliest
  REQUIRE(load.tasks.size() == 3);
  REQUIRE(load.earliest_submit_s.has_value());
  CHECK(*load.earliest_submit_s == 900.0);  // 450 s x time_scale 2
  cfg.rebase_time = true;
  auto rebased = load_trace(cfg, TraceOptions{true});
  CHECK(rebased.tasks[0].submit_s == 100.0);
  CHECK(rebased.tasks[1].submit_s == 0.0);
  CHECK(rebased.tasks[2].submit_s == 50.0);
}

TEST_CASE("trace max_resubmissions and checkpoint_interval_s apply to every task of the trace", "[traces][swf]") {
  TempDir dir;
  auto path = dir.write("two.swf",
                        "    1      500   10   3600    1     -1    -1    1   7200    -1  1  12  1  -1 -1 -1 -1 -1\n"
                        "    2      450   10   3600    1     -1    -1    1   7200    -1  1  12  1  -1 -1 -1 -1 -1\n");
  auto cfg = cfg_of("swf", path);
  auto plain = load_trace(cfg);
  CHECK(plain.tasks[0].fault_tolerance.max_resubmissions == 0);
  CHECK_FALSE(plain.tasks[1].checkpoint_interval_s.has_value());
  cfg.max_resubmissions = 7;
  cfg.checkpoint_interval_s = 600;
  auto load = load_trace(cfg);
  for (const auto& t : load.tasks) {
    CHECK(t.fault_tolerance.max_resubmissions == 7);
    REQUIRE(t.checkpoint_interval_s.has_value());
    CHECK(*t.checkpoint_interval_s == 600.0);
  }
}

}  // namespace SCHEDSIM_UNITY_ID
