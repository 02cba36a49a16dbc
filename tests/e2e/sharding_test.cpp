// Sharded sweeps seen from the CLI (docs/sharding.md): `sweep|fill --shard I/N`, `merge`,
// `--emit slurm|k8s`, and the shards run locally under GNU parallel. The Slurm run itself is
// tests/slurm/slurm_test.sh.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

using testutil::slurp;
using json = nlohmann::json;

testutil::CommandResult schedsim(const std::string& args) {
  return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "sharding");
}

fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("sharding-" + name);
  fs::create_directories(d);
  return d;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

/// A deterministic scenario of `tasks` one-node (or two-node) PyTorchJobs arriving 30 s apart on
/// 2 nodes of pool `p`.
fs::path write_sweep_scenario(const fs::path& dir) {
  std::string t;
  for (int i = 0; i < 6; ++i)
    t += fmt::format(R"({}{{"name": "t{}", "user": "u{}", "submit_s": {}, "type": "PyTorchJob", "workers": {},
      "specs": ["a100.8x"], "resource_type": "pay_as_you_go", "pool": "p", "duration_s": {}}})",
                     i ? ",\n    " : "", i, i % 2, 30 * i, i % 2, 600 + 120 * i);
  const fs::path p = dir / "s.json";
  std::ofstream(p) << fmt::format(R"({{
  "schema": "schedsim/v1", "name": "shards", "seed": 7,
  "cluster": {{"name": "c", "region": "r",
    "instance_specs": [{{"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}}],
    "pools": [{{"name": "p", "kind": "shared",
      "node_groups": [{{"prefix": "n-", "count": 2, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}}]}}]}},
  "scheduler": {{"placement": "best-fit", "queueing": "greedy"}},
  "tasks": [
    {}
  ]
}}
)",
                                  t);
  return p;
}

/// 3 x 2 = 6 grid points, 2 seeds each.
const std::string k_grid =
    " --vary 'cluster.pools[p].node_groups[0].count=2..4' --vary 'scheduler.placement=best-fit,first-fit' --seeds 2 --no-progress";

/// An openb trace (3 nodes, 5 pods) and a scenario whose workload it is.
fs::path write_fill_scenario(const fs::path& dir) {
  std::ofstream(dir / "nodes.csv") << "sn,cpu_milli,memory_mib,gpu,model\n"
                                      "n0,64000,262144,8,V100\nn1,64000,262144,8,V100\nn2,32000,131072,4,T4\n";
  std::ofstream(dir / "pods.csv")
      << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
         "p0,4000,16384,1,1000,,LS,Running,0,100,0\np1,2000,8192,1,500,,LS,Running,1,100,1\n"
         "p2,8000,32768,2,1000,,LS,Running,2,100,2\np3,1000,4096,1,250,,LS,Running,3,100,3\n"
         "p4,4000,8192,0,0,,LS,Running,4,100,4\n";
  const fs::path p = dir / "f.json";
  std::ofstream(p) << R"({"schema": "schedsim/v1", "name": "fill", "seed": 1,
    "cluster": {"name": "c", "region": "r", "instance_specs": [], "pools": [{"name": "p", "kind": "shared", "node_groups": []}]},
    "traces": [{"format": "openb", "path": ")"
                   << (dir / "pods.csv").string() << R"(", "nodes": ")" << (dir / "nodes.csv").string()
                   << R"(", "pool": "p"}], "tasks": []})";
  return p;
}

/// 3 policies x 3 seeds = 9 runs.
const std::string k_fill_grid = " --policies fgd,best-fit,random --seeds 3";

/// Runs shards 0..n-1 of `command` into dir/shard-I (with `extra` options) and merges them, in
/// reverse order, into dir/merged. Returns the merge's result.
testutil::CommandResult shard_and_merge(const std::string& command, const fs::path& dir, int n, const std::string& extra) {
  std::string folders;
  for (int i = n - 1; i >= 0; --i) {
    const fs::path d = dir / fmt::format("shard-{}", i);
    const auto r = schedsim(fmt::format("{} --shard {}/{} --out {}{}", command, i, n, d.string(), extra));
    INFO(r.err);
    REQUIRE(r.status == 0);
    REQUIRE(fs::exists(d / "shard.json"));
    CHECK_FALSE(fs::exists(d / "sweep.csv"));
    CHECK_FALSE(fs::exists(d / "fill.csv"));
    (folders += ' ') += d.string();
  }
  return schedsim("merge" + folders + " --out " + (dir / "merged").string());
}

