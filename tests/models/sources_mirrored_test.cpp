// "One source = one test" for the top-level sources of models/ (docs/architecture.md, "Tests"):
// models/<stem>.cpp is tested in tests/models/<stem>_test.cpp, read at test time
// (tests/support/mirror.hpp), so a new source without its test, or a test named after no source,
// fails here naming the file. The plugin folders have their own check (plugins_registered_test.cpp).
#include "tests/support/mirror.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ddlsim::test;

TEST_CASE("sources mirrored: every models/*.cpp has its tests/models/<stem>_test.cpp, and every test there its source") {
  const MirrorRule rule{
      "models",
      "tests/models",
      {},
      {
          {"registry", "models/registry.hpp, header only: the Registry every plugin kind is created through"},
          {"plugins_registered", "every plugin folder of models/: one plugin = one file + one test (plugin_files.hpp)"},
          {"sources_mirrored", "this check"},
      }};
  const auto problems = mirror_problems(DDLSIM_SOURCE_DIR, rule);
  for (const auto& problem : problems) FAIL_CHECK(problem);
  CHECK(problems.empty());
}

TEST_CASE("sources mirrored: the check names a source without a test, a test without a source and stale exceptions") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("ddlsim-mirror-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const char* dir : {"lib/sub", "tests/lib/sub"}) fs::create_directories(root / dir);
  for (const char* file : {"lib/a.cpp", "lib/b.cpp", "lib/a.hpp", "lib/sub/c.cpp", "tests/lib/a_test.cpp",
                           "tests/lib/x_test.cpp", "tests/lib/cross_test.cpp", "tests/lib/helper.hpp",
                           "tests/lib/sub/c_test.cpp", "tests/lib/sub/d_test.cpp"})
    std::ofstream(root / file) << "// " << file << "\n";
  CHECK(stems_in(root / "lib", ".cpp") == std::set<std::string>{"a", "b"});  // files directly in the folder only
  CHECK(stems_in(root / "tests/lib", "_test.cpp") == std::set<std::string>{"a", "cross", "x"});

  MirrorRule rule{"lib", "tests/lib", {{"gone", "removed"}}, {{"cross", "several sources"}, {"absent", "nothing"}}};
  CHECK(mirror_problems(root, rule) ==
        std::vector<std::string>{
            "lib/b.cpp has no test file tests/lib/b_test.cpp",
            "tests/lib/x_test.cpp mirrors no source: lib/x.cpp is missing (name it after the source it tests, or list it "
            "as cross-cutting with the reason)",
            "the untested lib/gone.cpp does not exist (removed)",
            "the cross-cutting tests/lib/absent_test.cpp does not exist (nothing)"});
  // Exceptions that no longer apply are reported too.
  rule = MirrorRule{"lib", "tests/lib", {{"a", "pending"}, {"b", "pending"}}, {{"cross", "several"}, {"x", "x"}, {"a", "a"}}};
  CHECK(mirror_problems(root, rule) ==
        std::vector<std::string>{"lib/a.cpp is tested in tests/lib/a_test.cpp: take it off the list of untested sources",
                                 "tests/lib/a_test.cpp mirrors lib/a.cpp: it is not cross-cutting"});
  // Once mirrored, nothing to report.
  std::ofstream(root / "tests/lib/b_test.cpp") << "\n";
  std::ofstream(root / "lib/x.cpp") << "\n";
  CHECK(mirror_problems(root, MirrorRule{"lib", "tests/lib", {}, {{"cross", "several"}}}).empty());
  CHECK(mirror_problems(root, MirrorRule{"nowhere", "tests/lib", {}, {}}).size() == 1);
  fs::remove_all(root);
}
