// SWF loading without extra copies (issue 38): the two-pass reader, the gzip size hint and the
// move of a trace's tasks into the scenario keep every rule and result of the reader.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/io/traces.hpp"
#include "trace_test_util.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace sim::io;
using trace_test::EnvGuard;
using trace_test::error_of;
using trace_test::TempDir;

namespace {

TraceCfg swf_cfg(const std::string& path) {
  TraceCfg c;
  c.format = "swf";
  c.path = path;
  return c;
}

/// SWF traces of `paths` in order, none bringing nodes (`nodes: none`).
std::vector<TraceCfg> traces_without_nodes(const std::vector<std::string>& paths) {
  std::vector<TraceCfg> out;
  for (const auto& p : paths) {
    out.push_back(swf_cfg(p));
    out.back().nodes = "none";
  }
  return out;
}

const std::string kRow1 = "    1        0   10   3600    2     -1    -1    2   7200    -1  1  12  1  -1 -1 -1 -1 -1";
const std::string kRow2 = "    2       50   -1    100    1     -1    -1   -1     -1    -1  1  -1  1  -1 -1 -1 -1 -1";
// Submit time 2e9 s: every field parses, but the task breaks the submit_s rule (<= 1e9).
const std::string kLate = "    3 2000000000   -1    100    1     -1    -1    1     -1    -1  1  -1  1  -1 -1 -1 -1 -1";
const std::string kRow4 = "    4       60    5   42.5    3     -1    -1    2    600    -1  1  13  1  -1 -1 -1 -1 -1";

}  // namespace

TEST_CASE("swf: a task value rule fails the row at its own line after good rows; skipped, the others keep file order",
          "[traces][swf][loading]") {
  TempDir dir;
  const auto path = dir.write("late.swf", "; MaxProcs: 4\n" + kRow1 + "\n" + kRow2 + "\n" + kLate + "\n" + kRow4 + "\n");
  CHECK_THAT(error_of([&] { read_swf(path, swf_cfg(path), {}); }),
             Catch::StartsWith(path + ":4:1: task `swf-3`: submit_s: "));
  const auto load = read_swf(path, swf_cfg(path), TraceOptions{true});
  CHECK(load.skipped_rows == 1);
  REQUIRE(load.tasks.size() == 3);
  CHECK(load.tasks[0].name == "swf-1");
  CHECK(load.tasks[0].user == "swf-u12");
  CHECK(load.tasks[0].workers == 1);
  CHECK(*load.tasks[0].runtime_estimate_s == 7200.0);
  CHECK(load.tasks[1].name == "swf-2");
  CHECK(load.tasks[1].user == "swf");
  CHECK_FALSE(load.tasks[1].runtime_estimate_s.has_value());  // requested time -1: none, not the previous row's
  CHECK(load.tasks[2].name == "swf-4");
  CHECK(load.tasks[2].submit_s == 60.0);
  CHECK(load.tasks[2].duration_s == 42.5);
  CHECK(load.tasks[2].replica->vcpu == 1.0);
  CHECK(load.tasks[2].workers == 1);  // requested 2 processors, one per node
  REQUIRE(load.nodes.size() == 4);
}

TEST_CASE("swf: a malformed number still fails the row naming the field, the text and its column",
          "[traces][swf][loading]") {
  TempDir dir;
  const std::string bad = "    5      7x0   -1    100    1     -1    -1    1     -1    -1  1  -1  1  -1 -1 -1 -1 -1";
  const auto path = dir.write("bad.swf", kRow1 + "\n" + bad + "\n");
  CHECK(error_of([&] { read_swf(path, swf_cfg(path), {}); }) ==
        path + ":2:" + std::to_string(bad.find("7x0") + 1) + ": field 2 (submit time): expected a number, got '7x0'");
}

