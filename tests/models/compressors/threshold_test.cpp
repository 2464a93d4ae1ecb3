// threshold: models/compressors/threshold.cpp. Kept elements as 32-bit index+sign words: 4k bytes, k = ceil(density n); gathered.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("threshold: 4 bytes per kept element, k = max(1, ceil(density n)), gathered") {
  for (double bytes : COMPRESSOR_SIZES) {
    CAPTURE(bytes);
    const double n = bytes / 4;
    CHECK(make_compressor("threshold", {{"density", 0.01}})->encode(bytes).wire_bytes ==
          4 * std::max(1.0, std::ceil(0.01 * n - 1e-6)));
  }
  // Default density 0.001: 1e6 elements keep 1000.
  const auto e = make_compressor("threshold")->encode(4e6);
  CHECK(e.kept_elements == 1000);
  CHECK(e.wire_bytes == 4000);
  CHECK(e.aggregation == Aggregation::GATHER);
  CHECK(make_compressor("threshold")->error_feedback());
}

TEST_CASE("threshold: density is checked with its JSON path") {
  CHECK(compressor_refusal("threshold", {{"density", 0}}) ==
        "/training/compressor/params/density: the kept fraction must be in (0, 1], got 0");
  CHECK(compressor_refusal("threshold", {{"density", 2}}) ==
        "/training/compressor/params/density: expected a number in [0, 1], got 2");
}
