// `schedsim import k8s` mapping (docs/kubernetes.md): the hand-written manifests of
// tests/data/k8s/cluster (2 nodes, a PyTorchJob 1+3, a RayJob with a head group and a worker group,
// a TrainJob, a ResourceFlavor, a ClusterQueue with a quota, a LocalQueue, a PriorityClass and a
// WorkloadPriorityClass) map to hand-derived gangs, quotas and priorities; quantities, times and
// bad input.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/io/k8s_import.hpp"
#include "sim/io/scenario_json.hpp"
#include "tests/common/files.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

using sim::io::K8sImport;
using sim::io::K8sImportOptions;
using sim::io::TaskCfg;

const std::string k8s_data = std::string(SCHEDSIM_TEST_DIR) + "/data/k8s/";

K8sImport import_cluster() {
  K8sImportOptions o;
  o.paths = {k8s_data + "cluster"};
  o.pool_label = "pool";
  o.duration_s = 1800;
  return sim::io::import_k8s(o);
}

const TaskCfg& task_named(const K8sImport& im, const std::string& name) {
  auto it = std::find_if(im.scenario.tasks.begin(), im.scenario.tasks.end(), [&](const TaskCfg& t) { return t.name == name; });
  REQUIRE(it != im.scenario.tasks.end());
  return *it;
}

/// Imports one manifest written to a temporary file; `file` receives its path.
K8sImport import_text(const std::string& tag, const std::string& text, std::string& file) {
  const auto d = testutil::fresh_dir("k8s-" + tag);
  std::filesystem::create_directories(d);
  file = (d / "m.yaml").string();
  std::ofstream(file) << text;
  K8sImportOptions o;
  o.paths = {file};
  return sim::io::import_k8s(o);
}

TEST_CASE("import k8s: nodes become one pool per --pool-label value with allocatable GPUs, vCPU and GiB") {
  const K8sImport im = import_cluster();
  REQUIRE(im.ok());
  const auto& pools = im.scenario.cluster.pools;
  REQUIRE(pools.size() == 1);
  CHECK(pools[0].name == "train");
  REQUIRE(pools[0].nodes.size() == 2);
  const auto& a = pools[0].nodes[0];
  const auto& b = pools[0].nodes[1];
  CHECK(a.name == "gpu-a");
  CHECK(a.gpus == 8);
  CHECK(a.gpu_model == "NVIDIA-A100-SXM4-80GB");
  CHECK(a.vcpu == 96.0);
  CHECK(a.memory_gib == 1024.0);  // 1048576Mi
  CHECK(b.vcpu == Approx(95.9));  // 95900m
  CHECK(b.memory_gib == 512.0);   // 536870912Ki
}

TEST_CASE("import k8s: without --pool-label every node is in pool `default`") {
  K8sImportOptions o;
  o.paths = {k8s_data + "cluster/nodes.json"};
  const K8sImport im = sim::io::import_k8s(o);
  REQUIRE(im.ok());
  REQUIRE(im.scenario.cluster.pools.size() == 1);
  CHECK(im.scenario.cluster.pools[0].name == "default");
  CHECK(im.scenario.cluster.pools[0].nodes.size() == 2);
}

TEST_CASE("import k8s: a PyTorchJob 1+3 is a gang of 4 two-GPU replicas in its ClusterQueue's pool") {
  const K8sImport im = import_cluster();
  REQUIRE(im.ok());
  const TaskCfg& t = task_named(im, "llm-pretrain");
  CHECK(t.type == "PyTorchJob");
  CHECK(t.workers == 3);
  REQUIRE(t.replica.has_value());
  CHECK(t.replica->gpus == 2);
  CHECK(t.replica->vcpu == 8.0);
  CHECK(t.replica->memory_gib == 64.0);
  CHECK(t.replica->gpu_models == std::vector<std::string>{"NVIDIA-A100-SXM4-80GB"});  // flavor a100
  CHECK(t.user == "team-a");          // the ClusterQueue
  CHECK(t.tenant == "team-a/lq-a");   // the LocalQueue
  CHECK(t.resource_type == "reserved");
  CHECK(t.pool == "train");
  CHECK(t.accept_idle);               // cohort `research`, no borrowingLimit
  CHECK(t.fault_tolerance.max_resubmissions == 3);  // ExitCode + backoffLimit 3
  CHECK(t.submit_s == 0.0);
  CHECK(t.duration_s == 3600.0);      // 10:01 -> 11:01
}

