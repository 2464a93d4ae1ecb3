// libFuzzer target: the units parser (models/units.hpp). The first byte picks the quantity (bandwidth,
// time, latency, size) and the face (a JSON string, any JSON value, or command-line text); the rest
// is the text. An accepted value must lie in its documented range (docs/reliability.md, "Ranges"),
// and the table renderings must accept it. Seeds: fuzz/seeds/units/.
#include "fuzz/fuzz_support.hpp"
#include "models/json_input.hpp"
#include "models/units.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

namespace u = ddlsim::units;

void require(bool ok, const char* what, double value) {
  if (ok) return;
  std::fprintf(stderr, "fuzz: units: accepted %s %.17g outside its range\n", what, value);
  std::abort();
}

void check_bandwidth(double v) {
  require(std::isfinite(v) && v >= u::MIN_BANDWIDTH_BPS && v <= u::MAX_BANDWIDTH_BPS, "bandwidth", v);
  (void)u::format_bandwidth(v);
}
void check_time(double v, double max_s) {
  require(std::isfinite(v) && (v == 0 || (v >= u::MIN_POSITIVE_TIME_S && v <= max_s)), "time", v);
  (void)u::format_time(v);
}
void check_bytes(double v) {
  require(std::isfinite(v) && v >= 0 && v <= u::MAX_BYTES, "size", v);
  (void)u::format_bytes(v);
}

bool valid_utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned selector = data[0];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string path = "/platform/link/x";
  ddlsim::fuzz::expect_accepted_or_refused([&] {
    const unsigned face = (selector >> 2) % 3;  // 0: a JSON string, 1: any JSON value, 2: command-line text
    const unsigned quantity = selector & 3;     // 0 bandwidth, 1 time, 2 latency, 3 size
    if (face == 2) {
      switch (quantity) {
        case 0: check_bandwidth(u::cli_bandwidth_Bps(text, "--bandwidth")); break;
        case 1: check_time(u::cli_time_s(text, "--max-time"), u::MAX_TIME_S); break;
        case 2: check_time(u::cli_latency_s(text, "--latency"), u::MAX_LATENCY_S); break;
        default: check_bytes(u::cli_bytes(text, "--bytes")); break;
      }
      return;
    }
    if (face == 0 && !valid_utf8(text)) return;  // JSON text is UTF-8: no scenario holds such a string
    const nlohmann::json value = face == 0 ? nlohmann::json(text) : ddlsim::parse_json_option(text, path);
    switch (quantity) {
      case 0: check_bandwidth(u::bandwidth_Bps(value, path)); break;
      case 1: check_time(u::time_s(value, path), u::MAX_TIME_S); break;
      case 2: check_time(u::time_s(value, path, u::MAX_LATENCY_S), u::MAX_LATENCY_S); break;
      default: check_bytes(u::bytes(value, path)); break;
    }
  });
  return 0;
}
