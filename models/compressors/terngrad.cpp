// terngrad: TernGrad (Wen et al., "TernGrad: ternary gradients to reduce
// communication in distributed deep learning", NeurIPS 2017). Each element is
// stochastically rounded to {-1, 0, +1} times the tensor's max |g| (a per-tensor fp32
// scale): 2 bits per element, ceil(n / 4) + 4 bytes. Per-worker scales: gathered.
#include "models/compressor.hpp"

#include <cmath>

namespace ddlsim::models {
namespace {

class TernGrad final : public Compressor {
 public:
  [[nodiscard]] Encoding encode(double dense_bytes) const override {
    const double n = dense_bytes / DENSE_ELEMENT_BYTES;
    const double bytes = std::ceil(n / 4) + 4;
    return Encoding{bytes, bytes, 0, n, Aggregation::GATHER};
  }
  [[nodiscard]] std::string index_encoding() const override { return "none (2 bits per element, fp32 scale)"; }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "terngrad",
                "TernGrad (Wen 2017): 2 bits per element (-1, 0, +1) + an fp32 scale; gathered",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::TernGrad>(); })
