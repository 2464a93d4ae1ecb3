// Every compressor's wire bytes, derived here from its definition (fp32 dense gradients).
#include "models/compressor.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace ddlsim::models;
using nlohmann::json;

namespace {

std::unique_ptr<Compressor> make(const std::string& name, const json& params = json::object()) {
  return CompressorRegistry::instance().create(name, params, "/training/compressor/name", "/training/compressor/params",
                                               "compressor");
}

constexpr double SIZES[] = {4.0, 1024.0, 25e6, 100e6 + 4, 528e6};

}  // namespace

TEST_CASE("every compressor of the issue is registered") {
  for (const char* name : {"none", "fp16", "bf16", "onebit", "qsgd", "terngrad", "threshold", "topk", "randomk", "dgc",
                           "lwtopk", "mstopk", "powersgd", "artopk"})
    CHECK(CompressorRegistry::instance().contains(name));
}

TEST_CASE("top-k family: k = ratio n fp32 values plus k int32 indices, gathered") {
  // The example: top-k 1 % of 25 MB fp32 = 0.01 * (25e6 / 4) * (4 + 4) bytes.
  CHECK(make("topk")->encode(25e6).wire_bytes == 0.01 * (25e6 / 4) * (4 + 4));
  for (const char* name : {"topk", "lwtopk", "mstopk", "dgc"}) {
    for (double ratio : {0.1, 0.01, 0.001}) {
      const auto c = make(name, {{"ratio", ratio}});
      for (double bytes : SIZES) {
        CAPTURE(name);
        CAPTURE(bytes);
        const double k = std::max(1.0, std::ceil(ratio * bytes / 4 - 1e-6));
        const auto e = c->encode(bytes);
        CHECK(e.kept_elements == k);
        CHECK(e.wire_bytes == 8 * k);
        CHECK(e.index_bytes == 4 * k);
        CHECK(e.aggregation == Aggregation::GATHER);
      }
    }
  }
  CHECK(make("dgc")->encode(1e6).kept_elements == 250);  // default ratio 0.001 (99.9 % sparsity)
  CHECK(make("dgc")->state_buffers() == 2);             // momentum and residual
  CHECK(make("topk", {{"error_feedback", false}})->state_buffers() == 0);
}

TEST_CASE("randomk sends values only and is summable, artopk sends values and broadcasts indices") {
  const auto r = make("randomk", {{"ratio", 0.05}});
  const auto e = r->encode(4e6);  // 1e6 elements, k = 50000
  CHECK(e.wire_bytes == 4 * 50000.0);
  CHECK(e.index_bytes == 0);
  CHECK(e.aggregation == Aggregation::SUM);
  const auto a = make("artopk", {{"ratio", 0.01}})->encode(4e6);
  CHECK(a.wire_bytes == 4 * 10000.0);
  CHECK(a.index_bytes == 4 * 10000.0);
  CHECK(a.aggregation == Aggregation::ARTOPK);
}

TEST_CASE("quantisers: bits per element plus their scales") {
  for (double bytes : SIZES) {
    CAPTURE(bytes);
    const double n = bytes / 4;
    CHECK(make("fp16")->encode(bytes).wire_bytes == bytes / 2);
    CHECK(make("bf16")->encode(bytes).aggregation == Aggregation::SUM);
    CHECK(make("onebit")->encode(bytes).wire_bytes == std::ceil(n / 8) + 8);
    CHECK(make("terngrad")->encode(bytes).wire_bytes == std::ceil(n / 4) + 4);
    // QSGD with s levels: a sign bit and ceil(log2(s + 1)) level bits per element, an fp32 norm.
    CHECK(make("qsgd", {{"levels", 127}})->encode(bytes).wire_bytes == std::ceil(n * 8 / 8) + 4);
    CHECK(make("qsgd", {{"levels", 4}})->encode(bytes).wire_bytes == std::ceil(n * 4 / 8) + 4);
    CHECK(make("threshold", {{"density", 0.01}})->encode(bytes).wire_bytes ==
          4 * std::max(1.0, std::ceil(0.01 * n - 1e-6)));
  }
  CHECK(make("onebit")->error_feedback());
  CHECK(make("onebit")->encode(1e6).aggregation == Aggregation::GATHER);
}

TEST_CASE("powersgd: rank-r factors of the bucket as the most square matrix") {
  // 25 MB = 6.25e6 elements: rows = ceil(sqrt(6.25e6)) = 2500, cols = 2500.
  CHECK(make("powersgd", {{"rank", 4}})->encode(25e6).wire_bytes == 4 * 4 * (2500 + 2500));
  // 10 elements: rows 4, cols 3; rank 8 is capped at 3.
  CHECK(make("powersgd", {{"rank", 8}})->encode(40).wire_bytes == 4 * 3 * (4 + 3));
  CHECK(make("powersgd")->encode(1e6).aggregation == Aggregation::SUM);
}

TEST_CASE("powersgd's rounds: P (4 r rows bytes), then Q (4 r cols), recovered from every encoding") {
  CHECK(make("powersgd", {{"rank", 4}})->rounds(4 * 4 * (2500 + 2500)) == std::vector<double>{4 * 4 * 2500, 4 * 4 * 2500});
  CHECK(make("powersgd", {{"rank", 8}})->rounds(4 * 3 * (4 + 3)) == std::vector<double>{4 * 3 * 4, 4 * 3 * 3});
  // Every bucket size from one element to a few thousand, at several ranks: the rounds are the
  // encoding's own rows and cols (rows = ceil(sqrt n), cols = ceil(n / rows), r = min(rank, cols)).
  for (int rank : {1, 2, 4, 7, 32})
    for (double n = 1; n < 5000; n += 1) {
      const double rows = std::ceil(std::sqrt(n)), cols = std::ceil(n / rows), r = std::min<double>(rank, cols);
      const auto c = make("powersgd", {{"rank", rank}});
      const double wire = c->encode(4 * n).wire_bytes;
      REQUIRE(wire == 4 * r * (rows + cols));
      CAPTURE(rank);
      CAPTURE(n);
      REQUIRE(c->rounds(wire) == std::vector<double>{4 * r * rows, 4 * r * cols});
    }
  // Other compressors send a bucket in one call.
  CHECK(make("fp16")->rounds(1000) == std::vector<double>{1000});
}

TEST_CASE("compressor params are checked with their JSON paths") {
  auto refused = [](const std::string& name, const json& params) {
    try {
      make(name, params);
    } catch (const ddlsim::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused("topk", {{"ratio", 0}}) == "/training/compressor/params/ratio: the kept fraction must be in (0, 1], got 0");
  CHECK(refused("topk", {{"ratio", 2}}).rfind("/training/compressor/params/ratio: ", 0) == 0);
  CHECK(refused("qsgd", {{"levels", 0}}).rfind("/training/compressor/params/levels: ", 0) == 0);
  CHECK(refused("artopk", {{"selection", "best"}}).rfind("/training/compressor/params/selection: ", 0) == 0);
  CHECK(refused("fp16", {{"ratio", 0.1}}) == "/training/compressor/params/ratio: unknown key \"ratio\"; valid keys are: (none)");
}