// ---------------------------------------------------------------- a small YAML reader for the manifests

/// The block YAML subset the manifests use: mappings, sequences (also at the key's indent),
/// `- key: value` items, plain and double-quoted scalars, JSON-style flow sequences, comments.
/// Plain integers become numbers. Throws on anything else.
class MiniYaml {
 public:
  static json parse(const std::string& text) {
    MiniYaml y;
    for (const auto& raw : lines_of(text)) {
      const auto first = raw.find_first_not_of(' ');
      if (first == std::string::npos || raw[first] == '#' || raw == "---") continue;
      y.lines_.push_back({int(first), raw.substr(first)});
    }
    std::size_t i = 0;
    json v = y.block(i, 0);
    if (i != y.lines_.size()) throw std::runtime_error("unparsed line: " + y.lines_[i].text);
    return v;
  }

 private:
  struct Line {
    int indent;
    std::string text;
  };
  std::vector<Line> lines_;

  static bool is_item(const std::string& t) { return t == "-" || t.rfind("- ", 0) == 0; }
  static json scalar(const std::string& s) {
    if (s.empty()) return nullptr;
    if (s.front() == '"' || s.front() == '[') return json::parse(s);
    if (std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::stoll(s);
    if (s.find(": ") != std::string::npos || s.front() == '{' || s.front() == '\'') throw std::runtime_error("unsupported: " + s);
    return s;
  }
  json block(std::size_t& i, int indent) {
    if (i >= lines_.size()) return nullptr;
    return is_item(lines_[i].text) ? sequence(i, indent) : mapping(i, indent);
  }
  json sequence(std::size_t& i, int indent) {
    json seq = json::array();
    while (i < lines_.size() && lines_[i].indent == indent && is_item(lines_[i].text)) {
      const std::string rest = lines_[i].text.size() > 2 ? lines_[i].text.substr(2) : "";
      if (rest.empty()) {
        ++i;
        seq.push_back(block(i, lines_[i].indent));
      } else if (rest.front() != '"' && rest.front() != '[' && (rest.find(": ") != std::string::npos || rest.back() == ':')) {
        lines_[i] = {indent + 2, rest};  // `- key: value` opens a mapping at indent + 2
        seq.push_back(mapping(i, indent + 2));
      } else {
        seq.push_back(scalar(rest));
        ++i;
      }
    }
    return seq;
  }
  json mapping(std::size_t& i, int indent) {
    json map = json::object();
    while (i < lines_.size() && lines_[i].indent == indent && !is_item(lines_[i].text)) {
      const std::string& t = lines_[i].text;
      const auto colon = t.find(": ");
      std::string key = colon == std::string::npos ? t.substr(0, t.size() - 1) : t.substr(0, colon);
      if (colon == std::string::npos && t.back() != ':') throw std::runtime_error("not key: value: " + t);
      if (map.contains(key)) throw std::runtime_error("duplicate key " + key);
      const std::string value = colon == std::string::npos ? "" : t.substr(colon + 2);
      ++i;
      if (!value.empty()) {
        map[key] = scalar(value);
      } else if (i < lines_.size() && (lines_[i].indent > indent || (lines_[i].indent == indent && is_item(lines_[i].text)))) {
        map[key] = block(i, lines_[i].indent);
      } else {
        map[key] = nullptr;
      }
    }
    return map;
  }
};

}  // namespace

