// artopk: models/compressors/artopk.cpp. AR-Topk: one worker's k int32 indices broadcast, every worker's k fp32
// values all-reduced; the worker round-robin (star) or drawn (var).
#include "models/artopk_choice.hpp"
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <set>

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

TEST_CASE("artopk: the compressor names its selection, the plan's rule for the selecting worker") {
  CHECK(make_compressor("artopk")->settings().at("selection") == "star");
  CHECK(make_compressor("artopk", {{"selection", "var"}})->settings().at("selection") == "var");
  for (int it = 0; it < 10; ++it) CHECK(artopk_root("star", it, 4, 7) == it % 4);
  CHECK(artopk_root("star", 3, 1, 7) == 0);
  CHECK(artopk_root("var", 3, 1, 7) == 0);
  std::set<int> drawn;
  for (int it = 0; it < 64; ++it) {
    const int r = artopk_root("var", it, 4, 7);
    CHECK(r >= 0);
    CHECK(r < 4);
    CHECK(r == artopk_root("var", it, 4, 7));  // seeded: the same draw every time
    drawn.insert(r);
  }
  CHECK(drawn.size() == 4);  // 64 draws among 4 workers miss one with probability 4 (3/4)^64 < 1e-7
}

TEST_CASE("artopk: selection is checked with its JSON path") {
  CHECK(compressor_refusal("artopk", {{"selection", "best"}}).rfind("/training/compressor/params/selection: ", 0) == 0);
  CHECK(compressor_refusal("artopk", {{"selection", "best"}}) ==
        "/training/compressor/params/selection: unknown value \"best\"; valid values are: star, var");
}
