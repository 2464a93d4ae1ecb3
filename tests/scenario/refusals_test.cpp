// Input that was taken silently is refused (docs/reliability.md, "Ranges" and "Fuzzing"): one
// line naming the JSON path or option and what is valid, exit code 2, nothing written.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::bad_input;
using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

json good() { return ddlsim::test::small_scenario("refusals"); }

/// `ddlsim CMD` (run or validate) on `doc` with `extra`: bad input, nothing written.
std::string refused(const std::string& cmd, const json& doc, const std::string& extra = "") {
  TempDir tmp;
  const std::string file = tmp.write("s.json", doc.dump());
  const std::string out = cmd == "run" ? fmt::format(" --out {}", tmp.file("out")) : "";
  const std::string err = bad_input(fmt::format("{} {}{} {}", cmd, file, out, extra), file);
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "out"));
  return err;
}

const std::string SCENARIOS = std::string(DDLSIM_SOURCE_DIR) + "/scenarios";

}  // namespace

TEST_CASE("null is refused for every top-level section, not taken for its defaults") {
  for (const char* section : {"platform", "network", "workload", "training", "output", "sweep"}) {
    CAPTURE(section);
    CHECK(refused("run", good(), fmt::format("--set {}=null", section)) ==
          fmt::format("ddlsim: error: /{}: expected an object, got null\n", section));
  }
  CHECK(refused("validate", good(), "--set network.software=null") ==
        "ddlsim: error: /network/software: expected an object, got null\n");
  CHECK(refused("validate", good(), "--set workload.synthetic=null") ==
        "ddlsim: error: /workload/synthetic: expected an object, got null (give \"profile\" or \"synthetic\")\n");
  CHECK(refused("validate", good(), "--set workload.profile=null") ==
        "ddlsim: error: /workload/profile: expected a profile file name, got null (give \"profile\" or \"synthetic\")\n");
}

TEST_CASE("an empty --out or --dot is refused, not taken as the default") {
  TempDir tmp;
  const std::string file = tmp.write("s.json", good().dump());
  CHECK(bad_input(fmt::format("run {} --out ''", file)) ==
        "ddlsim: error: --out: expected a path, got an empty string (without the option: the scenario's output.dir)\n");
  CHECK_FALSE(std::filesystem::exists("out/refusals"));
  CHECK(bad_input(fmt::format("platform {} --dot ''", file)) ==
        "ddlsim: error: --dot: expected a path, got an empty string (without the option: no DOT file is written)\n");
}

TEST_CASE("a quantity with a space before or after it is refused, naming the path or option") {
  CHECK(refused("validate", good(), "--set 'platform.link.bandwidth=\"5Gbps \"'") ==
        "ddlsim: error: /platform/link/bandwidth: \"5Gbps \" has a space at its end; a bandwidth is written without "
        "spaces around it: \"5Gbps\"\n");
  CHECK(refused("validate", good(), "--set 'platform.link.bandwidth=\" 5Gbps\"'") ==
        "ddlsim: error: /platform/link/bandwidth: \" 5Gbps\" has a space at its start; a bandwidth is written without "
        "spaces around it: \"5Gbps\"\n");
  CHECK(refused("validate", good(), "--set 'platform.link.latency=\"1us \"'") ==
        "ddlsim: error: /platform/link/latency: \"1us \" has a space at its end; a time is written without spaces "
        "around it: \"1us\"\n");
  CHECK(bad_input("collectives -n 4 --bytes ' 1MiB'") ==
        "ddlsim: error: --bytes: \" 1MiB\" has a space at its start; a size in bytes is written without spaces around "
        "it: \"1MiB\"\n");
  CHECK(bad_input("collectives -n 4 --bytes '1024 '") ==
        "ddlsim: error: --bytes: \"1024 \" has a space at its end; a size in bytes is written without spaces around "
        "it: \"1024\"\n");
  // Between the number and its unit a space is fine: the formatted quantities have one.
  TempDir tmp;
  CHECK(ddlsim::test::ddlsim(fmt::format("validate {} --set 'platform.link.bandwidth=\"5 Gbps\"'",
                                         tmp.write("s.json", good().dump())))
            .exit_code == 0);
}

TEST_CASE("empty file names of a compression-cost table, a gain model, a profile and a calibration are refused") {
  json doc = good();
  doc["training"]["compressor"] = {{"name", "topk"}, {"params", {{"ratio", 0.01}}}};
  doc["training"]["collective"] = {{"name", "auto"}};
  doc["training"]["compression_cost"] = {{"table", ""}};
  CHECK(refused("run", doc) ==
        "ddlsim: error: /training/compression_cost/table: expected the file name of a compression-cost table "
        "(scenarios/compressor_costs/cpu_this_machine.json (measured on this project's development CPU) or "
        "v100_gravac.json (published V100 numbers: topk, dgc, randomk)), got an empty string\n");
  CHECK(refused("validate", good(), "--set 'workload={\"profile\": \"\"}'") ==
        "ddlsim: error: /workload/profile: expected the file name of a profile (docs/profiles.md; e.g. "
        "\"profiles/resnet50.json\"), got an empty string\n");
  CHECK(refused("validate", good(), "--set 'network.calibration=\"\"'") ==
        "ddlsim: error: /network/calibration: expected the file name of a calibration (ddlsim calibrate --out), got an "
        "empty string\n");
  CHECK(bad_input(fmt::format("validate {}/resnet50_adaptive_fluctuating_10gbps.json --set "
                              "'training.adaptive_compression.gain_model=\"\"'",
                              SCENARIOS)) ==
        "ddlsim: error: /training/adaptive_compression/gain_model: expected the file name of a gain model (e.g. "
        "scenarios/compression_gain/digits_cnn_topk.json, made by tools/measure_gain.py), the same object inline, or "
        "\"live\", got an empty string\n");
  // The bundled table still runs, with its costs.
  TempDir tmp;
  doc["training"]["compression_cost"] = {{"table", SCENARIOS + "/compressor_costs/v100_gravac.json"}};
  const auto r = ddlsim::test::ddlsim(fmt::format("validate {}", tmp.write("s.json", doc.dump())));
  CHECK_MESSAGE(r.exit_code == 0, r.err);
}
