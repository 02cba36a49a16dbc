// Pass 1, the `prices` section (docs/scenario-format.md "Prices"): every key known (an unknown
// key is an error, not a warning: a misspelt class would silently cost 0), every price a finite
// number from 0 to limits::max_price_per_h. Names of GPU models and specs are checked against
// the cluster once its trace nodes are loaded (sim/io/prices.cpp).
#include "sim/io/scenario_read_detail.hpp"

namespace sim::io::detail {

namespace {

constexpr Range k_price_range{0, true, limits::max_price_per_h, true};

/// One class table; `reserved_allowed`: only GPU models price the reserved commitment.
ClassPricesCfg read_class_prices(Sink& sink, const json& j, const std::string& path, bool reserved_allowed) {
  ClassPricesCfg c;
  Obj o(sink, j, path, {"reserved", "pay_as_you_go", "spot", "idle"}, /*strict=*/true);
  if (!o.valid()) return c;
  if (o.has("reserved") && !reserved_allowed) {
    o.error("reserved",
            "a reserved quota is committed per GPU of its pool's GPU model: set its price under "
            "prices.gpu_models.<model>.reserved");
  } else {
    o.number("reserved", c.reserved, k_price_range);
  }
  o.number("pay_as_you_go", c.pay_as_you_go, k_price_range);
  o.number("spot", c.spot, k_price_range);
  o.number("idle", c.idle, k_price_range);
  return c;
}

bool valid_currency(const std::string& s) {
  if (s.empty() || s.size() > 16) return false;
  for (char ch : s)
    if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
      return false;
  return true;
}

}  // namespace

PricesCfg read_prices(Sink& sink, const json& j, const std::string& path) {
  PricesCfg p;
  Obj o(sink, j, path, {"currency", "gpu_models", "instance_specs", "cpu_vcpu"}, /*strict=*/true);
  if (!o.valid()) return p;
  if (o.str("currency", p.currency, Req::required) && !valid_currency(p.currency))
    o.error("currency", "must be 1 to 16 letters, digits, `_` or `-` (e.g. \"USD\")");
  auto table = [&](std::string_view key, std::map<std::string, ClassPricesCfg>& out, bool reserved_allowed) {
    const json* v = o.find(key);
    if (!v) return;
    if (!v->is_object()) {
      o.error(key, "must be an object of class prices by name");
      return;
    }
    for (const auto& [name, e] : v->items()) out[name] = read_class_prices(sink, e, key_path(o.path(key), name), reserved_allowed);
  };
  table("gpu_models", p.gpu_models, true);
  table("instance_specs", p.instance_specs, false);
  if (const json* c = o.find("cpu_vcpu")) p.cpu_vcpu = read_class_prices(sink, *c, o.path("cpu_vcpu"), false);
  return p;
}

}  // namespace sim::io::detail
