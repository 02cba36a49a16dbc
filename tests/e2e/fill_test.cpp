#include <catch2/catch.hpp>

#include "libsched/libsched.hpp"
#include "sim/experiments/fill.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace libsched;

namespace {
Cluster two_nodes(int gpus) {
  Cluster c;
  PoolId p = c.add_pool("p", PoolKind::shared);
  c.add_node(NodeDesc{"n0", p, "T4", gpus, 64000, 65536, 0, 0, {}});
  c.add_node(NodeDesc{"n1", p, "T4", gpus, 64000, 65536, 0, 0, {}});
  return c;
}
TaskSpec pod(std::int32_t num_gpu, std::int32_t milli) {
  TaskSpec t;
  t.name = "pod";
  t.user = "openb";
  t.resource_type = ResourceType::pay_as_you_go;
  ReplicaShape r{num_gpu, milli, 1000, 1024, 0};
  t.options.push_back(GangOption{"", r, r});
  return t;
}
}  // namespace

TEST_CASE("fill writes one row per whole percent arrived, from 0 to the target") {
  sim::FillOptions o;
  o.policy = "best-fit";
  o.target_pct = 130;
  auto r = sim::run_fill(two_nodes(2), {pod(1, 1000)}, o);
  REQUIRE(r.rows.size() == 131);
  for (std::size_t i = 0; i < r.rows.size(); ++i) CHECK(r.rows[i].arrived_pct == int(i));
}

TEST_CASE("fill allocates what arrives until the cluster is full, then counts failures") {
  sim::FillOptions o;
  o.policy = "first-fit";
  o.semantics = sim::FillSemantics::platform;
  o.target_pct = 150;
  // 4 GPUs in all, 1-GPU pods: each pod is 25 % of the cluster.
  auto r = sim::run_fill(two_nodes(2), {pod(1, 1000)}, o);
  CHECK(r.rows[0].allocated_gpu_pct == Approx(0));
  CHECK(r.rows[25].allocated_gpu_pct == Approx(25));
  CHECK(r.rows[100].allocated_gpu_pct == Approx(100));
  CHECK(r.rows[100].failed_tasks == 0);
  CHECK(r.rows[125].failed_tasks == 1);
  CHECK(r.rows[150].allocated_gpu_pct == Approx(100));
  CHECK(r.tasks_arrived == 6);
  CHECK(r.tasks_placed == 4);
}

TEST_CASE("fill measures fragmentation against the trace's task distribution") {
  sim::FillOptions o;
  o.policy = "worst-fit";
  o.semantics = sim::FillSemantics::platform;
  o.target_pct = 50;
  // Trace: only 2-GPU pods and half-GPU pods. Worst-fit spreads the shares: after two
  // half-GPU pods (25 % arrived), each node has one half-used GPU.
  std::vector<TaskSpec> trace{pod(1, 500)};
  auto r = sim::run_fill(two_nodes(2), trace, o);
  // One share on n0: its half GPU can take another share, nothing is fragmented for M = {0.5 GPU}.
  CHECK(r.rows[12].frag_gpu_pct == Approx(0));
  std::vector<TaskSpec> mixed{pod(2, 1000), pod(1, 500)};
  o.seed = 3;
  auto m = sim::run_fill(two_nodes(2), mixed, o);
  REQUIRE(m.rows.size() == 51);
  for (const auto& row : m.rows) {
    CHECK(row.frag_gpu_pct >= 0);
    CHECK(row.frag_gpu_pct <= 100 - row.allocated_gpu_pct + 1e-9);
  }
}

TEST_CASE("fill is deterministic per seed") {
  sim::FillOptions o;
  o.policy = "random";
  o.seed = 42;
  std::vector<TaskSpec> trace{pod(1, 300), pod(1, 700), pod(2, 1000), pod(1, 1000)};
  Cluster c = two_nodes(8);
  auto a = sim::fill_csv(sim::run_fill(c, trace, o));
  auto b = sim::fill_csv(sim::run_fill(c, trace, o));
  CHECK(a == b);
  o.seed = 43;
  CHECK(sim::fill_csv(sim::run_fill(c, trace, o)) != a);
}

TEST_CASE("fill rejects an empty trace and an unknown policy") {
  sim::FillOptions o;
  CHECK_THROWS_AS(sim::run_fill(two_nodes(2), {}, o), std::invalid_argument);
  o.policy = "no-such-policy";
  CHECK_THROWS_AS(sim::run_fill(two_nodes(2), {pod(1, 1000)}, o), std::out_of_range);
  o.semantics = sim::FillSemantics::platform;
  CHECK_THROWS_AS(sim::run_fill(two_nodes(2), {pod(1, 1000)}, o), std::out_of_range);
}

