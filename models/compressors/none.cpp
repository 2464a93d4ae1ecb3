// No compression: dense fp32 gradients, summable, no encode/decode cost.
#include "models/compressor.hpp"

namespace ddlsim::models {
namespace {

class NoCompression final : public Compressor {
 public:
  [[nodiscard]] Encoding encode(double dense_bytes) const override {
    return Encoding{dense_bytes, dense_bytes, 0, dense_bytes / DENSE_ELEMENT_BYTES, Aggregation::SUM};
  }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "none", "dense gradients, no compression (wire bytes = gradient bytes)",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::NoCompression>(); })
