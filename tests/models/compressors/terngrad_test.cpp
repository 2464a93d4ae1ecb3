// terngrad: models/compressors/terngrad.cpp. 2 bits per element and an fp32 scale: ceil(n / 4) + 4 bytes; gathered.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("terngrad: two bits per element plus an fp32 scale, gathered") {
  for (double bytes : COMPRESSOR_SIZES) {
    CAPTURE(bytes);
    const double n = bytes / 4;
    CHECK(make_compressor("terngrad")->encode(bytes).wire_bytes == std::ceil(n / 4) + 4);
    CHECK(make_compressor("terngrad")->encode(bytes).aggregation == Aggregation::GATHER);
  }
  // 10 elements: 20 bits in 3 bytes, and the scale.
  CHECK(make_compressor("terngrad")->encode(40).wire_bytes == 3 + 4);
  CHECK_FALSE(make_compressor("terngrad")->error_feedback());
}
