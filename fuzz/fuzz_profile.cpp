// libFuzzer target: the profile loader. The input is a profile file's JSON text, read as
// workload.profile would read it (models/profile.hpp). Seeds: scenarios/profiles/*.json.
#include "fuzz/fuzz_support.hpp"
#include "models/json_input.hpp"
#include "models/profile.hpp"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ddlsim::fuzz::expect_accepted_or_refused([&] {
    const auto doc = ddlsim::parse_json_document(text, "profile.json");
    (void)ddlsim::models::parse_profile(doc, "");  // as load_profile_file reads it
  });
  return 0;
}
