// bf16: gradients cast to bfloat16 (8-bit exponent, 7-bit mantissa) for communication
// (Kalamkar et al., "A study of BFLOAT16 for deep learning training", 2019). Two bytes per element; every worker's cast tensor has the same layout,
// so they are summed in transit by any all-reduce (in bf16, cast back after).
#include "models/compressor.hpp"

namespace ddlsim::models {
namespace {

class HalfPrecision final : public Compressor {
 public:
  [[nodiscard]] Encoding encode(double dense_bytes) const override {
    const double n = dense_bytes / DENSE_ELEMENT_BYTES;
    return Encoding{2 * n, 2 * n, 0, n, Aggregation::SUM};
  }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "bf16", "bf16 communication: 2 bytes per element, summable by any all-reduce",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::HalfPrecision>(); })
