// Placement decision benchmark: the time of one Scheduler::schedule() call that places one
// 8-replica gang (8 x 1 GPU, and 8 x 8 GPU) on a partly filled cluster of 1,000 / 10,000 /
// 100,000 nodes, for each of the nine built-in placement policies.
//
// Usage: bench_placement [OUT.json]   (default: <source>/bench/results/placement.json)
// Env:   BENCH_PLACEMENT_SIZES=1000,10000 to restrict the sizes (e.g. for a quick Debug run).
//
// Method: the cluster is built once per size (8 x A100 nodes, 96 vCPU, 960 GiB; racks of 32
// nodes, 16 racks per switch) and partly filled with a fixed pattern (node i has (7 i) mod 9
// GPUs taken, every 5th node also a 300 milli-GPU share). For each policy a fresh Scheduler
// gets a copy; one untimed warm-up decision (first_us: a scoring policy's first decision also
// builds the node groups), then each repetition enqueues the gang, times schedule() with
// steady_clock, checks the gang started, and releases it (not timed), so every decision sees
// the same state.
// Repetitions: until 0.5 s of measured time or 1000 decisions, at least 3. decisions/s is 1 /
// the median decision (robust to other processes on a shared machine; mean_us is kept too). Last, a table of
// decisions/s at the largest size over the smallest, per policy and gang, PASS when >= 0.2.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <libsched/libsched.hpp>

using namespace libsched;

