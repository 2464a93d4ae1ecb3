// Compressor cost tables: the cost formula and the validation of table files.
#include "models/compression_cost.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>

using namespace ddlsim::models;
using nlohmann::json;

namespace {
json table() {
  return json{{"device", "test"},
              {"source", "by hand"},
              {"compressors",
               {{"topk", {{"encode", {{"fixed_s", 1e-4}, {"per_element_s", 2e-9}, {"n_log_k_s", 3e-10}}},
                          {"decode", {{"fixed_s", 5e-5}, {"per_element_s", 1e-9}}}}},
                {"fp16", {{"encode", {{"per_element_s", 1e-10}}}, {"decode", {{"per_element_s", 1e-10}}}}}}}};
}

std::string refused(const json& doc) {
  try {
    (void)CompressionCostTable::read(doc, "");
  } catch (const ddlsim::ConfigError& e) {
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST_CASE("compressor cost: fixed + per element + n log k") {
  const auto t = CompressionCostTable::read(table(), "");
  const auto* topk = t.find("topk");
  REQUIRE(topk != nullptr);
  const double n = 25e6 / 4, k = 0.01 * n;
  CHECK(topk->encode.at(n, k) == doctest::Approx(1e-4 + 2e-9 * n + 3e-10 * n * std::log2(k)).epsilon(1e-15));
  CHECK(topk->decode.at(n, k) == doctest::Approx(5e-5 + 1e-9 * n).epsilon(1e-15));
  CHECK(t.find("fp16")->encode.at(1e6, 1e6) == doctest::Approx(1e-4));
  CHECK(t.find("dgc") == nullptr);
  CHECK(t.names() == std::vector<std::string>{"fp16", "topk"});
  CHECK(t.device == "test");
}

TEST_CASE("compressor cost tables are validated with JSON paths") {
  json bad = table();
  bad["compressors"]["topk"]["encode"]["per_element_s"] = -1;
  CHECK(refused(bad).rfind("/compressors/topk/encode/per_element_s: ", 0) == 0);
  bad = table();
  bad["compressors"]["topk"]["encode"]["per_elem_s"] = 1;
  CHECK(refused(bad).rfind("/compressors/topk/encode/per_elem_s: unknown key \"per_elem_s\"; valid keys are: fixed_s, n_log_k_s, per_element_s", 0) == 0);
  bad = table();
  bad.erase("device");
  CHECK(refused(bad) == "/device: missing required key");
}

TEST_CASE("a cost table file's errors name the scenario path and the file") {
  const auto dir = std::filesystem::temp_directory_path() / "ddlsim-cost-table-test";
  std::filesystem::create_directories(dir);
  const auto file = (dir / "t.json").string();
  json bad = table();
  bad["compressors"]["fp16"]["decode"]["fixed_s"] = "1ms";
  std::ofstream(file) << bad.dump();
  try {
    (void)CompressionCostTable::load(file, "/training/compression_cost/table");
    FAIL("accepted");
  } catch (const ddlsim::ConfigError& e) {
    CHECK(std::string(e.what()) == "/training/compression_cost/table: in compressor cost table \"" + file +
                                       "\": /compressors/fp16/decode/fixed_s: expected a number, got the string \"1ms\"");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("the shipped cost tables load and cost every compressor they name") {
  for (const char* name : {"cpu_this_machine.json", "v100_gravac.json"}) {
    CAPTURE(name);
    const auto t = CompressionCostTable::load(std::string(DDLSIM_SOURCE_DIR) + "/scenarios/compressor_costs/" + name, "/t");
    CHECK_FALSE(t.names().empty());
    CHECK_FALSE(t.device.empty());
    for (const auto& c : t.names()) CHECK(t.find(c)->encode.at(25e6 / 4, 25e6 / 400) > 0);
  }
  // GraVAC's published V100 points (ResNet-101, 170 MB): DGC 90 ms, Random-k 23 ms, exactly on the fitted lines.
  const auto v100 = CompressionCostTable::load(std::string(DDLSIM_SOURCE_DIR) + "/scenarios/compressor_costs/v100_gravac.json", "/t");
  CHECK(v100.find("dgc")->encode.at(170e6 / 4, 0) == doctest::Approx(0.090).epsilon(0.01));
  CHECK(v100.find("randomk")->encode.at(170e6 / 4, 0) == doctest::Approx(0.023).epsilon(0.01));
}