TEST_CASE("import k8s: a RayJob keeps its CPU head and its GPU worker group as head_spec and specs") {
  const K8sImport im = import_cluster();
  REQUIRE(im.ok());
  const TaskCfg& t = task_named(im, "ray-tune");
  CHECK(t.type == "RayJob");
  CHECK(t.workers == 2);
  CHECK(t.specs == std::vector<std::string>{"ray-tune-worker"});
  CHECK(t.head_spec == "ray-tune-head");
  CHECK(t.debug);
  CHECK(t.debug_retention_s == 300.0);  // shutdownAfterJobFinishes + ttlSecondsAfterFinished 300
  CHECK(t.submit_s == 300.0);           // created 10:05, earliest 10:00
  CHECK(t.duration_s == 1800.0);        // no status: --duration-s
  const auto& specs = im.scenario.cluster.instance_specs;
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].name == "ray-tune-worker");
  CHECK(specs[0].gpus == 1);
  CHECK(specs[0].gpu_model == "NVIDIA-A100-SXM4-80GB");
  CHECK(specs[0].vcpu == 8.0);
  CHECK(specs[0].memory_gib == 32.0);
  CHECK(specs[1].name == "ray-tune-head");
  CHECK(specs[1].gpus == 0);
  CHECK(specs[1].gpu_model.empty());
  CHECK(specs[1].vcpu == 4.0);
  CHECK(specs[1].memory_gib == 16.0);
}

TEST_CASE("import k8s: a TrainJob of numNodes 2 is a PyTorchJob 1+1; outside Kueue it is pay-as-you-go") {
  const K8sImport im = import_cluster();
  REQUIRE(im.ok());
  const TaskCfg& t = task_named(im, "bert-finetune");
  CHECK(t.type == "PyTorchJob");
  CHECK(t.workers == 1);
  REQUIRE(t.replica.has_value());
  CHECK(t.replica->gpus == 4);
  CHECK(t.replica->vcpu == 16.0);
  CHECK(t.replica->memory_gib == 128.0);
  CHECK(t.replica->gpu_models.empty());
  CHECK(t.resource_type == "pay_as_you_go");
  CHECK(t.user == "team-b");  // the namespace
  CHECK(t.pool.empty());
  CHECK(t.submit_s == 600.0);
}

TEST_CASE("import k8s: priority class values {0, 100, 1000} map to priorities 1, 5, 9") {
  const K8sImport im = import_cluster();
  REQUIRE(im.ok());
  CHECK(task_named(im, "llm-pretrain").priority == 9);  // PriorityClass high (1000)
  CHECK(task_named(im, "ray-tune").priority == 5);      // WorkloadPriorityClass batch (100)
  CHECK(task_named(im, "bert-finetune").priority == 1); // none: 0
  CHECK(sim::io::k8s_priority_level(0, 1) == 5);
  CHECK(sim::io::k8s_priority_level(0, 2) == 1);
  CHECK(sim::io::k8s_priority_level(1, 2) == 9);
  CHECK(sim::io::k8s_priority_level(1, 4) == 4);  // 1 + round(8/3)
}

TEST_CASE("import k8s: the ClusterQueue's nominal quota is a reserved quota of the queue in the flavor's pool") {
  const K8sImport im = import_cluster();
  REQUIRE(im.ok());
  REQUIRE(im.scenario.quotas.size() == 1);
  const auto& q = im.scenario.quotas[0];
  CHECK(q.user == "team-a");
  CHECK(q.resource_type == "reserved");
  CHECK(q.pool == "train");
  CHECK(q.gpus == 12.0);
  CHECK(q.vcpu == 128.0);
  CHECK(q.memory_gib == 1024.0);  // 1Ti
  CHECK(im.scenario.scheduler.queueing == "greedy");  // BestEffortFIFO
}

TEST_CASE("import k8s: the one unmapped field warns exactly once, naming the object and the field") {
  const K8sImport im = import_cluster();
  REQUIRE(im.ok());
  CHECK(im.warnings == std::vector<std::string>{
                           "import: PyTorchJob team-a/llm-pretrain: spec.pytorchReplicaSpecs.Worker.template.spec.tolerations: "
                           "not mapped: the scenario has no node selection or scheduler choice per pod"});
}

