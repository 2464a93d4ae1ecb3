// dgc: models/compressors/dgc.cpp. Deep Gradient Compression: k values + int32 indices (default ratio 0.001),
// momentum and residual buffers; gathered.
#include "tests/models/plugin_util.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

TEST_CASE("dgc: k values plus k indices, 99.9 % sparsity by default, two state buffers") {
  check_topk_family("dgc");
  CHECK(make_compressor("dgc")->encode(1e6).kept_elements == 250);  // default ratio 0.001 (99.9 % sparsity)
  CHECK(make_compressor("dgc")->state_buffers() == 2);             // momentum and residual
}

TEST_CASE("dgc: ratio is checked with its JSON path") {
  CHECK(compressor_refusal("dgc", {{"ratio", 0}}) == "/training/compressor/params/ratio: the kept fraction must be in (0, 1], got 0");
  CHECK(compressor_refusal("dgc", {{"momentum", 0.9}}) ==
        "/training/compressor/params/momentum: unknown key \"momentum\"; valid keys are: error_feedback, ratio");
}
