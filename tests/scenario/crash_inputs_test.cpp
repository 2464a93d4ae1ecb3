// Input that crashed ddlsim (docs/reliability.md, "Fuzzing": found by hand) is refused in one line
// naming the JSON path, exit code 2, nothing written. (`ddlsim collectives -n 1000000`, which
// SimGrid aborted, is in collectives_limits_test.cpp.)
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::bad_input;
using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

/// `ddlsim CMD` (run or validate) on `doc` with `extra`: bad input, nothing written.
std::string refused(const std::string& cmd, const json& doc, const std::string& extra) {
  TempDir tmp;
  const std::string file = tmp.write("s.json", doc.dump());
  const std::string out = cmd == "run" ? fmt::format(" --out {}", tmp.file("out")) : "";
  const std::string err = bad_input(fmt::format("{} {}{} {}", cmd, file, out, extra), file);
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "out"));
  return err;
}

json good() { return ddlsim::test::small_scenario("crash"); }

}  // namespace

TEST_CASE("an empty trace file name is refused by every event-driven sync model, not a crash") {
  const std::string expected =
      "ddlsim: error: /training/sync/params/trace: expected the name of a training trace file (docs/traces.md; e.g. "
      "\"traces/eventgrad_cnn_event_adaptive_4w.json\"), got an empty string\n";
  for (const char* model : {"event_triggered", "ordered_gradients", "selective_sync"}) {
    CAPTURE(model);
    json doc = good();
    doc["training"] = {{"sync", {{"name", model}, {"params", json::object()}}}};
    if (std::string(model) == "ordered_gradients") doc["platform"]["parameter_servers"] = 1;
    for (const char* cmd : {"validate", "run"}) {
      CHECK(refused(cmd, doc, "--set 'training.sync.params.trace=\"\"'") == expected);
      CHECK(refused(cmd, doc, "--set training.sync.params.decisions=surrogate --set 'training.sync.params.trace=\"\"'") ==
            expected);
    }
  }
}
