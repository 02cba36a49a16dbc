// Pass 1, the `workload` section (extension): arrival, durations, users, tenants, classes.
#include "sim/io/scenario_read_detail.hpp"

namespace sim::io::detail {

namespace {

const std::vector<std::string_view> k_duration_kinds = {"lognormal", "exponential", "empirical"};
const std::vector<std::string_view> k_arrival_processes = {"poisson"};

/// Relative weights: an array of numbers, each > 0 and <= 1e12, `n` of them when n > 0.
bool read_shares(Sink& sink, const json& v, const std::string& path, std::size_t n, std::vector<double>& out) {
  if (!v.is_array() || v.empty()) {
    sink.error(path, dump(v), "must be a non-empty array of numbers");
    return false;
  }
  if (n && v.size() != n) {
    sink.error(path, dump(v), fmt::format("must have as many entries as `values` ({})", n));
    return false;
  }
  bool ok = true;
  out.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    if (!e.is_number()) {
      sink.error(index_path(path, i), dump(e), "must be a number");
      ok = false;
    } else if (const double d = e.get<double>(); !(d > 0 && d <= limits::max_share)) {
      sink.error(index_path(path, i), dump(e),
                 fmt::format("must be > 0 and <= {} (shares are relative weights)", num_text(limits::max_share)));
      ok = false;
    } else {
      out.push_back(d);
    }
  }
  return ok;
}

/// An integer in `range`, or `{"values": [integers in range], "shares": [weights]}`.
bool read_int_choice(Sink& sink, const json& v, const std::string& path, Range range, ChoiceCfg<int>& out) {
  auto one = [&](const json& e, const std::string& p, int& x) {
    bool integral = e.is_number_integer();
    if (e.is_number_float()) {
      const double d = e.get<double>();
      integral = std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15;
    }
    if (!integral) {
      sink.error(p, dump(e), "must be an integer");
      return false;
    }
    const double d = e.get<double>();
    if (!range.ok(d)) {
      sink.error(p, dump(e), range.rule(d));
      return false;
    }
    x = static_cast<int>(d);
    return true;
  };
  if (v.is_object()) {
    Obj o(sink, v, path, {"values", "shares"}, /*strict=*/true);
    ChoiceCfg<int> c;
    bool ok = true;
    const json* vals = o.get("values", Req::required);
    if (!vals) ok = false;  // reported as missing; an empty choice must never reach the generator
    if (vals && (!vals->is_array() || vals->empty())) {
      o.error("values", "must be a non-empty array of integers");
      ok = false;
    } else if (vals) {
      for (std::size_t i = 0; i < vals->size(); ++i) {
        int x = 0;
        if (one((*vals)[i], index_path(o.path("values"), i), x)) c.values.push_back(x);
        else ok = false;
      }
    }
    if (const json* sh = o.get("shares", Req::required)) {
      if (!read_shares(sink, *sh, o.path("shares"), vals && vals->is_array() ? vals->size() : 0, c.shares)) ok = false;
    } else {
      ok = false;
    }
    if (ok && o.valid()) out = std::move(c);
    return ok && o.valid();
  }
  if (!v.is_number()) {
    sink.error(path, dump(v), "must be an integer or an object {\"values\": [...], \"shares\": [...]}");
    return false;
  }
  int x = 0;
  if (!one(v, path, x)) return false;
  out = ChoiceCfg<int>{{x}, {1}};
  return true;
}


DurationCfg read_duration(Sink& sink, const json& j, const std::string& path) {
  DurationCfg d;
  Obj o(sink, j, path, {"distribution", "median_s", "sigma", "mean_s", "values", "trace", "min_s", "max_s"}, true);
  if (!o.valid()) return d;
  const Range pos{0, false, k_max_time_s, true};
  const bool kind_ok = o.enumeration("distribution", d.distribution, k_duration_kinds, Req::required);
  o.number("median_s", d.median_s, pos);
  o.number("sigma", d.sigma, between(0, limits::max_lognormal_sigma));
  o.number("mean_s", d.mean_s, pos);
  if (const json* v = o.find("values")) {
    if (!v->is_array()) {
      o.error("values", "must be an array of numbers");
    } else {
      for (std::size_t i = 0; i < v->size(); ++i) {
        const json& e = (*v)[i];
        if (!e.is_number() || !pos.ok(e.get<double>()))
          sink.error(index_path(o.path("values"), i), dump(e),
                     e.is_number() ? pos.rule(e.get<double>()) : std::string("must be a number"));
        else
          d.values.push_back(e.get<double>());
      }
    }
  }
  if (const json* t = o.find("trace")) d.trace = read_trace(sink, *t, o.path("trace"));
  o.number("min_s", d.min_s, Req::optional, Range{0, false, k_max_time_s, true});
  o.number("max_s", d.max_s, Req::optional, Range{0, false, k_max_time_s, true});
  if (o.has("max_s") && d.max_s < d.min_s)
    o.error("max_s", fmt::format("must be >= min_s ({})", num_text(d.min_s)));
  if (!kind_ok) return d;
  // Which keys each distribution takes (one problem, one line: the first misplaced key).
  std::vector<std::string_view> allowed;
  if (d.distribution == "lognormal") {
    allowed = {"median_s", "sigma", "mean_s"};
    if (!o.has("median_s")) o.sink().error(o.path("median_s"), missing_value, "required key is missing (lognormal needs median_s and one of sigma, mean_s)");
    if (o.has("sigma") == o.has("mean_s"))
      o.sink().error(o.path("sigma"), o.has("sigma") ? dump(*o.find("sigma")) : std::string(missing_value),
                     "a lognormal takes exactly one of sigma, mean_s");
    else if (d.mean_s && d.median_s && *d.mean_s < *d.median_s)
      o.error("mean_s", fmt::format("must be >= median_s ({}) for a lognormal", num_text(*d.median_s)));
    else if (d.mean_s && d.median_s && std::sqrt(2.0 * std::log(*d.mean_s / *d.median_s)) > limits::max_lognormal_sigma)
      o.error("mean_s", fmt::format("mean_s / median_s gives sigma > {}", num_text(limits::max_lognormal_sigma)));
  } else if (d.distribution == "exponential") {
    allowed = {"mean_s"};
    if (!o.has("mean_s")) o.sink().error(o.path("mean_s"), missing_value, "required key is missing (exponential needs mean_s)");
  } else {
    allowed = {"values", "trace"};
    if (!o.has("values") && !o.has("trace"))
      o.sink().error(o.path("values"), missing_value, "required key is missing (empirical needs values and/or trace)");
    else if (o.has("values") && o.find("values")->is_array() && o.find("values")->empty() && !o.has("trace"))
      o.error("values", "must not be empty");
  }
  for (auto key : {"median_s", "sigma", "mean_s", "values", "trace"})
    if (o.has(key) && !contains(allowed, key))
      o.error(key, fmt::format("does not apply to a{} {} distribution", d.distribution == "exponential" ||
                                                                          d.distribution == "empirical" ? "n" : "",
                               d.distribution));
  return d;
}

/// `[{"name": ..., "share": ...}]`, names non-empty and unique.
std::vector<NamedShareCfg> read_named_shares(Sink& sink, const Obj& parent, std::string_view key) {
  std::vector<NamedShareCfg> out;
  std::map<std::string, std::size_t> seen;
  const json* v = parent.find(key);
  if (v && v->is_array() && v->empty()) parent.error(key, "must not be empty (omit the key for the default)");
  parent.array(key, Req::optional, [&](const json& e, const std::string& p) {
    NamedShareCfg n;
    Obj o(sink, e, p, {"name", "share"}, true);
    o.str("name", n.name, Req::required, true);
    o.number("share", n.share, Req::required, Range{0, false, limits::max_share, true});
    if (!n.name.empty()) {
      auto [it, inserted] = seen.emplace(n.name, out.size());
      if (!inserted) sink.error(o.path("name"), q(n.name), fmt::format("duplicate name (also {}[{}])", parent.path(key), it->second));
    }
    out.push_back(std::move(n));
  });
  return out;
}

/// Keys a class may not set: the generator draws them.
const std::vector<std::string_view> k_class_generated = {"user", "tenant", "submit_s", "duration_s"};
/// Keys of a class that are not task keys.
const std::vector<std::string_view> k_class_own = {"name", "share", "workers", "priority", "duration",
                                                   "runtime_estimate_factor", "users", "tenants"};

WorkloadClassCfg read_class(Sink& sink, const json& j, const std::string& path) {
  WorkloadClassCfg c;
  if (!j.is_object()) {
    sink.error(path, dump(j), "must be an object");
    return c;
  }
  // The task keys, read by the task reader (its rules, its paths) on a copy where the generated
  // keys hold placeholders; an unknown key is an error here.
  json task = j;
  for (auto k : k_class_own) task.erase(std::string(k));
  for (auto k : k_class_generated)
    if (j.contains(std::string(k)))
      sink.error(key_path(path, k), dump(j.at(std::string(k))),
                 "is drawn by the generator (workload.users, workload.tenants, arrival, duration): not a class key");
  task["name"] = "class";
  task["user"] = "workload";
  task["submit_s"] = 0;
  task["duration_s"] = 1;
  task["workers"] = 0;
  if (!task.contains("type")) task["type"] = "PyTorchJob";
  const json* prio = j.contains("priority") ? &j.at("priority") : nullptr;
  if (prio && prio->is_object()) {
    ChoiceCfg<int> pc;
    if (read_int_choice(sink, *prio, key_path(path, "priority"), between(1, 9), pc)) {
      c.priority = pc;
      task["priority"] = pc.values.front();
    } else {
      task["priority"] = 5;
    }
  } else if (prio) {
    task["priority"] = *prio;
  }
  std::vector<Diagnostic> inner;
  Sink inner_sink(sink.file(), inner);
  c.task = read_task(inner_sink, task, path);
  for (auto& d : inner) {
    if (d.severity == Diagnostic::Severity::warning && d.rule.rfind("unknown key", 0) == 0) {
      d.severity = Diagnostic::Severity::error;
      if (auto pos = d.rule.find(" (ignored)"); pos != std::string::npos) d.rule.erase(pos);
    }
    if (d.is_error()) sink.error(d.path, d.value, d.rule);
    else sink.warning(d.path, d.value, d.rule);
  }
  std::vector<std::string> present;  // key checks were done above: typed reads only here
  for (const auto& item : j.items()) present.push_back(item.key());
  Obj o(sink, j, path, std::vector<std::string_view>(present.begin(), present.end()));
  o.str("name", c.name);
  o.number("share", c.share, Req::required, Range{0, false, limits::max_share, true});
  if (const json* w = o.find("workers")) read_int_choice(sink, *w, o.path("workers"), between(0, limits::max_workers), c.workers);
  c.task.workers = *std::max_element(c.workers.values.begin(), c.workers.values.end());
  c.task.name.clear();
  if (const json* d = o.find("duration")) c.duration = read_duration(sink, *d, o.path("duration"));
  c.users = read_named_shares(sink, o, "users");
  c.tenants = read_named_shares(sink, o, "tenants");
  if (const json* f = o.find("runtime_estimate_factor")) {
    const Range fr{0, false, limits::max_estimate_factor, true};
    if (f->is_number()) {
      if (fr.ok(f->get<double>())) c.runtime_estimate_factor = std::pair{f->get<double>(), f->get<double>()};
      else o.error("runtime_estimate_factor", fr.rule(f->get<double>()));
    } else {
      Obj fo(sink, *f, o.path("runtime_estimate_factor"), {"min", "max"}, true);
      double lo = 0, hi = 0;
      const bool a = fo.number("min", lo, Req::required, fr), b = fo.number("max", hi, Req::required, fr);
      if (a && b && hi < lo) fo.error("max", fmt::format("must be >= min ({})", num_text(lo)));
      else if (a && b) c.runtime_estimate_factor = std::pair{lo, hi};
    }
  }
  return c;
}

}  // namespace

