// Issue #15 (input hardening): every hostile input is refused with exit status 2 and one line per
// problem (`FILE: PATH: VALUE: RULE`), or runs bounded and correct. Large inputs are generated
// here at run time, into a temp dir.
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "scenario_builder.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/io/limits.hpp"
#include "sim/io/scenario_json.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using nlohmann::json;
using sim::io::test::valid_scenario;
namespace fs = std::filesystem;

namespace {

/// prefix + number (`"t" + std::to_string(i)` trips a GCC 12 -Wrestrict false positive).
std::string cat(const char* prefix, int i) {
  std::string s(prefix);
  s.append(std::to_string(i));
  return s;
}

struct Tmp {
  fs::path dir;
  Tmp() {
    static int n = 0;
    dir = fs::temp_directory_path() / ("schedsim-hardening-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::create_directories(dir);
  }
  ~Tmp() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = dir / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
};

struct Run {
  int status = -1;
  std::vector<std::string> err;  // stderr lines
  std::string err_text;
};

/// Runs the schedsim binary; captures stderr lines and the exit status.
Run schedsim(const Tmp& t, const std::string& args) {
  const std::string errfile = (t.dir / "stderr.txt").string();
  const std::string cmd = std::string(SCHEDSIM_BINARY) + " " + args + " >/dev/null 2>" + errfile;
  Run r;
  const int st = std::system(cmd.c_str());
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream in(errfile, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err_text = ss.str();
  std::istringstream lines(r.err_text);
  for (std::string l; std::getline(lines, l);) r.err.push_back(l);
  return r;
}

std::vector<std::string> errors_of(const Run& r) {
  std::vector<std::string> out;
  for (const auto& l : r.err)
    if (l.find(": warning: ") == std::string::npos) out.push_back(l);
  return out;
}

/// validate FILE must exit 2 with exactly one error line that starts with `FILE: PATH: ` and
/// contains `needle`.
void expect_one_error(const Tmp& t, const std::string& file, const std::string& path, const std::string& needle) {
  const Run r = schedsim(t, "validate " + file);
  INFO(r.err_text);
  CHECK(r.status == 2);
  const auto errs = errors_of(r);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].rfind(file + ": " + path + ": ", 0) == 0);
  CHECK(errs[0].find(needle) != std::string::npos);
}

/// Library-level: the errors of a scenario text.
std::vector<sim::io::Diagnostic> errors_in(const std::string& text) {
  auto r = sim::io::parse_scenario_text(text, "s.json");
  std::vector<sim::io::Diagnostic> out;
  for (auto& d : r.diagnostics)
    if (d.is_error()) out.push_back(d);
  return out;
}

bool has_error(const std::vector<sim::io::Diagnostic>& errs, const std::string& path, const std::string& needle = "") {
  for (const auto& d : errs)
    if (d.path == path && d.str().find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

// ------------------------------------------------------------------ 1. crashes

TEST_CASE("a number that overflows a double is a malformed-JSON error with its position, not an abort",
          "[io][hardening]") {
  Tmp t;
  for (const char* text : {"1e400", "-1e400"}) {
    const auto f = t.write("whole.json", text);
    const Run r = schedsim(t, "validate " + f);
    INFO(r.err_text);
    CHECK(r.status == 2);
    REQUIRE(r.err.size() == 1);
    CHECK(r.err[0].rfind(f + ": line 1, column ", 0) == 0);
    CHECK(r.err[0].find("number overflow") != std::string::npos);
  }
  json j = valid_scenario();
  std::string text = j.dump(2);
  const auto pos = text.find("\"duration_s\": 3600");
  REQUIRE(pos != std::string::npos);
  text.replace(pos, 18, "\"duration_s\": -1e400");
  const auto f = t.write("field.json", text);
  const Run r = schedsim(t, "validate " + f);
  INFO(r.err_text);
  CHECK(r.status == 2);
  REQUIRE(r.err.size() == 1);
  CHECK(r.err[0].find("number overflow parsing '-1e400'") != std::string::npos);
  CHECK(r.err[0].find(": line ") != std::string::npos);
  // Also through `run`: nothing simulated, exit 2.
  CHECK(schedsim(t, "run " + f + " --no-progress --out " + (t.dir / "out").string()).status == 2);
  CHECK(!fs::exists(t.dir / "out"));
}

TEST_CASE("1,000 node groups of 100,000 nodes (a 38 KB file) are refused before expansion", "[io][hardening]") {
  Tmp t;
  json j = valid_scenario();
  json groups = json::array();
  for (int i = 0; i < 1000; ++i)
    groups.push_back({{"prefix", cat("g", i) + "-"}, {"count", 100000}, {"gpus", 8}, {"gpu_model", "A100"},
                      {"vcpu", 96}, {"memory_gib", 960}});
  j["cluster"]["pools"][0]["node_groups"] = groups;
  j["events"] = json::array();
  j["node_policies"] = json::array();
  for (auto& task : j["tasks"]) task.erase("node_policies");
  const auto f = t.write("big.json", j.dump());
  const auto t0 = std::chrono::steady_clock::now();
  expect_one_error(t, f, "cluster.pools", "more than the limit of 1000000");
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 2.0);
}

TEST_CASE("5,000,000 nodes from a small file are refused", "[io][hardening]") {
  json j = valid_scenario();
  json groups = json::array();
  for (int i = 0; i < 50; ++i) groups.push_back({{"prefix", cat("n", i) + "-"}, {"count", 100000}});
  j["cluster"]["pools"][0]["node_groups"] = groups;
  const auto errs = errors_in(j.dump());
  CHECK(has_error(errs, "cluster.pools", "5000001 nodes"));
}

// ------------------------------------------------------------------ 2. time must advance

TEST_CASE("delays and intervals that would not advance time are refused", "[io][hardening]") {
  Tmp t;
  {
    json j = valid_scenario();
    j["tasks"][0]["image_pull_s"] = 0.0004;
    j["tasks"][0]["image_pull_retries"] = -1;
    j["tasks"][0]["image_pull_failure_prob"] = 1;
    expect_one_error(t, t.write("pull.json", j.dump()), "tasks[0].image_pull_s", "0.0004: must be 0 or between 1 and");
  }
  {
    json j = valid_scenario();
    j["tasks"][0]["transient_failure_rate_per_h"] = 1e300;
    j["tasks"][0]["fault_tolerance"]["max_resubmissions"] = 2000000000;
    const auto errs = errors_in(j.dump());
    CHECK(has_error(errs, "tasks[0].transient_failure_rate_per_h", "must be between 0 and 3600"));
    CHECK(has_error(errs, "tasks[0].fault_tolerance.max_resubmissions", "must be between 0 and 1000"));
  }
  {
    json j = valid_scenario();
    j["cluster"]["pools"][0]["node_groups"][0]["mtbf_s"] = 0.001;
    j["cluster"]["pools"][0]["node_groups"][0]["mttr_s"] = 0.001;
    const auto errs = errors_in(j.dump());
    CHECK(errs.size() == 2);
    CHECK(has_error(errs, "cluster.pools[0].node_groups[0].mtbf_s", ">= 3600"));
    CHECK(has_error(errs, "cluster.pools[0].node_groups[0].mttr_s", ">= 1"));
  }
  {
    json j = valid_scenario();
    j["tasks"][0]["precheck_s"] = 0.5;
    j["tasks"][0]["checkpoint_interval_s"] = 0.01;
    j["tasks"][2]["debug_retention_s"] = 0.2;
    j["tasks"][2]["autoscaling"]["idle_reclaim_s"] = 0.2;
    j["tasks"][0]["image_pull_retries"] = 5000;
    const auto errs = errors_in(j.dump());
    CHECK(errs.size() == 5);
    CHECK(has_error(errs, "tasks[0].precheck_s"));
    CHECK(has_error(errs, "tasks[0].checkpoint_interval_s"));
    CHECK(has_error(errs, "tasks[2].debug_retention_s"));
    CHECK(has_error(errs, "tasks[2].autoscaling.idle_reclaim_s"));
    CHECK(has_error(errs, "tasks[0].image_pull_retries"));
  }
  {  // the boundaries themselves are fine: 0 = none, 1 s, image_pull_retries -1 = no breaker
    json j = valid_scenario();
    j["tasks"][0]["image_pull_s"] = 1;
    j["tasks"][0]["precheck_s"] = 0;
    j["tasks"][0]["image_pull_retries"] = -1;
    j["tasks"][0]["transient_failure_rate_per_h"] = 3600;
    j["tasks"][0]["fault_tolerance"]["max_resubmissions"] = 1000;
    j["cluster"]["pools"][0]["node_groups"][0]["mtbf_s"] = 3600;
    j["cluster"]["pools"][0]["node_groups"][0]["mttr_s"] = 1;
    CHECK(errors_in(j.dump()).empty());
  }
}

// ------------------------------------------------------------------ 3. unbounded size from small files

TEST_CASE("replica counts above the documented limits are refused", "[io][hardening]") {
  Tmp t;
  {
    json j = valid_scenario();
    j["tasks"][0]["workers"] = 2e9;
    expect_one_error(t, t.write("w.json", j.dump()), "tasks[0].workers", "2000000000: must be between 0 and 1000000");
  }
  {
    json j = valid_scenario();
    json base = j["tasks"][1];
    base["workers"] = 1000000;
    j["tasks"] = json::array();
    for (int i = 0; i < 11; ++i) {
      base["name"] = cat("t", i);
      j["tasks"].push_back(base);
    }
    j["events"] = json::array();
    const auto errs = errors_in(j.dump());
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "tasks");
    CHECK(errs[0].rule.find("11000011 replicas") != std::string::npos);
  }
}

TEST_CASE("timeseries rows above the limit are refused", "[io][hardening]") {
  Tmp t;
  json j = valid_scenario();
  j["timeseries_interval_s"] = 1;
  j["tasks"][0]["duration_s"] = 1e9;
  j["tasks"][0]["fault_tolerance"]["max_resubmissions"] = 0;
  expect_one_error(t, t.write("ts.json", j.dump()), "timeseries_interval_s", "more than the limit of 1000000");
  j["until_s"] = 500000;  // until_s bounds the horizon: 500,000 rows are fine
  CHECK(errors_in(j.dump()).empty());
}

TEST_CASE("reading /dev/zero (a device, not a file) or a NUL byte is refused at once", "[io][hardening]") {
  Tmp t;
  const auto t0 = std::chrono::steady_clock::now();
  const Run r = schedsim(t, "validate /dev/zero");
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 2.0);
  CHECK(r.status == 2);
  REQUIRE(r.err.size() == 1);
  CHECK(r.err[0] == "/dev/zero: is a character device, not a scenario file (a regular file is required)");
  const std::string text = valid_scenario().dump() + std::string(1, '\0') + "{\"garbage\": true}";
  const auto f = t.write("nul.json", text);
  const Run r2 = schedsim(t, "validate " + f);
  CHECK(r2.status == 2);
  REQUIRE(r2.err.size() == 1);
  CHECK(r2.err[0].find("NUL byte") != std::string::npos);
}

