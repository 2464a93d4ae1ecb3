// lwtopk: layer-wise top-k with threshold estimation (seed 002, Tyagi & Swany, IEEE
// BigData 2023, after GraVAC's layer-wise compression): the threshold for k = ceil(ratio n)
// is estimated per layer instead of sorting the whole bucket; the wire carries the kept
// fp32 values with int32 indices (8k bytes). Gathered.
#include "models/compressor.hpp"

namespace ddlsim::models {
namespace {

class LayerWiseTopK final : public Compressor {
 public:
  explicit LayerWiseTopK(SparseParams p) : p_(p) {}
  [[nodiscard]] Encoding encode(double dense_bytes) const override { return sparse_encoding(dense_bytes, p_.ratio); }
  [[nodiscard]] bool error_feedback() const override { return p_.error_feedback; }
  [[nodiscard]] double state_buffers() const override { return p_.error_feedback ? 1.0 : 0.0; }
  [[nodiscard]] std::string index_encoding() const override { return "int32 index + fp32 value per kept element"; }
  [[nodiscard]] nlohmann::json settings() const override {
    return {{"ratio", p_.ratio}, {"error_feedback", p_.error_feedback}};
  }

 private:
  SparseParams p_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "lwtopk", "layer-wise top-k threshold estimation (seed 002): k values + int32 indices; gathered",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::LayerWiseTopK>(ddlsim::models::read_sparse_params(params, 0.01));
                })
