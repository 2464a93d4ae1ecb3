// topk: models/compressors/topk.cpp. Exact top-k: k = ceil(ratio n) fp32 values + k int32 indices; gathered.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("topk: k = ratio n fp32 values plus k int32 indices, gathered") {
  // The example: top-k 1 % of 25 MB fp32 = 0.01 * (25e6 / 4) * (4 + 4) bytes.
  CHECK(make_compressor("topk")->encode(25e6).wire_bytes == 0.01 * (25e6 / 4) * (4 + 4));
  check_topk_family("topk");
  CHECK(make_compressor("topk", {{"error_feedback", false}})->state_buffers() == 0);
}

TEST_CASE("topk: ratio is checked with its JSON path") {
  CHECK(compressor_refusal("topk", {{"ratio", 0}}) == "/training/compressor/params/ratio: the kept fraction must be in (0, 1], got 0");
  CHECK(compressor_refusal("topk", {{"ratio", 2}}).rfind("/training/compressor/params/ratio: ", 0) == 0);
  CHECK(compressor_refusal("topk", {{"ratio", 2}}) == "/training/compressor/params/ratio: expected a number in [0, 1], got 2");
}
