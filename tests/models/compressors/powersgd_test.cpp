// powersgd: models/compressors/powersgd.cpp. Rank-r factors of the bucket as the most square matrix, rows = ceil(sqrt n),
// cols = ceil(n / rows): 4 r (rows + cols) bytes in two dependent all-reduces; summable.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("powersgd: rank-r factors of the bucket as the most square matrix") {
  // 25 MB = 6.25e6 elements: rows = ceil(sqrt(6.25e6)) = 2500, cols = 2500.
  CHECK(make_compressor("powersgd", {{"rank", 4}})->encode(25e6).wire_bytes == 4 * 4 * (2500 + 2500));
  // 10 elements: rows 4, cols 3; rank 8 is capped at 3.
  CHECK(make_compressor("powersgd", {{"rank", 8}})->encode(40).wire_bytes == 4 * 3 * (4 + 3));
  CHECK(make_compressor("powersgd")->encode(1e6).aggregation == Aggregation::SUM);
}

TEST_CASE("powersgd's rounds: P (4 r rows bytes), then Q (4 r cols), recovered from every encoding") {
  CHECK(make_compressor("powersgd", {{"rank", 4}})->rounds(4 * 4 * (2500 + 2500)) == std::vector<double>{4 * 4 * 2500, 4 * 4 * 2500});
  CHECK(make_compressor("powersgd", {{"rank", 8}})->rounds(4 * 3 * (4 + 3)) == std::vector<double>{4 * 3 * 4, 4 * 3 * 3});
  // Every bucket size from one element to a few thousand, at several ranks: the rounds are the
  // encoding's own rows and cols (rows = ceil(sqrt n), cols = ceil(n / rows), r = min(rank, cols)).
  for (int rank : {1, 2, 4, 7, 32})
    for (double n = 1; n < 5000; n += 1) {
      const double rows = std::ceil(std::sqrt(n)), cols = std::ceil(n / rows), r = std::min<double>(rank, cols);
      const auto c = make_compressor("powersgd", {{"rank", rank}});
      const double wire = c->encode(4 * n).wire_bytes;
      REQUIRE(wire == 4 * r * (rows + cols));
      CAPTURE(rank);
      CAPTURE(n);
      REQUIRE(c->rounds(wire) == std::vector<double>{4 * r * rows, 4 * r * cols});
    }
}

TEST_CASE("powersgd: rank is checked with its JSON path") {
  CHECK(compressor_refusal("powersgd", {{"rank", 0}}) ==
        "/training/compressor/params/rank: expected an integer in [1, 1024], got 0");
}
