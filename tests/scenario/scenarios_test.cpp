// Every bundled scenario is valid, says what it studies, and runs to all four outputs.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;

TEST_CASE("every bundled scenario validates, has a description and runs") {
  int count = 0;
  TempDir tmp;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(DDLSIM_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    CAPTURE(entry.path().string());
    const auto doc = nlohmann::json::parse(ddlsim::test::slurp(entry.path()));
    CHECK(doc.contains("description"));
    CHECK(doc.value("description", "").size() > 40);
    auto v = ddlsim::test::ddlsim(fmt::format("validate {}", entry.path().string()));
    CHECK_MESSAGE(v.exit_code == 0, v.err);
    const std::string out = tmp.file(entry.path().stem().string());
    // Short runs; adaptive compression needs more than its exploration (5 candidates x 2 here).
    const bool adaptive = doc["training"].contains("adaptive_compression");
    const std::string shorten = adaptive ? "--set workload.iterations=12 --set training.adaptive_compression.explore_iterations=2"
                                         : "--set workload.iterations=2";
    auto r = ddlsim::test::ddlsim(fmt::format("run {} {} --out {} --quiet", entry.path().string(), shorten, out));
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    for (const char* f : {"summary.json", "iterations.csv", "links.csv", "timeline.json"})
      CHECK(std::filesystem::exists(std::filesystem::path(out) / f));
  }
  CHECK(count >= 8);
}
