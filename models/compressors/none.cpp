// No compression: dense gradients in the profile's dtype, no encode/decode cost.
#include "models/compressor.hpp"

namespace ddlsim::models {
namespace {

class NoCompression final : public Compressor {
 public:
  [[nodiscard]] double wire_bytes(double bytes) const override { return bytes; }
  [[nodiscard]] double compute_s(double) const override { return 0.0; }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "none", "dense gradients, no compression (wire bytes = gradient bytes)",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::NoCompression>(); })
