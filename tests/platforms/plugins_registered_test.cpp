// Every topology builder of platforms/builders/ ("one plugin = one file + one test"): registered
// under its file's stem, listed in docs/scenario.md's topology table, and tested in
// tests/platforms/builders/<name>_test.cpp (tests/models/plugin_files.hpp), read at test time.
#include "platforms/topology.hpp"
#include "tests/models/plugin_files.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::test;

TEST_CASE("plugins: every topology builder file is registered, documented and tested") {
  using Registry = platforms::TopologyRegistry;
  check_plugin_kind(PluginKind{"platforms/builders",
                               "TopologyRegistry",
                               [](const std::string& name) { return Registry::instance().contains(name); },
                               [] { return Registry::instance().names(); },
                               "docs/scenario.md",
                               "| topology | parameters |",
                               "tests/platforms/builders"});
}