TEST_CASE("sweep --shard I/N then merge gives the unsharded sweep.csv and sweep_summary.csv byte for byte", "[sharding]") {
  const fs::path w = work_dir("sweep");
  const fs::path s = write_sweep_scenario(w);
  const auto full = schedsim("sweep " + s.string() + k_grid + " --out " + (w / "full").string());
  INFO(full.err);
  REQUIRE(full.status == 0);
  const std::string csv = slurp(w / "full" / "sweep.csv");
  const std::string summary = slurp(w / "full" / "sweep_summary.csv");
  REQUIRE(lines_of(csv).size() == 1 + 6 * 2);
  // N = 1, 2, 3 and N = 7 > 6 points (shard 6 is empty); --jobs inside the shards too.
  for (const auto& [n, extra] : std::vector<std::pair<int, std::string>>{{1, ""}, {2, " --jobs 2"}, {3, ""}, {7, " --jobs 2"}}) {
    DYNAMIC_SECTION("N = " << n << extra) {
      const fs::path d = w / fmt::format("n{}", n);
      const auto m = shard_and_merge("sweep " + s.string() + k_grid, d, n, extra);
      INFO(m.err);
      REQUIRE(m.status == 0);
      CHECK(slurp(d / "merged" / "sweep.csv") == csv);
      CHECK(slurp(d / "merged" / "sweep_summary.csv") == summary);
      CHECK(m.out.rfind("schedsim sweep: 6 points x 2 seeds (7 .. 8)", 0) == 0);  // the unsharded table
      if (n == 3) {  // shard 1 of 3: the points p with p mod 3 = 1
        const auto j = json::parse(slurp(d / "shard-1" / "shard.json"));
        CHECK(j["schema"] == "schedsim/shard/v1");
        CHECK(j["command"] == "sweep");
        CHECK(j["shard"] == 1);
        CHECK(j["shards"] == 3);
        REQUIRE(j["runs"].size() == 4);  // points 1 and 4, 2 seeds each
        CHECK(j["runs"][0]["point"] == 1);
        CHECK(j["runs"][2]["point"] == 4);
      }
      if (n == 7) CHECK(json::parse(slurp(d / "shard-6" / "shard.json"))["runs"].empty());  // no point 6
    }
  }
  fs::remove_all(w);
}

TEST_CASE("fill --shard I/N then merge gives the unsharded fill files byte for byte", "[sharding]") {
  const fs::path w = work_dir("fill");
  const fs::path s = write_fill_scenario(w);
  const auto full = schedsim("fill " + s.string() + k_fill_grid + " --out " + (w / "full").string());
  INFO(full.err);
  REQUIRE(full.status == 0);
  for (int n : {1, 2, 4, 10}) {  // 10 > 9 runs
    DYNAMIC_SECTION("N = " << n) {
      const fs::path d = w / fmt::format("n{}", n);
      const auto m = shard_and_merge("fill " + s.string() + k_fill_grid, d, n, "");
      INFO(m.err);
      REQUIRE(m.status == 0);
      CHECK(slurp(d / "merged" / "fill.csv") == slurp(w / "full" / "fill.csv"));
      CHECK(slurp(d / "merged" / "fill_curves.csv") == slurp(w / "full" / "fill_curves.csv"));
      CHECK(slurp(d / "merged" / "fill_summary.csv") == slurp(w / "full" / "fill_summary.csv"));
    }
  }
  SECTION("one run: fill.csv only, as unsharded") {
    const auto one = schedsim("fill " + s.string() + " --out " + (w / "one").string());
    REQUIRE(one.status == 0);
    const auto m = shard_and_merge("fill " + s.string(), w / "one-sharded", 1, "");
    INFO(m.err);
    REQUIRE(m.status == 0);
    CHECK(slurp(w / "one-sharded" / "merged" / "fill.csv") == slurp(w / "one" / "fill.csv"));
    CHECK_FALSE(fs::exists(w / "one-sharded" / "merged" / "fill_summary.csv"));
  }
  fs::remove_all(w);
}

TEST_CASE("merge refuses a missing shard, naming its index, and writes nothing", "[sharding]") {
  const fs::path w = work_dir("missing");
  const fs::path s = write_sweep_scenario(w);
  for (int i = 0; i < 3; ++i)
    REQUIRE(schedsim(fmt::format("sweep {}{} --shard {}/3 --out {}", s.string(), k_grid, i, (w / fmt::format("s{}", i)).string())).status == 0);
  const auto r = schedsim("merge " + (w / "s0").string() + " " + (w / "s2").string() + " --out " + (w / "m").string());
  CHECK(r.status == 2);
  CHECK(r.err == "schedsim merge: shard: 1: missing: shard 1 of 3 is in none of the folders given\n");
  CHECK_FALSE(fs::exists(w / "m"));
  fs::remove_all(w);
}

