// threshold: Strom, "Scalable distributed DNN training using commodity GPU cloud
// computing", Interspeech 2015. Elements with |g| above a threshold tau are sent as
// +-tau, each in one 32-bit word (31-bit index, sign bit); the rest is kept as error
// feedback. How many pass tau depends on the gradients, which a timing model does not
// have: `density` is the expected kept fraction (default 0.001). Wire: 4 bytes per kept
// element. Per-worker index sets: gathered.
#include "models/compressor.hpp"

namespace ddlsim::models {
namespace {

class Threshold final : public Compressor {
 public:
  explicit Threshold(double density) : density_(density) {}
  [[nodiscard]] Encoding encode(double dense_bytes) const override {
    const double k = kept_of(dense_bytes / DENSE_ELEMENT_BYTES, density_);
    return Encoding{4 * k, 0, 4 * k, k, Aggregation::GATHER};
  }
  [[nodiscard]] bool error_feedback() const override { return true; }
  [[nodiscard]] std::string index_encoding() const override { return "31-bit index + sign bit per kept element (value = +-tau)"; }
  [[nodiscard]] nlohmann::json settings() const override { return {{"density", density_}}; }

 private:
  double density_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "threshold",
                "threshold sparsification (Strom 2015): elements above tau as 32-bit index+sign words; gathered",
                [](ddlsim::ObjectReader& params) {
                  const double density = params.number("density", 0.001, 0.0, 1.0);
                  if (density <= 0) throw ddlsim::ConfigError(params.path_of("density"), "the kept fraction must be in (0, 1], got 0");
                  return std::make_unique<ddlsim::models::Threshold>(density);
                })
