// The lean core (issue #11): metrics.prom resolution by run size, streamed output files
// (sim::CheckedWriter), the compact event log (interned reasons) and events.jsonl's JSON text.
// The compact task table (Simulator::task_cfg) and per-task metrics one task at a time.
// The delta-encoded time series and change log (sim::SnapshotLog, sim::ChangeLog).
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <unistd.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "builders.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/cli/run_cli.hpp"
#include "sim/experiments/synthetic.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/engine/snapshot_log.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace simtest;
namespace fs = std::filesystem;

namespace {

fs::path lean_dir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("schedsim-test-lean-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// `n` one-second single-GPU tasks submitted one second apart (never queued); odd tasks are
/// alice's, even ones bob's.
sim::io::Scenario staggered(std::size_t n) {
  auto sc = cluster(1);
  for (std::size_t i = 0; i < n; ++i) {
    auto t = task(fmt::format("t{}", i), double(i), 1, 0, "a100.1x");  // (GCC 12 -Wrestrict false positive on "t" + to_string)
    t.user = i % 2 ? "alice" : "bob";
    sc.tasks.push_back(t);
  }
  return sc;
}

/// metrics.prom of a run of `sc`.
std::string prom_of(const sim::io::Scenario& sc) {
  sim::Simulator s(sc);
  s.run();
  fs::path d = lean_dir("prom");
  auto which = sim::OutputSelection::none();
  which.set(sim::Output::metrics);
  s.write_outputs(d.string(), which);
  std::string prom = testutil::slurp(d / "metrics.prom");
  fs::remove_all(d);
  return prom;
}

/// The value of the series of `metric` whose labels contain `label`.
std::string value_of(const std::vector<std::string>& lines, const std::string& metric, const std::string& label) {
  for (const auto& l : lines)
    if (l.rfind(metric + "{", 0) == 0 && l.find(label) != std::string::npos) return l.substr(l.rfind(' ') + 1);
  return "";
}

}  // namespace

TEST_CASE("metrics.prom has one series per task and metric for a run of kPromTaskSeriesMax tasks") {
  const auto lines = lines_of(prom_of(staggered(sim::kPromTaskSeriesMax)));
  std::size_t attempts = 0, with_uuid = 0;
  for (const auto& l : lines) {
    if (l.rfind("schedsim_task_attempts{", 0) != 0) continue;
    ++attempts;
    with_uuid += l.find("task_uuid=\"") != std::string::npos;
  }
  CHECK(attempts == sim::kPromTaskSeriesMax);
  CHECK(with_uuid == sim::kPromTaskSeriesMax);
}

TEST_CASE("above kPromTaskSeriesMax tasks, metrics.prom has one series per (tenant, user, type, pool) with sums over its tasks") {
  const auto prom = prom_of(staggered(sim::kPromTaskSeriesMax + 1));  // 5,000 of alice, 5,001 of bob
  const auto lines = lines_of(prom);
  CHECK(prom.find("task_uuid") == std::string::npos);
  CHECK(prom.find("task_name") == std::string::npos);
  std::size_t series = 0;
  for (const auto& l : lines) series += l.rfind('#', 0) != 0;
  CHECK(series == 8 * 2);  // 8 metrics x 2 groups
  CHECK(value_of(lines, "schedsim_tasks", "user=\"alice\"") == "5000");
  CHECK(value_of(lines, "schedsim_tasks", "user=\"bob\"") == "5001");
  CHECK(value_of(lines, "schedsim_tasks_succeeded", "user=\"bob\"") == "5001");
  CHECK(value_of(lines, "schedsim_tasks_finished", "user=\"alice\"") == "5000");
  CHECK(value_of(lines, "schedsim_task_attempts_sum", "user=\"alice\"") == "5000");
  CHECK(value_of(lines, "schedsim_task_jct_seconds_sum", "user=\"bob\"") == "5001");  // 1 s each
  CHECK(value_of(lines, "schedsim_task_wait_seconds_sum", "user=\"bob\"") == "0");
  CHECK(value_of(lines, "schedsim_task_gpus_sum", "user=\"alice\"") == "5000");
  // Groups in key order: bob's series comes after alice's (same tenant, user order).
  const auto alice = prom.find("schedsim_tasks{cluster=\"c1\",orgname=\"default\",user=\"alice\",module=\"training\",task_type=\"PyTorchJob\","
                               "resource_pool=\"p\",region=\"r1\"} 5000\n");
  CHECK(alice != std::string::npos);
  CHECK(alice < prom.find("user=\"bob\""));
}

TEST_CASE("CheckedWriter puts pieces smaller and larger than its buffer into the file in order") {
  fs::path d = lean_dir("writer");
  const std::string path = (d / "f.txt").string();
  std::string expect;
  {
    sim::CheckedWriter w(path);
    for (std::size_t n : {std::size_t(1), std::size_t(700'000), std::size_t(3'000'000), std::size_t(5), std::size_t(900'000)}) {
      std::string piece(n, char('a' + n % 26));
      w.append(piece);
      expect += piece;
    }
    w.buffer() += "tail";
    expect += "tail";
    w.maybe_flush();
    w.close();
  }
  CHECK(testutil::slurp(path) == expect);
  fs::remove_all(d);
}

TEST_CASE("a CheckedWriter destroyed without close() (an exception unwinding) leaves no file") {
  fs::path d = lean_dir("writer-abandoned");
  const std::string path = (d / "f.txt").string();
  {
    sim::CheckedWriter w(path);
    w.append(std::string(3'000'000, 'x'));  // more than one chunk: part of it is on disk
    REQUIRE(fs::exists(path));
  }
  CHECK_FALSE(fs::exists(path));
  fs::remove_all(d);
}

TEST_CASE("events.jsonl lines are the JSON text nlohmann prints, escapes and interned reasons included") {
  auto sc = cluster(2);
  sc.tasks.push_back(task("quote\"back\\slash\ttab", 0, 100));
  sc.tasks.push_back(task("caf\xc3\xa9", 0.5, 100));
  sc.tasks.push_back(task("third", 1.25, 100));
  sc.until_s = 50;  // all three are stopped with the same reason
  sim::Simulator s(sc);
  s.run();
  std::uint32_t stopped_reason = 0;
  int stopped = 0;
  for (const auto& c : s.changes()) {
    if (c.to != sim::AttemptState::stopped) continue;
    ++stopped;
    CHECK(s.reason_of(c) == "stopped: the simulation ended (until_s)");
    if (stopped_reason == 0) stopped_reason = c.reason;
    CHECK(c.reason == stopped_reason);  // one text, one id
  }
  REQUIRE(stopped == 2);  // two nodes: the third task never started
  fs::path d = lean_dir("events");
  auto which = sim::OutputSelection::none();
  which.set(sim::Output::events);
  s.write_outputs(d.string(), which);
  const auto lines = lines_of(testutil::slurp(d / "events.jsonl"));
  fs::remove_all(d);
  REQUIRE(lines.size() == s.changes().size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    INFO(lines[i]);
    auto j = nlohmann::ordered_json::parse(lines[i]);
    CHECK(j.dump() == lines[i]);
    CHECK(j["task"] == sc.tasks[std::size_t(s.changes()[i].task)].name);
  }
  CHECK(lines.front().find(R"("task":"quote\"back\\slash\ttab")") != std::string::npos);
  CHECK(lines.front().find(R"("from":"")") != std::string::npos);  // entering the queue
}

TEST_CASE("the simulator holds the tasks compactly and gives every task back exactly as the scenario had it") {
  // Tasks equal apart from their identity (name, submit_s, duration_s, runtime_estimate_s)
  // share one configuration; task_cfg(ti) must rebuild each scenario entry field for field.
  for (int variant = 0; variant < 2; ++variant) {
    INFO("variant " << variant);
    sim::io::Scenario sc;
    if (variant == 0) {
      sc = sim::default_scenario(1);
    } else {
      sim::SyntheticOptions o;
      o.nodes = 50;
      o.tasks = 400;
      sc = sim::synthetic_scenario(o);
    }
    REQUIRE(!sc.tasks.empty());
    sc.tasks[0].runtime_estimate_s = 1234.5;  // an estimate on one task only: identity, not shared
    const sim::io::Scenario given = sc;
    sim::Simulator s(std::move(sc));
    CHECK(s.scenario().tasks.empty());
    REQUIRE(s.task_count() == given.tasks.size());
    for (std::size_t i = 0; i < given.tasks.size(); ++i) {
      INFO("task " << i << " " << given.tasks[i].name);
      CHECK(s.task_name(i) == given.tasks[i].name);
      CHECK(s.task_cfg(i) == given.tasks[i]);
    }
    s.run();
    const auto all = s.task_metrics();
    for (std::size_t i = 0; i < given.tasks.size(); ++i) {
      const sim::TaskMetrics one = s.task_metrics(i);
      CHECK(one.wait == all[i].wait);
      CHECK(one.pool == all[i].pool);
      CHECK(one.gpu_model == all[i].gpu_model);
      CHECK(one.capacity == all[i].capacity);
    }
  }
}

TEST_CASE("an attempt keeps its replicas' node indices; node_name and tasks.csv give their names") {
  // Three 8-GPU nodes, first-fit: a two-replica 8-GPU gang takes a100-0 and a100-1, then a
  // one-replica task a100-2 (4 bytes per replica instead of a name string per replica).
  auto sc = simtest::cluster(3);
  sc.scheduler.placement = "first-fit";
  sc.tasks.push_back(simtest::task("gang", 0, 100, 1));
  sc.tasks.push_back(simtest::task("solo", 10, 100));
  sim::Simulator s(std::move(sc));
  s.run();
  const auto atts = s.attempts();
  REQUIRE(atts.size() == 2);
  CHECK(s.task_name(std::size_t(atts[0]->task)) == "gang");
  REQUIRE(atts[0]->nodes.size() == 2);
  CHECK(atts[0]->nodes[0] == 0);
  CHECK(atts[0]->nodes[1] == 1);
  CHECK(atts[0]->master_node == 0);
  REQUIRE(atts[1]->nodes.size() == 1);
  CHECK(atts[1]->nodes[0] == 2);
  CHECK(s.node_name(0) == "a100-0");
  CHECK(s.node_name(2) == "a100-2");
  const std::string csv = s.tasks_csv();
  CHECK(csv.find(",a100-0;a100-1,") != std::string::npos);
  CHECK(csv.find(",a100-2,") != std::string::npos);
}

TEST_CASE("the snapshot log gives back every snapshot exactly, in order, same-instant ones replaced") {
  // Random walks with small and huge steps (both signs, the int64 extremes), repeated
  // instants, unchanged fields and arbitrary doubles, over enough snapshots to fill blocks.
  boost::random::mt19937_64 rng(7);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return boost::random::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  const std::int64_t big[] = {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), 0, -1, 1};
  sim::SnapshotLog log;
  std::vector<sim::Snapshot> want;
  sim::Snapshot s;
  for (int i = 0; i < 20000; ++i) {
    s.time += pick(0, 3) == 0 ? 0 : pick(1, i % 100 == 0 ? 1'000'000'000 : 50);
    auto step = [&](std::int64_t& v) {
      switch (pick(0, 5)) {
        case 0: v = big[pick(0, 4)]; break;
        case 1: case 2: break;  // unchanged
        default: v = std::int64_t(std::uint64_t(v) + std::uint64_t(pick(-5000, 5000))); break;
      }
    };
    for (auto& g : s.gpu_by_class) step(g);
    step(s.gpu_up);
    step(s.cpu_alloc);
    step(s.cpu_up);
    s.queue = std::size_t(pick(0, 3) == 0 ? s.queue : std::size_t(pick(0, 1'000'000)));
    s.running = pick(0, 9) == 0 ? std::numeric_limits<std::size_t>::max() : std::size_t(pick(0, 100));
    if (pick(0, 1)) s.frag_milli = double(pick(-1'000'000'000, 1'000'000'000)) / 7.0;
    log.push(s);
    if (!want.empty() && want.back().time == s.time) want.back() = s;
    else want.push_back(s);
    REQUIRE(log.back() == s);
  }
  REQUIRE(log.size() == want.size());
  REQUIRE(log.encoded_bytes() > std::size_t(1) << 16);  // more than one block
  std::size_t i = 0;
  for (const sim::Snapshot& got : log) {
    REQUIRE(i < want.size());
    REQUIRE(got == want[i]);
    ++i;
  }
  REQUIRE(i == want.size());
  sim::SnapshotLog one;
  one.push(want[0]);
  REQUIRE(std::distance(one.begin(), one.end()) == 1);
  REQUIRE(*one.begin() == want[0]);
}

TEST_CASE("a run's time series costs far less than a struct per instant") {
  sim::SyntheticOptions o;
  o.nodes = 200;
  o.tasks = 3000;
  sim::Simulator s(sim::synthetic_scenario(o));
  s.run();
  const auto& log = s.snapshots();
  REQUIRE(log.size() > 1000);
  // 88 bytes as a struct; the encoding keeps what changed since the previous instant.
  REQUIRE(log.encoded_bytes() < log.size() * 40);
  // State changes: 24 bytes as structs, a handful encoded.
  REQUIRE(s.changes().size() > 3000);
  REQUIRE(s.changes().encoded_bytes() < s.changes().size() * 12);
  sim::Time last = -1;
  std::size_t n = 0;
  for (const auto& sn : log) {
    REQUIRE(sn.time > last);
    REQUIRE(sn.running <= o.tasks);
    last = sn.time;
    ++n;
  }
  REQUIRE(n == log.size());
}

TEST_CASE("the change log gives back every state change exactly, in order and by index") {
  boost::random::mt19937_64 rng(11);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return boost::random::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  sim::ChangeLog log;
  std::vector<sim::StateChange> want;
  sim::StateChange c;
  for (int i = 0; i < 30000; ++i) {
    c.time += pick(0, 2) == 0 ? 0 : pick(1, i % 500 == 0 ? std::int64_t(1) << 50 : 5000);
    c.task = int(pick(0, 9) == 0 ? pick(0, std::numeric_limits<int>::max()) : pick(0, 1000));
    c.attempt = int(pick(1, i % 97 == 0 ? std::numeric_limits<int>::max() : 3));
    c.reason = std::uint32_t(pick(0, 3) == 0 ? pick(0, std::numeric_limits<std::uint32_t>::max()) : pick(0, 40));
    c.from = sim::AttemptState(pick(0, 6));
    c.to = sim::AttemptState(pick(0, 6));
    c.initial = pick(0, 1) == 1;
    log.push(c);
    want.push_back(c);
  }
  auto same = [](const sim::StateChange& a, const sim::StateChange& b) {
    return a.time == b.time && a.task == b.task && a.attempt == b.attempt && a.reason == b.reason && a.from == b.from &&
           a.to == b.to && a.initial == b.initial;
  };
  REQUIRE(log.size() == want.size());
  REQUIRE(log.encoded_bytes() > std::size_t(1) << 16);  // more than one block
  std::size_t i = 0;
  for (const auto& got : log) {
    REQUIRE(i < want.size());
    REQUIRE(same(got, want[i]));
    ++i;
  }
  REQUIRE(i == want.size());
  for (std::size_t k : {std::size_t(0), std::size_t(63), std::size_t(64), std::size_t(65), want.size() / 2, want.size() - 1})
    REQUIRE(same(log[k], want[k]));
  for (int k = 0; k < 2000; ++k) {
    auto at = std::size_t(pick(0, std::int64_t(want.size()) - 1));
    REQUIRE(same(log[at], want[at]));
  }
}

}  // namespace SCHEDSIM_UNITY_ID
