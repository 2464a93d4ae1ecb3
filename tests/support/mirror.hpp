// Test helper: "one source = one test". A folder's top-level sources (models/*.cpp) and the test
// files beside them (tests/models/*_test.cpp) mirror each other: models/<stem>.cpp is tested in
// tests/models/<stem>_test.cpp. mirror_problems() reads both folders at test time and returns one
// line per break of the rule -- a source without its test, a test without its source -- less the
// listed exceptions, each with its reason: sources whose test is pending, and cross-cutting tests
// that test something other than one source file. Subfolders are not read (the plugin folders have
// their own check, tests/models/plugin_files.hpp). Used by tests/models/sources_mirrored_test.cpp
// and tests/platforms/sources_mirrored_test.cpp; DDLSIM_SOURCE_DIR is the source tree.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ddlsim::test {

struct MirrorRule {
  std::string sources;  // "models", relative to the tree
  std::string tests;    // "tests/models"
  /// Source stems without a test file yet -> why.
  std::map<std::string, std::string> untested;
  /// Test stems that mirror no source -> what they test instead.
  std::map<std::string, std::string> cross_cutting;
};

/// The stems of the regular files directly in `dir` whose names end with `suffix` ("x_test.cpp" -> "x").
inline std::set<std::string> stems_in(const std::filesystem::path& dir, const std::string& suffix) {
  std::set<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    out.insert(name.substr(0, name.size() - suffix.size()));
  }
  return out;
}

/// Every break of `rule` in the tree at `root`, one line each; empty when the folders mirror.
inline std::vector<std::string> mirror_problems(const std::filesystem::path& root, const MirrorRule& rule) {
  std::vector<std::string> problems;
  if (!std::filesystem::is_directory(root / rule.sources) || !std::filesystem::is_directory(root / rule.tests))
    return {"no folder " + (root / rule.sources).string() + " or " + (root / rule.tests).string()};
  const auto sources = stems_in(root / rule.sources, ".cpp");
  const auto tests = stems_in(root / rule.tests, "_test.cpp");
  const auto source = [&](const std::string& stem) { return rule.sources + "/" + stem + ".cpp"; };
  const auto test = [&](const std::string& stem) { return rule.tests + "/" + stem + "_test.cpp"; };
  if (sources.empty()) problems.push_back("no source in " + rule.sources);
  for (const auto& stem : sources) {
    const bool tested = tests.count(stem) == 1, excused = rule.untested.count(stem) == 1;
    if (!tested && !excused) problems.push_back(source(stem) + " has no test file " + test(stem));
    if (tested && excused)
      problems.push_back(source(stem) + " is tested in " + test(stem) + ": take it off the list of untested sources");
  }
  for (const auto& stem : tests) {
    const bool mirrors = sources.count(stem) == 1, listed = rule.cross_cutting.count(stem) == 1;
    if (!mirrors && !listed)
      problems.push_back(test(stem) + " mirrors no source: " + source(stem) +
                         " is missing (name it after the source it tests, or list it as cross-cutting with the reason)");
    if (mirrors && listed) problems.push_back(test(stem) + " mirrors " + source(stem) + ": it is not cross-cutting");
  }
  for (const auto& [stem, why] : rule.untested)
    if (sources.count(stem) == 0) problems.push_back("the untested " + source(stem) + " does not exist (" + why + ")");
  for (const auto& [stem, what] : rule.cross_cutting)
    if (tests.count(stem) == 0) problems.push_back("the cross-cutting " + test(stem) + " does not exist (" + what + ")");
  return problems;
}

}  // namespace ddlsim::test
