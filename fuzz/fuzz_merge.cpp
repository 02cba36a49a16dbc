// Harness 5: bytes -> 1-3 shard folders -> `schedsim merge SHARD_DIR... --out DIR`
// (sim::merge_command, sim/shard.hpp, docs/sharding.md). The input is cut at each line `%%` (the
// separator "\n%%\n") into at most three parts; part i becomes shard-i/shard.json of a
// per-process scratch folder (an empty part: a folder without shard.json). The folders are given
// in input order. Checks: the exit status is 0, 1 or 2 (no exception, no sanitizer report);
// every line on stderr is one non-empty diagnostic; exit 2 writes nothing into --out; exit 0
// publishes exactly the files of the command (sweep: sweep.csv, sweep_summary.csv; fill:
// fill.csv, plus fill_curves.csv and fill_summary.csv for a sweep over policies and seeds).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_common.hpp"
#include "sim/cli/merge_cli.hpp"
#include "sim/experiments/shard.hpp"

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSeparator = "\n%%\n";
constexpr std::size_t kMaxShardDirs = 3;

/// The parts of `in` between separators, at most `max` (the last one keeps any further separator).
std::vector<std::string_view> split_parts(std::string_view in, std::size_t max) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max) {
    const auto at = in.find(kSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(in.substr(0, at));
    in.remove_prefix(at + kSeparator.size());
  }
  parts.push_back(in);
  return parts;
}

/// Regular files directly in `dir` (none when it does not exist).
std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return names;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file(ec)) names.push_back(e.path().filename().string());
  return names;
}

void check_lines(const std::string& text, const std::string& what) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = text.find('\n', start);
    fuzz::check(nl != std::string::npos, what + " does not end in a newline: " + text.substr(start));
    fuzz::check(nl > start, what + " has an empty line");
    start = nl + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::prefer_memory_tmpdir();
  fuzz::isolate_data_root();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path root = fs::path(fuzz::scratch_dir()) / "merge";
  std::error_code ec;
  fs::remove_all(root, ec);
  fs::create_directories(root, ec);
  if (ec) fuzz::fail("cannot create " + root.string());

  const auto parts = split_parts(std::string_view(reinterpret_cast<const char*>(data), size), kMaxShardDirs);
  std::vector<std::string> dirs;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const fs::path d = root / ("shard-" + std::to_string(i));
    fs::create_directories(d);
    if (!parts[i].empty()) fuzz::write_temp(reinterpret_cast<const std::uint8_t*>(parts[i].data()), parts[i].size(),
                                            "merge/shard-" + std::to_string(i) + "/shard.json");
    dirs.push_back(d.string());
  }
  const fs::path out_dir = root / "out";

  std::ostringstream out, err;
  const int rc = sim::merge_command(dirs, out_dir.string(), out, err);
  const std::string e = err.str();
  if (fuzz::verbose()) std::cerr << "merge exit " << rc << "\n" << e;
  fuzz::check(rc == 0 || rc == 1 || rc == 2, "merge exit status " + std::to_string(rc) + "; stderr: " + e);
  check_lines(e, "merge stderr");
  const auto written = files_in(out_dir);
  if (rc != 0) {
    fuzz::check(!e.empty(), "merge exit " + std::to_string(rc) + " without a message");
    fuzz::check(written.empty(), "merge exit " + std::to_string(rc) + " but --out holds " + std::to_string(written.size()) +
                                     " files, e.g. " + (written.empty() ? "" : written.front()));
    return 0;
  }
  // Exit 0: the outputs of the command of the shards (every shard has the same command).
  const auto has = [&](const char* f) { return fs::is_regular_file(out_dir / f, ec); };
  const bool sweep = has("sweep.csv") && has("sweep_summary.csv");
  const bool fill = has("fill.csv");
  fuzz::check(sweep != fill, "merge exit 0 but --out holds neither the sweep nor the fill files (or both)");
  if (fill) fuzz::check(has("fill_curves.csv") == has("fill_summary.csv"), "fill merge wrote one of fill_curves.csv, fill_summary.csv");
  fuzz::check(written.size() == (sweep ? 2u : has("fill_curves.csv") ? 3u : 1u), "merge exit 0 wrote unexpected files");
  fuzz::check(out.str().find("merged ") != std::string::npos, "merge exit 0 without its summary line");
  return 0;
}