namespace {
json many_tasks(int n, bool with_error) {
  json j = valid_scenario();
  json base = {{"user", "alice"}, {"submit_s", 0}, {"duration_s", 3600}, {"type", "PyTorchJob"},
               {"workers", 2},    {"specs", {"a100.8x"}}, {"pool", "shared-a100"}};
  j["tasks"] = json::array();
  for (int i = 0; i < n; ++i) {
    base["name"] = cat("t", i);
    // One error each: alternately found while reading (priority) and by the cross-field pass
    // (unknown pool; the pass that used to rescan every earlier diagnostic per error).
    if (with_error && i % 2 == 0) base["priority"] = 12;
    if (with_error && i % 2 == 1) base["pool"] = "nope";
    j["tasks"].push_back(base);
    base.erase("priority");
    base["pool"] = "shared-a100";
  }
  j["events"] = json::array();
  return j;
}
/// CPU seconds of parse + validate (CPU, not wall time: the test machine may be shared).
double seconds_to_parse(const std::string& text, std::size_t* errors) {
  const std::clock_t c0 = std::clock();
  auto r = sim::io::parse_scenario_text(text, "s.json");
  *errors = sim::io::count_errors(r.diagnostics);
  return double(std::clock() - c0) / CLOCKS_PER_SEC;
}
}  // namespace

