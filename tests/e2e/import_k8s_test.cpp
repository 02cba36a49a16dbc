// `schedsim import k8s` end to end (docs/kubernetes.md): the manifests of tests/data/k8s/cluster
// import to a scenario that `validate` accepts and `run` completes, and to a snapshot `decide`
// accepts; bad input exits 2 with nothing written.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/common/files.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {

namespace fs = std::filesystem;

const std::string k8s_bin = SCHEDSIM_BINARY;
const std::string k8s_dir = std::string(SCHEDSIM_TEST_DIR) + "/data/k8s/";

TEST_CASE("import k8s: the manifests become a scenario that validates and runs every job to success") {
  const fs::path d = testutil::fresh_dir("import-k8s");
  fs::create_directories(d);
  const std::string s = (d / "s.json").string();
  auto r = testutil::run_command(k8s_bin + " import k8s " + k8s_dir + "cluster --pool-label pool --duration-s 1800 --out " + s,
                                 "import-k8s");
  REQUIRE(r.status == 0);
  CHECK(r.out == s + ": 3 tasks, 2 nodes, 1 quotas, 1 warnings\n");
  CHECK(r.err == "import: PyTorchJob team-a/llm-pretrain: spec.pytorchReplicaSpecs.Worker.template.spec.tolerations: not mapped: "
                 "the scenario has no node selection or scheduler choice per pod\n");
  auto v = testutil::run_command(k8s_bin + " validate " + s, "import-k8s-validate");
  CHECK(v.status == 0);
  CHECK(v.out == s + ": ok (3 tasks, 2 nodes)\n");
  auto run = testutil::run_command(k8s_bin + " run " + s + " --out " + (d / "run").string(), "import-k8s-run");
  REQUIRE(run.status == 0);
  const std::string tasks = testutil::slurp(d / "run" / "tasks.csv");
  // the 4-replica PyTorchJob (8 GPUs) and the 3-replica RayJob (2 GPUs) start at submission; the
  // TrainJob's second 4-GPU replica finds no node until the RayJob ends at 300 + 1800 s + 300 s retention
  CHECK(tasks.find("llm-pretrain,1,Succeeded,0,0,3600,") != std::string::npos);
  CHECK(tasks.find("ray-tune,1,Succeeded,300,300,2400,") != std::string::npos);
  CHECK(tasks.find("bert-finetune,1,Succeeded,600,2400,4200,") != std::string::npos);
}

TEST_CASE("import k8s: --snapshot writes a decide snapshot that decide accepts") {
  const fs::path d = testutil::fresh_dir("import-k8s-snap");
  fs::create_directories(d);
  const std::string snap = (d / "snap.json").string();
  auto r = testutil::run_command(k8s_bin + " import k8s " + k8s_dir + "cluster/nodes.json " + k8s_dir + "running --snapshot " + snap,
                                 "import-k8s-snap");
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  auto dec = testutil::run_command(k8s_bin + " decide < " + snap, "import-k8s-decide");
  REQUIRE(dec.status == 0);
  CHECK(dec.err.empty());
  // sft holds one GPU on each node: 7 + 7 free, eval's one 8-GPU replica fits nowhere
  CHECK(dec.out.find(R"({"task":"eval","code":"waits_for_fragmentation")") != std::string::npos);
  CHECK(dec.out.find(R"("placements": [])") != std::string::npos);
}

TEST_CASE("import k8s: bad input exits 2 with one FILE: PATH: VALUE: RULE line and writes nothing") {
  const fs::path d = testutil::fresh_dir("import-k8s-bad");
  fs::create_directories(d);
  const std::string m = (d / "node.yaml").string();
  std::ofstream(m) << "kind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {nvidia.com/gpu: 65}\n";
  const std::string s = (d / "s.json").string();
  auto r = testutil::run_command(k8s_bin + " import k8s " + m + " --out " + s, "import-k8s-bad");
  CHECK(r.status == 2);
  CHECK(r.err == m + ": Node/n1.status.allocatable.nvidia.com/gpu: 65: must be a whole number of GPUs from 0 to 64\n");
  CHECK_FALSE(fs::exists(s));
}

TEST_CASE("import k8s: without --out or --snapshot exits 2") {
  auto r = testutil::run_command(k8s_bin + " import k8s " + k8s_dir + "cluster", "import-k8s-noout");
  CHECK(r.status == 2);
  CHECK(r.err == "schedsim import k8s: give --out S.json, --snapshot OUT.json or both\n");
}

}  // namespace SCHEDSIM_UNITY_ID
