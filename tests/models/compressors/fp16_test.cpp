// fp16: models/compressors/fp16.cpp. 2 bytes per element, summable by any all-reduce.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("fp16: 2 bytes per element, summable, in one call") {
  for (double bytes : COMPRESSOR_SIZES) {
    CAPTURE(bytes);
    CHECK(make_compressor("fp16")->encode(bytes).wire_bytes == bytes / 2);
    CHECK(make_compressor("fp16")->encode(bytes).aggregation == Aggregation::SUM);
  }
  // Other compressors than PowerSGD send a bucket in one call.
  CHECK(make_compressor("fp16")->rounds(1000) == std::vector<double>{1000});
}

TEST_CASE("fp16: takes no params") {
  CHECK(compressor_refusal("fp16", {{"ratio", 0.1}}) ==
        "/training/compressor/params/ratio: unknown key \"ratio\"; valid keys are: (none)");
}