TEST_CASE("validate is not quadratic: 40k tasks each with an error; 10k tasks x 100k nodes", "[io][hardening][perf]") {
  // A growth check, not a time bound (the machine may be busy): 4x the input costs about 4x when
  // the work is linear and 16x when it is quadratic; more than 8x fails. CPU seconds of the
  // same shapes at a quarter of the size are the reference, measured in the same process.
#ifdef NDEBUG
  constexpr int scale = 1;
#else  // sanitizer (Debug) builds: the same shapes, 10x smaller, no growth bound
  constexpr int scale = 10;
#endif
  std::size_t errors = 0;
  const double t_errors_quarter = seconds_to_parse(many_tasks(10000 / scale, true).dump(), &errors);
  CHECK(errors == 10000 / scale);
  const double t_errors = seconds_to_parse(many_tasks(40000 / scale, true).dump(), &errors);
  CHECK(errors == 40000 / scale);
  // H100 nodes, A100 tasks: no node fits, so the "larger than every node" warning used to scan
  // all 100k nodes for each of the 10k tasks.
  auto tasks_and_nodes = [](int tasks, int nodes_per_group) {
    json j = many_tasks(tasks, false);
    j["quotas"] = json::array();
    j["cluster"]["pools"][0]["node_groups"] = json::array();
    for (int g = 0; g < 10; ++g)
      j["cluster"]["pools"][0]["node_groups"].push_back({{"prefix", cat("g", g) + "-"},
                                                         {"count", nodes_per_group}, {"gpu_model", "H100"}, {"gpus", 8},
                                                         {"vcpu", 96 + g}, {"memory_gib", 960}});
    j["cluster"]["pools"][1]["nodes"] = json::array();
    j["node_policies"] = json::array();
    return j;
  };
  const json j = tasks_and_nodes(10000 / scale, 10000);
  auto r = sim::io::parse_scenario_text(j.dump(), "s.json");
  CHECK(r.ok());
  CHECK(r.diagnostics.size() == std::size_t(10000 / scale));  // one warning per task
  // Both sides x4 here: quadratic (tasks x nodes) would be 16x.
  const double t_nodes_quarter = seconds_to_parse(tasks_and_nodes(2500 / scale, 2500).dump(), &errors);
  CHECK(errors == 0);
  const double t_nodes = seconds_to_parse(j.dump(), &errors);
  CHECK(errors == 0);
  WARN("validate CPU time: " << 40000 / scale << " tasks with an error each: " << t_errors << " s (a quarter: "
                             << t_errors_quarter << " s); " << 10000 / scale << " tasks x 100k nodes: " << t_nodes
                             << " s (a quarter of each: " << t_nodes_quarter << " s)");
#ifdef NDEBUG  // growth bounds hold for optimised builds (sanitizer builds are Debug, 10x smaller)
  CHECK(t_errors < 8 * t_errors_quarter + 0.05);
  CHECK(t_nodes < 8 * t_nodes_quarter + 0.05);
#endif
}

