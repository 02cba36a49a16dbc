// The floor (issue 38): a minimal EASY-backfilling loop on an SWF trace, timed against a whole
// `schedsim run` of the scenario that replays the same trace (scenarios/batsim-*.json), in one
// benchmark run. It reads the SWF fields as the scenario does (procs_per_node 1: a job of P
// processors takes P one-slot nodes; P = requested processors, else allocated; run time 0 ->
// 1 ms; estimate 2 x run time + 1 s; submit times rebased; MaxProcs nodes), orders the queue by
// submit time then task name ("swf-<job id>"), and runs one pass after all events of an instant.
//   bench_floor SCHEDSIM SCENARIO SWF LABEL [REPEATS]
// Prints "LABEL schedsim/floor = R x (target <= 3 x) PASS|MISS" (R on CPU seconds, best of
// REPEATS, default 3) and exits 1 when the mean waits differ by a millisecond or more.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <queue>
#include <string>
#include <vector>

namespace {

struct Job { long long submit, run, est, procs, id; };

double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}
long long ms(double s) { return static_cast<long long>(s * 1000.0 + 0.5); }
bool name_less(long long a, long long b) { return std::to_string(a) < std::to_string(b); }  // "swf-<id>"

/// Simulates EASY on the SWF file; returns the mean wait in seconds (jobs that started).
double floor_mean_wait(const char* path) {
  gzFile gz = gzopen(path, "rb");
  if (!gz) { std::perror(path); std::exit(1); }
  std::vector<Job> jobs;
  long long nodes = 0;
  char line[4096];
  while (gzgets(gz, line, sizeof line)) {
    if (line[0] == ';') {
      if (const char* p = std::strstr(line, "MaxProcs:")) nodes = std::atoll(p + 9);
      continue;
    }
    double f[18];
    char* s = line;
    int n = 0;
    for (char* e = s; n < 18; ++n, s = e) { f[n] = std::strtod(s, &e); if (e == s) break; }
    if (n < 18) continue;
    const long long procs = f[7] > 0 ? static_cast<long long>(f[7]) : static_cast<long long>(f[4]);
    const double run_s = f[3] > 0 ? f[3] : 0.001;
    jobs.push_back({ms(f[1]), ms(run_s), ms(2 * run_s + 1), procs, static_cast<long long>(f[0])});
  }
  gzclose(gz);
  if (jobs.empty()) return 0;
  long long first = jobs[0].submit;
  for (const Job& j : jobs) first = std::min(first, j.submit);
  for (Job& j : jobs) j.submit -= first;
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    return a.submit != b.submit ? a.submit < b.submit : name_less(a.id, b.id);
  });
  struct Run { long long end, est_end, procs; };
  auto later = [](const Run& a, const Run& b) { return a.end > b.end; };
  std::priority_queue<Run, std::vector<Run>, decltype(later)> ends(later);
  std::vector<Run> running;  // for the reservation: expected ends
  std::vector<const Job*> queue;
  long long free = nodes, waits = 0, started = 0;
  std::size_t next = 0;
  while (next < jobs.size() || !ends.empty()) {
    long long t = next < jobs.size() ? jobs[next].submit : ends.top().end;
    if (!ends.empty()) t = std::min(t, ends.top().end);
    while (!ends.empty() && ends.top().end == t) {
      const Run r = ends.top();
      ends.pop();
      free += r.procs;
      for (std::size_t k = 0; k < running.size(); ++k)
        if (running[k].end == r.end && running[k].procs == r.procs) { running[k] = running.back(); running.pop_back(); break; }
    }
    while (next < jobs.size() && jobs[next].submit == t) {
      if (jobs[next].procs <= nodes) queue.push_back(&jobs[next]);  // larger jobs never start
      ++next;
    }
    auto start = [&](const Job* j) {
      free -= j->procs;
      waits += t - j->submit;
      ++started;
      ends.push({t + j->run, t + j->est, j->procs});
      running.push_back({t + j->run, t + j->est, j->procs});
    };
    std::size_t i = 0;
    while (i < queue.size() && queue[i]->procs <= free) start(queue[i++]);
    std::vector<const Job*> left(queue.begin() + static_cast<long>(i), queue.end());
    if (!left.empty()) {  // the head's reservation (shadow time) and the nodes spare then
      const Job* head = left[0];
      std::sort(running.begin(), running.end(), [](const Run& a, const Run& b) { return a.est_end < b.est_end; });
      long long avail = free, shadow = 0, extra = 0;
      for (std::size_t k = 0; k < running.size(); ++k) {
        avail += running[k].procs;
        if (avail < head->procs) continue;
        shadow = running[k].est_end;  // every task expected to end at the shadow time frees its nodes then
        while (k + 1 < running.size() && running[k + 1].est_end == shadow) avail += running[++k].procs;
        extra = avail - head->procs;
        break;
      }
      std::size_t kept = 1;
      for (std::size_t k = 1; k < left.size(); ++k) {
        const Job* j = left[k];
        const bool by_shadow = t + j->est <= shadow;
        if (j->procs <= free && (by_shadow || j->procs <= extra)) {
          start(j);
          if (!by_shadow) extra -= j->procs;
        } else {
          left[kept++] = j;
        }
      }
      left.resize(kept);
    }
    queue.swap(left);
  }
  return started ? double(waits) / double(started) / 1000.0 : 0;
}

