// Issue #15 (input hardening), trace side: trace tasks and nodes go through the scenario's value
// rules; sizes are bounded before anything is allocated; arithmetic on trace quantities is checked.
#include <catch2/catch.hpp>

#include <chrono>
#include <ctime>
#include <string>
#include <sys/stat.h>
#include <zlib.h>

#include "sim/io/limits.hpp"
#include "sim/io/traces.hpp"
#include "trace_test_util.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace sim::io;
using trace_test::error_of;
using trace_test::TempDir;

namespace {

const char* k_swf_row = "1 0 0 10 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n";

/// A gzip file of `total` zero bytes made of ~1 KB deflate segments repeated (a "bomb": a 2 GB
/// inflation from ~2 MB). Built in milliseconds: one segment is compressed, then copied.
std::string gzip_bomb(std::uint64_t total) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) == Z_OK);
  const std::string zeros(1 << 20, '\0');
  std::string out(1 << 16, '\0');
  auto segment = [&](int flush, const std::string& in) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    std::string seg;
    do {
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      deflate(&z, flush);
      seg.append(out.data(), out.size() - z.avail_out);
    } while (z.avail_out == 0);
    return seg;
  };
  std::string gz = {'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, '\xff'};
  gz += segment(Z_FULL_FLUSH, zeros);
  const std::string again = segment(Z_FULL_FLUSH, zeros);  // after a full flush: self-contained
  for (std::uint64_t n = 2; n < total >> 20; ++n) gz += again;
  gz += segment(Z_FINISH, std::string());
  deflateEnd(&z);
  gz.append(8, '\0');  // CRC and size (never reached: the limit stops inflation first)
  return gz;
}

}  // namespace

TEST_CASE("swf: MaxProcs / MaxNodes / a job beyond the node limit are refused before allocation", "[traces][hardening]") {
  TempDir dir;
  TraceCfg cfg;
  cfg.format = "swf";
  for (const char* key_c : {"MaxProcs", "MaxNodes"}) {
    const std::string key(key_c);
    std::string text("; Version: 2\n; ");
    text.append(key).append(": 100000000000\n").append(k_swf_row);
    const auto p = dir.write("h.swf", text);
    const auto msg = error_of([&] { read_swf(p, cfg, {}); });
    CHECK(msg.find(p + ":2:1: header " + key + ": 100000000000: gives 100000000000 nodes") == 0);
    CHECK(msg.find("more than 1000000") != std::string::npos);
  }
  // One job of 9.2e18 processors: not `workers = -2`, a refused row naming file, line and field.
  const auto p = dir.write("j.swf", "1 0 0 10 9200000000000000000 -1 -1 9200000000000000000 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n");
  const auto msg = error_of([&] { read_swf(p, cfg, {}); });
  CHECK(msg.find(p + ":1:") == 0);
  CHECK(msg.find("field 8 (requested processors): 9200000000000000000 processors") != std::string::npos);
  // ... skipped with skip_bad_rows, counted.
  TraceOptions skip;
  skip.skip_bad_rows = true;
  cfg.nodes = "none";
  const auto load = read_swf(p, cfg, skip);
  CHECK(load.tasks.empty());
  CHECK(load.skipped_rows == 1);
}

TEST_CASE("philly: a shape 2147483647+1 does not wrap", "[traces][hardening]") {
  TempDir dir;
  TraceCfg cfg;
  cfg.format = "philly";
  const auto p = dir.write("philly.csv", "#job id,arrival time (sec),topology,shape,size,duration (sec)\n"
                                         "j1,0,x,2147483647+1,2147483648,10\n");
  const auto msg = error_of([&] { read_philly_jobs(p, cfg, {}); });
  CHECK(msg.find(p + ":2:") == 0);
  CHECK(msg.find("replica.gpus: 2147483647: must be between 0 and 64") != std::string::npos);
}

TEST_CASE("openb: trace values go through the scenario rules (1e300 milli-CPU, huge memory)", "[traces][hardening]") {
  TempDir dir;
  TraceCfg cfg;
  cfg.format = "openb";
  const auto p = dir.write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\npod-a,1e300,1024,1,500\n");
  const auto msg = error_of([&] { read_openb_pods(p, cfg, {}); });
  CHECK(msg.find(p + ":2:1: task `pod-a`: replica.vcpu: 1e+297: must be between 0 and") == 0);
  const auto n = dir.write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nnode-a,1000,1e300,0,\n");
  const auto nmsg = error_of([&] { read_openb_nodes(n, {}); });
  CHECK(nmsg.find(n + ":2:1: node `node-a`: memory_gib: ") == 0);
  // A pod lasting 2e9 s (after time_scale) breaks the 1e9 s bound of every time.
  const auto q = dir.write("pods2.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n"
                                        "pod-b,1000,1024,0,0,0,2000000000\n");
  CHECK(error_of([&] { read_openb_pods(q, cfg, {}); }).find("duration_s: 2000000000") != std::string::npos);
}

