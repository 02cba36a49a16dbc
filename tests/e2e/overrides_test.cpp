// `--set`, `--placement`, `--queueing`, scenario.resolved.json and `show-default` seen from the
// CLI (docs/scenario-format.md "Overrides", docs/outputs.md "scenario.resolved.json").
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

using testutil::slurp;

struct Result {
  int status = -1;
  std::string out, err;
};

/// Runs `schedsim ARGS`, capturing stdout and stderr.
Result schedsim(const std::string& args) {
  const fs::path base = fs::temp_directory_path() / ("schedsim-overrides-" + std::to_string(::getpid()));
  const std::string cmd = std::string(SCHEDSIM_BINARY) + " " + args + " >" + base.string() + ".out 2>" + base.string() + ".err";
  const int st = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = slurp(base.string() + ".out");
  r.err = slurp(base.string() + ".err");
  fs::remove(base.string() + ".out");
  fs::remove(base.string() + ".err");
  return r;
}

fs::path work_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("schedsim-overrides-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// Every file of an output directory: name -> content.
std::map<std::string, std::string> files(const fs::path& d) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::directory_iterator(d)) m[e.path().filename().string()] = slurp(e.path());
  return m;
}

const std::string k_what_if = std::string(SCHEDSIM_SOURCE_DIR) + "/scenarios/what-if-capacity.json";

}  // namespace

TEST_CASE("run --set changes the scenario that runs and scenario.resolved.json records it") {
  const fs::path w = work_dir("set");
  auto base = schedsim("run " + k_what_if + " --no-progress --out " + (w / "base").string());
  REQUIRE(base.status == 0);
  auto more = schedsim("run " + k_what_if + " --no-progress --out " + (w / "more").string() +
                       " --set 'cluster.pools[llm-h800].node_groups[prefix=h800-].count=10' --set 'quotas[pool=llm-h800].gpus=80'" +
                       " --set 'quotas[pool=llm-h800].vcpu=1280' --set 'quotas[pool=llm-h800].memory_gib=16000'");
  INFO(more.err);
  REQUIRE(more.status == 0);
  const auto resolved = nlohmann::json::parse(slurp(w / "more" / "scenario.resolved.json"));
  CHECK(resolved["cluster"]["pools"][1]["node_groups"][0]["count"] == 10);
  CHECK(resolved["quotas"][0]["gpus"] == 80);
  CHECK(resolved["quotas"][0]["vcpu"] == 1280);
  const auto a = nlohmann::json::parse(slurp(w / "base" / "summary.json"));
  const auto b = nlohmann::json::parse(slurp(w / "more" / "summary.json"));
  // Two more H800 nodes and the quota for them: llm-sft no longer waits for the pretraining run.
  CHECK(a["mean_wait_s"].get<double>() > 0);
  CHECK(b["mean_wait_s"].get<double>() == 0);
  fs::remove_all(w);
}

TEST_CASE("running scenario.resolved.json reproduces a run with overrides, seed and until byte for byte") {
  const fs::path w = work_dir("resolved");
  auto first = schedsim("run " + k_what_if + " --no-progress --out " + (w / "a").string() +
                        " --seed 5 --until 20000 --set tasks[llm-sft].priority=9 --placement worst-fit --queueing backfill");
  INFO(first.err);
  REQUIRE(first.status == 0);
  const auto resolved = nlohmann::json::parse(slurp(w / "a" / "scenario.resolved.json"));
  CHECK(resolved["seed"] == 5);
  CHECK(resolved["until_s"] == 20000);
  CHECK(resolved["scheduler"]["placement"] == "worst-fit");
  CHECK(resolved["scheduler"]["queueing"] == "backfill");
  CHECK(resolved["tasks"][1]["priority"] == 9);
  auto again = schedsim("run " + (w / "a" / "scenario.resolved.json").string() + " --no-progress --out " + (w / "b").string());
  INFO(again.err);
  REQUIRE(again.status == 0);
  const auto fa = files(w / "a"), fb = files(w / "b");
  CHECK(fa.size() == 7);
  for (const auto& [name, content] : fa) {
    INFO(name);
    REQUIRE(fb.count(name) == 1);
    CHECK(fb.at(name) == content);
  }
  fs::remove_all(w);
}

