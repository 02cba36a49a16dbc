// Hardening, round 2 (CHANGELOG "Unreleased"): generated scripts quote every value, no output is
// written over something that is not a regular file, and every JSON reader (merge, report) has
// the scenario reader's limits; merge refuses what it would otherwise turn into a wrong number.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/common/files.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;
using testutil::slurp;

namespace {

testutil::CommandResult sh(const std::string& command) { return testutil::run_command(command, "hardening-outputs"); }

std::string exe() { return SCHEDSIM_BINARY; }

/// `s` quoted for /bin/sh (the test's own quoting, to pass hostile names to the commands).
std::string q(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("hard2-" + name);
  fs::create_directories(d);
  return d;
}

/// A two-node scenario with one task: a sweep of it runs in milliseconds.
fs::path small_scenario(const fs::path& dir) {
  const fs::path p = dir / "s.json";
  std::ofstream(p) << R"({"schema": "schedsim/v1", "name": "small", "seed": 1,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "a", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}],
    "pools": [{"name": "p", "kind": "shared",
      "node_groups": [{"prefix": "n-", "count": 2, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
  "tasks": [{"name": "t", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["a"],
             "resource_type": "pay_as_you_go", "duration_s": 100}]})";
  return p;
}

const char* kGrid = " --vary 'cluster.pools[0].node_groups[0].count=1,2' --seeds 1";

std::size_t lines(const std::string& s) { return std::size_t(std::count(s.begin(), s.end(), '\n')); }

std::string deep_json() { return std::string(100000, '[') + std::string(100000, ']'); }

}  // namespace

TEST_CASE("--emit slurm: a hostile --out is quoted everywhere; submit.sh and the shard script run nothing but schedsim",
          "[hardening][sharding]") {
  const fs::path w = work_dir("emit");
  const fs::path s = small_scenario(w);
  // Spaces, both quotes, $(...), backquotes, a comment sign, a Slurm filename pattern, a ';'.
  const std::string name = "a b$(touch PWNED1)`touch PWNED2`'q\"#%x;y";
  const fs::path out = w / name;
  auto r = sh(fmt::format("cd {} && {} sweep s.json{} --emit slurm --out {}", q(w.string()), exe(), kGrid, q(out.string())));
  REQUIRE(r.status == 0);
  for (const char* f : {"slurm-shards.sbatch", "slurm-merge.sbatch", "submit.sh"})
    CHECK(sh("bash -n " + q((out / f).string())).status == 0);
  // #SBATCH arguments as sbatch's script parser reads them: double quotes, \ before \ " ' #,
  // and % doubled in the --output filename pattern.
  const std::string shards = slurp(out / "slurm-shards.sbatch");
  CHECK(shards.find(fmt::format("\n#SBATCH --chdir=\"{}\"\n", w.string())) != std::string::npos);
  CHECK(shards.find(fmt::format("\n#SBATCH --output=\"{}/a b$(touch PWNED1)`touch PWNED2`\\'q\\\"\\#%%x;y/logs/shard-%a.out\"\n",
                                w.string())) != std::string::npos);
  // submit.sh with a stand-in sbatch that records its arguments: nothing else runs.
  const fs::path bin = w / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "sbatch") << "#!/bin/sh\nprintf '%s\\n' \"$@\" >> \"$(dirname \"$0\")/calls\"\necho 42\n";
  fs::permissions(bin / "sbatch", fs::perms::owner_all);
  r = sh(fmt::format("cd {} && PATH={}:$PATH {}", q(w.string()), q(bin.string()), q((out / "submit.sh").string())));
  CHECK(r.status == 0);
  CHECK(r.out.find(fmt::format("results: {}; logs: {}/logs\n", out.string(), out.string())) != std::string::npos);
  CHECK(slurp(bin / "calls").find((out / "slurm-shards.sbatch").string()) != std::string::npos);
  // The shard script itself, as one array task: it runs shard 0 into the exact folder.
  r = sh(fmt::format("cd {} && SLURM_ARRAY_TASK_ID=0 bash {}", q(w.string()), q((out / "slurm-shards.sbatch").string())));
  CHECK(r.status == 0);
  CHECK(fs::exists(out / "shards" / "shard-0" / "shard.json"));
  for (const fs::path& d : {w, out, fs::current_path()}) {
    CHECK_FALSE(fs::exists(d / "PWNED1"));
    CHECK_FALSE(fs::exists(d / "PWNED2"));
  }
  fs::remove_all(w);
}

TEST_CASE("--emit slurm refuses a value that cannot be quoted in a #SBATCH line; --emit k8s refuses non-UTF-8",
          "[hardening][sharding]") {
  const fs::path w = work_dir("emit-bad");
  small_scenario(w);
  SECTION("--out with a newline") {
    const fs::path out = w / "x\n#SBATCH --wrap=reboot";
    auto r = sh(fmt::format("cd {} && {} sweep s.json{} --emit slurm --out {}", q(w.string()), exe(), kGrid, q(out.string())));
    CHECK(r.status == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find("control character") != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
  SECTION("a working directory with a newline") {
    const fs::path cwd = w / "c\nd";
    fs::create_directories(cwd);
    fs::copy_file(w / "s.json", cwd / "s.json");
    auto r = sh(fmt::format("cd {} && {} sweep s.json{} --emit slurm --out e", q(cwd.string()), exe(), kGrid));
    CHECK(r.status == 2);
    CHECK(lines(r.err) == 1);
    CHECK_FALSE(fs::exists(cwd / "e"));
  }
  SECTION("--image that is not UTF-8") {
    auto r = sh(fmt::format("cd {} && {} sweep s.json{} --emit k8s --image $(printf 'img\\377') --out k", q(w.string()), exe(), kGrid));
    CHECK(r.status == 2);
    CHECK(r.err.find("not valid UTF-8") != std::string::npos);
    CHECK_FALSE(fs::exists(w / "k"));
  }
  fs::remove_all(w);
}

TEST_CASE("no command writes an output over a FIFO, a device or through a link to one: exit 2, nothing replaced",
          "[hardening]") {
  const fs::path w = work_dir("nonregular");
  small_scenario(w);
  const fs::path fifo = w / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  fs::create_symlink(fifo, w / "link");
  fs::create_symlink("/dev/null", w / "null-link");
  const auto still_fifo = [&] { return fs::is_fifo(fs::symlink_status(fifo)); };
  std::ofstream(w / "t.swf") << "; MaxProcs: 4\n1 0 0 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n";
  for (const char* target : {"fifo", "link", "null-link"}) {
    auto r = sh(fmt::format("cd {} && timeout 20 {} convert --format swf --path t.swf --out {}", q(w.string()), exe(), target));
    CHECK(r.status == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find("exists and is a ") != std::string::npos);
  }
  CHECK(still_fifo());
  CHECK(fs::is_character_file("/dev/null"));
  // A file of an output folder that is a FIFO: run, sweep (and merge: the same OutputDir).
  fs::create_directories(w / "o");
  REQUIRE(::mkfifo((w / "o" / "summary.json").c_str(), 0600) == 0);
  auto r = sh(fmt::format("cd {} && timeout 20 {} run s.json --out o", q(w.string()), exe()));
  CHECK(r.status == 2);
  CHECK(r.err.find("o/summary.json: exists and is a FIFO") != std::string::npos);
  CHECK(fs::is_fifo(w / "o" / "summary.json"));
  CHECK_FALSE(fs::exists(w / "o" / "tasks.csv"));
  fs::create_directories(w / "sw");
  REQUIRE(::mkfifo((w / "sw" / "sweep.csv").c_str(), 0600) == 0);
  r = sh(fmt::format("cd {} && timeout 20 {} sweep s.json{} --out sw", q(w.string()), exe(), kGrid));
  CHECK(r.status == 2);
  CHECK(fs::is_fifo(w / "sw" / "sweep.csv"));
  // report: report.html is a FIFO.
  r = sh(fmt::format("cd {} && {} run s.json --out run", q(w.string()), exe()));
  REQUIRE(r.status == 0);
  REQUIRE(::mkfifo((w / "run" / "report.html").c_str(), 0600) == 0);
  r = sh(fmt::format("cd {} && timeout 20 {} report run", q(w.string()), exe()));
  CHECK(r.status == 2);
  CHECK(fs::is_fifo(w / "run" / "report.html"));
  fs::remove_all(w);
}

TEST_CASE("merge and report read JSON with the scenario reader's limits: depth, size, regular files", "[hardening]") {
  const fs::path w = work_dir("readers");
  small_scenario(w);
  // merge: a shard.json nested 100,000 deep, and one that is a link to /dev/zero.
  fs::create_directories(w / "deep");
  std::ofstream(w / "deep" / "shard.json") << deep_json();
  auto r = sh(fmt::format("cd {} && timeout 20 {} merge deep --out m", q(w.string()), exe()));
  CHECK(r.status == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find("deep/shard.json: line 1, column 101: malformed JSON: nested deeper than 100 levels") != std::string::npos);
  fs::create_directories(w / "zero");
  fs::create_symlink("/dev/zero", w / "zero" / "shard.json");
  r = sh(fmt::format("cd {} && timeout 20 {} merge zero --out m", q(w.string()), exe()));
  CHECK(r.status == 2);
  CHECK(r.err == "zero/shard.json: is a character device, not a shard file (a regular file is required)\n");
  CHECK_FALSE(fs::exists(w / "m"));
  // report: each input file kind nested 100,000 deep.
  for (const char* f : {"summary.json", "seeds_summary.json", "compare.json", "plan.json"}) {
    const fs::path d = w / (std::string("rep-") + f);
    fs::create_directories(d);
    std::ofstream(d / f) << deep_json();
    r = sh(fmt::format("timeout 20 {} report {}", exe(), q(d.string())));
    CHECK(r.status == 2);
    CHECK(r.err.find("nested deeper than 100 levels") != std::string::npos);
    CHECK_FALSE(fs::exists(d / "report.html"));
  }
  fs::remove_all(w);
}

TEST_CASE("merge refuses grids whose sizes overflow and runs that do not carry exactly the metric list", "[hardening][sharding]") {
  const fs::path w = work_dir("merge");
  small_scenario(w);
  auto r = sh(fmt::format("cd {} && {} sweep s.json{} --shard 0/1 --out sh", q(w.string()), exe(), kGrid));
  REQUIRE(r.status == 0);
  const std::string text = slurp(w / "sh" / "shard.json");
  const nlohmann::ordered_json good = nlohmann::ordered_json::parse(text);
  const auto with = [&](const std::function<void(nlohmann::ordered_json&)>& edit) {
    nlohmann::ordered_json j = good;
    edit(j);
    fs::create_directories(w / "bad");
    std::ofstream(w / "bad" / "shard.json", std::ios::trunc) << j.dump(2);
    return sh(fmt::format("cd {} && timeout 20 {} merge bad --out m", q(w.string()), exe()));
  };
  // The untouched shard merges.
  r = with([](auto&) {});
  REQUIRE(r.status == 0);
  fs::remove_all(w / "m");
  SECTION("63 axes of 2 values: the run count must not wrap to 0") {
    r = with([](auto& j) {
      auto axes = nlohmann::ordered_json::array();
      for (int i = 0; i < 63; ++i) axes.push_back({{"path", fmt::format("a{}", i)}, {"values", {"1", "2"}}});
      j["grid"]["axes"] = axes;
      j["grid"]["points"] = 0;
    });
    CHECK(r.status == 2);
    CHECK(r.err.find("malformed sweep grid") != std::string::npos);
  }
  SECTION("a run without one metric") {
    r = with([](auto& j) { j["runs"][1]["metrics"].erase("mean_wait_s"); });
    CHECK(r.status == 2);
    CHECK(r.err.find("runs[1].metrics: \"mean_wait_s\": missing metric") != std::string::npos);
  }
  SECTION("a run with a metric schedsim does not write") {
    r = with([](auto& j) { j["runs"][0]["metrics"]["made_up_s"] = 1; });
    CHECK(r.status == 2);
    CHECK(r.err.find("runs[0].metrics: \"made_up_s\": unknown metric") != std::string::npos);
  }
  SECTION("a metric that is a boolean, and a seed that is a float") {
    r = with([](auto& j) { j["runs"][0]["metrics"]["tasks"] = true; });
    CHECK(r.status == 2);
    r = with([](auto& j) { j["runs"][0]["seed"] = 1.5; });
    CHECK(r.status == 2);
  }
  CHECK(lines(r.err) == 1);
  CHECK_FALSE(fs::exists(w / "m"));
  fs::remove_all(w);
}

TEST_CASE("fuzz findings: merge sizes nothing by a grid its shards do not hold; report expands no more nodes than a scenario may hold",
          "[hardening]") {
  const fs::path w = work_dir("findings");
  // fill merge: a shard claiming 10,000,000 seeds with one run is refused before allocating.
  fs::create_directories(w / "f");
  std::ofstream(w / "f" / "shard.json")
      << R"({"schema": "schedsim/shard/v1", "command": "fill", "schedsim": "x", "fingerprint": "0", "shard": 0, "shards": 1,
  "grid": {"policies": ["best-fit"], "seeds": 10000000, "first_seed": 1, "target_pct": 130, "semantics": "reference"},
  "runs": [{"policy": "best-fit", "seed": 1, "seconds": 0, "rows": [[0, 0, 0, 0, 0, 0, 0]]}]})";
  auto r = sh(fmt::format("cd {} && timeout 20 {} merge f --out m", q(w.string()), exe()));
  CHECK(r.status == 2);
  CHECK(r.err.find("1 runs in 1 shards: does not match a grid of 1 policies x 10000000 seeds") != std::string::npos);
  // report: a resolved scenario with a node group of 10,000,000 nodes (the limit is 100,000).
  small_scenario(w);
  r = sh(fmt::format("cd {} && {} run s.json --out run", q(w.string()), exe()));
  REQUIRE(r.status == 0);
  auto j = nlohmann::ordered_json::parse(slurp(w / "run" / "scenario.resolved.json"));
  j["cluster"]["pools"][0]["node_groups"][0]["count"] = 10000000;
  std::ofstream(w / "run" / "scenario.resolved.json", std::ios::trunc) << j.dump();
  r = sh(fmt::format("cd {} && timeout 20 {} report run", q(w.string()), exe()));
  CHECK(r.status == 2);
  CHECK(r.err.find("node_groups[0].count: 10000000: must be an integer from 0 to 100000") != std::string::npos);
  fs::remove_all(w);
}

TEST_CASE("plan --complement reads a long integer total exactly (it was read through a dangling view)", "[hardening]") {
  const fs::path w = work_dir("complement");
  const fs::path s = small_scenario(w);
  auto r = sh(fmt::format("cd {} && {} plan s.json --vary 'cluster.pools[0].node_groups[0].count=1..2' "
                          "--complement 'cluster.pools[0].node_groups[0].count=000000000000000000004' --slo 'mean_wait_s<=600' "
                          "--seeds 1 --out p",
                          q(w.string()), exe()));
  CHECK((r.status == 0 || r.status == 2));  // an answer or a refusal; under ASan the old code died here
  CHECK(r.err.find("AddressSanitizer") == std::string::npos);
  CHECK(r.err.find("runtime error") == std::string::npos);
  fs::remove_all(w);
}

}  // namespace SCHEDSIM_UNITY_ID
