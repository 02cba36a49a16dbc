// Internal to sim/outputs (writers.cpp, timeline.cpp): appending JSON and CSV values to a text
// buffer exactly as nlohmann::json::dump() prints them, without building a JSON value, so the
// large files (events.jsonl, timeline.json) are streamed line by line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/engine/simulator.hpp"

namespace sim::detail {

/// Appends `s` as nlohmann::json::dump() prints a string: quoted, `"` `\\` and control
/// characters escaped (\b \f \n \r \t, else \u00xx), other bytes as they are. Text with bytes
/// >= 0x80 goes through nlohmann itself (its UTF-8 validation and errors included: throws
/// nlohmann::json::type_error on invalid UTF-8, as dump() does).
void append_json_string(std::string& out, std::string_view s);

/// Appends the decimal integer `v`.
void append_int(std::string& out, std::int64_t v);

/// Appends `ms` milliseconds as seconds the way dump() prints the JSON number (ms / 1000 as an
/// integer when whole, else the double ms / 1000.0): the integer, else the shortest decimal that
/// round-trips. Also right for milli-GPU as GPUs.
void append_seconds_json(std::string& out, Time ms);

}  // namespace sim::detail
