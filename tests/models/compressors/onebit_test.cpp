// onebit: models/compressors/onebit.cpp. A sign bit per element and 2 fp32 scales: ceil(n / 8) + 8 bytes; gathered.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("onebit: a sign bit per element plus two fp32 scales, gathered, with error feedback") {
  for (double bytes : COMPRESSOR_SIZES) {
    CAPTURE(bytes);
    const double n = bytes / 4;
    CHECK(make_compressor("onebit")->encode(bytes).wire_bytes == std::ceil(n / 8) + 8);
  }
  CHECK(make_compressor("onebit")->error_feedback());
  CHECK(make_compressor("onebit")->encode(1e6).aggregation == Aggregation::GATHER);
}