// ------------------------------------------------------------------ 4. integer overflow

TEST_CASE("products of user quantities are checked, never wrapped", "[io][hardening]") {
  {  // gpus 65536 x count_per_node 65536 wrapped to 0 GPUs
    json j = valid_scenario();
    j["cluster"]["instance_specs"][0]["gpus"] = 65536;
    j["tasks"][0]["count_per_node"] = 65536;
    const auto errs = errors_in(j.dump());
    CHECK(has_error(errs, "cluster.instance_specs[0].gpus", "must be between 0 and 64"));
    CHECK(has_error(errs, "tasks[0].count_per_node", "must be between 1 and 1000"));
  }
  {  // vcpu 1e9 x count_per_node 1e7
    json j = valid_scenario();
    j["cluster"]["instance_specs"][0]["vcpu"] = 1e9;
    j["tasks"][0]["count_per_node"] = 1e7;
    CHECK(has_error(errors_in(j.dump()), "tasks[0].count_per_node"));
    j["tasks"][0]["count_per_node"] = 2;
    CHECK(has_error(errors_in(j.dump()), "tasks[0].specs[0]", "vcpu x count_per_node = 2000000000 exceeds"));
  }
  {  // 8 GPUs x 16 per node: more GPUs than a node can have
    json j = valid_scenario();
    j["tasks"][0]["count_per_node"] = 16;
    const auto errs = errors_in(j.dump());
    CHECK(has_error(errs, "tasks[0].specs[0]", "8 x 16 = 128 exceeds 64"));
  }
  {  // inline replica: the same rules
    json j = valid_scenario();
    j["tasks"][0].erase("specs");
    j["tasks"][0]["replica"] = {{"gpus", 4}, {"vcpu", 1}, {"memory_gib", 1}};
    j["tasks"][0]["count_per_node"] = 32;
    CHECK(has_error(errors_in(j.dump()), "tasks[0].replica.gpus", "4 x 32 = 128 exceeds 64"));
  }
}

