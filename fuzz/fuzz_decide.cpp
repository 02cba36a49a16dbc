// Harness 7: bytes -> a decide snapshot on an istream -> `schedsim decide`
// (sim::decide_command, sim/decide_cli.hpp, docs/decide.md). Checks: exit 0 or 2 (1 is for a
// stream that cannot be read: never here), no exception or sanitizer report; every line on stderr
// is one diagnostic `<stdin>: ...`; exit 0 prints exactly one valid JSON object with now_s,
// placements, preemptions, waiting and next_eligibility_change_s (in this order), each placed
// or waiting task once, and the same bytes for the same snapshot; exit 2 prints nothing on
// stdout and at least one error.
#include <cstddef>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_common.hpp"
#include "sim/cli/decide_cli.hpp"

namespace {

void check_lines(const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = text.find('\n', start);
    fuzz::check(nl != std::string::npos, "stderr does not end in a newline: " + text.substr(start));
    const std::string line = text.substr(start, nl - start);
    fuzz::check(line.rfind("<stdin>", 0) == 0, "diagnostic does not name <stdin>: " + line);
    start = nl + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::isolate_data_root();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  std::ostringstream out, err;
  const int rc = sim::decide_command(in, out, err);
  const std::string o = out.str(), e = err.str();
  fuzz::check(rc == 0 || rc == 2, "decide exit status " + std::to_string(rc) + "; stderr: " + e);
  check_lines(e);
  if (rc == 2) {
    fuzz::check(o.empty(), "exit 2 but something on stdout: " + o.substr(0, 200));
    fuzz::check(e.find(": ") != std::string::npos, "exit 2 without a diagnostic");
    return 0;
  }
  const auto d = nlohmann::ordered_json::parse(o, nullptr, /*allow_exceptions=*/false);
  fuzz::check(!d.is_discarded() && d.is_object(), "exit 0 but stdout is not one JSON object: " + o.substr(0, 200));
  std::vector<std::string> keys;
  for (const auto& [k, v] : d.items()) keys.push_back(k);
  fuzz::check(keys == std::vector<std::string>{"now_s", "placements", "preemptions", "waiting", "next_eligibility_change_s"},
              "decision keys are not now_s, placements, preemptions, waiting, next_eligibility_change_s");
  fuzz::check(d["now_s"].is_number() && d["placements"].is_array() && d["preemptions"].is_array() && d["waiting"].is_array(),
              "decision members of the wrong type");
  fuzz::check(d["next_eligibility_change_s"].is_null() || d["next_eligibility_change_s"].is_number(),
              "next_eligibility_change_s is neither null nor a number");
  std::set<std::string> seen;
  for (const auto& p : d["placements"]) {
    fuzz::check(p.contains("task") && p["task"].is_string() && p.contains("replicas") && p["replicas"].is_array() &&
                    !p["replicas"].empty(),
                "placement without task or replicas: " + p.dump());
    fuzz::check(seen.insert(p["task"].get<std::string>()).second, "task placed twice: " + p["task"].dump());
  }
  for (const auto& w : d["waiting"]) {
    fuzz::check(w.contains("task") && w["task"].is_string() && w.contains("code") && w.contains("reason"),
                "waiting entry without task, code or reason: " + w.dump());
    fuzz::check(seen.insert(w["task"].get<std::string>()).second, "task both placed and waiting, or waiting twice: " + w["task"].dump());
  }
  // Deterministic: the same snapshot gives the same bytes.
  std::istringstream in2(text);
  std::ostringstream out2, err2;
  fuzz::check(sim::decide_command(in2, out2, err2) == 0 && out2.str() == o && err2.str() == e,
              "decide is not deterministic on the same snapshot");
  return 0;
}
