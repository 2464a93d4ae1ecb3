// qsgd: models/compressors/qsgd.cpp. A sign bit and ceil(log2(s + 1)) level bits per element, an fp32 norm; gathered.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("qsgd: a sign bit and ceil(log2(s + 1)) level bits per element, plus an fp32 norm") {
  for (double bytes : COMPRESSOR_SIZES) {
    CAPTURE(bytes);
    const double n = bytes / 4;
    CHECK(make_compressor("qsgd", {{"levels", 127}})->encode(bytes).wire_bytes == std::ceil(n * 8 / 8) + 4);
    CHECK(make_compressor("qsgd", {{"levels", 4}})->encode(bytes).wire_bytes == std::ceil(n * 4 / 8) + 4);
  }
  // s = 1: 1 + 1 bits; 10 elements in 3 bytes, and the norm. The default is s = 127.
  CHECK(make_compressor("qsgd", {{"levels", 1}})->encode(40).wire_bytes == 3 + 4);
  CHECK(make_compressor("qsgd")->encode(40).wire_bytes == 10 + 4);
  CHECK(make_compressor("qsgd")->encode(40).aggregation == Aggregation::GATHER);
}

TEST_CASE("qsgd: levels are checked with their JSON path") {
  CHECK(compressor_refusal("qsgd", {{"levels", 0}}).rfind("/training/compressor/params/levels: ", 0) == 0);
  CHECK(compressor_refusal("qsgd", {{"levels", 0}}) ==
        "/training/compressor/params/levels: expected an integer in [1, 1048576], got 0");
}
