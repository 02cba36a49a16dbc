#include "sim/io/overrides.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <variant>

#include <fmt/format.h>

#include "sim/io/limits.hpp"

namespace sim::io {

namespace {

using json = nlohmann::json;

/// One step of an override path: an object key, or an array selector (`[i]`, `[NAME]`,
/// `[KEY=VALUE]`).
struct Step {
  bool is_key = true;
  std::string key;            ///< object key; for a KEY=VALUE selector the element key ("name" for `[NAME]`)
  std::optional<std::size_t> index;  ///< `[i]`
  std::string match;          ///< selector value to match
  /// `[K1=V1,K2=V2,...]`: every (key, value) must match (key/match above hold the first).
  std::vector<std::pair<std::string, std::string>> all;
  std::string text;           ///< the step as written (`.key` or `[...]`)
};

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

/// Splits `path` into steps; on a syntax error returns the rule.
std::variant<std::vector<Step>, std::string> parse_path(std::string_view path) {
  std::vector<Step> steps;
  std::size_t i = 0;
  if (path.empty()) return std::string("empty path");
  while (i < path.size()) {
    const char c = path[i];
    if (c == '[') {
      const auto close = path.find(']', i + 1);
      if (close == std::string_view::npos) return fmt::format("`[` at character {} is not closed by `]`", i + 1);
      const std::string_view sel = path.substr(i + 1, close - i - 1);
      if (steps.empty()) return std::string("must start with a key (the scenario is an object), e.g. `cluster`");
      if (sel.empty()) return fmt::format("empty selector `[]` at character {}", i + 1);
      Step s;
      s.is_key = false;
      s.text = std::string(path.substr(i, close - i + 1));
      if (all_digits(sel)) {
        if (sel.size() > 18) return fmt::format("index `{}` is too large", sel);
        s.index = std::stoull(std::string(sel));
      } else if (const auto eq = sel.find('='); eq != std::string_view::npos) {
        // Several keys `[K1=V1,K2=V2]` when every comma-separated part is KEY=VALUE; else one
        // KEY=VALUE whose value may hold commas.
        std::vector<std::string_view> parts;
        for (std::size_t from = 0;;) {
          const auto comma = sel.find(',', from);
          parts.push_back(sel.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
          if (comma == std::string_view::npos) break;
          from = comma + 1;
        }
        const bool several = parts.size() > 1 && std::all_of(parts.begin(), parts.end(), [](std::string_view p) {
                               const auto e = p.find('=');
                               return e != std::string_view::npos && e > 0;
                             });
        if (!several) parts.assign(1, sel);
        for (const auto part : parts) {
          const auto e = part.find('=');
          s.all.emplace_back(std::string(part.substr(0, e)), std::string(part.substr(e + 1)));
          if (s.all.back().first.empty()) return fmt::format("selector `{}` has no key before `=`", s.text);
          for (std::size_t q = 0; q + 1 < s.all.size(); ++q)
            if (s.all[q].first == s.all.back().first) return fmt::format("selector `{}` names key `{}` twice", s.text, s.all.back().first);
        }
        s.key = s.all.front().first;
        s.match = s.all.front().second;
      } else {
        s.key = "name";
        s.match = std::string(sel);
        s.all.emplace_back(s.key, s.match);
      }
      steps.push_back(std::move(s));
      i = close + 1;
      if (i < path.size() && path[i] != '.' && path[i] != '[')
        return fmt::format("expected `.` or `[` after `{}` at character {}", steps.back().text, i + 1);
      continue;
    }
    if (c == '.') {
      if (steps.empty()) return std::string("must start with a key, not `.`");
      ++i;
    }
    std::size_t end = i;
    while (end < path.size() && path[end] != '.' && path[end] != '[' && path[end] != ']') ++end;
    if (end == i) return fmt::format("empty key at character {}", i + 1);
    if (end < path.size() && path[end] == ']') return fmt::format("unmatched `]` at character {}", end + 1);
    Step s;
    s.key = std::string(path.substr(i, end - i));
    s.text = (steps.empty() ? "" : ".") + s.key;
    steps.push_back(std::move(s));
    i = end;
  }
  return steps;
}

const char* type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::null: return "null";
    case json::value_t::discarded: return "nothing";
    default: return "a number";
  }
}

/// Whether the array element `e` is selected by `key`=`match`: its `key` is the string `match`,
/// or a number/boolean that prints as `match`.
bool selected(const json& e, const std::string& key, const std::string& match) {
  if (!e.is_object()) return false;
  const auto it = e.find(key);
  if (it == e.end()) return false;
  if (it->is_string()) return it->get_ref<const std::string&>() == match;
  if (it->is_number() || it->is_boolean()) return it->dump() == match;
  return false;
}

/// Up to `max` names of the elements of `arr` (their `key` values), for "no element" messages.
std::string known_values(const json& arr, const std::string& key, std::size_t max = 8) {
  std::string out;
  std::size_t n = 0;
  for (const auto& e : arr) {
    if (!e.is_object()) continue;
    const auto it = e.find(key);
    if (it == e.end() || it->is_object() || it->is_array()) continue;
    if (n == max) {
      out += ", ...";
      break;
    }
    out += (n ? ", " : "") + (it->is_string() ? it->get<std::string>() : it->dump());
    ++n;
  }
  return out;
}

/// Applies one override and sets `resolved` to its path with indices; on failure returns the
/// rule and leaves `doc` unchanged.
std::optional<std::string> apply_one(json& doc, const Override& o, std::string& resolved) {
  auto fail = [](std::string rule) { return std::optional<std::string>(std::move(rule)); };
  auto parsed = parse_path(o.path);
  if (std::holds_alternative<std::string>(parsed)) return fail("bad path: " + std::get<std::string>(parsed));
  const auto& steps = std::get<std::vector<Step>>(parsed);
  if (!doc.is_object()) return fail("the scenario is not a JSON object");
  // First resolve the whole path without changing anything (all-or-nothing per override), then
  // create the missing keys and set the value.
  json* cur = &doc;
  std::string written;  // the path as written so far (for messages)
  resolved.clear();
  std::size_t k = 0;
  for (; k < steps.size(); ++k) {
    const Step& s = steps[k];
    const std::string here = written + s.text;
    if (s.is_key) {
      if (!cur->is_object())
        return fail(fmt::format("{}: cannot take key `{}` of {} ({})", written, s.key, type_name(*cur), cur->dump().substr(0, 40)));
      const auto it = cur->find(s.key);
      if (it == cur->end()) break;  // the rest is created below
      cur = &*it;
      resolved += (resolved.empty() ? "" : ".") + s.key;
    } else {
      if (!cur->is_array())
        return fail(fmt::format("{}: is {}, not an array: `{}` selects an array element", written, type_name(*cur), s.text));
      std::size_t idx = 0;
      if (s.index) {
        if (*s.index >= cur->size())
          return fail(fmt::format("{}: no such element ({} has {} element{})", here, written, cur->size(),
                                  cur->size() == 1 ? "" : "s"));
        idx = *s.index;
      } else {
        std::vector<std::size_t> hits;
        for (std::size_t i = 0; i < cur->size(); ++i)
          if (std::all_of(s.all.begin(), s.all.end(), [&](const auto& km) { return selected((*cur)[i], km.first, km.second); }))
            hits.push_back(i);
        if (hits.empty() && s.all.size() > 1) {
          std::string want;
          for (const auto& [k2, v2] : s.all) want += fmt::format("{}{} \"{}\"", want.empty() ? "" : " and ", k2, v2);
          return fail(fmt::format("{}: no such element (no element of {} has {})", here, written, want));
        }
        if (hits.empty()) {
          const auto known = known_values(*cur, s.key);
          return fail(fmt::format("{}: no such element (no element of {} has {} \"{}\"{})", here, written, s.key, s.match,
                                  known.empty() ? "" : "; " + s.key + "s: " + known));
        }
        if (hits.size() > 1)
          return fail(fmt::format("{}: matches {} elements (indices {}, {}, ...); select by index", here, hits.size(),
                                  hits[0], hits[1]));
        idx = hits[0];
      }
      cur = &(*cur)[idx];
      resolved += "[" + std::to_string(idx) + "]";
    }
    written = here;
  }
  // Steps k.. do not exist yet: they must all be keys (array elements are never created).
  for (std::size_t m = k; m < steps.size(); ++m) {
    if (!steps[m].is_key)
      return fail(fmt::format("{}: no such element ({} does not exist)", written + steps[m].text, written));
    written += steps[m].text;
  }
  for (std::size_t m = k; m < steps.size(); ++m) {
    cur = &(*cur)[steps[m].key];  // creates the key (null, then an object if more steps follow)
    if (m + 1 < steps.size()) *cur = json::object();
    resolved += (resolved.empty() ? "" : ".") + steps[m].key;
  }
  *cur = o.value;
  return std::nullopt;
}

/// `path` is `base` or lies under it (`base.x`, `base[i]`).
bool under(const std::string& path, const std::string& base) {
  if (path.size() < base.size() || path.compare(0, base.size(), base) != 0) return false;
  return path.size() == base.size() || path[base.size()] == '.' || path[base.size()] == '[';
}

}  // namespace

