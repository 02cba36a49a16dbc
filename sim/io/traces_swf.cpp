// Standard Workload Format (Parallel Workloads Archive; Feitelson, Tsafrir & Krakov, JPDC 2014).
#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <string>
#include <unordered_map>

#include "sim/io/traces.hpp"
#include "sim/io/traces_detail.hpp"

namespace sim::io {

namespace {

using detail::Field;
using detail::field_name;
using detail::row_fail;

constexpr double kMemGibPerVcpu = 4.0;
constexpr double kZeroRunS = 0.001;     // a run time of 0: one tick of the millisecond clock  // documented assumption: SWF memory fields are ignored

constexpr std::array<std::string_view, 18> kNames = {
    "job id", "submit time", "wait time", "run time", "allocated processors",
    "average CPU time", "used memory", "requested processors", "requested time",
    "requested memory", "status", "user id", "group id", "executable", "queue", "partition",
    "preceding job", "think time"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (detail::is_blank(s.front()) || s.front() == ';')) s.remove_prefix(1);
  while (!s.empty() && detail::is_blank(s.back())) s.remove_suffix(1);
  return s;
}

/// "; MaxProcs: 240" -> "240" when this comment is the header `key`.
std::optional<std::string_view> header_text(std::string_view comment, std::string_view key) {
  comment = trim(comment);
  const auto colon = comment.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  if (trim(comment.substr(0, colon)) != key) return std::nullopt;
  return trim(comment.substr(colon + 1));
}

/// The value of header `key` (a comment `; KEY: VALUE`) read from line `line` of `path`: the
/// whole VALUE must be a non-negative decimal integer (`1,024`, `3.5`, `1e6`, `2 (estimated)`,
/// `-5` are refused, never read as a prefix). 0 means "not given" (nullopt). A header given
/// twice is refused. Throws TraceError naming the file and line (also under skip_bad_rows: a
/// header is not a row).
std::optional<long long> header_value(const std::string& path, std::size_t line, std::string_view v, std::string_view key,
                                      std::size_t& seen_line) {
  if (seen_line != 0)
    throw TraceError(detail::located(path, line, 1,
                                     "header " + std::string(key) + " given twice (first at line " + std::to_string(seen_line) + ")"));
  seen_line = line;
  long long out = 0;
  const bool digits = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (!digits || ec != std::errc{} || p != v.data() + v.size())
    throw TraceError(detail::located(path, line, 1,
                                     "header " + std::string(key) + ": '" + std::string(v) +
                                         "': must be a non-negative integer (digits only, at most 9223372036854775807)"));
  if (out == 0) return std::nullopt;
  return out;
}

}  // namespace