TEST_CASE("a gzip bomb is refused once it inflates past the limit, naming the file", "[traces][hardening]") {
  TempDir dir;
  const std::string bomb = gzip_bomb(std::uint64_t{2} << 30);  // 2 GiB of zeros
  CHECK(bomb.size() < 3u * 1024 * 1024);
  const auto p = dir.write("bomb.swf.gz", bomb);
  TraceCfg cfg;
  cfg.format = "swf";
  TraceOptions opts;
  opts.max_bytes = 16u << 20;  // the default (1 GiB) works the same, only slower
  const std::clock_t c0 = std::clock();  // CPU time: the test machine may be shared
  const auto msg = error_of([&] { read_swf(p, cfg, opts); });
  CHECK(double(std::clock() - c0) / CLOCKS_PER_SEC < 2.0);
  CHECK(msg == "trace: '" + p + "': decompresses to more than 16777216 bytes (the limit for one trace file)");
  // A plain file over the limit, and an overlong line.
  opts.max_bytes = 1000;
  const auto big = dir.write("big.swf", std::string(2000, ';'));
  CHECK(error_of([&] { read_swf(big, cfg, opts); }).find("has more than 1000 bytes") != std::string::npos);
  const auto longline = dir.write("long.swf", std::string(limits::max_trace_line_bytes + 10, 'x') + "\n");
  CHECK(error_of([&] { read_swf(longline, cfg, {}); }) ==
        longline + ":1:1: line longer than 1048576 bytes (the limit for one trace line)");
}

TEST_CASE("trace paths that are not regular files say so", "[traces][hardening]") {
  TempDir dir;
  const auto fifo = (dir.path() / "f.swf").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::filesystem::create_directories(dir.path() / "d.swf");
  CHECK(error_of([&] { resolve_data_path(fifo, "swf"); }).find("is not a regular file (a FIFO)") != std::string::npos);
  CHECK(error_of([&] { resolve_data_path((dir.path() / "d.swf").string(), "swf"); })
            .find("is not a regular file (a directory)") != std::string::npos);
  CHECK(error_of([&] { resolve_data_path("/dev/zero", "swf"); }).find("is not a regular file") != std::string::npos);
  CHECK(error_of([&] { resolve_data_path((dir.path() / "missing.swf").string(), "swf"); }).find("not found") !=
        std::string::npos);
}

TEST_CASE("scenario totals hold with the trace's tasks merged in", "[traces][hardening]") {
  TempDir dir;
  const auto p = dir.write("t.swf", "1 0 0 1000000000 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n");
  Scenario s;
  s.name = "x";
  s.timeseries_interval_s = 1;
  TraceCfg cfg;
  cfg.format = "swf";
  cfg.path = p;
  s.traces.push_back(cfg);
  const auto msg = error_of([&] { apply_traces(s); });
  CHECK(msg.find("timeseries_interval_s: 1: gives about 1000000000 timeseries rows") != std::string::npos);
}

TEST_CASE("trace text that is not UTF-8 (or holds control characters) is a row error, not a broken output", "[traces][hardening]") {
  // Fuzz findings openb-model-invalid-utf8 and philly-gpu-mem-invalid-utf8: the text reached
  // the scenario written by `convert` and made its JSON serialisation throw.
  TempDir dir;
  const auto n = dir.write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model,name,num_gpu,gpu_milli\nn,0,0,1,\xff,p,0,0\n");
  const auto nmsg = error_of([&] { read_openb_nodes(n, {}); });
  CHECK(nmsg.find(n + ":2:9: row text must be valid UTF-8") == 0);
  const auto m = dir.write("machines.csv", "machineId,number of GPUs,single GPU mem\nm,1,\xff\n");
  const auto mmsg = error_of([&] { read_philly_machines(m, {}); });
  CHECK(mmsg.find(m + ":2:5: row text must be valid UTF-8") == 0);
  const auto c = dir.write("ctl.csv", "machineId,number of GPUs,single GPU mem\nm\x01,1,12GB\n");
  CHECK(error_of([&] { read_philly_machines(c, {}); }).find(c + ":2:2: row text must not contain control characters") == 0);
  // Valid UTF-8 (a GPU model named in Chinese) passes.
  const auto u = dir.write("utf8.csv", "machineId,number of GPUs,single GPU mem\nm,1,\xe6\x98\xbe\xe5\xad\x98\n");
  CHECK(read_philly_machines(u, {}).size() == 1);
  // With skip_bad_rows the row is counted and skipped.
  TraceOptions skip;
  skip.skip_bad_rows = true;
  std::size_t skipped = 0;
  CHECK(read_philly_machines(m, skip, &skipped).empty());
  CHECK(skipped == 1);
}

}  // namespace SCHEDSIM_UNITY_ID