TEST_CASE("swf: the gzip trailer's length sizes the buffer; a wrong one is refused as a bad stream",
          "[traces][swf][loading]") {
  TempDir dir;
  const std::string text = kRow1 + "\n" + kRow2 + "\n";
  const auto good = dir.write_gz("good.swf.gz", text);
  REQUIRE(read_swf(good, swf_cfg(good), {}).tasks.size() == 2);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // 0 under-sizes, 0xffffffff would over-size (the hint is capped at 1032 x the compressed size):
  // either way zlib's length check refuses the stream, naming the file.
  for (const std::uint32_t isize : {std::uint32_t{0}, std::uint32_t{0xffffffffu}}) {
    INFO(isize);
    std::string lying = bytes;
    for (int b = 0; b < 4; ++b) lying[lying.size() - 4 + std::size_t(b)] = static_cast<char>((isize >> (8 * b)) & 0xffu);
    const auto path = dir.write("lying.swf.gz", lying);
    const std::string e = error_of([&] { read_swf(path, swf_cfg(path), {}); });
    CHECK(e.find("trace: '" + path + "': bad gzip stream") == 0);
  }
}

namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void check_same_tasks(const TraceLoad& a, const TraceLoad& b) {
  REQUIRE(a.tasks.size() == b.tasks.size());
  for (std::size_t i = 0; i < a.tasks.size(); ++i) {
    INFO(i);
    CHECK(a.tasks[i].name == b.tasks[i].name);
    CHECK(a.tasks[i].user == b.tasks[i].user);
    CHECK(a.tasks[i].submit_s == b.tasks[i].submit_s);
    CHECK(a.tasks[i].duration_s == b.tasks[i].duration_s);
    CHECK(a.tasks[i].runtime_estimate_s == b.tasks[i].runtime_estimate_s);
    CHECK(a.tasks[i].workers == b.tasks[i].workers);
  }
  CHECK(a.nodes.size() == b.nodes.size());
}

}  // namespace

TEST_CASE("swf: a gzip trace is read in one pass, its task vector reserved from the trailer's length (rows of 35 bytes fit)",
          "[traces][swf][loading]") {
  TempDir dir;
  // Nine rows of the shortest form (18 one-character fields, 35 bytes) and a comment.
  std::string text = "; MaxProcs: 4\n";
  for (int i = 1; i <= 9; ++i) text += std::to_string(i) + " 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n";
  const auto plain = dir.write("short.swf", text);
  const auto gz = dir.write_gz("short.swf.gz", text);
  const TraceLoad from_plain = read_swf(plain, swf_cfg(plain), {});
  const TraceLoad from_gz = read_swf(gz, swf_cfg(gz), {});
  REQUIRE(from_plain.tasks.size() == 9);
  check_same_tasks(from_plain, from_gz);
  CHECK(from_gz.tasks.capacity() == text.size() / 36 + 1);  // the trailer's bound, not a count
  CHECK(from_plain.tasks.capacity() == 9);                  // a plain file: counted
}

TEST_CASE("swf: a gzip trace of several members (the trailer gives the last one's length) reads every row",
          "[traces][swf][loading]") {
  TempDir dir;
  std::string first, last = kRow4 + "\n";
  for (int i = 0; i < 40; ++i) first += (i % 2 ? kRow2 : kRow1) + "\n";
  const auto a = dir.write_gz("a.swf.gz", first);
  const auto b = dir.write_gz("b.swf.gz", last);
  const auto both = dir.write("both.swf.gz", bytes_of(a) + bytes_of(b));
  const auto plain = dir.write("both.swf", first + last);
  const TraceLoad from_gz = read_swf(both, swf_cfg(both), {});
  REQUIRE(from_gz.tasks.size() == 41);  // more than the hint's bound (the vector grew)
  check_same_tasks(read_swf(plain, swf_cfg(plain), {}), from_gz);
}

TEST_CASE("apply_traces: the first trace's tasks are taken whole; a later trace's repeated names get -t<I>",
          "[traces][apply][loading]") {
  TempDir dir;
  EnvGuard env("SCHEDSIM_DATA", dir.path().string());
  dir.write("a.swf", kRow1 + "\n" + kRow2 + "\n");
  dir.write("b.swf", kRow2 + "\n" + kRow4 + "\n");
  Scenario s;
  s.traces = traces_without_nodes({"a.swf", "b.swf"});
  CHECK(apply_traces(s, {}) == 0);
  REQUIRE(s.tasks.size() == 4);
  CHECK(s.tasks[0].name == "swf-1");
  CHECK(s.tasks[1].name == "swf-2");
  CHECK(s.tasks[2].name == "swf-2-t1");
  CHECK(s.tasks[3].name == "swf-4");
  CHECK(s.tasks[3].duration_s == 42.5);
}