// ------------------------------------------------------------------ 5. one line per diagnostic

TEST_CASE("keys and values are escaped: a diagnostic is always one line", "[io][hardening]") {
  Tmp t;
  const auto f = t.write("nl.json", R"({"\n":0, "x\nforged.json: tasks[0].name: \"a\": forged": 1, "name": "a\u2028b\u0001"})");
  const Run r = schedsim(t, "validate " + f);
  INFO(r.err_text);
  CHECK(r.status == 2);
  for (const auto& l : r.err) CHECK(l.rfind(f + ": ", 0) == 0);  // no line names another file
  CHECK(r.err_text.find("\\n") != std::string::npos);
  CHECK(sim::io::escape_for_diagnostic("a\nb\r\t\x01\x7f") == "a\\nb\\r\\t\\x01\\x7f");
  CHECK(sim::io::escape_for_diagnostic("\xe2\x80\xa8 \xc2\x85 \xff caf\xc3\xa9") == "\\u{2028} \\u{0085} \\xff caf\xc3\xa9");
  sim::io::Diagnostic d{sim::io::Diagnostic::Severity::error, "f\n.json", "a\nb", "\"v\r\"", "rule\n"};
  CHECK(d.str().find('\n') == std::string::npos);
  CHECK(d.str().find('\r') == std::string::npos);
}

// ------------------------------------------------------------------ 7. smaller

TEST_CASE("duplicate keys are refused, naming both occurrences", "[io][hardening]") {
  Tmp t;
  const auto f = t.write("dup.json", "{\"schema\": \"schedsim/v1\",\n \"tasks\": [{\"workers\": 1,\n   \"workers\": 2}]}");
  const Run r = schedsim(t, "validate " + f);
  CHECK(r.status == 2);
  REQUIRE(r.err.size() == 1);
  CHECK(r.err[0] == f + ": tasks[0].workers: \"workers\": duplicate key (at line 2, column 13 and again at line 3, column 4)");
}

TEST_CASE("seed: the full uint64 range exactly, anything else refused", "[io][hardening]") {
  auto seed_of = [](const std::string& seed_text) -> std::optional<std::uint64_t> {
    std::string text = valid_scenario().dump();
    const auto pos = text.find("\"seed\":7");
    REQUIRE(pos != std::string::npos);
    text.replace(pos, 8, "\"seed\":" + seed_text);
    auto r = sim::io::parse_scenario_text(text, "s.json");
    if (!r.ok()) return std::nullopt;
    return r.scenario->seed;
  };
  CHECK(seed_of("18446744073709551615") == std::optional<std::uint64_t>(18446744073709551615ULL));
  CHECK(seed_of("9223372036854775808") == std::optional<std::uint64_t>(9223372036854775808ULL));
  CHECK(seed_of("9223372036854775807") == std::optional<std::uint64_t>(9223372036854775807ULL));
  CHECK(seed_of("1e19") == std::optional<std::uint64_t>(10000000000000000000ULL));
  CHECK(!seed_of("-1"));
  CHECK(!seed_of("1.8446744073709552e19"));  // 2^64
  CHECK(!seed_of("18446744073709551616"));   // parsed as a double 2^64
  CHECK(!seed_of("1.5"));
  // The scenario round-trips the seed exactly.
  auto r = sim::io::parse_scenario_text(
      sim::io::scenario_to_json(*sim::io::parse_scenario_text(valid_scenario().dump(), "s.json").scenario).dump(), "s");
  CHECK(r.ok());
}

