// Shards of a sweep: --shard I/N parsing, the point assignment, shard.json, and `schedsim merge`
// (sim/shard.hpp, docs/sharding.md). The job scripts of --emit are in sim/shard_emit.cpp.
#include "sim/experiments/shard.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "sim/io/diagnostics.hpp"
#include "sim/io/json_file.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/io/version.hpp"

namespace sim {

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

constexpr const char* kShardSchema = "schedsim/shard/v1";

/// A decimal integer written entirely as `t` (digits only: no sign, no spaces), at most 9 digits.
std::optional<std::uint32_t> parse_count(std::string_view t) {
  if (t.empty() || t.size() > 9 || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  std::uint32_t x = 0;
  std::from_chars(t.data(), t.data() + t.size(), x);
  return x;
}

std::string diag(const std::string& file, const std::string& path, const std::string& value, const std::string& rule) {
  io::Diagnostic d;
  d.file = file;
  d.path = path;
  d.value = value;
  d.rule = rule;
  return d.str();
}

}  // namespace

std::uint32_t default_shard_count(std::size_t points) {
  return std::uint32_t(std::clamp<std::size_t>(points, 1, 64));
}

std::optional<ShardSpec> parse_shard(std::string_view text, std::string& error) {
  const auto fail = [&](std::string_view rule) {
    error = fmt::format("--shard: {}: {}", io::escape_for_diagnostic(text), rule);
    return std::nullopt;
  };
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return fail("expected I/N (shard I of N, 0 <= I < N), e.g. 0/8");
  const auto i = parse_count(text.substr(0, slash));
  const auto n = parse_count(text.substr(slash + 1));
  if (!i || !n) return fail("expected I/N with I and N whole numbers (shard I of N, 0 <= I < N), e.g. 0/8");
  if (*n < 1 || *n > kMaxShards) return fail(fmt::format("N must be from 1 to {}", kMaxShards));
  if (*i >= *n) return fail(fmt::format("I must be less than N (shards are numbered 0 to {})", *n - 1));
  return ShardSpec{*i, *n};
}

std::vector<std::size_t> shard_points(std::size_t points, const ShardSpec& s) {
  std::vector<std::size_t> v;
  for (std::size_t p = s.index; p < points; p += s.count) v.push_back(p);
  return v;
}

std::string fingerprint_hex(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;  // FNV-1a 64 prime
  }
  return fmt::format("{:016x}", h);
}

std::string shard_document(const std::string& command, const std::string& fingerprint, const ShardSpec& shard, const ojson& grid,
                           const ojson& runs) {
  ojson doc;
  doc["schema"] = kShardSchema;
  doc["command"] = command;
  doc["schedsim"] = version();
  doc["fingerprint"] = fingerprint;
  doc["shard"] = shard.index;
  doc["shards"] = shard.count;
  doc["grid"] = grid;
  // One line per key and per run: readable with a pager, small, and quick to parse.
  std::string text = "{\n";
  for (const auto& [key, value] : doc.items()) text += fmt::format("  {}: {},\n", ojson(key).dump(), value.dump());
  text += "  \"runs\": [";
  for (std::size_t i = 0; i < runs.size(); ++i) text += fmt::format("{}\n    {}", i ? "," : "", runs[i].dump());
  text += runs.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return text;
}

std::uint64_t shard_uint(const ojson& v, std::uint64_t max) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max)
    throw std::invalid_argument(fmt::format("{}: must be an integer from 0 to {}", io::escape_for_diagnostic(v.dump()), max));
  return v.get<std::uint64_t>();
}

double shard_number(const ojson& v) {
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    throw std::invalid_argument(fmt::format("{}: must be a finite number", io::escape_for_diagnostic(v.dump())));
  return v.get<double>();
}

