// bf16: models/compressors/bf16.cpp. 2 bytes per element, summable by any all-reduce.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("bf16: 2 bytes per element, summable") {
  for (double bytes : COMPRESSOR_SIZES) {
    CAPTURE(bytes);
    const auto e = make_compressor("bf16")->encode(bytes);
    CHECK(e.aggregation == Aggregation::SUM);
    CHECK(e.wire_bytes == 2 * (bytes / 4));
    CHECK(e.kept_elements == bytes / 4);
    CHECK(e.index_bytes == 0);
  }
  CHECK_FALSE(make_compressor("bf16")->error_feedback());
}

TEST_CASE("bf16: takes no params") {
  CHECK(compressor_refusal("bf16", {{"levels", 8}}) ==
        "/training/compressor/params/levels: unknown key \"levels\"; valid keys are: (none)");
}
