// lwtopk: models/compressors/lwtopk.cpp. Top-k by threshold estimation (seed 002): k values + int32 indices; gathered.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("lwtopk: k = ratio n fp32 values plus k int32 indices, gathered") {
  check_topk_family("lwtopk");
  CHECK(make_compressor("lwtopk")->encode(4e6).kept_elements == 10000);  // default ratio 0.01
  CHECK(make_compressor("lwtopk")->error_feedback());
  CHECK_FALSE(make_compressor("lwtopk", {{"error_feedback", false}})->error_feedback());
}

TEST_CASE("lwtopk: ratio is checked with its JSON path") {
  CHECK(compressor_refusal("lwtopk", {{"ratio", 1.5}}) == "/training/compressor/params/ratio: expected a number in [0, 1], got 1.5");
}
