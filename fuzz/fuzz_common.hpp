// Helpers shared by the libFuzzer harnesses (docs/fuzzing.md). Header-only, harness code only.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/io/scenario.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"
#include "sim/engine/simulator.hpp"

namespace fuzz {

/// A broken invariant: print it and abort, so that libFuzzer saves the input as a crash.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "\n==FUZZ INVARIANT== %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

/// A per-process scratch directory under $TMPDIR (default /tmp), removed at exit.
inline const std::string& scratch_dir() {
  // Never destroyed: the atexit cleanup runs after static destructors of this translation unit.
  static const std::string* const dir = [] {
    const char* t = std::getenv("TMPDIR");
    std::filesystem::path base = (t && *t) ? t : "/tmp";
    std::filesystem::path d = base / ("schedsim-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d / "data");
    auto* s = new std::string(d.string());
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return s;
  }();
  return *dir;
}

/// For the harnesses that write folders for each input (merge, report): when $TMPDIR is not set
/// and /dev/shm is a folder, the scratch directory goes there (memory, not disk: the outputs are
/// published with fsync, which made a disk-backed /tmp 6x slower). Call before scratch_dir().
inline void prefer_memory_tmpdir() {
  const char* t = std::getenv("TMPDIR");
  std::error_code ec;
  if ((!t || !*t) && std::filesystem::is_directory("/dev/shm", ec)) ::setenv("TMPDIR", "/dev/shm", 1);
}

/// The trace readers only take paths: the input goes to a per-process file (rewritten each run).
inline std::string write_temp(const std::uint8_t* data, std::size_t size, const std::string& name) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  f.close();
  if (!f) fail("cannot write scratch file " + path);
  return path;
}

/// Points the data root ($SCHEDSIM_DATA) at an empty scratch directory, so that a fuzzed
/// scenario's `traces` never reads real data.
inline void isolate_data_root() { ::setenv("SCHEDSIM_DATA", (scratch_dir() + "/data").c_str(), 1); }

/// True when every trace path of the scenario stays inside the (empty) data root.
inline bool traces_are_contained(const sim::io::Scenario& sc) {
  auto ok = [](const std::string& p) {
    return p.empty() || (p.front() != '/' && p.find("..") == std::string::npos);
  };
  for (const auto& t : sc.traces)
    if (!ok(t.path) || !ok(t.nodes)) return false;
  return true;
}

/// Every diagnostic renders, names the file and has a rule; malformed JSON has a position.
inline void check_diagnostics(const sim::io::ParseResult& r, const std::string& label) {
  for (const auto& d : r.diagnostics) {
    const std::string s = d.str();
    check(!s.empty(), "empty diagnostic");
    check(d.file == label, "diagnostic names file '" + d.file + "', not '" + label + "': " + s);
    check(!d.rule.empty(), "diagnostic without a rule: " + s);
  }
  if (!r.scenario) check(sim::io::count_errors(r.diagnostics) > 0, "no scenario but no error diagnostic");
}

/// Runs the simulator on a scenario the way `schedsim run` does (minus the files) and checks
/// what can be checked from outside: attempts are consistent and the outputs render.
inline void simulate_and_check(const sim::io::Scenario& sc, std::optional<double> until_s, bool write_files = false) {
  sim::SimOptions opt;
  opt.until_s = until_s;
  std::unique_ptr<sim::Simulator> s;
  try {
    s = std::make_unique<sim::Simulator>(sc, std::move(opt));
  } catch (const std::invalid_argument&) {
    return;  // documented: dangling references (validated scenarios should not have any)
  }
  try {
    s->run();
  } catch (const sim::SimulationLimitError& e) {
    // Documented: a runtime bound (exit 2 in `schedsim run`), reported as one line.
    const std::string m = e.what();
    check(!m.empty() && m.find('\n') == std::string::npos, "runtime-bound message is not one line: " + m);
    return;
  }
  const std::size_t tasks = s->task_count();
  const sim::Time makespan = s->makespan();
  check(makespan >= 0, "negative makespan " + std::to_string(makespan));
  int last_task = -1, last_attempt = 0;
  for (const sim::AttemptRecord* a : s->attempts()) {
    const std::string who = "task " + std::to_string(a->task) + " attempt " + std::to_string(a->attempt);
    check(a->task >= 0 && static_cast<std::size_t>(a->task) < tasks, who + ": task index out of range");
    if (a->task == last_task)
      check(a->attempt == last_attempt + 1, who + ": attempts not numbered 1, 2, ...");
    else
      check(a->attempt == 1, who + ": first attempt is not 1");
    last_task = a->task;
    last_attempt = a->attempt;
    check(a->submit >= 0, who + ": negative submit");
    if (a->start >= 0) {
      check(a->start >= a->submit, who + ": start " + std::to_string(a->start) + " < submit " + std::to_string(a->submit));
      if (a->end >= 0) check(a->end >= a->start, who + ": end " + std::to_string(a->end) + " < start " + std::to_string(a->start));
      if (a->run_start >= 0) check(a->run_start >= a->start, who + ": run_start < start");
    } else {
      check(a->run_start < 0, who + ": run_start without start");
    }
    check(a->work_done >= 0 && a->lost_work >= 0 && a->work_needed >= 0, who + ": negative work");
    check(a->lost_work <= a->work_done, who + ": lost_work > work_done");
    check(a->gpu_milli >= 0, who + ": negative gpu_milli");
    const bool final_state = a->state == sim::AttemptState::succeeded || a->state == sim::AttemptState::failed ||
                             a->state == sim::AttemptState::stopped;
    if (final_state && a->start >= 0) check(a->end >= 0, who + ": final state without end");
  }
  for (const auto& st : s->task_stats()) {
    check(st.wait_quota >= 0 && st.wait_capacity >= 0 && st.wait_fragmentation >= 0 && st.wait_node_policy >= 0 &&
              st.wait_preemption >= 0,
          "negative wait bucket");
    check(st.lost_work >= 0 && st.resubmissions >= 0, "negative lost_work or resubmissions");
    if (st.succeeded) check(st.finished, "succeeded but not finished");
  }
  // No over-commit: what is allocated never exceeds the GPUs of the whole cluster (up or down).
  std::int64_t cluster_milli = 0;
  for (const auto& p : sc.cluster.pools) {
    for (const auto& g : p.node_groups) cluster_milli += std::int64_t(g.count) * g.gpus * 1000;
    for (const auto& n : p.nodes) cluster_milli += std::int64_t(n.gpus) * 1000;
  }
  for (const auto& snap : s->snapshots()) {
    std::int64_t alloc = 0;
    for (auto g : snap.gpu_by_class) {
      check(g >= 0, "negative allocated GPU in a snapshot");
      alloc += g;
    }
    check(alloc <= cluster_milli, "snapshot at " + std::to_string(snap.time) + " ms: " + std::to_string(alloc) +
                                      " milli-GPU allocated > " + std::to_string(cluster_milli) + " in the cluster");
    check(snap.gpu_up <= cluster_milli, "gpu_up > cluster GPUs");
  }
  // Costs (docs/outputs.md "Costs"): finite, non-negative, the parts add up to the total, and
  // what was lost or left unused is part of what was paid or committed.
  const sim::CostSummary cost = s->cost_summary();
  double parts = 0;
  for (double c : cost.by_class) {
    check(std::isfinite(c) && c >= 0, "a cost class is negative or not finite");
    parts += c;
  }
  check(std::abs(parts - cost.total) <= 1e-9 * std::max(1.0, cost.total), "the cost classes do not add up to cost_total");
  check(cost.reserved_unused >= 0 && cost.reserved_unused <= cost.by_class[0] * (1 + 1e-9) + 1e-9,
        "cost_reserved_unused outside [0, cost_reserved]");
  check(cost.lost_work >= 0 && cost.lost_work <= cost.total * (1 + 1e-9) + 1e-9, "cost_lost_work outside [0, cost_total]");
  for (const sim::AttemptRecord* a : s->attempts()) {
    const double c = sim::Simulator::billed_cost(*a);
    check(std::isfinite(c) && c >= 0, "an attempt's cost is negative or not finite");
  }
  const std::string summary = s->summary_json();
  check(nlohmann::json::accept(summary), "summary_json() is not valid JSON");
  const std::string csv = s->tasks_csv();
  check(!csv.empty(), "empty tasks.csv");
  if (write_files) {
    const std::string out = scratch_dir() + "/out";
    std::filesystem::create_directories(out);
    s->write_outputs(out);
  }
}

/// SCHEDSIM_FUZZ_VERBOSE=1: print each exit status and stderr.
inline bool verbose() {
  static const bool on = [] {
    const char* e = std::getenv("SCHEDSIM_FUZZ_VERBOSE");
    return e && *e == '1';
  }();
  return on;
}

}  // namespace fuzz