TEST_CASE("reference fill: a policy of the platform only is refused") {
  sim::FillOptions o;
  o.policy = "first-fit";
  CHECK_THROWS_AS(sim::run_fill(two_nodes(2), {pod(1, 1000)}, o), std::out_of_range);
}

TEST_CASE("reference fill: a gang task and a trace without GPU task are refused") {
  sim::FillOptions o;
  TaskSpec gang = pod(1, 1000);
  gang.workers = 1;
  CHECK_THROWS_AS(sim::run_fill(two_nodes(2), {gang}, o), std::invalid_argument);
  CHECK_THROWS_AS(sim::run_fill(two_nodes(2), {pod(0, 1000)}, o), std::invalid_argument);
}

TEST_CASE("reference fill: copies are appended until the next one would pass the target; a pod that fits nowhere is dropped") {
  sim::FillOptions o;
  o.policy = "best-fit";
  o.target_pct = 130;
  // 4 GPUs: target 5,200 milli-GPU. 1,000 + 4 copies = 5,000; a fifth copy would pass it.
  auto r = sim::run_fill(two_nodes(2), {pod(1, 1000)}, o);
  CHECK(r.tasks_arrived == 5);
  CHECK(r.tasks_placed == 4);
  REQUIRE(r.points.size() == 6);
  CHECK(r.points.back().arrived_milli == 5000);
  CHECK(r.points.back().allocated_milli == 4000);
  REQUIRE(r.rows.size() == 131);
  CHECK(r.rows[125].failed_tasks == 1);
  // Row 130 was never reached: it shows the last state.
  CHECK(r.rows[130].allocated_gpu_pct == Approx(100));
  CHECK(r.rows[130].arrived_pct == 130);
}

TEST_CASE("reference fill: row k's means are over the states whose arrived GPUs round to k %") {
  sim::FillOptions o;
  o.policy = "fgd";
  o.seed = 7;
  o.target_pct = 130;
  Cluster c = two_nodes(8);  // 16,000 milli-GPU: a 100-milli share is 0.625 %
  auto r = sim::run_fill(c, {pod(1, 100), pod(1, 300), pod(1, 1000), pod(2, 1000)}, o);
  auto window = [&](int lo, int hi) {  // states whose arrived % rounds (half to even) into lo..hi: (count, mean allocation)
    double sum = 0;
    std::size_t n = 0;
    for (const auto& p : r.points) {
      const double a = std::nearbyint(double(p.arrived_milli) * 100.0 / 16000.0);
      if (a >= lo && a <= hi) {
        sum += double(p.allocated_milli) * 100.0 / 16000.0;
        ++n;
      }
    }
    return std::pair{n, n ? sum / double(n) : 0.0};
  };
  std::size_t exact = 0, fallback = 0;
  for (int k = 0; k <= 130; ++k) {
    const auto& row = r.rows[std::size_t(k)];
    INFO("k = " << k);
    auto [n, mean] = window(k, k);
    if (n == 0) std::tie(n, mean) = window(k - 1, k + 1), ++fallback;
    else ++exact;
    CHECK(row.window_states == n);
    if (n > 0) CHECK(row.allocated_gpu_pct_mean == Approx(mean));
    else CHECK(row.allocated_gpu_pct_mean == row.allocated_gpu_pct);
  }
  CHECK(exact > 0);
  CHECK(fallback > 0);  // a 1,000-milli pod jumps over a whole 1 % window on this small cluster
}

TEST_CASE("reference fill: GPU-model constraints and CPU-only pods") {
  Cluster c;
  PoolId p = c.add_pool("p", PoolKind::shared);
  c.add_node(NodeDesc{"t4", p, "T4", 2, 64000, 65536, 0, 0, {}});
  c.add_node(NodeDesc{"v100", p, "V100", 2, 64000, 65536, 0, 0, {}});
  TaskSpec only_v100 = pod(1, 1000);
  only_v100.options[0].head.models = c.model_bit(c.find_model("V100"));
  only_v100.options[0].worker = only_v100.options[0].head;
  for (const char* policy : {"random", "dot-product", "gpu-clustering", "gpu-packing", "best-fit", "fgd"}) {
    sim::FillOptions o;
    o.policy = policy;
    o.target_pct = 100;
    auto r = sim::run_fill(c, {only_v100, pod(0, 1000)}, o);
    INFO(policy);
    // Only the V100 node's 2 GPUs can be used, whatever the order.
    CHECK(r.points.back().allocated_milli == 2000);
    CHECK(r.tasks_arrived - r.tasks_placed == 2);
  }
}

TEST_CASE("reference fill is deterministic per seed for every policy") {
  std::vector<TaskSpec> trace{pod(1, 300), pod(1, 700), pod(2, 1000), pod(1, 1000), pod(0, 1000)};
  Cluster c = two_nodes(8);
  for (const char* policy : {"random", "dot-product", "gpu-clustering", "gpu-packing", "best-fit", "fgd"}) {
    sim::FillOptions o;
    o.policy = policy;
    o.seed = 42;
    INFO(policy);
    CHECK(sim::fill_csv(sim::run_fill(c, trace, o)) == sim::fill_csv(sim::run_fill(c, trace, o)));
  }
}

