// The process-wide pool behind sim::io::Interned (interned.hpp).
#include "sim/io/interned.hpp"

#include <mutex>
#include <ostream>
#include <unordered_set>

#include <nlohmann/json.hpp>

namespace sim::io {

namespace {

struct InternPool {
  std::mutex mu;
  // Node-based: an element's address never changes. Heterogeneous lookup by string_view.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_set<std::string, Hash, std::equal_to<>> texts;
};

InternPool& intern_pool() {
  static InternPool* pool = new InternPool;  // never destroyed: Interned values outlive statics
  return *pool;
}

const std::string* empty_text() {
  static const std::string* e = new std::string;
  return e;
}

}  // namespace

Interned::Interned() noexcept : p_(empty_text()) {}

Interned::Interned(std::string_view s) {
  if (s.empty()) {
    p_ = empty_text();
    return;
  }
  InternPool& pool = intern_pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  auto it = pool.texts.find(s);
  if (it == pool.texts.end()) it = pool.texts.emplace(s).first;
  p_ = &*it;
}

std::ostream& operator<<(std::ostream& os, const Interned& s) { return os << s.str(); }
void to_json(nlohmann::json& j, const Interned& s) { j = s.str(); }
void to_json(nlohmann::ordered_json& j, const Interned& s) { j = s.str(); }
void from_json(const nlohmann::json& j, Interned& s) { s = Interned(j.get_ref<const std::string&>()); }
void from_json(const nlohmann::ordered_json& j, Interned& s) { s = Interned(j.get_ref<const std::string&>()); }

}  // namespace sim::io