TEST_CASE("merge refuses a duplicated shard, naming both folders", "[sharding]") {
  const fs::path w = work_dir("dup");
  const fs::path s = write_sweep_scenario(w);
  for (int i = 0; i < 2; ++i)
    REQUIRE(schedsim(fmt::format("sweep {}{} --shard {}/2 --out {}", s.string(), k_grid, i, (w / fmt::format("s{}", i)).string())).status == 0);
  REQUIRE(schedsim(fmt::format("sweep {}{} --shard 1/2 --out {}", s.string(), k_grid, (w / "again").string())).status == 0);
  const auto r = schedsim(fmt::format("merge {} {} {} --out {}", (w / "s0").string(), (w / "s1").string(), (w / "again").string(),
                                      (w / "m").string()));
  CHECK(r.status == 2);
  CHECK(r.err == fmt::format("{}: shard: 1: duplicated: shard 1 of 2 is also in {}\n", (w / "again" / "shard.json").string(),
                             (w / "s1" / "shard.json").string()));
  CHECK_FALSE(fs::exists(w / "m"));
  fs::remove_all(w);
}

TEST_CASE("merge refuses shards of different sweeps or shard counts, naming the folder", "[sharding]") {
  const fs::path w = work_dir("mixed");
  const fs::path s = write_sweep_scenario(w);
  const auto shard = [&](const std::string& spec, const std::string& name, const std::string& extra) {
    const auto r = schedsim(fmt::format("sweep {}{}{} --shard {} --out {}", s.string(), k_grid, extra, spec, (w / name).string()));
    INFO(r.err);
    REQUIRE(r.status == 0);
    return (w / name).string();
  };
  const std::string a0 = shard("0/2", "a0", ""), a1 = shard("1/2", "a1", "");
  SECTION("another seed") {
    const std::string b1 = shard("1/2", "b1", " --seed 99");
    const auto r = schedsim("merge " + a0 + " " + b1 + " --out " + (w / "m").string());
    CHECK(r.status == 2);
    CHECK(r.err.rfind(b1 + "/shard.json: fingerprint: \"", 0) == 0);
    CHECK(r.err.find("a shard of a different sweep than " + a0 + "/shard.json") != std::string::npos);
  }
  SECTION("another scenario value") {
    const std::string b1 = shard("1/2", "b1", " --set scheduler.queueing=strict");
    const auto r = schedsim("merge " + a0 + " " + b1 + " --out " + (w / "m").string());
    CHECK(r.status == 2);
    CHECK(r.err.find(b1 + "/shard.json: fingerprint:") != std::string::npos);
  }
  SECTION("another shard count") {
    const std::string c1 = shard("1/3", "c1", ""), c2 = shard("2/3", "c2", "");
    const auto r = schedsim("merge " + a0 + " " + a1 + " " + c1 + " " + c2 + " --out " + (w / "m").string());
    CHECK(r.status == 2);
    CHECK(r.err.find(c1 + "/shard.json: shards: 3: the sweep was cut into 2 shards in " + a0 + "/shard.json") != std::string::npos);
  }
  SECTION("a fill shard among sweep shards") {
    const fs::path f = write_fill_scenario(w);
    REQUIRE(schedsim("fill " + f.string() + k_fill_grid + " --shard 1/2 --out " + (w / "f1").string()).status == 0);
    const auto r = schedsim("merge " + a0 + " " + (w / "f1").string() + " --out " + (w / "m").string());
    CHECK(r.status == 2);
    CHECK(r.err.find((w / "f1" / "shard.json").string() + ": command: \"fill\": a shard of `fill`, not of `sweep`") != std::string::npos);
  }
  SECTION("a folder that is not a shard") {
    fs::create_directories(w / "plain");
    const auto r = schedsim("merge " + a0 + " " + a1 + " " + (w / "plain").string() + " " + (w / "nowhere").string() + " --out " +
                            (w / "m").string());
    CHECK(r.status == 2);
    CHECK(r.err.find((w / "plain" / "shard.json").string() + ": missing: not a shard folder") != std::string::npos);
    CHECK(r.err.find((w / "nowhere").string() + ": not a shard folder: no such directory") != std::string::npos);
  }
  SECTION("a shard.json whose runs do not match its share") {
    auto j = nlohmann::ordered_json::parse(slurp(w / "a1" / "shard.json"));
    j["runs"].erase(0);
    std::ofstream(w / "a1" / "shard.json") << j.dump();
    const auto r = schedsim("merge " + a0 + " " + a1 + " --out " + (w / "m").string());
    CHECK(r.status == 2);
    CHECK(r.err == a1 + "/shard.json: runs: 5 runs (expected 6): does not match shard 1 of 2 of a grid of 6 points x 2 seeds\n");
  }
  CHECK_FALSE(fs::exists(w / "m"));
  fs::remove_all(w);
}

