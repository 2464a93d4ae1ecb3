// dgc: Deep Gradient Compression (Lin et al., "Deep gradient compression: reducing
// the communication bandwidth for distributed training", ICLR 2018). The top-k
// threshold is estimated on a random sample of the gradient (0.1-1 %) and the elements
// above it are sent as fp32 values with int32 indices (8k bytes, default ratio 0.001,
// the paper's 99.9 % sparsity); momentum correction and local gradient accumulation keep
// two dense buffers per worker (momentum and residual). Gathered.
#include "models/compressor.hpp"

namespace ddlsim::models {
namespace {

class Dgc final : public Compressor {
 public:
  explicit Dgc(SparseParams p) : p_(p) {}
  [[nodiscard]] Encoding encode(double dense_bytes) const override { return sparse_encoding(dense_bytes, p_.ratio); }
  [[nodiscard]] bool error_feedback() const override { return p_.error_feedback; }
  [[nodiscard]] double state_buffers() const override { return p_.error_feedback ? 2.0 : 0.0; }
  [[nodiscard]] std::string index_encoding() const override { return "int32 index + fp32 value per kept element"; }
  [[nodiscard]] nlohmann::json settings() const override {
    return {{"ratio", p_.ratio}, {"error_feedback", p_.error_feedback}};
  }

 private:
  SparseParams p_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "dgc", "Deep Gradient Compression (Lin 2018): sampled threshold, k values + int32 indices, momentum correction; gathered",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::Dgc>(ddlsim::models::read_sparse_params(params, 0.001));
                })
