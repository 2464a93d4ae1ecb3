// libFuzzer target: `--set PATH=VALUE`. The input is up to four assignments, one per line, applied
// to the bundled default scenario (scenario/scenario_override.cpp), which is then validated as
// `ddlsim validate --set ...` does. Seeds: fuzz/seeds/set/.
#include "fuzz/fuzz_support.hpp"
#include "models/json_input.hpp"
#include "scenario/scenario.hpp"

#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string base_dir = ddlsim::fuzz::scenarios_dir();
  static const auto base_doc = ddlsim::read_json_file(base_dir + "/default.json", "scenario");
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ddlsim::fuzz::expect_accepted_or_refused([&] {
    auto doc = base_doc;
    for (int n = 0; n < 4 && !text.empty(); ++n) {
      const auto end = text.find('\n');
      ddlsim::sim::apply_override(doc, std::string(text.substr(0, end)));
      text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    }
    (void)ddlsim::sim::parse_scenario(doc, base_dir);
  });
  return 0;
}