std::optional<std::vector<ShardFile>> read_shards(const std::vector<std::string>& dirs, std::ostream& err, int& exit_code) {
  std::vector<ShardFile> shards;
  bool bad = false, io_error = false;
  for (const auto& dir : dirs) {
    ShardFile s;
    s.dir = dir;
    s.file = (fs::path(dir) / kShardFileName).string();
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      err << diag(dir, "", "", "not a shard folder: no such directory") << "\n";
      bad = true;
      continue;
    }
    if (!fs::exists(s.file, ec)) {
      err << diag(s.file, "", "", "missing: not a shard folder (sweep --shard I/N and fill --shard I/N write shard.json)") << "\n";
      bad = true;
      continue;
    }
    // The shared reader: a regular file, size and nesting limits, exact JSON (a shard.json that
    // is a link to /dev/zero or nested 100,000 deep is refused, not read or walked).
    std::vector<io::Diagnostic> problems;
    auto read = io::read_json_file<ojson>(s.file, "a shard file", problems);
    if (!read.json) {
      for (const auto& d : problems) err << d.str() << "\n";
      (read.environment ? io_error : bad) = true;
      continue;
    }
    ojson doc = std::move(*read.json);
    const auto field = [&](const char* key, bool (ojson::*is)() const noexcept, const char* rule) -> const ojson* {
      if (!doc.is_object() || !doc.contains(key)) {
        err << diag(s.file, key, io::missing_value, rule) << "\n";
        return nullptr;
      }
      if (!(doc[key].*is)()) {
        err << diag(s.file, key, doc[key].dump(), rule) << "\n";
        return nullptr;
      }
      return &doc[key];
    };
    const auto* schema = field("schema", &ojson::is_string, "must be \"schedsim/shard/v1\"");
    if (schema && *schema != kShardSchema) {
      err << diag(s.file, "schema", schema->dump(), "must be \"schedsim/shard/v1\"") << "\n";
      schema = nullptr;
    }
    const auto* command = field("command", &ojson::is_string, "must be \"sweep\" or \"fill\"");
    if (command && *command != "sweep" && *command != "fill") {
      err << diag(s.file, "command", command->dump(), "must be \"sweep\" or \"fill\"") << "\n";
      command = nullptr;
    }
    const auto* fp = field("fingerprint", &ojson::is_string, "must be a string");
    const auto* count = field("shards", &ojson::is_number_unsigned, fmt::format("must be an integer from 1 to {}", kMaxShards).c_str());
    if (count && (count->get<std::uint64_t>() < 1 || count->get<std::uint64_t>() > kMaxShards)) {
      err << diag(s.file, "shards", count->dump(), fmt::format("must be an integer from 1 to {}", kMaxShards)) << "\n";
      count = nullptr;
    }
    const auto* index = field("shard", &ojson::is_number_unsigned, "must be an integer from 0 to shards - 1");
    if (index && count && index->get<std::uint64_t>() >= count->get<std::uint64_t>()) {
      err << diag(s.file, "shard", index->dump(), "must be an integer from 0 to shards - 1") << "\n";
      index = nullptr;
    }
    const auto* grid = field("grid", &ojson::is_object, "must be an object");
    const auto* runs = field("runs", &ojson::is_array, "must be an array");
    if (!schema || !command || !fp || !count || !index || !grid || !runs) {
      bad = true;
      continue;
    }
    s.command = command->get<std::string>();
    s.fingerprint = fp->get<std::string>();
    s.shard = ShardSpec{std::uint32_t(index->get<std::uint64_t>()), std::uint32_t(count->get<std::uint64_t>())};
    s.grid = *grid;
    s.runs = *runs;
    shards.push_back(std::move(s));
  }
  // Every shard must come from the sweep of the first one read.
  std::vector<ShardFile> same;
  if (!shards.empty()) {
    const ShardFile ref = shards.front();  // a copy: the shards are moved out below
    std::map<std::uint32_t, std::string> seen;  // index -> file
    for (auto& s : shards) {
      bool ok = true;
      if (s.command != ref.command) {
        err << diag(s.file, "command", "\"" + s.command + "\"",
                    fmt::format("a shard of `{}`, not of `{}` like {}", s.command, ref.command, ref.file))
            << "\n";
        ok = false;
      } else if (s.fingerprint != ref.fingerprint) {
        err << diag(s.file, "fingerprint", "\"" + s.fingerprint + "\"",
                    fmt::format("a shard of a different sweep than {} (fingerprint \"{}\"): another scenario, grid, seeds or "
                                "schedsim version",
                                ref.file, ref.fingerprint))
            << "\n";
        ok = false;
      } else if (nlohmann::json::parse(s.grid.dump()) != nlohmann::json::parse(ref.grid.dump())) {  // key order aside
        err << diag(s.file, "grid", "", fmt::format("differs from the grid of {} (edited by hand?)", ref.file)) << "\n";
        ok = false;
      } else if (s.shard.count != ref.shard.count) {
        err << diag(s.file, "shards", std::to_string(s.shard.count),
                    fmt::format("the sweep was cut into {} shards in {}", ref.shard.count, ref.file))
            << "\n";
        ok = false;
      }
      if (!ok) {
        bad = true;
        continue;
      }
      if (auto it = seen.find(s.shard.index); it != seen.end()) {
        err << diag(s.file, "shard", std::to_string(s.shard.index),
                    fmt::format("duplicated: shard {} of {} is also in {}", s.shard.index, s.shard.count, it->second))
            << "\n";
        bad = true;
        continue;
      }
      seen.emplace(s.shard.index, s.file);
      same.push_back(std::move(s));
    }
    for (std::uint32_t i = 0; i < ref.shard.count; ++i)
      if (!seen.count(i)) {
        err << diag("schedsim merge", "shard", std::to_string(i),
                    fmt::format("missing: shard {} of {} is in none of the folders given", i, ref.shard.count))
            << "\n";
        bad = true;
      }
  } else if (!bad && !io_error) {
    err << "schedsim merge: at least one SHARD_DIR is required\n";
    bad = true;
  }
  if (io_error) {
    exit_code = exit_environment;
    return std::nullopt;
  }
  if (bad) {
    exit_code = io::exit_invalid_input;
    return std::nullopt;
  }
  std::sort(same.begin(), same.end(), [](const ShardFile& a, const ShardFile& b) { return a.shard.index < b.shard.index; });
  return same;
}

}  // namespace sim
