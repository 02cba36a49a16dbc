// Reading Kubernetes objects for `schedsim import k8s`: files and folders, YAML (and JSON, which
// yaml-cpp reads as YAML) documents to JSON values, `List` flattening, quantities and timestamps.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/io/json_file.hpp"
#include "sim/io/k8s_detail.hpp"
#include "sim/io/limits.hpp"

namespace sim::io {

namespace {

using nlohmann::json;

/// YAML -> JSON conversion with a node budget (aliases can make a small file expand).
struct K8sYamlToJson {
  std::size_t budget = 20'000'000;
  std::string problem;

  json scalar(const YAML::Node& n) {
    const std::string& s = n.Scalar();
    if (n.Tag() != "?") return s;  // quoted or explicitly tagged: a string
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    std::int64_t i = 0;
    const char* b = s.data();
    const char* e = s.data() + s.size();
    if (*b == '+') ++b;
    if (auto [p, ec] = std::from_chars(b, e, i); ec == std::errc() && p == e) return i;
    double d = 0;
    if (auto [p, ec] = std::from_chars(b, e, d); ec == std::errc() && p == e && std::isfinite(d)) return d;
    return s;
  }

  json convert(const YAML::Node& n, int depth) {
    if (!problem.empty()) return nullptr;
    if (budget == 0) {
      problem = "more than 20,000,000 YAML nodes (aliases expanded)";
      return nullptr;
    }
    --budget;
    if (depth > limits::max_json_depth) {
      problem = fmt::format("nesting deeper than {} levels", limits::max_json_depth);
      return nullptr;
    }
    switch (n.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined: return nullptr;
      case YAML::NodeType::Scalar: return scalar(n);
      case YAML::NodeType::Sequence: {
        json a = json::array();
        for (const auto& c : n) a.push_back(convert(c, depth + 1));
        return a;
      }
      case YAML::NodeType::Map: {
        json o = json::object();
        for (const auto& kv : n) {
          if (!kv.first.IsScalar()) {
            problem = "a mapping key that is not a scalar";
            return nullptr;
          }
          const std::string k = kv.first.Scalar();
          if (o.contains(k)) {
            problem = fmt::format("duplicate key `{}` (line {})", k, kv.first.Mark().line + 1);
            return nullptr;
          }
          o[k] = convert(kv.second, depth + 1);
        }
        return o;
      }
    }
    return nullptr;
  }
};

bool k8s_wanted_file(const std::filesystem::path& p) {
  const std::string e = p.extension().string();
  return e == ".yaml" || e == ".yml" || e == ".json";
}

void k8s_add_object(const std::string& file, const json& j, const std::string& where, int depth,
                    std::vector<k8s_detail::Object>& out, std::vector<Diagnostic>& errors) {
  if (!j.is_object()) {
    errors.push_back({Diagnostic::Severity::error, file, where, j.dump().substr(0, 80), "a Kubernetes object must be a mapping"});
    return;
  }
  const std::string kind = k8s_detail::str_at(j, "kind");
  if (kind.empty()) {
    errors.push_back({Diagnostic::Severity::error, file, where + ".kind", missing_value, "every object needs a `kind`"});
    return;
  }
  if (kind.ends_with("List") && j.contains("items")) {
    const json& items = j["items"];
    if (items.is_null()) return;
    if (!items.is_array() || depth > 4) {
      errors.push_back({Diagnostic::Severity::error, file, where + ".items", "", "must be an array of objects"});
      return;
    }
    for (std::size_t i = 0; i < items.size(); ++i)
      k8s_add_object(file, items[i], fmt::format("{}.items[{}]", where, i), depth + 1, out, errors);
    return;
  }
  k8s_detail::Object o;
  o.file = file;
  o.kind = kind;
  const json* md = j.contains("metadata") && j["metadata"].is_object() ? &j["metadata"] : nullptr;
  o.name = md ? k8s_detail::str_at(*md, "name") : "";
  o.ns = md ? k8s_detail::str_at(*md, "namespace") : "";
  if (o.name.empty()) {
    errors.push_back({Diagnostic::Severity::error, file, where + "(" + kind + ").metadata.name", missing_value,
                      "every object needs a name"});
    return;
  }
  static const char* const k_cluster_scoped[] = {"Node", "PriorityClass", "WorkloadPriorityClass", "ResourceFlavor",
                                                 "ClusterQueue", "Cohort"};
  const bool cluster_scoped = std::find(std::begin(k_cluster_scoped), std::end(k_cluster_scoped), kind) != std::end(k_cluster_scoped);
  if (cluster_scoped) o.ns.clear();
  else if (o.ns.empty()) o.ns = "default";
  o.j = j;
  out.push_back(std::move(o));
}

void k8s_read_file(const std::string& file, std::vector<k8s_detail::Object>& out, std::vector<Diagnostic>& errors) {
  JsonReadOptions ro;
  ro.allow_pipe = true;
  auto text = read_text_file(file, "a Kubernetes manifest", errors, ro).text;
  if (!text) return;
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(*text);
  } catch (const YAML::Exception& e) {
    errors.push_back({Diagnostic::Severity::error, file, fmt::format("line {}, column {}", e.mark.line + 1, e.mark.column + 1),
                      "", "malformed YAML: " + e.msg});
    return;
  }
  for (std::size_t d = 0; d < docs.size(); ++d) {
    K8sYamlToJson conv;
    json j = conv.convert(docs[d], 0);
    const std::string where = fmt::format("documents[{}]", d);
    if (!conv.problem.empty()) {
      errors.push_back({Diagnostic::Severity::error, file, where, "", conv.problem});
      continue;
    }
    if (j.is_null()) continue;  // an empty document (a trailing `---`)
    k8s_add_object(file, j, where, 0, out, errors);
  }
}

}  // namespace