std::string Override::origin() const {
  if (option == "--placement" || option == "--queueing" || option == "--trace") return option + " " + value_text;
  return option + " " + path + "=" + value_text;
}

Override make_override(std::string option, std::string path, std::string value_text) {
  Override o;
  o.option = std::move(option);
  o.path = std::move(path);
  o.value_text = std::move(value_text);
  o.value = json::parse(o.value_text, nullptr, /*allow_exceptions=*/false);
  if (o.value.is_discarded()) o.value = o.value_text;
  return o;
}

std::optional<Override> parse_set_argument(std::string_view arg, std::vector<Diagnostic>& diagnostics) {
  int depth = 0;
  std::size_t eq = std::string_view::npos;
  for (std::size_t i = 0; i < arg.size(); ++i) {
    if (arg[i] == '[') ++depth;
    else if (arg[i] == ']' && depth > 0) --depth;
    else if (arg[i] == '=' && depth == 0) {
      eq = i;
      break;
    }
  }
  if (eq == std::string_view::npos || eq == 0) {
    diagnostics.push_back({Diagnostic::Severity::error, "--set", std::string(arg), "",
                           eq == 0 ? "empty PATH: expected PATH=VALUE" : "expected PATH=VALUE (no `=`)"});
    return std::nullopt;
  }
  return make_override("--set", std::string(arg.substr(0, eq)), std::string(arg.substr(eq + 1)));
}