TEST_CASE("import k8s: the imported scenario passes every rule of validate") {
  const K8sImport im = import_cluster();
  REQUIRE(im.ok());
  const auto r = sim::io::parse_scenario_document(sim::io::scenario_to_json(im.scenario), "k8s.json");
  for (const auto& d : r.diagnostics) INFO(d.str());
  CHECK(r.ok());
  CHECK(r.diagnostics.empty());
}

TEST_CASE("import k8s: Kubernetes quantities in base units") {
  using sim::io::parse_k8s_quantity;
  CHECK(*parse_k8s_quantity("500m") == Approx(0.5));
  CHECK(*parse_k8s_quantity("8") == 8.0);
  CHECK(*parse_k8s_quantity("1.5") == 1.5);
  CHECK(*parse_k8s_quantity("64Gi") == 64.0 * 1024 * 1024 * 1024);
  CHECK(*parse_k8s_quantity("2Ki") == 2048.0);
  CHECK(*parse_k8s_quantity("100M") == 1e8);
  CHECK(*parse_k8s_quantity("1e3") == 1000.0);
  CHECK_FALSE(parse_k8s_quantity("-1").has_value());
  CHECK_FALSE(parse_k8s_quantity("8x").has_value());
  CHECK_FALSE(parse_k8s_quantity("Gi").has_value());
  CHECK_FALSE(parse_k8s_quantity("1.2.3").has_value());
}

TEST_CASE("import k8s: RFC 3339 times in seconds since the epoch") {
  using sim::io::parse_k8s_time;
  CHECK(*parse_k8s_time("1970-01-01T00:00:00Z") == 0.0);
  CHECK(*parse_k8s_time("2024-05-01T10:00:00Z") == 1714557600.0);
  CHECK(*parse_k8s_time("2024-05-01T12:00:00+02:00") == 1714557600.0);
  CHECK(*parse_k8s_time("2024-05-01T10:00:00.5Z") == 1714557600.5);
  CHECK_FALSE(parse_k8s_time("2024-05-01 10:00").has_value());
  CHECK_FALSE(parse_k8s_time("2024-13-01T10:00:00Z").has_value());
}

TEST_CASE("import k8s: a bad quantity is one FILE: PATH: VALUE: RULE error") {
  std::string file;
  const K8sImport im = import_text("qty", "kind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: 8x, memory: 1Gi}\n", file);
  REQUIRE(im.errors.size() == 1);
  CHECK(im.errors[0].str() == file + ": Node/n1.status.allocatable.cpu: \"8x\": not a Kubernetes quantity (e.g. 8, 500m, 64Gi)");
}

TEST_CASE("import k8s: a PyTorchJob with two masters is refused") {
  std::string file;
  const K8sImport im = import_text("masters",
                                   "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: j, namespace: ns}\n"
                                   "spec:\n  pytorchReplicaSpecs:\n    Master: {replicas: 2}\n",
                                   file);
  REQUIRE(im.errors.size() == 1);
  CHECK(im.errors[0].str() == file + ": PyTorchJob/ns/j.spec.pytorchReplicaSpecs.Master.replicas: 2: a PyTorchJob has exactly one master");
}

TEST_CASE("import k8s: malformed YAML names the line and column") {
  std::string file;
  const K8sImport im = import_text("yaml", "kind: Node\nmetadata: {name: [\n", file);
  REQUIRE(im.errors.size() == 1);
  CHECK(im.errors[0].str().rfind(file + ": line ", 0) == 0);
  CHECK(im.errors[0].str().find("malformed YAML") != std::string::npos);
}

TEST_CASE("import k8s: a duplicate key is refused") {
  std::string file;
  const K8sImport im = import_text("dup", "kind: Node\nkind: Pod\nmetadata: {name: n}\n", file);
  REQUIRE(im.errors.size() == 1);
  CHECK(im.errors[0].str() == file + ": documents[0]: duplicate key `kind` (line 2)");
}

