// qsgd: QSGD (Alistarh et al., "QSGD: communication-efficient SGD via gradient
// quantization and encoding", NeurIPS 2017). Each element is stochastically rounded
// to one of `levels` (s) levels of |g_i| / ||g||_2 and sent as a sign bit and a level
// of ceil(log2(s + 1)) bits, with the tensor's fp32 norm: ceil(n (1 + ceil(log2(s+1))) / 8)
// + 4 bytes (fixed-width code; the paper's Elias coding of sparse levels is not modelled).
// Per-worker norms: gathered.
#include "models/compressor.hpp"

#include <cmath>

namespace ddlsim::models {
namespace {

class Qsgd final : public Compressor {
 public:
  explicit Qsgd(int levels) : levels_(levels), bits_(1 + std::ceil(std::log2(levels + 1.0))) {}
  [[nodiscard]] Encoding encode(double dense_bytes) const override {
    const double n = dense_bytes / DENSE_ELEMENT_BYTES;
    const double bytes = std::ceil(n * bits_ / 8) + 4;
    return Encoding{bytes, bytes, 0, n, Aggregation::GATHER};
  }
  [[nodiscard]] std::string index_encoding() const override { return "none (sign + level per element, fp32 norm)"; }
  [[nodiscard]] nlohmann::json settings() const override { return {{"levels", levels_}, {"bits_per_element", bits_}}; }

 private:
  int levels_;
  double bits_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "qsgd",
                "QSGD (Alistarh 2017): sign + ceil(log2(levels+1))-bit level per element, fp32 norm; gathered",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::Qsgd>(
                      static_cast<int>(params.integer("levels", 127, 1, 1 << 20)));
                })
