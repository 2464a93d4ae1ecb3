// randomk: models/compressors/randomk.cpp. Random-k with a shared seed: only the k fp32 values travel; summable.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("randomk: k fp32 values and no indices, summable") {
  const auto r = make_compressor("randomk", {{"ratio", 0.05}});
  const auto e = r->encode(4e6);  // 1e6 elements, k = 50000
  CHECK(e.wire_bytes == 4 * 50000.0);
  CHECK(e.index_bytes == 0);
  CHECK(e.aggregation == Aggregation::SUM);
  CHECK(make_compressor("randomk")->encode(4).wire_bytes == 4);  // at least one element
}

TEST_CASE("randomk: ratio is checked with its JSON path") {
  CHECK(compressor_refusal("randomk", {{"ratio", -0.5}}) == "/training/compressor/params/ratio: expected a number in [0, 1], got -0.5");
}
