// The default scenario, determinism and the run command's outputs.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <unistd.h>

#include <chrono>
#include <set>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "builders.hpp"
#include "sim/cli/run_cli.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {
using testutil::slurp;
using testutil::fresh_dir;
const char* kFiles[] = {"tasks.csv",      "summary.json", "groups.csv", "events.jsonl",
                        "timeseries.csv", "metrics.prom", "scenario.resolved.json"};
}  // namespace

TEST_CASE("the default scenario runs to completion and uses every feature") {
  auto sc = sim::default_scenario(1);
  REQUIRE(sc.tasks.size() >= 200);
  auto t0 = std::chrono::steady_clock::now();
  sim::Simulator s(sc);
  s.run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("default scenario wall time " << wall << " s, " << s.events_processed() << " events");
  auto j = nlohmann::json::parse(s.summary_json());
  REQUIRE(j["tasks"] == sc.tasks.size());
  REQUIRE(j["succeeded"].get<int>() > 0);
  REQUIRE(j["failed"].get<int>() > 0);
  REQUIRE(j["preemptions"].get<int>() > 0);
  REQUIRE(j["resubmissions"].get<int>() > 0);
  REQUIRE(j["gpu_allocation_ratio"].get<double>() > 0);
  REQUIRE(j["gpu_allocation_ratio"].get<double>() <= 1);
  // every capacity class was used
  std::set<std::string> classes;
  for (const auto* a : s.attempts()) classes.insert(std::string(a->capacity));
  REQUIRE(classes.count("reserved"));
  REQUIRE(classes.count("pay_as_you_go"));
  REQUIRE(classes.count("spot"));
  REQUIRE(classes.count("idle"));
  // nothing is left running
  for (const auto* a : s.attempts()) REQUIRE(a->state != sim::AttemptState::running);
}

