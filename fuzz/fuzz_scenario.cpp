// libFuzzer target: the scenario loader. The input is a scenario's JSON text, parsed with the
// limits of every JSON input (models/json_input.hpp) and validated as `ddlsim validate` does;
// relative profile and trace names resolve in the bundled scenarios folder. Seeds: scenarios/*.json.
#include "fuzz/fuzz_support.hpp"
#include "models/json_input.hpp"
#include "scenario/scenario.hpp"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string base_dir = ddlsim::fuzz::scenarios_dir();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ddlsim::fuzz::expect_accepted_or_refused([&] {
    const auto doc = ddlsim::parse_json_document(text, "scenario.json");
    (void)ddlsim::sim::parse_scenario(doc, base_dir);
  });
  return 0;
}
