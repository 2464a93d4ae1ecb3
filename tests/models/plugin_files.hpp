// Test helper: "one plugin = one file + one test". Reads, at test time, every plugin source file of
// a globbed plugin folder (models/sync/, models/compressors/, models/collectives/,
// platforms/builders/) and checks that each file registers its plugin under the file's stem, that
// the registry holds it, that the doc owning that kind lists it in its table, and that the test
// file mirroring the source exists (tests/<folder>/<stem>_test.cpp) -- and that no mirrored test
// file is left without its source. Used by tests/models/plugins_registered_test.cpp and
// tests/platforms/plugins_registered_test.cpp. DDLSIM_SOURCE_DIR: the source tree (a compile
// definition of the test executables).
#pragma once

#include <algorithm>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ddlsim::test {

namespace fs = std::filesystem;

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct PluginFile {
  std::string relative;                 // "models/sync/bsp.cpp"
  std::string stem;                     // "bsp"
  std::vector<std::string> registered;  // the names of its DDLSIM_REGISTER( lines
  /// The names it registers as companions of its plugin: an event-driven sync model's TraceRule
  /// (models/training_trace.hpp), registered under the model's own name.
  std::vector<std::string> companions;
};

/// Every *.cpp of `folder` (relative to the source tree), sorted, with the names it registers.
inline std::vector<PluginFile> plugin_files(const std::string& folder) {
  const fs::path dir = fs::path(DDLSIM_SOURCE_DIR) / folder;
  REQUIRE_MESSAGE(fs::is_directory(dir), "no plugin folder " << dir.string());
  std::vector<PluginFile> out;
  const std::regex registration(R"(DDLSIM_REGISTER\(\s*([A-Za-z_:]+)\s*,\s*"([^"]+)\")");
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".cpp") continue;
    PluginFile f{folder + "/" + entry.path().filename().string(), entry.path().stem().string(), {}, {}};
    const std::string text = read_text(entry.path());
    for (std::sregex_iterator it(text.begin(), text.end(), registration), end; it != end; ++it) {
      const std::string interface = (*it)[1].str();
      const bool companion = interface.size() >= 9 && interface.compare(interface.size() - 9, 9, "TraceRule") == 0;
      (companion ? f.companions : f.registered).push_back((*it)[2].str());
    }
    out.push_back(f);
  }
  std::sort(out.begin(), out.end(), [](const PluginFile& a, const PluginFile& b) { return a.relative < b.relative; });
  return out;
}

/// The names in backquotes in the first cell of each row of the table of `doc` (relative to the
/// source tree) whose header row starts with `header`: "| `fp16`, `bf16` | ..." gives fp16, bf16.
inline std::set<std::string> documented_names(const std::string& doc, const std::string& header) {
  std::istringstream in(read_text(fs::path(DDLSIM_SOURCE_DIR) / doc));
  std::set<std::string> names;
  bool in_table = false, found = false;
  for (std::string line; std::getline(in, line);) {
    if (!in_table) {
      in_table = line.rfind(header, 0) == 0;
      found = found || in_table;
      continue;
    }
    if (line.rfind("|", 0) != 0) break;  // the table ends
    const auto end = line.find(" |", 1);
    const std::string first = line.substr(1, end == std::string::npos ? std::string::npos : end - 1);
    const std::regex quoted("`([^`]+)`");
    for (std::sregex_iterator it(first.begin(), first.end(), quoted), stop; it != stop; ++it) names.insert((*it)[1].str());
  }
  REQUIRE_MESSAGE(found, doc << " has no table whose header starts \"" << header << "\"");
  return names;
}

/// A plugin kind: its folder, how to ask its registry, the doc table listing it, its tests' folder.
struct PluginKind {
  std::string folder;                               // "models/sync"
  std::string registry;                             // "SyncModelRegistry", for messages
  std::function<bool(const std::string&)> registered;
  std::function<std::vector<std::string>()> names;  // everything the registry holds
  std::string doc;                                  // "docs/scenario.md"
  std::string table_header;                         // "| name | params | what it does |"
  std::string tests;                                // "tests/models/sync"
};

inline void check_plugin_kind(const PluginKind& kind) {
  const auto files = plugin_files(kind.folder);
  REQUIRE_MESSAGE(!files.empty(), "no plugin source in " << kind.folder);
  const auto documented = documented_names(kind.doc, kind.table_header);
  std::set<std::string> from_files;
  for (const auto& f : files) {
    CAPTURE(f.relative);
    // One plugin, one file: it registers exactly the plugin its name says.
    CHECK_MESSAGE(f.registered == std::vector<std::string>{f.stem},
                  f.relative << " should register exactly one plugin, \"" << f.stem << "\" (DDLSIM_REGISTER lines: "
                             << f.registered.size() << ")");
    for (const auto& name : f.companions)
      CHECK_MESSAGE(name == f.stem, f.relative << " registers its trace rule as \"" << name << "\", not under its own name \""
                                               << f.stem << "\"");
    for (const auto& name : f.registered) {
      from_files.insert(name);
      CHECK_MESSAGE(kind.registered(name), f.relative << " registers \"" << name << "\", but " << kind.registry
                                                      << " has no \"" << name << "\" (is the file compiled in?)");
      CHECK_MESSAGE(documented.count(name) == 1, "\"" << name << "\" (" << f.relative << ") is not in the table of "
                                                      << kind.doc << " whose header starts \"" << kind.table_header
                                                      << "\"");
    }
    const fs::path test = fs::path(DDLSIM_SOURCE_DIR) / kind.tests / (f.stem + "_test.cpp");
    CHECK_MESSAGE(fs::is_regular_file(test), f.relative << " has no test file " << kind.tests << "/" << f.stem
                                                        << "_test.cpp");
  }
  // Nothing registered from elsewhere, and no test file without its source.
  for (const auto& name : kind.names())
    CHECK_MESSAGE(from_files.count(name) == 1,
                  kind.registry << " holds \"" << name << "\", registered by no file of " << kind.folder);
  for (const auto& entry : fs::directory_iterator(fs::path(DDLSIM_SOURCE_DIR) / kind.tests)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = "_test.cpp";
    if (file.size() <= suffix.size() || file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string stem = file.substr(0, file.size() - suffix.size());
    CHECK_MESSAGE(fs::is_regular_file(fs::path(DDLSIM_SOURCE_DIR) / kind.folder / (stem + ".cpp")),
                  kind.tests << "/" << file << " mirrors no source: " << kind.folder << "/" << stem << ".cpp is missing");
  }
}

}  // namespace ddlsim::test
