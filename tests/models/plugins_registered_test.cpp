// Every plugin source of models/ ("one plugin = one file + one test"): registered under its file's
// stem, listed in the doc that owns its kind, and tested in the file mirroring it
// (tests/models/plugin_files.hpp). The folders are read at test time, so a new plugin file
// without its registration, doc row or test fails here, naming what is missing.
#include "models/collective.hpp"
#include "models/compressor.hpp"
#include "models/sync_model.hpp"
#include "tests/models/plugin_files.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::test;

namespace {

template <class Registry>
PluginKind kind_of(const std::string& folder, const std::string& registry, const std::string& doc,
                   const std::string& header) {
  return PluginKind{"models/" + folder,
                    registry,
                    [](const std::string& name) { return Registry::instance().contains(name); },
                    [] { return Registry::instance().names(); },
                    doc,
                    header,
                    "tests/models/" + folder};
}

}  // namespace

TEST_CASE("plugins: every sync model file is registered, documented and tested") {
  check_plugin_kind(kind_of<models::SyncModelRegistry>("sync", "SyncModelRegistry", "docs/scenario.md",
                                                       "| name | params | what it does |"));
}

TEST_CASE("plugins: every compressor file is registered, documented and tested") {
  check_plugin_kind(kind_of<models::CompressorRegistry>("compressors", "CompressorRegistry", "docs/compression.md",
                                                        "| compressor | params (default) | wire bytes |"));
}

TEST_CASE("plugins: every collective file is registered, documented and tested") {
  check_plugin_kind(kind_of<models::CollectiveRegistry>("collectives", "CollectiveRegistry", "docs/collectives.md",
                                                        "| name | operation | closed form |"));
}

TEST_CASE("plugins: a doc table's first cells give its names") {
  // The reader the checks above rely on, on tables of the docs: fp16 and bf16 share a row.
  const auto compressors = documented_names("docs/compression.md", "| compressor | params (default) | wire bytes |");
  CHECK(compressors.count("fp16") == 1);
  CHECK(compressors.count("bf16") == 1);
  CHECK(compressors.count("qsgd") == 1);        // "`qsgd` (Alistarh et al. 2017)"
  CHECK(compressors.count("levels") == 0);      // a param in the second cell
  const auto sync = documented_names("docs/scenario.md", "| name | params | what it does |");
  CHECK(sync.count("bsp") == 1);
  CHECK(sync.count("aggregation") == 0);
  CHECK(sync.count("ring") == 0);               // a topology, in another table
  // The registration reader: models/sync/bsp.cpp registers "bsp" alone.
  bool seen = false;
  for (const auto& f : plugin_files("models/sync"))
    if (f.stem == "bsp") {
      seen = true;
      CHECK(f.relative == "models/sync/bsp.cpp");
      CHECK(f.registered == std::vector<std::string>{"bsp"});
    }
  CHECK(seen);
}
