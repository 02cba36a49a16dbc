// Harness 8: bytes -> `--set PATH=VALUE`, `--vary PATH=v1,v2|lo..hi[:step]`, `--placement NAME`
// and `--queueing MODE` arguments (sim/io/overrides.hpp, parse_vary of sim/multirun_cli.hpp,
// docs/scenario-format.md "Overrides", docs/planning.md) applied to a small valid scenario
// document, which is then validated (io::parse_with_overrides), as `sweep` does for its first and
// last grid points. One argument per input line (at most 8); the first character of a line says
// which option it is: `s` --set, `v` --vary, `p` --placement, `q` --queueing, anything else
// --set of the whole line. Checks: no exception escapes; every refusal is one diagnostic line
// (`--set: ...`, `--vary: ...`, `FILE: PATH: VALUE: RULE`) with a rule; a parsed --vary has 1 ..
// 10,000 values in order; an overridden scenario that validates survives the round trip
// parse(scenario_to_json(s)).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_common.hpp"
#include "sim/io/overrides.hpp"
#include "sim/cli/multirun_cli.hpp"

namespace {

using nlohmann::json;

constexpr std::size_t kMaxArguments = 8;

/// scenarios/two-gangs.json with a small workload section, so that --set reaches every kind of
/// element: named pools, groups, quotas, node policies, tasks, events and workload classes.
const char* const kBase = R"({
  "schema": "schedsim/v1", "name": "fuzz-overrides", "seed": 7, "until_s": 7200,
  "cluster": {
    "name": "c1", "region": "r1",
    "instance_specs": [
      {"name": "a100.8x", "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960},
      {"name": "a100.1x", "gpu_model": "A100", "gpus": 1, "vcpu": 12, "memory_gib": 120}],
    "pools": [
      {"name": "shared-a100", "kind": "shared",
       "node_groups": [{"prefix": "a100-", "count": 4, "gpu_model": "A100", "gpus": 8, "vcpu": 96, "memory_gib": 960}]},
      {"name": "dedicated", "kind": "dedicated", "nodes": [{"name": "h800-0", "gpu_model": "H800", "gpus": 8, "vcpu": 128, "memory_gib": 1600}]}]
  },
  "quotas": [{"user": "alice", "resource_type": "reserved", "pool": "shared-a100", "gpus": 24, "vcpu": 288, "memory_gib": 2880}],
  "node_policies": [{"name": "skip-bad", "type": "NodeNotIn", "scope": "tenant", "effect": "default",
                     "workload_types": ["PyTorchJob", "RayJob"], "nodes": ["a100-3"], "created_s": 0, "expire_s": 7200}],
  "scheduler": {"placement": "best-fit", "preemption": true, "queueing": "greedy"},
  "tasks": [
    {"name": "pretrain", "user": "alice", "submit_s": 0, "type": "PyTorchJob", "workers": 2, "specs": ["a100.8x"],
     "count_per_node": 1, "resource_type": "reserved", "pool": "shared-a100", "priority": 7, "guarantee": true,
     "duration_s": 3600, "checkpoint_interval_s": 600, "fault_tolerance": {"max_resubmissions": 2}},
    {"name": "sweep", "user": "bob", "submit_s": 60, "type": "RayJob", "workers": 3, "specs": ["a100.1x"],
     "head_spec": "a100.1x", "resource_type": "idle", "idle_stability": "low", "duration_s": 1200}],
  "events": [{"at_s": 1800, "kind": "node_down", "node": "a100-0"}, {"at_s": 2400, "kind": "node_up", "node": "a100-0"}],
  "workload": {"tasks": 5, "arrival": {"rate_per_hour": 6},
               "duration": {"distribution": "exponential", "mean_s": 600},
               "users": [{"name": "carol", "share": 1}],
               "classes": [{"name": "dev", "share": 1, "specs": ["a100.1x"], "resource_type": "pay_as_you_go",
                            "workers": {"values": [0, 1], "shares": [3, 1]}}]}
})";

const json& base_document() {
  static const json* const doc = new json(json::parse(kBase));
  return *doc;
}

void check_one_line(const std::string& s, const std::string& what) {
  fuzz::check(!s.empty(), what + ": empty");
  fuzz::check(s.find('\n') == std::string::npos && s.find('\r') == std::string::npos, what + " is not one line: " + s);
}