TEST_CASE("the same scenario and seed give byte-identical outputs") {
  auto sc = sim::default_scenario(3);
  fs::path a = fresh_dir("det-a"), b = fresh_dir("det-b");
  std::ostringstream out, err;
  REQUIRE(sim::run_command(sc, {a.string(), std::nullopt, std::nullopt, false}, out, err) == 0);
  REQUIRE(sim::run_command(sc, {b.string(), std::nullopt, std::nullopt, false}, out, err) == 0);
  for (const char* f : kFiles) {
    INFO(f);
    REQUIRE(fs::exists(a / f));
    REQUIRE(slurp(a / f) == slurp(b / f));
  }
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST_CASE("run_command with a moved scenario writes the files of a copied one, scenario.resolved.json derived from it") {
  auto sc = sim::default_scenario(3);
  auto moved = sc;
  fs::path a = fresh_dir("move-a"), b = fresh_dir("move-b");
  std::ostringstream out_a, out_b, err;
  REQUIRE(sim::run_command(sc, {a.string(), std::nullopt, std::nullopt, false}, out_a, err) == 0);
  REQUIRE(sim::run_command(std::move(moved), {b.string(), std::nullopt, std::nullopt, false}, out_b, err) == 0);
  for (const char* f : kFiles) {
    INFO(f);
    REQUIRE(fs::exists(b / f));
    REQUIRE(slurp(a / f) == slurp(b / f));
  }
  // The table names the scenario as before the move (the out directory differs).
  CHECK(out_b.str().substr(0, out_b.str().find('\n')) == out_a.str().substr(0, out_a.str().find('\n')));
  CHECK(out_b.str().rfind("schedsim run: " + sc.name + " (seed 3)", 0) == 0);
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST_CASE("a different seed changes the outputs") {
  fs::path a = fresh_dir("seed-a"), b = fresh_dir("seed-b");
  std::ostringstream out, err;
  auto sc = sim::default_scenario(3);
  REQUIRE(sim::run_command(sc, {a.string(), std::nullopt, std::nullopt, false}, out, err) == 0);
  REQUIRE(sim::run_command(sc, {b.string(), std::uint64_t{4}, std::nullopt, false}, out, err) == 0);
  REQUIRE(slurp(a / "summary.json") != slurp(b / "summary.json"));
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST_CASE("run_command writes every output file with the contract header and prints a summary table") {
  auto sc = simtest::cluster(1);
  sc.tasks.push_back(simtest::task("a", 0, 90.5));
  fs::path d = fresh_dir("run");
  fs::create_directories(d);  // an existing directory is filled too
  std::ostringstream out, err;
  REQUIRE(sim::run_command(sc, {d.string(), std::nullopt, std::nullopt, true}, out, err) == 0);
  std::string csv = slurp(d / "tasks.csv");
  REQUIRE(csv.rfind("task,attempt,state,submit_s,start_s,end_s,spec,nodes,reason", 0) == 0);
  REQUIRE(csv.find("a,1,Succeeded,0,0,90.5,a100.8x,a100-0,") != std::string::npos);
  auto j = nlohmann::json::parse(slurp(d / "summary.json"));
  for (const char* k : {"tasks", "succeeded", "failed", "makespan_s", "mean_wait_s", "p95_wait_s", "mean_jct_s",
                        "gpu_allocation_ratio", "preemptions", "resubmissions"})
    REQUIRE(j.contains(k));
  REQUIRE(j["makespan_s"] == 90.5);
  REQUIRE(j["gpu_allocation_ratio"] == 1.0);
  std::string prom = slurp(d / "metrics.prom");
  REQUIRE(prom.find("task_name=\"a\"") != std::string::npos);
  REQUIRE(prom.find("region=\"r1\"") != std::string::npos);
  REQUIRE(slurp(d / "events.jsonl").find("\"to\":\"Succeeded\"") != std::string::npos);
  REQUIRE(out.str().find("makespan_s") != std::string::npos);
  REQUIRE(err.str().empty());  // not a terminal: no progress line
  for (auto& e : fs::directory_iterator(d.parent_path()))
    REQUIRE(e.path().filename().string().find(d.filename().string() + ".tmp") == std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("a run that fails leaves no output directory behind") {
  auto sc = simtest::cluster(1);
  auto t = simtest::task("a", 0, 10);
  t.specs = {"no-such-spec"};
  sc.tasks.push_back(t);
  fs::path d = fresh_dir("fail");
  std::ostringstream out, err;
  REQUIRE(sim::run_command(sc, {d.string(), std::nullopt, std::nullopt, false}, out, err) == 2);  // input error
  REQUIRE_FALSE(fs::exists(d));
  REQUIRE(err.str().find("no-such-spec") != std::string::npos);
}

TEST_CASE("an --out that cannot receive every file is refused before simulating, leaving nothing partial") {
  auto sc = simtest::cluster(1);
  sc.tasks.push_back(simtest::task("a", 0, 10));
  std::ostringstream out, err;
  SECTION("--out is a regular file") {
    fs::path f = fresh_dir("outfile");
    std::ofstream(f) << "keep";
    REQUIRE(sim::run_command(sc, {f.string(), std::nullopt, std::nullopt, false}, out, err) == 2);
    REQUIRE(slurp(f) == "keep");
    REQUIRE(err.str().find("not a directory") != std::string::npos);
    fs::remove(f);
  }
  SECTION("an output file name is taken by a directory inside an existing --out") {
    fs::path d = fresh_dir("outsub");
    fs::create_directories(d / "summary.json");
    REQUIRE(sim::run_command(sc, {d.string(), std::nullopt, std::nullopt, false}, out, err) == 2);
    REQUIRE_FALSE(fs::exists(d / "tasks.csv"));
    REQUIRE(err.str().find("summary.json") != std::string::npos);
    fs::remove_all(d);
  }
  SECTION("--out is empty") {
    REQUIRE(sim::run_command(sc, {"", std::nullopt, std::nullopt, false}, out, err) == 2);
  }
}

}  // namespace SCHEDSIM_UNITY_ID
