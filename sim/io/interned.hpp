// sim::io::Interned: an immutable string kept once per process, for the task keys that many
// tasks share (user, tenant, pool, workload type, resource type, ...). A trace of 200k jobs has
// a few hundred distinct users: each task then holds 8 bytes per key instead of a 32-byte
// std::string (docs/benchmarks.md "Eighteenth round").
#pragma once

#include <compare>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json_fwd.hpp>

namespace sim::io {

/// A string value with the interface of a `const std::string` (comparison with any string
/// type, conversion to `const std::string&`, fmt and JSON). Assigning interns the text: the
/// process keeps one copy of each distinct text for its lifetime (thread-safe; never freed, so
/// use it only for keys with few distinct values, never for task names).
class Interned {
 public:
  Interned() noexcept;
  Interned(std::string_view s);  // NOLINT(google-explicit-constructor): a string key
  Interned(const std::string& s) : Interned(std::string_view(s)) {}  // NOLINT
  Interned(const char* s) : Interned(std::string_view(s)) {}         // NOLINT

  const std::string& str() const noexcept { return *p_; }
  operator const std::string&() const noexcept { return *p_; }  // NOLINT
  operator std::string_view() const noexcept { return *p_; }    // NOLINT

  bool empty() const noexcept { return p_->empty(); }
  std::size_t size() const noexcept { return p_->size(); }
  const char* c_str() const noexcept { return p_->c_str(); }
  const char* data() const noexcept { return p_->data(); }
  std::string::const_iterator begin() const noexcept { return p_->begin(); }
  std::string::const_iterator end() const noexcept { return p_->end(); }

  /// Equal texts are one pointer.
  friend bool operator==(const Interned& a, const Interned& b) noexcept { return a.p_ == b.p_; }
  friend bool operator==(const Interned& a, std::string_view b) noexcept { return std::string_view(*a.p_) == b; }
  friend bool operator==(const Interned& a, const std::string& b) noexcept { return *a.p_ == b; }
  friend bool operator==(const Interned& a, const char* b) noexcept { return std::string_view(*a.p_) == b; }
  friend std::strong_ordering operator<=>(const Interned& a, const Interned& b) noexcept {
    return std::string_view(*a.p_) <=> std::string_view(*b.p_);
  }
  friend std::strong_ordering operator<=>(const Interned& a, std::string_view b) noexcept { return std::string_view(*a.p_) <=> b; }
  friend std::strong_ordering operator<=>(const Interned& a, const std::string& b) noexcept {
    return std::string_view(*a.p_) <=> std::string_view(b);
  }
  friend std::strong_ordering operator<=>(const Interned& a, const char* b) noexcept { return std::string_view(*a.p_) <=> b; }

  friend std::string operator+(const Interned& a, std::string_view b) { return *a.p_ + std::string(b); }
  friend std::string operator+(std::string_view a, const Interned& b) { return std::string(a) + *b.p_; }
  friend std::string operator+(const Interned& a, const char* b) { return *a.p_ + b; }
  friend std::string operator+(const char* a, const Interned& b) { return a + *b.p_; }
  friend std::string operator+(const Interned& a, const std::string& b) { return *a.p_ + b; }
  friend std::string operator+(const std::string& a, const Interned& b) { return a + *b.p_; }

  /// For boost::hash_combine (ADL).
  friend std::size_t hash_value(const Interned& s) noexcept { return std::hash<std::string_view>{}(*s.p_); }

 private:
  const std::string* p_;
};

std::ostream& operator<<(std::ostream& os, const Interned& s);
void to_json(nlohmann::json& j, const Interned& s);
void to_json(nlohmann::ordered_json& j, const Interned& s);
void from_json(const nlohmann::json& j, Interned& s);
void from_json(const nlohmann::ordered_json& j, Interned& s);

}  // namespace sim::io

template <>
struct std::hash<sim::io::Interned> {
  std::size_t operator()(const sim::io::Interned& s) const noexcept { return hash_value(s); }
};

template <>
struct fmt::formatter<sim::io::Interned> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(const sim::io::Interned& s, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(s.str()), ctx);
  }
};
