// Outputs are published completely or not at all (docs/outputs.md "Publishing"), exit codes
// (1 environment, 2 input, 130/143 signals), and runtime bounds seen from the CLI. Write
// failures are injected with an LD_PRELOAD shim (tests/failshim) so no mount is needed.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

using testutil::slurp;

/// Every entry under `d` (relative path -> content, "<dir>" for directories), recursively.
std::map<std::string, std::string> tree(const fs::path& d) {
  std::map<std::string, std::string> m;
  if (!fs::exists(d)) return m;
  for (auto& e : fs::recursive_directory_iterator(d))
    m[fs::relative(e.path(), d).string()] = e.is_directory() ? "<dir>" : slurp(e.path());
  return m;
}

/// Entries of `dir` whose name contains `needle` (staging leftovers).
std::vector<std::string> entries_with(const fs::path& dir, const std::string& needle) {
  std::vector<std::string> v;
  if (!fs::exists(dir)) return v;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(needle) != std::string::npos) v.push_back(e.path().string());
  return v;
}

struct Result {
  int status = -1;  // exit status, or 128 + signal when killed
  std::string err;
  double seconds = 0;
};

/// Runs `schedsim ARGS` with extra environment `env` ("K=V K2=V2"), capturing stderr.
Result schedsim(const std::string& args, const std::string& env = "", const fs::path& errfile = "") {
  fs::path ef = errfile.empty() ? fs::temp_directory_path() / ("schedsim-publish-err-" + std::to_string(::getpid())) : errfile;
  // The shim is preloaded into a possibly sanitized binary: ASan must not insist on coming first.
  std::string cmd = "env ASAN_OPTIONS=verify_asan_link_order=0 " + env + " " + SCHEDSIM_BINARY + " " + args +
                    " >/dev/null 2>" + ef.string();
  auto t0 = std::chrono::steady_clock::now();
  int st = std::system(cmd.c_str());
  Result r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.err = slurp(ef);
  fs::remove(ef);
  return r;
}

std::string shim(const std::string& file, const std::string& op, const std::string& err = "ENOSPC") {
  return std::string("LD_PRELOAD=") + SCHEDSIM_FAILSHIM + " SCHEDSIM_FAIL_FILE=" + file + " SCHEDSIM_FAIL_OP=" + op +
         " SCHEDSIM_FAIL_ERRNO=" + err;
}