bool apply_overrides(json& doc, const std::vector<Override>& overrides, std::vector<std::string>& resolved_paths,
                     std::vector<Diagnostic>& diagnostics) {
  resolved_paths.assign(overrides.size(), std::string());
  bool ok = true;
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    const Override& o = overrides[i];
    // Text that did not come through the JSON parser (a value that is not JSON is taken as a
    // string as written) must be UTF-8 like every string of a scenario file: it is written into
    // JSON outputs.
    const auto bad_path = utf8_problem(o.path);
    const auto bad_value = o.value.is_string() ? utf8_problem(o.value.get_ref<const std::string&>()) : std::nullopt;
    if (bad_path || bad_value) {
      diagnostics.push_back({Diagnostic::Severity::error, o.option, o.path,
                             o.value.is_string() ? "\"" + o.value.get_ref<const std::string&>() + "\"" : o.value_text,
                             fmt::format("{} is not valid UTF-8 (byte {}): every text of a scenario must be UTF-8",
                                         bad_path ? "PATH" : "VALUE", (bad_path ? *bad_path : *bad_value) + 1)});
      ok = false;
      continue;
    }
    std::string resolved;
    if (auto rule = apply_one(doc, o, resolved)) {
      diagnostics.push_back({Diagnostic::Severity::error, o.option, o.path, o.value.dump(), std::move(*rule)});
      ok = false;
    } else {
      resolved_paths[i] = std::move(resolved);
    }
  }
  return ok;
}

