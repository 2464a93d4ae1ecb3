// The Compressor interface and the helpers every compressor is built from (models/compressor.cpp):
// the kept elements of a sparsifier, its encoding and params, the interface's defaults; and every
// compressor the issue names is registered. Each compressor's wire bytes, derived from its
// definition (fp32 dense gradients), and its params are tested beside it:
// tests/models/compressors/<name>_test.cpp for models/compressors/<name>.cpp.
#include "models/compressor.hpp"

#include <doctest/doctest.h>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;

TEST_CASE("every compressor of the issue is registered") {
  for (const char* name : {"none", "fp16", "bf16", "onebit", "qsgd", "terngrad", "threshold", "topk", "randomk", "dgc",
                           "lwtopk", "mstopk", "powersgd", "artopk"})
    CHECK(CompressorRegistry::instance().contains(name));
}

TEST_CASE("kept_of: ceil(ratio x n), a decimal whole product not rounded up, at least one of a non-empty tensor") {
  CHECK(kept_of(1000, 0.0101) == 11);  // 10.1 -> 11
  CHECK(kept_of(1000, 0.5) == 500);
  CHECK(kept_of(100, 0.07) == 7);      // 0.07 x 100 is 7.000000000000001 in binary: still 7
  CHECK(kept_of(1e6, 0.001) == 1000);
  CHECK(kept_of(3, 1.0) == 3);
  CHECK(kept_of(10, 1e-6) == 1);       // 1e-5 of an element: one is kept
  CHECK(kept_of(0, 0.5) == 0);         // nothing to keep
}

TEST_CASE("sparse_encoding: k fp32 values and k int32 indices, gathered") {
  // 4000 B of fp32 gradients = 1000 elements; 10 % keeps 100: 400 B of values, 400 B of indices.
  const Encoding e = sparse_encoding(4000, 0.1);
  CHECK(e.kept_elements == 100);
  CHECK(e.value_bytes == 400);
  CHECK(e.index_bytes == 400);
  CHECK(e.wire_bytes == 800);
  CHECK(e.aggregation == Aggregation::GATHER);
  CHECK(sparse_encoding(4, 0.01).wire_bytes == 8);  // one element kept of one
  CHECK(to_string(Aggregation::SUM) == "sum");
  CHECK(to_string(Aggregation::GATHER) == "gather");
  CHECK(to_string(Aggregation::ARTOPK) == "artopk");
}

TEST_CASE("read_sparse_params: a ratio above 0 and at most 1, error feedback, refusals at their path") {
  const json empty = json::object();
  ObjectReader defaults(empty, "/compression/params");
  const SparseParams d = read_sparse_params(defaults, 0.25);
  CHECK(d.ratio == 0.25);
  CHECK(d.error_feedback);
  const json given{{"ratio", 0.5}, {"error_feedback", false}};
  ObjectReader r(given, "/compression/params");
  const SparseParams p = read_sparse_params(r, 0.25);
  CHECK(p.ratio == 0.5);
  CHECK_FALSE(p.error_feedback);
  const json zero{{"ratio", 0}};
  ObjectReader z(zero, "/compression/params");
  CHECK_THROWS_WITH_AS(read_sparse_params(z, 0.25), "/compression/params/ratio: the kept fraction must be in (0, 1], got 0",
                       ConfigError);
  const json above{{"ratio", 1.5}};
  ObjectReader a(above, "/compression/params");
  CHECK_THROWS_WITH_AS(read_sparse_params(a, 0.25), "/compression/params/ratio: expected a number in [0, 1], got 1.5",
                       ConfigError);
}

TEST_CASE("compressor defaults: one round, dense indices, state buffers only with error feedback") {
  const TwoByteFloat half;
  const Encoding e = half.encode(4000);  // 1000 elements of 2 bytes
  CHECK(e.wire_bytes == 2000);
  CHECK(e.index_bytes == 0);
  CHECK(e.kept_elements == 1000);
  CHECK(half.aggregation() == Aggregation::SUM);
  CHECK_FALSE(half.error_feedback());
  CHECK(half.state_buffers() == 0);
  CHECK(half.index_encoding() == "none (dense)");
  CHECK(half.rounds(123) == std::vector<double>{123});
  CHECK_FALSE(half.in_rounds());
  CHECK(half.settings() == json::object());

  const SparseCompressor dgc(SparseParams{0.01, true}, 2.0);
  CHECK(dgc.aggregation() == Aggregation::GATHER);
  CHECK(dgc.error_feedback());
  CHECK(dgc.state_buffers() == 2.0);
  CHECK(dgc.encode(4e6).wire_bytes == 8 * 10000);  // 1e6 elements, 1 % kept, 8 B each
  CHECK(dgc.settings() == json{{"ratio", 0.01}, {"error_feedback", true}});
  const SparseCompressor plain(SparseParams{0.01, false}, 2.0);
  CHECK(plain.state_buffers() == 0);
}