TEST_CASE("bad --shard values exit 2 with one line naming the value, before any simulation", "[sharding]") {
  const fs::path w = work_dir("bad-shard");
  const fs::path s = write_sweep_scenario(w);
  const fs::path f = write_fill_scenario(w);
  for (const char* bad : {"0/0", "3/2", "-1/2", "a/b", "3", "1/"}) {
    INFO(bad);
    const auto r = schedsim(fmt::format("sweep {}{} --shard '{}' --out {}", s.string(), k_grid, bad, (w / "o").string()));
    CHECK(r.status == 2);
    CHECK(lines_of(r.err).size() == 1);
    CHECK(r.err.rfind(std::string("--shard: ") + bad + ": ", 0) == 0);
    const auto rf = schedsim(fmt::format("fill {}{} --shard '{}' --out {}", f.string(), k_fill_grid, bad, (w / "o").string()));
    CHECK(rf.status == 2);
    CHECK(rf.err == r.err);
  }
  const auto e = schedsim(fmt::format("sweep {}{} --shard 0/2 --emit slurm --out {}", s.string(), k_grid, (w / "o").string()));
  CHECK(e.status == 2);
  CHECK(e.err == "--shard: 0/2: not with --emit (each emitted job passes its own --shard)\n");
  const auto n = schedsim(fmt::format("sweep {}{} --shards 4 --out {}", s.string(), k_grid, (w / "o").string()));
  CHECK(n.status == 2);
  CHECK(n.err == "--shards: 4: only with --emit slurm|k8s (--shard I/N runs one shard)\n");
  const auto img = schedsim(fmt::format("sweep {}{} --emit slurm --image x --out {}", s.string(), k_grid, (w / "o").string()));
  CHECK(img.status == 2);
  CHECK_FALSE(fs::exists(w / "o"));
  fs::remove_all(w);
}