namespace {
int schedsim_status(const std::string& args) {
  const std::string cmd = std::string(SCHEDSIM_BINARY) + " " + args + " >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;  // -1: killed by a signal (abort)
}
/// Writes DIR/nodes.csv, DIR/pods.csv (openb format, one row each) and DIR/s.json, a scenario
/// whose only workload is that trace.
void write_openb_case(const std::string& dir, const std::string& node_row, const std::string& pod_row) {
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  std::ofstream(dir + "/nodes.csv") << "sn,cpu_milli,memory_mib,gpu,model\n" << node_row << "\n";
  std::ofstream(dir + "/pods.csv")
      << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
      << pod_row << "\n";
  std::ofstream(dir + "/s.json") << R"({"schema": "schedsim/v1", "name": "big", "seed": 1,
    "cluster": {"name": "c", "region": "r", "instance_specs": [],
                "pools": [{"name": "p", "kind": "shared", "node_groups": []}]},
    "traces": [{"format": "openb", "path": ")" << dir << R"(/pods.csv", "nodes": ")" << dir << R"(/nodes.csv", "pool": "p"}],
    "tasks": []})";
}
}  // namespace

TEST_CASE("a trace node of more than 64 GPUs is refused by validate, run and fill with exit 2 (no abort)") {
  const std::string dir = "/tmp/schedsim_e2e_bignode_" + std::to_string(::getpid());
  write_openb_case(dir, "n0,64000,262144,100,V100",
                   "p0,1000,1024,1,1000,,LS,Running,0,100,0");
  CHECK(schedsim_status("validate " + dir + "/s.json") == 2);
  CHECK(schedsim_status("run " + dir + "/s.json --no-progress --out " + dir + "/out") == 2);
  CHECK(schedsim_status("fill " + dir + "/s.json --out " + dir + "/fill") == 2);
  CHECK(::access((dir + "/out").c_str(), F_OK) != 0);
  CHECK(::access((dir + "/fill").c_str(), F_OK) != 0);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("a trace time that would overflow the millisecond clock is refused with exit 2 naming the trace and task") {
  const std::string dir = "/tmp/schedsim_e2e_bigtime_" + std::to_string(::getpid());
  write_openb_case(dir, "n0,64000,262144,8,V100",
                   "p0,1000,1024,1,1000,,LS,Running,1000000000000000000,1000000000000000001,0");
  CHECK(schedsim_status("validate " + dir + "/s.json") == 2);
  CHECK(schedsim_status("run " + dir + "/s.json --no-progress --out " + dir + "/out") == 2);
  CHECK(::access((dir + "/out").c_str(), F_OK) != 0);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("fill --semantics with an unknown value exits 2 naming the option") {
  const std::string dir = "/tmp/schedsim_e2e_semantics_" + std::to_string(::getpid());
  write_openb_case(dir, "n0,64000,262144,8,V100", "p0,1000,1024,1,500,,LS,Running,0,100,0");
  const std::string cmd = std::string(SCHEDSIM_BINARY) + " fill " + dir + "/s.json --semantics exact --out " + dir + "/fill 2>" + dir + "/err";
  const int status = std::system(cmd.c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  std::ifstream in(dir + "/err");
  std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(err.find("--semantics: \"exact\": must be reference or platform") != std::string::npos);
  CHECK(::access((dir + "/fill").c_str(), F_OK) != 0);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("fill --trace replaces the first trace's pod list") {
  const std::string dir = "/tmp/schedsim_e2e_filltrace_" + std::to_string(::getpid());
  write_openb_case(dir, "n0,64000,262144,8,V100", "p0,1000,1024,1,500,,LS,Running,0,100,0");
  // The scenario's list asks for half GPUs; the other list for whole GPUs on a model no node has.
  std::ofstream(dir + "/other.csv") << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\nq0,1000,1024,1,1000,A100\n";
  REQUIRE(schedsim_status("fill " + dir + "/s.json --out " + dir + "/a") == 0);
  REQUIRE(schedsim_status("fill " + dir + "/s.json --trace " + dir + "/other.csv --out " + dir + "/b") == 0);
  auto last_row = [](const std::string& path) {
    std::ifstream in(path);
    std::string line, last;
    while (std::getline(in, line)) last = line;
    return last;
  };
  CHECK(last_row(dir + "/a/fill.csv").rfind("130,100.0000,", 0) == 0);  // 8 GPUs filled by halves (16 pods)
  CHECK(last_row(dir + "/b/fill.csv").rfind("130,0.0000,", 0) == 0);    // nothing fits: no A100
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace SCHEDSIM_UNITY_ID