namespace {

Cluster make_cluster(std::size_t nodes) {
  Cluster c;
  PoolId p = c.add_pool("shared", PoolKind::shared);
  for (std::size_t i = 0; i < nodes; ++i) {
    NodeDesc d;
    d.name = fmt::format("n{}", i);
    d.pool = p;
    d.gpu_model = "A100";
    d.gpus = 8;
    d.cpu_milli = 96'000;
    d.mem_mib = 960 * 1024;
    d.rack = std::int32_t(i / 32);
    d.switch_id = std::int32_t(i / (32 * 16));
    NodeId id = c.add_node(d);
    std::int32_t used = std::int32_t((7 * i) % 9);
    if (used > 8) used = 8;
    if (used > 0) c.allocate(id, ReplicaShape{used, kMilliPerGpu, used * 8'000, used * 100 * 1024, 0});
    if (i % 5 == 0 && used < 8) c.allocate(id, ReplicaShape{1, 300, 1'000, 1024, 0});
  }
  return c;
}

struct Row {
  std::string policy;
  std::size_t nodes;
  std::string gang;
  std::size_t decisions;
  double mean_us;
  double per_s;
  double first_us;  ///< the untimed warm-up decision (builds node groups for scoring policies)
  double median_us;
};

}  // namespace

int main(int argc, char** argv) {
  std::string out_path = argc > 1 ? argv[1] : std::string(SCHEDSIM_SOURCE_DIR) + "/bench/results/placement.json";
  std::vector<std::size_t> sizes{1'000, 10'000, 100'000};
  if (const char* env = std::getenv("BENCH_PLACEMENT_SIZES")) {
    sizes.clear();
    std::stringstream ss(env);
    std::string tok;
    while (std::getline(ss, tok, ',')) sizes.push_back(std::stoul(tok));
  }
  struct Gang { std::string label; ReplicaShape shape; };
  const std::vector<Gang> gangs{{"8x1gpu", ReplicaShape{1, kMilliPerGpu, 8'000, 100 * 1024, 0}},
                                {"8x8gpu", ReplicaShape{8, kMilliPerGpu, 64'000, 800 * 1024, 0}}};
  const auto policies = PlacementRegistry::builtin().names();
  std::vector<Row> rows;
  fmt::print("{:<15} {:>8} {:>7} {:>9} {:>10} {:>10} {:>14} {:>12}\n", "policy", "nodes", "gang", "decisions", "mean_us",
             "median_us", "decisions/s", "first_us");
  for (std::size_t n : sizes) {
    Cluster base = make_cluster(n);
    for (const auto& policy : policies) {
      for (const auto& g : gangs) {
        SchedulerOptions o;
        o.placement = policy;
        o.preemption = false;
        Scheduler s(base, o);
        TaskSpec t;
        t.name = "gang";
        t.user = "bench";
        t.resource_type = ResourceType::pay_as_you_go;
        t.workers = 7;
        t.options.push_back(GangOption{g.label, g.shape, g.shape});
        TaskId id = s.add_task(t);
        // One untimed warm-up decision: a scoring policy's first decision also builds the
        // cluster's node groups (O(N log N), once per Scheduler); reported as first_us.
        s.enqueue(id, 0);
        auto w0 = std::chrono::steady_clock::now();
        if (s.schedule(0).started.size() != 1) {
          fmt::print(stderr, "{} on {} nodes: the gang did not start\n", policy, n);
          return 1;
        }
        auto w1 = std::chrono::steady_clock::now();
        s.release(id, 0);
        const double first_us = std::chrono::duration<double, std::micro>(w1 - w0).count();
        double total_us = 0;
        std::size_t reps = 0;
        std::vector<double> each_us;
        while (reps < 3 || (total_us < 500'000 && reps < 1000)) {
          s.enqueue(id, 0);
          auto t0 = std::chrono::steady_clock::now();
          ScheduleResult r = s.schedule(0);
          auto t1 = std::chrono::steady_clock::now();
          if (r.started.size() != 1) {
            fmt::print(stderr, "{} on {} nodes: the gang did not start\n", policy, n);
            return 1;
          }
          s.release(id, 0);
          each_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
          total_us += each_us.back();
          ++reps;
        }
        std::nth_element(each_us.begin(), each_us.begin() + std::ptrdiff_t(each_us.size() / 2), each_us.end());
        const double median_us = each_us[each_us.size() / 2];
        Row row{policy, n, g.label, reps, total_us / double(reps), 1e6 / median_us, first_us, median_us};
        fmt::print("{:<15} {:>8} {:>7} {:>9} {:>10.1f} {:>10.1f} {:>14.1f} {:>12.1f}\n", row.policy, row.nodes, row.gang, row.decisions,
                   row.mean_us, row.median_us, row.per_s, row.first_us);
        std::fflush(stdout);
        rows.push_back(row);
      }
    }
  }
  // Per policy and gang: decisions/s at the largest size over decisions/s at the smallest
  // (issue 11 target: >= 0.2 from 1,000 to 100,000 nodes).
  if (sizes.size() >= 2) {
    const std::size_t lo = *std::min_element(sizes.begin(), sizes.end()), hi = *std::max_element(sizes.begin(), sizes.end());
    fmt::print("\n{:<15} {:>7} {:>14} {:>14} {:>8}  target >= 0.2 ({} -> {} nodes)\n", "policy", "gang", "per_s small", "per_s large",
               "ratio", lo, hi);
    for (const auto& policy : policies)
      for (const auto& g : gangs) {
        double a = 0, b = 0;
        for (const Row& r : rows)
          if (r.policy == policy && r.gang == g.label) {
            if (r.nodes == lo) a = r.per_s;
            if (r.nodes == hi) b = r.per_s;
          }
        const double ratio = a > 0 ? b / a : 0;
        fmt::print("{:<15} {:>7} {:>14.1f} {:>14.1f} {:>8.3f}  {}\n", policy, g.label, a, b, ratio, ratio >= 0.2 ? "PASS" : "MISS");
      }
  }
  std::filesystem::path p(out_path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream f(out_path);
  f << "{\n  \"benchmark\": \"placement\",\n  \"unit\": \"microseconds per schedule() decision\",\n  \"results\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    f << fmt::format("    {{\"policy\": \"{}\", \"nodes\": {}, \"gang\": \"{}\", \"decisions\": {}, \"mean_us\": {:.3f}, "
                     "\"median_us\": {:.3f}, \"decisions_per_s\": {:.3f}, \"first_us\": {:.1f}}}{}\n",
                     r.policy, r.nodes, r.gang, r.decisions, r.mean_us, r.median_us, r.per_s, r.first_us, i + 1 < rows.size() ? "," : "");
  }
  f << "  ]\n}\n";
  fmt::print("wrote {}\n", out_path);
  return 0;
}
