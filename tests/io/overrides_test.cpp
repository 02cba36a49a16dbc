// Scenario overrides (--set PATH=VALUE, --placement, --queueing): sim/io/overrides.hpp,
// docs/scenario-format.md "Overrides".
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/io/overrides.hpp"
#include "scenario_builder.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace sim::io;
using namespace sim::io::test;
using nlohmann::json;

namespace {

/// Applies `--set` arguments to the valid test scenario and parses it.
ParseResult with_sets(const std::vector<std::string>& sets, json* out_doc = nullptr) {
  std::vector<Override> ov;
  std::vector<Diagnostic> diags;
  for (const auto& s : sets) {
    auto o = parse_set_argument(s, diags);
    REQUIRE(o);
    ov.push_back(*o);
  }
  json doc = valid_scenario();
  auto r = parse_with_overrides(doc, "s.json", ov);
  if (out_doc) *out_doc = doc;
  return r;
}

}  // namespace

TEST_CASE("a --set value is JSON when it parses as JSON and a string otherwise") {
  CHECK(make_override("--set", "a", "10").value == json(10));
  CHECK(make_override("--set", "a", "2.5").value == json(2.5));
  CHECK(make_override("--set", "a", "true").value == json(true));
  CHECK(make_override("--set", "a", R"(["x","y"])").value == json::array({"x", "y"}));
  CHECK(make_override("--set", "a", R"({"k": 1})").value == json{{"k", 1}});
  CHECK(make_override("--set", "a", R"("10")").value == json("10"));
  CHECK(make_override("--set", "a", "fgd").value == json("fgd"));
  CHECK(make_override("--set", "a", "").value == json(""));
  CHECK(make_override("--set", "a", "[1,").value == json("[1,"));
}

TEST_CASE("a --set argument splits at the first = outside brackets") {
  std::vector<Diagnostic> d;
  auto o = parse_set_argument("cluster.pools[prefix=a-].count=x=y", d);
  REQUIRE(o);
  CHECK(o->path == "cluster.pools[prefix=a-].count");
  CHECK(o->value == json("x=y"));
  CHECK(d.empty());
}

TEST_CASE("a --set argument without = or with an empty path is refused") {
  std::vector<Diagnostic> d;
  CHECK_FALSE(parse_set_argument("seed", d));
  CHECK_FALSE(parse_set_argument("=3", d));
  REQUIRE(d.size() == 2);
  CHECK(d[0].str() == "--set: seed: expected PATH=VALUE (no `=`)");
  CHECK(d[1].file == "--set");
}

TEST_CASE("--set by index changes a node group count") {
  json doc;
  auto r = with_sets({"cluster.pools[0].node_groups[0].count=10"}, &doc);
  REQUIRE(r.ok());
  CHECK(r.scenario->cluster.pools[0].node_groups[0].count == 10);
  CHECK(doc["cluster"]["pools"][0]["node_groups"][0]["count"] == 10);
}

TEST_CASE("--set by name selects the element whose name matches") {
  auto r = with_sets({"tasks[sweep].duration_s=99", "cluster.pools[ded].nodes[solo-0].gpus=4"});
  REQUIRE(r.ok());
  CHECK(r.scenario->tasks[1].duration_s == 99);
  CHECK(r.scenario->tasks[0].duration_s == 3600);
  CHECK(r.scenario->cluster.pools[1].nodes[0].gpus == 4);
}

TEST_CASE("--set by KEY=VALUE selects the element whose key matches") {
  auto r = with_sets({"cluster.pools[shared-a100].node_groups[prefix=a100-].count=6", "quotas[user=alice].gpus=16"});
  REQUIRE(r.ok());
  CHECK(r.scenario->cluster.pools[0].node_groups[0].count == 6);
  CHECK(r.scenario->quotas[0].gpus == 16);
}

TEST_CASE("--set of a top-level key, a nested key and a whole array") {
  auto r = with_sets({"seed=42", "scheduler.placement=fgd", R"(tasks[pretrain].specs=["a100.8x"])"});
  REQUIRE(r.ok());
  CHECK(r.scenario->seed == 42);
  CHECK(r.scenario->scheduler.placement == "fgd");
  CHECK(r.scenario->tasks[0].specs == std::vector<std::string>{"a100.8x"});
}

TEST_CASE("--set creates a missing known key, and missing objects on its way") {
  json base = valid_scenario();
  base.erase("scheduler");
  std::vector<Diagnostic> d;
  auto o = parse_set_argument("scheduler.queueing=strict", d);
  REQUIRE(o);
  auto r = parse_with_overrides(base, "s.json", {*o});
  REQUIRE(r.ok());
  CHECK(r.scenario->scheduler.queueing == "strict");
  CHECK(base["scheduler"] == json{{"queueing", "strict"}});
}

TEST_CASE("later overrides of the same path win") {
  auto r = with_sets({"tasks[0].priority=3", "tasks[pretrain].priority=5"});
  REQUIRE(r.ok());
  CHECK(r.scenario->tasks[0].priority == 5);
}

