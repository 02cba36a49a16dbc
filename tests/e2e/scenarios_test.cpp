#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include "sim/io/validate_cli.hpp"

TEST_CASE("every scenario file in scenarios/ validates with exit status 0") {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(SCHEDSIM_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".json") continue;
    std::ostringstream out, err;
    INFO(e.path().string() << ": " << err.str());
    CHECK(sim::io::validate_command(e.path().string(), out, err) == 0);
    ++n;
  }
  CHECK(n >= 5);
}