TEST_CASE("--emit slurm writes a job array of N one-core shards, a merge job after it and submit.sh", "[sharding]") {
  const fs::path w = work_dir("slurm");
  const fs::path s = write_sweep_scenario(w);
  const auto r = schedsim(fmt::format("sweep {}{} --jobs 2 --emit slurm --out {}", s.string(), k_grid, (w / "e").string()));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::string shards = slurp(w / "e" / "slurm-shards.sbatch");
  const std::string merge = slurp(w / "e" / "slurm-merge.sbatch");
  const std::string submit = slurp(w / "e" / "submit.sh");
  CHECK(shards.rfind("#!/bin/bash\n", 0) == 0);
  CHECK(shards.find("\n#SBATCH --array=0-5\n") != std::string::npos);  // default: min(6 points, 64) shards
  CHECK(shards.find("\n#SBATCH --cpus-per-task=1\n") != std::string::npos);
  std::smatch mem;
  REQUIRE(std::regex_search(shards, mem, std::regex("\n#SBATCH --mem=([0-9]+)M\n")));
  CHECK(std::stoi(mem[1]) >= 256);
  CHECK(std::stoi(mem[1]) % 64 == 0);
  CHECK(shards.find("\ni=\"${SLURM_ARRAY_TASK_ID:?") != std::string::npos);
  const auto exec = shards.substr(shards.find("\nexec "));
  CHECK(exec.find("--shard \"$i/6\" --out ") != std::string::npos);
  CHECK(exec.find(" sweep " + s.string() + " --vary 'cluster.pools[p].node_groups[0].count=2..4'") != std::string::npos);
  CHECK(exec.find("--jobs") == std::string::npos);  // one core per shard
  CHECK(exec.find("--emit") == std::string::npos);
  CHECK(merge.find(" merge ") != std::string::npos);
  CHECK(merge.find("/shards/shard-5 --out ") != std::string::npos);
  CHECK(merge.find("\n#SBATCH --kill-on-invalid-dep=yes\n") != std::string::npos);
  CHECK(submit.find("sbatch --parsable \"$@\" \"$here/slurm-shards.sbatch\"") != std::string::npos);
  CHECK(submit.find("--dependency=afterok:\"$array\" \"$here/slurm-merge.sbatch\"") != std::string::npos);
  CHECK((fs::status(w / "e" / "submit.sh").permissions() & fs::perms::owner_exec) != fs::perms::none);
  CHECK(fs::is_directory(w / "e" / "logs"));
  CHECK(r.out.find("6 points in 6 shards") != std::string::npos);
  // --shards N sets the array; the script runs under sh syntax check.
  const auto r4 = schedsim(fmt::format("sweep {}{} --emit slurm --shards 4 --out {}", s.string(), k_grid, (w / "e4").string()));
  REQUIRE(r4.status == 0);
  CHECK(slurp(w / "e4" / "slurm-shards.sbatch").find("\n#SBATCH --array=0-3\n") != std::string::npos);
  for (const char* f : {"slurm-shards.sbatch", "slurm-merge.sbatch", "submit.sh"})
    CHECK(testutil::run_command("bash -n " + (w / "e4" / f).string(), "sharding-bash").status == 0);
  // A bad grid is refused before anything is written.
  const auto bad = schedsim(fmt::format("sweep {} --vary 'cluster.pools[9].node_groups[0].count=1,2' --seeds 1 --emit slurm --out {}",
                                        s.string(), (w / "bad").string()));
  CHECK(bad.status == 2);
  CHECK_FALSE(fs::exists(w / "bad"));
  // --out naming a file is an input error, as for sweep.
  std::ofstream(w / "file") << "x";
  const auto file = schedsim(fmt::format("sweep {}{} --emit slurm --out {}", s.string(), k_grid, (w / "file").string()));
  CHECK(file.status == 2);
  CHECK(file.err == fmt::format("schedsim sweep: --out: {}: exists and is not a directory\n", (w / "file").string()));
  fs::remove_all(w);
}

