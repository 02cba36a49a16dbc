// `schedsim run --outputs LIST`: the names of the output files a run can write and the choice of
// which ones it writes (docs/outputs.md "Choosing the outputs").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sim {

/// One output a run can write. The order is the order of k_outputs (and of the files written).
enum class Output : std::uint8_t { tasks, summary, groups, events, timeseries, metrics, resolved, timeline };

/// An output's name on the command line and the file it writes.
struct OutputName {
  Output output;
  std::string_view name;  ///< as given to --outputs, e.g. "tasks"
  std::string_view file;  ///< the file written into --out, e.g. "tasks.csv"
  bool by_default;        ///< written when --outputs is not given
};

/// Every output, in file-writing order.
inline constexpr std::array<OutputName, 8> k_outputs{{
    {Output::tasks, "tasks", "tasks.csv", true},
    {Output::summary, "summary", "summary.json", true},
    {Output::groups, "groups", "groups.csv", true},
    {Output::events, "events", "events.jsonl", true},
    {Output::timeseries, "timeseries", "timeseries.csv", true},
    {Output::metrics, "metrics", "metrics.prom", true},
    {Output::resolved, "resolved", "scenario.resolved.json", true},
    {Output::timeline, "timeline", "timeline.json", false},
}};

/// A set of outputs. Default-constructed: the default outputs (today's seven files, not the
/// timeline).
class OutputSelection {
 public:
  OutputSelection() {
    for (const auto& o : k_outputs) on_[std::size_t(o.output)] = o.by_default;
  }
  /// Every output (`--outputs all`).
  static OutputSelection all() {
    OutputSelection s;
    s.on_.fill(true);
    return s;
  }
  /// No output (to add to).
  static OutputSelection none() {
    OutputSelection s;
    s.on_.fill(false);
    return s;
  }
  bool has(Output o) const { return on_[std::size_t(o)]; }
  void set(Output o, bool on = true) { on_[std::size_t(o)] = on; }
  /// The files of the selected outputs, in k_outputs order.
  std::vector<std::string> files() const {
    std::vector<std::string> v;
    for (const auto& o : k_outputs)
      if (has(o.output)) v.emplace_back(o.file);
    return v;
  }

 private:
  std::array<bool, k_outputs.size()> on_{};
};

/// Parses `--outputs LIST`: comma-separated output names (k_outputs' `name`s) or `all`; blanks
/// around names are ignored, repeats are allowed. Returns nullopt and sets `error` to
/// `--outputs: LIST: RULE` (naming the bad value and the accepted names) when a name is unknown
/// or the list names nothing.
std::optional<OutputSelection> parse_outputs(std::string_view list, std::string& error);

}  // namespace sim