void check_diags(const std::vector<sim::io::Diagnostic>& ds, const std::string& what) {
  for (const auto& d : ds) {
    check_one_line(d.str(), what + " diagnostic");
    fuzz::check(!d.rule.empty(), what + " diagnostic without a rule: " + d.str());
    fuzz::check(!d.file.empty(), what + " diagnostic without a FILE part: " + d.str());
  }
}

/// Applies `ovs` to a copy of the base document and validates it; checks what comes back.
void apply_and_validate(const std::vector<sim::io::Override>& ovs) {
  using namespace sim::io;
  json doc = base_document();
  const std::string label = "fuzz.json";
  ParseResult r = parse_with_overrides(doc, label, ovs);
  check_diags(r.diagnostics, "parse_with_overrides");
  if (!r.scenario) {
    fuzz::check(count_errors(r.diagnostics) > 0, "no scenario but no error diagnostic");
    return;
  }
  if (!r.ok()) return;
  const std::string once = scenario_to_json(*r.scenario).dump();
  ParseResult again = parse_scenario_text(once, label);
  if (!again.ok()) {
    std::string why;
    for (const auto& d : again.diagnostics) why += "\n  " + d.str();
    fuzz::fail("scenario_to_json of a valid overridden scenario is invalid:" + why + "\n  json: " + once);
  }
  fuzz::check(scenario_to_json(*again.scenario).dump() == once, "round trip changed the overridden scenario");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::isolate_data_root();
  (void)base_document();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim::io;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<Override> sets;
  std::vector<sim::VaryAxis> axes;
  for (std::size_t n = 0; n < kMaxArguments && !in.empty(); ++n) {
    const auto nl = in.find('\n');
    std::string_view line = in.substr(0, nl);
    in.remove_prefix(nl == std::string_view::npos ? in.size() : nl + 1);
    const char kind = line.empty() ? 's' : line.front();
    if (kind == 's' || kind == 'v' || kind == 'p' || kind == 'q') line.remove_prefix(line.empty() ? 0 : 1);
    if (kind == 'v') {
      std::string error;
      auto ax = sim::parse_vary(line, sim::kMaxSweepRuns, error);
      if (!ax) {
        check_one_line(error, "--vary error");
        fuzz::check(error.rfind("--vary: ", 0) == 0, "--vary error does not start with `--vary: `: " + error);
        continue;
      }
      fuzz::check(error.empty(), "--vary parsed but set an error: " + error);
      fuzz::check(!ax->path.empty(), "--vary parsed with an empty PATH");
      fuzz::check(!ax->values.empty() && ax->values.size() <= sim::kMaxSweepRuns,
                  "--vary parsed " + std::to_string(ax->values.size()) + " values");
      if (ax->range) {
        fuzz::check(ax->numbers.size() == ax->values.size(), "--vary range: numbers and values differ in length");
        fuzz::check(ax->integers.empty() || ax->integers.size() == ax->values.size(), "--vary range: integers of another length");
        for (std::size_t i = 1; i < ax->numbers.size(); ++i)
          fuzz::check(ax->numbers[i - 1] <= ax->numbers[i], "--vary range values decrease: " + ax->values[i - 1] + ", " + ax->values[i]);
        for (std::size_t i = 1; i < ax->integers.size(); ++i)
          fuzz::check(ax->integers[i - 1] < ax->integers[i], "--vary integer range values do not increase");
      }
      axes.push_back(std::move(*ax));
    } else if (kind == 'p' || kind == 'q') {
      sets.push_back(make_override(kind == 'p' ? "--placement" : "--queueing",
                                   kind == 'p' ? "scheduler.placement" : "scheduler.queueing", std::string(line)));
    } else {
      std::vector<Diagnostic> ds;
      auto ov = parse_set_argument(line, ds);
      check_diags(ds, "--set");
      if (!ov) {
        fuzz::check(count_errors(ds) > 0, "--set refused without an error");
        continue;
      }
      fuzz::check(ds.empty(), "--set parsed with a diagnostic");
      sets.push_back(std::move(*ov));
    }
  }
  if (sets.empty() && axes.empty()) return 0;
  // The first and the last grid point, as sweep validates every point.
  for (int last = 0; last < 2; ++last) {
    std::vector<Override> ovs = sets;
    bool differs = false;
    for (const auto& ax : axes) {
      ovs.push_back(make_override("--vary", ax.path, last ? ax.values.back() : ax.values.front()));
      differs = differs || ax.values.size() > 1;
    }
    if (last && !differs) break;
    apply_and_validate(ovs);
  }
  return 0;
}