namespace {

/// The override attribute_diagnostics names for `d`: the last whose resolved path `d` lies at or
/// under, or (for an unknown key) above; nullptr when none.
const Override* related_override(const Diagnostic& d, const std::vector<Override>& overrides,
                                 const std::vector<std::string>& resolved_paths, bool& unknown_key_above) {
  const Override* by = nullptr;
  unknown_key_above = false;
  for (std::size_t i = 0; i < overrides.size() && i < resolved_paths.size(); ++i) {
    const auto& rp = resolved_paths[i];
    if (rp.empty()) continue;
    if (under(d.path, rp)) by = &overrides[i];  // the last override of that path wins
    if (under(rp, d.path) && d.rule.rfind("unknown key", 0) == 0) {
      unknown_key_above = true;
      by = &overrides[i];
    }
  }
  return by;
}

bool same_diagnostic(const Diagnostic& a, const Diagnostic& b) {
  return a.severity == b.severity && a.path == b.path && a.value == b.value && a.rule == b.rule;
}

bool has_diagnostic(const std::vector<Diagnostic>& in, const Diagnostic& d) {
  return std::any_of(in.begin(), in.end(), [&](const Diagnostic& b) { return same_diagnostic(b, d); });
}

/// The diagnostics attribute_diagnostics leaves without an override (a rule on a parent of what
/// an override set, a reference elsewhere to what an override removed or renamed), compared
/// with the document without overrides (`original`, parsed only when there are such
/// diagnostics): one the original has is not the overrides' doing and is left as it is; a new one
/// names the overrides that cause it alone (each applied to `original` by itself, only when
/// several applied), else every applied one.
void attribute_new_diagnostics(std::vector<Diagnostic>& diagnostics, const json& original, const std::vector<Override>& overrides,
                               const std::vector<std::string>& resolved_paths, const std::string& file_label,
                               const libsched::Registry& registry) {
  std::vector<std::size_t> open;
  for (std::size_t k = 0; k < diagnostics.size(); ++k) {
    bool above = false;
    if (diagnostics[k].line == 0 && !related_override(diagnostics[k], overrides, resolved_paths, above)) open.push_back(k);
  }
  std::vector<std::size_t> applied;
  for (std::size_t i = 0; i < overrides.size() && i < resolved_paths.size(); ++i)
    if (!resolved_paths[i].empty()) applied.push_back(i);
  if (open.empty() || applied.empty()) return;
  const std::vector<Diagnostic> base = parse_scenario_document(original, file_label, registry).diagnostics;
  std::vector<std::optional<std::vector<Diagnostic>>> alone(overrides.size());
  auto alone_has = [&](std::size_t i, const Diagnostic& d) {
    if (!alone[i]) {
      json doc = original;
      std::vector<std::string> rp;
      std::vector<Diagnostic> ignored;
      alone[i] = apply_overrides(doc, {overrides[i]}, rp, ignored) ? parse_scenario_document(doc, file_label, registry).diagnostics
                                                                     : std::vector<Diagnostic>{};
    }
    return has_diagnostic(*alone[i], d);
  };
  for (std::size_t k : open) {
    Diagnostic& d = diagnostics[k];
    if (has_diagnostic(base, d)) continue;
    std::vector<std::size_t> by;
    if (applied.size() > 1)
      for (std::size_t i : applied)
        if (alone_has(i, d)) by.push_back(i);
    if (by.empty()) by = applied;
    std::string origins;
    for (std::size_t i : by) origins += (origins.empty() ? "" : ", ") + overrides[i].origin();
    d.rule += " (from " + origins + ")";
  }
}

}  // namespace

void attribute_diagnostics(std::vector<Diagnostic>& diagnostics, const std::vector<Override>& overrides,
                           const std::vector<std::string>& resolved_paths) {
  for (auto& d : diagnostics) {
    if (d.line != 0) continue;  // malformed JSON: not about a path
    bool unknown_key_above = false;
    const Override* by = related_override(d, overrides, resolved_paths, unknown_key_above);
    if (!by) continue;
    if (d.severity == Diagnostic::Severity::warning && d.rule.rfind("unknown key", 0) == 0) unknown_key_above = true;
    if (unknown_key_above) d.severity = Diagnostic::Severity::error;
    d.rule += " (from " + by->origin() + ")";
  }
}

ParseResult parse_with_overrides(json& doc, const std::string& file_label, const std::vector<Override>& overrides,
                                 const libsched::Registry& registry) {
  ParseResult r;
  std::vector<std::string> resolved;
  // The document as given (kept only when there are overrides) tells which diagnostics no
  // override's path relates to the overrides caused.
  const json original = overrides.empty() ? json() : doc;
  if (!apply_overrides(doc, overrides, resolved, r.diagnostics)) return r;
  r = parse_scenario_document(doc, file_label, registry);
  if (!overrides.empty()) attribute_new_diagnostics(r.diagnostics, original, overrides, resolved, file_label, registry);
  attribute_diagnostics(r.diagnostics, overrides, resolved);
  return r;
}

ParseResult load_scenario_file(const std::string& path, const std::vector<Override>& overrides, json* document,
                               const libsched::Registry& registry) {
  if (document) *document = nullptr;
  if (overrides.empty() && !document) return load_scenario_file(path, registry);
  ParseResult r;
  const auto text = read_scenario_file(path, r.diagnostics);
  if (!text) return r;
  auto doc = parse_scenario_json(*text, path, r.diagnostics);
  if (!doc) return r;
  r = parse_with_overrides(*doc, path, overrides, registry);
  if (document) *document = std::move(*doc);
  return r;
}

}  // namespace sim::io