TEST_CASE("an index past the end is refused naming the override: no such element") {
  auto r = with_sets({"cluster.pools[9].node_groups[0].count=10"});
  CHECK_FALSE(r.ok());
  CHECK_FALSE(r.scenario);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].str() ==
        "--set: cluster.pools[9].node_groups[0].count: 10: cluster.pools[9]: no such element (cluster.pools has 2 elements)");
}

TEST_CASE("a name that no element has is refused, listing the names") {
  auto r = with_sets({"tasks[nope].priority=3"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].str() ==
        "--set: tasks[nope].priority: 3: tasks[nope]: no such element (no element of tasks has name \"nope\"; names: "
        "pretrain, sweep, ray-res)");
}

TEST_CASE("a selector matching several elements is refused") {
  auto r = with_sets({"tasks[user=alice].priority=3"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].rule == "tasks[user=alice]: matches 2 elements (indices 0, 2, ...); select by index");
}

TEST_CASE("a path through a number or a selector on an object is refused") {
  auto r = with_sets({"seed.x=1"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].rule == "seed: cannot take key `x` of a number (7)");
  r = with_sets({"scheduler[0]=1"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].rule == "scheduler: is an object, not an array: `[0]` selects an array element");
}

TEST_CASE("a malformed path is refused with the syntax rule") {
  auto r = with_sets({"tasks..priority=1"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].rule == "bad path: empty key at character 7");
  r = with_sets({"[0].x=1"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].rule == "bad path: must start with a key (the scenario is an object), e.g. `cluster`");
  r = with_sets({"tasks[0]x=1"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].rule == "bad path: expected `.` or `[` after `[0]` at character 9");
}

TEST_CASE("array elements are never created by --set") {
  json base = valid_scenario();
  base.erase("events");
  std::vector<Diagnostic> d;
  auto o = parse_set_argument("events[0].at_s=1", d);
  REQUIRE(o);
  auto r = parse_with_overrides(base, "s.json", {*o});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].rule == "events[0]: no such element (events does not exist)");
  CHECK_FALSE(base.contains("events"));
}

TEST_CASE("every bad override is reported, not just the first") {
  auto r = with_sets({"tasks[9].priority=1", "seed=3", "nodes[0]=1"});
  CHECK(error_paths(r) == std::vector<std::string>{"tasks[9].priority", "nodes[0]"});
}

TEST_CASE("an overridden value is validated like a file and the diagnostic names the override") {
  auto r = with_sets({"tasks[pretrain].priority=12"});
  CHECK_FALSE(r.ok());
  REQUIRE(error_paths(r) == std::vector<std::string>{"tasks[0].priority"});
  CHECK(all_text(r) == "s.json: tasks[0].priority: 12: must be between 1 and 9 (from --set tasks[pretrain].priority=12)\n");
}

TEST_CASE("a diagnostic at a path no override set, caused by an override, names that override") {
  // max_workers set; the rule min_workers <= max_workers is reported at min_workers.
  auto r = with_sets({"tasks[ray-res].autoscaling.max_workers=0"});
  CHECK_FALSE(r.ok());
  CHECK(all_text(r) ==
        "s.json: tasks[2].autoscaling.min_workers: 1: must be <= max_workers (0) (from --set tasks[ray-res].autoscaling.max_workers=0)\n");
  // The type set; the RayJob-only option next to it is refused.
  r = with_sets({"tasks[sweep].type=PyTorchJob"});
  CHECK_FALSE(r.ok());
  REQUIRE(error_paths(r) == std::vector<std::string>{"tasks[1].head_spec"});
  CHECK(r.diagnostics[0].rule.ends_with(" (from --set tasks[sweep].type=PyTorchJob)"));
}

TEST_CASE("of several overrides, a diagnostic elsewhere names the one that causes it alone") {
  // Two a100 nodes left: the node policy's a100-3 is unknown; the seed has nothing to do with it.
  auto r = with_sets({"seed=3", "cluster.pools[0].node_groups[0].count=2", "tasks[pretrain].priority=5"});
  CHECK_FALSE(r.ok());
  REQUIRE(error_paths(r) == std::vector<std::string>{"node_policies[0].nodes[0]"});
  CHECK(r.diagnostics[0].str() ==
        "s.json: node_policies[0].nodes[0]: \"a100-3\": unknown node (from --set cluster.pools[0].node_groups[0].count=2)");
}

TEST_CASE("a duplicate reported at the other element and a reference to the old name name the rename") {
  auto r = with_sets({"tasks[pretrain].name=sweep"});
  CHECK_FALSE(r.ok());
  CHECK(all_text(r) ==
        "s.json: tasks[1].name: \"sweep\": duplicate name (also tasks[0]) (from --set tasks[pretrain].name=sweep)\n"
        "s.json: events[2].task: \"pretrain\": unknown task (not in tasks) (from --set tasks[pretrain].name=sweep)\n");
}

