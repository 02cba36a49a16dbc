// Issue #36 (hardening round 2), trace side: a number is read whole or refused (never a prefix),
// CSV quoting follows RFC 4180 or fails the row, a header names each column once, a path with
// a NUL byte is refused.
#include <catch2/catch.hpp>

#include <string>

#include <fmt/format.h>

#include "sim/io/traces.hpp"
#include "trace_test_util.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace sim::io;
using trace_test::error_of;
using trace_test::TempDir;

namespace {

const char* k_swf_row = "1 0 0 10 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n";
const char* k_pods_header = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";

}  // namespace

TEST_CASE("swf: a header integer is read whole or refused naming the file and line", "[traces][hardening2]") {
  TempDir dir;
  TraceCfg cfg;
  cfg.format = "swf";
  for (const char* key : {"MaxProcs", "MaxNodes"})
    for (const char* value : {"1,024", "3.5", "1e6", "2 (estimated)", "-5", "+8", "", "99999999999999999999"}) {
      INFO(key << ": " << value);
      const auto p = dir.write("h.swf", std::string("; Version: 2\n; ") + key + ": " + value + "\n" + k_swf_row);
      const std::string msg = error_of([&] { read_swf(p, cfg, {}); });
      CHECK(msg == p + ":2:1: header " + key + ": '" + value +
                       "': must be a non-negative integer (digits only, at most 9223372036854775807)");
      TraceOptions skip;  // a header is not a row: never skipped
      skip.skip_bad_rows = true;
      CHECK(error_of([&] { read_swf(p, cfg, skip); }) == msg);
    }
}

TEST_CASE("swf: a whole header integer gives the cluster; 0 means not given", "[traces][hardening2]") {
  TempDir dir;
  TraceCfg cfg;
  cfg.format = "swf";
  cfg.procs_per_node = 4;
  const auto p = dir.write("ok.swf", std::string(";  MaxProcs:  1024 \n") + k_swf_row);
  CHECK(read_swf(p, cfg, {}).nodes.size() == 256);
  const auto z = dir.write("zero.swf", std::string("; MaxProcs: 0\n; MaxNodes: 3\n") + k_swf_row);
  CHECK(read_swf(z, cfg, {}).nodes.size() == 3);
}

TEST_CASE("swf: a header given twice is refused", "[traces][hardening2]") {
  TempDir dir;
  TraceCfg cfg;
  cfg.format = "swf";
  const auto p = dir.write("twice.swf", std::string("; MaxNodes: 4\n; Note: x\n; MaxNodes: 8\n") + k_swf_row);
  CHECK(error_of([&] { read_swf(p, cfg, {}); }) == p + ":3:1: header MaxNodes given twice (first at line 1)");
}

TEST_CASE("csv: an unterminated quote fails the row, naming its line and column", "[traces][hardening2]") {
  TempDir dir;
  TraceCfg cfg;
  cfg.format = "openb";
  const auto p = dir.write("pods.csv", std::string(k_pods_header) + "pod-0,1000,1024,0,0\n\"pod-1,1000,1024,0,0\n");
  CHECK(error_of([&] { read_openb_pods(p, cfg, {}, nullptr); }) ==
        p + ":3:1: the quote `\"` that opens this field is not closed on the line");
  TraceOptions skip;
  skip.skip_bad_rows = true;
  std::size_t skipped = 0;
  const auto tasks = read_openb_pods(p, cfg, skip, &skipped);
  CHECK(tasks.size() == 1);
  CHECK(skipped == 1);
}

TEST_CASE("csv: a quote inside an unquoted field or text after a closing quote fails the row", "[traces][hardening2]") {
  TempDir dir;
  TraceCfg cfg;
  cfg.format = "openb";
  const auto a = dir.write("a.csv", std::string(k_pods_header) + "po\"d,1000,1024,0,0\n");
  CHECK(error_of([&] { read_openb_pods(a, cfg, {}, nullptr); }) ==
        a + ":2:3: a quote `\"` inside an unquoted field (quote the whole field and double the quote)");
  const auto b = dir.write("b.csv", std::string(k_pods_header) + "\"pod\"x,1000,1024,0,0\n");
  CHECK(error_of([&] { read_openb_pods(b, cfg, {}, nullptr); }) ==
        b + ":2:6: text after the closing quote of a quoted field (expected the separator or the end of the line)");
}

TEST_CASE("csv: quoted fields are read unquoted (RFC 4180), commas and doubled quotes included", "[traces][hardening2]") {
  TempDir dir;
  TraceCfg cfg;
  cfg.format = "openb";
  const auto p = dir.write("q.csv", std::string(k_pods_header) + " \"Pod,A\" ,\"1000\",1024,0,0\n\"say \"\"hi\"\"\",2000,2048,0,0\n");
  const auto tasks = read_openb_pods(p, cfg, {}, nullptr);
  REQUIRE(tasks.size() == 2);
  CHECK(tasks[0].name == "pod-a");
  CHECK(tasks[0].replica->vcpu == 1.0);
  CHECK(tasks[1].name == "say-hi");
  CHECK(tasks[1].replica->vcpu == 2.0);
}