namespace k8s_detail {

std::string str_at(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<Object> read_objects(const std::vector<std::string>& paths, std::vector<Diagnostic>& errors) {
  namespace fs = std::filesystem;
  std::vector<Object> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> files;
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec) && k8s_wanted_file(it->path())) files.push_back(it->path().string());
      if (ec) {
        errors.push_back({Diagnostic::Severity::error, p, "", "", "cannot list the folder: " + ec.message()});
        continue;
      }
      std::sort(files.begin(), files.end());
      if (files.empty())
        errors.push_back({Diagnostic::Severity::error, p, "", "", "no *.yaml, *.yml or *.json file in this folder"});
      for (const auto& f : files) k8s_read_file(f, out, errors);
    } else {
      k8s_read_file(p, out, errors);
    }
  }
  return out;
}

}  // namespace k8s_detail

std::optional<double> parse_k8s_quantity(std::string_view t) {
  if (t.empty() || t.size() > 64) return std::nullopt;
  std::size_t i = 0;
  if (t[0] == '+') i = 1;
  std::size_t num_end = i;
  bool digits = false;
  while (num_end < t.size() && (std::isdigit(static_cast<unsigned char>(t[num_end])) || t[num_end] == '.')) {
    digits = digits || t[num_end] != '.';
    ++num_end;
  }
  if (!digits) return std::nullopt;
  double v = 0;
  const std::string num(t.substr(i, num_end - i));
  if (std::count(num.begin(), num.end(), '.') > 1) return std::nullopt;
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (ec != std::errc() || p != num.data() + num.size()) return std::nullopt;
  const std::string_view suf = t.substr(num_end);
  double mult = 1;
  if (suf.empty()) mult = 1;
  else if (suf == "Ki") mult = 1024.0;
  else if (suf == "Mi") mult = 1024.0 * 1024;
  else if (suf == "Gi") mult = 1024.0 * 1024 * 1024;
  else if (suf == "Ti") mult = 1024.0 * 1024 * 1024 * 1024;
  else if (suf == "Pi") mult = 1024.0 * 1024 * 1024 * 1024 * 1024;
  else if (suf == "Ei") mult = 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024;
  else if (suf == "n") mult = 1e-9;
  else if (suf == "u") mult = 1e-6;
  else if (suf == "m") mult = 1e-3;
  else if (suf == "k") mult = 1e3;
  else if (suf == "M") mult = 1e6;
  else if (suf == "G") mult = 1e9;
  else if (suf == "T") mult = 1e12;
  else if (suf == "P") mult = 1e15;
  else if (suf == "E") mult = 1e18;
  else if (suf[0] == 'e' || suf[0] == 'E') {
    int ex = 0;
    const char* b = suf.data() + 1;
    if (b < suf.data() + suf.size() && *b == '+') ++b;
    auto [q, ec2] = std::from_chars(b, suf.data() + suf.size(), ex);
    if (ec2 != std::errc() || q != suf.data() + suf.size() || ex < -30 || ex > 30) return std::nullopt;
    mult = std::pow(10.0, ex);
  } else {
    return std::nullopt;
  }
  const double r = v * mult;
  if (!std::isfinite(r)) return std::nullopt;
  return r;
}

std::optional<double> parse_k8s_time(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto num = [&](std::size_t at, std::size_t len, int& out) {
    if (at + len > t.size()) return false;
    auto [p, ec] = std::from_chars(t.data() + at, t.data() + at + len, out);
    return ec == std::errc() && p == t.data() + at + len;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (t.size() < 20 || !num(0, 4, y) || t[4] != '-' || !num(5, 2, mo) || t[7] != '-' || !num(8, 2, d) ||
      (t[10] != 'T' && t[10] != 't' && t[10] != ' ') || !num(11, 2, h) || t[13] != ':' || !num(14, 2, mi) ||
      t[16] != ':' || !num(17, 2, s))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  std::size_t i = 19;
  double frac = 0;
  if (i < t.size() && t[i] == '.') {
    double scale = 0.1;
    ++i;
    const std::size_t start = i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
      frac += (t[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (i == start) return std::nullopt;
  }
  int offset_s = 0;
  if (i < t.size() && (t[i] == 'Z' || t[i] == 'z')) {
    ++i;
  } else if (i < t.size() && (t[i] == '+' || t[i] == '-')) {
    int oh = 0, om = 0;
    if (!num(i + 1, 2, oh) || i + 3 >= t.size() || t[i + 3] != ':' || !num(i + 4, 2, om) || oh > 23 || om > 59)
      return std::nullopt;
    offset_s = (t[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != t.size()) return std::nullopt;
  // days from civil (proleptic Gregorian), Howard Hinnant's algorithm
  const int yy = y - (mo <= 2 ? 1 : 0);
  const int era = (yy >= 0 ? yy : yy - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(yy - era * 400);
  const unsigned doy = (153 * static_cast<unsigned>(mo + (mo > 2 ? -3 : 9)) + 2) / 5 + static_cast<unsigned>(d) - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const long long days = static_cast<long long>(era) * 146097 + static_cast<long long>(doe) - 719468;
  return static_cast<double>(days * 86400 + h * 3600 + mi * 60 + s - offset_s) + frac;
}

int k8s_priority_level(std::size_t rank, std::size_t n_values) {
  if (n_values <= 1) return 5;
  return 1 + static_cast<int>(std::lround(8.0 * static_cast<double>(rank) / static_cast<double>(n_values - 1)));
}

}  // namespace sim::io