TEST_CASE("a diagnostic elsewhere that the document has without the overrides names none") {
  json base = valid_scenario();
  base["tasks"][0]["specs"] = json::array({"nope"});  // an error of the file itself
  std::vector<Diagnostic> d;
  auto o = parse_set_argument("cluster.pools[0].node_groups[0].count=5", d);
  REQUIRE(o);
  auto r = parse_with_overrides(base, "s.json", {*o});
  REQUIRE(error_paths(r) == std::vector<std::string>{"tasks[0].specs[0]"});
  CHECK(r.diagnostics[0].rule.find("(from") == std::string::npos);
}

TEST_CASE("a value of the wrong type taken as a string is refused by validation") {
  auto r = with_sets({"cluster.pools[0].node_groups[0].count=ten"});
  CHECK_FALSE(r.ok());
  REQUIRE(error_paths(r) == std::vector<std::string>{"cluster.pools[0].node_groups[0].count"});
  CHECK(r.diagnostics[0].value == "\"ten\"");
}

TEST_CASE("a --set of a key the format does not know is an error, not an ignored warning") {
  auto r = with_sets({"scheduler.placemnt=fgd"});
  CHECK_FALSE(r.ok());
  REQUIRE(error_paths(r) == std::vector<std::string>{"scheduler.placemnt"});
  CHECK(r.diagnostics[0].rule == "unknown key `placemnt`; did you mean `placement`? (from --set scheduler.placemnt=fgd)");
  r = with_sets({"schedulr.placement=fgd"});
  CHECK_FALSE(r.ok());
  CHECK(error_paths(r) == std::vector<std::string>{"schedulr"});
}

TEST_CASE("diagnostics the overrides did not cause are left as they are") {
  json base = valid_scenario();
  base["extra"] = 1;  // an unknown key of the file itself: a warning
  std::vector<Diagnostic> d;
  auto o = parse_set_argument("seed=3", d);
  REQUIRE(o);
  auto r = parse_with_overrides(base, "s.json", {*o});
  CHECK(r.ok());
  REQUIRE(warning_paths(r) == std::vector<std::string>{"extra"});
  CHECK(r.diagnostics[0].rule.find("--set") == std::string::npos);
}

TEST_CASE("an overridden scenario parses to the same model as the same edit made in the file") {
  json edited = valid_scenario();
  edited["cluster"]["pools"][0]["node_groups"][0]["count"] = 5;
  edited["tasks"][1]["workers"] = 2;
  const auto direct = parse_json(edited);
  const auto over = with_sets({"cluster.pools[shared-a100].node_groups[0].count=5", "tasks[sweep].workers=2"});
  REQUIRE(direct.ok());
  REQUIRE(over.ok());
  CHECK(scenario_to_json(*direct.scenario) == scenario_to_json(*over.scenario));
}

TEST_CASE("overrides apply to a scenario file read from disk, which is left unchanged") {
  const std::string path = "/tmp/schedsim_overrides_test_" + std::to_string(::getpid()) + ".json";
  const std::string text = valid_scenario().dump(2);
  { std::ofstream(path) << text; }
  json doc;
  auto r = load_scenario_file(path, {make_override("--placement", "scheduler.placement", "fgd")}, &doc);
  REQUIRE(r.ok());
  CHECK(r.scenario->scheduler.placement == "fgd");
  CHECK(r.scenario->file == path);
  CHECK(doc["scheduler"]["placement"] == "fgd");
  std::ifstream in(path);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == text);
  std::remove(path.c_str());
}

TEST_CASE("a selector with several keys selects the element matching every KEY=VALUE") {
  json doc;
  auto r = with_sets({"tasks[user=alice,type=RayJob].priority=3", "quotas[user=alice,pool=shared-a100].gpus=16"}, &doc);
  REQUIRE(r.ok());
  CHECK(r.scenario->tasks[2].priority == 3);  // ray-res: alice's RayJob; pretrain (alice's PyTorchJob) keeps 7
  CHECK(r.scenario->tasks[0].priority == 7);
  CHECK(r.scenario->quotas[0].gpus == 16);
}

TEST_CASE("a selector with several keys that no element matches is refused naming every key") {
  auto r = with_sets({"tasks[user=alice,type=TFJob].priority=3"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].str() ==
        "--set: tasks[user=alice,type=TFJob].priority: 3: tasks[user=alice,type=TFJob]: no such element (no element of tasks has "
        "user \"alice\" and type \"TFJob\")");
}

TEST_CASE("a selector with several keys matching several elements is refused") {
  auto r = with_sets({"tasks[user=alice,resource_type=reserved].priority=3"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].rule == "tasks[user=alice,resource_type=reserved]: matches 2 elements (indices 0, 2, ...); select by index");
}

TEST_CASE("a selector naming one key twice is a malformed path") {
  auto r = with_sets({"tasks[user=alice,user=bob].priority=3"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].rule == "bad path: selector `[user=alice,user=bob]` names key `user` twice");
}

}  // namespace SCHEDSIM_UNITY_ID