TEST_CASE("--emit k8s writes an Indexed Job of N shards with one CPU and the memory estimate, and a merge Job", "[sharding]") {
  const fs::path w = work_dir("k8s");
  const fs::path s = write_sweep_scenario(w);
  const auto r = schedsim(fmt::format("sweep {}{} --emit k8s --shards 4 --image reg.example/schedsim:1 --out {}", s.string(), k_grid,
                                      (w / "k").string()));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json volume = MiniYaml::parse(slurp(w / "k" / "k8s-volume.yaml"));
  const json job = MiniYaml::parse(slurp(w / "k" / "k8s-shards.yaml"));
  const json merge = MiniYaml::parse(slurp(w / "k" / "k8s-merge.yaml"));
  CHECK(volume["kind"] == "PersistentVolumeClaim");
  CHECK(volume["spec"]["accessModes"] == json::array({"ReadWriteMany"}));
  const std::string claim = volume["metadata"]["name"];

  CHECK(job["apiVersion"] == "batch/v1");
  CHECK(job["kind"] == "Job");
  CHECK(job["spec"]["completionMode"] == "Indexed");
  CHECK(job["spec"]["completions"] == 4);
  CHECK(job["spec"]["parallelism"] == 4);
  const json& pod = job["spec"]["template"]["spec"];
  CHECK(pod["restartPolicy"] == "Never");
  REQUIRE(pod["containers"].size() == 1);
  const json& c = pod["containers"][0];
  CHECK(c["image"] == "reg.example/schedsim:1");
  CHECK(c["command"] == json::array({"schedsim"}));
  const auto& args = c["args"];
  REQUIRE(args.size() >= 5);
  CHECK(args[0] == "sweep");
  CHECK(args[1] == s.string());
  const auto shard_at = std::find(args.begin(), args.end(), "--shard");
  REQUIRE(shard_at != args.end());
  CHECK(*(shard_at + 1) == "$(JOB_COMPLETION_INDEX)/4");
  const auto out_at = std::find(args.begin(), args.end(), "--out");
  REQUIRE(out_at != args.end());
  CHECK(*(out_at + 1) == "/out/shards/shard-$(JOB_COMPLETION_INDEX)");
  REQUIRE(c["env"].size() == 1);
  CHECK(c["env"][0]["name"] == "JOB_COMPLETION_INDEX");
  CHECK(c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.annotations['batch.kubernetes.io/job-completion-index']");
  CHECK(c["resources"]["requests"]["cpu"] == "1");
  CHECK(c["resources"]["limits"]["cpu"] == "1");
  const std::string memory = c["resources"]["requests"]["memory"];
  CHECK(c["resources"]["limits"]["memory"] == memory);
  std::smatch m;
  REQUIRE(std::regex_match(memory, m, std::regex("([0-9]+)Mi")));
  CHECK(std::stoi(m[1]) >= 256);
  CHECK(c["volumeMounts"][0]["name"] == pod["volumes"][0]["name"]);
  CHECK(c["volumeMounts"][0]["mountPath"] == "/out");
  CHECK(pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim);

  CHECK(merge["kind"] == "Job");
  CHECK(merge["spec"]["completions"] == 1);
  const json& mc = merge["spec"]["template"]["spec"]["containers"][0];
  CHECK(mc["args"] == json::array({"merge", "/out/shards/shard-0", "/out/shards/shard-1", "/out/shards/shard-2", "/out/shards/shard-3",
                                   "--out", "/out/merged"}));
  CHECK(merge["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim);
  const std::string submit = slurp(w / "k" / "submit.sh");
  CHECK(submit.find("kubectl \"$@\" wait --for=condition=complete") != std::string::npos);

  // fill emits the same kind of Job, with its own arguments.
  const fs::path f = write_fill_scenario(w);
  REQUIRE(schedsim("fill " + f.string() + k_fill_grid + " --emit k8s --out " + (w / "kf").string()).status == 0);
  const json fj = MiniYaml::parse(slurp(w / "kf" / "k8s-shards.yaml"));
  CHECK(fj["spec"]["completions"] == 9);  // 3 policies x 3 seeds
  CHECK(fj["spec"]["template"]["spec"]["containers"][0]["args"][0] == "fill");
  fs::remove_all(w);
}

TEST_CASE("the shards run locally under GNU parallel and merge to the unsharded sweep", "[sharding]") {
  const fs::path w = work_dir("parallel");
  const fs::path s = write_sweep_scenario(w);
  REQUIRE(schedsim("sweep " + s.string() + k_grid + " --out " + (w / "full").string()).status == 0);
  const auto p = testutil::run_command(fmt::format("(cd {} && parallel --will-cite -j 2 {} sweep {}{} --shard {{}}/4 --out out/shard-{{}} ::: "
                                                   "0 1 2 3 && {} merge out/shard-* --out out/merged)",
                                                   w.string(), SCHEDSIM_BINARY, s.string(), k_grid, SCHEDSIM_BINARY),
                                       "sharding-parallel");
  INFO(p.err);
  REQUIRE(p.status == 0);
  CHECK(slurp(w / "out" / "merged" / "sweep.csv") == slurp(w / "full" / "sweep.csv"));
  CHECK(slurp(w / "out" / "merged" / "sweep_summary.csv") == slurp(w / "full" / "sweep_summary.csv"));
  fs::remove_all(w);
}

}  // namespace SCHEDSIM_UNITY_ID
