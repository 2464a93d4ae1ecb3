// none: models/compressors/none.cpp. Dense fp32 gradients: wire bytes = gradient bytes, n = bytes / 4 elements, summable.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("none: the dense gradient, summable, without error feedback") {
  auto none = CompressorRegistry::instance().create("none", json::object(), "/n", "/p", "compressor");
  const auto e = none->encode(1234.5);
  CHECK(e.wire_bytes == 1234.5);
  CHECK(e.aggregation == models::Aggregation::SUM);
  CHECK_FALSE(none->error_feedback());
  for (double bytes : COMPRESSOR_SIZES) {
    CAPTURE(bytes);
    const auto d = make_compressor("none")->encode(bytes);
    CHECK(d.wire_bytes == bytes);
    CHECK(d.value_bytes == bytes);
    CHECK(d.index_bytes == 0);
    CHECK(d.kept_elements == bytes / 4);
  }
  CHECK(make_compressor("none")->rounds(1000) == std::vector<double>{1000});
}

TEST_CASE("none: takes no params") {
  CHECK(compressor_refusal("none", {{"ratio", 0.1}}) ==
        "/training/compressor/params/ratio: unknown key \"ratio\"; valid keys are: (none)");
}
