// `schedsim report --format svg,pdf` (docs/report.md "Export"): every chart as an SVG file drawn by
// vega's own SVG renderer under node (the same inlined runtimes as the page), and the page printed
// to PDF by headless Chromium. Both programs run as child processes in their own process group,
// with a timeout; their output is kept in a log file and shown only when they fail.
#include <fcntl.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "sim/engine/child_process.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/outputs/report_detail.hpp"

namespace sim::report_detail {

namespace {

constexpr double k_export_timeout_s = 180;  // per program run: generous, a report takes seconds

/// The last `n` lines of the log `p` (what a failed program said), each indented.
std::string report_log_tail(const fs::path& p, std::size_t n = 8) {
  std::string s;
  try {
    s = read_text(p, 1 << 20);
  } catch (const std::exception&) {
    return "";
  }
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < s.size()) {
    const std::size_t nl = s.find('\n', start);
    const std::string line = s.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    // Chromium's complaints about D-Bus and the like are noise here.
    if (!line.empty() && line.find("dbus") == std::string::npos) lines.push_back(line);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  std::string o;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) o += "\n  " + lines[i];
  return o;
}

/// Runs `argv` (argv[0] a path) with stdin from /dev/null and stdout and stderr into `log`, in
/// its own process group; kills the group after `timeout_s` or on SIGINT/SIGTERM. Returns the
/// wait status; throws OutputError when it cannot start or times out, Interrupted on a signal.
int report_run_program(const std::vector<std::string>& argv, const fs::path& log, double timeout_s) {
  int err = 0;
  const pid_t pid = child_process::spawn_in_group(argv, {-1, "/dev/null", O_RDONLY}, {-1, log.string(), O_WRONLY | O_CREAT | O_TRUNC}, true, err);
  if (pid < 0) throw OutputError(fmt::format("cannot start {}: {}", argv.at(0), std::strerror(err)));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  // Wait without reaping (WNOWAIT): while the child is a zombie its id, which names its
  // process group, cannot be reused, so killing the group afterwards reaches only what it left.
  bool late = false;
  while (!child_process::has_ended(pid)) {
    if (std::chrono::steady_clock::now() > deadline || interrupt_signal() != 0) {
      late = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // The program if late, else helpers it left behind (Chromium's zygote, ...).
  const int status = child_process::kill_group_and_reap(pid);
  if (late) {
    throw_if_interrupted();
    throw OutputError(fmt::format("{} did not finish within {} s", argv.at(0), timeout_s));
  }
  return status;
}

/// `p` as a file:// URL (absolute; bytes other than unreserved ones and `/` percent-encoded).
std::string report_file_url(const fs::path& p) {
  const std::string s = fs::absolute(p).lexically_normal().string();
  std::string o = "file://";
  for (unsigned char c : s)
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') o += char(c);
    else o += fmt::format("%{:02X}", c);
  return o;
}

/// Lowercase letters and digits of `title`, every other run of bytes as one `-`, at most 60.
std::string report_slug(const std::string& title) {
  std::string o;
  for (unsigned char c : title) {
    if (std::isalnum(c)) o += char(std::tolower(c));
    else if (!o.empty() && o.back() != '-') o += '-';
    if (o.size() >= 60) break;
  }
  while (!o.empty() && o.back() == '-') o.pop_back();
  return o.empty() ? "chart" : o;
}

/// The node program: the runtimes (their UMD wrappers see no CommonJS and set globals), then a
/// loop over the charts of the job file (argv[2]): compile, render with vega's SVG renderer, write.
std::string svg_program(const ReportRuntimes& rt) {
  std::string js;
  js += "(function (exports, module, define, require) {\n" + rt.vega + "\n}).call(globalThis);\n";
  js += "(function (exports, module, define, require) {\n" + rt.vega_lite + "\n}).call(globalThis);\n";
  js += R"(
const fs = require("fs");
const job = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
(async function () {
  for (const c of job.charts) {
    try {
      const view = new vega.View(vega.parse(vegaLite.compile(c.spec).spec), { renderer: "none" });
      fs.writeFileSync(c.file, await view.toSVG());
      view.finalize();
    } catch (e) {
      throw new Error("chart `" + c.title + "`: " + (e && e.message || e));
    }
  }
})().catch(function (e) { process.stderr.write("report-svg: " + String(e && e.message || e) + "\n"); process.exit(1); });
)";
  return js;
}

std::string report_status_text(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
  return "ended abnormally";
}

}  // namespace

std::optional<std::string> find_program(const char* env, const char* name) {
  if (const char* e = std::getenv(env); e && *e) {
    const std::string p(e);
    if (p.find('/') != std::string::npos) return ::access(p.c_str(), X_OK) == 0 ? std::optional<std::string>(p) : std::nullopt;
    name = e;
  }
  const char* path = std::getenv("PATH");
  std::string_view ps = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const auto colon = ps.find(':');
    const std::string d(ps.substr(0, colon));
    const fs::path cand = fs::path(d.empty() ? "." : d) / name;
    std::error_code ec;
    if (fs::is_regular_file(cand, ec) && ::access(cand.c_str(), X_OK) == 0) return cand.string();
    if (colon == std::string_view::npos) break;
    ps.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

std::vector<std::string> export_svgs(const Page& page, const ReportRuntimes& rt, const std::string& node, const fs::path& out_dir,
                                     const fs::path& work) {
  ojson charts = ojson::array();
  std::vector<std::string> names;
  int n = 0;
  for (const Block& b : page.blocks) {
    if (!b.chart) continue;
    const std::string name = fmt::format("{:02}-{}.svg", ++n, report_slug(b.title));
    names.push_back(name);
    charts.push_back({{"title", b.title}, {"file", (out_dir / name).string()}, {"spec", b.spec}});
  }
  const fs::path program = work / "report-svg.js", job = work / "report-svg.json", log = work / "report-svg.log";
  write_file_checked(program.string(), svg_program(rt));
  write_file_checked(job.string(), ojson{{"charts", charts}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  const int status = report_run_program({node, program.string(), job.string()}, log, k_export_timeout_s);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw OutputError(fmt::format("the SVG export ({} {}) {}:{}", node, program.string(), report_status_text(status), report_log_tail(log)));
  for (const auto& nm : names) {
    std::error_code ec;
    if (!fs::is_regular_file(out_dir / nm, ec) || fs::file_size(out_dir / nm, ec) == 0)
      throw OutputError(fmt::format("the SVG export wrote no {}:{}", (out_dir / nm).string(), report_log_tail(log)));
  }
  return names;
}

void export_pdf(const std::string& chromium, const fs::path& html, const fs::path& pdf, const fs::path& work) {
  const fs::path log = work / "report-pdf.log";
  const std::vector<std::string> argv = {chromium,
                                         "--headless",
                                         "--no-sandbox",
                                         "--disable-gpu",
                                         "--disable-dev-shm-usage",
                                         "--no-first-run",
                                         "--no-default-browser-check",
                                         "--user-data-dir=" + (work / "chromium-profile").string(),
                                         "--no-pdf-header-footer",
                                         "--virtual-time-budget=30000",
                                         "--print-to-pdf=" + pdf.string(),
                                         report_file_url(html)};
  const int status = report_run_program(argv, log, k_export_timeout_s);
  std::error_code ec;
  std::string head;
  if (fs::is_regular_file(pdf, ec)) {
    try {
      head = read_text(pdf).substr(0, 5);
    } catch (const std::exception&) {
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || head != "%PDF-")
    throw OutputError(fmt::format("the PDF export ({} --headless --print-to-pdf) {}{}:{}", chromium, report_status_text(status),
                                  head == "%PDF-" ? "" : ", no PDF written", report_log_tail(log)));
}

}  // namespace sim::report_detail