TEST_CASE("apply_traces: a name repeated in one trace gets -t<I>, then -t<I>-2 past a taken one; a later trace without repeats keeps its names",
          "[traces][apply][loading]") {
  TempDir dir;
  EnvGuard env("SCHEDSIM_DATA", dir.path().string());
  dir.write("a.swf", kRow1 + "\n" + kRow1 + "\n" + kRow2 + "\n");
  dir.write("b.swf", kRow4 + "\n");
  Scenario s;
  TaskCfg inline_task;
  inline_task.name = "swf-1-t0";
  s.tasks.push_back(inline_task);
  s.traces = traces_without_nodes({"a.swf", "b.swf"});
  CHECK(apply_traces(s, {}) == 0);
  REQUIRE(s.tasks.size() == 5);
  CHECK(s.tasks[0].name == "swf-1-t0");
  CHECK(s.tasks[1].name == "swf-1");
  CHECK(s.tasks[2].name == "swf-1-t0-2");
  CHECK(s.tasks[3].name == "swf-2");
  CHECK(s.tasks[4].name == "swf-4");
}

TEST_CASE("swf: the names are known distinct only when every job id is digits in increasing numeric order",
          "[traces][swf][loading]") {
  TempDir dir;
  // Row kRow1 with job id `id` (the other fields unchanged).
  auto row = [](const std::string& id) { return id + kRow1.substr(kRow1.find("        0")); };
  auto distinct = [&](const std::vector<std::string>& ids) {
    std::string text;
    for (const auto& id : ids) text += row(id) + "\n";
    const auto path = dir.write("ids.swf", text);
    const TraceLoad load = read_swf(path, swf_cfg(path), {});
    REQUIRE(load.tasks.size() == ids.size());
    return load.names_distinct;
  };
  CHECK(distinct({"1", "2", "10", "11"}));
  CHECK(distinct({"7"}));
  CHECK(distinct({"3", "9", "1000000"}));
  CHECK_FALSE(distinct({"1", "1"}));          // a repeat
  CHECK_FALSE(distinct({"2", "1"}));          // decreasing: distinct, but not known so
  CHECK_FALSE(distinct({"1", "01"}));         // two texts of one value: "swf-1" and "swf-01" (told apart by the search)
  CHECK_FALSE(distinct({"1", "a2"}));         // not digits
  CHECK_FALSE(distinct({"1", "+2", "2"}));    // a sign is not a digit ("+2" is named swf-2 too)
  CHECK_FALSE(distinct({"1", "99999999999999999999999"}));  // past 64 bits
}

namespace {

/// The task names apply_traces gives a scenario whose only trace is an SWF file of `rows`.
std::vector<std::string> names_of_only_trace(const std::vector<std::string>& rows) {
  TempDir dir;
  EnvGuard env("SCHEDSIM_DATA", dir.path().string());
  std::string text;
  for (const auto& r : rows) text += r + "\n";
  dir.write("a.swf", text);
  Scenario s;
  s.traces = traces_without_nodes({"a.swf"});
  REQUIRE(apply_traces(s, {}) == 0);
  std::vector<std::string> names;
  for (const auto& t : s.tasks) names.push_back(t.name);
  return names;
}

}  // namespace

TEST_CASE("apply_traces: repeated job ids of a scenario's only trace are still renamed (no fast path for them)",
          "[traces][apply][loading]") {
  CHECK(names_of_only_trace({kRow2, kRow1, kRow4, kRow1}) == std::vector<std::string>{"swf-2", "swf-1", "swf-4", "swf-1-t0"});
}

TEST_CASE("apply_traces: a scenario's only trace with increasing job ids keeps every name", "[traces][apply][loading]") {
  CHECK(names_of_only_trace({kRow1, kRow2, kRow4}) == std::vector<std::string>{"swf-1", "swf-2", "swf-4"});
}

}  // namespace SCHEDSIM_UNITY_ID