TEST_CASE("import k8s: PyTorchJob restartPolicy OnFailure warns; Never allows no resubmission") {
  std::string file;
  const K8sImport im = import_text("restart",
                                   "kind: PyTorchJob\nmetadata: {name: a, namespace: ns}\n"
                                   "spec:\n  runPolicy: {backoffLimit: 2}\n  pytorchReplicaSpecs:\n"
                                   "    Master: {replicas: 1, restartPolicy: OnFailure}\n---\n"
                                   "kind: PyTorchJob\nmetadata: {name: b, namespace: ns}\n"
                                   "spec:\n  runPolicy: {backoffLimit: 2}\n  pytorchReplicaSpecs:\n"
                                   "    Master: {replicas: 1, restartPolicy: Never}\n",
                                   file);
  REQUIRE(im.ok());
  REQUIRE(im.scenario.tasks.size() == 2);
  CHECK(im.scenario.tasks[0].fault_tolerance.max_resubmissions == 2);
  CHECK(im.scenario.tasks[1].fault_tolerance.max_resubmissions == 0);
  CHECK(im.warnings == std::vector<std::string>{
                           "import: PyTorchJob ns/a: spec.pytorchReplicaSpecs.Master.restartPolicy: not mapped: OnFailure restarts "
                           "every failure, deterministic ones too; the scenario never retries a deterministic error (as ExitCode)"});
}

TEST_CASE("import k8s: a pod template whose containers are not an array is refused") {
  std::string file;
  const K8sImport im = import_text("containers",
                                   "kind: PyTorchJob\nmetadata: {name: j, namespace: ns}\n"
                                   "spec:\n  pytorchReplicaSpecs:\n    Master: {template: {spec: {containers: oops}}}\n",
                                   file);
  REQUIRE(im.errors.size() == 1);
  CHECK(im.errors[0].str() == file + ": PyTorchJob/ns/j.spec.pytorchReplicaSpecs.Master.template.spec.containers: \"oops\": must be an array");
}

TEST_CASE("import k8s: a boolean field of another type is refused") {
  std::string file;
  const K8sImport im = import_text("flag",
                                   "kind: RayJob\nmetadata: {name: r, namespace: ns}\n"
                                   "spec:\n  shutdownAfterJobFinishes: \"yes\"\n  rayClusterSpec:\n    headGroupSpec: {template: {}}\n",
                                   file);
  REQUIRE(im.errors.size() == 1);
  CHECK(im.errors[0].str() == file + ": RayJob/ns/r.spec.shutdownAfterJobFinishes: \"yes\": must be true or false");
}

TEST_CASE("import k8s: the snapshot places a running PyTorchJob on its pods' nodes, master first") {
  K8sImportOptions o;
  o.paths = {k8s_data + "cluster/nodes.json", k8s_data + "running"};
  K8sImport im = sim::io::import_k8s(o);
  REQUIRE(im.ok());
  const auto j = sim::io::k8s_snapshot_json(im);
  CHECK(j["schema"] == "schedsim/decide-v1");
  CHECK(j["now_s"] == 300.0);  // eval created 12:05, earliest 12:00
  REQUIRE(j["tasks"].size() == 2);
  CHECK(j["tasks"][0]["name"] == "sft");
  CHECK(j["tasks"][0]["running"]["start_s"] == 120.0);
  CHECK(j["tasks"][0]["running"]["replicas"] ==
        nlohmann::json::parse(R"([{"node": "gpu-b"}, {"node": "gpu-a"}])"));  // sft-master-0 on gpu-b
  CHECK(j["tasks"][1]["name"] == "eval");
  CHECK_FALSE(j["tasks"][1].contains("running"));
  CHECK_FALSE(j["tasks"][1].contains("duration_s"));
}

TEST_CASE("import k8s: a running job whose pods were not read is left out of the snapshot with a warning") {
  K8sImportOptions o;
  o.paths = {k8s_data + "cluster/nodes.json", k8s_data + "running/jobs.yaml"};
  K8sImport im = sim::io::import_k8s(o);
  REQUIRE(im.ok());
  const auto j = sim::io::k8s_snapshot_json(im);
  REQUIRE(j["tasks"].size() == 1);
  CHECK(j["tasks"][0]["name"] == "eval");
  CHECK(im.warnings == std::vector<std::string>{"import: PyTorchJob team-b/sft: status.startTime: not mapped: a running job "
                                                "whose pods were not read is left out of the snapshot"});
}

}  // namespace SCHEDSIM_UNITY_ID
