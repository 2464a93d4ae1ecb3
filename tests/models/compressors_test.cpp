// Compressors, all at once: every one the issue names is registered. Each compressor's wire
// bytes, derived from its definition (fp32 dense gradients), and its params are tested beside it:
// tests/models/compressors/<name>_test.cpp for models/compressors/<name>.cpp.
#include "models/compressor.hpp"

#include <doctest/doctest.h>

using namespace ddlsim::models;

TEST_CASE("every compressor of the issue is registered") {
  for (const char* name : {"none", "fp16", "bf16", "onebit", "qsgd", "terngrad", "threshold", "topk", "randomk", "dgc",
                           "lwtopk", "mstopk", "powersgd", "artopk"})
    CHECK(CompressorRegistry::instance().contains(name));
}