WorkloadCfg read_workload(Sink& sink, const json& j, const std::string& path) {
  WorkloadCfg w;
  Obj o(sink, j, path, {"tasks", "until_s", "name_prefix", "arrival", "duration", "users", "tenants", "classes"}, true);
  if (!o.valid()) return w;
  std::int64_t n = 0;
  if (o.integer64("tasks", n, Req::optional, between(1, double(limits::max_tasks)))) w.tasks = n;
  o.number("until_s", w.until_s, Range{0, false, k_max_time_s, true});
  if (!o.has("tasks") && !o.has("until_s"))
    sink.error(o.path("tasks"), missing_value, "required key is missing (give tasks and/or until_s)");
  if (o.str("name_prefix", w.name_prefix) && !valid_task_name(w.name_prefix + "0"))
    o.error("name_prefix", "must be lowercase letters, digits and '-', starting with a letter or digit");
  if (const json* a = o.get("arrival", Req::required)) {
    Obj ao(sink, *a, o.path("arrival"), {"process", "rate_per_hour", "start_s", "daily_profile", "weekly_profile"}, true);
    ao.enumeration("process", w.process, k_arrival_processes);
    ao.number("rate_per_hour", w.rate_per_hour, Req::required,
              Range{0, false, limits::max_arrival_rate_per_hour, true});
    ao.number("start_s", w.start_s, Req::optional, between(0, k_max_time_s));
    auto profile = [&](const char* key, std::size_t len, std::vector<double>& out) {
      const json* v = ao.find(key);
      if (!v) return;
      if (!v->is_array() || v->size() != len) {
        ao.error(key, fmt::format("must be an array of {} numbers >= 0", len));
        return;
      }
      bool ok = true, positive = false;
      std::vector<double> vals;
      for (std::size_t i = 0; i < len; ++i) {
        const json& e = (*v)[i];
        if (!e.is_number() || !(e.get<double>() >= 0 && e.get<double>() <= limits::max_share)) {
          sink.error(index_path(ao.path(key), i), dump(e),
                     fmt::format("must be a number >= 0 and <= {}", num_text(limits::max_share)));
          ok = false;
          continue;
        }
        positive = positive || e.get<double>() > 0;
        vals.push_back(e.get<double>());
      }
      if (ok && !positive) ao.error(key, "needs at least one weight > 0 (otherwise nothing ever arrives)");
      if (ok && positive) out = std::move(vals);
    };
    profile("daily_profile", 24, w.daily_profile);
    profile("weekly_profile", 7, w.weekly_profile);
    if (w.until_s && ao.has("start_s") && *w.until_s <= w.start_s)
      o.error("until_s", fmt::format("must be > arrival.start_s ({})", num_text(w.start_s)));
    // Expected number of arrivals when only the horizon bounds them.
    if (w.until_s && !w.tasks && w.rate_per_hour > 0) {
      auto mean = [](const std::vector<double>& v) {
        double s = 0;
        for (double x : v) s += x;
        return v.empty() ? 1.0 : s / double(v.size());
      };
      const double expected =
          w.rate_per_hour * mean(w.daily_profile) * mean(w.weekly_profile) * std::max(0.0, *w.until_s - w.start_s) / 3600.0;
      if (expected > double(limits::max_tasks))
        o.error("until_s", fmt::format("the arrival process would generate about {:.0f} tasks by until_s, more than the limit of {} "
                               "(give `tasks` or a shorter horizon)",
                               expected, limits::max_tasks));
    }
  }
  if (const json* d = o.find("duration")) w.duration = read_duration(sink, *d, o.path("duration"));
  w.users = read_named_shares(sink, o, "users");
  w.tenants = read_named_shares(sink, o, "tenants");
  const json* cls = o.get("classes", Req::required);
  if (cls && cls->is_array() && cls->empty()) o.error("classes", "must not be empty");
  o.array("classes", Req::optional, [&](const json& e, const std::string& p) {
    w.classes.push_back(read_class(sink, e, p));
    if (!w.classes.back().duration && !o.has("duration") && e.is_object())
      sink.error(p + ".duration", missing_value, "required key is missing (no workload.duration to default to)");
  });
  return w;
}

}  // namespace sim::io::detail
