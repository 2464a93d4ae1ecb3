// onebit: 1-bit SGD with error feedback (Seide et al., "1-bit stochastic gradient
// descent and its application to data-parallel distributed training of speech DNNs",
// Interspeech 2014). Each element is sent as its sign (1 bit); the receiver
// reconstructs it as one of two fp32 values per tensor (the means of the positive
// and of the negative elements); the quantisation error is kept and added to the
// next gradient (error feedback). Wire: ceil(n / 8) + 8 bytes. Signs with
// per-worker reconstruction values cannot be summed in transit: gathered.
#include "models/compressor.hpp"

#include <cmath>

namespace ddlsim::models {
namespace {

class OneBit final : public Compressor {
 public:
  [[nodiscard]] Encoding encode(double dense_bytes) const override {
    const double n = dense_bytes / DENSE_ELEMENT_BYTES;
    const double bits = std::ceil(n / 8);
    return Encoding{bits + 8, bits + 8, 0, n, Aggregation::GATHER};
  }
  [[nodiscard]] bool error_feedback() const override { return true; }
  [[nodiscard]] std::string index_encoding() const override { return "none (one sign bit per element, 2 fp32 scales)"; }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "onebit",
                "1-bit SGD (Seide 2014): a sign bit per element + 2 fp32 scales, error feedback; gathered",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::OneBit>(); })