TEST_CASE("csv: a header naming a column twice is refused, in every CSV reader", "[traces][hardening2]") {
  TempDir dir;
  TraceCfg cfg;
  cfg.format = "openb";
  const auto pods = dir.write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,cpu_milli\npod,1,1,0,0,2\n");
  CHECK(error_of([&] { read_openb_pods(pods, cfg, {}, nullptr); }) ==
        pods + ":1:45: header names column 'cpu_milli' twice (columns 2 and 6)");
  const auto nodes = dir.write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model,sn\nn0,1000,1024,0,,n1\n");
  CHECK(error_of([&] { read_openb_nodes(nodes, {}, nullptr); }) == nodes + ":1:35: header names column 'sn' twice (columns 1 and 6)");
  const auto machines = dir.write("m.csv", ",machineId,number of GPUs,machineId\n0,m0,8,m1\n");
  CHECK(error_of([&] { read_philly_machines(machines, {}, nullptr); }) ==
        machines + ":1:27: header names column 'machineId' twice (columns 2 and 4)");
  const auto vcs = dir.write("vc.csv", "vc,node num,vc\na,1,b\n");
  CHECK(error_of([&] { read_philly_virtual_clusters(vcs, {}); }) == vcs + ":1:13: header names column 'vc' twice (columns 1 and 3)");
  // Unnamed columns (a pandas index) may repeat: they are never looked up.
  const auto unnamed = dir.write("u.csv", ",,machineId,number of GPUs\n0,0,m0,8\n");
  CHECK(read_philly_machines(unnamed, {}, nullptr).size() == 1);
}

TEST_CASE("csv: a header with an unterminated quote is refused even with skip_bad_rows", "[traces][hardening2]") {
  TempDir dir;
  TraceCfg cfg;
  cfg.format = "openb";
  const auto p = dir.write("h.csv", "name,\"cpu_milli,memory_mib,num_gpu,gpu_milli\npod,1,1,0,0\n");
  TraceOptions skip;
  skip.skip_bad_rows = true;
  CHECK(error_of([&] { read_openb_pods(p, cfg, skip, nullptr); }) ==
        p + ":1:6: header: the quote `\"` that opens this field is not closed on the line");
}

TEST_CASE("a trace path with a NUL byte is refused, not cut at the NUL", "[traces][hardening2]") {
  TempDir dir;
  const auto p = dir.write("pods.csv", std::string(k_pods_header) + "pod,1000,1024,0,0\n");
  const std::string with_nul = p + std::string("\0.gz", 4);
  const std::string msg = error_of([&] { resolve_data_path(with_nul, "openb"); });
  INFO(msg);
  CHECK(msg == "trace: '" + p + "\\x00.gz': a path must not contain a NUL byte (byte " + std::to_string(p.size() + 1) + ")");
}

TEST_CASE("reserved trace tasks naming a pool that does not exist are refused when the trace loads", "[traces][hardening2]") {
  // validate loads the traces too: what Simulator::build refused at run time ("unknown pool")
  // is refused before.
  TempDir dir;
  const auto p = dir.write("t.swf", k_swf_row);
  Scenario s;
  s.name = "x";
  TraceCfg cfg;
  cfg.format = "swf";
  cfg.path = p;
  cfg.nodes = "none";
  cfg.pool = "nope";
  cfg.resource_type = "reserved";
  s.traces.push_back(cfg);
  CHECK(error_of([&] { apply_traces(s); }) ==
        "trace 0 ('" + p + "'): task 'swf-1': pool 'nope': no such pool in the cluster (and the trace brings no node to create it)");
  // With the trace's nodes the pool is created: fine.
  s.traces[0].nodes.clear();
  CHECK_NOTHROW(apply_traces(s));
}

TEST_CASE("a trace that brings a 65th GPU model is refused when it loads", "[traces][hardening2]") {
  TempDir dir;
  std::string nodes = "sn,cpu_milli,memory_mib,gpu,model\n";
  for (int i = 0; i < 3; ++i) nodes += fmt::format("n{},1000,1024,1,T{}\n", i, i);
  const auto np = dir.write("nodes.csv", nodes);
  const auto pp = dir.write("pods.csv", std::string(k_pods_header) + "pod,1000,1024,0,0\n");
  Scenario s;
  s.name = "x";
  PoolCfg pool;
  pool.name = "p";
  for (int i = 0; i < 62; ++i) {  // 62 models in the file, 3 in the trace
    NodeCfg n;
    n.name = fmt::format("m{}", i);
    n.gpu_model = fmt::format("M{}", i);
    n.gpus = 1;
    pool.nodes.push_back(n);
  }
  s.cluster.pools.push_back(pool);
  TraceCfg cfg;
  cfg.format = "openb";
  cfg.path = pp;
  cfg.nodes = np;
  s.traces.push_back(cfg);
  CHECK(error_of([&] { apply_traces(s); }) ==
        "trace 0 ('" + pp + "'): cluster.pools[0].nodes[64].gpu_model: \"T2\": a GPU model past the first 64: a scenario has at most "
        "64 distinct GPU models (instance specs, node groups, nodes and tasks' gpu_models together)");
}

}  // namespace SCHEDSIM_UNITY_ID