TEST_CASE("show-default prints the scenario that run without a scenario runs: same outputs byte for byte") {
  const fs::path w = work_dir("default");
  for (const std::string seed : {"", " --seed 3"}) {
    INFO("seed option: '" << seed << "'");
    auto show = schedsim("show-default" + seed);
    REQUIRE(show.status == 0);
    { std::ofstream(w / "my.json") << show.out; }
    REQUIRE(schedsim("run --no-progress --out " + (w / "a").string() + seed).status == 0);
    auto r = schedsim("run " + (w / "my.json").string() + " --no-progress --out " + (w / "b").string());
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto fa = files(w / "a"), fb = files(w / "b");
    CHECK(fa.size() == 7);
    CHECK(fa == fb);
    CHECK(fa.at("scenario.resolved.json") == show.out);
    fs::remove_all(w / "a");
    fs::remove_all(w / "b");
  }
  fs::remove_all(w);
}

TEST_CASE("--set on the default scenario is applied to the generated scenario") {
  const fs::path w = work_dir("default-set");
  auto r = schedsim("run --no-progress --out " + (w / "o").string() +
                    " --set 'cluster.pools[dedicated-h800].node_groups[0].count=30' --placement first-fit");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto resolved = nlohmann::json::parse(slurp(w / "o" / "scenario.resolved.json"));
  CHECK(resolved["cluster"]["pools"][1]["node_groups"][0]["count"] == 30);
  CHECK(resolved["scheduler"]["placement"] == "first-fit");
  CHECK(resolved["tasks"].size() == 300);
  fs::remove_all(w);
}

TEST_CASE("a --set path that leads nowhere exits 2 naming the override, and nothing is written") {
  const fs::path w = work_dir("bad-path");
  auto r = schedsim("run " + k_what_if + " --no-progress --out " + (w / "o").string() +
                    " --set 'cluster.pools[9].node_groups[0].count=10'");
  CHECK(r.status == 2);
  CHECK(r.err == "--set: cluster.pools[9].node_groups[0].count: 10: cluster.pools[9]: no such element (cluster.pools has 2 "
                 "elements)\n");
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("a --set value that breaks a rule exits 2 with FILE: PATH: VALUE: RULE and the override") {
  auto r = schedsim("validate " + k_what_if + " --set tasks[llm-sft].priority=12");
  CHECK(r.status == 2);
  CHECK(r.err == k_what_if + ": tasks[1].priority: 12: must be between 1 and 9 (from --set tasks[llm-sft].priority=12)\n");
  r = schedsim("run " + k_what_if + " --no-progress --out /tmp/schedsim-never --placement no-such-policy");
  CHECK(r.status == 2);
  CHECK(r.err.find("scheduler.placement: \"no-such-policy\"") != std::string::npos);
  CHECK(r.err.find("(from --placement no-such-policy)") != std::string::npos);
  CHECK_FALSE(fs::exists("/tmp/schedsim-never"));
}

TEST_CASE("a --set argument without = exits 2") {
  auto r = schedsim("validate " + k_what_if + " --set seed");
  CHECK(r.status == 2);
  CHECK(r.err == "--set: seed: expected PATH=VALUE (no `=`)\n");
}

TEST_CASE("validate accepts overrides and reports the overridden scenario") {
  auto r = schedsim("validate " + k_what_if + " --set 'cluster.pools[llm-h800].node_groups[0].count=10' --queueing strict");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == k_what_if + ": ok (6 tasks, 26 nodes)\n");
}

TEST_CASE("fill accepts --set and refuses a bad one with exit 2") {
  auto r = schedsim("fill " + k_what_if + " --out /tmp/schedsim-never-fill --set 'fill.target_pct=-1'");
  CHECK(r.status == 2);
  CHECK(r.err.find("fill.target_pct: -1") != std::string::npos);
  CHECK(r.err.find("(from --set fill.target_pct=-1)") != std::string::npos);
  CHECK_FALSE(fs::exists("/tmp/schedsim-never-fill"));
}

}  // namespace SCHEDSIM_UNITY_ID
