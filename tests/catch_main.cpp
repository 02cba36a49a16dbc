// The Catch2 main shared by every test binary, and a listener that removes, when the run ends,
// the scratch entries this process left in the temporary directory: every name that starts with
// "schedsim-" and ends with "-<this pid>" (tests/common/files.hpp fresh_dir and the tests' own
// scratch folders follow that pattern). Entries of other processes are never touched.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace {

struct ScratchCleanup : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunEnded(const Catch::TestRunStats&) override {
    namespace fs = std::filesystem;
    const std::string suffix = "-" + std::to_string(::getpid());
    std::error_code ec;
    const fs::path tmp = fs::temp_directory_path(ec);
    if (ec) return;
    std::vector<fs::path> ours;  // collected first: no removal while the directory is read
    for (fs::directory_iterator it(tmp, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.rfind("schedsim-", 0) == 0 && name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        ours.push_back(it->path());
    }
    for (const auto& p : ours) {
      std::error_code rm;
      fs::remove_all(p, rm);
    }
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(ScratchCleanup)
