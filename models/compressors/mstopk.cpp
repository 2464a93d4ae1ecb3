// mstopk: multi-sampling top-k (seed 002, after Shi et al., "Towards scalable
// distributed training of deep learning on public cloud clusters", MLSys 2021): the
// threshold for k = ceil(ratio n) is found by a few rounds of sampling-based search
// instead of a sort; the wire carries the kept fp32 values with int32 indices (8k bytes).
// Gathered.
#include "models/compressor.hpp"

namespace ddlsim::models {
namespace {

class MultiSampleTopK final : public Compressor {
 public:
  explicit MultiSampleTopK(SparseParams p) : p_(p) {}
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

DDLSIM_REGISTER(ddlsim::models::Compressor, "mstopk", "multi-sampling top-k threshold search (seed 002, Shi 2021): k values + int32 indices; gathered",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::MultiSampleTopK>(ddlsim::models::read_sparse_params(params, 0.01));
                })
