// "One source = one test" for the top-level sources of platforms/ (docs/architecture.md, "Tests"):
// platforms/<stem>.cpp is tested in tests/platforms/<stem>_test.cpp, read at test time
// (tests/support/mirror.hpp). The builders have their own check (plugins_registered_test.cpp).
#include "tests/support/mirror.hpp"

#include <doctest/doctest.h>

using namespace ddlsim::test;

TEST_CASE("sources mirrored: every platforms/*.cpp has its tests/platforms/<stem>_test.cpp, and every test there its source") {
  const MirrorRule rule{
      "platforms",
      "tests/platforms",
      {},
      {
          {"plugins_registered", "every topology builder of platforms/builders/: one plugin = one file + one test"},
          {"sources_mirrored", "this check"},
      }};
  const auto problems = mirror_problems(DDLSIM_SOURCE_DIR, rule);
  for (const auto& problem : problems) FAIL_CHECK(problem);
  CHECK(problems.empty());
}