TraceLoad read_swf(const std::string& path, const TraceCfg& cfg, const TraceOptions& opts) {
  if (cfg.procs_per_node <= 0)
    throw TraceError("trace '" + cfg.path + "': procs_per_node must be > 0, got " +
                     std::to_string(cfg.procs_per_node));
  const int ppn = cfg.procs_per_node;
  // The text is taken line by line (a gzip file inflated piece by piece: never held whole).
  detail::TraceLines lines(path, opts.max_bytes);
  TraceLoad load;
  // The task vector is reserved once to an upper bound of the rows (the lines that can hold
  // one: not blank, not a comment, at least 35 bytes for 18 fields and their separators; at
  // most `limit` and limits::max_tasks), so a large trace's task records (320 bytes each) are
  // never copied by vector growth and no intermediate row records are held (the pages of the
  // reservation's unused rest are never touched). A gzip file's bound comes from its trailer
  // (text size / 36 + 1: every such line takes 35 bytes and its newline) without inflating
  // it twice, when that reservation stays under kHintedReserveBytes; otherwise (a plain
  // file, no usable hint, or a larger reservation) a first pass counts the lines. A hint below
  // the text (several members, a text over 4 GiB) only lets the vector grow: same tasks.
  {
    constexpr std::uint64_t kHintedReserveBytes = std::uint64_t{256} << 20;
    const std::uint64_t hint = lines.gzip_size_hint();
    std::size_t bound = 0;
    if (hint > 0 && (hint / 36 + 1) * sizeof(TaskCfg) <= kHintedReserveBytes) {
      bound = static_cast<std::size_t>(hint / 36 + 1);
    } else {
      std::string_view l;
      while (lines.next(l)) {
        const std::size_t first = l.find_first_not_of(" \t");
        if (l.size() >= 35 && first != std::string_view::npos && l[first] != ';') ++bound;
      }
      lines.rewind();
    }
    if (cfg.limit) bound = std::min<std::size_t>(bound, *cfg.limit);
    load.tasks.reserve(std::min<std::size_t>(bound, std::size_t(limits::max_tasks)));
    detail::advise_huge_pages(load.tasks.data(), load.tasks.capacity() * sizeof(TaskCfg));
  }
  std::optional<long long> max_procs, max_nodes;
  std::size_t max_procs_line = 0, max_nodes_line = 0;
  long long largest_job = 0;
  detail::FixedFields<18> f;  // each row's 18 fields (the row passed text_problem: split_ws_fixed)
  TaskCfg t;  // each row's task (reused): checked, then copied into the vector
  detail::init_task(t, cfg, "swf");
  constexpr std::string_view kTaskPrefix = "swf-";
  t.name = kTaskPrefix;  // every row's name starts so (the rest is replaced per row)
  ReplicaCfg& r = t.replica.emplace();
  r.gpus = 0;
  const detail::RowTaskCheck check_row(t);  // rows set only the shape and times of `t`
  // Each user's name interned once (a trace has a few hundred users and 10^5 rows).
  std::unordered_map<long long, Interned> users;
  auto user_name = [&users](long long user) -> const Interned& {
    auto [it, fresh] = users.try_emplace(user);
    if (fresh) it->second = Interned(user >= 0 ? "swf-u" + std::to_string(user) : std::string("swf"));
    return it->second;
  };
  // The names are distinct when every job id is digits in increasing numeric order (most
  // archive files): then apply_traces need not search them for repeats (TraceLoad::names_distinct).
  bool ids_increasing = true;
  unsigned long long last_id = 0;
  double earliest = 0;  // the earliest submit_s of the kept rows (TraceLoad::earliest_submit_s)
  detail::for_each_row(path, lines, opts, load.skipped_rows, [&](std::string_view line) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (line[first] == ';') {
      if (auto h = header_text(line, "MaxProcs")) max_procs = header_value(path, lines.number(), *h, "MaxProcs", max_procs_line);
      if (auto h = header_text(line, "MaxNodes")) max_nodes = header_value(path, lines.number(), *h, "MaxNodes", max_nodes_line);
      return true;
    }
    if (detail::limit_reached(cfg, load.tasks.size())) return false;
    detail::check_row_count(load.tasks.size());
    detail::split_ws_fixed(line, f);
    if (f.count != 18)
      row_fail(f.count > 18 ? f.next_column : line.size() + 1, "expected 18 whitespace-separated fields, got " + std::to_string(f.count));
    struct {
      double submit = 0, run = 0, req_time = 0;
      long long procs = 0, replicas = 0, user = 0;
    } row;
    row.submit = detail::parse_short_number<double>(f[1], detail::FieldName{1, kNames[1]});
    if (row.submit < 0) row_fail(f[1].column, field_name(1, kNames[1]) + ": unknown or negative submit time");
    row.run = detail::parse_short_number<double>(f[3], detail::FieldName{3, kNames[3]});
    // A run time of 0 is a real job of the archive (it ended at once); the simulator's clock
    // counts milliseconds, so it runs for 1 ms (docs/traces.md "SWF"). -1 (unknown) is refused.
    if (!(row.run >= 0))
      row_fail(f[3].column, field_name(3, kNames[3]) + ": must be >= 0 to simulate the job, got " +
                                std::string(f[3].text) + " (skip such rows with skip_bad_rows)");
    const long long allocated = detail::parse_short_number<long long>(f[4], detail::FieldName{4, kNames[4]});
    const long long requested = detail::parse_short_number<long long>(f[7], detail::FieldName{7, kNames[7]});
    row.procs = requested > 0 ? requested : allocated;
    if (row.procs <= 0)
      row_fail(f[7].column, field_name(7, kNames[7]) + " and " + field_name(4, kNames[4]) +
                                ": both unknown, the job's size is unknown");
    row.req_time = detail::parse_short_number<double>(f[8], detail::FieldName{8, kNames[8]});
    row.user = detail::parse_short_number<long long>(f[11], detail::FieldName{11, kNames[11]});

    // ceil(procs / ppn) without overflow (procs may be as large as 2^63 - 1).
    row.replicas = row.procs / ppn + (row.procs % ppn != 0 ? 1 : 0);
    if (row.replicas - 1 > limits::max_workers) {
      const std::size_t col = requested > 0 ? 7 : 4;
      row_fail(f[col].column, field_name(col, kNames[col]) + ": " + std::to_string(row.procs) + " processors = " +
                                  std::to_string(row.replicas) + " replicas of " + std::to_string(ppn) +
                                  " processors, more than " + std::to_string(limits::max_workers + 1) +
                                  " (the limit for one task)");
    }
    t.user = user_name(row.user);
    t.name.resize(kTaskPrefix.size());  // "swf-" + sanitize_name(job id, "job"), written in place
    detail::append_sanitized_name(t.name, f[0].text, "job");
    t.workers = static_cast<int>(row.replicas - 1);
    r.vcpu = static_cast<double>(std::min<long long>(row.procs, ppn));
    r.memory_gib = r.vcpu * kMemGibPerVcpu;
    t.submit_s = row.submit * cfg.time_scale;
    t.duration_s = row.run > 0 ? row.run * cfg.time_scale : kZeroRunS;
    t.runtime_estimate_s.reset();
    if (row.req_time > 0) t.runtime_estimate_s = row.req_time * cfg.time_scale;
    check_row(t);
    if (ids_increasing) {  // (from_chars of an unsigned reads digits only: no sign, no blank)
      const std::string_view id = f[0].text;
      unsigned long long v = 0;
      const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), v);
      ids_increasing = ec == std::errc{} && end == id.data() + id.size() && (load.tasks.empty() || v > last_id);
      last_id = v;
    }
    earliest = load.tasks.empty() ? t.submit_s : std::min(earliest, t.submit_s);
    load.tasks.push_back(t);
    largest_job = std::max(largest_job, row.procs);
    return true;
  });

  load.names_distinct = ids_increasing;
  if (!load.tasks.empty()) load.earliest_submit_s = earliest;
  if (cfg.nodes != "none") {
    auto ceil_div = [&](long long v) { return v / ppn + (v % ppn != 0 ? 1 : 0); };
    long long count = 0;
    std::string from;
    if (max_procs) {
      count = ceil_div(*max_procs);
      from = detail::located(path, max_procs_line, 1, "header MaxProcs: " + std::to_string(*max_procs));
    } else if (max_nodes) {
      count = *max_nodes;
      from = detail::located(path, max_nodes_line, 1, "header MaxNodes: " + std::to_string(*max_nodes));
    } else {
      count = ceil_div(largest_job);
      from = path + ": largest job: " + std::to_string(largest_job) + " processors";
    }
    // Refused before anything is allocated (`; MaxProcs: 100000000000` aborted with bad_alloc).
    if (count > limits::max_total_nodes)
      throw TraceError(from + ": gives " + std::to_string(count) + " nodes of " + std::to_string(ppn) +
                       " processors, more than " + std::to_string(limits::max_total_nodes) +
                       " (the limit for a cluster; give procs_per_node, or nodes \"none\")");
    load.nodes.reserve(static_cast<std::size_t>(count));
    for (long long i = 0; i < count; ++i) {
      NodeCfg n;
      n.name = "swf-node-" + std::to_string(i);
      n.vcpu = ppn;
      n.memory_gib = ppn * kMemGibPerVcpu;
      load.nodes.push_back(std::move(n));
    }
  }
  return load;
}

}  // namespace sim::io
