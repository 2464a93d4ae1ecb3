// artopk: models/compressors/artopk.cpp. AR-Topk: one worker's k int32 indices broadcast, every worker's k fp32
// values all-reduced; the worker round-robin (star) or drawn (var).
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("artopk: sends values and broadcasts indices, aggregated by the artopk collectives") {
  const auto a = make_compressor("artopk", {{"ratio", 0.01}})->encode(4e6);
  CHECK(a.wire_bytes == 4 * 10000.0);
  CHECK(a.index_bytes == 4 * 10000.0);
  CHECK(a.aggregation == Aggregation::ARTOPK);
}

TEST_CASE("artopk: star selection takes the workers round-robin, var stays among them") {
  const auto star = make_compressor("artopk");
  for (int it = 0; it < 10; ++it) CHECK(star->root(it, 4, 7) == it % 4);
  CHECK(star->root(3, 1, 7) == 0);
  const auto var = make_compressor("artopk", {{"selection", "var"}});
  for (int it = 0; it < 10; ++it) {
    CHECK(var->root(it, 4, 7) >= 0);
    CHECK(var->root(it, 4, 7) < 4);
    CHECK(var->root(it, 4, 7) == var->root(it, 4, 7));  // seeded: the same draw every time
  }
}

TEST_CASE("artopk: selection is checked with its JSON path") {
  CHECK(compressor_refusal("artopk", {{"selection", "best"}}).rfind("/training/compressor/params/selection: ", 0) == 0);
  CHECK(compressor_refusal("artopk", {{"selection", "best"}}) ==
        "/training/compressor/params/selection: unknown value \"best\"; valid values are: star, var");
}