TEST_CASE("--seed: the full uint64 range; convert --limit -1 is refused", "[io][hardening]") {
  Tmp t;
  const auto f = t.write("ok.json", valid_scenario().dump());
  const auto out = (t.dir / "out").string();
  CHECK(schedsim(t, "run " + f + " --no-progress --out " + out + " --seed 18446744073709551615").status == 0);
  CHECK(schedsim(t, "run " + f + " --no-progress --out " + out + " --seed 18446744073709551616").status == 2);
  const auto swf = t.write("t.swf", "1 0 0 10 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n");
  const Run r = schedsim(t, "convert --format swf --path " + swf + " --limit -1 --out " + (t.dir / "c.json").string());
  CHECK(r.status == 2);
  CHECK(!fs::exists(t.dir / "c.json"));
  CHECK(schedsim(t, "convert --format swf --path " + swf + " --limit 0 --out " + (t.dir / "c.json").string()).status == 0);
}

TEST_CASE("node names with `;` or control characters are refused", "[io][hardening]") {
  json j = valid_scenario();
  j["cluster"]["pools"][1]["nodes"][0]["name"] = "solo;0";
  j["cluster"]["pools"][0]["node_groups"][0]["prefix"] = "a;";
  j["node_policies"] = json::array();
  j["events"] = json::array();
  for (auto& task : j["tasks"]) task.erase("node_policies");
  const auto errs = errors_in(j.dump());
  CHECK(errs.size() == 2);
  CHECK(has_error(errs, "cluster.pools[1].nodes[0].name", "must not contain `;`"));
  CHECK(has_error(errs, "cluster.pools[0].node_groups[0].prefix", "must not contain `;`"));
}

TEST_CASE("a trace data file that cannot be resolved is refused at its JSON path with the value as written", "[io][hardening]") {
  Tmp t;
  json j = valid_scenario();
  const std::string missing = (t.dir / "missing.swf").string();
  const std::string ok = t.write("ok.swf", "1 0 0 10 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n");
  j["traces"] = json::array({{{"format", "swf"}, {"path", ok}, {"nodes", "none"}},
                             {{"format", "swf"}, {"path", missing}, {"nodes", "none"}}});
  const auto f = t.write("tr.json", j.dump());
  for (const std::string& cmd : std::vector<std::string>{"validate ", "run --out " + (t.dir / "out").string() + " "}) {
    const Run r = schedsim(t, cmd + f);
    INFO(r.err_text);
    CHECK(r.status == 2);
    REQUIRE(r.err.size() == 1);
    CHECK(r.err[0].rfind(f + ": traces[1].path: \"" + missing + "\": trace data file '" + missing + "' not found", 0) == 0);
  }
  CHECK_FALSE(fs::exists(t.dir / "out"));
}

TEST_CASE("FIFOs and directories as trace paths are `not a regular file`; trace errors reach validate as one line",
          "[io][hardening]") {
  Tmp t;
  const auto fifo = (t.dir / "fifo.swf").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  fs::create_directories(t.dir / "dir.swf");
  for (const std::string& p : {fifo, (t.dir / "dir.swf").string()}) {
    json j = valid_scenario();
    j["traces"] = json::array({{{"format", "swf"}, {"path", p}, {"nodes", "none"}}});
    const auto f = t.write("tr.json", j.dump());
    const Run r = schedsim(t, "validate " + f);
    INFO(r.err_text);
    CHECK(r.status == 2);
    REQUIRE(r.err.size() == 1);
    CHECK(r.err[0].find("is not a regular file") != std::string::npos);
  }
  // An SWF header asking for 10^11 nodes: refused before any allocation, naming file and line.
  const auto swf = t.write("huge.swf", "; MaxProcs: 100000000000\n1 0 0 10 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n");
  json j = valid_scenario();
  j["traces"] = json::array({{{"format", "swf"}, {"path", swf}}});
  const auto f = t.write("tr2.json", j.dump());
  const Run r = schedsim(t, "validate " + f);
  INFO(r.err_text);
  CHECK(r.status == 2);
  REQUIRE(r.err.size() == 1);
  CHECK(r.err[0].find(swf + ":1:1: header MaxProcs: 100000000000: gives 100000000000 nodes") != std::string::npos);
}

}  // namespace SCHEDSIM_UNITY_ID