struct Child { double wall, cpu, rss_mib; };

Child run_schedsim(const char* bin, const char* scenario, const std::string& out) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    if (const int null = open("/dev/null", O_WRONLY); null >= 0) dup2(null, STDOUT_FILENO);  // its summary table
    execl(bin, bin, "run", scenario, "--out", out.c_str(), "--outputs", "summary", static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  int status = 0;
  rusage u{};
  wait4(pid, &status, 0, &u);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) { std::fprintf(stderr, "schedsim run failed\n"); std::exit(1); }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  return {wall, cpu, double(u.ru_maxrss) / 1024.0};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) { std::fprintf(stderr, "usage: bench_floor SCHEDSIM SCENARIO SWF LABEL [REPEATS]\n"); return 2; }
  const int repeats = argc > 5 ? std::atoi(argv[5]) : 3;
  double fw = 1e9, fc = 1e9, wait = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_s();
    wait = floor_mean_wait(argv[3]);
    fc = std::min(fc, cpu_s() - c0);
    fw = std::min(fw, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  rusage self{};
  getrusage(RUSAGE_SELF, &self);
  const std::string out = (std::filesystem::temp_directory_path() / ("schedsim-floor-" + std::to_string(getpid()))).string();
  Child best{1e9, 1e9, 0};
  for (int r = 0; r < repeats; ++r) {
    const Child c = run_schedsim(argv[1], argv[2], out);
    best = {std::min(best.wall, c.wall), std::min(best.cpu, c.cpu), std::max(best.rss_mib, c.rss_mib)};
  }
  std::ifstream in(out + "/summary.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(out);
  const auto at = text.find("\"mean_wait_s\":");
  const double sim_wait = at == std::string::npos ? -1 : std::atof(text.c_str() + at + 14);
  const double r = best.cpu / fc;
  std::printf("%s: schedsim %.3f s wall, %.3f s CPU, %.1f MiB; floor %.3f s wall, %.3f s CPU, %.1f MiB; mean wait %.3f s vs %.3f s\n",
              argv[4], best.wall, best.cpu, best.rss_mib, fw, fc, double(self.ru_maxrss) / 1024.0, sim_wait, wait);
  std::printf("%s schedsim/floor = %.1f x (target <= 3 x) %s (CPU; wall %.1f x)\n", argv[4], r, r <= 3 ? "PASS" : "MISS", best.wall / fw);
  if (std::llround(sim_wait * 1000) != std::llround(wait * 1000)) {
    std::fprintf(stderr, "%s: mean waits differ: schedsim %.3f s, floor %.3f s\n", argv[4], sim_wait, wait);
    return 1;
  }
  return 0;
}