fs::path work_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("schedsim-publish-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

const char* k_small = R"({"schema": "schedsim/v1", "name": "small", "seed": 1,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "g1", "gpu_model": "A100", "gpus": 1, "vcpu": 8, "memory_gib": 64}],
    "pools": [{"name": "p", "kind": "shared", "node_groups": [{"prefix": "n-", "count": 2, "gpu_model": "A100",
               "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
  "tasks": [
    {"name": "a", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["g1"],
     "resource_type": "pay_as_you_go", "pool": "p", "duration_s": 100},
    {"name": "b", "user": "u", "submit_s": 10, "type": "PyTorchJob", "workers": 1, "specs": ["g1"],
     "resource_type": "pay_as_you_go", "pool": "p", "duration_s": 50}]})";

/// A run that takes very long: every image pull (1 s) fails and is retried without limit until
/// until_s (1e9 s). (Without until_s it is refused before simulating.)
const char* k_endless = R"({"schema": "schedsim/v1", "name": "endless", "seed": 1, "until_s": 1000000000,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "g1", "gpu_model": "A100", "gpus": 1, "vcpu": 8, "memory_gib": 64}],
    "pools": [{"name": "p", "kind": "shared", "node_groups": [{"prefix": "n-", "count": 1, "gpu_model": "A100",
               "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
  "tasks": [
    {"name": "a", "user": "u", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["g1"],
     "resource_type": "pay_as_you_go", "pool": "p", "duration_s": 100,
     "image_pull_s": 1, "image_pull_failure_prob": 1, "image_pull_retries": -1}]})";

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

}  // namespace

TEST_CASE("a write, fsync, close or rename failure on any output file exits 1 and leaves an existing --out byte-identical") {
  fs::path w = work_dir("inject");
  write(w / "s.json", k_small);
  // The files a run produces (so that files added later are covered too).
  REQUIRE(schedsim("run " + (w / "s.json").string() + " --no-progress --out " + (w / "ref").string()).status == 0);
  std::vector<std::string> files;
  for (auto& e : fs::directory_iterator(w / "ref")) files.push_back(e.path().filename().string());
  REQUIRE(files.size() >= 5);
  for (const auto& f : files) {
    for (const char* op : {"write", "fsync", "close", "rename"}) {
      for (const char* errname : {"ENOSPC", "EIO"}) {
        INFO(f << " " << op << " " << errname);
        // A previous output directory with known content, plus a file of the user's.
        fs::path out = w / "out";
        fs::remove_all(out);
        fs::create_directories(out);
        for (const auto& g : files) write(out / g, "previous " + g + "\n");
        write(out / "notes.txt", "mine\n");
        auto before = tree(out);
        Result r = schedsim("run " + (w / "s.json").string() + " --no-progress --out " + out.string(), shim(f, op, errname));
        CHECK(r.status == 1);
        CHECK(r.err.find(f) != std::string::npos);
        CHECK(tree(out) == before);
        CHECK(entries_with(w, ".tmp-").empty());
        // A new directory is not created at all (it is published by one rename of the whole
        // staging directory, so a per-file rename failure cannot happen there: see below).
        if (std::string(op) != "rename") {
          fs::path fresh = w / "fresh";
          r = schedsim("run " + (w / "s.json").string() + " --no-progress --out " + fresh.string(), shim(f, op, errname));
          CHECK(r.status == 1);
          CHECK_FALSE(fs::exists(fresh));
          CHECK(entries_with(w, ".tmp-").empty());
        }
      }
    }
  }
  // The rename of the whole new directory into place fails: nothing appears.
  Result r = schedsim("run " + (w / "s.json").string() + " --no-progress --out " + (w / "whole").string(), shim("whole", "rename"));
  CHECK(r.status == 1);
  CHECK_FALSE(fs::exists(w / "whole"));
  CHECK(entries_with(w, ".tmp-").empty());
  // Without injected failures the existing directory gets the new files and keeps the user's.
  fs::path out = w / "out";
  REQUIRE(schedsim("run " + (w / "s.json").string() + " --no-progress --out " + out.string()).status == 0);
  for (const auto& f : files) CHECK(slurp(out / f) == slurp(w / "ref" / f));
  CHECK(slurp(out / "notes.txt") == "mine\n");
  CHECK(entries_with(out, ".schedsim-tmp-").empty());
  fs::remove_all(w);
}

TEST_CASE("a write, fsync or close failure on the streamed timeline.json exits 1, publishes nothing and leaves an existing --out as it was") {
  fs::path w = work_dir("timeline");
  write(w / "s.json", k_small);
  const std::string run = "run " + (w / "s.json").string() + " --no-progress --outputs all --out ";
  REQUIRE(schedsim(run + (w / "ref").string()).status == 0);
  REQUIRE(fs::exists(w / "ref" / "timeline.json"));
  for (const char* op : {"write", "fsync", "close"}) {
    INFO(op);
    fs::path out = w / "out";
    fs::remove_all(out);
    fs::create_directories(out);
    write(out / "timeline.json", "previous\n");
    write(out / "notes.txt", "mine\n");
    const auto before = tree(out);
    Result r = schedsim(run + out.string(), shim("timeline.json", op));
    CHECK(r.status == 1);
    CHECK(r.err.find("timeline.json") != std::string::npos);
    CHECK(tree(out) == before);
    r = schedsim(run + (w / "fresh").string(), shim("timeline.json", op));
    CHECK(r.status == 1);
    CHECK_FALSE(fs::exists(w / "fresh"));
    CHECK(entries_with(w, ".tmp-").empty());
  }
  REQUIRE(schedsim(run + (w / "out").string()).status == 0);
  CHECK(slurp(w / "out" / "timeline.json") == slurp(w / "ref" / "timeline.json"));
  CHECK(slurp(w / "out" / "notes.txt") == "mine\n");
  fs::remove_all(w);
}

TEST_CASE("fill and convert report write failures with exit 1 and publish nothing") {
  fs::path w = work_dir("fillconv");
  write(w / "s.json", k_small);
  for (const char* op : {"write", "fsync", "close"}) {
    INFO(op);
    Result r = schedsim("fill " + (w / "s.json").string() + " --semantics platform --out " + (w / "fill").string(), shim("fill.csv", op));
    CHECK(r.status == 1);
    CHECK_FALSE(fs::exists(w / "fill"));
    CHECK(entries_with(w, ".tmp-").empty());
  }
  fs::create_directories(w / "fill");
  write(w / "fill" / "fill.csv", "previous\n");
  for (const char* op : {"write", "fsync", "close", "rename"}) {
    INFO(op);
    Result r = schedsim("fill " + (w / "s.json").string() + " --semantics platform --out " + (w / "fill").string(), shim("fill.csv", op));
    CHECK(r.status == 1);
    CHECK(slurp(w / "fill" / "fill.csv") == "previous\n");
    CHECK(entries_with(w / "fill", ".schedsim-tmp-").empty());
  }
  REQUIRE(schedsim("fill " + (w / "s.json").string() + " --semantics platform --out " + (w / "fill").string()).status == 0);
  CHECK(slurp(w / "fill" / "fill.csv").rfind("arrived_pct,", 0) == 0);
  // convert: an SWF trace to a scenario file; a failed write leaves the previous file.
  write(w / "t.swf", "; SWF\n1 0 0 100 4 -1 -1 4 100 -1 1 1 1 1 1 -1 -1 -1\n");
  write(w / "conv.json", "previous\n");
  const std::string args =
      "convert --format swf --path " + (w / "t.swf").string() + " --procs-per-node 4 --out " + (w / "conv.json").string();
  for (const char* op : {"write", "fsync", "close", "rename"}) {
    INFO(op);
    // The temporary file is conv.json.tmp-<pid>; the final rename targets conv.json.
    Result r = schedsim(args, shim(std::string(op) == "rename" ? "conv.json" : "conv.json.tmp-*", op));
    CHECK(r.status == 1);
    CHECK(slurp(w / "conv.json") == "previous\n");
    CHECK(entries_with(w, "conv.json.tmp-").empty());
  }
  REQUIRE(schedsim(args).status == 0);
  CHECK(slurp(w / "conv.json").find("schedsim/v1") != std::string::npos);
  fs::remove_all(w);
}

TEST_CASE("an unusable --out is refused with exit 1 before simulating") {
  fs::path w = work_dir("early");
  write(w / "endless.json", k_endless);  // would run for a very long time if it were simulated
  SECTION("read-only parent (mkdir fails with EROFS)") {
    Result r = schedsim("run " + (w / "endless.json").string() + " --no-progress --out " + (w / "ro" / "out").string(),
                        shim("", "mkdir", "EROFS"));
    CHECK(r.status == 1);
    CHECK(r.seconds < 20);
    CHECK(r.err.find("Read-only file system") != std::string::npos);
    CHECK_FALSE(fs::exists(w / "ro"));
  }
  SECTION("parent without write permission") {
    if (::geteuid() == 0) return;  // root ignores permissions; the EROFS section covers it
    fs::create_directories(w / "locked");
    fs::permissions(w / "locked", fs::perms::owner_read | fs::perms::owner_exec);
    Result r = schedsim("run " + (w / "endless.json").string() + " --no-progress --out " + (w / "locked" / "out").string());
    fs::permissions(w / "locked", fs::perms::owner_all);
    CHECK(r.status == 1);
    CHECK(r.seconds < 20);
  }
  SECTION("a dangling symbolic link") {
    fs::create_symlink(w / "nowhere", w / "link");
    Result r = schedsim("run " + (w / "endless.json").string() + " --no-progress --out " + (w / "link").string());
    CHECK(r.status == 1);
    CHECK(r.err.find("dangling symbolic link") != std::string::npos);
    CHECK(fs::is_symlink(w / "link"));
    CHECK_FALSE(fs::exists(w / "nowhere"));
  }
  SECTION("fill and convert check --out first too") {
    write(w / "s.json", k_small);
    Result r = schedsim("fill " + (w / "s.json").string() + " --semantics platform --out " + (w / "ro" / "fill").string(), shim("", "mkdir", "EROFS"));
    CHECK(r.status == 1);
    fs::create_symlink(w / "nowhere", w / "conv-link");
    r = schedsim("convert --format swf --path " + (w / "missing.swf").string() + " --out " + (w / "conv-link").string());
    CHECK(r.status == 1);  // the output is checked before the (missing) trace is read
  }
  fs::remove_all(w);
}

TEST_CASE("--out may be a symbolic link to a directory: files land in its target, the link stays") {
  fs::path w = work_dir("symlink");
  write(w / "s.json", k_small);
  fs::create_directories(w / "real");
  fs::create_symlink(w / "real", w / "link");
  REQUIRE(schedsim("run " + (w / "s.json").string() + " --no-progress --out " + (w / "link").string()).status == 0);
  CHECK(fs::is_symlink(w / "link"));
  CHECK(fs::exists(w / "real" / "summary.json"));
  CHECK(entries_with(w / "real", ".schedsim-tmp-").empty());
  fs::remove_all(w);
}

TEST_CASE("SIGINT and SIGTERM during a long run leave no staging directory and exit 130 / 143") {
  fs::path w = work_dir("signal");
  write(w / "endless.json", k_endless);
  for (int sig : {SIGINT, SIGTERM}) {
    INFO(sig);
    fs::path out = w / "out";
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      
      std::freopen("/dev/null", "w", stderr);
      ::execl(SCHEDSIM_BINARY, SCHEDSIM_BINARY, "run", (w / "endless.json").c_str(), "--no-progress", "--out", out.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Wait until the staging directory exists (the run is simulating), then interrupt.
    for (int i = 0; i < 400 && entries_with(w, ".tmp-").empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    CHECK_FALSE(entries_with(w, ".tmp-").empty());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::kill(pid, sig);
    int st = 0;
    ::waitpid(pid, &st, 0);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 128 + sig);
    CHECK(entries_with(w, ".tmp-").empty());
    CHECK_FALSE(fs::exists(out));
  }
  fs::remove_all(w);
}

TEST_CASE("staging directories left by killed runs are removed by the next run") {
  fs::path w = work_dir("stale");
  write(w / "s.json", k_small);
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);  // a pid that no longer exists
  fs::create_directories(w / ("out.tmp-" + std::to_string(dead)) / "x");
  fs::create_directories(w / ("out.tmp-" + std::to_string(::getpid())));  // a live process: kept
  REQUIRE(schedsim("run " + (w / "s.json").string() + " --no-progress --out " + (w / "out").string()).status == 0);
  CHECK_FALSE(fs::exists(w / ("out.tmp-" + std::to_string(dead))));
  CHECK(fs::exists(w / ("out.tmp-" + std::to_string(::getpid()))));
  // Inside an existing --out.
  fs::create_directories(w / "out" / (".schedsim-tmp-" + std::to_string(dead)));
  REQUIRE(schedsim("run " + (w / "s.json").string() + " --no-progress --out " + (w / "out").string()).status == 0);
  CHECK(entries_with(w / "out", ".schedsim-tmp-").empty());
  fs::remove_all(w);
}

TEST_CASE("runtime bounds from the CLI: exit 2, the cause named, nothing written") {
  fs::path w = work_dir("bounds");
  SECTION("an image pull shorter than 1 ms retried without limit is refused (validation minimum; runtime_bounds_test covers the cap)") {
    std::string s = k_endless;
    s.replace(s.find("\"image_pull_s\": 1"), 17, "\"image_pull_s\": 0.0001");
    write(w / "s.json", s);
    Result r = schedsim("run " + (w / "s.json").string() + " --no-progress --out " + (w / "out").string());
    CHECK(r.status == 2);
    CHECK(r.err.find("tasks[0].image_pull_s") != std::string::npos);
    CHECK_FALSE(fs::exists(w / "out"));
    CHECK(entries_with(w, ".tmp-").empty());
  }
  SECTION("an image pull that always fails, with no breaker and no until_s, is refused before simulating") {
    // Fuzz finding run-oom-image-pull-forever: it used to grow memory until the process died.
    std::string s = k_endless;
    s.replace(s.find(" \"until_s\": 1000000000,"), 23, "");
    write(w / "s.json", s);
    Result r = schedsim("run " + (w / "s.json").string() + " --no-progress --out " + (w / "out").string());
    CHECK(r.status == 2);
    CHECK(r.seconds < 20);
    CHECK(r.err.find((w / "s.json").string() + ": tasks[0].image_pull_retries: -1: task \"a\" pulls an image that always fails") == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(w / "out"));
  }
  SECTION("--until stops a run whose clock advances forever") {
    write(w / "s.json", k_endless);
    Result r = schedsim("run " + (w / "s.json").string() + " --no-progress --until 5000 --out " + (w / "out").string());
    CHECK(r.status == 0);
    CHECK(slurp(w / "out" / "summary.json").find("\"makespan_s\": 5000") != std::string::npos);
  }
  SECTION("a time series of more than the maximum rows is refused before simulating") {
    std::string s = k_endless;
    s.replace(s.find("\"seed\": 1,"), 10, "\"seed\": 1, \"timeseries_interval_s\": 1,");
    write(w / "s.json", s);
    Result r = schedsim("run " + (w / "s.json").string() + " --no-progress --out " + (w / "out").string());
    CHECK(r.status == 2);
    CHECK(r.seconds < 20);
    CHECK(r.err.find("timeseries_interval_s") != std::string::npos);
    CHECK_FALSE(fs::exists(w / "out"));
  }
  fs::remove_all(w);
}

}  // namespace SCHEDSIM_UNITY_ID
